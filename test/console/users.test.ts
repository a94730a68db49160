// The console's Users pages in real headless Chromium against a real `mailverify serve` (credits off): root creates a
// Standard user with narrow rules and a BrowserApp (its key shown and read back), edits a user's rules and
// deactivates it, meets a change made meanwhile (412), deletes a user after confirming; the keyboard alone creates a
// user; a Standard user is offered neither Users nor Credits, one that may only read users gets no "New user" and a
// read-only user page; an administrator is offered Users. Every page passes axe-core and nothing is refused or
// fetched from elsewhere. And, without a browser, how the user page's form is read and turned into a JSON Patch.
import { TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it as unit, vi } from 'vitest';
import { draftOf, firewallRules, patchOf, throttlingRules } from '../../packages/server/console/src/users/draft.js';
import type { UserDetail } from '../../packages/server/console/src/users/types.js';
import { CHROMIUM, needing } from '../lab/system-programs.js';
import {
  ROOT,
  ROOT_PASSWORD,
  createUser,
  expectAccessible,
  inPage,
  offeredLinks,
  personBody,
  screenshot,
  startConsoleLab,
  withSignedInConsole,
  type ConsoleLab,
} from './console-lab.js';

// A browser test on a loaded machine takes its time: each has a minute and a half.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const { path: chromium, it } = needing(CHROMIUM, 'the console users pages in a browser');

let lab: ConsoleLab;
beforeAll(async () => {
  if (chromium !== null) lab = await startConsoleLab(chromium);
}, 60_000);
afterAll(async () => {
  await lab?.close();
});

const PASSWORD = 'a console user password';

/** Every user of the account, as root lists them. */
async function listedUsers(includeDeleted = false): Promise<Array<{ id: string; displayName: string; type: string; isActive: boolean; isDeleted?: boolean }>> {
  const answer = await lab.asRoot('GET', `/v2.7/users?limit=1000${includeDeleted ? '&includeDeleted=true' : ''}`);
  expect(answer.status).toBe(200);
  return answer.body.data;
}

async function userNamed(displayName: string) {
  const user = (await listedUsers()).find((candidate) => candidate.displayName === displayName);
  expect(user, displayName).toBeDefined();
  const detail = await lab.asRoot('GET', `/v2.7/users/${user!.id}`);
  return { id: user!.id, detail: detail.body };
}

const usersTable = (page: Page) => page.getByRole('table', { name: 'Users' });

describe('the console users pages', () => {
  it('lets root create a Standard user with narrow rules and a BrowserApp, whose key it shows', async () => {
    await withSignedInConsole(lab, '#/users', [ROOT, ROOT_PASSWORD], async (page) => {
      await usersTable(page).waitFor();
      await expectAccessible(page);

      await page.getByRole('button', { name: 'New user' }).click();
      await page.getByLabel('Display name').fill('Clara Standard');
      await page.getByLabel('Type').selectOption('Standard');
      await page.getByLabel('Username').fill('clara');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByLabel('Rules').fill('email-validations:write:my\nemail-validations:read:my\n-email-validations:delete');
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Create user' }).click();
      await usersTable(page).getByRole('link', { name: 'Clara Standard' }).waitFor();

      const clara = await userNamed('Clara Standard');
      expect(clara.detail).toMatchObject({
        type: 'Standard',
        isActive: true,
        authentication: { password: { username: 'clara', isEnabled: true } },
        authorization: { rules: ['email-validations:write:my', 'email-validations:read:my', '-email-validations:delete'] },
      });

      await page.getByRole('button', { name: 'New user' }).click();
      await page.getByLabel('Display name').fill('Shop sign-up');
      await page.getByLabel('Type').selectOption('BrowserApp');
      // Passwordless, with fixed rules: neither is asked for.
      expect(await page.getByLabel('Password').count()).toBe(0);
      expect(await page.getByLabel('Rules').count()).toBe(0);
      await page.getByRole('button', { name: 'Create user' }).click();
      const key = page.getByLabel('Key', { exact: true });
      await key.waitFor();
      expect(await key.getAttribute('readonly')).not.toBeNull();
      const shown = await key.inputValue();
      expect(shown).toMatch(/^[A-Za-z0-9]{32}$/);
      const shop = await userNamed('Shop sign-up');
      expect(shop.detail.type).toBe('BrowserApp');
      expect(shop.detail.authentication.password.username).toBe(shown);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByText(/^(Copied\.|Selected: copy it)/).waitFor();

      await usersTable(page).getByRole('link', { name: 'Shop sign-up' }).waitFor();
      const rows = await usersTable(page).locator('tbody tr').allTextContents();
      expect(rows.some((row) => row.includes('Clara Standard') && row.includes('Standard') && row.includes('Active'))).toBe(true);
      expect(rows.some((row) => row.includes('Shop sign-up') && row.includes('BrowserApp'))).toBe(true);
      await expectAccessible(page);
      await screenshot(page, 'users');

      // Its own page shows the key too, with the settings only a BrowserApp has.
      await usersTable(page).getByRole('link', { name: 'Shop sign-up' }).click();
      await page.getByRole('heading', { name: 'Shop sign-up', level: 1 }).waitFor();
      expect(await page.getByLabel('Key', { exact: true }).inputValue()).toBe(shown);
      await page.getByLabel('Check the origin of each request').check();
      await page.getByLabel('Origin expressions').fill('https://shop.example.com\nhttps://*.shop.example.com');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').getByText('Saved.').waitFor();
      const saved = await lab.asRoot('GET', `/v2.7/users/${shop.id}`);
      expect(saved.body.trustedOrigin).toEqual({ isEnabled: true, expressions: ['https://shop.example.com', 'https://*.shop.example.com'] });
    });
  });

  it('edits a user: its rules, limits and firewall, then deactivates it; a change made meanwhile is shown, not overwritten', async () => {
    const { id } = await createUser(lab, personBody('Standard', 'Edna Editable', 'edna', PASSWORD, ['email-validations:*:my']));
    await withSignedInConsole(lab, `#/users/${id}`, [ROOT, ROOT_PASSWORD], async (page) => {
      await page.getByRole('heading', { name: 'Edna Editable', level: 1 }).waitFor();
      await expectAccessible(page);
      await page.getByLabel('Rules').fill('email-validations:*:my\ncredits:read-balance');
      await page.getByLabel('Submission limits').fill('10 per hour\n3 per minute per IP address');
      await page.getByLabel('Most entries per job').fill('500');
      await page.getByLabel('Allowed address ranges').fill('127.0.0.1 Loopback\n203.0.113.0-203.0.113.255 Office');
      await page.getByLabel('Default retention').fill('2.00:00:00');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').getByText('Saved.').waitFor();
      const edited = (await lab.asRoot('GET', `/v2.7/users/${id}`)).body;
      expect(edited.authorization.rules).toEqual(['email-validations:*:my', 'credits:read-balance']);
      expect(edited.throttling).toEqual({ maxEntriesPerJob: 500, rules: [{ limit: 10, period: 'Hour', scope: 'Global' }, { limit: 3, period: 'Minute', scope: 'IPAddress' }] });
      expect(edited.firewall).toEqual({
        isEnabled: false,
        rules: [
          { addressFamily: 'IPv4', displayName: 'Loopback', startIP: '127.0.0.1', endIP: '127.0.0.1' },
          { addressFamily: 'IPv4', displayName: 'Office', startIP: '203.0.113.0', endIP: '203.0.113.255' },
        ],
      });
      expect(edited.defaults).toEqual({ retention: '2.00:00:00' });
      // What was saved is what the form shows again.
      expect(await page.getByLabel('Submission limits').inputValue()).toBe('10 per hour\n3 per minute per IP address');

      // A line the form cannot read is named before anything is sent.
      await page.getByLabel('Submission limits').fill('ten a week');
      await page.getByRole('button', { name: 'Save changes' }).click();
      expect(await page.getByRole('alert').textContent()).toMatch(/^Submission limits, line 1:/);
      await page.getByRole('button', { name: 'Undo changes' }).click();

      // A server refusal shows its problem detail.
      await page.getByLabel('Rules').fill('email-validations:*:my\nwidgets:read');
      await page.getByRole('button', { name: 'Save changes' }).click();
      const refusal = await page.getByRole('alert').textContent();
      const expected = await lab.asRoot('PATCH', `/v2.7/users/${id}`, { raw: JSON.stringify([{ op: 'replace', path: '/authorization/rules', value: ['email-validations:*:my', 'widgets:read'] }]), type: 'application/json-patch+json' });
      expect(expected.status).toBe(400);
      expect(refusal).toBe(expected.body.detail);
      await page.getByRole('button', { name: 'Undo changes' }).click();

      // Changed by someone else since the page read it: 412, its detail shown, and the user as it is now.
      const meanwhile = await lab.asRoot('PATCH', `/v2.7/users/${id}`, { raw: JSON.stringify([{ op: 'replace', path: '/displayName', value: 'Edna Elsewhere' }]), type: 'application/json-patch+json' });
      expect(meanwhile.status).toBe(200);
      await page.getByLabel('Active').uncheck();
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('heading', { name: 'Edna Elsewhere', level: 1 }).waitFor();
      expect(await page.getByRole('alert').textContent()).toContain('If-Match: the user has changed since');
      expect((await lab.asRoot('GET', `/v2.7/users/${id}`)).body.isActive).toBe(true);
      await page.locator('#user-active:checked').waitFor();

      await page.getByLabel('Active').uncheck();
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('Standard · Inactive').waitFor();
      expect((await lab.asRoot('GET', `/v2.7/users/${id}`)).body.isActive).toBe(false);
      const inactive = await lab.asRoot('POST', '/v2.7/auth/tokens', { auth: null, json: { username: 'edna', password: PASSWORD } });
      expect(inactive.status).toBe(401);
      await expectAccessible(page);
      await screenshot(page, 'user');
    });
  });

  it('enrols a TOTP with its secret shown as text, confirms it with a code, and removes it', async () => {
    const { id } = await createUser(lab, personBody('Standard', 'Theo Totp', 'theo', PASSWORD));
    await withSignedInConsole(lab, `#/users/${id}`, [ROOT, ROOT_PASSWORD], async (page) => {
      await page.getByRole('heading', { name: 'Theo Totp', level: 1 }).waitFor();
      // An edit not saved yet outlives the TOTP's changes.
      await page.getByLabel('Display name').fill('Theo T.');
      await page.getByRole('button', { name: 'Set up a TOTP' }).click();
      const uri = await page.getByLabel('otpauth URI').inputValue();
      const secret = await page.getByLabel('TOTP secret').inputValue();
      expect(uri).toMatch(/^otpauth:\/\/totp\//);
      expect(uri).toContain(`secret=${secret}`);
      await expectAccessible(page);
      await page.getByLabel('Code from the app').fill('000000x');
      await page.getByRole('button', { name: 'Confirm TOTP' }).click();
      expect(await page.getByRole('alert').textContent()).toBe('The code is wrong.');
      await page.getByLabel('Code from the app').fill(new TOTP({ secret }).generate());
      await page.getByRole('button', { name: 'Confirm TOTP' }).click();
      await page.getByText('The TOTP is enrolled').waitFor();
      // Now the user signs in with a first-factor token only.
      const first = await lab.asRoot('POST', '/v2.7/auth/tokens', { auth: null, json: { username: 'theo', password: PASSWORD } });
      expect(JSON.parse(Buffer.from(first.body.accessToken.split('.')[1], 'base64url').toString())['service:mfa']).toEqual(['totp']);

      expect(await page.getByLabel('Display name').inputValue()).toBe('Theo T.');
      await page.getByLabel('Require a TOTP code').check();
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').getByText('Saved.').waitFor();
      const saved = (await lab.asRoot('GET', `/v2.7/users/${id}`)).body;
      expect(saved.displayName).toBe('Theo T.');
      expect(saved.authentication.password.isMfaRequired).toBe(true);

      await page.getByRole('button', { name: 'Remove the TOTP' }).click();
      await page.getByText('The TOTP is removed.').waitFor();
      expect((await lab.asRoot('GET', `/v2.7/users/${id}`)).body.authentication.password.isMfaRequired).toBe(false);
      // The form shows the user read again.
      await page.locator('#user-mfa:not(:checked)').waitFor();
    });
  });

  it("sets a user's CAPTCHA providers, whose secrets are sent and never shown again", async () => {
    const { id } = await createUser(lab, { type: 'BrowserApp', displayName: 'Captcha form' });
    await withSignedInConsole(lab, `#/users/${id}`, [ROOT, ROOT_PASSWORD], async (page) => {
      await page.getByRole('heading', { name: 'Captcha form', level: 1 }).waitFor();
      await page.getByLabel('Require a CAPTCHA token with each submission').check();
      await page.getByLabel('Use Turnstile').check();
      await page.getByRole('button', { name: 'Save changes' }).click();
      // A provider turned on without its secret: the server names what is missing.
      expect(await page.getByRole('alert').textContent()).toBe('captcha.providers.turnstile.secretKey: is required');
      await page.getByLabel('Turnstile secret').fill('turnstile-secret');
      await page.getByLabel('Use hCaptcha').check();
      await page.getByLabel('hCaptcha secret').fill('hcaptcha-secret');
      await page.getByLabel('hCaptcha site ID').fill('site-1');
      // The user read again after the save is held (by the browser, the server's answer unchanged) until an edit is
      // typed: what the form shows once it arrives keeps that edit, and not the secrets sent.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route(`**/v2.7/users/${id}`, async (route) => {
        if (route.request().method() === 'GET') await held;
        await route.continue();
      });
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').getByText('Saved.').waitFor();
      const saved = (await lab.asRoot('GET', `/v2.7/users/${id}`)).body.captcha;
      expect(saved).toEqual({ isEnabled: true, providers: { turnstile: {}, hCaptcha: { siteKey: 'site-1' } } });
      await page.getByLabel('Display name').fill('Captcha sign-up form');
      const readAgain = page.waitForResponse((response) => response.url().endsWith(`/v2.7/users/${id}`) && response.request().method() === 'GET');
      release();
      await readAgain;
      await page.unroute(`**/v2.7/users/${id}`);
      await expect.poll(() => page.getByLabel('Turnstile secret').inputValue()).toBe('');
      expect(await page.getByLabel('hCaptcha secret').inputValue()).toBe('');
      expect(await page.getByLabel('Display name').inputValue()).toBe('Captcha sign-up form');

      // Saved again without new secrets, the ones given are kept (the server would refuse a provider without one).
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('heading', { name: 'Captcha sign-up form', level: 1 }).waitFor();
      expect((await lab.asRoot('GET', `/v2.7/users/${id}`)).body.captcha).toEqual(saved);
    });
  });

  it('deletes a user once the deletion is confirmed', async () => {
    const { id } = await createUser(lab, personBody('Standard', 'Dora Deletable', 'dora', PASSWORD));
    await withSignedInConsole(lab, `#/users/${id}`, [ROOT, ROOT_PASSWORD], async (page) => {
      await page.getByRole('heading', { name: 'Dora Deletable', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Delete user' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete Dora Deletable?' });
      await dialog.waitFor();
      await expectAccessible(page);
      // Cancel is where the focus starts: Enter alone deletes nothing.
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'hidden' });
      expect((await lab.asRoot('GET', `/v2.7/users/${id}`)).status).toBe(200);

      await page.getByRole('button', { name: 'Delete user' }).click();
      await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
      await usersTable(page).waitFor();
      expect((await lab.asRoot('GET', `/v2.7/users/${id}`)).status).toBe(410);
      expect(await usersTable(page).getByText('Dora Deletable').count()).toBe(0);
      await page.getByLabel('Show deleted users').check();
      const row = usersTable(page).locator('tr', { hasText: 'Dora Deletable' });
      await row.waitFor();
      expect(await row.textContent()).toContain('Deleted');
    });
  });

  it('creates a user with the keyboard alone', async () => {
    await withSignedInConsole(lab, '#/users', [ROOT, ROOT_PASSWORD], async (page) => {
      await page.getByRole('button', { name: 'New user' }).waitFor();
      // The page's heading has the focus; the next stop is "New user".
      await page.locator('#page-title:focus').waitFor();
      await page.keyboard.press('Tab');
      expect(await inPage(page, 'document.activeElement.textContent')).toBe('New user');
      await page.keyboard.press('Enter');
      // The form opens with the focus in its first field.
      await page.locator('#new-display-name:focus').waitFor();
      await page.keyboard.type('Kim Keyboard');
      await page.keyboard.press('Tab');
      expect(await inPage(page, 'document.activeElement.id')).toBe('new-type');
      await page.keyboard.press('Tab');
      await page.keyboard.type('kim');
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Tab');
      expect(await inPage(page, 'document.activeElement.id')).toBe('new-rules');
      await page.keyboard.press('Tab');
      expect(await inPage(page, 'document.activeElement.textContent')).toBe('Create user');
      await page.keyboard.press('Enter');
      await usersTable(page).getByRole('link', { name: 'Kim Keyboard' }).waitFor();
      // The focus is on the news of the creation, from where the keyboard goes on.
      await page.locator('.created [role="status"]:focus').waitFor();
      const kim = await userNamed('Kim Keyboard');
      expect(kim.detail.authentication.password.username).toBe('kim');
      expect(kim.detail.authorization.rules).toEqual(['email-validations:*:my']);
      const token = await lab.asRoot('POST', '/v2.7/auth/tokens', { auth: null, json: { username: 'kim', password: PASSWORD } });
      expect(token.status).toBe(200);
    });
  });

  it('offers a Standard user with narrow rules neither Users nor Credits', async () => {
    await createUser(lab, personBody('Standard', 'Nina Narrow', 'nina', PASSWORD, ['email-validations:*:my']));
    await withSignedInConsole(lab, '#/jobs', ['nina', PASSWORD], async (page) => {
      expect(await offeredLinks(page)).toEqual(['Jobs', 'New job', 'Settings']);
      await page.goto(`${lab.consoleUrl}#/users`);
      await page.getByRole('heading', { name: 'Not available' }).waitFor();
      expect(await usersTable(page).count()).toBe(0);
    });
  });

  it('shows a user who may only read users the list and read-only pages, without "New user" or deletion', async () => {
    await createUser(lab, personBody('Standard', 'Rita Reader', 'rita', PASSWORD, ['email-validations:*:my', 'users:read']));
    await withSignedInConsole(lab, '#/jobs', ['rita', PASSWORD], async (page) => {
      expect(await offeredLinks(page)).toEqual(['Jobs', 'New job', 'Users', 'Settings']);
      await page.getByRole('link', { name: 'Users' }).click();
      await usersTable(page).getByRole('link', { name: 'Rita Reader' }).waitFor();
      // What she may do is known once her own detail is read: the "New user" button never comes.
      await page.getByRole('link', { name: 'Rita Reader' }).click();
      await page.getByText('You may read this user\'s settings, not change them.').waitFor();
      expect(await page.getByLabel('Rules').isDisabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Save changes' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Delete user' }).count()).toBe(0);
      await page.getByRole('link', { name: 'Users', exact: true }).first().click();
      await usersTable(page).waitFor();
      expect(await page.getByRole('button', { name: 'New user' }).count()).toBe(0);
      await expectAccessible(page);
    });
  });

  it('offers a Standard user that may write users no Administrator type, and administrators read-only', async () => {
    await createUser(lab, personBody('Standard', 'Will Writer', 'will', PASSWORD, ['email-validations:*:my', 'users:read', 'users:write']));
    const { id: adminId } = await createUser(lab, personBody('Administrator', 'Adam Admin', 'adam', PASSWORD));
    await withSignedInConsole(lab, '#/users', ['will', PASSWORD], async (page) => {
      await page.getByRole('button', { name: 'New user' }).click();
      expect(await page.getByLabel('Type').locator('option').allTextContents()).toEqual(['Standard', 'BrowserApp']);
      await page.getByRole('button', { name: 'Cancel' }).click();
      // The focus is back on the button that opened the form.
      await page.locator('button:focus', { hasText: 'New user' }).waitFor();
      await page.goto(`${lab.consoleUrl}#/users/${adminId}`);
      await page.getByRole('heading', { name: 'Adam Admin', level: 1 }).waitFor();
      await page.getByText("You may read this user's settings, not change them.").waitFor();
      expect(await page.getByRole('button', { name: 'Delete user' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Set up a TOTP' }).count()).toBe(0);
    });
  });

  it('offers an administrator Users (and no Credits, which are off), and lets it create users', async () => {
    await createUser(lab, personBody('Administrator', 'Ada Admin', 'ada', PASSWORD));
    await withSignedInConsole(lab, '#/jobs', ['ada', PASSWORD], async (page) => {
      expect(await offeredLinks(page)).toEqual(['Jobs', 'New job', 'Users', 'Settings']);
      await page.getByRole('link', { name: 'Users' }).click();
      await page.getByRole('button', { name: 'New user' }).click();
      expect(await page.getByLabel('Type').locator('option').allTextContents()).toEqual(['Administrator', 'Standard', 'BrowserApp']);
      await page.getByLabel('Display name').fill('Ada’s helper');
      await page.getByLabel('Username').fill('clara');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create user' }).click();
      // clara is taken: the problem document's detail is shown.
      const alert = page.getByRole('alert');
      await alert.waitFor();
      const taken = await lab.asRoot('POST', '/v2.7/users', { json: personBody('Standard', 'Ada’s helper', 'clara', PASSWORD) });
      expect(taken.status).toBe(400);
      expect(await alert.textContent()).toBe(taken.body.detail);
    });
  });
  // Last: it fills the first page of the listing.
  it('pages through the users, 50 to a page', async () => {
    for (let index = 0; index < 50; index++) await createUser(lab, { type: 'BrowserApp', displayName: `Widget ${String(index).padStart(2, '0')}` });
    const all = (await listedUsers()).map((user) => user.displayName);
    expect(all.length).toBeGreaterThan(50);
    await withSignedInConsole(lab, '#/users', [ROOT, ROOT_PASSWORD], async (page) => {
      const names = () => usersTable(page).locator('tbody tr td:first-child').allInnerTexts();
      await usersTable(page).getByRole('link', { name: all[0]! }).waitFor();
      expect(await names()).toEqual(all.slice(0, 50));
      expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Page 2').waitFor();
      await usersTable(page).getByRole('link', { name: all[50]! }).waitFor();
      expect(await names()).toEqual(all.slice(50, 100));
      expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(all.length <= 100);
      await page.getByRole('button', { name: 'Previous page' }).click();
      await page.getByText('Page 1').waitFor();
      await usersTable(page).getByRole('link', { name: all[0]! }).waitFor();
      expect(await names()).toEqual(all.slice(0, 50));
      await expectAccessible(page);
    });
  });
});

describe("the user page's form, read and written", () => {
  const detail: UserDetail = {
    type: 'Standard',
    displayName: 'Uma',
    isActive: true,
    authentication: { password: { isEnabled: true, isMfaRequired: false, username: 'uma' }, certificate: { isEnabled: false } },
    authorization: { rules: ['email-validations:*:my'] },
    captcha: { isEnabled: false, providers: { hCaptcha: { siteKey: 'site' }, turnstile: {} } },
    defaults: {},
    firewall: { isEnabled: false, rules: [{ addressFamily: 'IPv6', displayName: 'Lab net', startIP: '2001:db8::', endIP: '2001:db8::ffff' }] },
    throttling: { rules: [{ limit: 3, period: 'Minute', scope: 'IPAddress' }] },
    trustedOrigin: { isEnabled: false, expressions: [] },
  };

  unit('changes nothing when nothing is edited, secrets and lists included', () => {
    expect(patchOf(detail, draftOf(detail))).toEqual([]);
  });

  unit('replaces only the settings edited, and adds a new password, write-only', () => {
    const draft = { ...draftOf(detail), rules: 'email-validations:*:my\n\n  users:read  ', newPassword: 'a new password' };
    expect(patchOf(detail, draft)).toEqual([
      { op: 'replace', path: '/authorization', value: { rules: ['email-validations:*:my', 'users:read'] } },
      { op: 'add', path: '/authentication/password/password', value: 'a new password' },
    ]);
  });

  unit('sends a new CAPTCHA secret, and none where the field is left empty (the server keeps it)', () => {
    const draft = draftOf(detail);
    const edited = { ...draft, providers: { ...draft.providers, turnstile: { ...draft.providers.turnstile, secret: 'new secret' } } };
    expect(patchOf(detail, edited)).toEqual([
      { op: 'replace', path: '/captcha', value: { isEnabled: false, providers: { turnstile: { secretKey: 'new secret' }, hCaptcha: { siteKey: 'site' } } } },
    ]);
  });

  unit('reads firewall ranges and submission limits one per line, and names a line it cannot read', () => {
    expect(firewallRules('10.0.0.1 Gateway\n192.0.2.0-192.0.2.255  Branch office\n::1')).toEqual([
      { addressFamily: 'IPv4', displayName: 'Gateway', startIP: '10.0.0.1', endIP: '10.0.0.1' },
      { addressFamily: 'IPv4', displayName: 'Branch office', startIP: '192.0.2.0', endIP: '192.0.2.255' },
      { addressFamily: 'IPv6', displayName: '', startIP: '::1', endIP: '::1' },
    ]);
    expect(() => firewallRules('10.0.0.1-10.0.0.2-10.0.0.3')).toThrow(/^Allowed address ranges, line 1:/);
    expect(throttlingRules('10 per hour\n5 jobs per Day per IP address\n1 a minute')).toEqual([
      { limit: 10, period: 'Hour', scope: 'Global' },
      { limit: 5, period: 'Day', scope: 'IPAddress' },
      { limit: 1, period: 'Minute', scope: 'Global' },
    ]);
    expect(() => throttlingRules('10 per hour\nten a week')).toThrow(/^Submission limits, line 2:/);
  });
});
