// Headless Chromium for the tests of the console and the widget: Debian's `chromium` driven by playwright-core, an
// accessibility check of a page with axe-core, and what a page's Content-Security-Policy refused.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Chromium, headless. As root, for Debian's package: its sandbox needs user namespaces that a root process in a
 * container lacks. Background networking off: this machine's network is closed, and the browser's own calls home
 * would be refused at every start.
 */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** One lazily launched browser per test file, and its closing (for afterAll). */
export function sharedBrowser(executablePath: () => string | null): { get: () => Promise<Browser>; close: () => Promise<void> } {
  let launched: Promise<Browser> | undefined;
  return {
    get: () => {
      const path = executablePath();
      if (path === null) return Promise.reject(new Error('Chromium is not installed'));
      launched ??= launchChromium(path);
      return launched;
    },
    close: async () => {
      await launched?.then((browser) => browser.close(), () => undefined);
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AccessibilityViolation {
  readonly id: string;
  readonly impact: string;
  readonly help: string;
  /** The elements, by their CSS selector. */
  readonly targets: readonly string[];
}

/**
 * The serious and critical violations axe-core finds on the page as it is now (WCAG 2.1 A and AA and best practices).
 * axe runs in the page through the DevTools protocol, which the page's Content-Security-Policy does not govern.
 */
export async function accessibilityViolations(page: Page): Promise<AccessibilityViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const { axe, document } = globalThis as unknown as { document: unknown; axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> } };
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact ?? 'minor', help: violation.help, targets: violation.nodes.map((node) => node.target.join(' ')) }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

/**
 * Records what the page's Content-Security-Policy refused (its `securitypolicyviolation` events and the browser's
 * console reports of them), from now on, and every request the page made to another origin than `origin`.
 */
export function watchPage(page: Page, origin: string): { readonly refused: string[]; readonly otherOrigins: string[]; readonly errors: string[] } {
  const refused: string[] = [];
  const otherOrigins: string[] = [];
  const errors: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.protocol !== 'blob:' && url.origin !== origin) otherOrigins.push(request.url());
  });
  return { refused, otherOrigins, errors };
}
