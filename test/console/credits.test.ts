// The console's Credits page in real headless Chromium against a real `mailverify serve` with credits on (5 free
// credits a day): root adds credit packs, jobs consume free credits then pack credits, and the page shows the balance
// and the daily usage as a Chart.js bar chart with its table; a Standard user that may read the balance sees it
// without the pack form, one without the usage permission reads why there is no chart, and one without credits rules
// is not offered Credits. Every page passes axe-core and nothing is refused or fetched from elsewhere.
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
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

const { path: chromium, it } = needing(CHROMIUM, 'the console credits page in a browser');

let lab: ConsoleLab;
beforeAll(async () => {
  if (chromium !== null) lab = await startConsoleLab(chromium, { flags: ['--credits', '--free-daily-credits', '5'] });
}, 60_000);
afterAll(async () => {
  await lab?.close();
});

const PASSWORD = 'a console credits password';

/** A job of `addresses` submitted as root, waited for until it completes. */
async function verify(addresses: readonly string[]): Promise<void> {
  let answer = await lab.asRoot('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: addresses.map((inputData) => ({ inputData })) } });
  const id: string = answer.body.overview.id;
  while (answer.status === 202) answer = await lab.asRoot('GET', `/v2.7/email-validations/${id}/overview?waitTime=30000`);
  expect(answer.status, answer.text).toBe(200);
}

describe('the console credits page', () => {
  it('shows root the balance and the daily usage, and adds credit packs', async () => {
    await withSignedInConsole(lab, '#/credits', [ROOT, ROOT_PASSWORD], async (page) => {
      expect(await offeredLinks(page)).toEqual(['Jobs', 'New job', 'Users', 'Credits', 'Settings']);
      const balance = page.getByRole('region', { name: 'Balance' });
      await balance.waitFor();
      expect(await balance.locator('dl').innerText()).toMatch(/Credit packs\s+0\s+Free credits left today\s+5\s+Free credits reset in\s+\d/);
      await page.getByText('No credits were used in the last 30 days.').waitFor();

      await page.getByLabel('Credits to add').fill('-3');
      await page.getByRole('button', { name: 'Add credits' }).click();
      const refused = await lab.asRoot('POST', '/v2.7/credits/packs', { json: { credits: -3 } });
      expect(refused.status).toBe(400);
      expect(await page.getByRole('alert').textContent()).toBe(refused.body.detail);
      await page.getByLabel('Credits to add').fill('10');
      await page.getByRole('button', { name: 'Add credits' }).click();
      await page.getByText('Added 10 credits.').waitFor();
      expect(await balance.getByText('Credit packs').locator('..').innerText()).toMatch(/Credit packs\s+10/);
      expect((await lab.asRoot('GET', '/v2.7/credits/balance')).body.creditPacks).toBe(10);

      // Three entries from the free credits, then four: two free, two from the packs.
      await verify(['ann@console-shop.com', 'bob@console-shop.com', 'nobody@console-shop.com']);
      await verify(['cleo@console-shop.com', 'any@console-open.com', 'ann@console-nomail.com', 'x@console-open.com']);
      await page.reload();
      await balance.waitFor();
      const now = (await lab.asRoot('GET', '/v2.7/credits/balance')).body;
      expect(now).toMatchObject({ creditPacks: 8, freeCredits: 0 });
      expect(await balance.locator('dl').innerText()).toMatch(/Credit packs\s+8\s+Free credits left today\s+0\s/);

      const figure = page.getByRole('figure', { name: 'Daily usage' });
      const usage = (await lab.asRoot('GET', '/v2.7/credits/daily-usage')).body.data;
      expect(usage).toHaveLength(1);
      const table = figure.getByRole('table', { name: 'Credits used each day' });
      await table.waitFor();
      expect(await table.locator('tbody tr').allInnerTexts()).toEqual([`${usage[0].date}\t5\t2\t7`]);
      // The chart is drawn: Chart.js sized its canvas and painted bars on it.
      const canvas = figure.locator('canvas[height]');
      await canvas.waitFor();
      const painted = await inPage<number>(page, `(() => { const c = document.querySelector('.bar-chart canvas'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++; return n; })()`);
      expect(painted).toBeGreaterThan(1000);
      await expectAccessible(page);
      await screenshot(page, 'credits');
    });
  });

  it('shows a Standard user that may read the balance and usage both, without the credit pack form', async () => {
    await createUser(lab, personBody('Standard', 'Bea Bookkeeper', 'bea', PASSWORD, ['email-validations:*:my', 'credits']));
    await withSignedInConsole(lab, '#/credits', ['bea', PASSWORD], async (page) => {
      expect(await offeredLinks(page)).toEqual(['Jobs', 'New job', 'Credits', 'Settings']);
      await page.getByRole('region', { name: 'Balance' }).waitFor();
      await page.getByRole('figure', { name: 'Daily usage' }).getByRole('table').waitFor();
      expect(await page.getByLabel('Credits to add').count()).toBe(0);
      await expectAccessible(page);
    });
  });

  it('tells a user that may read the balance only why there is no usage chart', async () => {
    await createUser(lab, personBody('Standard', 'Bo Balance', 'bo', PASSWORD, ['email-validations:*:my', 'credits:read-balance']));
    await withSignedInConsole(lab, '#/credits', ['bo', PASSWORD], async (page) => {
      await page.getByRole('region', { name: 'Balance' }).waitFor();
      const refused = await lab.asRoot('GET', '/v2.7/credits/daily-usage', { auth: `Basic ${Buffer.from(`bo:${PASSWORD}`).toString('base64')}` });
      expect(refused.status).toBe(403);
      await page.getByText(refused.body.detail).waitFor();
      expect(await page.getByRole('figure', { name: 'Daily usage' }).count()).toBe(0);
    });
  });

  it('does not offer Credits to a user without credits rules', async () => {
    await createUser(lab, personBody('Standard', 'Cy Nocredit', 'cy', PASSWORD, ['email-validations:*:my']));
    await withSignedInConsole(lab, '#/credits', ['cy', PASSWORD], async (page) => {
      expect(await offeredLinks(page)).toEqual(['Jobs', 'New job', 'Settings']);
      await page.getByRole('heading', { name: 'Not available' }).waitFor();
    });
  });
});
