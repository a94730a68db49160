// Sign-in through real listening servers: HTTP Basic (users, BrowserApp keys, root), the same 401 for an unknown
// username and a wrong password, the limits on failed sign-ins (per username and per client IP), bearer tokens (their
// claims, and every reason one is refused), the remembered Basic credential forgotten when its user changes, the TOTP
// second factor (first-factor tokens, codes used once, the fifth wrong code, isMfaRequired, someone else's TOTP), and
// TLS client certificates (test/lab/tls-ca.ts) with and without an Authorization header.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { decodeJwt, decodeProtectedHeader, SignJWT, type JWTPayload } from 'jose';
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { makeTlsLab, type CertifiedKey, type TlsLab } from '../lab/tls-ca.js';
import { basic, callerAs, type Answer } from './http-calls.js';

const ROOT = 'root';
const ROOT_PASSWORD = 'an authentication test root password';
const SECRET = 'the signing secret of the authentication tests';
const HOUR_S = 3600;

const bearer = (token: string): string => `Bearer ${token}`;
const ROOT_BASIC = basic(ROOT, ROOT_PASSWORD);

interface Server {
  readonly app: FastifyInstance;
  readonly origin: string;
  /** HTTPS: the CA of the server's certificate. */
  readonly ca?: string;
}

const dirs: string[] = [];
const servers: FastifyInstance[] = [];

/**
 * A server on loopback with its own data folder, root's credentials, syntax-only jobs and `options`; with HTTPS, `ca`
 * is the CA of its certificate, which requests trust.
 */
async function startServer(options: Partial<StandaloneOptions> = {}, ca?: string): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-accounts-auth-'));
  dirs.push(dir);
  const app = await createServer({ dataDir: dir, rootUsername: ROOT, rootPassword: ROOT_PASSWORD, verifier: { checks: 'syntax' }, ...options });
  servers.push(app);
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, origin, ...(ca !== undefined && { ca }) };
}

const call = callerAs(ROOT_BASIC);

/** A job route: the caller's own jobs (every user type may list them). */
const JOBS = '/v2.7/email-validations';
/** Submission, answered once the (syntax-only) job is done. */
const SUBMIT = `${JOBS}?waitTime=10000`;
const jobsAs = (server: Server, authorization: string | null) => call(server, 'GET', JOBS, { authorization });

function expectProblem(answer: Answer, status: number, type?: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ status, ...(type !== undefined && { type }) });
}

interface NewUser {
  readonly id: string;
  readonly username: string;
  readonly password: string;
}

let counter = 0;

/** Creates a user as root (Standard with a password by default); `extra` is merged into the body. */
async function createUser(server: Server, extra: Record<string, unknown> = {}, username = `user-${++counter}`): Promise<NewUser> {
  const password = `the password of ${username}`;
  const type = (extra['type'] as string | undefined) ?? 'Standard';
  const body = {
    type,
    displayName: `User ${username}`,
    ...(type !== 'BrowserApp' && { authentication: { password: { username, password } } }),
    ...extra,
  };
  const created = await call(server, 'POST', '/v2.7/users', { json: body });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = created.body.id as string;
  if (type === 'BrowserApp') {
    const detail = await call(server, 'GET', `/v2.7/users/${id}`);
    return { id, username: detail.body.authentication.password.username, password: '' };
  }
  return { id, username, password };
}

const patchUser = (server: Server, id: string, operations: unknown[], authorization?: string) =>
  call(server, 'PATCH', `/v2.7/users/${id}`, { patch: operations, ...(authorization !== undefined && { authorization }) });

async function tokenOf(server: Server, username: string, password: string): Promise<string> {
  const answer = await call(server, 'POST', '/v2.7/auth/tokens', { authorization: null, json: { username, password } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(Object.keys(answer.body)).toEqual(['accessToken']);
  return answer.body.accessToken as string;
}

/** A token with `payload`, signed HS256 with `secret`. */
const signed = (payload: JWTPayload, secret = SECRET) =>
  new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Runs `work` on every item, `width` at a time. */
async function inBatches<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(work));
}

let main: Server;

beforeAll(async () => {
  main = await startServer({ tokenSecret: SECRET });
});

afterAll(async () => {
  for (const app of servers) await app.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('HTTP Basic', () => {
  it('signs in a user with its username and password, and root as before', async () => {
    const user = await createUser(main);
    expect((await jobsAs(main, basic(user.username, user.password))).status).toBe(200);
    // Usernames match case-insensitively.
    expect((await jobsAs(main, basic(user.username.toUpperCase(), user.password))).status).toBe(200);
    expect((await jobsAs(main, ROOT_BASIC)).status).toBe(200);
    // The job belongs to the user that submitted it.
    const job = await call(main, 'POST', SUBMIT, { authorization: basic(user.username, user.password), json: { entries: [{ inputData: 'a@example.com' }] } });
    expect(job.status).toBe(200);
    expect(job.body.overview.owner).toBe(user.id);
  });

  it('signs in a BrowserApp with its key and an empty password; a non-empty password is refused', async () => {
    const app = await createUser(main, { type: 'BrowserApp' });
    expect(app.username).toMatch(/^[A-Za-z0-9]{32}$/);
    const job = await call(main, 'POST', SUBMIT, { authorization: basic(app.username, ''), json: { entries: [{ inputData: 'b@example.com' }] } });
    expect(job.status).toBe(200);
    expect(job.body.overview.owner).toBe(app.id);
    expectProblem(await jobsAs(main, basic(app.username, 'not empty')), 401, '/problems/unauthorized');
    // No token with a password either.
    expect((await call(main, 'POST', '/v2.7/auth/tokens', { authorization: null, json: { username: app.username, password: 'x' } })).status).toBe(401);
  });

  it('answers an unknown username and a wrong password alike: status, body apart from requestId, headers', async () => {
    const user = await createUser(main);
    const comparable = (answer: Answer) => {
      const { requestId, ...body } = answer.body;
      expect(requestId).toEqual(expect.any(String));
      return {
        status: answer.status,
        body,
        wwwAuthenticate: answer.headers.get('www-authenticate'),
        contentType: answer.headers.get('content-type'),
        retryAfter: answer.headers.get('retry-after'),
      };
    };
    const unknown = comparable(await jobsAs(main, basic('nobody-by-this-name', user.password)));
    const wrong = comparable(await jobsAs(main, basic(user.username, 'not the password')));
    expect(unknown).toEqual(wrong);
    expect(unknown).toMatchObject({ status: 401, wwwAuthenticate: 'Basic realm="mailverify"', retryAfter: null, body: { type: '/problems/unauthorized' } });
    // Root's username with a wrong password answers the same.
    expect(comparable(await jobsAs(main, basic(ROOT, 'not the password')))).toEqual(wrong);
    // And so does POST /auth/tokens.
    const tokens = (username: string, password: string) => call(main, 'POST', '/v2.7/auth/tokens', { authorization: null, json: { username, password } });
    const unknownToken = comparable(await tokens('nobody-by-this-name', user.password));
    expect(unknownToken).toEqual(comparable(await tokens(user.username, 'not the password')));
    expect(unknownToken.status).toBe(401);
    // Without credentials: 401 with the challenge.
    const none = await jobsAs(main, null);
    expectProblem(none, 401, '/problems/unauthorized');
    expect(none.headers.get('www-authenticate')).toBe('Basic realm="mailverify"');
  });
});

describe('failed sign-ins', () => {
  it('after 10 failures for one username, its Basic and token sign-ins answer 429 with Retry-After, the right password too', async () => {
    const server = await startServer();
    const target = await createUser(server);
    const other = await createUser(server);
    // Wrong passwords through both ways, and the username in another case: the same username.
    for (let i = 0; i < 10; i++) {
      const answer =
        i % 2 === 0
          ? await jobsAs(server, basic(i % 4 === 0 ? target.username.toUpperCase() : target.username, `wrong ${i}`))
          : await call(server, 'POST', '/v2.7/auth/tokens', { authorization: null, json: { username: target.username, password: `wrong ${i}` } });
      expectProblem(answer, 401);
    }
    const checkRefused = (answer: Answer) => {
      expectProblem(answer, 429, '/problems/too-many-requests');
      const retryAfter = answer.headers.get('retry-after');
      expect(retryAfter).toMatch(/^[0-9]+$/);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(15 * 60);
    };
    checkRefused(await jobsAs(server, basic(target.username, target.password)));
    checkRefused(await call(server, 'POST', '/v2.7/auth/tokens', { authorization: null, json: { username: target.username, password: target.password } }));
    checkRefused(await jobsAs(server, basic(target.username.toUpperCase(), 'wrong again')));
    // Other usernames are not affected, root included.
    expect((await jobsAs(server, basic(other.username, other.password))).status).toBe(200);
    expect((await tokenOf(server, other.username, other.password)).length).toBeGreaterThan(0);
    expect((await jobsAs(server, ROOT_BASIC)).status).toBe(200);
  });

  it('after 100 failures from one client IP, every sign-in from it answers 429; other IPs are not affected', async () => {
    // Behind a trusted proxy (loopback), the client IP is the one X-Forwarded-For names.
    const server = await startServer({ trustProxy: '127.0.0.1' });
    const user = await createUser(server);
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    const usernames = Array.from({ length: 100 }, (_, i) => `unknown-${i}`);
    await inBatches(usernames, 8, async (username) => {
      const answer = await call(server, 'GET', JOBS, { authorization: basic(username, 'whatever'), headers: from('203.0.113.7') });
      expect(answer.status).toBe(401);
    });
    const refused = await call(server, 'GET', JOBS, { authorization: basic(user.username, user.password), headers: from('203.0.113.7') });
    expectProblem(refused, 429, '/problems/too-many-requests');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await call(server, 'GET', JOBS, { authorization: ROOT_BASIC, headers: from('203.0.113.7') })).status).toBe(429);
    const token = await call(server, 'POST', '/v2.7/auth/tokens', { authorization: null, json: { username: user.username, password: user.password }, headers: from('203.0.113.7') });
    expect(token.status).toBe(429);
    // Another address, and the same user from it.
    expect((await call(server, 'GET', JOBS, { authorization: basic(user.username, user.password), headers: from('203.0.113.8') })).status).toBe(200);
  });

  it('neither the right password of an inactive user nor bad tokens count as failures', async () => {
    const server = await startServer();
    const user = await createUser(server, { isActive: false });
    for (let i = 0; i < 11; i++) expectProblem(await jobsAs(server, basic(user.username, user.password)), 401);
    expect((await call(server, 'POST', '/v2.7/auth/tokens', { authorization: null, json: { username: user.username, password: user.password } })).status).toBe(401);
    // More bad tokens than one address may fail sign-ins.
    const forged = await signed({ sub: user.id, jti: 'x' }, 'a foreign key');
    for (let i = 0; i < 101; i++) expect((await jobsAs(server, bearer(i % 2 === 0 ? forged : 'not.a.token'))).status).toBe(401);
    expect((await patchUser(server, user.id, [{ op: 'replace', path: '/isActive', value: true }])).status).toBe(200);
    expect((await jobsAs(server, basic(user.username, user.password))).status).toBe(200);
    expect((await jobsAs(server, ROOT_BASIC)).status).toBe(200);
  });
});

describe('bearer tokens', () => {
  it('POST /auth/tokens gives an HS256 JWT with sub, iat, exp (1 hour) and jti, good on the job routes', async () => {
    const user = await createUser(main);
    const token = await tokenOf(main, user.username, user.password);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'HS256' });
    const claims = decodeJwt(token);
    expect(claims.sub).toBe(user.id);
    expect(claims.iat).toEqual(expect.any(Number));
    expect(claims.exp! - claims.iat!).toBe(HOUR_S);
    expect(Math.abs(claims.iat! - Date.now() / 1000)).toBeLessThan(60);
    expect(claims.jti).toEqual(expect.any(String));
    expect(claims['service:mfa']).toBeUndefined();
    expect(claims['verifalia:mfa']).toBeUndefined();
    const again = await tokenOf(main, user.username, user.password);
    expect(decodeJwt(again).jti).not.toBe(claims.jti);
    const job = await call(main, 'POST', SUBMIT, { authorization: bearer(token), json: { entries: [{ inputData: 'c@example.com' }] } });
    expect(job.status).toBe(200);
    expect(job.body.overview.owner).toBe(user.id);
    // Root's token too.
    expect((await jobsAs(main, bearer(await tokenOf(main, ROOT, ROOT_PASSWORD)))).status).toBe(200);
  });

  it('lives tokenLifetimeMs when the option is given', async () => {
    const server = await startServer({ tokenLifetimeMs: 120_000 });
    const claims = decodeJwt(await tokenOf(server, ROOT, ROOT_PASSWORD));
    expect(claims.exp! - claims.iat!).toBe(120);
  });

  it('is refused when expired, tampered with, unsigned (alg none) or signed with another key', async () => {
    const user = await createUser(main);
    const other = await createUser(main);
    const token = await tokenOf(main, user.username, user.password);
    const claims = decodeJwt(token);
    // Signed again with the server's secret, unchanged: accepted (what follows changes one thing each).
    expect((await jobsAs(main, bearer(await signed(claims)))).status).toBe(200);
    const now = Math.floor(Date.now() / 1000);
    expectProblem(await jobsAs(main, bearer(await signed({ ...claims, iat: now - 7200, exp: now - 10 }))), 401, '/problems/unauthorized');
    const [header, , signature] = token.split('.');
    const tampered = `${header}.${base64url({ ...claims, sub: other.id })}.${signature}`;
    expectProblem(await jobsAs(main, bearer(tampered)), 401);
    const unsigned = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`;
    expectProblem(await jobsAs(main, bearer(unsigned)), 401);
    expectProblem(await jobsAs(main, bearer(await signed(claims, 'a foreign key'))), 401);
    // Without a claim it needs.
    const { jti: _jti, ...withoutJti } = claims;
    expectProblem(await jobsAs(main, bearer(await signed(withoutJti))), 401);
    expect((await jobsAs(main, bearer(token))).status).toBe(200);
  });

  it('is refused after its user’s password changes, after deactivation and after deletion', async () => {
    const user = await createUser(main);
    const before = await tokenOf(main, user.username, user.password);
    expect((await jobsAs(main, bearer(before))).status).toBe(200);
    expect((await patchUser(main, user.id, [{ op: 'replace', path: '/authentication/password/password', value: 'a brand new password' }])).status).toBe(200);
    expectProblem(await jobsAs(main, bearer(before)), 401);
    const after = await tokenOf(main, user.username, 'a brand new password');
    expect((await jobsAs(main, bearer(after))).status).toBe(200);
    expect((await patchUser(main, user.id, [{ op: 'replace', path: '/isActive', value: false }])).status).toBe(200);
    expectProblem(await jobsAs(main, bearer(after)), 401);
    expectProblem(await jobsAs(main, basic(user.username, 'a brand new password')), 401);
    expect((await patchUser(main, user.id, [{ op: 'replace', path: '/isActive', value: true }])).status).toBe(200);
    const last = await tokenOf(main, user.username, 'a brand new password');
    expect((await jobsAs(main, bearer(last))).status).toBe(200);
    expect((await call(main, 'DELETE', `/v2.7/users/${user.id}`)).status).toBe(200);
    expectProblem(await jobsAs(main, bearer(last)), 401);
    expectProblem(await jobsAs(main, basic(user.username, 'a brand new password')), 401);
    expect((await call(main, 'POST', '/v2.7/auth/tokens', { authorization: null, json: { username: user.username, password: 'a brand new password' } })).status).toBe(401);
  });
});

describe('the remembered Basic credential', () => {
  it('is forgotten at once when the user’s password changes: the old password answers 401 at the next request', async () => {
    const user = await createUser(main);
    const old = basic(user.username, user.password);
    expect((await jobsAs(main, old)).status).toBe(200);
    expect((await jobsAs(main, old)).status).toBe(200);
    expect((await patchUser(main, user.id, [{ op: 'replace', path: '/authentication/password/password', value: 'another password' }])).status).toBe(200);
    expectProblem(await jobsAs(main, old), 401);
    expect((await jobsAs(main, basic(user.username, 'another password'))).status).toBe(200);
  });

  it('is forgotten when the user is made inactive or its rules change', async () => {
    const user = await createUser(main);
    const credential = basic(user.username, user.password);
    expect((await jobsAs(main, credential)).status).toBe(200);
    expect((await patchUser(main, user.id, [{ op: 'replace', path: '/authorization/rules', value: ['email-validations:write:my'] }])).status).toBe(200);
    expectProblem(await jobsAs(main, credential), 403, '/problems/forbidden');
    expect((await patchUser(main, user.id, [{ op: 'replace', path: '/isActive', value: false }])).status).toBe(200);
    expectProblem(await jobsAs(main, credential), 401);
  });
});

/** Codes of a TOTP secret at an offset from now (in 30-second steps). */
const codeAt = (secret: string, steps: number) => new TOTP({ secret }).generate({ timestamp: Date.now() + steps * 30_000 });

/** A six-digit code that is none of the secret's codes around now. */
function wrongCode(secret: string): string {
  const near = new Set([-2, -1, 0, 1, 2].map((steps) => codeAt(secret, steps)));
  for (let n = 123_456; ; n = (n + 111_111) % 1_000_000) {
    const code = String(n).padStart(6, '0');
    if (!near.has(code)) return code;
  }
}

/**
 * Enrols a TOTP for `user` (as `authorization`, root's by default), confirmed with the code of the step before now so
 * that the steps of now and the next one are left for sign-ins. The secret, and the code the confirmation used up.
 */
async function enrolTotp(server: Server, user: NewUser, authorization?: string): Promise<{ secret: string; usedCode: string }> {
  const enrolment = await call(server, 'POST', `/v2.7/users/${user.id}/authentication/totp`, { ...(authorization !== undefined && { authorization }) });
  expect(enrolment.status, JSON.stringify(enrolment.body)).toBe(200);
  expect(enrolment.body.uri).toMatch(/^otpauth:\/\/totp\//);
  const secret = enrolment.body.secret as string;
  const usedCode = codeAt(secret, -1);
  const confirmed = await call(server, 'POST', `/v2.7/users/${user.id}/authentication/totp/confirmations`, {
    json: { passCode: usedCode },
    ...(authorization !== undefined && { authorization }),
  });
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  return { secret, usedCode };
}

const verifyTotp = (server: Server, token: string, passCode: string) =>
  call(server, 'POST', '/v2.7/auth/totp/verifications', { authorization: bearer(token), json: { passCode } });

describe('TOTP', () => {
  it('a user with a TOTP gets a first-factor token (5 minutes, mfa claims) good only for the TOTP step, which gives a full token', async () => {
    const user = await createUser(main);
    const { secret, usedCode } = await enrolTotp(main, user, basic(user.username, user.password));
    const first = await tokenOf(main, user.username, user.password);
    const claims = decodeJwt(first);
    expect(claims).toMatchObject({ sub: user.id, 'service:mfa': ['totp'], 'verifalia:mfa': ['totp'] });
    expect(claims.exp! - claims.iat!).toBe(300);
    expect(claims.jti).toEqual(expect.any(String));
    // Good for the TOTP step only.
    expectProblem(await jobsAs(main, bearer(first)), 401, '/problems/unauthorized');
    expectProblem(await call(main, 'GET', `/v2.7/users/${user.id}`, { authorization: bearer(first) }), 401);
    // The enrolment confirmation's code is used up.
    expectProblem(await verifyTotp(main, first, usedCode), 403, '/problems/forbidden');
    // Codes are kept as given: computed again later, the code of "now" may be another step's.
    const current = codeAt(secret, 0);
    const verified = await verifyTotp(main, first, current);
    expect(verified.status).toBe(200);
    expect(Object.keys(verified.body)).toEqual(['accessToken']);
    const full = decodeJwt(verified.body.accessToken);
    expect(full.sub).toBe(user.id);
    expect(full['service:mfa']).toBeUndefined();
    expect(full['verifalia:mfa']).toBeUndefined();
    expect(full.exp! - full.iat!).toBe(HOUR_S);
    expect(full.jti).not.toBe(claims.jti);
    expect((await jobsAs(main, bearer(verified.body.accessToken))).status).toBe(200);
    // A code accepted once is refused after, also with a new first-factor token.
    const second = await tokenOf(main, user.username, user.password);
    expectProblem(await verifyTotp(main, second, current), 403);
    expect((await verifyTotp(main, second, codeAt(secret, 1))).status).toBe(200);
    // A full token is not a first-factor token.
    expectProblem(await verifyTotp(main, verified.body.accessToken, codeAt(secret, 1)), 401);
  });

  it('the fifth wrong code answers 403 and the token answers 401 from then on; another token is not affected', async () => {
    const user = await createUser(main);
    const { secret, usedCode } = await enrolTotp(main, user);
    const first = await tokenOf(main, user.username, user.password);
    const wrong = wrongCode(secret);
    for (let i = 0; i < 4; i++) expectProblem(await verifyTotp(main, first, wrong), 403, '/problems/forbidden');
    // A reused code counts as a wrong one: the fifth.
    expectProblem(await verifyTotp(main, first, usedCode), 403, '/problems/forbidden');
    expectProblem(await verifyTotp(main, first, codeAt(secret, 0)), 401, '/problems/unauthorized');
    expectProblem(await verifyTotp(main, first, wrong), 401);
    // Wrong codes count per token, not against the username: a new sign-in goes on.
    const second = await tokenOf(main, user.username, user.password);
    expect((await verifyTotp(main, second, codeAt(secret, 0))).status).toBe(200);
  });

  it('the TOTP step is under 2.6 too, reads a JSON body sent as text/plain, and counts wrong codes across versions', async () => {
    const user = await createUser(main);
    const { secret } = await enrolTotp(main, user);
    const first = async (version: string) => {
      const answer = await call(main, 'POST', `/${version}/auth/tokens`, { authorization: null, json: { username: user.username, password: user.password } });
      expect(answer.status).toBe(200);
      return answer.body.accessToken as string;
    };
    // As the official client (npm verifalia 5.0.0, API 2.6) sends it: its own headers replace Content-Type.
    const plain = (version: string, token: string, body: string, type = 'text/plain;charset=UTF-8') =>
      call(main, 'POST', `/${version}/auth/totp/verifications`, { authorization: bearer(token), headers: { 'content-type': type }, raw: body });
    const token = await first('v2.6');
    expectProblem(await plain('v2.6', token, 'not json'), 400);
    expectProblem(await plain('v2.6', token, '<passCode/>', 'application/xml'), 415);
    const current = codeAt(secret, 0);
    const verified = await plain('v2.6', token, JSON.stringify({ passCode: current }));
    expect(verified.status).toBe(200);
    expect(decodeJwt(verified.body.accessToken)['verifalia:mfa']).toBeUndefined();
    expect((await call(main, 'GET', '/v2.6/email-validations', { authorization: bearer(verified.body.accessToken) })).status).toBe(200);
    // Other routes still refuse text/plain.
    expectProblem(await call(main, 'POST', '/v2.6/auth/tokens', { authorization: null, headers: { 'content-type': 'text/plain' }, raw: '{}' }), 415);
    // Wrong codes of one token through both versions: the fifth revokes it.
    const counted = await first('v2.7');
    const wrong = wrongCode(secret);
    for (const version of ['v2.7', 'v2.6', 'v2.7', 'v2.6']) expectProblem(await plain(version, counted, JSON.stringify({ passCode: wrong }), 'application/json'), 403);
    expectProblem(await plain('v2.6', counted, JSON.stringify({ passCode: wrong })), 403);
    expectProblem(await verifyTotp(main, counted, codeAt(secret, 1)), 401);
    // The code accepted through 2.6 is used up through 2.7 too.
    expectProblem(await verifyTotp(main, await first('v2.7'), current), 403);
  });

  it('isMfaRequired is true only while a TOTP is enrolled, and refuses HTTP Basic while true; DELETE …/totp ends both', async () => {
    const user = await createUser(main);
    const credential = basic(user.username, user.password);
    const requireMfa = (value: boolean) => patchUser(main, user.id, [{ op: 'replace', path: '/authentication/password/isMfaRequired', value }]);
    const invalid = await requireMfa(true);
    expectProblem(invalid, 400);
    expect(invalid.body.detail).toMatch(/^authentication\.password\.isMfaRequired/);
    const { secret } = await enrolTotp(main, user);
    // Enrolled, not required: Basic still signs in.
    expect((await jobsAs(main, credential)).status).toBe(200);
    expect((await requireMfa(true)).status).toBe(200);
    expect((await call(main, 'GET', `/v2.7/users/${user.id}`)).body.authentication.password.isMfaRequired).toBe(true);
    expectProblem(await jobsAs(main, credential), 401, '/problems/unauthorized');
    // Through tokens and the TOTP step it signs in.
    const first = await tokenOf(main, user.username, user.password);
    expect(decodeJwt(first)['verifalia:mfa']).toEqual(['totp']);
    const removed = await call(main, 'DELETE', `/v2.7/users/${user.id}/authentication/totp`);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: user.id, type: 'Standard' });
    expect((await call(main, 'GET', `/v2.7/users/${user.id}`)).body.authentication.password.isMfaRequired).toBe(false);
    // The first-factor token has no factor left to give.
    expectProblem(await verifyTotp(main, first, codeAt(secret, 0)), 401);
    const full = await tokenOf(main, user.username, user.password);
    expect(decodeJwt(full)['verifalia:mfa']).toBeUndefined();
    expect((await jobsAs(main, bearer(full))).status).toBe(200);
    expect((await jobsAs(main, credential)).status).toBe(200);
    expectProblem(await requireMfa(true), 400);
  });

  it('someone else’s TOTP: 404 to a Standard user without account-wide users:read, 403 with it; administrators may', async () => {
    const target = await createUser(main);
    const plain = await createUser(main);
    const reader = await createUser(main, { authorization: { rules: ['email-validations:*:my', 'users:read'] } });
    const admin = await createUser(main, { type: 'Administrator' });
    const asPlain = basic(plain.username, plain.password);
    const asReader = basic(reader.username, reader.password);
    const paths: [string, string, unknown?][] = [
      ['POST', `/v2.7/users/${target.id}/authentication/totp`],
      ['POST', `/v2.7/users/${target.id}/authentication/totp/confirmations`, { passCode: '123456' }],
      ['DELETE', `/v2.7/users/${target.id}/authentication/totp`],
    ];
    for (const [method, path, json] of paths) {
      expectProblem(await call(main, method, path, { authorization: asPlain, ...(json !== undefined && { json }) }), 404);
      expectProblem(await call(main, method, path, { authorization: asReader, ...(json !== undefined && { json }) }), 403, '/problems/forbidden');
    }
    // An administrator enrols it; the user signs in with it.
    const { secret } = await enrolTotp(main, target, basic(admin.username, admin.password));
    const first = await tokenOf(main, target.username, target.password);
    expect((await verifyTotp(main, first, codeAt(secret, 0))).status).toBe(200);
  });

  it('a BrowserApp cannot enrol: 400', async () => {
    const app = await createUser(main, { type: 'BrowserApp' });
    expectProblem(await call(main, 'POST', `/v2.7/users/${app.id}/authentication/totp`, { authorization: basic(app.username, '') }), 400);
    expectProblem(await call(main, 'POST', `/v2.7/users/${app.id}/authentication/totp`), 400);
  });
});

describe('TLS client certificates', () => {
  let lab: TlsLab;
  let tls: Server;

  beforeAll(async () => {
    lab = makeTlsLab();
    tls = await startServer({ https: { cert: lab.server.cert.pem, key: lab.server.key.pem, clientCa: lab.clientCa.cert.pem } }, lab.serverCa.cert.pem);
  });

  afterAll(() => lab?.close());

  const request = (method: string, path: string, options: { client?: CertifiedKey; headers?: Record<string, string>; json?: unknown } = {}) =>
    call(tls, method, path === JOBS && method === 'POST' ? SUBMIT : path, { authorization: options.headers?.['authorization'] ?? null, ...(options.client !== undefined && { client: options.client }), ...(options.json !== undefined && { json: options.json }) });

  it('a certificate whose CN is a Standard user’s username (any case), with certificates enabled, signs it in', async () => {
    const user = await createUser(tls, { authentication: { password: { username: 'Cert.User', password: 'the password of Cert.User' }, certificate: { isEnabled: true } } }, 'Cert.User');
    const client = lab.clientCertificate('cert.USER');
    expect((await request('GET', JOBS, { client })).status).toBe(200);
    const job = await request('POST', JOBS, { client, json: { entries: [{ inputData: 'd@example.com' }] } });
    expect(job.status).toBe(200);
    expect(job.body.overview.owner).toBe(user.id);
    // Without the certificate: 401.
    expect((await request('GET', JOBS)).status).toBe(401);
  });

  it('refuses (401) a user without certificates enabled, an administrator, an inactive or deleted user, a foreign CA', async () => {
    await createUser(tls, {}, 'no-cert');
    expect((await request('GET', JOBS, { client: lab.clientCertificate('no-cert') })).status).toBe(401);
    // An administrator cannot enable certificates; its certificate names no one who may sign in with one.
    const enabling = await call(tls, 'POST', '/v2.7/users', {
      json: { type: 'Administrator', displayName: 'Admin', authentication: { password: { username: 'cert-admin', password: 'the admin password' }, certificate: { isEnabled: true } } },
    });
    expectProblem(enabling, 400);
    await createUser(tls, { type: 'Administrator' }, 'cert-admin');
    expect((await request('GET', JOBS, { client: lab.clientCertificate('cert-admin') })).status).toBe(401);
    // Root's username is no user.
    expect((await request('GET', JOBS, { client: lab.clientCertificate(ROOT) })).status).toBe(401);
    const certificate = { authentication: { password: { username: 'cert-later', password: 'the password of cert-later' }, certificate: { isEnabled: true } } };
    const later = await createUser(tls, certificate, 'cert-later');
    const client = lab.clientCertificate('cert-later');
    expect((await request('GET', JOBS, { client })).status).toBe(200);
    expect((await request('GET', JOBS, { client: lab.clientCertificate('cert-later', { signer: 'other' }) })).status).toBe(401);
    expect((await patchUser(tls, later.id, [{ op: 'replace', path: '/isActive', value: false }])).status).toBe(200);
    expect((await request('GET', JOBS, { client })).status).toBe(401);
    expect((await patchUser(tls, later.id, [{ op: 'replace', path: '/isActive', value: true }])).status).toBe(200);
    expect((await request('GET', JOBS, { client })).status).toBe(200);
    expect((await patchUser(tls, later.id, [{ op: 'replace', path: '/authentication/certificate/isEnabled', value: false }])).status).toBe(200);
    expect((await request('GET', JOBS, { client })).status).toBe(401);
    expect((await patchUser(tls, later.id, [{ op: 'replace', path: '/authentication/certificate/isEnabled', value: true }])).status).toBe(200);
    expect((await request('GET', JOBS, { client })).status).toBe(200);
    expect((await call(tls, 'DELETE', `/v2.7/users/${later.id}`)).status).toBe(200);
    expect((await request('GET', JOBS, { client })).status).toBe(401);
  });

  it('with an Authorization header, the header decides', async () => {
    const user = await createUser(tls, { authentication: { password: { username: 'cert-header', password: 'the password of cert-header' }, certificate: { isEnabled: true } } }, 'cert-header');
    const client = lab.clientCertificate('cert-header');
    expect((await request('GET', JOBS, { client })).status).toBe(200);
    expect((await request('GET', JOBS, { client, headers: { authorization: basic('cert-header', 'not the password') } })).status).toBe(401);
    expect((await request('GET', JOBS, { client, headers: { authorization: 'Bearer not.a.token' } })).status).toBe(401);
    // Root's credentials with the user's certificate: root's job.
    const job = await request('POST', JOBS, { client, headers: { authorization: ROOT_BASIC }, json: { entries: [{ inputData: 'e@example.com' }] } });
    expect(job.status).toBe(200);
    expect(job.body.overview.owner).not.toBe(user.id);
  });
});
