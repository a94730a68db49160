// The server inside a host application: as a plugin of the host's Fastify app, and as a (req, res) handler of a plain
// node:http server (what Express and Koa mount). Both over real listening servers; offline jobs (checks: 'syntax').
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestHandler, mailverify } from '../../src/server/index.js';

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

  it('refuses to start without a root password', async () => {
    await expect(createRequestHandler({ dataDir: join(dir, 'none'), rootUsername: USER, rootPassword: '' })).rejects.toThrow(
      /root password is required/,
    );
  });
});
