// A Standard user with `users` may manage users, but not become a wider one: a real `mailverify serve` process over
// HTTPS with a client CA, attacked the way a takeover through certificates goes (rename itself, give a wider user its
// certificate's CN as username, enable certificates on it, sign in with its certificate), and by every other setting
// that decides who signs in as a user. Each is 403 and changes nothing; the same changes on a user within the caller's
// rules are allowed.
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTlsLab, type CertifiedKey, type TlsLab } from '../lab/tls-ca.js';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { basic } from './http-calls.js';

const ROOT_PASSWORD = 'the takeover test root password';
const ROOT_AUTH = basic('root', ROOT_PASSWORD);
const JSON_PATCH = 'application/json-patch+json';

let lab: TlsLab;
let dir: string;
let server: ServeProcess;

interface Answer {
  readonly status: number;
  readonly etag: string | undefined;
  readonly body: any;
}

/** One request over its own TLS connection, trusting the lab's server CA, with `client`'s certificate when given. */
function call(method: string, path: string, options: { auth?: string; json?: unknown; type?: string; client?: CertifiedKey } = {}): Promise<Answer> {
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  const headers: Record<string, string> = {
    ...(options.auth !== undefined && { authorization: options.auth }),
    ...(body !== undefined && { 'content-type': options.type ?? 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
  };
  const client = options.client === undefined ? {} : { cert: options.client.cert.pem, key: options.client.key.pem };
  return new Promise((resolve, reject) => {
    const sent = httpsRequest(`${server.origin}${path}`, { method, headers, agent: false, ca: lab.serverCa.cert.pem, ...client }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        const etag = response.headers['etag'];
        resolve({ status: response.statusCode!, etag: typeof etag === 'string' ? etag : undefined, body: text === '' ? undefined : JSON.parse(text) });
      });
    });
    sent.once('error', reject);
    sent.end(body);
  });
}

const patch = (id: string, operations: unknown[], auth: string): Promise<Answer> => call('PATCH', `/v2.7/users/${id}`, { auth, json: operations, type: JSON_PATCH });
const replace = (path: string, value: unknown) => ({ op: 'replace', path, value });

let made = 0;
/** A Standard user made by root, with password authentication and `rules`; extra settings merged in. */
async function makeUser(rules: string[], extra: Record<string, unknown> = {}): Promise<{ id: string; username: string; password: string; auth: string }> {
  const username = `takeover-${++made}`;
  const password = `the password of ${username}`;
  const answer = await call('POST', '/v2.7/users', {
    auth: ROOT_AUTH,
    json: { type: 'Standard', displayName: username, authentication: { password: { username, password } }, authorization: { rules }, ...extra },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return { id: answer.body.id as string, username, password, auth: basic(username, password) };
}

const detailOf = async (id: string): Promise<Answer> => call('GET', `/v2.7/users/${id}`, { auth: ROOT_AUTH });

beforeAll(async () => {
  lab = makeTlsLab();
  dir = mkdtempSync(join(tmpdir(), 'mailverify-takeover-'));
  server = await startServe(
    ['--data-dir', dir, '--checks', 'syntax', '--log-level', 'warn', '--tls-cert', lab.server.cert.path, '--tls-key', lab.server.key.path, '--tls-client-ca', lab.clientCa.cert.path],
    { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD },
  );
});

afterAll(async () => {
  if (server !== undefined) expect(await server.stop(), server.stderr()).toBe(0);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  lab?.close();
});

describe('a user manager with narrower rules than the user it changes', () => {
  // The manager reads and changes users and its own jobs; the wider user has every permission there is.
  const MANAGER_RULES = ['users', 'email-validations:*:my'];

  it('cannot take a wider user over through its own certificate: the chain of changes is refused, the certificate signs in nobody', async () => {
    const manager = await makeUser(MANAGER_RULES);
    const wider = await makeUser(['*']);
    const cn = `certificate-of-${manager.username}`;
    const certificate = lab.clientCertificate(cn);
    // Renaming itself is its own business.
    expect((await patch(manager.id, [replace('/displayName', 'Manager')], manager.auth)).status).toBe(200);
    const before = await detailOf(wider.id);
    const renamed = await patch(wider.id, [replace('/authentication/password/username', cn)], manager.auth);
    expect(renamed.status).toBe(403);
    expect(renamed.body.detail).toContain('authentication.password.username');
    const enabled = await patch(wider.id, [replace('/authentication/certificate/isEnabled', true)], manager.auth);
    expect(enabled.status).toBe(403);
    expect(enabled.body.detail).toContain('authentication.certificate.isEnabled');
    // Both in one patch: refused too.
    expect((await patch(wider.id, [replace('/authentication/password/username', cn), replace('/authentication/certificate/isEnabled', true)], manager.auth)).status).toBe(403);
    const after = await detailOf(wider.id);
    expect(after.body).toEqual(before.body);
    expect(after.etag).toBe(before.etag);
    // The certificate signs in nobody; the wider user's own password still does.
    expect((await call('GET', '/v2.7/email-validations?owner=*', { client: certificate })).status).toBe(401);
    expect((await call('GET', '/v2.7/email-validations?owner=*', { auth: wider.auth })).status).toBe(200);
  });

  it('every setting that decides who signs in as the wider user is 403 and changes nothing', async () => {
    const manager = await makeUser(MANAGER_RULES);
    const wider = await makeUser(['email-validations', 'users', 'credits']);
    const inactive = await makeUser(['*'], { isActive: false });
    const attempts: [string, unknown[]][] = [
      [wider.id, [replace('/authentication/password/password', 'a password the manager knows')]],
      [wider.id, [replace('/authentication/password/username', 'manager-chosen')]],
      [wider.id, [replace('/authentication/password/isEnabled', false)]],
      [wider.id, [replace('/authentication/certificate/isEnabled', true)]],
      [wider.id, [replace('/isActive', false)]],
      // Activation: a deactivated wider user stays so.
      [inactive.id, [replace('/isActive', true)]],
    ];
    for (const [id, operations] of attempts) {
      const before = await detailOf(id);
      const answer = await patch(id, operations, manager.auth);
      expect(answer.status, JSON.stringify(operations)).toBe(403);
      const after = await detailOf(id);
      expect(after.body).toEqual(before.body);
      expect(after.etag).toBe(before.etag);
    }
    expect((await call('GET', '/v2.7/email-validations', { auth: basic(inactive.username, inactive.password) })).status).toBe(401);
    expect((await call('GET', '/v2.7/email-validations', { auth: basic(wider.username, 'a password the manager knows') })).status).toBe(401);
    expect((await call('GET', '/v2.7/email-validations', { auth: wider.auth })).status).toBe(200);
  });

  it('a wider user whose password needs its second factor keeps needing it', async () => {
    const manager = await makeUser(MANAGER_RULES);
    const wider = await makeUser(['*']);
    const enrolment = await call('POST', `/v2.7/users/${wider.id}/authentication/totp`, { auth: ROOT_AUTH });
    expect(enrolment.status).toBe(200);
    const passCode = new TOTP({ secret: enrolment.body.secret as string }).generate();
    expect((await call('POST', `/v2.7/users/${wider.id}/authentication/totp/confirmations`, { auth: ROOT_AUTH, json: { passCode } })).status).toBe(200);
    expect((await patch(wider.id, [replace('/authentication/password/isMfaRequired', true)], ROOT_AUTH)).status).toBe(200);
    const answer = await patch(wider.id, [replace('/authentication/password/isMfaRequired', false)], manager.auth);
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toContain('authentication.password.isMfaRequired');
    // Removing the second factor is the user's own business or an administrator's.
    expect((await call('DELETE', `/v2.7/users/${wider.id}/authentication/totp`, { auth: manager.auth })).status).toBe(403);
    expect((await detailOf(wider.id)).body.authentication.password.isMfaRequired).toBe(true);
    expect((await call('GET', '/v2.7/email-validations', { auth: wider.auth })).status).toBe(401);
  });

  it('narrowing the rules in the same patch does not open the door: the rules before the change count too', async () => {
    const manager = await makeUser(MANAGER_RULES);
    const wider = await makeUser(['*']);
    const answer = await patch(wider.id, [replace('/authorization/rules', ['email-validations:*:my']), replace('/authentication/password/password', 'a password the manager knows')], manager.auth);
    expect(answer.status).toBe(403);
    expect((await detailOf(wider.id)).body.authorization.rules).toEqual(['*']);
  });

  it('the settings that do not decide who signs in stay the manager’s to change', async () => {
    const manager = await makeUser(MANAGER_RULES);
    const wider = await makeUser(['*']);
    expect((await patch(wider.id, [replace('/displayName', 'Renamed by the manager')], manager.auth)).status).toBe(200);
    expect((await detailOf(wider.id)).body.displayName).toBe('Renamed by the manager');
  });
});

describe('a user within the manager’s rules', () => {
  it('gets a new username and certificates from the manager, and that certificate signs in as it', async () => {
    const manager = await makeUser(['users', 'email-validations:*:my']);
    const within = await makeUser(['email-validations:read:my']);
    const cn = `certificate-for-${within.username}`;
    expect((await patch(within.id, [replace('/authentication/password/username', cn), replace('/authentication/certificate/isEnabled', true)], manager.auth)).status).toBe(200);
    expect((await call('GET', '/v2.7/email-validations', { client: lab.clientCertificate(cn) })).status).toBe(200);
    // It is signed in as that user: its rules, not the manager's.
    expect((await call('GET', '/v2.7/users', { client: lab.clientCertificate(cn) })).status).toBe(403);
    expect((await patch(within.id, [replace('/isActive', false)], manager.auth)).status).toBe(200);
    expect((await call('GET', '/v2.7/email-validations', { client: lab.clientCertificate(cn) })).status).toBe(401);
  });

  it('an administrator changes any of these on a wider user', async () => {
    const administrator = await call('POST', '/v2.7/users', {
      auth: ROOT_AUTH,
      json: { type: 'Administrator', displayName: 'admin', authentication: { password: { username: 'takeover-admin', password: 'the takeover admin password' } } },
    });
    expect(administrator.status).toBe(200);
    const wider = await makeUser(['*']);
    const answer = await patch(wider.id, [replace('/authentication/certificate/isEnabled', true)], basic('takeover-admin', 'the takeover admin password'));
    expect(answer.status).toBe(200);
  });
});
