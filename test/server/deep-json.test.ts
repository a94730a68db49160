// Bodies of nested brackets against the real `mailverify serve` in a child process: every JSON the server reads from a
// client (a submission's unknown field, `custom`, `entries`, a JSON Patch and its value, a file import's `settings`, a
// 1.4 submission, a new user, the TOTP step) is refused with a 400 problem document once it nests deeper than 64
// levels, and the server goes on answering others meanwhile. Before the cap, a 600 KB body froze the server for
// minutes (the streaming parser's work grew with the square of the depth) or answered 500 (a recursive clone).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../lab/serve-process.js';

const ROOT_PASSWORD = 'deep json root password';
const AUTH = `Basic ${Buffer.from(`root:${ROOT_PASSWORD}`).toString('base64')}`;
const DEPTH_LIMIT = 64;

let dir: string;
let server: ServeProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-deep-json-'));
  server = await startServe(['--data-dir', join(dir, 'data'), '--log-level', 'silent', '--checks', 'syntax'], { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD });
});

afterAll(async () => {
  await server?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** `depth` arrays (or objects `{"a":…}`) inside each other, as JSON text. */
const nested = (depth: number, kind: 'array' | 'object' = 'array', inner = '0'): string =>
  kind === 'array' ? '['.repeat(depth) + inner + ']'.repeat(depth) : '{"a":'.repeat(depth) + inner + '}'.repeat(depth);

function post(path: string, body: string | Buffer, type = 'application/json', method = 'POST', auth = AUTH): Promise<Response> {
  return fetch(`${server.origin}${path}`, { method, headers: { authorization: auth, 'content-type': type }, body });
}

async function expectTooDeep(answer: Response): Promise<void> {
  expect(answer.status).toBe(400);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem: any = await answer.json();
  expect(problem).toMatchObject({ status: 400 });
  expect(problem.detail).toMatch(/64 levels/);
}

const submission = (extra: string): string => `{"entries":[{"inputData":"jane@example.org"}],"unknown":${extra}}`;

describe('nesting deeper than 64 levels', () => {
  for (const kind of ['array', 'object'] as const) {
    for (const depth of [100, 100_000, 300_000]) {
      it(`a submission whose unknown field nests ${depth} ${kind}s deep is 400`, async () => {
        await expectTooDeep(await post('/v2.7/email-validations', submission(nested(depth, kind))));
      });
    }
  }

  it('in `custom`, inside `entries`, in a 1.4 submission, a new user and a JSON Patch value: 400', async () => {
    const deep = nested(100_000);
    await expectTooDeep(await post('/v2.7/email-validations', `{"entries":[{"inputData":"jane@example.org","custom":${deep}}]}`));
    await expectTooDeep(await post('/v2.7/email-validations', `{"entries":${deep}}`));
    await expectTooDeep(await post('/v1.4/email-validations', `{"entries":[{"inputData":"jane@example.org"}],"x":${deep}}`));
    await expectTooDeep(await post('/v2.7/users', `{"type":"Standard","displayName":${deep}}`));
    const made = await post('/v2.7/users', JSON.stringify({ type: 'Standard', displayName: 'Deep', authentication: { password: { username: 'deep', password: 'a long password' } } }));
    expect(made.status).toBe(200);
    const { id } = (await made.json()) as { id: string };
    await expectTooDeep(await post(`/v2.7/users/${id}`, `[{"op":"add","path":"/displayName","value":${deep}}]`, 'application/json-patch+json', 'PATCH'));
    // The TOTP step reads its body before the token: the depth is refused first.
    await expectTooDeep(await post('/v2.7/auth/totp/verifications', `{"passCode":${deep}}`, 'text/plain', 'POST', 'Bearer x'));
  });

  it("a file import's settings part: 400", async () => {
    const boundary = 'deep-json-boundary';
    const body = Buffer.from(
      [
        `--${boundary}`,
        'Content-Disposition: form-data; name="inputFile"; filename="list.txt"',
        'Content-Type: text/plain',
        '',
        'jane@example.org',
        `--${boundary}`,
        'Content-Disposition: form-data; name="settings"',
        'Content-Type: application/json',
        '',
        `{"quality":"Standard","x":${nested(100_000)}}`,
        `--${boundary}--`,
        '',
      ].join('\r\n'),
    );
    const answer = await post('/v2.7/email-validations', body, `multipart/form-data; boundary=${boundary}`);
    expect(answer.status).toBe(400);
    const problem: any = await answer.json();
    expect(problem.detail).toMatch(/settings/);
    expect(problem.detail).toMatch(/64 levels/);
  });

  it('exactly 64 levels is read as any other body; 65 is refused', async () => {
    // The root object is level 1: the unknown field's value adds 63.
    const atLimit = await post('/v2.7/email-validations?waitTime=5000', submission(nested(DEPTH_LIMIT - 1)));
    expect(atLimit.status).toBe(200);
    await expectTooDeep(await post('/v2.7/email-validations', submission(nested(DEPTH_LIMIT))));
    // Brackets inside strings are text, not nesting.
    const inString = await post('/v2.7/email-validations?waitTime=5000', submission(JSON.stringify('['.repeat(10_000) + '\\"{')));
    expect(inString.status).toBe(200);
  });

  it('a JSON Patch array index with a leading zero is 400 naming the path (RFC 6901 §4)', async () => {
    const made = await post(
      '/v2.7/users',
      JSON.stringify({ type: 'Standard', displayName: 'Rules', authentication: { password: { username: 'rules', password: 'a long password' } } }),
    );
    const { id } = (await made.json()) as { id: string };
    const patch = (path: string) => post(`/v2.7/users/${id}`, JSON.stringify([{ op: 'replace', path, value: 'email-validations:read:my' }]), 'application/json-patch+json', 'PATCH');
    const leadingZero = await patch('/authorization/rules/00');
    expect(leadingZero.status).toBe(400);
    expect(((await leadingZero.json()) as { detail: string }).detail).toMatch(/\[0\]\.path/);
    expect((await patch('/authorization/rules/0')).status).toBe(200);
  });

  it('other requests are answered while a body of a million brackets is read', async () => {
    const attack = post('/v2.7/email-validations', submission(nested(1_000_000)));
    // Generous: the server answers /health in milliseconds when nothing holds its event loop.
    const health = await fetch(`${server.origin}/health`, { signal: AbortSignal.timeout(20_000) });
    expect(health.status).toBe(200);
    await expectTooDeep(await attack);
  });
});
