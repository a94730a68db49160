// The official client (npm `verifalia` 5.0.0, unmodified) signs in as users of the account and runs a job each time
// (submit with a wait, read, delete): with a Standard user's HTTP Basic credentials, with its BearerAuthenticator
// (tokens, and the TOTP step with a provider that computes the code, retried by the client on 403), with a BrowserApp
// key, and with its ClientCertificateAuthenticator over TLS (in a child process that trusts the lab's server CA).
// The server is the one under test (test/server/target.ts): embedded, or a cluster.
import { execFile } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TOTP } from 'otpauth';
import { AuthenticationError, AuthorizationError, BearerAuthenticator, VerifaliaRestClient, WaitOptions } from 'verifalia';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTlsLab, type TlsLab } from '../lab/tls-ca.js';
import { serverData, startServerUnderTest, type ServerUnderTest } from './target.js';

const ROOT = 'root';
const ROOT_PASSWORD = 'an official client test root password';
const ROOT_BASIC = `Basic ${Buffer.from(`${ROOT}:${ROOT_PASSWORD}`).toString('base64')}`;

const data = serverData('accounts-client');
let server: ServerUnderTest;
let origin: string;

beforeAll(async () => {
  server = await startServerUnderTest(data.fresh(), { rootUsername: ROOT, rootPassword: ROOT_PASSWORD, verifier: { checks: 'syntax' } });
  origin = server.origin;
});

afterAll(async () => {
  await server?.close();
});

/** A request as root to the server at `base`; the answer's status and JSON body. */
async function asRoot(base: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: ROOT_BASIC, ...(json !== undefined && { 'content-type': 'application/json' }) },
    ...(json !== undefined && { body: JSON.stringify(json) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

interface NewUser {
  readonly id: string;
  readonly username: string;
  readonly password: string;
}

/** Creates a user as root: Standard with a password, or a BrowserApp (its key as username, no password). */
async function createUser(username: string, extra: Record<string, unknown> = {}): Promise<NewUser> {
  const password = `the password of ${username}`;
  const browserApp = extra['type'] === 'BrowserApp';
  const created = await asRoot(origin, 'POST', '/v2.7/users', {
    type: 'Standard',
    displayName: username,
    ...(!browserApp && { authentication: { password: { username, password } } }),
    ...extra,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = created.body.id as string;
  if (!browserApp) return { id, username, password };
  const detail = await asRoot(origin, 'GET', `/v2.7/users/${id}`);
  return { id, username: detail.body.authentication.password.username, password: '' };
}

const ENTRIES = [{ inputData: 'alice@example.com', custom: 'first' }, { inputData: 'not an address', custom: 'second' }];

/** Submits a job with a wait and reads it back; checks its owner and its two entries. The job's id. */
async function submitAndRead(client: VerifaliaRestClient, owner: string): Promise<string> {
  const wait = Object.assign(new WaitOptions(), { pollWaitTime: 5_000 });
  const job = await client.emailValidations.submit({ entries: ENTRIES, verifier: { checks: 'syntax' } } as never, wait);
  expect(job!.overview.status).toBe('Completed');
  expect(job!.overview.owner).toBe(owner);
  expect(job!.entries.map((e) => [e.inputData, e.custom, e.classification])).toEqual([
    ['alice@example.com', 'first', expect.any(String)],
    ['not an address', 'second', 'Undeliverable'],
  ]);
  const again = await client.emailValidations.get(job!.overview.id, wait);
  expect(again!.overview.id).toBe(job!.overview.id);
  expect(again!.entries).toHaveLength(2);
  return job!.overview.id;
}

/** Runs a job as the client signs in, deletes it, and finds it gone. */
async function runJob(client: VerifaliaRestClient, owner: string): Promise<void> {
  const id = await submitAndRead(client, owner);
  await client.emailValidations.delete(id);
  expect(await client.emailValidations.get(id)).toBeNull();
}

/** A client with `authenticator`: its typings require a username, which its constructor ignores when given an authenticator. */
const withAuthenticator = (authenticator: BearerAuthenticator) => new VerifaliaRestClient({ username: '', authenticator, baseUris: [origin] });

describe('the official client signs in as a user', () => {
  it('with a Standard user’s HTTP Basic credentials', async () => {
    const user = await createUser('client-basic');
    await runJob(new VerifaliaRestClient({ username: user.username, password: user.password, baseUris: [origin] }), user.id);
    // A wrong password: the client's AuthenticationError.
    const wrong = new VerifaliaRestClient({ username: user.username, password: 'not the password', baseUris: [origin] });
    await expect(wrong.emailValidations.submit({ entries: ENTRIES } as never)).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('with its BearerAuthenticator (POST /auth/tokens)', async () => {
    const user = await createUser('client-bearer');
    const authenticator = new BearerAuthenticator(user.username, user.password);
    await runJob(withAuthenticator(authenticator), user.id);
  });

  it('with its BearerAuthenticator and a TOTP provider: the TOTP step, asked again after a wrong code (403)', async () => {
    const user = await createUser('client-totp');
    const enrolment = await asRoot(origin, 'POST', `/v2.7/users/${user.id}/authentication/totp`);
    expect(enrolment.status).toBe(200);
    const totp = new TOTP({ secret: enrolment.body.secret as string });
    // Confirmed with the code of the step before now: the current step's code is left for the sign-in.
    const confirmed = await asRoot(origin, 'POST', `/v2.7/users/${user.id}/authentication/totp/confirmations`, { passCode: totp.generate({ timestamp: Date.now() - 30_000 }) });
    expect(confirmed.status).toBe(200);
    // HTTP Basic is refused once a second factor is required; the bearer sign-in goes through the TOTP step.
    const required = await fetch(`${origin}/v2.7/users/${user.id}`, {
      method: 'PATCH',
      headers: { authorization: ROOT_BASIC, 'content-type': 'application/json-patch+json' },
      body: JSON.stringify([{ op: 'replace', path: '/authentication/password/isMfaRequired', value: true }]),
    });
    expect(required.status).toBe(200);
    const basic = new VerifaliaRestClient({ username: user.username, password: user.password, baseUris: [origin] });
    await expect(basic.emailValidations.submit({ entries: ENTRIES } as never)).rejects.toBeInstanceOf(AuthenticationError);

    const asked: string[] = [];
    const provider = {
      provideTotp: async () => {
        const right = totp.generate();
        // The first code given is wrong: the server answers 403 and the client asks the provider again.
        const code = asked.length === 0 ? String((Number(right) + 500_000) % 1_000_000).padStart(6, '0') : right;
        asked.push(code);
        return code;
      },
    };
    const client = withAuthenticator(new BearerAuthenticator(user.username, user.password, provider));
    await runJob(client, user.id);
    // Asked twice at sign-in only: the full token serves every later request.
    expect(asked).toHaveLength(2);
  });

  it('with a BrowserApp key and an empty password: submit and read; deleting is not among its rights (403)', async () => {
    const browserApp = await createUser('client-app', { type: 'BrowserApp' });
    const client = new VerifaliaRestClient({ username: browserApp.username, baseUris: [origin] });
    const id = await submitAndRead(client, browserApp.id);
    await expect(client.emailValidations.delete(id)).rejects.toBeInstanceOf(AuthorizationError);
    expect((await asRoot(origin, 'GET', `/v2.7/email-validations/${id}/overview`)).body.status).toBe('Completed');
    expect((await asRoot(origin, 'DELETE', `/v2.7/email-validations/${id}`)).status).toBe(200);
  });
});

describe('the official client with a client certificate over TLS', () => {
  let lab: TlsLab;
  let tls: ServerUnderTest;
  let tlsOrigin: string;

  beforeAll(async () => {
    lab = makeTlsLab();
    tls = await startServerUnderTest(data.fresh(), {
      rootUsername: ROOT,
      rootPassword: ROOT_PASSWORD,
      verifier: { checks: 'syntax' },
      https: { cert: lab.server.cert.pem, key: lab.server.key.pem, clientCa: lab.clientCa.cert.pem },
    });
    tlsOrigin = tls.origin;
  });

  afterAll(async () => {
    await tls?.close();
    lab?.close();
  });

  /** Runs a job with the official client and `certificate` in a child process; its output, parsed. */
  async function runWithCertificate(certificate: { cert: string; key: string }): Promise<any> {
    // The client's https.Agent trusts Node's CAs only: the lab's server CA is added to them through
    // NODE_EXTRA_CA_CERTS, read by a process at its start, so the client runs in a child (the server answers here).
    const script = `
      const { readFileSync } = require('node:fs');
      const { VerifaliaRestClient, WaitOptions } = require('verifalia');
      (async () => {
        const verifalia = new VerifaliaRestClient({ cert: readFileSync(process.env.CERT), key: readFileSync(process.env.KEY), baseUris: [process.env.BASE] });
        const wait = Object.assign(new WaitOptions(), { pollWaitTime: 5000 });
        const job = await verifalia.emailValidations.submit({ entries: [{ inputData: 'alice@example.com' }] }, wait);
        const again = await verifalia.emailValidations.get(job.overview.id, wait);
        await verifalia.emailValidations.delete(job.overview.id);
        const gone = await verifalia.emailValidations.get(job.overview.id);
        return { status: job.overview.status, owner: job.overview.owner, entries: again.entries.length, gone: gone === null };
      })().then(
        (answer) => process.stdout.write(JSON.stringify(answer)),
        (error) => process.stdout.write(JSON.stringify({ error: error.constructor.name, status: error.response && error.response.status })),
      );
    `;
    const run = await promisify(execFile)(process.execPath, ['-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, NODE_EXTRA_CA_CERTS: lab.serverCa.cert.path, CERT: certificate.cert, KEY: certificate.key, BASE: tlsOrigin },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    return JSON.parse(run.stdout);
  }

  it('signs in as the Standard user its CN names, with certificates enabled, and runs a job', async () => {
    // Users of the TLS server are made through node:https; the official client covers the rest.
    const user = await tlsCall('POST', '/v2.7/users', {
      type: 'Standard',
      displayName: 'Certified',
      authentication: { password: { username: 'certified', password: 'the password of certified' }, certificate: { isEnabled: true } },
    });
    expect(user.status).toBe(200);
    const client = lab.clientCertificate('Certified');
    expect(await runWithCertificate({ cert: client.cert.path, key: client.key.path })).toEqual({ status: 'Completed', owner: user.body.id, entries: 1, gone: true });
    // A certificate of another CA with the same CN: the client's AuthenticationError (401).
    const foreign = lab.clientCertificate('certified', { signer: 'other' });
    expect(await runWithCertificate({ cert: foreign.cert.path, key: foreign.key.path })).toEqual({ error: 'AuthenticationError', status: 401 });
  });

  /** A request as root to the TLS server through node:https, trusting the lab's server CA. */
  async function tlsCall(method: string, path: string, json?: unknown): Promise<{ status: number; body: any }> {
    const body = json === undefined ? undefined : JSON.stringify(json);
    return new Promise((resolve, reject) => {
      const sent = httpsRequest(
        `${tlsOrigin}${path}`,
        { method, agent: false, ca: lab.serverCa.cert.pem, headers: { authorization: ROOT_BASIC, ...(body !== undefined && { 'content-type': 'application/json' }) } },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body: text === '' ? undefined : JSON.parse(text) }));
          response.on('error', reject);
        },
      );
      sent.on('error', reject);
      sent.end(body);
    });
  }
});
