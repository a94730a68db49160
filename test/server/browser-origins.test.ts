// A BrowserApp's trusted origins in a real browser: headless Chromium (Debian's `chromium`, driven by playwright-core)
// opens a page served by a second loopback server, whose script submits a job to the mailverify server with fetch
// (HTTP Basic with the app's key and an empty password, a JSON body) and polls it. From the trusted origin the job is
// verified; the same page from another origin is refused (the browser's fetch fails: the 403 carries no CORS grant),
// and the server stored nothing for it.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { CHROMIUM, needing } from '../lab/system-programs.js';
import { createServer } from '../../packages/server/src/server/app.js';

const ROOT = 'root';
const ROOT_PASSWORD = 'a browser test root password';
const ROOT_BASIC = `Basic ${Buffer.from(`${ROOT}:${ROOT_PASSWORD}`).toString('base64')}`;

/**
 * The page: `verify(api, key)` submits one address and polls its job until it completes, as a shop's sign-up form
 * would; what it saw comes back as plain data (a failed fetch as its error).
 */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign-up</title></head>
<body>
<script>
async function verify(api, key) {
  const headers = { Authorization: 'Basic ' + btoa(key + ':'), Accept: 'application/json' };
  try {
    const submitted = await fetch(api + '/v2.7/email-validations', {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ entries: [{ inputData: 'new.customer@example.com' }] }),
    });
    const location = submitted.headers.get('Location');
    let body = await submitted.json();
    if (!submitted.ok) return { submitted: submitted.status, body };
    const id = body.overview.id;
    for (let polls = 0; body.overview.status === 'InProgress' && polls < 20; polls++) {
      const polled = await fetch(api + '/v2.7/email-validations/' + id + '?waitTime=5000', { headers });
      body = await polled.json();
    }
    return { submitted: submitted.status, location, status: body.overview.status, entries: body.entries.data.map((e) => e.classification) };
  } catch (error) {
    return { error: error.name + ': ' + error.message };
  }
}
</script>
</body></html>`;

/** Debian's Chromium, or the browser CHROMIUM_PATH names; without one the tests are not defined (a note says so). */
const chromiumProgram = needing(CHROMIUM, 'the browser tests of trusted origins (headless Chromium)');

let dir: string;
let mailverify: FastifyInstance;
let api: string;
const pages: HttpServer[] = [];
let launched: Promise<Browser> | undefined;

/**
 * The browser, launched by the first test that needs it (a failure of beforeAll would leave its tests counted as
 * skipped).
 */
function browser(): Promise<Browser> {
  // As root, for Debian's package: Chromium's sandbox needs user namespaces that a root process in a container lacks.
  launched ??= Promise.resolve().then(() => chromium.launch({ executablePath: chromiumProgram.path!, headless: true, args: ['--no-sandbox'] }));
  return launched;
}

/** A static server on loopback with the page at `/`: its origin. */
async function pageServer(): Promise<string> {
  const server = createHttpServer((request, response) => {
    if (request.url === '/') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    else response.writeHead(404).end();
  });
  pages.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function call(method: string, path: string, json?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: ROOT_BASIC, ...(json !== undefined && { 'content-type': 'application/json' }) },
    ...(json !== undefined && { body: JSON.stringify(json) }),
  });
  return { status: response.status, body: await response.json() };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-browser-'));
  mailverify = await createServer({ dataDir: dir, rootUsername: ROOT, rootPassword: ROOT_PASSWORD, verifier: { checks: 'syntax' } });
  api = await mailverify.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await launched?.then((launchedBrowser) => launchedBrowser.close(), () => undefined);
  for (const server of pages) await new Promise<void>((resolve) => server.close(() => resolve()));
  await mailverify?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** What the page at `origin` saw when its script ran `verify` against the server with `key`. */
async function runPage(origin: string, key: string): Promise<any> {
  const page = await (await browser()).newPage();
  try {
    await page.goto(`${origin}/`);
    return await page.evaluate(([base, appKey]) => (globalThis as unknown as { verify: (a: string, k: string) => Promise<unknown> }).verify(base!, appKey!), [api, key]);
  } finally {
    await page.close();
  }
}

describe('a BrowserApp in headless Chromium', () => {
  chromiumProgram.it('the page of a trusted origin submits and polls a job; the same page from another origin is refused', { timeout: 60_000 }, async () => {
    const trustedOrigin = await pageServer();
    const otherOrigin = await pageServer();
    expect(trustedOrigin).not.toBe(otherOrigin);
    const created = await call('POST', '/v2.7/users', {
      type: 'BrowserApp',
      displayName: 'Sign-up form',
      trustedOrigin: { isEnabled: true, expressions: [trustedOrigin] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const app = created.body.id as string;
    const key = (await call('GET', `/v2.7/users/${app}`)).body.authentication.password.username as string;

    const accepted = await runPage(trustedOrigin, key);
    expect(accepted, JSON.stringify(accepted)).toMatchObject({ status: 'Completed', entries: [expect.any(String)] });
    expect([200, 202]).toContain(accepted.submitted);
    // Location is exposed to the script on a 202; a 200 (completed at once) has none.
    if (accepted.submitted === 202) expect(accepted.location).toMatch(/^\/v2\.7\/email-validations\/[0-9a-f-]{36}$/);

    const refused = await runPage(otherOrigin, key);
    expect(refused, JSON.stringify(refused)).toEqual({ error: expect.stringMatching(/^TypeError: /) });

    // The server refused it (not only the browser hid the answer): the app owns one job, the trusted page's.
    const jobs = await call('GET', `/v2.7/email-validations?owner=${app}`);
    expect(jobs.body.data).toHaveLength(1);
  });

  chromiumProgram.it('with trusted origins disabled, the page of any origin gets its answer', { timeout: 60_000 }, async () => {
    const anyOrigin = await pageServer();
    const created = await call('POST', '/v2.7/users', { type: 'BrowserApp', displayName: 'Open form' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const key = (await call('GET', `/v2.7/users/${created.body.id}`)).body.authentication.password.username as string;
    expect(await runPage(anyOrigin, key)).toMatchObject({ status: 'Completed', entries: [expect.any(String)] });
  });
});
