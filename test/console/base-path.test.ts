// The console under `serve --base-path`: one build serves under any base path, since its assets are relative and its
// REST calls start from the page's own path. In headless Chromium, root signs in at <base>/ (redirected to the
// console), submits a list, sees it complete and exports it; every request stays under the base path.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { CHROMIUM, needing } from '../lab/system-programs.js';
import { ROOT, ROOT_PASSWORD, signIn, startConsoleLab, withConsole, type ConsoleLab } from './console-lab.js';

// A browser test on a loaded machine takes its time: each has a minute and a half.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const { path: chromium, it } = needing(CHROMIUM, 'the console under a base path in a browser');

let lab: ConsoleLab;
beforeAll(async () => {
  if (chromium !== null) lab = await startConsoleLab(chromium, { basePath: '/verify/api' });
}, 60_000);
afterAll(async () => {
  await lab?.close();
});

describe('the console under a base path', () => {
  it('is reached from <base>/, and calls the interface under the base path only', { timeout: 60_000 }, async () => {
    await withConsole(lab, '', async (page) => {
      const paths: string[] = [];
      page.on('request', (request) => paths.push(new URL(request.url()).pathname));
      await page.goto(`${lab.origin}/verify/api/`);
      expect(new URL(page.url()).pathname).toBe('/verify/api/console/');
      await signIn(page, ROOT, ROOT_PASSWORD);
      await page.getByRole('link', { name: 'New job' }).click();
      await page.getByLabel('Addresses').fill('ann@console-shop.com\nnobody@console-shop.com');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('figure', { name: 'Classifications' }).getByRole('row', { name: /Deliverable/ }).first().waitFor();
      const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
      expect(readFileSync((await file.path())!, 'utf8')).toContain('nobody@console-shop.com');

      expect(paths.filter((path) => !path.startsWith('/verify/api/'))).toEqual([]);
      expect(paths.some((path) => path.startsWith('/verify/api/v2.7/email-validations/'))).toBe(true);
    });
  });
});
