// How the server serves its faces, through a real listening server: the console's files under <base>/console/ with
// their security headers and caching, compressed once, the redirect of <base>/, the console switched off, and the
// widget's scripts for pages of other origins. What the pages do in a browser is test/console and test/widget.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { faceRoutes, facesFolder } from '../../packages/server/src/server/faces.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-faces-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function start(options: Partial<StandaloneOptions> = {}): Promise<{ app: FastifyInstance; origin: string }> {
  const app = await createServer({
    dataDir: join(dir, `data-${cleanups.length}-${Math.random().toString(36).slice(2)}`),
    rootPassword: 'a faces password',
    verifier: { checks: 'syntax' },
    ...options,
  });
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  return { app, origin };
}

describe('the console', () => {
  it('is built into the package: dist/console holds its page and dist/widget its two scripts', () => {
    expect(facesFolder('console')).toMatch(/packages\/server\/dist\/console$/);
    expect(facesFolder('widget')).toMatch(/packages\/server\/dist\/widget$/);
  });

  it('is served at <base>/console/ with a strict Content-Security-Policy, its assets kept for a year, its page asked again', async () => {
    const { origin } = await start({ basePath: '/api' });
    const page = await fetch(`${origin}/api/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp.split('; ')).toContain("default-src 'self'");
    expect(csp).not.toMatch(/unsafe|https?:|\*/);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    // No inline script: every script is a file of the console's own.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /<script[^>]*\bsrc="([^"]+)"/.exec(html)![1]!;
    expect(script).toMatch(/^\.\/assets\/[\w-]+\.js$/);
    const asset = await fetch(new URL(script, `${origin}/api/console/`));
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('answers compressed for a client that accepts it, the same bytes once inflated', async () => {
    const { app } = await start();
    const plain = await app.inject({ url: '/console/', headers: { 'accept-encoding': 'identity' } });
    const gzip = await app.inject({ url: '/console/', headers: { 'accept-encoding': 'gzip' } });
    expect(plain.headers['content-encoding']).toBe('identity');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers['vary']).toMatch(/Accept-Encoding/);
    expect(gunzipSync(gzip.rawPayload).toString('utf8')).toBe(plain.body);
  });

  it('redirects <base>/ and <base>/console to <base>/console/', async () => {
    const { origin } = await start({ basePath: '/api/' });
    for (const path of ['/api', '/api/', '/api/console']) {
      const answer = await fetch(`${origin}${path}`, { redirect: 'manual' });
      expect([302, 308]).toContain(answer.status);
      expect(answer.headers.get('location')).toBe('/api/console/');
    }
    const root = await start();
    expect((await fetch(`${root.origin}/`, { redirect: 'manual' })).headers.get('location')).toBe('/console/');
  });

  it('an unknown file under /console/ is a 404 problem, as is a path that climbs out of the folder', async () => {
    const { origin } = await start();
    for (const path of ['/console/nothing.js', '/console/assets/..%2f..%2fpackage.json', '/console/../package.json']) {
      const answer = await fetch(`${origin}${path}`);
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it('switched off (console: false), its paths and <base>/ are 404 and the widget is still served', async () => {
    const { origin } = await start({ console: false });
    for (const path of ['/', '/console/', '/console']) expect((await fetch(`${origin}${path}`, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`${origin}/widget/v1.js`)).status).toBe(200);
  });

  it('an installation without the built files says so in a 404 problem', async () => {
    const host = Fastify();
    cleanups.push(() => host.close());
    faceRoutes(host, '', { consoleFolder: null, widgetFolder: null });
    const answer = await host.inject({ url: '/console/' });
    expect(answer.statusCode).toBe(404);
    expect(JSON.parse(answer.body).detail).toBe('The console is not built into this installation of mailverify-server.');
  });
});

describe('the widget', () => {
  it('v1.js and v1.mjs are served to pages of any origin, as scripts', async () => {
    const { origin } = await start({ basePath: '/api' });
    for (const file of ['v1.js', 'v1.mjs']) {
      const answer = await fetch(`${origin}/api/widget/${file}`, { headers: { origin: 'https://shop.example.org' } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(answer.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      expect(answer.headers.get('access-control-allow-origin')).toBe('https://shop.example.org');
    }
    expect((await fetch(`${origin}/api/widget/v2.js`)).status).toBe(404);
  });
});
