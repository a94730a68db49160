// The users endpoints (/v2.7/users) through a real listening server and fetch: creation and its defaults, reading,
// JSON Patch with entity tags, deletion, listing with its paging and sorts, and who may create, change or delete whom
// (administrators, no escalation of rules). Every answer of the file is kept and, at the end, searched for what no
// answer may carry: a password, a hash, a TOTP secret or a captcha secret key.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../packages/server/src/server/app.js';
import { ManualClock } from '../jobs/manual-clock.js';
import { defaultStandardDetail } from '../accounts/default-detail.js';

const ROOT = 'root-of-users';
const ROOT_PASSWORD = 'root password of the users tests';
const basic = (username: string, password: string): string => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const ROOT_BASIC = basic(ROOT, ROOT_PASSWORD);
const JSON_PATCH = 'application/json-patch+json';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Server {
  app: FastifyInstance;
  origin: string;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

interface Request {
  json?: unknown;
  /** JSON Patch operations, sent as application/json-patch+json. */
  patch?: unknown;
  raw?: string;
  type?: string;
  /** The Authorization header: root's Basic when absent, none when null. */
  auth?: string | null;
  headers?: Record<string, string>;
}

/** Every answer of the file, searched at the end for secrets. `totpAnswer`: an enrolment, which shows its secret. */
const answers: { what: string; text: string; headers: string; totpAnswer: boolean }[] = [];
/** Passwords and captcha secret keys sent in the file: no answer may contain one. */
const secrets = new Set<string>();
/** TOTP secrets given by enrolments: no other answer may contain one. */
const totpSecrets = new Set<string>();

let dir: string;
let main: Server;
let counter = 0;

async function start(name: string, options: { basePath?: string; clock?: ManualClock } = {}): Promise<Server> {
  const app = await createServer({
    dataDir: join(dir, name),
    rootUsername: ROOT,
    rootPassword: ROOT_PASSWORD,
    verifier: { checks: 'syntax' },
    ...options,
  });
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, origin };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-accounts-users-'));
  main = await start('main');
});

afterAll(async () => {
  await main?.app.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Records the secrets a request body carries (passwords, captcha secret keys). */
function noteSecrets(value: unknown, key = ''): void {
  if (typeof value === 'string') {
    if (key === 'password' || key === 'secretKey') secrets.add(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) {
      // A patch operation's value is named by its path.
      if (item !== null && typeof item === 'object' && typeof item.path === 'string' && typeof item.value === 'string') {
        const last = item.path.split('/').pop();
        if (last === 'password' || last === 'secretKey') secrets.add(item.value);
      }
      noteSecrets(item);
    }
    return;
  }
  if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) noteSecrets(v, k);
}

async function callAt(server: Server, method: string, path: string, request: Request = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...request.headers };
  const auth = request.auth === undefined ? ROOT_BASIC : request.auth;
  if (auth !== null) headers['authorization'] = auth;
  let body = request.raw;
  let type = request.type;
  if (request.json !== undefined) {
    noteSecrets(request.json);
    body = JSON.stringify(request.json);
    type ??= 'application/json';
  }
  if (request.patch !== undefined) {
    noteSecrets(request.patch);
    body = JSON.stringify(request.patch);
    type ??= JSON_PATCH;
  }
  if (type !== undefined) headers['content-type'] = type;
  const response = await fetch(`${server.origin}${path}`, { method, headers, ...(body !== undefined && { body }), redirect: 'manual' });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  const totpAnswer = method === 'POST' && /\/authentication\/totp$/.test(path.split('?')[0]!);
  answers.push({ what: `${method} ${path} ${response.status}`, text, headers: JSON.stringify([...response.headers]), totpAnswer });
  return { status: response.status, headers: response.headers, text, body: parsed };
}

const api = (method: string, path: string, request?: Request): Promise<Answer> => callAt(main, method, path, request);
const patchUser = (id: string, operations: unknown, request: Request = {}) => api('PATCH', `/v2.7/users/${id}`, { ...request, patch: operations });
const getUser = (id: string, request: Request = {}) => api('GET', `/v2.7/users/${id}`, request);

/** A name no other test of the file uses. */
const unique = (label: string): string => `${label}-${++counter}`;
const passwordFor = (label: string): string => `pw-${label}-${randomUUID().slice(0, 8)}`;

interface Made {
  id: string;
  username: string;
  password: string;
  auth: string;
  etag: string;
}

/** A user with a password made by `auth` (root by default); `extra` is merged into the body. */
async function makeUser(type: 'Standard' | 'Administrator', extra: Record<string, unknown> = {}, auth?: string): Promise<Made> {
  const username = unique(type.toLowerCase());
  const password = passwordFor(username);
  const answer = await api('POST', '/v2.7/users', {
    json: { type, displayName: `User ${username}`, authentication: { password: { username, password } }, ...extra },
    ...(auth !== undefined && { auth }),
  });
  expect(answer.status, answer.text).toBe(200);
  return { id: answer.body.id, username, password, auth: basic(username, password), etag: answer.body.etag };
}

function expectField(answer: Answer, field: string): void {
  expect(answer.status, answer.text).toBe(400);
  expect(answer.body.type).toBe('/problems/invalid-field');
  expect(answer.body.detail.startsWith(`${field}: `), answer.body.detail).toBe(true);
}

function expectForbidden(answer: Answer): void {
  expect(answer.status, answer.text).toBe(403);
  expect(answer.body.type).toBe('/problems/forbidden');
}

const standardBody = (username: string, password: string, extra: Record<string, unknown> = {}) => ({
  type: 'Standard',
  displayName: `User ${username}`,
  authentication: { password: { username, password } },
  ...extra,
});

describe('POST /v2.7/users', () => {
  it('type and displayName are required; displayName has 1 to 256 characters', async () => {
    const username = unique('req');
    const password = passwordFor(username);
    const auth = { password: { username, password } };
    expectField(await api('POST', '/v2.7/users', { json: { displayName: 'No type', authentication: auth } }), 'type');
    expectField(await api('POST', '/v2.7/users', { json: { type: 'Guest', displayName: 'Bad type', authentication: auth } }), 'type');
    expectField(await api('POST', '/v2.7/users', { json: { type: 'Standard', authentication: auth } }), 'displayName');
    expectField(await api('POST', '/v2.7/users', { json: { type: 'Standard', displayName: '', authentication: auth } }), 'displayName');
    expectField(await api('POST', '/v2.7/users', { json: { type: 'Standard', displayName: 'x'.repeat(257), authentication: auth } }), 'displayName');
    // Characters, not UTF-16 code units: 256 astral characters are 512 code units.
    const made = await api('POST', '/v2.7/users', { json: { type: 'Standard', displayName: '😀'.repeat(256), authentication: auth } });
    expect(made.status, made.text).toBe(200);
    expect((await getUser(made.body.id)).body.displayName).toBe('😀'.repeat(256));
    const other = unique('req');
    const long = await api('POST', '/v2.7/users', { json: standardBody(other, passwordFor(other), { displayName: 'y'.repeat(256) }) });
    expect(long.status, long.text).toBe(200);
  });

  it('Administrator and Standard with password authentication need a username and a password of 8 to 256 characters', async () => {
    for (const type of ['Standard', 'Administrator']) {
      const username = unique('needs');
      expectField(await api('POST', '/v2.7/users', { json: { type, displayName: 'No username', authentication: { password: { password: passwordFor(username) } } } }), 'authentication.password.username');
      expectField(await api('POST', '/v2.7/users', { json: { type, displayName: 'No credentials' } }), 'authentication.password.username');
      expectField(await api('POST', '/v2.7/users', { json: { type, displayName: 'No password', authentication: { password: { username } } } }), 'authentication.password.password');
      expectField(await api('POST', '/v2.7/users', { json: { type, displayName: 'Short', authentication: { password: { username, password: 'shrt#77' } } } }), 'authentication.password.password');
      expectField(await api('POST', '/v2.7/users', { json: { type, displayName: 'Long', authentication: { password: { username, password: 'L#'.repeat(128) + 'L' } } } }), 'authentication.password.password');
    }
    // The bounds themselves, and no composition rule: eight of one letter do.
    const eight = unique('eight');
    const made = await api('POST', '/v2.7/users', { json: standardBody(eight, 'qqqqqqqq') });
    expect(made.status, made.text).toBe(200);
    expect((await api('GET', '/v2.7/email-validations', { auth: basic(eight, 'qqqqqqqq') })).status).toBe(200);
    const longest = unique('longest');
    const password = 'M#'.repeat(128);
    expect((await api('POST', '/v2.7/users', { json: { ...standardBody(longest, password), type: 'Administrator' } })).status).toBe(200);
    expect((await api('GET', '/v2.7/email-validations', { auth: basic(longest, password) })).status).toBe(200);
    // Without password authentication, neither is needed.
    const passwordless = await api('POST', '/v2.7/users', { json: { type: 'Standard', displayName: 'No password', authentication: { password: { isEnabled: false } } } });
    expect(passwordless.status, passwordless.text).toBe(200);
    expect((await getUser(passwordless.body.id)).body.authentication.password).toEqual({ isEnabled: false, isMfaRequired: false });
  });

  it('a field the User detail does not define, and the contact methods: 400 naming the field', async () => {
    const username = unique('typo');
    const body = standardBody(username, passwordFor(username));
    expectField(await api('POST', '/v2.7/users', { json: { ...body, firewal: { isEnabled: true } } }), 'firewal');
    expectField(await api('POST', '/v2.7/users', { json: { ...body, firewall: { isEnable: true } } }), 'firewall.isEnable');
    expectField(
      await api('POST', '/v2.7/users', { json: { ...body, authentication: { password: { ...body.authentication.password, isMFARequired: true } } } }),
      'authentication.password.isMFARequired',
    );
    expectField(await api('POST', '/v2.7/users', { json: { ...body, captcha: { isEnabled: false, provider: {} } } }), 'captcha.provider');
    expectField(await api('POST', '/v2.7/users', { json: { ...body, trustedOrigins: { isEnabled: false } } }), 'trustedOrigins');
    expectField(await api('POST', '/v2.7/users', { json: { ...body, preferredContactMethod: { type: 'Email', value: 'a@b.example' } } }), 'preferredContactMethod');
    expectField(await api('POST', '/v2.7/users', { json: { ...body, recoveryContactMethod: { type: 'Email', value: 'a@b.example' } } }), 'recoveryContactMethod');
    expectField(
      await api('POST', '/v2.7/users', { json: { ...body, authentication: { ...body.authentication, recoveryContactMethod: { type: 'Email' } } } }),
      'authentication.recoveryContactMethod',
    );
    // None of them was created: the username is still free.
    expect((await api('POST', '/v2.7/users', { json: body })).status).toBe(200);
  });

  it('usernames: printable ASCII, no colon, at most 256 characters, never root’s', async () => {
    for (const bad of ['bell\u0007', 'zoë', 'tab\tname', 'del\u007f', 'a:b', ':', '', 'u'.repeat(257)]) {
      expectField(await api('POST', '/v2.7/users', { json: standardBody(bad, passwordFor('bad'), { displayName: 'Bad' }) }), 'authentication.password.username');
    }
    for (const rootName of [ROOT, ROOT.toUpperCase()]) {
      expectField(await api('POST', '/v2.7/users', { json: standardBody(rootName, passwordFor('root')) }), 'authentication.password.username');
    }
    // A space and every other printable character are allowed; 256 characters too.
    const spaced = `${unique('with space')} ~!@#$%^&*()_+{}|"<>?`;
    const password = passwordFor('spaced');
    expect((await api('POST', '/v2.7/users', { json: standardBody(spaced, password) })).status).toBe(200);
    expect((await api('GET', '/v2.7/email-validations', { auth: basic(spaced, password) })).status).toBe(200);
    const longest = `${unique('n')}`.padEnd(256, 'n');
    expect((await api('POST', '/v2.7/users', { json: standardBody(longest, passwordFor('longest'), { displayName: 'Longest' }) })).status).toBe(200);
  });

  it('usernames are unique case-insensitively: a taken one is 400 naming the field, on POST and PATCH', async () => {
    const carol = await makeUser('Standard');
    const shouted = carol.username.toUpperCase();
    expectField(await api('POST', '/v2.7/users', { json: standardBody(shouted, passwordFor('dup')) }), 'authentication.password.username');
    expectField(await api('POST', '/v2.7/users', { json: { ...standardBody(carol.username, passwordFor('dup')), type: 'Administrator' } }), 'authentication.password.username');
    const other = await makeUser('Standard');
    expectField(await patchUser(other.id, [{ op: 'replace', path: '/authentication/password/username', value: shouted }]), 'authentication.password.username');
    expectField(await patchUser(other.id, [{ op: 'replace', path: '/authentication/password/username', value: ROOT }]), 'authentication.password.username');
    // Its own username in another case is no conflict.
    expect((await patchUser(carol.id, [{ op: 'replace', path: '/authentication/password/username', value: shouted }])).status).toBe(200);
    expect((await api('GET', '/v2.7/email-validations', { auth: basic(shouted, carol.password) })).status).toBe(200);
  });

  it('a BrowserApp: its key is generated (32 of [A-Za-z0-9]), cannot be given, has no password, and shows its two fixed rules', async () => {
    const first = await api('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'Shop' } });
    const second = await api('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'Shop 2' } });
    expect(first.status, first.text).toBe(200);
    const detail = (await getUser(first.body.id)).body;
    const key = detail.authentication.password.username;
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((await getUser(second.body.id)).body.authentication.password.username).not.toBe(key);
    expect(detail).toEqual({
      type: 'BrowserApp',
      displayName: 'Shop',
      isActive: true,
      authentication: { password: { isEnabled: true, isMfaRequired: false, username: key }, certificate: { isEnabled: false } },
      authorization: { rules: ['email-validations:write:my', 'email-validations:read:my'] },
      captcha: { isEnabled: false },
      defaults: {},
      firewall: { isEnabled: false, rules: [] },
      throttling: { rules: [] },
      trustedOrigin: { isEnabled: false, expressions: [] },
    });
    // It signs in with its key and an empty password.
    expect((await api('GET', '/v2.7/email-validations', { auth: basic(key, '') })).status).toBe(200);
    expect((await api('GET', '/v2.7/users', { auth: basic(key, '') })).status).toBe(403);

    const given = unique('KeyOfMyOwn');
    expectField(
      await api('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'Own key', authentication: { password: { username: given } } } }),
      'authentication.password.username',
    );
    expectField(
      await api('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'Password', authentication: { password: { password: passwordFor('app') } } } }),
      'authentication.password.password',
    );
    expectField(
      await api('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'Rules', authorization: { rules: ['email-validations:read:my'] } } }),
      'authorization.rules',
    );
    expectField(await patchUser(first.body.id, [{ op: 'replace', path: '/authentication/password/username', value: 'A'.repeat(32) }]), 'authentication.password.username');
    expectField(await patchUser(first.body.id, [{ op: 'add', path: '/authorization/rules/-', value: 'users:read' }]), 'authorization.rules');
    expectField(await patchUser(first.body.id, [{ op: 'add', path: '/authentication/password/password', value: passwordFor('app') }]), 'authentication.password.password');
    expect((await getUser(first.body.id)).body).toEqual(detail);
  });

  it('the defaults of every absent setting, as GET reads them back', async () => {
    const standard = await makeUser('Standard');
    expect((await getUser(standard.id)).body).toEqual(defaultStandardDetail(`User ${standard.username}`, standard.username));
    const admin = await makeUser('Administrator');
    expect((await getUser(admin.id)).body).toMatchObject({
      type: 'Administrator',
      isActive: true,
      authentication: { password: { isEnabled: true, isMfaRequired: false, username: admin.username }, certificate: { isEnabled: false } },
      captcha: { isEnabled: false },
      defaults: {},
      firewall: { isEnabled: false, rules: [] },
      throttling: { rules: [] },
      trustedOrigin: { isEnabled: false, expressions: [] },
    });
    // Given settings are kept as given.
    const given = await makeUser('Standard', {
      isActive: false,
      authorization: { rules: ['email-validations:read:my'] },
      firewall: { isEnabled: false, rules: [{ addressFamily: 'IPv4', displayName: 'office', startIP: '192.0.2.1', endIP: '192.0.2.9' }] },
      throttling: { maxEntriesPerJob: 10, rules: [{ limit: 5, period: 'Hour', scope: 'Global' }] },
    });
    expect((await getUser(given.id)).body).toMatchObject({
      isActive: false,
      authorization: { rules: ['email-validations:read:my'] },
      firewall: { isEnabled: false, rules: [{ addressFamily: 'IPv4', displayName: 'office', startIP: '192.0.2.1', endIP: '192.0.2.9' }] },
      throttling: { maxEntriesPerJob: 10, rules: [{ limit: 5, period: 'Hour', scope: 'Global' }] },
    });
  });

  it('defaults.retention: 0:05:00 to 30.00:00:00, read back in the server’s duration form', async () => {
    for (const [given, shown] of [
      ['0:05:00', '00:05:00'],
      ['1.2:03:04', '1.02:03:04'],
      ['30.00:00:00', '30.00:00:00'],
      ['0:5:0', '00:05:00'],
    ]) {
      const user = await api('POST', '/v2.7/users', { json: { type: 'Standard', displayName: 'Retention', authentication: { password: { isEnabled: false } }, defaults: { retention: given } } });
      expect(user.status, user.text).toBe(200);
      expect((await getUser(user.body.id)).body.defaults).toEqual({ retention: shown });
    }
    for (const bad of ['0:04:59', '30.00:00:01', 'a day', 3600]) {
      expectField(
        await api('POST', '/v2.7/users', { json: { type: 'Standard', displayName: 'Retention', authentication: { password: { isEnabled: false } }, defaults: { retention: bad } } }),
        'defaults.retention',
      );
    }
  });

  it('authentication.certificate.isEnabled only for Standard users; trustedOrigin.isEnabled only for BrowserApps', async () => {
    const certificate = { certificate: { isEnabled: true } };
    const admin = unique('cert-admin');
    expectField(
      await api('POST', '/v2.7/users', { json: { ...standardBody(admin, passwordFor(admin)), type: 'Administrator', authentication: { password: { username: admin, password: passwordFor(admin) }, ...certificate } } }),
      'authentication.certificate.isEnabled',
    );
    expectField(await api('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'App', authentication: certificate } }), 'authentication.certificate.isEnabled');
    const standard = unique('cert-standard');
    const made = await api('POST', '/v2.7/users', { json: { type: 'Standard', displayName: 'Cert', authentication: { password: { username: standard, password: passwordFor(standard) }, ...certificate } } });
    expect(made.status, made.text).toBe(200);
    expect((await getUser(made.body.id)).body.authentication.certificate).toEqual({ isEnabled: true });
    // A Standard user with a certificate does not become an Administrator keeping it.
    expectField(await patchUser(made.body.id, [{ op: 'replace', path: '/type', value: 'Administrator' }]), 'authentication.certificate.isEnabled');

    const origins = { isEnabled: true, expressions: ['https://shop.example.com'] };
    const user = unique('origin');
    expectField(await api('POST', '/v2.7/users', { json: standardBody(user, passwordFor(user), { trustedOrigin: origins }) }), 'trustedOrigin.isEnabled');
    expectField(await api('POST', '/v2.7/users', { json: { ...standardBody(user, passwordFor(user), { trustedOrigin: origins }), type: 'Administrator' } }), 'trustedOrigin.isEnabled');
    // Expressions alone, not enabled, are a setting like any other.
    expect((await api('POST', '/v2.7/users', { json: standardBody(user, passwordFor(user), { trustedOrigin: { isEnabled: false, expressions: ['https://a.example'] } }) })).status).toBe(200);
    const app = await api('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'Shop front', trustedOrigin: origins } });
    expect(app.status, app.text).toBe(200);
    expect((await getUser(app.body.id)).body.trustedOrigin).toEqual(origins);
  });

  it('settings are validated: 400 naming the field of a rule, a firewall range, a throttling rule, isMfaRequired', async () => {
    const username = unique('settings');
    const post = (extra: Record<string, unknown>) => api('POST', '/v2.7/users', { json: standardBody(username, passwordFor(username), extra) });
    const range = (addressFamily: string, startIP: string, endIP: string) => ({ firewall: { isEnabled: true, rules: [{ addressFamily, displayName: 'r', startIP, endIP }] } });
    expectField(await post({ authorization: { rules: ['email-validations:*:my', 'users:read:everyone'] } }), 'authorization.rules[1]');
    expectField(await post({ authorization: { rules: ['mailboxes:read'] } }), 'authorization.rules[0]');
    expectField(await post({ authorization: { rules: ['users:send'] } }), 'authorization.rules[0]');
    expectField(await post({ authorization: { rules: 'users:read' } }), 'authorization.rules');
    expectField(await post(range('IPv4', '2001:db8::1', '2001:db8::2')), 'firewall.rules[0].startIP');
    expectField(await post(range('IPv6', '2001:db8::1', '192.0.2.1')), 'firewall.rules[0].endIP');
    expectField(await post(range('IPv4', '192.0.2.9', '192.0.2.1')), 'firewall.rules[0].endIP');
    expectField(await post(range('IPv5', '192.0.2.1', '192.0.2.9')), 'firewall.rules[0].addressFamily');
    expectField(await post({ throttling: { rules: [{ limit: 0, period: 'Hour', scope: 'Global' }] } }), 'throttling.rules[0].limit');
    expectField(await post({ throttling: { rules: [{ limit: 1, period: 'Week', scope: 'Global' }] } }), 'throttling.rules[0].period');
    expectField(await post({ throttling: { rules: [{ limit: 1, period: 'Day', scope: 'Country' }] } }), 'throttling.rules[0].scope');
    expectField(await post({ throttling: { maxEntriesPerJob: 0, rules: [] } }), 'throttling.maxEntriesPerJob');
    expectField(
      await api('POST', '/v2.7/users', { json: { type: 'Standard', displayName: 'Mfa', authentication: { password: { username, password: passwordFor(username), isMfaRequired: true } } } }),
      'authentication.password.isMfaRequired',
    );
    // The same ranges, the right way round and in their family, are fine.
    expect((await post({ ...range('IPv6', '2001:db8::1', '2001:db8::ffff'), authorization: { rules: ['email-verifications:read:own'] } })).status).toBe(200);
  });

  it('answers 200 with the User overview, Location of its detail and a quoted ETag that GET repeats', async () => {
    const username = unique('answer');
    const answer = await api('POST', '/v2.7/users', { json: standardBody(username, passwordFor(username)) });
    expect(answer.status).toBe(200);
    const { id, etag } = answer.body;
    expect(id).toMatch(UUID);
    expect(answer.body).toEqual({ id, displayName: `User ${username}`, etag, isActive: true, type: 'Standard' });
    expect(typeof etag).toBe('string');
    expect(answer.headers.get('location')).toBe(`/v2.7/users/${id}`);
    expect(answer.headers.get('etag')).toBe(`"${etag}"`);
    const read = await getUser(id);
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe(`"${etag}"`);
  });

  it('captcha secret keys are kept and never shown', async () => {
    const made = await makeUser('Standard', {
      captcha: {
        isEnabled: true,
        providers: {
          turnstile: { secretKey: `turnstile-secret-${randomUUID()}` },
          hCaptcha: { secretKey: `hcaptcha-secret-${randomUUID()}`, siteKey: 'site-key-shown' },
          reCaptchaV3: { secretKey: `recaptcha-secret-${randomUUID()}`, minScore: 0.7 },
        },
      },
    });
    const read = await getUser(made.id);
    expect(read.body.captcha).toEqual({ isEnabled: true, providers: { turnstile: {}, hCaptcha: { siteKey: 'site-key-shown' }, reCaptchaV3: { minScore: 0.7 } } });
    // A patch that gives no new secret key keeps the stored one; a new one is written, never shown.
    expect((await patchUser(made.id, [{ op: 'replace', path: '/captcha/providers/reCaptchaV3/minScore', value: 0.9 }])).status).toBe(200);
    expect((await patchUser(made.id, [{ op: 'replace', path: '/captcha/providers/turnstile/secretKey', value: `turnstile-new-${randomUUID()}` }])).status).toBe(200);
    expect((await getUser(made.id)).body.captcha.providers).toEqual({ turnstile: {}, hCaptcha: { siteKey: 'site-key-shown' }, reCaptchaV3: { minScore: 0.9 } });
  });
});

describe('GET /v2.7/users/{id}', () => {
  it('200 with the detail and its ETag; 404 for an unknown id; 410 once deleted, on GET, PATCH and DELETE', async () => {
    const user = await makeUser('Standard');
    const read = await getUser(user.id);
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe(`"${user.etag}"`);
    expect(read.body.type).toBe('Standard');
    for (const unknown of [randomUUID(), 'not-a-user']) {
      expect((await getUser(unknown)).status).toBe(404);
      expect((await patchUser(unknown, [])).status).toBe(404);
      expect((await api('DELETE', `/v2.7/users/${unknown}`)).status).toBe(404);
    }
    expect((await api('DELETE', `/v2.7/users/${user.id}`)).status).toBe(200);
    expect((await getUser(user.id)).status).toBe(410);
    expect((await patchUser(user.id, [{ op: 'replace', path: '/displayName', value: 'Back' }])).status).toBe(410);
    expect((await api('DELETE', `/v2.7/users/${user.id}`)).status).toBe(410);
    expect((await api('DELETE', `/v2.7/users/${user.id}`, { headers: { 'if-match': '*' } })).status).toBe(410);
  });

  it('a user reads its own detail with users:read:my, and nobody else’s (404)', async () => {
    const other = await makeUser('Standard');
    const reader = await makeUser('Standard', { authorization: { rules: ['users:read:my'] } });
    const own = await getUser(reader.id, { auth: reader.auth });
    expect(own.status).toBe(200);
    expect(own.body.authentication.password.username).toBe(reader.username);
    expect((await getUser(other.id, { auth: reader.auth })).status).toBe(404);
    const none = await makeUser('Standard');
    expect((await getUser(none.id, { auth: none.auth })).status).toBe(403);
  });
});

describe('PATCH /v2.7/users/{id}', () => {
  it('needs Content-Type application/json-patch+json: 415 otherwise, nothing changed', async () => {
    const user = await makeUser('Standard');
    const operations = JSON.stringify([{ op: 'replace', path: '/displayName', value: 'Changed' }]);
    for (const type of ['application/json', 'text/plain', 'application/merge-patch+json']) {
      expect((await api('PATCH', `/v2.7/users/${user.id}`, { raw: operations, type })).status).toBe(415);
    }
    expect((await getUser(user.id)).body.displayName).toBe(`User ${user.username}`);
    const answer = await api('PATCH', `/v2.7/users/${user.id}`, { raw: operations, type: `${JSON_PATCH}; charset=utf-8` });
    expect(answer.status, answer.text).toBe(200);
    expect((await getUser(user.id)).body.displayName).toBe('Changed');
  });

  it('operations apply all or nothing; the result is validated as a creation (400 naming the field)', async () => {
    const user = await makeUser('Standard');
    const before = await getUser(user.id);
    const rename = { op: 'replace', path: '/displayName', value: 'Renamed' };
    expect((await patchUser(user.id, [rename, { op: 'replace', path: '/nothing/here', value: 1 }])).status).toBe(400);
    expectField(await patchUser(user.id, [rename, { op: 'add', path: '/firewal', value: { isEnabled: true } }]), 'firewal');
    expectField(await patchUser(user.id, [rename, { op: 'replace', path: '/displayName', value: '' }]), 'displayName');
    expectField(await patchUser(user.id, [rename, { op: 'replace', path: '/authentication/password/username', value: 'a:b' }]), 'authentication.password.username');
    expectField(await patchUser(user.id, [rename, { op: 'add', path: '/authorization/rules/-', value: 'mail:send' }]), 'authorization.rules[1]');
    expectField(await patchUser(user.id, [rename, { op: 'add', path: '/defaults/retention', value: '0:01:00' }]), 'defaults.retention');
    expectField(await patchUser(user.id, [rename, { op: 'add', path: '/preferredContactMethod', value: { type: 'Email' } }]), 'preferredContactMethod');
    expectField(await patchUser(user.id, [rename, { op: 'remove', path: '/type' }]), 'type');
    expectField(await patchUser(user.id, [rename, { op: 'add', path: '/authentication/password/password', value: 'short#7' }]), 'authentication.password.password');
    // A failed test: 409, the operations before it not applied either.
    const failed = await patchUser(user.id, [rename, { op: 'test', path: '/type', value: 'Administrator' }]);
    expect(failed.status).toBe(409);
    const after = await getUser(user.id);
    expect(after.body).toEqual(before.body);
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
    // A test that holds lets the others through.
    const ok = await patchUser(user.id, [{ op: 'test', path: '/type', value: 'Standard' }, rename, { op: 'add', path: '/defaults/retention', value: '2:00:00' }]);
    expect(ok.status, ok.text).toBe(200);
    // The answer is the User overview, with the new ETag.
    expect(ok.body).toEqual({ id: user.id, displayName: 'Renamed', etag: ok.body.etag, isActive: true, type: 'Standard' });
    expect(ok.headers.get('etag')).toBe(`"${ok.body.etag}"`);
    expect((await getUser(user.id)).body).toMatchObject({ displayName: 'Renamed', defaults: { retention: '02:00:00' } });
  });

  it('the password is set with add or replace: the old one stops working, the new one works', async () => {
    const user = await makeUser('Standard');
    const ok = () => api('GET', '/v2.7/email-validations', { auth: user.auth });
    expect((await ok()).status).toBe(200);
    let previous = user.auth;
    for (const op of ['replace', 'add']) {
      const password = passwordFor(`${user.username}-${op}`);
      const answer = await patchUser(user.id, [{ op, path: '/authentication/password/password', value: password }]);
      expect(answer.status, answer.text).toBe(200);
      expect((await api('GET', '/v2.7/email-validations', { auth: previous })).status).toBe(401);
      previous = basic(user.username, password);
      expect((await api('GET', '/v2.7/email-validations', { auth: previous })).status).toBe(200);
    }
    // Write-only: never in the document.
    expect((await getUser(user.id)).body.authentication.password).toEqual({ isEnabled: true, isMfaRequired: false, username: user.username });
  });

  it('the type changes between Administrator and Standard, never to or from BrowserApp (400)', async () => {
    const user = await makeUser('Standard');
    const toAdmin = await patchUser(user.id, [{ op: 'replace', path: '/type', value: 'Administrator' }]);
    expect(toAdmin.status, toAdmin.text).toBe(200);
    expect(toAdmin.body.type).toBe('Administrator');
    expect((await getUser(user.id)).body.type).toBe('Administrator');
    // As an Administrator it may do what its rules alone would not.
    expect((await api('GET', '/v2.7/users', { auth: user.auth })).status).toBe(200);
    expect((await patchUser(user.id, [{ op: 'replace', path: '/type', value: 'Standard' }])).status).toBe(200);
    expect((await api('GET', '/v2.7/users', { auth: user.auth })).status).toBe(403);
    expectField(await patchUser(user.id, [{ op: 'replace', path: '/type', value: 'BrowserApp' }]), 'type');
    const app = await api('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'App' } });
    expectField(await patchUser(app.body.id, [{ op: 'replace', path: '/type', value: 'Standard' }]), 'type');
    expectField(await patchUser(app.body.id, [{ op: 'replace', path: '/type', value: 'Administrator' }]), 'type');
    expect((await getUser(app.body.id)).body.type).toBe('BrowserApp');
    expect((await getUser(user.id)).body.type).toBe('Standard');
  });

  it('the etag changes with every change, the password’s included, and stays when nothing changes', async () => {
    const user = await makeUser('Standard');
    const seen = new Set([user.etag]);
    const changes = [
      [{ op: 'replace', path: '/displayName', value: 'One' }],
      [{ op: 'replace', path: '/isActive', value: false }],
      [{ op: 'replace', path: '/isActive', value: true }],
      [{ op: 'add', path: '/authorization/rules/-', value: 'users:read:my' }],
      [{ op: 'replace', path: '/authentication/password/password', value: passwordFor('etag') }],
      [{ op: 'replace', path: '/displayName', value: 'One' }, { op: 'add', path: '/throttling/maxEntriesPerJob', value: 5 }],
    ];
    for (const operations of changes) {
      const answer = await patchUser(user.id, operations);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.headers.get('etag')).toBe(`"${answer.body.etag}"`);
      expect(seen.has(answer.body.etag), JSON.stringify(operations)).toBe(false);
      seen.add(answer.body.etag);
      expect((await getUser(user.id)).headers.get('etag')).toBe(`"${answer.body.etag}"`);
    }
    const current = (await getUser(user.id)).body;
    const etag = [...seen].pop();
    for (const operations of [[], [{ op: 'replace', path: '/displayName', value: current.displayName }], [{ op: 'test', path: '/type', value: 'Standard' }]]) {
      const answer = await patchUser(user.id, operations, { headers: { 'if-match': `"${etag}"` } });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.etag).toBe(etag);
      expect(answer.headers.get('etag')).toBe(`"${etag}"`);
    }
  });

  it('If-Match: quoted, bare, a list, *, a weak tag by its opaque part; none matching: 412 and nothing changed; absent: unconditional', async () => {
    const user = await makeUser('Standard');
    let etag = user.etag;
    let n = 0;
    const rename = (ifMatch?: string) =>
      patchUser(user.id, [{ op: 'replace', path: '/displayName', value: `Name ${++n}` }], ifMatch === undefined ? {} : { headers: { 'if-match': ifMatch } });
    for (const header of [(e: string) => `"${e}"`, (e: string) => e, (e: string) => `"other", "${e}"`, (e: string) => `W/"other",W/"${e}"`, () => '*', (e: string) => `W/"${e}"`]) {
      const answer = await rename(header(etag));
      expect(answer.status, `${header(etag)}: ${answer.text}`).toBe(200);
      expect(answer.body.etag).not.toBe(etag);
      etag = answer.body.etag;
    }
    const stale = user.etag;
    for (const header of [`"${stale}"`, stale, `"a", "b"`, `W/"${stale}"`, `"${etag}x"`]) {
      const refused = await rename(header);
      expect(refused.status, header).toBe(412);
      expect(refused.body.type).toBe('/problems/precondition-failed');
    }
    const read = await getUser(user.id);
    expect(read.body.displayName).toBe('Name 6');
    expect(read.headers.get('etag')).toBe(`"${etag}"`);
    expect((await rename()).status).toBe(200);
    // DELETE too.
    expect((await api('DELETE', `/v2.7/users/${user.id}`, { headers: { 'if-match': `"${etag}"` } })).status).toBe(412);
    expect((await getUser(user.id)).status).toBe(200);
    const current = (await getUser(user.id)).headers.get('etag')!;
    expect((await api('DELETE', `/v2.7/users/${user.id}`, { headers: { 'if-match': current } })).status).toBe(200);
    expect((await getUser(user.id)).status).toBe(410);
  });

  it('an etag survives a restart: the same ETag read back, and If-Match with it still matches', async () => {
    const first = await start('restart');
    const username = unique('restart');
    const created = await callAt(first, 'POST', '/v2.7/users', { json: standardBody(username, passwordFor(username)) });
    expect(created.status).toBe(200);
    const { id, etag } = created.body;
    await first.app.close();
    const second = await start('restart');
    try {
      const read = await callAt(second, 'GET', `/v2.7/users/${id}`);
      expect(read.status).toBe(200);
      expect(read.headers.get('etag')).toBe(`"${etag}"`);
      const patched = await callAt(second, 'PATCH', `/v2.7/users/${id}`, { patch: [{ op: 'replace', path: '/displayName', value: 'After' }], headers: { 'if-match': `"${etag}"` } });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body.etag).not.toBe(etag);
    } finally {
      await second.app.close();
    }
  });
});

describe('DELETE /v2.7/users/{id}', () => {
  it('200; listed as deleted only with includeDeleted=true; it cannot sign in; its username is free; its jobs stay readable by root', async () => {
    const user = await makeUser('Standard');
    expect((await api('GET', '/v2.7/email-validations', { auth: user.auth })).status).toBe(200);
    const submitted = await api('POST', '/v2.7/email-validations', { json: { entries: [{ inputData: 'alice@example.com' }] }, auth: user.auth });
    expect([200, 202]).toContain(submitted.status);
    const jobId = submitted.body.overview.id;
    const token = await api('POST', '/v2.7/auth/tokens', { json: { username: user.username, password: user.password }, auth: null });
    expect(token.status).toBe(200);
    const bearer = `Bearer ${token.body.accessToken}`;
    expect((await api('GET', '/v2.7/email-validations', { auth: bearer })).status).toBe(200);

    const deleted = await api('DELETE', `/v2.7/users/${user.id}`);
    expect(deleted.status).toBe(200);
    const all = async (query: string) => {
      const listed = await api('GET', `/v2.7/users?limit=1000${query}`);
      expect(listed.status).toBe(200);
      return listed.body.data as { id: string; isDeleted?: boolean }[];
    };
    expect((await all('')).find((item) => item.id === user.id)).toBeUndefined();
    expect((await all('&includeDeleted=false')).find((item) => item.id === user.id)).toBeUndefined();
    const withDeleted = await all('&includeDeleted=true');
    expect(withDeleted.find((item) => item.id === user.id)).toMatchObject({ id: user.id, isDeleted: true });
    // Users not deleted carry no isDeleted: the ones that do are exactly those the default listing leaves out.
    const live = await all('');
    expect(live.every((item) => !('isDeleted' in item))).toBe(true);
    expect(withDeleted.filter((item) => !('isDeleted' in item)).map((item) => item.id)).toEqual(live.map((item) => item.id));

    // The credential that worked a moment ago (and may be remembered) no longer does.
    expect((await api('GET', '/v2.7/email-validations', { auth: user.auth })).status).toBe(401);
    expect((await api('POST', '/v2.7/auth/tokens', { json: { username: user.username, password: user.password }, auth: null })).status).toBe(401);
    // Nor with a token issued before.
    expect((await api('GET', '/v2.7/email-validations', { auth: bearer })).status).toBe(401);

    // The username is free again, in any case.
    const password = passwordFor('again');
    const again = await api('POST', '/v2.7/users', { json: standardBody(user.username.toUpperCase(), password) });
    expect(again.status, again.text).toBe(200);
    expect(again.body.id).not.toBe(user.id);
    expect((await api('GET', '/v2.7/email-validations', { auth: basic(user.username, password) })).status).toBe(200);
    // The deleted user's password is nobody's.
    expect((await api('GET', '/v2.7/email-validations', { auth: user.auth })).status).toBe(401);
    // The newcomer does not see the deleted user's job.
    expect((await api('GET', `/v2.7/email-validations/${jobId}/overview`, { auth: basic(user.username, password) })).status).toBe(404);

    const job = await api('GET', `/v2.7/email-validations/${jobId}/overview?waitTime=10000`);
    expect(job.status, job.text).toBe(200);
    expect(job.body.owner).toBe(user.id);
    const owned = await api('GET', `/v2.7/email-validations?owner=${user.id}`);
    expect(owned.status).toBe(200);
    expect(owned.body.data.map((item: { id: string }) => item.id)).toEqual([jobId]);
  });
});

describe('GET /v2.7/users: paging, filters and sorts', () => {
  const BASE = '/svc';
  let listing: Server;
  let clock: ManualClock;
  /** Ids by their label, in creation order. */
  const ids: Record<string, string> = {};
  const listAt = (query: string, request: Request = {}) => callAt(listing, 'GET', `${BASE}/v2.7/users${query}`, request);
  const labels = (answer: Answer): string[] => {
    expect(answer.status, answer.text).toBe(200);
    const byId = Object.fromEntries(Object.entries(ids).map(([label, id]) => [id, label]));
    return answer.body.data.map((item: { id: string }) => byId[item.id]);
  };

  beforeAll(async () => {
    clock = new ManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
    listing = await start('listing', { basePath: BASE, clock });
    // Display names that tell the order apart: `_` (0x5F) sorts between capitals and small letters, so only lower-cased
    // names put `_x` before `Zed`; `ﬀ` (U+FB00) is above a surrogate (U+D835) in UTF-16 though below `𝒜` (U+1D49C)
    // in code points; `Été` lower-cases above `z`. c2 and c5 have the same lower-cased name; c3 and c4 the same time.
    const users: [string, string, number][] = [
      ['c1', 'bravo', 0],
      ['c2', 'Alpha', 1000],
      ['c3', 'Zed', 1000],
      ['c4', '_x', 0],
      ['c5', 'alpha', 1000],
      ['c6', 'ﬀ', 1000],
      ['c7', '𝒜', 1000],
      ['c8', 'Été', 1000],
    ];
    for (const [label, displayName, advance] of users) {
      clock.advance(advance);
      const made = await callAt(listing, 'POST', `${BASE}/v2.7/users`, { json: { type: 'Standard', displayName, authentication: { password: { isEnabled: false } } } });
      expect(made.status, made.text).toBe(200);
      expect(made.headers.get('location')).toBe(`${BASE}/v2.7/users/${made.body.id}`);
      ids[label] = made.body.id;
    }
    clock.advance(1000);
    const app = await callAt(listing, 'POST', `${BASE}/v2.7/users`, { json: { type: 'BrowserApp', displayName: 'app' } });
    ids['app'] = app.body.id;
    clock.advance(1000);
    const username = unique('lister');
    const admin = await callAt(listing, 'POST', `${BASE}/v2.7/users`, { json: { ...standardBody(username, passwordFor(username)), type: 'Administrator', displayName: 'admin' } });
    ids['admin'] = admin.body.id;
    clock.advance(1000);
    const gone = await callAt(listing, 'POST', `${BASE}/v2.7/users`, { json: { type: 'Standard', displayName: 'gone', authentication: { password: { isEnabled: false } } } });
    ids['gone'] = gone.body.id;
    expect((await callAt(listing, 'DELETE', `${BASE}/v2.7/users/${gone.body.id}`)).status).toBe(200);
  });

  afterAll(async () => {
    await listing?.app.close();
  });

  const STANDARD = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'];

  it('sort: createdOn (default, oldest first), -createdOn (equal times in creation order)', async () => {
    const created = [...STANDARD, 'app', 'admin'];
    expect(labels(await listAt(''))).toEqual(created);
    expect(labels(await listAt('?sort=createdOn'))).toEqual(created);
    // c3 and c4 were made at the same time: newest first, those two in creation order.
    expect(labels(await listAt('?sort=-createdOn&type=Standard'))).toEqual(['c8', 'c7', 'c6', 'c5', 'c3', 'c4', 'c2', 'c1']);
  });

  it('sort: displayName and -displayName by UTF-16 code units of the lower-cased names, ties in creation order', async () => {
    expect(labels(await listAt('?sort=displayName&type=Standard'))).toEqual(['c4', 'c2', 'c5', 'c1', 'c3', 'c8', 'c7', 'c6']);
    expect(labels(await listAt('?sort=-displayName&type=Standard'))).toEqual(['c6', 'c7', 'c8', 'c3', 'c1', 'c2', 'c5', 'c4']);
    expect(labels(await listAt('?sort=displayName'))).toEqual(['c4', 'admin', 'c2', 'c5', 'app', 'c1', 'c3', 'c8', 'c7', 'c6']);
  });

  it('type and includeDeleted filter; the deleted user shows isDeleted: true', async () => {
    expect(labels(await listAt('?type=BrowserApp'))).toEqual(['app']);
    expect(labels(await listAt('?type=Administrator'))).toEqual(['admin']);
    expect(labels(await listAt('?type=Standard'))).toEqual(STANDARD);
    expect(labels(await listAt('?type=Standard&includeDeleted=true'))).toEqual([...STANDARD, 'gone']);
    const all = await listAt('?includeDeleted=true');
    expect(labels(all)).toEqual([...STANDARD, 'app', 'admin', 'gone']);
    expect(all.body.data.at(-1)).toMatchObject({ id: ids['gone'], displayName: 'gone', isDeleted: true, type: 'Standard' });
    expect(all.body.meta).toEqual({ isTruncated: false });
    // An overview is the five fields (isDeleted only when deleted).
    expect(Object.keys(all.body.data[0]).sort()).toEqual(['displayName', 'etag', 'id', 'isActive', 'type']);
  });

  it('paging: limit, cursor, cursor:prev, meta.isTruncated; the limit and filter of the first request are kept', async () => {
    const first = await listAt('?limit=3&sort=displayName&type=Standard');
    expect(labels(first)).toEqual(['c4', 'c2', 'c5']);
    expect(first.body.meta.isTruncated).toBe(true);
    const cursor1 = first.body.meta.cursor as string;
    expect(typeof cursor1).toBe('string');
    const second = await listAt(`?cursor=${encodeURIComponent(cursor1)}`);
    expect(labels(second)).toEqual(['c1', 'c3', 'c8']);
    expect(second.body.meta.isTruncated).toBe(true);
    const third = await listAt(`?cursor=${encodeURIComponent(second.body.meta.cursor)}`);
    expect(labels(third)).toEqual(['c7', 'c6']);
    expect(third.body.meta.isTruncated).toBe(false);
    // The last page still has a cursor: a page exists before it.
    const cursor3 = third.body.meta.cursor as string;
    const back = await listAt(`?cursor:prev=${encodeURIComponent(cursor3)}`);
    expect(labels(back)).toEqual(['c1', 'c3', 'c8']);
    expect(back.body.meta.isTruncated).toBe(true);
    const start = await listAt(`?cursor:prev=${encodeURIComponent(back.body.meta.cursor)}`);
    expect(labels(start)).toEqual(['c4', 'c2', 'c5']);
    expect(start.body.meta.isTruncated).toBe(false);
    // A limit given again replaces the first one.
    expect(labels(await listAt(`?cursor=${encodeURIComponent(cursor1)}&limit=4`))).toEqual(['c1', 'c3', 'c8', 'c7']);
    // The filter given again must be the cursor's.
    expect(labels(await listAt(`?cursor=${encodeURIComponent(cursor1)}&sort=displayName&type=Standard`))).toEqual(['c1', 'c3', 'c8']);
    expect((await listAt(`?cursor=${encodeURIComponent(cursor1)}&sort=createdOn`)).status).toBe(400);
    // One page holding everything: no cursor.
    const whole = await listAt('?type=Standard&limit=8');
    expect(whole.body.meta).toEqual({ isTruncated: false });
    const exact = await listAt('?type=Standard&limit=4');
    expect(exact.body.meta.isTruncated).toBe(true);
    const rest = await listAt(`?cursor=${encodeURIComponent(exact.body.meta.cursor)}`);
    expect(labels(rest)).toEqual(['c5', 'c6', 'c7', 'c8']);
    expect(rest.body.meta.isTruncated).toBe(false);
  });

  it('400 for bad values of sort, type, includeDeleted, limit and cursors', async () => {
    for (const [query, field] of [
      ['?sort=name', 'sort'],
      ['?sort=CreatedOn', 'sort'],
      ['?sort=%2BdisplayName', 'sort'],
      ['?type=administrator', 'type'],
      ['?type=Root', 'type'],
      ['?includeDeleted=yes', 'includeDeleted'],
      ['?includeDeleted=1', 'includeDeleted'],
      ['?limit=0', 'limit'],
      ['?limit=1001', 'limit'],
      ['?limit=ten', 'limit'],
      ['?limit=-1', 'limit'],
    ]) {
      const answer = await listAt(query!);
      expect(answer.status, query).toBe(400);
      expect(answer.body.detail.startsWith(`${field}: `), `${query}: ${answer.body.detail}`).toBe(true);
    }
    expect((await listAt('?cursor=forged')).status).toBe(400);
    expect((await listAt('?cursor:prev=forged')).status).toBe(400);
    expect((await listAt('?limit=1000')).status).toBe(200);
  });

  it('GET /users needs account-wide users:read: with only users:read:my, 403', async () => {
    const username = unique('mine');
    const password = passwordFor(username);
    const made = await callAt(listing, 'POST', `${BASE}/v2.7/users`, { json: standardBody(username, password, { authorization: { rules: ['users:read:my'] } }) });
    expect(made.status).toBe(200);
    const answer = await listAt('', { auth: basic(username, password) });
    expect(answer.status).toBe(403);
    expect(answer.body.type).toBe('/problems/forbidden');
    expect((await callAt(listing, 'GET', `${BASE}/v2.7/users/${made.body.id}`, { auth: basic(username, password) })).status).toBe(200);
    const reader = unique('reader');
    const readerPassword = passwordFor(reader);
    expect((await callAt(listing, 'POST', `${BASE}/v2.7/users`, { json: standardBody(reader, readerPassword, { authorization: { rules: ['users:read'] } }) })).status).toBe(200);
    expect((await listAt('?limit=1', { auth: basic(reader, readerPassword) })).status).toBe(200);
    expect((await callAt(listing, 'DELETE', `${BASE}/v2.7/users/${made.body.id}`)).status).toBe(200);
  });
});

describe('under /v2.7 only', () => {
  it('/v2.6/users answers 404', async () => {
    const user = await makeUser('Standard');
    expect((await api('GET', '/v2.6/users')).status).toBe(404);
    expect((await api('POST', '/v2.6/users', { json: { type: 'BrowserApp', displayName: 'v2.6' } })).status).toBe(404);
    expect((await api('GET', `/v2.6/users/${user.id}`)).status).toBe(404);
    expect((await api('PATCH', `/v2.6/users/${user.id}`, { patch: [] })).status).toBe(404);
    expect((await api('DELETE', `/v2.6/users/${user.id}`)).status).toBe(404);
    expect((await getUser(user.id)).status).toBe(200);
  });
});

describe('administrators and no escalation', () => {
  /** A Standard user who manages users, with everything on its own jobs. */
  let manager: Made;

  beforeAll(async () => {
    manager = await makeUser('Standard', { authorization: { rules: ['users:read', 'users:write', 'email-validations:*:my'] } });
  });

  it('a Standard user with users:write may not create an administrator (403), but creates a Standard user', async () => {
    const username = unique('would-be-admin');
    expectForbidden(await api('POST', '/v2.7/users', { json: { ...standardBody(username, passwordFor(username)), type: 'Administrator' }, auth: manager.auth }));
    // It was not created: the username is free.
    const made = await api('POST', '/v2.7/users', { json: standardBody(username, passwordFor(username)), auth: manager.auth });
    expect(made.status, made.text).toBe(200);
    expect((await getUser(made.body.id)).body.authorization.rules).toEqual(['email-validations:*:my']);
    // A user without users:write creates nobody.
    const plain = await makeUser('Standard', { authorization: { rules: ['users:read', 'email-validations:*:my'] } });
    const other = unique('by-plain');
    expectForbidden(await api('POST', '/v2.7/users', { json: standardBody(other, passwordFor(other)), auth: plain.auth }));
  });

  it('it may not make a user an administrator, nor change or delete an administrator (403, nothing changed)', async () => {
    const standard = await makeUser('Standard');
    expectForbidden(await patchUser(standard.id, [{ op: 'replace', path: '/type', value: 'Administrator' }], { auth: manager.auth }));
    expect((await getUser(standard.id)).body.type).toBe('Standard');
    const admin = await makeUser('Administrator');
    const before = await getUser(admin.id);
    expectForbidden(await patchUser(admin.id, [{ op: 'replace', path: '/displayName', value: 'Taken over' }], { auth: manager.auth }));
    expectForbidden(await patchUser(admin.id, [{ op: 'replace', path: '/type', value: 'Standard' }], { auth: manager.auth }));
    expectForbidden(await patchUser(admin.id, [{ op: 'replace', path: '/authentication/password/password', value: passwordFor('takeover') }], { auth: manager.auth }));
    expectForbidden(await api('DELETE', `/v2.7/users/${admin.id}`, { auth: manager.auth }));
    // users:delete deletes Standard users, not administrators.
    const deleter = await makeUser('Standard', { authorization: { rules: ['users:read', 'users:delete'] } });
    expectForbidden(await api('DELETE', `/v2.7/users/${admin.id}`, { auth: deleter.auth }));
    const after = await getUser(admin.id);
    expect(after.body).toEqual(before.body);
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
    expect((await api('GET', '/v2.7/users', { auth: admin.auth })).status).toBe(200);
    // It changes and deletes a Standard user.
    expect((await patchUser(standard.id, [{ op: 'replace', path: '/displayName', value: 'Managed' }], { auth: manager.auth })).status).toBe(200);
    expect((await api('DELETE', `/v2.7/users/${standard.id}`, { auth: deleter.auth })).status).toBe(200);
    // users:write does not delete.
    const another = await makeUser('Standard');
    expectForbidden(await api('DELETE', `/v2.7/users/${another.id}`, { auth: manager.auth }));
  });

  it("it may not set the password of a user whose rules go beyond its own (it could sign in as that user)", async () => {
    const wider = await makeUser('Standard', { authorization: { rules: ['email-validations', 'users'] } });
    const newPassword = passwordFor('takeover');
    expectForbidden(await patchUser(wider.id, [{ op: 'replace', path: '/authentication/password/password', value: newPassword }], { auth: manager.auth }));
    expect((await api('GET', '/v2.7/email-validations', { auth: basic(wider.username, newPassword) })).status).toBe(401);
    expect((await api('GET', '/v2.7/email-validations', { auth: wider.auth })).status).toBe(200);
    // Its other settings are the caller's to change; and a user within the caller's rules gets a new password.
    expect((await patchUser(wider.id, [{ op: 'replace', path: '/displayName', value: 'Renamed' }], { auth: manager.auth })).status).toBe(200);
    const within = await makeUser('Standard');
    expect((await patchUser(within.id, [{ op: 'replace', path: '/authentication/password/password', value: newPassword }], { auth: manager.auth })).status).toBe(200);
    expect((await api('GET', '/v2.7/email-validations', { auth: basic(within.username, newPassword) })).status).toBe(200);
  });

  it('it may grant only what its own rules grant (403 beyond), on creation and on a patch', async () => {
    for (const rules of [['email-validations:read'], ['email-validations'], ['users:delete'], ['*'], ['credits:read-balance'], ['users:read:my', 'email-validations:*']]) {
      const username = unique('escalated');
      expectForbidden(await api('POST', '/v2.7/users', { json: standardBody(username, passwordFor(username), { authorization: { rules } }), auth: manager.auth }));
      expect((await api('GET', '/v2.7/email-validations', { auth: basic(username, 'x') })).status).toBe(401);
    }
    for (const rules of [['email-validations:read:my'], ['email-validations:*:my', 'users:read'], ['users:write:my', 'email-validations:write:own']]) {
      const username = unique('granted');
      const made = await api('POST', '/v2.7/users', { json: standardBody(username, passwordFor(username), { authorization: { rules } }), auth: manager.auth });
      expect(made.status, `${rules}: ${made.text}`).toBe(200);
    }
    const target = await makeUser('Standard');
    for (const rule of ['email-validations:read', 'users:delete', 'credits:read-usage']) {
      expectForbidden(await patchUser(target.id, [{ op: 'add', path: '/authorization/rules/-', value: rule }], { auth: manager.auth }));
    }
    expectForbidden(await patchUser(target.id, [{ op: 'replace', path: '/authorization/rules', value: ['*:*'] }], { auth: manager.auth }));
    expect((await getUser(target.id)).body.authorization.rules).toEqual(['email-validations:*:my']);
    expect((await patchUser(target.id, [{ op: 'add', path: '/authorization/rules/-', value: 'users:read' }], { auth: manager.auth })).status).toBe(200);
    expect((await getUser(target.id)).body.authorization.rules).toEqual(['email-validations:*:my', 'users:read']);
  });

  it('the default rules of a user it creates count as given by it', async () => {
    const narrow = await makeUser('Standard', { authorization: { rules: ['users:write', 'users:read', 'email-validations:read:my'] } });
    const username = unique('defaulted');
    expectForbidden(await api('POST', '/v2.7/users', { json: standardBody(username, passwordFor(username)), auth: narrow.auth }));
    // Given explicitly within its own rules, the same user is fine.
    const made = await api('POST', '/v2.7/users', { json: standardBody(username, passwordFor(username), { authorization: { rules: ['email-validations:read:my'] } }), auth: narrow.auth });
    expect(made.status, made.text).toBe(200);
    // A BrowserApp's fixed rules count too: write:my is beyond this caller.
    expectForbidden(await api('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'App' }, auth: narrow.auth }));
    expect((await api('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'App' }, auth: manager.auth })).status).toBe(200);
  });

  it('a denial is never an escalation; removing one is, when it opens what the caller lacks; rules it does not add are not its to check', async () => {
    const username = unique('denied');
    const made = await api('POST', '/v2.7/users', {
      json: standardBody(username, passwordFor(username), { authorization: { rules: ['email-validations:*:my', '-email-validations:delete:my', '-users', '-credits:read-balance'] } }),
      auth: manager.auth,
    });
    expect(made.status, made.text).toBe(200);
    expect((await patchUser(made.body.id, [{ op: 'add', path: '/authorization/rules/-', value: '-*' }], { auth: manager.auth })).status).toBe(200);

    // Root gives account-wide read with a denial of it; the manager may not lift the denial, but may rename the user.
    const wide = await makeUser('Standard', { authorization: { rules: ['email-validations:read', '-email-validations:read'] } });
    expect((await patchUser(wide.id, [{ op: 'replace', path: '/displayName', value: 'Renamed by manager' }], { auth: manager.auth })).status).toBe(200);
    expectForbidden(await patchUser(wide.id, [{ op: 'remove', path: '/authorization/rules/1' }], { auth: manager.auth }));
    expect((await getUser(wide.id)).body.authorization.rules).toEqual(['email-validations:read', '-email-validations:read']);
    expect((await patchUser(wide.id, [{ op: 'remove', path: '/authorization/rules/1' }])).status).toBe(200);
  });

  it('an Administrator and root may do all of it', async () => {
    const admin = await makeUser('Administrator', { authorization: { rules: [] } });
    for (const auth of [admin.auth, ROOT_BASIC]) {
      const other = await makeUser('Administrator', {}, auth);
      expect((await patchUser(other.id, [{ op: 'replace', path: '/displayName', value: 'Changed by an administrator' }], { auth })).status).toBe(200);
      const standard = await makeUser('Standard', { authorization: { rules: ['*', 'email-validations:read', 'credits:read-usage'] } }, auth);
      expect((await patchUser(standard.id, [{ op: 'replace', path: '/type', value: 'Administrator' }], { auth })).status).toBe(200);
      expect((await patchUser(standard.id, [{ op: 'replace', path: '/authorization/rules', value: ['users', 'credits'] }], { auth })).status).toBe(200);
      expect((await api('DELETE', `/v2.7/users/${other.id}`, { auth })).status).toBe(200);
      expect((await api('DELETE', `/v2.7/users/${standard.id}`, { auth })).status).toBe(200);
    }
    // An administrator changes itself too.
    expect((await patchUser(admin.id, [{ op: 'replace', path: '/displayName', value: 'Self' }], { auth: admin.auth })).status).toBe(200);
  });

  it('a user patching itself with users:write:my cannot escalate its type or rules', async () => {
    const self = await makeUser('Standard', { authorization: { rules: ['users:read:my', 'users:write:my', 'email-validations:*:my'] } });
    const own = (operations: unknown) => patchUser(self.id, operations, { auth: self.auth });
    expectForbidden(await own([{ op: 'replace', path: '/type', value: 'Administrator' }]));
    expectForbidden(await own([{ op: 'add', path: '/authorization/rules/-', value: 'users:write' }]));
    expectForbidden(await own([{ op: 'add', path: '/authorization/rules/-', value: 'email-validations:read' }]));
    expectForbidden(await own([{ op: 'replace', path: '/authorization/rules/0', value: 'users:read' }]));
    const read = await getUser(self.id, { auth: self.auth });
    expect(read.body.type).toBe('Standard');
    expect(read.body.authorization.rules).toEqual(['users:read:my', 'users:write:my', 'email-validations:*:my']);
    expect((await api('GET', '/v2.7/users', { auth: self.auth })).status).toBe(403);
    // What its rules allow, it may.
    expect((await own([{ op: 'replace', path: '/displayName', value: 'Myself' }])).status).toBe(200);
    expect((await own([{ op: 'add', path: '/authorization/rules/-', value: '-email-validations:delete:my' }])).status).toBe(200);
    // Someone else does not exist for it; and without users:write:my it changes nothing of its own.
    const other = await makeUser('Standard');
    expect((await patchUser(other.id, [{ op: 'replace', path: '/displayName', value: 'x' }], { auth: self.auth })).status).toBe(404);
    const readOnly = await makeUser('Standard', { authorization: { rules: ['users:read:my'] } });
    expectForbidden(await patchUser(readOnly.id, [{ op: 'replace', path: '/displayName', value: 'x' }], { auth: readOnly.auth }));
  });
});

describe('secrets in answers', () => {
  it('TOTP: the enrolment answers the secret; nothing else does', async () => {
    const user = await makeUser('Standard');
    const enrolment = await api('POST', `/v2.7/users/${user.id}/authentication/totp`);
    expect(enrolment.status).toBe(200);
    totpSecrets.add(enrolment.body.secret);
    const code = new TOTP({ secret: enrolment.body.secret }).generate();
    expect((await api('POST', `/v2.7/users/${user.id}/authentication/totp/confirmations`, { json: { passCode: code } })).status).toBe(200);
    expect((await patchUser(user.id, [{ op: 'replace', path: '/authentication/password/isMfaRequired', value: true }])).status).toBe(200);
    const read = await getUser(user.id);
    expect(read.body.authentication.password).toEqual({ isEnabled: true, isMfaRequired: true, username: user.username });
    expect((await api('GET', '/v2.7/users?limit=1000&includeDeleted=true')).status).toBe(200);
    // A pending enrolment beside the enrolled one.
    const pending = await api('POST', `/v2.7/users/${user.id}/authentication/totp`);
    totpSecrets.add(pending.body.secret);
    expect((await getUser(user.id)).status).toBe(200);
  });

  it('no answer of this file contained a password, a password hash, a TOTP secret or a captcha secret key', () => {
    expect(answers.length).toBeGreaterThan(100);
    expect(secrets.size).toBeGreaterThan(20);
    expect(totpSecrets.size).toBe(2);
    for (const answer of answers) {
      const seen = `${answer.text}\n${answer.headers}`;
      expect(seen.includes('$argon2'), answer.what).toBe(false);
      for (const secret of secrets) expect(seen.includes(secret), `${answer.what} shows ${secret}`).toBe(false);
      if (!answer.totpAnswer) for (const secret of totpSecrets) expect(seen.includes(secret), `${answer.what} shows a TOTP secret`).toBe(false);
    }
  });
});
