// Throttling counts a user's accepted submissions whatever its rules are at the time, against the real `mailverify
// serve`: submissions made while a user has no rules, or before its rules were emptied and set again, count toward
// the rules it has later (within their windows), per user and per client IP. Users are made by root with
// POST /v2.7/users and their rules changed with a JSON Patch.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { basic } from './http-calls.js';
import { callServer, expectTooManyRequests, type Answer, type Call } from './http-client.js';

const PASSWORD = 'throttling kept root password';
const ROOT_AUTH = basic('root', PASSWORD);

let dir: string;
let server: ServeProcess;
let users = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-throttling-kept-'));
  // Behind a proxy on loopback: submissions can come from client addresses of the test's choosing.
  server = await startServe(['--data-dir', join(dir, 'data'), '--log-level', 'silent', '--checks', 'syntax', '--trust-proxy', '127.0.0.1'], { MAILVERIFY_ROOT_PASSWORD: PASSWORD });
});

afterAll(async () => {
  if (server !== undefined) expect(await server.stop(), server.stderr()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, request: Call = {}): Promise<Answer> => callServer(server.origin, ROOT_AUTH, method, path, request);

/** A Standard user made by root with these rules; its id and credentials. */
async function createUser(rules: unknown[]): Promise<{ id: string; auth: string }> {
  const username = `kept-${++users}`;
  const password = `the password of ${username}`;
  const answer = await call('POST', '/v2.7/users', {
    json: { type: 'Standard', displayName: username, authentication: { password: { username, password } }, throttling: { rules } },
  });
  expect(answer.status, answer.text).toBe(200);
  return { id: answer.body.id as string, auth: basic(username, password) };
}

/** Root replaces the user's rules (JSON Patch, RFC 6902). */
async function setRules(id: string, rules: unknown[]): Promise<void> {
  const answer = await call('PATCH', `/v2.7/users/${id}`, { raw: JSON.stringify([{ op: 'replace', path: '/throttling/rules', value: rules }]), type: 'application/json-patch+json' });
  expect(answer.status, answer.text).toBe(200);
  const read = await call('GET', `/v2.7/users/${id}`);
  expect(read.body.throttling.rules, read.text).toEqual(rules);
}

function submit(auth: string, ip = '192.0.2.1'): Promise<Answer> {
  return call('POST', '/v2.7/email-validations', { auth, forwardedFor: ip, json: { entries: [{ inputData: 'someone@example.com' }] } });
}

async function expectAccepted(answer: Promise<Answer>): Promise<void> {
  const { status, text } = await answer;
  expect([200, 202], text).toContain(status);
}

const perHour = (limit: number, scope = 'Global') => [{ limit, period: 'Hour', scope }];

describe('submissions count whatever the rules were when they were made', () => {
  it('made while the user had no rules: they count toward the rules set later', async () => {
    const user = await createUser([]);
    for (let i = 0; i < 3; i++) await expectAccepted(submit(user.auth));
    await setRules(user.id, perHour(3));
    expect(expectTooManyRequests(await submit(user.auth))).toBeGreaterThan(3000);
  });

  it('rules emptied and set again: the submissions before and meanwhile count', async () => {
    const user = await createUser(perHour(2));
    await expectAccepted(submit(user.auth));
    await expectAccepted(submit(user.auth));
    expectTooManyRequests(await submit(user.auth));
    await setRules(user.id, []);
    await expectAccepted(submit(user.auth));
    // Three counted: a limit of 4 lets one more through, then refuses.
    await setRules(user.id, perHour(4));
    await expectAccepted(submit(user.auth));
    expectTooManyRequests(await submit(user.auth));
  });

  it('per client IP too: those made without rules count toward an IPAddress rule, each from its own address', async () => {
    const user = await createUser([]);
    await expectAccepted(submit(user.auth, '198.51.100.1'));
    await expectAccepted(submit(user.auth, '198.51.100.1'));
    await expectAccepted(submit(user.auth, '198.51.100.2'));
    await setRules(user.id, perHour(2, 'IPAddress'));
    expectTooManyRequests(await submit(user.auth, '198.51.100.1'));
    await expectAccepted(submit(user.auth, '198.51.100.2'));
    expectTooManyRequests(await submit(user.auth, '198.51.100.2'));
    await expectAccepted(submit(user.auth, '198.51.100.3'));
  });

  it("a user's count is its own; root is never counted", async () => {
    const [one, two] = [await createUser([]), await createUser([])];
    for (let i = 0; i < 2; i++) await expectAccepted(submit(one.auth));
    for (let i = 0; i < 5; i++) await expectAccepted(call('POST', '/v2.7/email-validations', { json: { entries: [{ inputData: 'root@example.com' }] } }));
    await setRules(two.id, perHour(1));
    await expectAccepted(submit(two.auth));
    expectTooManyRequests(await submit(two.auth));
  });
});
