// TLS client certificates through a real HTTPS server, node:https and the official client: with a client CA the server
// asks for a certificate without requiring one, and verifiedClientName tells the CN of one that verified against that
// CA only. The certificates are made by the lab's CAs (test/lab/tls-ca.ts) with the openssl command line.
import { once } from 'node:events';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../packages/server/src/server/app.js';
import { verifiedClientName } from '../../packages/server/src/server/client-certificate.js';
import { makeTlsLab, type CertifiedKey, type TlsLab } from '../lab/tls-ca.js';

const USER = 'root';
const PASSWORD = 'a client certificate test password';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
/** A route of the tests only: what the request's certificate says. */
const NAME_ROUTE = '/test/client-name';
const SDK_BASE = '/sdk';

let lab: TlsLab;
let dir: string;
let withClientCa: { app: FastifyInstance; origin: string };
let withoutClientCa: { app: FastifyInstance; origin: string };

/** A server on loopback, with the test route; `clientCa` as createServer takes it. */
async function start(name: string, clientCa: string | Buffer | undefined): Promise<{ app: FastifyInstance; origin: string }> {
  const app = await createServer({
    dataDir: join(dir, name),
    rootUsername: USER,
    rootPassword: PASSWORD,
    verifier: { checks: 'syntax' },
    https: { cert: lab.server.cert.pem, key: lab.server.key.pem, ...(clientCa !== undefined && { clientCa }) },
  });
  app.get(NAME_ROUTE, async (request: FastifyRequest) => {
    const socket = request.raw.socket as TLSSocket;
    // `presented`: the client sent a certificate, which it does only when the server asks for one.
    const presented = typeof socket.getPeerCertificate === 'function' && Object.keys(socket.getPeerCertificate()).length > 0;
    return { name: verifiedClientName(request) ?? null, authorized: socket.authorized, authorizationError: String(socket.authorizationError ?? ''), presented };
  });
  // Where the official client, given `${origin}/sdk` as its base, asks for the balance: what its certificate says.
  app.get(`${SDK_BASE}/v2.6/credits/balance`, async (request: FastifyRequest) => ({ name: verifiedClientName(request) ?? null }));
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, origin };
}

beforeAll(async () => {
  lab = makeTlsLab();
  dir = mkdtempSync(join(tmpdir(), 'mailverify-client-certificate-'));
  // Two CAs in the file, the client CA second: every one of them is trusted.
  withClientCa = await start('with', Buffer.from(`${lab.serverCa.cert.pem}${lab.clientCa.cert.pem}`));
  withoutClientCa = await start('without', undefined);
});

afterAll(async () => {
  await withClientCa?.app.close();
  await withoutClientCa?.app.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  lab?.close();
});

interface Answer {
  status: number;
  body: any;
  reused: boolean;
}

/** A GET over its own TLS connection (or `agent`'s), trusting the lab's server CA, with `client`'s certificate when given. */
function get(origin: string, path: string, options: { client?: CertifiedKey; headers?: Record<string, string>; agent?: Agent } = {}): Promise<Answer> {
  const { client, headers = {}, agent } = options;
  const tls: RequestOptions = agent ?? { ca: lab.serverCa.cert.pem, ...(client !== undefined && { cert: client.cert.pem, key: client.key.pem }) };
  return new Promise((resolve, reject) => {
    const sent = httpsRequest(`${origin}${path}`, { ...(agent === undefined ? { ...tls, agent: false } : { agent }), headers }, (response) => {
      const reused = (response.socket as TLSSocket).isSessionReused();
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: text === '' ? undefined : JSON.parse(text), reused }));
      response.on('error', reject);
    });
    sent.on('error', reject);
    sent.end();
  });
}

const nameOf = (client?: CertifiedKey) => get(withClientCa.origin, NAME_ROUTE, { ...(client !== undefined && { client }) });

describe('HTTPS with a client CA: a certificate is asked for, not required', () => {
  it('a client without a certificate is answered: the probes, a 401 without credentials, 200 with them', async () => {
    expect(withClientCa.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await get(withClientCa.origin, '/health')).body).toEqual({ status: 'ok' });
    expect((await get(withClientCa.origin, '/ready')).status).toBe(200);
    expect((await get(withClientCa.origin, '/v2.7/email-validations')).status).toBe(401);
    expect((await get(withClientCa.origin, '/v2.7/email-validations', { headers: { authorization: BASIC } })).status).toBe(200);
  });

  it('a client whose certificate does not verify is answered too, not cut off in the handshake', async () => {
    const foreign = lab.clientCertificate('alice', { signer: 'other' });
    expect((await get(withClientCa.origin, '/health', { client: foreign })).status).toBe(200);
    expect((await get(withClientCa.origin, '/v2.7/email-validations', { client: foreign, headers: { authorization: BASIC } })).status).toBe(200);
  });

  it('a verified certificate whose CN is no user signs nobody in: 401', async () => {
    const answer = await get(withClientCa.origin, '/v2.7/email-validations', { client: lab.clientCertificate('nobody-by-this-name') });
    expect(answer.status).toBe(401);
  });
});

describe('verifiedClientName', () => {
  it('the subject CN of a certificate the client CA signed, as written', async () => {
    expect((await nameOf(lab.clientCertificate('alice'))).body).toEqual({ name: 'alice', authorized: true, authorizationError: '', presented: true });
    expect((await nameOf(lab.clientCertificate('Alice.Smith'))).body.name).toBe('Alice.Smith');
    // Characters of a distinguished name's syntax are part of the name, not structure.
    expect((await nameOf(lab.clientCertificate('bob, CN=root'))).body.name).toBe('bob, CN=root');
    expect((await nameOf(lab.clientCertificate('zoë'))).body.name).toBe('zoë');
  });

  it('undefined without a certificate', async () => {
    expect((await nameOf()).body).toMatchObject({ name: null, authorized: false, presented: false });
  });

  it('undefined for a certificate of another CA, with the same CN', async () => {
    expect((await nameOf(lab.clientCertificate('alice', { signer: 'other' }))).body).toEqual({ name: null, authorized: false, authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', presented: true });
  });

  it('undefined for an expired certificate of the client CA', async () => {
    expect((await nameOf(lab.clientCertificate('alice', { expired: true }))).body).toEqual({ name: null, authorized: false, authorizationError: 'CERT_HAS_EXPIRED', presented: true });
  });

  it('undefined for a certificate of the client CA that is for servers only', async () => {
    expect((await nameOf(lab.clientCertificate('alice', { usage: 'server' }))).body).toEqual({ name: null, authorized: false, authorizationError: 'INVALID_PURPOSE', presented: true });
  });

  it('undefined for a verified certificate with several CNs or none', async () => {
    expect((await nameOf(lab.clientCertificate(['alice', 'bob']))).body).toEqual({ name: null, authorized: true, authorizationError: '', presented: true });
    expect((await nameOf(lab.clientCertificate(['alice', 'alice']))).body).toEqual({ name: null, authorized: true, authorizationError: '', presented: true });
    expect((await nameOf(lab.clientCertificate(null))).body).toEqual({ name: null, authorized: true, authorizationError: '', presented: true });
  });

  it('the same name over a resumed TLS session', async () => {
    const client = lab.clientCertificate('carol');
    const agent = new Agent({ keepAlive: false, ca: lab.serverCa.cert.pem, cert: client.cert.pem, key: client.key.pem });
    try {
      const first = await get(withClientCa.origin, NAME_ROUTE, { agent });
      const second = await get(withClientCa.origin, NAME_ROUTE, { agent });
      expect([first.reused, second.reused]).toEqual([false, true]);
      expect(second.body).toEqual({ name: 'carol', authorized: true, authorizationError: '', presented: true });
    } finally {
      agent.destroy();
    }
  });

  it('a connection cannot swap its certificate: TLS 1.2 renegotiation is refused', async () => {
    const client = lab.clientCertificate('alice');
    const { port } = new URL(withClientCa.origin);
    const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), ca: lab.serverCa.cert.pem, cert: client.cert.pem, key: client.key.pem, maxVersion: 'TLSv1.2' });
    try {
      await once(socket, 'secureConnect');
      expect(socket.getProtocol()).toBe('TLSv1.2');
      const refusal = new Promise<Error | null>((resolve) => {
        socket.once('error', resolve);
        socket.renegotiate({}, resolve);
      });
      expect(String(await refusal)).toMatch(/no renegotiation/);
    } finally {
      socket.destroy();
    }
  });

  it('undefined on a server without a client CA, which asks for no certificate', async () => {
    const answer = await get(withoutClientCa.origin, NAME_ROUTE, { client: lab.clientCertificate('alice') });
    expect(answer.body).toEqual({ name: null, authorized: false, authorizationError: '', presented: false });
  });

  it('undefined without TLS, and on a socket that fails, without throwing', async () => {
    const injected = await withClientCa.app.inject({ method: 'GET', url: NAME_ROUTE });
    expect(injected.json()).toMatchObject({ name: null });
    const requestOn = (socket: unknown) => ({ raw: { socket } }) as unknown as FastifyRequest;
    expect(verifiedClientName(requestOn(null))).toBeUndefined();
    expect(verifiedClientName(requestOn({ authorized: true }))).toBeUndefined();
    expect(verifiedClientName(requestOn({ authorized: true, getPeerCertificate: () => null }))).toBeUndefined();
    expect(verifiedClientName(requestOn({ authorized: true, getPeerCertificate: () => ({}) }))).toBeUndefined();
    expect(verifiedClientName(requestOn({ authorized: true, getPeerCertificate: () => ({ subject: { CN: '' } }) }))).toBeUndefined();
    expect(
      verifiedClientName(
        requestOn({
          authorized: true,
          getPeerCertificate: () => {
            throw new Error('the socket is closed');
          },
        }),
      ),
    ).toBeUndefined();
    // Not verified, or a later handshake failed: the CN it would have is not told.
    expect(verifiedClientName(requestOn({ authorized: true, authorizationError: 'CERT_HAS_EXPIRED', getPeerCertificate: () => ({ subject: { CN: 'alice' } }) }))).toBeUndefined();
    expect(verifiedClientName(requestOn({ authorized: false, getPeerCertificate: () => ({ subject: { CN: 'alice' } }) }))).toBeUndefined();
    expect(verifiedClientName(requestOn({ authorized: true, getPeerCertificate: () => ({ subject: { CN: 'alice' } }) }))).toBe('alice');
  });
});

describe('the official client (npm verifalia), unmodified', () => {
  it('its ClientCertificateAuthenticator presents the certificate, which verifies', async () => {
    const client = lab.clientCertificate('dave');
    // Its https.Agent trusts Node's CAs only: the server's CA is added to them through NODE_EXTRA_CA_CERTS.
    const script = `
      const { readFileSync } = require('node:fs');
      const { VerifaliaRestClient } = require('verifalia');
      const verifalia = new VerifaliaRestClient({ cert: readFileSync(process.env.CERT), key: readFileSync(process.env.KEY), baseUris: [process.env.BASE] });
      verifalia.credits.getBalance().then((answer) => process.stdout.write(JSON.stringify(answer)), (error) => { process.stderr.write(String(error)); process.exit(1); });
    `;
    // In a child process (the server answers from this one), which NODE_EXTRA_CA_CERTS is read by at its start.
    const run = await promisify(execFile)(process.execPath, ['-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, NODE_EXTRA_CA_CERTS: lab.serverCa.cert.path, CERT: client.cert.path, KEY: client.key.path, BASE: `${withClientCa.origin}${SDK_BASE}` },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ name: 'dave' });
  });
});
