// What the console's browser tests share: a real `mailverify serve` on the mail lab (one per test file), headless
// Chromium, a signed-in page, calls to the REST interface as root, and screenshots of the pages (always in a temp
// folder; in docs/images/console-<name>.png when CONSOLE_SCREENSHOTS=1).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { accessibilityViolations, sharedBrowser, watchPage } from '../lab/browser.js';
import { startMailLab, type MailLab, type MailLabScenario } from '../lab/mail-lab.js';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { basic, callServer, type Answer, type Call } from '../server/http-client.js';

export const ROOT = 'root';
export const ROOT_PASSWORD = 'a console test root password';

/**
 * Domains of the lab: a strict exchanger that knows ann, bob and cleo; a catch-all one; a domain with no MX; and an
 * exchanger that holds its answer for `held` 8 s (a job that stays in progress for a while; submit it at High quality,
 * whose command timeout is 50 s, Standard's being 5 s).
 */
export const SCENARIO: MailLabScenario = {
  servers: {
    strict: { mailboxes: ['ann', 'bob', 'cleo'] },
    open: { acceptAll: true },
    slow: { engine: 'raw', mailboxes: ['held'], delayMs: { 'rcpt:held': 8000 } },
  },
  domains: { 'console-shop.com': ['strict'], 'console-open.com': ['open'], 'console-nomail.com': [], 'console-slow.com': ['slow'] },
};

export interface ConsoleLab {
  readonly lab: MailLab;
  readonly serve: ServeProcess;
  readonly origin: string;
  /** `<origin><basePath>/console/`. */
  readonly consoleUrl: string;
  /** `<basePath>` as the REST paths start (`''` or `/x`). */
  readonly basePath: string;
  browser(): Promise<Browser>;
  /** A request to the REST interface as root (paths below the base path). */
  asRoot(method: string, path: string, request?: Call): Promise<Answer>;
  close(): Promise<void>;
}

/** `config`: the keys of a `--config` file (for those that have no flag: custom quality levels, classification names). */
export async function startConsoleLab(
  chromium: string | null,
  options: { basePath?: string; flags?: readonly string[]; config?: Record<string, unknown> } = {},
): Promise<ConsoleLab> {
  const basePath = options.basePath ?? '';
  const lab = await startMailLab(SCENARIO);
  const dataDir = mkdtempSync(join(tmpdir(), 'mailverify-console-'));
  const configFile = join(dataDir, 'config.json');
  if (options.config !== undefined) writeFileSync(configFile, JSON.stringify(options.config));
  let serve: ServeProcess;
  try {
    serve = await startServe(
      [
        '--data-dir', dataDir, '--log-level', 'silent',
        '--dns-server', lab.dnsAddress, '--smtp-port', String(lab.port), '--allow-private-addresses',
        '--helo-name', 'probe.mailverify-lab.com', '--mail-from', 'bounce@mailverify-lab.com',
        ...(basePath === '' ? [] : ['--base-path', basePath]),
        ...(options.config === undefined ? [] : ['--config', configFile]),
        ...(options.flags ?? []),
      ],
      { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD },
    );
  } catch (error) {
    await lab.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const browser = sharedBrowser(() => chromium);
  const rootAuth = basic(ROOT, ROOT_PASSWORD);
  return {
    lab,
    serve,
    origin: serve.origin,
    basePath,
    consoleUrl: `${serve.origin}${basePath}/console/`,
    browser: browser.get,
    asRoot: (method, path, request) => callServer(serve.origin, rootAuth, method, `${basePath}${path}`, request),
    close: async () => {
      await browser.close();
      await serve.stop();
      await lab.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A new page (its own context: its own sessionStorage) watched for CSP refusals, other origins and page errors. */
export async function openConsole(lab: ConsoleLab, hash = ''): Promise<{ page: Page; watched: ReturnType<typeof watchPage>; close: () => Promise<void> }> {
  const context = await (await lab.browser()).newContext({ acceptDownloads: true, viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const watched = watchPage(page, lab.origin);
  await page.goto(`${lab.consoleUrl}${hash}`);
  return { page, watched, close: () => context.close() };
}

/**
 * Runs `body` on a new page of the console (see openConsole), then checks that nothing was refused by its CSP, no
 * request went to another origin and no page error happened; the page's context is closed whatever happens.
 */
export async function withConsole(lab: ConsoleLab, hash: string, body: (page: Page) => Promise<void>): Promise<void> {
  const { page, watched, close } = await openConsole(lab, hash);
  try {
    await body(page);
    expectClean(watched);
  } catch (error) {
    throw await withWhatThePageShowed(error, page, watched);
  } finally {
    await close();
  }
}

/**
 * A failure with what the page showed (its text) and any page error, on the message's first line: the line a test
 * report keeps, so that a step that timed out on a loaded machine says where the page was.
 */
async function withWhatThePageShowed(error: unknown, page: Page, watched: ReturnType<typeof watchPage>): Promise<unknown> {
  if (!(error instanceof Error)) return error;
  const shown = await page
    .locator('body')
    .innerText({ timeout: 2_000 })
    .then((text) => text.replace(/\s+/g, ' ').trim().slice(0, 400))
    .catch(() => '(unreadable)');
  const [first = '', ...rest] = error.message.split('\n');
  const pageErrors = watched.errors.length > 0 ? `; page errors: ${watched.errors.join(' | ').slice(0, 200)}` : '';
  error.message = [`${first} [the page showed: ${shown}${pageErrors}]`, ...rest].join('\n');
  return error;
}

/** Signs in through the form (Username, Password, Sign in) and waits for the navigation. */
export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The value of a JavaScript expression in the page (these files are type-checked without the DOM library). */
export function inPage<T = unknown>(page: Page, expression: string): Promise<T> {
  return page.evaluate(expression) as Promise<T>;
}

/** Whether `locator`'s element has the focus. */
export function isFocused(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => element === (element.ownerDocument as unknown as { activeElement: unknown }).activeElement);
}

/** Presses Tab until `locator`'s element has the focus (as a keyboard user moves through the page). */
export async function tabTo(page: Page, locator: Locator, most = 60): Promise<void> {
  for (let presses = 0; presses < most; presses++) {
    if (await isFocused(locator)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${String(locator)} never had the focus after ${most} presses of Tab`);
}

/** Nothing refused by the CSP, no request to another origin, no page error. */
export function expectClean(watched: ReturnType<typeof watchPage>): void {
  expect(watched.refused).toEqual([]);
  expect(watched.otherOrigins).toEqual([]);
  expect(watched.errors).toEqual([]);
}

export async function expectAccessible(page: Page): Promise<void> {
  expect(await accessibilityViolations(page)).toEqual([]);
}

const SHOTS = mkdtempSync(join(tmpdir(), 'mailverify-console-shots-'));
const DOCS_IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));

/** A full-page screenshot `console-<name>.png`; its path in the temp folder. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SHOTS, `console-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  if (process.env['CONSOLE_SCREENSHOTS'] === '1') {
    mkdirSync(DOCS_IMAGES, { recursive: true });
    await page.screenshot({ path: join(DOCS_IMAGES, `console-${name}.png`), fullPage: true });
  }
  return path;
}

/** The main navigation's links once the console has learned what the user is offered (its aria-busy is false). */
export async function offeredLinks(page: Page): Promise<string[]> {
  await page.locator('nav[aria-label="Main"][aria-busy="false"]').waitFor();
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
}

/** A user made by root through the REST interface; its id and Basic credentials (username and password). */
export async function createUser(lab: ConsoleLab, body: Record<string, unknown>): Promise<{ id: string; etag: string }> {
  const answer = await lab.asRoot('POST', '/v2.7/users', { json: body });
  expect(answer.status, answer.text).toBe(200);
  return { id: answer.body.id, etag: answer.body.etag };
}

/** A Standard or Administrator user's creation body with a password. */
export function personBody(type: 'Standard' | 'Administrator', displayName: string, username: string, password: string, rules?: readonly string[]): Record<string, unknown> {
  return { type, displayName, authentication: { password: { username, password } }, ...(rules !== undefined && { authorization: { rules } }) };
}

/** withConsole, signed in as `username` first. */
export function withSignedInConsole(lab: ConsoleLab, hash: string, [username, password]: readonly [string, string], work: (page: Page) => Promise<void>): Promise<void> {
  return withConsole(lab, hash, async (page) => {
    await signIn(page, username, password);
    await work(page);
  });
}
