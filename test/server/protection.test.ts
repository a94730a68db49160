// Per-user protection through real listening servers: a user's firewall (the client's address, from X-Forwarded-For of
// a trusted proxy only, over IPv4, IPv6 and IPv4-mapped IPv6 sockets) on every way of signing in but POST /auth/tokens,
// a BrowserApp's trusted origins, and the CORS headers of preflights, accepted answers and refusals.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { makeTlsLab, type TlsLab } from '../lab/tls-ca.js';
import { basic, callerAs, type Answer, type CallOptions, type Endpoint } from './http-calls.js';

const ROOT = 'root';
const ROOT_PASSWORD = 'a protection test root password';
const ROOT_BASIC = basic(ROOT, ROOT_PASSWORD);
const JOBS = '/v2.7/email-validations';

type Server = Endpoint;

const dirs: string[] = [];
const apps: FastifyInstance[] = [];

async function startServer(options: Partial<StandaloneOptions> = {}, host = '127.0.0.1', ca?: string): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-protection-'));
  dirs.push(dir);
  const app = await createServer({ dataDir: dir, rootUsername: ROOT, rootPassword: ROOT_PASSWORD, verifier: { checks: 'syntax' }, ...options });
  apps.push(app);
  const origin = await app.listen({ host, port: 0 });
  return { origin, ...(ca !== undefined && { ca }) };
}

interface Options extends CallOptions {
  /** The X-Forwarded-For header: the client's address as a proxy says it. */
  readonly from?: string;
}

const callAsRoot = callerAs(ROOT_BASIC);
const call = (server: Endpoint, method: string, path: string, { from, ...options }: Options = {}): Promise<Answer> =>
  callAsRoot(server, method, path, { ...options, headers: { ...options.headers, ...(from !== undefined && { 'x-forwarded-for': from }) } });

function expectForbidden(answer: Answer): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(403);
  expect(answer.body).toMatchObject({ status: 403, type: '/problems/forbidden' });
}

interface NewUser {
  readonly id: string;
  readonly username: string;
  readonly password: string;
  /** HTTP Basic with its username (a BrowserApp: its key) and password. */
  readonly basic: string;
}

let counter = 0;

/** Creates a user as root (Standard with a password by default); `extra` is merged into the body. */
async function createUser(server: Server, extra: Record<string, unknown> = {}): Promise<NewUser> {
  const username = `user-${++counter}`;
  const password = `the password of ${username}`;
  const type = (extra['type'] as string | undefined) ?? 'Standard';
  const created = await call(server, 'POST', '/v2.7/users', {
    json: { type, displayName: `User ${username}`, ...(type !== 'BrowserApp' && { authentication: { password: { username, password } } }), ...extra },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = created.body.id as string;
  if (type !== 'BrowserApp') return { id, username, password, basic: basic(username, password) };
  const key = (await call(server, 'GET', `/v2.7/users/${id}`)).body.authentication.password.username as string;
  return { id, username: key, password: '', basic: basic(key, '') };
}

const rule = (addressFamily: 'IPv4' | 'IPv6', startIP: string, endIP: string) => ({ addressFamily, displayName: `${startIP}-${endIP}`, startIP, endIP });
const firewall = (...rules: ReturnType<typeof rule>[]) => ({ firewall: { isEnabled: true, rules } });

async function tokenOf(server: Server, user: NewUser, from?: string): Promise<string> {
  const answer = await call(server, 'POST', '/v2.7/auth/tokens', { authorization: null, json: { username: user.username, password: user.password }, ...(from !== undefined && { from }) });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.accessToken as string;
}

/** Trusts X-Forwarded-For from loopback only: the tests' requests say where they come from. */
let proxied: Server;

beforeAll(async () => {
  proxied = await startServer({ trustProxy: '127.0.0.1', metrics: true });
});

afterAll(async () => {
  for (const app of apps) await app.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('firewall', () => {
  it('admits a client whose address a rule holds (ends included), refuses every other one with 403', async () => {
    const user = await createUser(proxied, firewall(rule('IPv4', '10.0.0.10', '10.0.0.20'), rule('IPv6', '2001:db8::', '2001:db8::ff')));
    const from = async (address: string) => (await call(proxied, 'GET', JOBS, { authorization: user.basic, from: address })).status;
    expect(await from('10.0.0.10')).toBe(200);
    expect(await from('10.0.0.20')).toBe(200);
    expect(await from('2001:db8::ff')).toBe(200);
    // An IPv4-mapped IPv6 address is the IPv4 address it maps.
    expect(await from('::ffff:10.0.0.15')).toBe(200);
    for (const outside of ['10.0.0.9', '10.0.0.21', '2001:db8::100', '::ffff:10.0.0.21', '127.0.0.1']) expect(await from(outside), outside).toBe(403);
    const refused = await call(proxied, 'GET', JOBS, { authorization: user.basic, from: '198.51.100.7' });
    expectForbidden(refused);
    expect(refused.body.detail).toContain('198.51.100.7');
    // Without a proxy header the client is the loopback peer, which no rule holds.
    expectForbidden(await call(proxied, 'GET', JOBS, { authorization: user.basic }));
  });

  it('applies to every route of the user: submission (nothing stored), its own record, 1.4; enabled with no rule refuses all', async () => {
    const user = await createUser(proxied, firewall(rule('IPv4', '10.1.0.0', '10.1.255.255')));
    const outside = { authorization: user.basic, from: '192.0.2.1' };
    expectForbidden(await call(proxied, 'POST', JOBS, { ...outside, json: { entries: [{ inputData: 'a@example.com' }] } }));
    expectForbidden(await call(proxied, 'GET', `/v2.7/users/${user.id}`, outside));
    expectForbidden(await call(proxied, 'GET', '/v1.4/email-validations/00000000-0000-4000-8000-000000000000', outside));
    expectForbidden(await call(proxied, 'GET', '/v2.6/email-validations', outside));
    // The refusal comes before the route's own answers (no 404 that would tell a job does not exist).
    expectForbidden(await call(proxied, 'GET', `${JOBS}/00000000-0000-4000-8000-000000000000`, outside));
    const inside = { authorization: user.basic, from: '10.1.2.3' };
    expect((await call(proxied, 'GET', JOBS, inside)).body.data).toEqual([]);
    expect((await call(proxied, 'POST', `${JOBS}?waitTime=10000`, { ...inside, json: { entries: [{ inputData: 'a@example.com' }] } })).status).toBe(200);
    expect((await call(proxied, 'GET', JOBS, inside)).body.data).toHaveLength(1);

    const closed = await createUser(proxied, { firewall: { isEnabled: true, rules: [] } });
    for (const address of ['10.1.2.3', '127.0.0.1', '::1']) expectForbidden(await call(proxied, 'GET', JOBS, { authorization: closed.basic, from: address }));
    // Disabled, its rules are kept and nothing is refused.
    const disabled = await createUser(proxied, { firewall: { isEnabled: false, rules: [rule('IPv4', '10.1.0.0', '10.1.0.1')] } });
    expect((await call(proxied, 'GET', JOBS, { authorization: disabled.basic, from: '203.0.113.9' })).status).toBe(200);
  });

  it('a change of the firewall counts from the next request, a remembered Basic credential included; root is exempt', async () => {
    const user = await createUser(proxied);
    const outside = { authorization: user.basic, from: '203.0.113.50' };
    expect((await call(proxied, 'GET', JOBS, outside)).status).toBe(200);
    const enabling = await call(proxied, 'PATCH', `/v2.7/users/${user.id}`, { patch: [{ op: 'replace', path: '/firewall', value: firewall(rule('IPv4', '10.2.0.0', '10.2.0.0')).firewall }] });
    expect(enabling.status, JSON.stringify(enabling.body)).toBe(200);
    expectForbidden(await call(proxied, 'GET', JOBS, outside));
    expect((await call(proxied, 'GET', JOBS, { authorization: user.basic, from: '10.2.0.0' })).status).toBe(200);
    expect((await call(proxied, 'PATCH', `/v2.7/users/${user.id}`, { patch: [{ op: 'replace', path: '/firewall/isEnabled', value: false }] })).status).toBe(200);
    expect((await call(proxied, 'GET', JOBS, outside)).status).toBe(200);
    // Root has no firewall: it answers from anywhere.
    expect((await call(proxied, 'GET', JOBS, { from: '203.0.113.50' })).status).toBe(200);
    expect((await call(proxied, 'GET', '/metrics', { from: '203.0.113.50' })).status).toBe(200);
  });

  it('POST /auth/tokens is not guarded (its 401 stays its only refusal); the token it gives is refused from outside', async () => {
    const user = await createUser(proxied, firewall(rule('IPv4', '10.3.0.0', '10.3.0.255')));
    const outside = '198.51.100.20';
    const token = await tokenOf(proxied, user, outside);
    const wrong = await call(proxied, 'POST', '/v2.7/auth/tokens', { authorization: null, from: outside, json: { username: user.username, password: 'not the password' } });
    expect(wrong.status).toBe(401);
    expectForbidden(await call(proxied, 'GET', JOBS, { authorization: `Bearer ${token}`, from: outside }));
    expect((await call(proxied, 'GET', JOBS, { authorization: `Bearer ${token}`, from: '10.3.0.1' })).status).toBe(200);
  });

  it('the TOTP step with a first-factor token is refused from outside, and that refusal costs no attempt', async () => {
    const user = await createUser(proxied, firewall(rule('IPv4', '10.4.0.0', '10.4.0.255')));
    const enrolment = await call(proxied, 'POST', `/v2.7/users/${user.id}/authentication/totp`);
    const totp = new TOTP({ secret: enrolment.body.secret as string });
    const confirmed = await call(proxied, 'POST', `/v2.7/users/${user.id}/authentication/totp/confirmations`, { json: { passCode: totp.generate({ timestamp: Date.now() - 30_000 }) } });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const firstFactor = await tokenOf(proxied, user, '192.0.2.99');
    const step = (from: string, passCode: string) => call(proxied, 'POST', '/v2.7/auth/totp/verifications', { authorization: `Bearer ${firstFactor}`, from, json: { passCode } });
    // Five tries from outside, each refused by the firewall before the code is looked at: none counts as a wrong code.
    for (let i = 0; i < 5; i++) expectForbidden(await step('192.0.2.99', '000000'));
    const full = await step('10.4.0.9', totp.generate());
    expect(full.status, JSON.stringify(full.body)).toBe(200);
    expectForbidden(await call(proxied, 'GET', JOBS, { authorization: `Bearer ${full.body.accessToken}`, from: '192.0.2.99' }));
    expect((await call(proxied, 'GET', JOBS, { authorization: `Bearer ${full.body.accessToken}`, from: '10.4.0.9' })).status).toBe(200);
  });

  it('an administrator\'s firewall guards the metrics too', async () => {
    const admin = await createUser(proxied, { type: 'Administrator', ...firewall(rule('IPv4', '10.5.0.1', '10.5.0.1')) });
    expect((await call(proxied, 'GET', '/metrics', { authorization: admin.basic, from: '10.5.0.1' })).status).toBe(200);
    expectForbidden(await call(proxied, 'GET', '/metrics', { authorization: admin.basic, from: '10.5.0.2' }));
  });

  it('rules are checked when stored, by POST and by PATCH: an address of the other family, or a start above its end, is 400', async () => {
    const expectField = (answer: Answer, field: string) => {
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.detail).toContain(field);
    };
    const post = (rules: unknown[]) => call(proxied, 'POST', '/v2.7/users', { json: { type: 'Standard', displayName: 'r', authentication: { password: { username: `rules-${++counter}`, password: 'a long enough password' } }, firewall: { isEnabled: true, rules } } });
    expectField(await post([rule('IPv4', '::ffff:10.0.0.1', '10.0.0.2')]), 'firewall.rules[0].startIP');
    expectField(await post([rule('IPv6', '::1', '127.0.0.1')]), 'firewall.rules[0].endIP');
    expectField(await post([rule('IPv6', '2001:db8::2', '2001:db8::1')]), 'firewall.rules[0].endIP');
    expectField(await post([rule('IPv6', 'fe80::1%eth0', 'fe80::2')]), 'firewall.rules[0].startIP');
    const user = await createUser(proxied);
    const patch = (value: unknown) => call(proxied, 'PATCH', `/v2.7/users/${user.id}`, { patch: [{ op: 'add', path: '/firewall/rules/-', value }] });
    expectField(await patch(rule('IPv4', '10.0.0.9', '10.0.0.1')), 'firewall.rules[0].endIP');
    expectField(await patch(rule('IPv4', '2001:db8::1', '2001:db8::2')), 'firewall.rules[0].startIP');
    expectField(await patch({ ...rule('IPv4', '10.0.0.1', '10.0.0.2'), addressFamily: 'ipv4' }), 'firewall.rules[0].addressFamily');
    expect((await patch(rule('IPv4', '10.0.0.1', '10.0.0.1'))).status).toBe(200);
    expect((await call(proxied, 'GET', `/v2.7/users/${user.id}`)).body.firewall).toEqual({ isEnabled: false, rules: [rule('IPv4', '10.0.0.1', '10.0.0.1')] });
  });
});

describe('firewall: the client address', () => {
  it('X-Forwarded-For from a peer that is not a trusted proxy is ignored: the peer is the client', async () => {
    const untrusting = await startServer({ trustProxy: '192.0.2.1' });
    const user = await createUser(untrusting, firewall(rule('IPv4', '203.0.113.0', '203.0.113.255')));
    expectForbidden(await call(untrusting, 'GET', JOBS, { authorization: user.basic, from: '203.0.113.5' }));
    const loopback = await createUser(untrusting, firewall(rule('IPv4', '127.0.0.1', '127.0.0.1')));
    expect((await call(untrusting, 'GET', JOBS, { authorization: loopback.basic, from: '203.0.113.5' })).status).toBe(200);
  });

  it('over IPv6 (::1) the client is an IPv6 address: an IPv6 rule holds it, an IPv4 one does not', async () => {
    const v6 = await startServer({}, '::1');
    expect(v6.origin).toMatch(/^http:\/\/\[::1\]:\d+$/);
    const inRange = await createUser(v6, firewall(rule('IPv6', '::1', '::1')));
    expect((await call(v6, 'GET', JOBS, { authorization: inRange.basic })).status).toBe(200);
    const v4Only = await createUser(v6, firewall(rule('IPv4', '0.0.0.0', '255.255.255.255')));
    expectForbidden(await call(v6, 'GET', JOBS, { authorization: v4Only.basic }));
  });

  it('on an IPv6 socket, an IPv4 client (::ffff:127.0.0.1) is held by an IPv4 rule', async () => {
    const mapped = await startServer({}, '::ffff:127.0.0.1');
    const user = await createUser(mapped, firewall(rule('IPv4', '127.0.0.1', '127.0.0.1')));
    expect((await call(mapped, 'GET', JOBS, { authorization: user.basic })).status).toBe(200);
    // The job's clientIP is written the same way.
    const job = await call(mapped, 'POST', `${JOBS}?waitTime=10000`, { authorization: user.basic, json: { entries: [{ inputData: 'm@example.com' }] } });
    expect(job.body.overview.clientIP).toBe('127.0.0.1');
    const v6Only = await createUser(mapped, firewall(rule('IPv6', '::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')));
    expectForbidden(await call(mapped, 'GET', JOBS, { authorization: v6Only.basic }));
  });

  describe('a client certificate', () => {
    let lab: TlsLab;
    afterAll(() => lab?.close());

    it('signs in a user whose firewall then refuses or admits the address', async () => {
      lab = makeTlsLab();
      const tls = await startServer({ https: { cert: lab.server.cert.pem, key: lab.server.key.pem, clientCa: lab.clientCa.cert.pem } }, '127.0.0.1', lab.serverCa.cert.pem);
      const certificate = { authentication: { password: { username: 'cert-walled', password: 'the password of cert-walled' }, certificate: { isEnabled: true } } };
      const created = await call(tls, 'POST', '/v2.7/users', { json: { type: 'Standard', displayName: 'Walled', ...certificate, ...firewall(rule('IPv4', '10.9.0.0', '10.9.0.0')) } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const client = lab.clientCertificate('cert-walled');
      expectForbidden(await call(tls, 'GET', JOBS, { authorization: null, client }));
      const opened = await call(tls, 'PATCH', `/v2.7/users/${created.body.id}`, { patch: [{ op: 'add', path: '/firewall/rules/-', value: rule('IPv4', '127.0.0.1', '127.0.0.1') }] });
      expect(opened.status, JSON.stringify(opened.body)).toBe(200);
      expect((await call(tls, 'GET', JOBS, { authorization: null, client })).status).toBe(200);
    });
  });
});

describe('trusted origins and CORS', () => {
  const SHOP = 'https://shop.example.com';
  const trusted = { trustedOrigin: { isEnabled: true, expressions: [SHOP, 'http://localhost:30??', 'https://*.apps.example.net:8443'] } };
  const submit = (user: NewUser, origin: string | undefined) =>
    call(proxied, 'POST', JOBS, { authorization: user.basic, json: { entries: [{ inputData: 'o@example.com' }] }, ...(origin !== undefined && { headers: { origin } }) });

  it('a BrowserApp answers an Origin one of its expressions matches, with the CORS grant of that origin', async () => {
    const app = await createUser(proxied, { type: 'BrowserApp', ...trusted });
    for (const origin of [SHOP, 'HTTPS://Shop.Example.com:443', 'http://localhost:3000', 'https://eu.apps.example.net:8443']) {
      const answer = await submit(app, origin);
      expect([200, 202], `${origin}: ${JSON.stringify(answer.body)}`).toContain(answer.status);
      expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
      expect(answer.headers.get('vary')?.toLowerCase()).toContain('origin');
      const exposed = answer.headers.get('access-control-expose-headers')!.toLowerCase().split(',').map((h) => h.trim());
      expect(exposed).toEqual(expect.arrayContaining(['location', 'etag', 'retry-after', 'content-disposition', 'x-request-id']));
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('refuses (403, no Access-Control-Allow-Origin) another origin, no Origin, `Origin: null`', async () => {
    const app = await createUser(proxied, { type: 'BrowserApp', ...trusted });
    for (const origin of ['https://evil.example', 'http://shop.example.com', 'https://shop.example.com:8443', 'https://shop.example.com.evil.example',
      'http://localhost:300', 'https://apps.example.net:8443', 'null', undefined]) {
      const answer = await submit(app, origin);
      expectForbidden(answer);
      expect(answer.headers.get('access-control-allow-origin'), String(origin)).toBeNull();
    }
    expect((await call(proxied, 'GET', JOBS, { authorization: app.basic })).status).toBe(403);
    // Nothing was stored by the refusals.
    expect((await call(proxied, 'GET', JOBS, { authorization: app.basic, headers: { origin: SHOP } })).body.data).toEqual([]);
  });

  it('disabled, every origin is answered (its own in Access-Control-Allow-Origin), and none is needed', async () => {
    const app = await createUser(proxied, { type: 'BrowserApp', trustedOrigin: { isEnabled: false, expressions: [SHOP] } });
    const answer = await submit(app, 'https://anywhere.example');
    expect([200, 202]).toContain(answer.status);
    expect(answer.headers.get('access-control-allow-origin')).toBe('https://anywhere.example');
    expect([200, 202]).toContain((await submit(app, undefined)).status);
    // A request without Origin is no cross-origin one: no grant.
    expect((await call(proxied, 'GET', JOBS, { authorization: app.basic })).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a trusted origin does not open the firewall: both are checked', async () => {
    const app = await createUser(proxied, { type: 'BrowserApp', ...trusted, ...firewall(rule('IPv4', '10.6.0.0', '10.6.0.255')) });
    expectForbidden(await call(proxied, 'GET', JOBS, { authorization: app.basic, headers: { origin: SHOP }, from: '10.7.0.1' }));
    expect((await call(proxied, 'GET', JOBS, { authorization: app.basic, headers: { origin: SHOP }, from: '10.6.0.1' })).status).toBe(200);
    expectForbidden(await call(proxied, 'GET', JOBS, { authorization: app.basic, headers: { origin: 'https://evil.example' }, from: '10.6.0.1' }));
  });

  it('a preflight is answered for any origin, without credentials: every method of the interface and the headers by name', async () => {
    for (const origin of ['https://evil.example', SHOP]) {
      const preflight = await fetch(`${proxied.origin}/v2.7/users/some-id`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, content-type, if-match' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
      const methods = preflight.headers.get('access-control-allow-methods')!.split(',').map((m) => m.trim());
      expect(methods.sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT']);
      const allowed = preflight.headers.get('access-control-allow-headers')!.toLowerCase().split(',').map((h) => h.trim());
      expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'accept', 'if-match', 'x-request-id']));
      expect(allowed).not.toContain('*');
    }
  });

  it('a 401 keeps its CORS grant: the page can read why its key was refused', async () => {
    const answer = await call(proxied, 'GET', JOBS, { authorization: basic('no-such-key', ''), headers: { origin: SHOP } });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('access-control-allow-origin')).toBe(SHOP);
  });
});
