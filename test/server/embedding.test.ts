// The server inside a host application: as a plugin of the host's Fastify app, and as a (req, res) handler of a plain
// node:http server (what Express and Koa mount). Both over real listening servers; offline jobs (checks: 'syntax').
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestHandler, mailverify } from '../../packages/server/src/index.js';

const USER = 'admin';
const PASSWORD = 'a long and secret password';
const headers = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' };
const body = JSON.stringify({ entries: [{ inputData: 'jo@example.org' }, { inputData: 'no-at-sign' }] });
const many = JSON.stringify({ entries: Array.from({ length: 40 }, (_, i) => ({ inputData: `user${i}@example.org` })) });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-embed-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('embedding', () => {
  it('registers as a plugin of a host Fastify app, under its prefix, beside the host\'s own routes', async () => {
    const host = Fastify();
    host.get('/health', async () => ({ ok: true }));
    await host.register(mailverify, {
      prefix: '/verify',
      dataDir: join(dir, 'plugin'),
      rootUsername: USER,
      rootPassword: PASSWORD,
      verifier: { checks: 'syntax' },
    });
    const origin = await host.listen({ host: '127.0.0.1', port: 0 });
    try {
      expect(await (await fetch(`${origin}/health`)).json()).toEqual({ ok: true });
      const response = await fetch(`${origin}/verify/v2.7/email-validations?waitTime=5000`, { method: 'POST', headers, body });
      expect(response.status).toBe(200);
      const job = (await response.json()) as { entries: { data: Array<{ status: string }> } };
      expect(job.entries.data.map((e) => e.status)).toEqual(['Success', 'AtSignNotFound']);
      // The host's own 404s stay the host's.
      expect((await fetch(`${origin}/nothing`)).headers.get('content-type')).not.toMatch(/problem/);
    } finally {
      await host.close();
    }
  });

  it('serves a plain node:http server through its (req, res) handler, with a base path', async () => {
    const { handler, close } = await createRequestHandler({
      dataDir: join(dir, 'handler'),
      rootUsername: USER,
      rootPassword: PASSWORD,
      basePath: '/api/',
      verifier: { checks: 'syntax' },
    });
    const server: Server = createHttpServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const response = await fetch(`${origin}/api/v2.6/email-validations?waitTime=5000`, { method: 'POST', headers, body });
      expect(response.status).toBe(200);
      const { overview } = (await response.json()) as { overview: { id: string; status: string } };
      expect(overview.status).toBe('Completed');
      const listed = await fetch(`${origin}/api/v2.6/email-validations`, { headers });
      expect(((await listed.json()) as { data: Array<{ id: string }> }).data.map((o) => o.id)).toContain(overview.id);
      expect((await fetch(`${origin}/v2.6/email-validations`, { headers })).status).toBe(404);
      // Compressed when asked (past the 1 KiB below which compression does not pay).
      const large = await fetch(`${origin}/api/v2.6/email-validations?waitTime=5000`, { method: 'POST', headers, body: many });
      const { overview: big } = (await large.json()) as { overview: { id: string } };
      const gzipped = await fetch(`${origin}/api/v2.6/email-validations/${big.id}`, { headers: { ...headers, 'accept-encoding': 'gzip' } });
      expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await close();
    }
  });

  it('refuses to start without a root password, or with an empty user name: a TypeError naming the option', async () => {
    await expect(createRequestHandler({ dataDir: join(dir, 'none'), rootUsername: USER, rootPassword: '' })).rejects.toThrow(
      new TypeError('mailverify: option rootPassword is required: a non-empty string (there is no default)'),
    );
    await expect(createRequestHandler({ dataDir: join(dir, 'none'), rootUsername: '', rootPassword: PASSWORD })).rejects.toThrow(
      new TypeError('mailverify: option rootUsername must be a non-empty string (default root), got ""'),
    );
  });

  it('names its root account root when no rootUsername is given, as the options table says', async () => {
    const { handler, close } = await createRequestHandler({ dataDir: join(dir, 'default-root'), rootPassword: PASSWORD, verifier: { checks: 'syntax' } });
    const server: Server = createHttpServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const asRoot = { authorization: `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}` };
      expect((await fetch(`${origin}/v2.7/email-validations`, { headers: asRoot })).status).toBe(200);
      // No account of another name was made.
      expect((await fetch(`${origin}/v2.7/email-validations`, { headers })).status).toBe(401);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await close();
    }
  });
});

describe('logging and client addresses', () => {
  it('logs requests as JSON lines without credentials; trusts X-Forwarded-For only from a configured proxy', async () => {
    const { Writable } = await import('node:stream');
    const { createServer } = await import('../../packages/server/src/index.js');
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter((line) => line !== ''));
        done();
      },
    });
    const app = await createServer({
      dataDir: join(dir, 'logged'),
      rootUsername: USER,
      rootPassword: PASSWORD,
      verifier: { checks: 'syntax' },
      logger: { level: 'info', stream, serializers: { req: (req: { headers: unknown; method: string; url: string }) => ({ method: req.method, url: req.url, headers: req.headers }) } },
      trustProxy: '127.0.0.1',
    });
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const forwarded = await fetch(`${origin}/v2.7/email-validations?waitTime=5000`, {
        method: 'POST',
        headers: { ...headers, 'x-forwarded-for': '203.0.113.9' },
        body,
      });
      expect(((await forwarded.json()) as { overview: { clientIP: string } }).overview.clientIP).toBe('203.0.113.9');
      await fetch(`${origin}/v2.7/auth/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: USER, password: PASSWORD }) });
      await fetch(`${origin}/v2.7/email-validations`, { headers: { authorization: 'Basic d3Jvbmc6d3Jvbmc=' } });
    } finally {
      await app.close();
    }
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const text = lines.join('\n');
    expect(text).toContain('[Redacted]');
    for (const secret of [PASSWORD, headers.authorization.slice(6), 'd3Jvbmc6d3Jvbmc=']) expect(text).not.toContain(secret);
  });

  it('takes the address of the connection when no proxy is trusted', async () => {
    const { createServer } = await import('../../packages/server/src/index.js');
    const app = await createServer({ dataDir: join(dir, 'direct'), rootUsername: USER, rootPassword: PASSWORD, verifier: { checks: 'syntax' } });
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const answer = await fetch(`${origin}/v2.7/email-validations`, { method: 'POST', headers: { ...headers, 'x-forwarded-for': '203.0.113.9' }, body });
      expect(((await answer.json()) as { overview: { clientIP: string } }).overview.clientIP).toBe('127.0.0.1');
    } finally {
      await app.close();
    }
  });
});
