// An id too long to exist, against the real `mailverify serve`: a job id, a user id or an entry index of 101 characters
// (or 10,000) is the 404 of an unknown resource, a problem document like that of any unknown id, on 2.x and 1.4; it is
// an id like any other, so it goes through authentication first (401 without credentials) and the detail does not
// echo it whole. No segment of a path is refused for its length; only a request whose line and header fields pass
// Node's header size limit (16 KiB) is refused, with 431.
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { basic } from './http-calls.js';

const PASSWORD = 'long ids root password';
const AUTH = basic('root', PASSWORD);

let dir: string;
let server: ServeProcess;
/** A completed job of root's. */
let jobId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-long-ids-'));
  server = await startServe(['--data-dir', join(dir, 'data'), '--log-level', 'silent', '--checks', 'syntax'], { MAILVERIFY_ROOT_PASSWORD: PASSWORD });
  const submitted = await fetch(`${server.origin}/v2.7/email-validations?waitTime=5000`, {
    method: 'POST',
    headers: { authorization: AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ entries: [{ inputData: 'a@example.com' }, { inputData: 'b@example.com' }] }),
  });
  expect(submitted.status).toBe(200);
  jobId = ((await submitted.json()) as { overview: { id: string } }).overview.id;
});

afterAll(async () => {
  if (server !== undefined) expect(await server.stop(), server.stderr()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

/** The status and problem document of a request (root's credentials unless `auth` is null). */
async function ask(method: string, path: string, auth: string | null = AUTH): Promise<{ status: number; type: string; body: any }> {
  const headers: Record<string, string> = auth === null ? {} : { authorization: auth };
  const body = method === 'PATCH' ? '[]' : method === 'POST' ? '{}' : undefined;
  if (method === 'PATCH') headers['content-type'] = 'application/json-patch+json';
  else if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.origin}${path}`, { method, headers, ...(body !== undefined && { body }) });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: text === '' ? undefined : JSON.parse(text) };
}

const LONG = ['x'.repeat(101), 'a'.repeat(400), `${'0'.repeat(36)}${'f'.repeat(65)}`, 'z'.repeat(10_000)];

/** Each path with `{id}` (and `{job}`) filled in, and the method. */
const RESOURCES: readonly [string, string][] = [
  ['GET', '/v2.7/email-validations/{id}'],
  ['DELETE', '/v2.7/email-validations/{id}'],
  ['GET', '/v2.7/email-validations/{id}/overview'],
  ['GET', '/v2.7/email-validations/{id}/entries'],
  ['GET', '/v2.6/email-validations/{id}/entries/0'],
  ['GET', '/v2.7/email-validations/{job}/entries/{id}'],
  ['GET', '/v2.7/users/{id}'],
  ['PATCH', '/v2.7/users/{id}'],
  ['DELETE', '/v2.7/users/{id}'],
  ['POST', '/v2.7/users/{id}/authentication/totp'],
  ['DELETE', '/v2.7/users/{id}/authentication/totp'],
  ['GET', '/v1.4/email-validations/{id}'],
  ['DELETE', '/v1.4/email-validations/{id}'],
];

const fill = (path: string, id: string): string => path.replace('{job}', jobId).replace('{id}', id);

describe('an id too long to exist is an unknown resource', () => {
  it.each(RESOURCES)('%s %s: 404 and the problem document of an unknown id, for every length', async (method, path) => {
    // What any unknown id is answered: the reference.
    const unknown = await ask(method, fill(path, path.includes('{job}') ? '999999' : '00000000-0000-4000-8000-000000000000'));
    expect(unknown.status).toBe(404);
    for (const id of LONG) {
      const answer = await ask(method, fill(path, id));
      expect(answer.status, `${id.length} characters`).toBe(404);
      expect(answer.type).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({ status: 404, type: unknown.body.type, title: unknown.body.title });
      // Not echoed whole: a detail stays readable whatever the client sent.
      expect(answer.body.detail.length).toBeLessThan(200);
    }
  });

  it('authentication comes first, as for any id: 401 without credentials', async () => {
    for (const [method, path] of RESOURCES) {
      for (const id of LONG) expect((await ask(method, fill(path, id), null)).status, `${method} ${path}`).toBe(401);
    }
  });

  it('a path segment as long as the header size limit allows is still 404; past the limit, 431 with a problem document', async () => {
    expect((await ask('GET', `/v2.7/email-validations/${'q'.repeat(15_000)}`)).status).toBe(404);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => socket.end(`GET /v2.7/email-validations/${'q'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
      let text = '';
      socket.on('data', (chunk) => (text += String(chunk)));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toMatch(/content-type: application\/problem\+json/i);
  });
});
