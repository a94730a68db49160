// The web console on a cluster: two API processes (`mailverify serve`, one worker each) on one PostgreSQL schema and
// one Redis prefix, behind a round-robin balancer, so that the console's consecutive requests land on different
// processes. In headless Chromium, root signs in through the balancer, submits a pasted list, sees the job complete
// with its classifications, filters its entries and exports them: the token, the job and its results are the
// cluster's, not one process's.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startBalancer, type Balancer } from '../lab/balancer.js';
import { sharedBrowser, watchPage } from '../lab/browser.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { CHROMIUM, needing } from '../lab/system-programs.js';
import { ROOT_PASSWORD, clusterArgs } from './cluster-processes.js';
import { POSTGRES_URL, sql } from './postgres.js';
import { REDIS_URL } from './redis-helpers.js';

const chromium = needing(CHROMIUM, 'the console on a cluster (headless Chromium)');
const browser = sharedBrowser(() => chromium.path);
const SCHEMA = `mv_test_console_${randomBytes(5).toString('hex')}`;
const INPUTS = ['u0@console-cluster.com', 'u1@console-cluster.com', 'nobody@console-cluster.com'];

let lab: MailLab;
const apis: ServeProcess[] = [];
let balancer: Balancer;

beforeAll(async () => {
  lab = await startMailLab({ engine: 'raw', servers: { s0: { mailboxes: ['u0', 'u1'] } }, domains: { 'console-cluster.com': ['s0'] } });
  const args = clusterArgs(lab, POSTGRES_URL, REDIS_URL, ['--store-schema', SCHEMA, '--cluster-prefix', SCHEMA]);
  // One after the other: the first makes the schema's tables.
  for (let n = 0; n < 2; n++) apis.push(await startServe(['--workers', '1', ...args], { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD, MAILVERIFY_LOG_LEVEL: 'warn' }));
  balancer = await startBalancer(apis.map((api) => api.origin));
});

afterAll(async () => {
  await browser.close();
  await balancer?.close();
  for (const api of apis) await api.stop();
  await lab?.close();
  await sql('public', `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
});

async function signIn(page: Page): Promise<void> {
  await page.goto(`${balancer.origin}/`);
  await page.getByLabel('Username').fill('root');
  await page.getByLabel('Password').fill(ROOT_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'New job' }).waitFor();
}

/** The classification table of the job page: its rows as [classification, count]. */
async function classificationCounts(page: Page): Promise<Record<string, number>> {
  const rows = await page.getByRole('figure', { name: 'Classifications' }).getByRole('table').getByRole('row').allTextContents();
  const counts: Record<string, number> = {};
  for (const row of rows) {
    const match = /^\s*(Deliverable|Risky|Undeliverable|Unknown)\D*(\d+)\s*$/.exec(row);
    if (match !== null) counts[match[1]!] = Number(match[2]);
  }
  return counts;
}

describe('the console on a cluster, through a balancer', () => {
  chromium.it('signs in, submits a pasted list, sees it complete, filters and exports it', { timeout: 90_000 }, async () => {
    const context = await (await browser.get()).newContext({ acceptDownloads: true });
    const page = await context.newPage();
    const watched = watchPage(page, balancer.origin);
    try {
      await signIn(page);
      await page.getByRole('link', { name: 'New job' }).click();
      await page.getByLabel('Addresses').fill(INPUTS.join('\n'));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('figure', { name: 'Classifications' }).waitFor();
      await expect.poll(() => classificationCounts(page), { timeout: 60_000, interval: 500 }).toMatchObject({ Deliverable: 2, Undeliverable: 1 });

      await page.getByLabel('Status').selectOption('MailboxDoesNotExist');
      const entries = page.getByRole('table', { name: 'Entries' });
      await expect.poll(async () => (await entries.getByRole('row').allTextContents()).filter((row) => row.includes('@console-cluster.com'))).toEqual([
        expect.stringContaining('nobody@console-cluster.com'),
      ]);

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
      const csv = readFileSync(await download.path(), 'utf8');
      expect(csv).toContain('nobody@console-cluster.com');
      expect(csv).not.toContain('u0@console-cluster.com');

      // The balancer spread the console's requests over both processes.
      for (const api of apis) expect(balancer.served.get(api.origin)).toBeGreaterThan(2);
      expect(watched.errors).toEqual([]);
      expect(watched.refused).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
