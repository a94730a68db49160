// The request rate limits of the real `mailverify serve` hold whatever the spelling of a path: a version segment or a
// base path written with percent-encoded characters (`/v2%2E7`, `/%76%32.7`, `/%61pi`) reaches the same route as the
// plain one, so it takes a token of the same bucket (2.x) or a place among the same requests in flight (1.4); so do
// paths under a version that no route matches (404). The rate is made tiny (--rate-limit-per-second 0.01: one token per
// 100 s) so that counts are exact whatever the speed of the machine.
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { basic, heldSubmission, type HeldSubmission } from './http-calls.js';

const PASSWORD = 'rate limit spellings root password';
const ROOT_AUTH = basic('root', PASSWORD);
const JOB = '00000000-0000-4000-8000-000000000000';

let dir: string;
let server: ServeProcess;
let underApi: ServeProcess;
/** Each test comes from addresses of its own (the servers trust the loopback proxy's X-Forwarded-For). */
let ips = 0;
const freshIp = (): string => `203.0.113.${++ips}`;

function start(name: string, flags: string[] = []): Promise<ServeProcess> {
  return startServe(
    ['--data-dir', join(dir, name), '--log-level', 'silent', '--checks', 'syntax', '--trust-proxy', '127.0.0.1', '--rate-limits', '--rate-limit-per-second', '0.01', ...flags],
    { MAILVERIFY_ROOT_PASSWORD: PASSWORD },
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-rate-spellings-'));
  [server, underApi] = await Promise.all([start('plain'), start('api', ['--base-path', '/api'])]);
});

afterAll(async () => {
  for (const running of [server, underApi]) if (running !== undefined) expect(await running.stop(), running.stderr()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly body: any;
  readonly location?: string;
}

/** A request whose path is sent byte for byte as written (no client normalises it); its answer read whole. */
function send(target: ServeProcess, method: string, path: string, ip: string, options: { auth?: string; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'x-forwarded-for': ip };
    if (options.auth !== undefined) headers['authorization'] = options.auth;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const request = httpRequest({ host: '127.0.0.1', port: target.port, method, path, headers, agent: false }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += String(chunk)));
      response.on('end', () => resolve({ status: response.statusCode!, body: text === '' ? undefined : JSON.parse(text), ...(response.headers.location !== undefined && { location: response.headers.location }) }));
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/** The requests one after the other; their statuses. */
async function statuses(target: ServeProcess, requests: readonly { method?: string; path: string; auth?: string; body?: string }[], ip: string): Promise<number[]> {
  const answers: number[] = [];
  for (const { method = 'GET', path, ...options } of requests) answers.push((await send(target, method, path, ip, options)).status);
  return answers;
}

const times = <T>(count: number, make: (index: number) => T): T[] => Array.from({ length: count }, (_, index) => make(index));

/** A refusal of the request rate limit (not of any other limit): 429, a problem document that says so. */
function expectRateRefusal(answer: Answer): void {
  expect(answer.status).toBe(429);
  expect(answer.body).toMatchObject({ status: 429, detail: expect.stringMatching(/requests per second from this address/) });
}

describe('2.x: every spelling of a path takes a token of the same bucket', () => {
  it.each([
    ['/v2%2E7/email-validations'],
    ['/v2%2e7/email-validations'],
    ['/%76%32.7/email-validations'],
    ['/%76%32%2E%37/email-validations'],
    ['/v2%2E6/email-validations'],
    ['/v2.7/%65mail-validations'],
  ])('%s: a burst of 15 passes (401, it is the same route), the 16th is refused', async (path) => {
    const ip = freshIp();
    expect(await statuses(server, times(15, () => ({ path })), ip)).toEqual(times(15, () => 401));
    expectRateRefusal(await send(server, 'GET', path, ip));
  });

  it('40 requests from one address, the spellings alternating: exactly 15 answered', async () => {
    const ip = freshIp();
    const spellings = ['/v2.7/email-validations', '/v2%2E7/email-validations', '/%76%32.7/email-validations', '/v2%2e6/email-validations'];
    const answered = await statuses(server, times(40, (index) => ({ path: spellings[index % spellings.length]!, auth: ROOT_AUTH })), ip);
    expect(answered.slice(0, 15)).toEqual(times(15, () => 200));
    expect(answered.slice(15)).toEqual(times(25, () => 429));
  });

  it('submissions and sign-ins spelt with an encoded version count as well', async () => {
    const ip = freshIp();
    const submission = { method: 'POST', path: '/v2%2E7/email-validations', auth: ROOT_AUTH, body: JSON.stringify({ entries: [{ inputData: 'a@example.com' }] }) };
    const signIn = { method: 'POST', path: '/%76%32.7/auth/tokens', body: JSON.stringify({ username: 'root', password: PASSWORD }) };
    const answered = await statuses(server, times(15, (index) => (index % 2 === 0 ? submission : signIn)), ip);
    expect(answered).toEqual(times(15, (index) => (index % 2 === 0 ? 202 : 200)));
    expectRateRefusal(await send(server, submission.method, submission.path, ip, submission));
    expectRateRefusal(await send(server, signIn.method, signIn.path, ip, signIn));
  });

  it('a path under a version that no route matches counts too (404, then 429)', async () => {
    const ip = freshIp();
    const paths = ['/v2%2E7/no-such-resource', '/v2.7/no-such-resource', '/%76%32.6/email-validations/x/y/z'];
    expect(await statuses(server, times(15, (index) => ({ path: paths[index % paths.length]! })), ip)).toEqual(times(15, () => 404));
    expectRateRefusal(await send(server, 'GET', '/v2.7/another-unknown-path', ip));
  });

  it('probes and paths outside the version paths are not counted, however spelt', async () => {
    const ip = freshIp();
    expect(await statuses(server, times(20, (index) => ({ path: index % 2 === 0 ? '/health' : '/%68ealth' })), ip)).toEqual(times(20, () => 200));
    expect(await statuses(server, times(20, () => ({ path: '/v3%2E0/email-validations' })), ip)).toEqual(times(20, () => 404));
  });

  it('under a base path, the base path spelt with encoded characters counts the same', async () => {
    const ip = freshIp();
    const paths = ['/%61pi/v2.7/email-validations', '/api/v2%2E7/email-validations', '/%61%70%69/%76%32.7/email-validations'];
    expect(await statuses(underApi, times(15, (index) => ({ path: paths[index % paths.length]! })), ip)).toEqual(times(15, () => 401));
    expectRateRefusal(await send(underApi, 'GET', '/api/v2.7/email-validations', ip));
    expectRateRefusal(await send(underApi, 'GET', '/%61pi/v2.7/email-validations', ip));
  });
});

describe('a Location names the canonical path, not the spelling of the request', () => {
  const ENTRIES = JSON.stringify({ entries: [{ inputData: 'a@example.com' }, { inputData: 'b@example.com' }] });
  const UUID = '[0-9a-f-]{36}';

  it('of a job submitted on 2.x and on 1.4, of a user, of an entry', async () => {
    const ip = freshIp();
    const job = await send(server, 'POST', '/v2.7/%65mail-validations', ip, { auth: ROOT_AUTH, body: ENTRIES });
    expect(job.status).toBe(202);
    expect(job.location).toMatch(new RegExp(`^/v2\\.7/email-validations/${UUID}$`));
    const encoded = await send(server, 'POST', '/v2%2E6/email-validations', ip, { auth: ROOT_AUTH, body: ENTRIES });
    expect(encoded.location).toMatch(new RegExp(`^/v2\\.6/email-validations/${UUID}$`));
    const legacy = await send(server, 'POST', '/v1%2E4/email-validations', ip, { auth: ROOT_AUTH, body: ENTRIES });
    expect(legacy.status).toBe(202);
    expect(legacy.location).toMatch(new RegExp(`^/v1\\.4/email-validations/${UUID}$`));
    const user = await send(server, 'POST', '/v2.7/%75sers', ip, { auth: ROOT_AUTH, body: JSON.stringify({ type: 'Standard', displayName: 'Spelt', authentication: { password: { username: `spelt-${ip}`, password: 'a password for the spelt user' } } }) });
    expect(user.status).toBe(200);
    expect(user.location).toBe(`/v2.7/users/${user.body.id}`);
    const id = job.location!.split('/').pop()!;
    const entry = await send(server, 'GET', `/%76%32.7/email-validations/${id}/%65ntries/1?waitTime=5000`, ip, { auth: ROOT_AUTH });
    expect(entry.status).toBe(303);
    expect(entry.location).toBe(`/v2.7/email-validations/${id}/entries?limit=100`);
  });
});

describe('1.4: every spelling takes a place among the requests in flight', () => {
  const held = (path: string, ip: string): HeldSubmission => heldSubmission(server.origin, path, ROOT_AUTH, ip);

  /** Waits (up to 10 s) for `path` to be answered `status`, asking again every 20 ms. */
  async function until(path: string, ip: string, status: number): Promise<void> {
    for (let tries = 0; tries < 500; tries++) {
      if ((await send(server, 'GET', path, ip, { auth: ROOT_AUTH })).status === status) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`${path} was not answered ${status} in 10 s`);
  }

  it('5 held through /v1%2E4 and /%761.4: the 6th is refused whatever its spelling; once they end, places are free', async () => {
    const ip = freshIp();
    const slow = times(5, (index) => held(index % 2 === 0 ? '/v1%2E4/email-validations' : '/%761.4/email-validations', ip));
    try {
      await until(`/v1.4/email-validations/${JOB}`, ip, 429);
      for (const path of [`/v1.4/email-validations/${JOB}`, `/v1%2E4/email-validations/${JOB}`, `/%761.4/email-validations/${JOB}`]) {
        expect((await send(server, 'GET', path, ip, { auth: ROOT_AUTH })).status).toBe(429);
      }
      for (const request of slow) request.finish();
      expect(await Promise.all(slow.map((request) => request.answer))).toEqual(times(5, () => 202));
    } finally {
      // Left held by a failure: ended here, not by the server's stop.
      for (const { request, answer } of slow) {
        answer.catch(() => {});
        request.destroy();
      }
    }
    expect((await send(server, 'GET', `/v1%2E4/email-validations/${JOB}`, ip, { auth: ROOT_AUTH })).status).toBe(404);
  });
});
