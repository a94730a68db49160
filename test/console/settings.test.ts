// The console's Settings page in real headless Chromium against a real `mailverify serve` with a custom quality
// level in its configuration: root edits the account's override rules (added, reordered, removed, saved with PUT and
// read back through the API, a malformed one refused with its problem detail), and a job submitted after it is
// classified by them; an administrator reads and edits them too; a Standard user is shown the quality levels only.
// Every page passes axe-core and nothing is refused or fetched from elsewhere.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { CHROMIUM, needing } from '../lab/system-programs.js';
import {
  ROOT,
  ROOT_PASSWORD,
  createUser,
  expectAccessible,
  offeredLinks,
  personBody,
  screenshot,
  startConsoleLab,
  withSignedInConsole,
  type ConsoleLab,
} from './console-lab.js';

// A browser test on a loaded machine takes its time: each has a minute and a half.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const { path: chromium, it } = needing(CHROMIUM, 'the console settings page in a browser');

const configDir = mkdtempSync(join(tmpdir(), 'mailverify-console-settings-'));
const config = join(configDir, 'mailverify.json');
writeFileSync(config, JSON.stringify({ qualityLevels: [{ id: 'Patient', displayName: 'Patient (three passes)', passes: 3, unitPrice: 3 }] }));

let lab: ConsoleLab;
beforeAll(async () => {
  if (chromium !== null) lab = await startConsoleLab(chromium, { flags: ['--config', config] });
}, 60_000);
afterAll(async () => {
  await lab?.close();
  rmSync(configDir, { recursive: true, force: true });
});

const PASSWORD = 'a console settings password';

const rulesTable = (page: Page) => page.getByRole('table', { name: 'Override rules' });

async function qualityRows(page: Page): Promise<string[]> {
  const table = page.getByRole('table', { name: 'Quality levels' });
  await table.waitFor();
  return table.locator('tbody tr').allInnerTexts();
}

describe('the console settings page', () => {
  it('lets root edit the override rules, saved with PUT, and lists the quality levels', async () => {
    await withSignedInConsole(lab, '#/settings', [ROOT, ROOT_PASSWORD], async (page) => {
      await rulesTable(page).getByText('No rules: every address is checked.').waitFor();
      expect(await qualityRows(page)).toEqual([
        'Standard\tStandard\tBuilt in\t1\tDefault',
        'High\tHigh\tBuilt in\t2\t',
        'Extreme\tExtreme\tBuilt in\t4\t',
        'Patient (three passes)\tPatient\tCustom\t3\t',
      ]);

      await page.getByRole('button', { name: 'Add rule' }).click();
      await page.getByLabel('Pattern of rule 1').fill('*@console-open.com');
      await page.getByLabel('Classification of rule 1').fill('Risky');
      await page.getByRole('button', { name: 'Add rule' }).click();
      await page.getByLabel('Pattern of rule 2').fill('ann@console-shop.com');
      await page.getByLabel('Classification of rule 2').fill('Undeliverable');
      await page.getByRole('button', { name: 'Add rule' }).click();
      await page.getByLabel('Pattern of rule 3').fill('temporary@*');
      await page.getByRole('button', { name: 'Move rule 2 up' }).click();
      await page.getByRole('button', { name: 'Remove rule 3' }).click();
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Save rules' }).click();
      await page.getByText('Saved 2 rules').waitFor();
      const saved = await lab.asRoot('GET', '/v2.7/settings/overrides');
      expect(saved.body).toEqual([
        { match: 'ann@console-shop.com', classification: 'Undeliverable' },
        { match: '*@console-open.com', classification: 'Risky' },
      ]);

      // They decide the jobs submitted from now on.
      const job = await lab.asRoot('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: [{ inputData: 'ann@console-shop.com' }] } });
      expect(job.status).toBe(200);
      expect(job.body.entries.data[0]).toMatchObject({ status: 'OverrideMatch', classification: 'Undeliverable' });

      // A rule the server cannot take: its problem detail, and nothing changed.
      await page.getByRole('button', { name: 'Add rule' }).click();
      await page.getByLabel('Pattern of rule 3').fill('*@console-nomail.com');
      await page.getByLabel('Classification of rule 3').fill('');
      await page.getByRole('button', { name: 'Save rules' }).click();
      const refused = await lab.asRoot('PUT', '/v2.7/settings/overrides', { json: [...saved.body, { match: '*@console-nomail.com', classification: '' }] });
      expect(refused.status).toBe(400);
      expect(await page.getByRole('alert').textContent()).toBe(refused.body.detail);
      expect((await lab.asRoot('GET', '/v2.7/settings/overrides')).body).toEqual(saved.body);
      await page.getByRole('button', { name: 'Remove rule 3' }).click();
      expect(await page.getByRole('alert').count()).toBe(0);
      await screenshot(page, 'settings');
    });
  });

  it('lets an administrator read and replace the override rules', async () => {
    await createUser(lab, personBody('Administrator', 'Ada Admin', 'ada', PASSWORD));
    await withSignedInConsole(lab, '#/settings', ['ada', PASSWORD], async (page) => {
      const pattern = page.getByLabel('Pattern of rule 1');
      await pattern.waitFor();
      expect(await pattern.inputValue()).toBe('ann@console-shop.com');
      await page.getByRole('button', { name: 'Remove rule 1' }).click();
      await page.getByRole('button', { name: 'Save rules' }).click();
      await page.getByText('Saved 1 rule:').waitFor();
      expect((await lab.asRoot('GET', '/v2.7/settings/overrides')).body).toEqual([{ match: '*@console-open.com', classification: 'Risky' }]);
    });
  });

  it('shows a Standard user the quality levels, not the override rules, and its own TOTP, which it enrols', async () => {
    await createUser(lab, personBody('Standard', 'Sam Standard', 'sam', PASSWORD, ['email-validations:*:my']));
    await withSignedInConsole(lab, '#/settings', ['sam', PASSWORD], async (page) => {
      expect(await offeredLinks(page)).toEqual(['Jobs', 'New job', 'Settings']);
      expect(await qualityRows(page)).toHaveLength(4);
      expect(await page.getByRole('heading', { name: 'Override rules' }).count()).toBe(0);
      expect(await rulesTable(page).count()).toBe(0);
      await expectAccessible(page);

      await page.getByRole('region', { name: 'Your two-factor sign-in (TOTP)' }).waitFor();
      await page.getByRole('button', { name: 'Set up a TOTP' }).click();
      const totp = new TOTP({ secret: await page.getByLabel('TOTP secret').inputValue() });
      await page.getByLabel('Code from the app').fill(totp.generate());
      await page.getByRole('button', { name: 'Confirm TOTP' }).click();
      await page.getByText('The TOTP is enrolled').waitFor();

      // The next sign-in asks for a code; the one just used is spent, the next time step's is good.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Username').fill('sam');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('Code').fill(totp.generate({ timestamp: Date.now() + 30_000 }));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
    });
  });
});
