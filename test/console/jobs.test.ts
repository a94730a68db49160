// The console's jobs in real headless Chromium against a real `mailverify serve` on the mail lab (with a custom
// quality level and a custom classification name in its configuration): a pasted list submitted at the custom level,
// followed to completion, its classification chart read through its table, its breakdown, its entries filtered by
// status, both exports downloaded and read back, the job deleted; a CSV file imported by its second column without
// its header row, its entries paged; a workbook imported from its second sheet; a refused job's detail; the jobs
// list's live progress; the accessibility of every page (a phone's width too); sign-in, a new job and an export by
// keyboard only; and nothing refused by the CSP, no other origin, no page error.
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { CHROMIUM, needing } from '../lab/system-programs.js';
import { ROOT, ROOT_PASSWORD, expectAccessible, inPage, isFocused, screenshot, signIn, startConsoleLab, tabTo, withConsole, type ConsoleLab } from './console-lab.js';

// A browser test on a loaded machine takes its time: each has a minute and a half.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const { path: chromium, it } = needing(CHROMIUM, 'the console jobs pages in a browser');

const PASTED = [
  'ann@console-shop.com',
  'bob@console-shop.com',
  'cleo@console-shop.com',
  'nobody@console-shop.com',
  'anyone@console-open.com',
  'someone@console-nomail.com',
  'jane@gmial.com',
  'not an address',
];

/** A custom quality level and a custom classification name, from the server's configuration. */
const CONFIG = {
  qualityLevels: [{ id: 'Patient', displayName: 'Patient (slow servers)', passes: 2, passDelay: 100 }],
  classifications: { ServerIsCatchAll: 'Accepts all' },
};

interface Entry {
  readonly index: number;
  readonly inputData: string;
  readonly classification: string;
  readonly status: string;
  readonly suggestions?: string[];
}

let lab: ConsoleLab;
beforeAll(async () => {
  if (chromium !== null) lab = await startConsoleLab(chromium, { config: CONFIG });
}, 60_000);
afterAll(async () => {
  await lab?.close();
});

/** The job's entries as the REST interface answers them (root owns every job here). */
async function entriesOf(id: string, status?: string): Promise<Entry[]> {
  const answer = await lab.asRoot('GET', `/v2.7/email-validations/${id}/entries?waitTime=20000&limit=1000${status === undefined ? '' : `&status=${status}`}`);
  expect(answer.status).toBe(200);
  return answer.body.data;
}

function countBy(entries: readonly Entry[], key: (entry: Entry) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entry of entries) counts[key(entry)] = (counts[key(entry)] ?? 0) + 1;
  return counts;
}

/** The rows of a table's body, each as its cells' texts. */
async function bodyRows(page: Page, table: ReturnType<Page['getByRole']>): Promise<string[][]> {
  return table.locator('tbody tr').evaluateAll((rows) => rows.map((row) => [...(row as unknown as { cells: Iterable<{ textContent: string | null }> }).cells].map((cell) => (cell.textContent ?? '').trim())));
}

/** The job page's id, once the console went there after Verify. */
async function jobIdOf(page: Page): Promise<string> {
  await page.waitForURL(/#\/jobs\/[0-9a-f-]{36}$/);
  return /#\/jobs\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
}

/** Waits for the figure's table to count every entry of the job. */
async function completedCounts(page: Page, total: number): Promise<Record<string, number>> {
  const table = page.getByRole('figure', { name: 'Classifications' }).getByRole('table');
  let counts: Record<string, number> = {};
  await expect
    .poll(async () => {
      counts = Object.fromEntries((await bodyRows(page, table).catch(() => [])).map(([name, count]) => [name!, Number(count)]));
      return Object.values(counts).reduce((sum, count) => sum + count, 0);
    }, { timeout: 30_000 })
    .toBe(total);
  return counts;
}

async function download(page: Page, button: string): Promise<{ name: string; bytes: Buffer }> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
  return { name: file.suggestedFilename(), bytes: readFileSync((await file.path())!) };
}

async function sheetRows(bytes: Buffer): Promise<unknown[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(bytes as unknown as ExcelJS.Buffer);
  const rows: unknown[][] = [];
  workbook.worksheets[0]!.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
  return rows;
}

describe('a pasted list', () => {
  it('is verified, charted, broken down, filtered, exported both ways and deleted', { timeout: 90_000 }, async () => {
    await withConsole(lab, '', async (page) => {
      await signIn(page, ROOT, ROOT_PASSWORD);
      await page.getByRole('link', { name: 'New job' }).click();
      await page.getByLabel('Addresses').fill(PASTED.join('\n'));
      const quality = page.getByLabel('Quality');
      await quality.getByRole('option', { name: 'Patient (slow servers)' }).waitFor({ state: 'attached' });
      expect(await quality.getByRole('option').allTextContents()).toEqual(['Standard', 'High', 'Extreme', 'Patient (slow servers)']);
      expect(await quality.inputValue()).toBe('Standard');
      await quality.selectOption('Patient');
      await page.getByLabel('Deduplication').selectOption('Safe');
      await page.getByLabel('Name').fill('Pasted list');
      await page.getByLabel('Priority').fill('200');
      await expectAccessible(page);
      await screenshot(page, 'new-job');
      await page.getByRole('button', { name: 'Verify' }).click();
      const id = await jobIdOf(page);

      const entries = await entriesOf(id);
      expect(entries.map((entry) => entry.inputData)).toEqual(PASTED);
      const counts = await completedCounts(page, PASTED.length);
      expect(counts).toEqual(countBy(entries, (entry) => entry.classification));
      expect(counts['Accepts all']).toBe(1);
      await page.getByRole('heading', { name: 'Pasted list' }).waitFor();
      const overview = (await lab.asRoot('GET', `/v2.7/email-validations/${id}/overview`)).body;
      expect(overview).toMatchObject({ name: 'Pasted list', priority: 200, deduplication: 'Safe', quality: 'Patient' });

      // The breakdown: one row per status (and classification), with its count.
      const breakdown = await bodyRows(page, page.getByRole('table', { name: /^Breakdown/ }));
      expect(Object.fromEntries(breakdown.map(([status, classification, count]) => [`${status} ${classification}`, Number(count)]))).toEqual(countBy(entries, (entry) => `${entry.status} ${entry.classification}`));

      // Every entry, with its suggestions.
      const table = page.getByRole('table', { name: 'Entries' });
      await expect.poll(async () => (await bodyRows(page, table)).map((row) => row[1])).toEqual(PASTED);
      const suggested = entries.find((entry) => (entry.suggestions?.length ?? 0) > 0)!;
      expect(suggested.inputData).toBe('jane@gmial.com');
      await table.getByText(`Did you mean ${suggested.suggestions!.join(' or ')}?`).waitFor();
      await expectAccessible(page);
      await screenshot(page, 'job');
      // On a phone's width too: the wide tables scroll sideways, and keyboard users can scroll them.
      await page.setViewportSize({ width: 390, height: 800 });
      await expectAccessible(page);
      expect(await inPage(page, 'document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await page.setViewportSize({ width: 1200, height: 900 });

      // Filtered by a status: the table and both exports hold its entries only.
      await page.getByLabel('Status').selectOption('MailboxDoesNotExist');
      await expect.poll(async () => (await bodyRows(page, table)).map((row) => row[1])).toEqual(['nobody@console-shop.com']);
      const csv = await download(page, 'Export CSV');
      expect(csv.name).toBe(`${id}.csv`);
      const rows = parseCsv(csv.bytes.toString('utf8'), { columns: true }) as Record<string, string>[];
      expect(rows.map((row) => [row['inputData'], row['status'], row['classification']])).toEqual([['nobody@console-shop.com', 'MailboxDoesNotExist', 'Undeliverable']]);

      await page.getByLabel('Status').selectOption('Success');
      await expect.poll(async () => (await bodyRows(page, table)).map((row) => row[1])).toEqual(['ann@console-shop.com', 'bob@console-shop.com', 'cleo@console-shop.com']);
      const xlsx = await download(page, 'Export Excel');
      expect(xlsx.name).toBe(`${id}.xlsx`);
      const [header, ...cells] = await sheetRows(xlsx.bytes);
      const input = header!.indexOf('inputData');
      expect(cells.map((row) => row[input])).toEqual(['ann@console-shop.com', 'bob@console-shop.com', 'cleo@console-shop.com']);

      // Deleted at once, with no dialog to answer, then back to the jobs, where it is no more.
      const dialogs: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.waitForURL(/#\/jobs$/);
      expect(dialogs).toEqual([]);
      await page.getByRole('table', { name: 'Jobs' }).waitFor();
      expect(await page.getByRole('link', { name: 'Pasted list' }).count()).toBe(0);
      expect((await lab.asRoot('GET', `/v2.7/email-validations/${id}`)).status).toBe(410);
    });
  });
});

describe('a CSV file', () => {
  it('is imported by its second column without its header row, and its entries are paged', { timeout: 90_000 }, async () => {
    const addresses = Array.from({ length: 61 }, (_, i) => (i === 0 ? 'ann@console-shop.com' : `person${i}@console-shop.com`));
    const file = join(tmpdir(), `console-upload-${process.pid}.csv`);
    writeFileSync(file, ['name,email', ...addresses.map((address, i) => `Person ${i},${address}`)].join('\r\n'));
    await withConsole(lab, '#/new', async (page) => {
      await signIn(page, ROOT, ROOT_PASSWORD);
      await page.getByLabel('File').setInputFiles(file);
      await page.getByLabel('Column').fill('2');
      await page.getByLabel('First row is a header').check();
      await page.getByLabel('Name').fill('Uploaded list');
      await expectAccessible(page);
      await screenshot(page, 'new-job-file');
      await page.getByRole('button', { name: 'Verify' }).click();
      const id = await jobIdOf(page);
      await completedCounts(page, addresses.length);
      expect((await entriesOf(id)).map((entry) => entry.inputData)).toEqual(addresses);

      const table = page.getByRole('table', { name: 'Entries' });
      const inputs = async () => (await bodyRows(page, table)).map((row) => row[1]);
      const previous = page.getByRole('button', { name: 'Previous page' });
      const next = page.getByRole('button', { name: 'Next page' });
      await expect.poll(inputs).toEqual(addresses.slice(0, 50));
      expect(await previous.isDisabled()).toBe(true);
      await next.click();
      await expect.poll(inputs).toEqual(addresses.slice(50));
      expect(await next.isDisabled()).toBe(true);
      await previous.click();
      await expect.poll(inputs).toEqual(addresses.slice(0, 50));
      expect(await previous.isDisabled()).toBe(true);
    });
  });
});

describe('an Excel workbook', () => {
  it('is imported from its second sheet, second column, without its header row', { timeout: 60_000 }, async () => {
    const workbook = new ExcelJS.Workbook();
    workbook.addWorksheet('Notes').addRow(['not@console-shop.com', 'these are not the addresses']);
    const sheet = workbook.addWorksheet('Addresses');
    sheet.addRow(['Name', 'Email']);
    sheet.addRow(['Ann', 'ann@console-shop.com']);
    sheet.addRow(['Nobody', 'nobody@console-shop.com']);
    const file = join(tmpdir(), `console-upload-${process.pid}.xlsx`);
    await workbook.xlsx.writeFile(file);
    await withConsole(lab, '#/new', async (page) => {
      await signIn(page, ROOT, ROOT_PASSWORD);
      await page.getByLabel('File').setInputFiles(file);
      await page.getByLabel('Sheet').fill('2');
      await page.getByLabel('Column').fill('2');
      await page.getByLabel('First row is a header').check();
      await page.getByRole('button', { name: 'Verify' }).click();
      const id = await jobIdOf(page);
      await completedCounts(page, 2);
      expect((await entriesOf(id)).map((entry) => [entry.inputData, entry.status])).toEqual([
        ['ann@console-shop.com', 'Success'],
        ['nobody@console-shop.com', 'MailboxDoesNotExist'],
      ]);
    });
  });
});

describe('a refused job', () => {
  it("shows the problem document's detail", async () => {
    await withConsole(lab, '#/new', async (page) => {
      await signIn(page, ROOT, ROOT_PASSWORD);
      await page.getByLabel('Addresses').fill('ann@console-shop.com');
      await page.getByLabel('Priority').fill('300');
      await page.getByRole('button', { name: 'Verify' }).click();
      const refused = await lab.asRoot('POST', '/v2.7/email-validations', { json: { entries: [{ inputData: 'ann@console-shop.com' }], quality: 'Standard', deduplication: 'Off', priority: 300 } });
      expect(refused.status).toBe(400);
      await page.getByRole('alert').getByText(refused.body.detail, { exact: true }).waitFor();
      expect(page.url()).toMatch(/#\/new$/);
      await expectAccessible(page);
    });
  });
});

describe('the jobs list', () => {
  it('shows the progress of a job in progress, and its completion without a reload', { timeout: 60_000 }, async () => {
    await withConsole(lab, '#/jobs', async (page) => {
      await signIn(page, ROOT, ROOT_PASSWORD);
      const submitted = await lab.asRoot('POST', '/v2.7/email-validations', { json: { name: 'Slow list', quality: 'High', entries: [{ inputData: 'ann@console-shop.com' }, { inputData: 'held@console-slow.com' }] } });
      expect(submitted.status).toBe(202);
      await page.getByRole('link', { name: 'New job' }).click();
      await page.getByRole('link', { name: 'Jobs' }).click();
      const row = page.getByRole('table', { name: 'Jobs' }).getByRole('row').filter({ hasText: 'Slow list' });
      await row.getByRole('progressbar').waitFor();
      await expectAccessible(page);
      await screenshot(page, 'jobs');
      await row.getByText('Completed').waitFor({ timeout: 30_000 });
      expect(await row.getByRole('progressbar').count()).toBe(0);
    });
  });
});

describe('pages left', () => {
  it('stop asking for the progress of a job in progress', { timeout: 60_000 }, async () => {
    await withConsole(lab, '#/jobs', async (page) => {
      await signIn(page, ROOT, ROOT_PASSWORD);
      const submitted = await lab.asRoot('POST', '/v2.7/email-validations', { json: { name: 'Left behind', quality: 'High', entries: [{ inputData: 'held@console-slow.com' }] } });
      const id = submitted.body.overview.id as string;
      const asked: { url: string; after: 'list' | 'job' | null }[] = [];
      let left: 'list' | 'job' | null = null;
      page.on('request', (request) => asked.push({ url: request.url(), after: left }));

      await page.getByRole('link', { name: 'New job' }).click();
      await page.getByRole('link', { name: 'Jobs' }).click();
      await page.getByRole('table', { name: 'Jobs' }).getByRole('row').filter({ hasText: 'Left behind' }).getByRole('progressbar').waitFor();
      // Each page counts as left once the next one shows.
      await page.getByRole('link', { name: 'Left behind' }).click();
      await page.getByRole('heading', { level: 1, name: 'Left behind' }).waitFor();
      left = 'list';
      await page.getByRole('progressbar').waitFor();
      await page.getByRole('link', { name: 'New job' }).click();
      await page.getByRole('heading', { name: 'New job' }).waitFor();
      left = 'job';

      // The job completes after both pages were left: neither asked again in the meantime.
      const done = await lab.asRoot('GET', `/v2.7/email-validations/${id}/overview?waitTime=20000`);
      expect(done.body.status).toBe('Completed');
      const list = asked.filter(({ url }) => /\/email-validations\?limit=/.test(url));
      const overview = asked.filter(({ url }) => url.includes(`/email-validations/${id}/overview`));
      expect(list.length).toBeGreaterThan(0);
      expect(overview.length).toBeGreaterThan(0);
      expect(list.filter(({ after }) => after !== null)).toEqual([]);
      expect(overview.filter(({ after }) => after === 'job')).toEqual([]);
    });
  });
});

describe('by keyboard only', () => {
  it('signs in, submits a new job and exports it', { timeout: 60_000 }, async () => {
    await withConsole(lab, '', async (page) => {
      // The username field has the focus as the page opens.
      await page.getByLabel('Username').waitFor();
      expect(await isFocused(page.getByLabel('Username'))).toBe(true);
      await page.keyboard.type(ROOT);
      await page.keyboard.press('Tab');
      await page.keyboard.type(ROOT_PASSWORD);
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Sign out' }).waitFor();

      await tabTo(page, page.getByRole('link', { name: 'New job' }));
      await page.keyboard.press('Enter');
      await tabTo(page, page.getByLabel('Addresses'));
      await page.keyboard.type('ann@console-shop.com\nnobody@console-shop.com');
      await tabTo(page, page.getByLabel('Deduplication'));
      await page.keyboard.press('ArrowDown');
      await tabTo(page, page.getByRole('button', { name: 'Verify' }));
      await page.keyboard.press('Enter');
      const id = /#\/jobs\/([0-9a-f-]{36})$/.exec((await page.waitForURL(/#\/jobs\/[0-9a-f-]{36}$/), page.url()))![1]!;
      await page.getByRole('figure', { name: 'Classifications' }).waitFor();
      expect((await lab.asRoot('GET', `/v2.7/email-validations/${id}/overview`)).body.deduplication).toBe('Safe');

      const exportCsv = page.getByRole('button', { name: 'Export CSV' });
      await exportCsv.waitFor();
      await tabTo(page, exportCsv);
      const [file] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
      const rows = parseCsv(readFileSync((await file.path())!, 'utf8'), { columns: true }) as Record<string, string>[];
      expect(rows.map((row) => row['inputData'])).toEqual(['ann@console-shop.com', 'nobody@console-shop.com']);
    });
  });
});
