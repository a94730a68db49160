// What operators and browsers meet, through real listening servers: the health and readiness probes (also in the
// plugin and request-handler embeddings), the request id in headers, problem documents and log lines, CORS for
// browser clients, and failed callback deliveries in the log at the default level.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Database from 'libsql';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import { createRequestHandler, createServer, mailverify, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { startReceiver } from '../jobs/callback-receiver.js';
import { ManualClock } from '../jobs/manual-clock.js';

const USER = 'root';
const PASSWORD = 'an operations password';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-operations-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** The log's JSON lines, as written to the logger's stream. */
class CapturedLog extends Writable {
  readonly lines: Array<Record<string, any>> = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') this.lines.push(JSON.parse(line));
    done();
  }
}

async function start(options: Partial<StandaloneOptions> = {}): Promise<{ app: FastifyInstance; origin: string }> {
  const app = await createServer({
    dataDir: join(dir, `data-${cleanups.length}-${Math.random().toString(36).slice(2)}`),
    rootUsername: USER,
    rootPassword: PASSWORD,
    verifier: { checks: 'syntax', allowPrivateAddresses: true },
    ...options,
  });
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  return { app, origin };
}

describe('GET /health and GET /ready', () => {
  it('answer without credentials, under the base path, with nothing but their state', async () => {
    const { origin } = await start({ basePath: '/api' });
    const health = await fetch(`${origin}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${origin}/api/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    expect((await fetch(`${origin}/api/health`, { method: 'HEAD' })).status).toBe(200);
    // Not outside the base path.
    expect((await fetch(`${origin}/health`)).status).toBe(404);
  });

  it('/ready is 503 with a problem document when the store cannot be written (a closed store); /health stays 200', async () => {
    const store = await openSqliteStore(join(dir, 'closed.db'));
    const log = new CapturedLog();
    const { origin } = await start({ store, logger: { level: 'info', stream: log } });
    expect((await fetch(`${origin}/ready`)).status).toBe(200);
    await store.close();
    const ready = await fetch(`${origin}/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await ready.json()) as Record<string, unknown>;
    expect(problem).toEqual({
      type: '/problems/unavailable',
      title: 'Service Unavailable',
      status: 503,
      detail: 'The server cannot take jobs now.',
      requestId: ready.headers.get('x-request-id'),
    });
    // The cause is in the log, not in the answer.
    expect(log.lines.find((line) => line.msg === 'not ready')).toMatchObject({ level: 40, reqId: problem['requestId'], err: { message: 'the job store is closed' } });
    expect((await fetch(`${origin}/health`)).status).toBe(200);
  });

  it('/ready is 503 while another connection holds the database\'s write lock, and 200 once it lets go', async () => {
    const file = join(dir, 'locked.db');
    const store = await openSqliteStore(file, { busyTimeoutMs: 50 });
    cleanups.push(() => store.close());
    const { origin } = await start({ store });
    const other = new Database(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      expect((await fetch(`${origin}/ready`)).status).toBe(503);
      other.exec('ROLLBACK');
      expect((await fetch(`${origin}/ready`)).status).toBe(200);
    } finally {
      other.close();
    }
  });

  it('are served by the plugin in a host Fastify app and by the request handler', async () => {
    const host = Fastify();
    await host.register(mailverify, { prefix: '/verify', dataDir: join(dir, 'plugin'), rootUsername: USER, rootPassword: PASSWORD });
    const hostOrigin = await host.listen({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => host.close());
    expect(await (await fetch(`${hostOrigin}/verify/health`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${hostOrigin}/verify/ready`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get('x-request-id')).not.toBeNull();

    const { handler, close } = await createRequestHandler({ dataDir: join(dir, 'handler'), rootUsername: USER, rootPassword: PASSWORD, basePath: '/api' });
    const server: Server = createHttpServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      await new Promise((resolve) => server.close(resolve));
      await close();
    });
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect(await (await fetch(`${origin}/api/health`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${origin}/api/ready`)).status).toBe(200);
  });
});

describe('request id', () => {
  it('is a new UUID in X-Request-Id, and the client\'s own when it is sane', async () => {
    const { origin } = await start();
    expect((await fetch(`${origin}/health`)).headers.get('x-request-id')).toMatch(UUID);
    const own = await fetch(`${origin}/health`, { headers: { 'x-request-id': 'lb-7f3a:2026.11_26-1' } });
    expect(own.headers.get('x-request-id')).toBe('lb-7f3a:2026.11_26-1');
    for (const insane of ['a'.repeat(129), 'two words', '<script>', 'a/b']) {
      const replaced = await fetch(`${origin}/health`, { headers: { 'x-request-id': insane } });
      expect(replaced.headers.get('x-request-id')).toMatch(UUID);
    }
  });

  it('is in every problem document (requestId) and in the log lines of the request (reqId)', async () => {
    const log = new CapturedLog();
    const { origin } = await start({ logger: { level: 'info', stream: log } });
    const unauthorized = await fetch(`${origin}/v2.7/email-validations`, { headers: { 'x-request-id': 'client-chosen-1' } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('x-request-id')).toBe('client-chosen-1');
    expect(await unauthorized.json()).toMatchObject({ status: 401, requestId: 'client-chosen-1' });
    const missing = await fetch(`${origin}/v2.7/email-validations/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`, { headers: { authorization: BASIC } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { requestId: string }).requestId).toBe(missing.headers.get('x-request-id'));
    const lines = log.lines.filter((line) => line.reqId === 'client-chosen-1');
    expect(lines.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
    expect(lines[1]).toMatchObject({ res: { statusCode: 401 } });
  });
});

describe('CORS', () => {
  it('a preflight allows every method and request header of the interface; answers expose the headers scripts read', async () => {
    const { origin } = await start();
    const preflight = await fetch(`${origin}/v2.7/email-validations/some-id`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'DELETE',
        'access-control-request-headers': 'authorization, content-type, x-request-id',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    const methods = preflight.headers.get('access-control-allow-methods')!.split(',').map((m) => m.trim());
    expect(methods).toEqual(expect.arrayContaining(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS']));
    const allowed = preflight.headers.get('access-control-allow-headers')!.toLowerCase().split(',').map((h) => h.trim());
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'accept', 'if-match', 'x-request-id']));

    // Every method a route answers (the Allow of a 405 lists them) is allowed by the preflight.
    for (const path of ['/v2.7/auth/tokens', '/v2.7/email-validations', '/v2.7/email-validations/x', '/v2.7/email-validations/x/entries', '/v2.7/users/x', '/v1.4/email-validations/x']) {
      const refused = await fetch(`${origin}${path}`, { method: 'PUT', headers: { authorization: BASIC } });
      expect(refused.status).toBe(405);
      for (const method of refused.headers.get('allow')!.split(',').map((m) => m.trim())) expect(methods).toContain(method);
    }

    // The actual request: a job submitted, then exported, as a browser script would.
    const submitted = await fetch(`${origin}/v2.7/email-validations`, {
      method: 'POST',
      headers: { origin: 'https://app.example.com', authorization: BASIC, 'content-type': 'application/json' },
      body: JSON.stringify({ entries: [{ inputData: 'jo@example.org' }] }),
    });
    const exposed = submitted.headers.get('access-control-expose-headers')!.toLowerCase().split(',').map((h) => h.trim());
    expect(exposed).toEqual(expect.arrayContaining(['content-disposition', 'location', 'etag', 'x-request-id', 'retry-after']));
    expect(submitted.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(submitted.headers.get('vary')?.toLowerCase()).toContain('origin');
  });
});

describe('callback delivery failures', () => {
  it('each failed try is a warning in the log at the default level: job, try, next try and reason, the URL without secrets', async () => {
    const clock = new ManualClock();
    const hook = await startReceiver(clock, { script: [{ status: 500 }] });
    cleanups.push(() => hook.close());
    const log = new CapturedLog();
    const { origin } = await start({ clock, logger: { level: 'info', stream: log } });
    const port = new URL(hook.origin).port;
    const url = `http://hook-user:hook-password@127.0.0.1:${port}/done?token=query-secret`;
    const submitted = await fetch(`${origin}/v2.7/email-validations?waitTime=10000`, {
      method: 'POST',
      headers: { authorization: BASIC, 'content-type': 'application/json' },
      body: JSON.stringify({ entries: [{ inputData: 'jo@example.org' }], callback: { url } }),
    });
    const { overview } = (await submitted.json()) as { overview: { id: string } };
    await hook.waitFor(1);
    const deadline = Date.now() + 5000;
    let line: Record<string, any> | undefined;
    while ((line = log.lines.find((l) => l.jobId === overview.id)) === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(line).toMatchObject({
      level: 40,
      jobId: overview.id,
      attempt: 1,
      reason: 'HTTP status 500',
      url: `http://127.0.0.1:${port}/done`,
      nextAttemptOn: new Date(hook.received[0]!.at + 10_000).toISOString(),
    });
    expect(line!.msg).toMatch(/callback of job .* failed \(try 1\): HTTP status 500; next try at /);
    const all = JSON.stringify(log.lines);
    expect(all).not.toContain('hook-password');
    expect(all).not.toContain('query-secret');
  });
});
