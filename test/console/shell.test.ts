// The console's frame in real headless Chromium against a real `mailverify serve`: sign-in as root, its navigation
// (what root is offered), the session kept in sessionStorage only and forgotten at sign-out, a wrong password's detail,
// an expired session back at sign-in, the accessibility of the sign-in page, and nothing refused by the page's CSP.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { CHROMIUM, needing } from '../lab/system-programs.js';
import { ROOT, ROOT_PASSWORD, expectAccessible, expectClean, inPage, openConsole, screenshot, signIn, startConsoleLab, type ConsoleLab } from './console-lab.js';

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
    const { page, watched, close } = await openConsole(lab);
    try {
      await expect(page.getByRole('heading', { name: 'Sign in to mailverify' }).isVisible()).resolves.toBe(true);
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
      expect(await inPage(page, 'sessionStorage.length')).toBe(0);
      await page.reload();
      await page.getByLabel('Username').waitFor();
      expectClean(watched);
    } finally {
      await close();
    }
  });

  it('shows the detail of a wrong password, and keeps a session across a reload of the tab', async () => {
    const { page, watched, close } = await openConsole(lab);
    try {
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
      expectClean(watched);
    } finally {
      await close();
    }
  });

  it('goes back to sign-in, saying why, when the server refuses the token', async () => {
    const { page, watched, close } = await openConsole(lab, '#/jobs');
    try {
      await signIn(page, ROOT, ROOT_PASSWORD);
      // A token the server does not know (as one past its expiry): the next request answers 401.
      await inPage(page, "sessionStorage.setItem('mailverify.console.token', 'e30.e30.forged')");
      await page.reload();
      await page.getByLabel('Username').waitFor();
      await page.getByText('Your session has ended: sign in again.').waitFor();
      expect(await inPage(page, 'sessionStorage.length')).toBe(0);
      expectClean(watched);
    } finally {
      await close();
    }
  });
});
