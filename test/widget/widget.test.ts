// The sign-up form widget in headless Chromium, against a real `mailverify serve` on the mail lab (SMTP checks on),
// on pages served by a second HTTP server on loopback (another origin): the docs' form with the script tag, a
// deliverable, an undeliverable and a mistyped address (its suggestion taken with the keyboard), submission blocked
// and awaited, fields added later and data-selector, a strict Content-Security-Policy, messages; the CAPTCHA hook
// with the siteverify lab; the ES module's attach and detach; a slow verification in the page's fake time; failing
// open on a refused origin, 429, 402 (a second server that accounts credits) and a stopped server. axe-core checks
// each state of the page.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { codeBlocks, ROOT } from '../docs/code-blocks.js';
import { accessibilityViolations, sharedBrowser, watchPage } from '../lab/browser.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { startSiteverifyLab, type SiteverifyLab } from '../lab/siteverify.js';
import { CHROMIUM, needing } from '../lab/system-programs.js';

// A browser test on a loaded machine takes its time: each has a minute and a half.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const ROOT_PASSWORD = 'a widget test root password';
const ROOT_BASIC = `Basic ${Buffer.from(`root:${ROOT_PASSWORD}`).toString('base64')}`;
const chromium = needing(CHROMIUM, 'the browser tests of the sign-up form widget (headless Chromium)');
const browser = sharedBrowser(() => chromium.path);

/** The examples of docs/widget.md the pages are made of: the form with the script tag, and the module form. */
const DOC_BLOCKS = codeBlocks(readFileSync(join(ROOT, 'docs', 'widget.md'), 'utf8'), 'docs/widget.md');
const FORM = DOC_BLOCKS.find((block) => block.lang === 'html' && block.code.includes('/widget/v1.js'))!.code;
const MODULE = DOC_BLOCKS.find((block) => block.lang === 'js' && block.code.includes('/widget/v1.mjs'))!.code;
/** The server and key the docs' examples name, replaced by the test's. */
const DOC_SERVER = 'https://verify.example.com';
const DOC_KEY = 'YOUR_BROWSERAPP_KEY';

const DELIVERABLE = 'jane@shop-mail.com';
const UNDELIVERABLE = 'nobody@shop-mail.com';
const STRANGER = 'stranger@shop-mail.com';
const SLOW = 'late@slow-mail.com';
const MISTYPED = 'someone@gmal.com';
const CORRECTED = 'someone@gmail.com';

let lab: MailLab;
let siteverify: SiteverifyLab;
let serve: ServeProcess;
let dir: string;
let trusted: PageServer;
let untrusted: PageServer;
/** A second server, which accounts credits and has none to give. */
let credits: ServeProcess;
/** BrowserApp keys: the trusted page's, a CAPTCHA-requiring one, one throttled to one submission a day, the credits server's. */
let keys: { form: string; captcha: string; throttled: string; credits: string };
let formApp: string;

interface PageServer {
  readonly origin: string;
  /** The bodies of the form's submissions (POST /sign-up), in order. */
  readonly submissions: string[];
  close(): Promise<void>;
}

/** A whole page around `body`, with an inline script that records the widget's events in `window.results` (unless `recording` is false). */
function page(body: string, recording = true): string {
  const record = `<script>window.results = []; document.addEventListener('mailverify:result', (event) => window.results.push(event.detail));</script>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign up</title>
${recording ? record : ''}
</head><body><main><h1>Sign up</h1>
${body}
</main></body></html>`;
}

/** The pages of the tests: `/` the docs' form for `key`, `/captcha`, `/module`, `/sign-up` its submissions. */
function pagesFor(key: string, server = serve.origin): Record<string, string> {
  const form = FORM.replaceAll(DOC_SERVER, server).replaceAll(DOC_KEY, key);
  return {
    '/': page(form),
    '/captcha': page(
      `${form.replace(/data-key="[^"]*"/, `data-key="${keys.captcha}" data-captcha="solveCaptcha"`)}
<script>
// The visitor solves the CAPTCHA once the test opens the gate; the page's server hands out a token the lab accepts.
let openGate;
window.gate = new Promise((resolve) => (openGate = resolve));
window.openGate = () => openGate();
window.solveCaptcha = async () => {
  await window.gate;
  return { provider: 'Turnstile', token: await (await fetch('/captcha-token')).text() };
};
</script>`,
    ),
    '/csp': page(form, false),
    '/selector': page(form.replace(' defer>', ' data-selector="#email" defer>')),
    '/messages': page(form.replace(' defer>', ' data-message-undeliverable="We cannot send mail there." defer>')),
    '/module': page(
      `${form.replace(/<script src=[^>]*><\/script>/, '')}
<script type="module">
${MODULE.replaceAll(DOC_SERVER, serve.origin).replaceAll(DOC_KEY, key)}
window.detach = detach;
</script>`,
    ),
  };
}

async function startPageServer(): Promise<PageServer> {
  const submissions: string[] = [];
  const body = (request: IncomingMessage): Promise<string> =>
    new Promise((resolve) => {
      let text = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text));
    });
  const server: HttpServer = createHttpServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://page');
    const path = url.pathname;
    if (request.method === 'POST' && path === '/sign-up') {
      submissions.push(await body(request));
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page('<p>Thank you.</p>'));
      return;
    }
    if (path === '/captcha-token') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end(siteverify.issue('turnstile'));
      return;
    }
    const app = url.searchParams.get('app');
    const html = (app === 'throttled' ? pagesFor(keys.throttled) : app === 'credits' ? pagesFor(keys.credits, credits.origin) : pagesFor(keys.form))[path];
    // The strictest policy that lets the widget work: its script and requests from the server, nothing else at all.
    const policy = path === '/csp' ? { 'content-security-policy': `default-src 'none'; script-src ${serve.origin}; connect-src ${serve.origin}; form-action 'self'` } : {};
    if (html === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...policy }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    submissions,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function root(method: string, path: string, json?: unknown, server = serve.origin): Promise<any> {
  const answer = await fetch(`${server}${path}`, {
    method,
    headers: { authorization: ROOT_BASIC, ...(json !== undefined && { 'content-type': 'application/json' }) },
    ...(json !== undefined && { body: JSON.stringify(json) }),
  });
  const body = await answer.json();
  expect(answer.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** A BrowserApp with these settings: its id and key. */
async function browserApp(settings: Record<string, unknown>, server = serve.origin): Promise<{ id: string; key: string }> {
  const { id } = await root('POST', '/v2.7/users', { type: 'BrowserApp', displayName: 'Sign-up form', ...settings }, server);
  return { id, key: (await root('GET', `/v2.7/users/${id}`, undefined, server)).authentication.password.username };
}

beforeAll(async () => {
  if (chromium.path === null) return;
  lab = await startMailLab({
    servers: { shop: { mailboxes: ['jane', 'ann', 'bob'] }, gmail: { mailboxes: ['someone'] }, slow: { mailboxes: ['late'], delayMs: { greeting: 60_000 } } },
    domains: { 'shop-mail.com': ['shop'], 'gmail.com': ['gmail'], 'slow-mail.com': ['slow'] },
  });
  siteverify = await startSiteverifyLab();
  dir = mkdtempSync(join(tmpdir(), 'mailverify-widget-'));
  // prettier-ignore
  serve = await startServe(
    ['--data-dir', join(dir, 'data'), '--log-level', 'silent', '--dns-server', lab.dnsAddress, '--dns-timeout', '1000', '--smtp-port', String(lab.port),
      '--allow-private-addresses', '--helo-name', 'probe.mailverify-lab.com', '--mail-from', 'bounce@mailverify-lab.com',
      '--turnstile-siteverify-url', siteverify.urls.turnstile],
    { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD },
  );
  trusted = await startPageServer();
  untrusted = await startPageServer();
  const origins = { trustedOrigin: { isEnabled: true, expressions: [trusted.origin] } };
  const form = await browserApp(origins);
  formApp = form.id;
  const captcha = await browserApp({ ...origins, captcha: { isEnabled: true, providers: { turnstile: { secretKey: 'turnstile-secret' } } } });
  const throttled = await browserApp({ ...origins, throttling: { rules: [{ limit: 1, period: 'Day', scope: 'Global' }] } });
  credits = await startServe(['--data-dir', join(dir, 'credits'), '--log-level', 'silent', '--checks', 'syntax', '--credits'], { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD });
  const noCredit = await browserApp({}, credits.origin);
  keys = { form: form.key, captcha: captcha.key, throttled: throttled.key, credits: noCredit.key };
}, 60_000);

afterAll(async () => {
  await browser.close();
  await trusted?.close();
  await untrusted?.close();
  await serve?.stop();
  await credits?.stop();
  await siteverify?.close();
  await lab?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** A new page at `url`, watched for page errors. */
async function open(url: string, setup?: (page: Page) => Promise<void>): Promise<{ page: Page; errors: string[] }> {
  const page = await (await browser.get()).newPage();
  const { errors } = watchPage(page, new URL(url).origin);
  await setup?.(page);
  await page.goto(url);
  return { page, errors };
}

const EMAIL = '#email';

/** Types `address` into the field and leaves it (Tab), then waits for the outcome to be shown. */
async function enter(page: Page, address: string): Promise<void> {
  await page.locator(EMAIL).fill(address);
  await page.locator(EMAIL).blur();
  await page.waitForSelector(`${EMAIL}:not([data-mailverify-state="checking"])`);
}

async function expectAccessible(page: Page, state: string): Promise<void> {
  expect(await accessibilityViolations(page), state).toEqual([]);
}

/** What the field shows, at one instant: its attributes and its status element's text. */
function shown(page: Page): Promise<Record<string, string | null>> {
  return page.evaluate(`(() => {
    const input = document.querySelector('${EMAIL}');
    return {
      state: input.getAttribute('data-mailverify-state'),
      classification: input.getAttribute('data-mailverify-classification'),
      status: input.getAttribute('data-mailverify-status'),
      invalid: input.getAttribute('aria-invalid'),
      message: document.querySelector('.mailverify-status')?.textContent.trim() ?? null,
    };
  })()`);
}

const results = (page: Page): Promise<Array<Record<string, unknown>>> => page.evaluate('window.results');

/** The addresses of the owner's completed jobs, as the server stored them. */
async function addressesOf(app: string): Promise<string[]> {
  const jobs = await root('GET', `/v2.7/email-validations?owner=${app}&limit=1000`);
  // The slow mail server's jobs are still running: they have no entry to read yet.
  const completed = jobs.data.filter((job: { status: string }) => job.status === 'Completed');
  const entries = await Promise.all(completed.map((job: { id: string }) => root('GET', `/v2.7/email-validations/${job.id}/entries`)));
  return entries.map((page) => page.data[0].inputData);
}

describe('the widget from its script tag, on a page of a trusted origin', () => {
  chromium.it('a deliverable address: attributes, message, the event with the entry, the status element described by', { timeout: 60_000 }, async () => {
    const { page, errors } = await open(`${trusted.origin}/`);
    await expectAccessible(page, 'before any address');
    const status = page.locator('.mailverify-status');
    expect(await status.getAttribute('role')).toBe('status');
    expect(await page.locator(EMAIL).getAttribute('aria-describedby')).toBe(await status.getAttribute('id'));
    // Right after the field.
    expect(await page.locator(`${EMAIL} + .mailverify-status`).count()).toBe(1);

    await enter(page, DELIVERABLE);
    expect(await shown(page)).toEqual({ state: 'done', classification: 'Deliverable', status: 'Success', invalid: null, message: 'This address can receive email.' });
    const events = await results(page);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ index: 0, inputData: DELIVERABLE, emailAddress: DELIVERABLE, classification: 'Deliverable', status: 'Success' });
    await expectAccessible(page, 'deliverable');

    // The same address again (leaving the field, typing it anew) is not verified again.
    await page.locator(EMAIL).focus();
    await page.locator(EMAIL).blur();
    await page.locator(EMAIL).fill('');
    await enter(page, DELIVERABLE);
    expect((await results(page)).length).toBe(2);
    expect((await addressesOf(formApp)).filter((address) => address === DELIVERABLE)).toHaveLength(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  chromium.it('an undeliverable address: aria-invalid and the submission blocked (data-block); a deliverable one is submitted', { timeout: 60_000 }, async () => {
    const { page, errors } = await open(`${trusted.origin}/`);
    await enter(page, UNDELIVERABLE);
    expect(await shown(page)).toEqual({ state: 'done', classification: 'Undeliverable', status: 'MailboxDoesNotExist', invalid: 'true', message: 'This mailbox does not exist.' });
    await expectAccessible(page, 'undeliverable');
    await page.getByRole('button', { name: 'Sign up' }).click();
    // Still on the form, the field focused again; the server saw no submission.
    expect(await page.evaluate('document.activeElement.id')).toBe('email');
    expect(new URL(page.url()).pathname).toBe('/');

    // Typing removes the stale result at once; a submission while the new address is being verified waits for it.
    await page.locator(EMAIL).fill('ann@shop-mail.com');
    expect(await shown(page)).toMatchObject({ state: null, invalid: null, message: '' });
    await Promise.all([page.waitForURL('**/sign-up'), page.locator(EMAIL).press('Enter')]);
    expect(trusted.submissions).toEqual([`email=${encodeURIComponent('ann@shop-mail.com')}`]);
    expect(errors).toEqual([]);
    await page.close();
  });

  chromium.it('a mistyped address: the suggestion button, reached with Tab and pressed with Enter, corrects the field, which is verified again', { timeout: 60_000 }, async () => {
    const { page, errors } = await open(`${trusted.origin}/`);
    await page.locator(EMAIL).focus();
    await page.keyboard.type(MISTYPED);
    // 600 ms after typing stops, without leaving the field.
    await page.waitForSelector(`${EMAIL}[data-mailverify-state="done"]`);
    expect(await shown(page)).toMatchObject({ classification: 'Undeliverable', status: 'DomainDoesNotExist', invalid: 'true' });
    const suggestion = page.getByRole('button', { name: `Did you mean ${CORRECTED}?` });
    expect(await suggestion.getAttribute('class')).toBe('mailverify-suggestion');
    expect((await results(page))[0]).toMatchObject({ inputData: MISTYPED, suggestions: [CORRECTED] });
    await expectAccessible(page, 'a suggestion');

    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.className')).toBe('mailverify-suggestion');
    await page.keyboard.press('Enter');
    expect(await page.locator(EMAIL).inputValue()).toBe(CORRECTED);
    expect(await page.evaluate('document.activeElement.id')).toBe('email');
    await page.waitForSelector(`${EMAIL}[data-mailverify-classification="Deliverable"]`);
    expect(await shown(page)).toEqual({ state: 'done', classification: 'Deliverable', status: 'Success', invalid: null, message: 'This address can receive email.' });
    expect((await results(page)).map((entry) => entry['inputData'])).toEqual([MISTYPED, CORRECTED]);
    expect(await suggestion.count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  chromium.it('a result that comes after the address changed is not shown', { timeout: 60_000 }, async () => {
    const { page } = await open(`${trusted.origin}/`);
    await page.locator(EMAIL).fill('bob@shop-mail.com');
    await page.locator(EMAIL).blur();
    // Changed while its verification runs: the field never shows it, and its event is not sent.
    await enter(page, UNDELIVERABLE);
    expect(await shown(page)).toMatchObject({ classification: 'Undeliverable', status: 'MailboxDoesNotExist' });
    expect((await results(page)).map((entry) => entry['inputData'])).toEqual([UNDELIVERABLE]);
    await page.close();
  });
});

describe('the script tag', () => {
  chromium.it('attaches to email inputs added later, or to those data-selector matches only', { timeout: 60_000 }, async () => {
    const addField = `document.querySelector('form').insertAdjacentHTML('afterbegin', '<label for="work">Work email</label><input id="work" type="email">')`;
    const { page } = await open(`${trusted.origin}/`);
    await page.waitForSelector('#email + .mailverify-status', { state: 'attached' });
    await page.evaluate(addField);
    await page.waitForSelector('#work + .mailverify-status', { state: 'attached' });
    await page.locator('#work').fill(DELIVERABLE);
    await page.locator('#work').blur();
    await page.waitForSelector('#work[data-mailverify-state="done"]');
    expect(await page.locator('#work').getAttribute('data-mailverify-classification')).toBe('Deliverable');
    await page.close();

    const { page: selecting } = await open(`${trusted.origin}/selector`);
    await selecting.waitForSelector('#email + .mailverify-status', { state: 'attached' });
    await selecting.evaluate(addField);
    // The next evaluation runs after the mutation observer's callback.
    expect(await selecting.evaluate(`document.querySelectorAll('.mailverify-status').length`)).toBe(1);
    await selecting.close();
  });

  chromium.it("works under a page's strict Content-Security-Policy: no inline style or script of its own", { timeout: 60_000 }, async () => {
    const browserPage = await (await browser.get()).newPage();
    const watched = watchPage(browserPage, trusted.origin);
    await browserPage.goto(`${trusted.origin}/csp`);
    await enter(browserPage, DELIVERABLE);
    expect(await shown(browserPage)).toMatchObject({ state: 'done', classification: 'Deliverable', message: 'This address can receive email.' });
    expect(watched.refused).toEqual([]);
    expect(watched.errors).toEqual([]);
    // What went to another origin: the widget's script and its verification, to the server only.
    expect(watched.otherOrigins.every((url) => url.startsWith(`${serve.origin}/`))).toBe(true);
    await browserPage.close();
  });
});

describe('the messages', () => {
  chromium.it("data-message-* of the script tag replace the default texts, a classification's text the status's default", { timeout: 60_000 }, async () => {
    const { page } = await open(`${trusted.origin}/messages`);
    await enter(page, UNDELIVERABLE);
    expect(await shown(page)).toMatchObject({ status: 'MailboxDoesNotExist', invalid: 'true', message: 'We cannot send mail there.' });
    await page.close();
  });
});

describe('the CAPTCHA hook (data-captcha)', () => {
  chromium.it("passes the page's token with each verification; a refused token fails open", { timeout: 60_000 }, async () => {
    const { page, errors } = await open(`${trusted.origin}/captcha`);
    await page.locator(EMAIL).fill(DELIVERABLE);
    await page.locator(EMAIL).blur();
    // The visitor has not solved the CAPTCHA yet: the field is being checked.
    expect(await shown(page)).toEqual({ state: 'checking', classification: null, status: null, invalid: null, message: 'Checking the address…' });
    await expectAccessible(page, 'checking');
    await page.evaluate('window.openGate()');
    await page.waitForSelector(`${EMAIL}[data-mailverify-state="done"]`);
    expect(await shown(page)).toMatchObject({ classification: 'Deliverable', status: 'Success' });
    const turnstile = siteverify.calls.filter((call) => call.provider === 'turnstile');
    expect(turnstile).toHaveLength(1);
    expect(turnstile[0]!.form).toMatchObject({ secret: 'turnstile-secret', response: expect.stringMatching(/^turnstile\./) });

    // A token the provider refuses: the server answers 401, and the widget shows nothing and blocks nothing.
    await page.evaluate(`window.solveCaptcha = async () => ({ provider: 'Turnstile', token: 'a refused token' })`);
    await enter(page, UNDELIVERABLE);
    expect(await shown(page)).toEqual({ state: null, classification: null, status: null, invalid: null, message: '' });
    expect(siteverify.callsWith('a refused token')).toHaveLength(1);
    await Promise.all([page.waitForURL('**/sign-up'), page.getByRole('button', { name: 'Sign up' }).click()]);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('the ES module (v1.mjs)', () => {
  chromium.it('attach(input, options): 600 ms after typing stops, its messages; detach removes everything and leaves no timer', { timeout: 60_000 }, async () => {
    const { page, errors } = await open(`${trusted.origin}/module`, async (newPage) => {
      await newPage.clock.install({ time: new Date('2026-03-01T10:00:00Z') });
    });
    await page.waitForSelector('.mailverify-status', { state: 'attached' });
    await page.clock.pauseAt(new Date('2026-03-01T11:00:00Z'));
    const requests: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${serve.origin}/v2.7/`)) requests.push(request.url());
    });

    await page.locator(EMAIL).fill(DELIVERABLE);
    await page.clock.runFor(599);
    expect(await page.locator(EMAIL).getAttribute('data-mailverify-state')).toBeNull();
    await page.clock.runFor(1);
    // Being verified, or verified already.
    expect(await page.locator(EMAIL).getAttribute('data-mailverify-state')).not.toBeNull();
    await page.waitForSelector(`${EMAIL}[data-mailverify-state="done"]`);
    expect(await shown(page)).toEqual({ state: 'done', classification: 'Deliverable', status: 'Success', invalid: null, message: 'Looks good.' });
    expect(requests.length).toBeGreaterThan(0);

    // Typing starts the pause; detach stops it: no request, no attribute, no element is left.
    await page.locator(EMAIL).fill('ann@shop-mail.com');
    const asked = requests.length;
    await page.evaluate('window.detach()');
    await page.clock.runFor(60_000);
    expect(requests.length).toBe(asked);
    expect(await page.locator('.mailverify-status').count()).toBe(0);
    expect(await page.locator(EMAIL).evaluate((input) => (input as unknown as { getAttributeNames(): string[] }).getAttributeNames())).toEqual(['id', 'name', 'type', 'autocomplete', 'required']);
    await page.locator(EMAIL).blur();
    expect(requests.length).toBe(asked);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe("a verification that takes long (a slow mail server), in the page's fake time", () => {
  /** The module page with its clock paused: timers fire only as the test advances it. */
  async function pausedPage(): Promise<Page> {
    const { page } = await open(`${trusted.origin}/module`, (newPage) => newPage.clock.install({ time: new Date('2026-03-01T10:00:00Z') }));
    await page.waitForSelector('.mailverify-status', { state: 'attached' });
    await page.clock.pauseAt(new Date('2026-03-01T11:00:00Z'));
    return page;
  }

  chromium.it("a submission waits 3 s for it at most, then reaches the page's own submit handler, once", { timeout: 60_000 }, async () => {
    const page = await pausedPage();
    // A form that a script of the page sends (as single-page apps do).
    await page.evaluate(`document.querySelector('form').addEventListener('submit', (event) => {
      event.preventDefault();
      (window.sent ??= []).push(new FormData(event.target).get('email'));
    })`);
    await page.locator(EMAIL).fill(SLOW);
    await page.locator(EMAIL).press('Enter');
    expect(await page.locator(EMAIL).getAttribute('data-mailverify-state')).toBe('checking');
    // An impatient visitor presses Enter again: it waits with the first.
    await page.locator(EMAIL).press('Enter');
    await page.clock.runFor(2999);
    expect(await page.evaluate('window.sent')).toBeUndefined();
    await page.clock.runFor(1);
    expect(await page.evaluate('window.sent')).toEqual([SLOW]);
    await page.close();
  });

  chromium.it('is given up after 15 s of polling: nothing shown', { timeout: 60_000 }, async () => {
    const page = await pausedPage();
    await page.locator(EMAIL).fill(SLOW);
    await page.locator(EMAIL).blur();
    await page.clock.runFor(17_999);
    expect(await page.locator(EMAIL).getAttribute('data-mailverify-state')).toBe('checking');
    await page.clock.runFor(1);
    await page.waitForSelector(`${EMAIL}:not([data-mailverify-state])`);
    expect(await shown(page)).toEqual({ state: null, classification: null, status: null, invalid: null, message: '' });
    expect(await results(page)).toEqual([]);
    await page.close();
  });
});

describe('the widget fails open', () => {
  chromium.it('on a page of an origin the key does not trust: nothing shown, nothing blocked, the form submitted', { timeout: 60_000 }, async () => {
    const { page } = await open(`${untrusted.origin}/`);
    await page.locator(EMAIL).fill(STRANGER);
    // The browser refuses the answer (no CORS grant): the request fails as a network error would.
    const refused = page.waitForEvent('requestfailed', (request) => request.url().startsWith(`${serve.origin}/v2.7/email-validations`));
    await page.locator(EMAIL).blur();
    await refused;
    await page.waitForSelector(`${EMAIL}:not([data-mailverify-state])`);
    expect(await shown(page)).toEqual({ state: null, classification: null, status: null, invalid: null, message: '' });
    await expectAccessible(page, 'failed open');
    await Promise.all([page.waitForURL('**/sign-up'), page.getByRole('button', { name: 'Sign up' }).click()]);
    expect(untrusted.submissions).toEqual([`email=${encodeURIComponent(STRANGER)}`]);
    // The server refused it: the app has no job for that address.
    expect(await addressesOf(formApp)).not.toContain(STRANGER);
    await page.close();
  });

  chromium.it('when the key is throttled (429): nothing shown, the form submitted', { timeout: 60_000 }, async () => {
    const { page } = await open(`${trusted.origin}/?app=throttled`);
    await enter(page, DELIVERABLE);
    expect(await shown(page)).toMatchObject({ classification: 'Deliverable' });
    // Its one submission a day is used up.
    await enter(page, UNDELIVERABLE);
    expect(await shown(page)).toEqual({ state: null, classification: null, status: null, invalid: null, message: '' });
    await Promise.all([page.waitForURL('**/sign-up'), page.getByRole('button', { name: 'Sign up' }).click()]);
    expect(trusted.submissions.at(-1)).toBe(`email=${encodeURIComponent(UNDELIVERABLE)}`);
    await page.close();
  });

  chromium.it('when credit is lacking (402): nothing shown, the form submitted', { timeout: 60_000 }, async () => {
    const { page } = await open(`${trusted.origin}/?app=credits`);
    const refused = page.waitForEvent('requestfinished', (request) => request.method() === 'POST' && request.url().startsWith(`${credits.origin}/v2.7/email-validations`));
    await enter(page, DELIVERABLE);
    expect((await (await refused).response())?.status()).toBe(402);
    expect(await shown(page)).toEqual({ state: null, classification: null, status: null, invalid: null, message: '' });
    await Promise.all([page.waitForURL('**/sign-up'), page.getByRole('button', { name: 'Sign up' }).click()]);
    await page.close();
  });

  chromium.it('when the server has stopped: the submission is not held, the form submitted', { timeout: 60_000 }, async () => {
    const { page } = await open(`${trusted.origin}/`);
    await page.waitForSelector('.mailverify-status', { state: 'attached' });
    expect(await serve.stop()).toBe(0);
    await page.locator(EMAIL).fill(UNDELIVERABLE);
    await Promise.all([page.waitForURL('**/sign-up'), page.locator(EMAIL).press('Enter')]);
    expect(trusted.submissions.at(-1)).toBe(`email=${encodeURIComponent(UNDELIVERABLE)}`);
    await page.close();
  });
});
