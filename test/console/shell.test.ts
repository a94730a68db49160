// The console's frame in real headless Chromium against a real `mailverify serve`: sign-in as root, its navigation
// (what root is offered), the session kept in sessionStorage only and forgotten at sign-out, a wrong password's detail,
// an expired session back at sign-in, a Standard user with a TOTP (the Code step; users and settings of the account
// not offered), the accessibility of the sign-in page, and nothing refused by the page's CSP.
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { CHROMIUM, needing } from '../lab/system-programs.js';
import { basic } from '../server/http-client.js';
import { ROOT, ROOT_PASSWORD, expectAccessible, inPage, isFocused, screenshot, signIn, startConsoleLab, withConsole, type ConsoleLab } from './console-lab.js';

// A browser test on a loaded machine takes its time: each has a minute and a half.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const { path: chromium, it } = needing(CHROMIUM, 'the console shell in a browser');

let lab: ConsoleLab;
beforeAll(async () => {
  if (chromium !== null) lab = await startConsoleLab(chromium);
}, 60_000);
afterAll(async () => {
  await lab?.close();
});

describe('the console shell', () => {
  it('signs root in, offers jobs, users and settings (credits are off), and forgets the token at sign-out', async () => {
    await withConsole(lab, '', async (page) => {
      // The page is drawn by its script after the load: waited for (visible), not looked at once.
      await page.getByRole('heading', { name: 'Sign in to mailverify' }).waitFor();
      await expectAccessible(page);
      await screenshot(page, 'sign-in');
      await signIn(page, ROOT, ROOT_PASSWORD);
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Users' }).waitFor();
      const links = await nav.getByRole('link').allTextContents();
      expect(links).toEqual(['Jobs', 'New job', 'Users', 'Settings']);
      const stored = await inPage(page, '({ session: Object.keys(sessionStorage), local: localStorage.length, cookie: document.cookie })');
      expect(stored).toEqual({ session: ['mailverify.console.token'], local: 0, cookie: '' });

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Username').waitFor();
      expect(await isFocused(page.getByLabel('Username'))).toBe(true);
      await page.getByText('You are signed out.').waitFor();
      expect(await inPage(page, 'sessionStorage.length')).toBe(0);
      await page.reload();
      await page.getByLabel('Username').waitFor();
    });
  });

  it('shows the detail of a wrong password, and keeps a session across a reload of the tab', async () => {
    await withConsole(lab, '', async (page) => {
      await page.getByLabel('Username').fill(ROOT);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      const problem = await lab.asRoot('POST', '/v2.7/auth/tokens', { auth: null, json: { username: ROOT, password: 'not the password' } });
      expect(await alert.textContent()).toBe(problem.body.detail);

      await page.getByLabel('Password').fill(ROOT_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await page.reload();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
    });
  });

  it('opens a page named in the address once signed in, waiting for what the user may do', async () => {
    await withConsole(lab, '#/users', async (page) => {
      await signIn(page, ROOT, ROOT_PASSWORD);
      await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
      await page.goto(`${lab.consoleUrl}#/credits`);
      // Credits are not accounted by this server: the page is not offered.
      await page.getByRole('heading', { level: 1, name: 'Not available' }).waitFor();
    });
  });

  it('goes back to sign-in, saying why, when the server refuses the token', async () => {
    await withConsole(lab, '#/jobs', async (page) => {
      await signIn(page, ROOT, ROOT_PASSWORD);
      // A token the server does not know (as one past its expiry): the next request answers 401.
      await inPage(page, "sessionStorage.setItem('mailverify.console.token', 'e30.e30.forged')");
      await page.reload();
      await page.getByLabel('Username').waitFor();
      await page.getByText('Your session has ended: sign in again.').waitFor();
      expect(await inPage(page, 'sessionStorage.length')).toBe(0);
    });
  });
});

/** A Standard user made by root, with `rules` (the default ones when absent); its id. */
async function standardUser(username: string, password: string, rules?: string[]): Promise<string> {
  const created = await lab.asRoot('POST', '/v2.7/users', {
    json: { type: 'Standard', displayName: username, authentication: { password: { username, password } }, ...(rules !== undefined && { authorization: { rules } }) },
  });
  expect(created.status, created.text).toBe(200);
  return created.body.id;
}

describe('a Standard user', () => {
  it('with a TOTP signs in with the Code after the password; a wrong code shows its detail', async () => {
    const id = await standardUser('totp-user', 'a totp user password');
    const enrolment = await lab.asRoot('POST', `/v2.7/users/${id}/authentication/totp`);
    expect(enrolment.status).toBe(200);
    const totp = new TOTP({ secret: enrolment.body.secret as string });
    // The confirmation uses the previous time step, so that the sign-in's code (the current step) is still unused.
    const confirmed = await lab.asRoot('POST', `/v2.7/users/${id}/authentication/totp/confirmations`, { json: { passCode: totp.generate({ timestamp: Date.now() - 30_000 }) } });
    expect(confirmed.status).toBe(200);

    await withConsole(lab, '', async (page) => {
      await page.getByLabel('Username').fill('totp-user');
      await page.getByLabel('Password').fill('a totp user password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const code = page.getByLabel('Code');
      await code.waitFor();
      expect(await isFocused(code)).toBe(true);
      // A new, empty field: never the password field with its value.
      expect(await code.inputValue()).toBe('');
      expect(await page.getByLabel('Password').count()).toBe(0);
      await expectAccessible(page);
      await screenshot(page, 'sign-in-code');

      const wrong = String((Number(totp.generate()) + 1) % 1_000_000).padStart(6, '0');
      await code.fill(wrong);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toMatch(/\S/);
      await code.fill(totp.generate());
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Settings' }).waitFor();
      expect(await nav.getByRole('link').allTextContents()).toEqual(['Jobs', 'New job', 'Settings']);
    });
  });

  it('who may not delete jobs is told why when trying, and is no longer offered Delete', { timeout: 60_000 }, async () => {
    await standardUser('no-delete', 'a no delete password', ['email-validations:read:my', 'email-validations:write:my']);
    await withConsole(lab, '#/new', async (page) => {
      await signIn(page, 'no-delete', 'a no delete password');
      await page.getByLabel('Addresses').fill('ann@console-shop.com');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('figure', { name: 'Classifications' }).waitFor();
      await page.getByRole('button', { name: 'Delete' }).click();
      const id = /#\/jobs\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
      const refused = await lab.asRoot('DELETE', `/v2.7/email-validations/${id}`, { auth: basic('no-delete', 'a no delete password') });
      expect(refused.status).toBe(403);
      await page.getByRole('alert').getByText(refused.body.detail, { exact: true }).waitFor();
      expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    });
  });
});
