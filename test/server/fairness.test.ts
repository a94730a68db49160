// Fair scheduling on a slow exchanger through a real listening server (docs/verification.md#batches): a job of 30
// addresses at priority 0, then a job of one address at priority 255 on the same exchanger, which answers each RCPT
// after 1.5 s as tarpitting servers do. The small job completes after a few RCPT delays, not after the list; the list
// still completes, over no more connections than the per-exchanger cap.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../packages/server/src/server/app.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

const PASSWORD = 'a fairness password';
const headers = { authorization: `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' };
const RCPT_DELAY_MS = 1500;
const LIST_LENGTH = 30;
const CAP = 3;

let lab: MailLab;
let dir: string;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: { tarpit: { mailboxes: ['alice', ...Array.from({ length: LIST_LENGTH }, (_, i) => `user${i}`)], delayMs: { rcpt: RCPT_DELAY_MS } } },
    domains: { 'list-tarpit.com': ['tarpit'], 'signup-tarpit.com': ['tarpit'] },
  });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-fairness-'));
});

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(origin: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${origin}${path}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Submits a job and resolves once it has completed, with the time it took and its entries. */
async function run(origin: string, entries: string[], priority: number): Promise<{ tookMs: number; statuses: string[] }> {
  const started = performance.now();
  const submitted = await call(origin, 'POST', '/v2.7/email-validations', { entries: entries.map((inputData) => ({ inputData })), priority });
  expect(submitted.status).toBe(202);
  let done = await call(origin, 'GET', `/v2.7/email-validations/${submitted.body.overview.id}?waitTime=30000`);
  while (done.body.overview.status === 'InProgress') done = await call(origin, 'GET', `/v2.7/email-validations/${submitted.body.overview.id}?waitTime=30000`);
  expect(done.body.overview.status).toBe('Completed');
  return { tookMs: performance.now() - started, statuses: done.body.entries.data.map((e: any) => e.status) };
}

describe('two jobs on a slow exchanger', () => {
  it('the later job of a higher priority completes within a few RCPT delays, and the list within 22 s', async () => {
    lab.reset();
    const app = await createServer({
      dataDir: join(dir, 'data'),
      rootUsername: 'root',
      rootPassword: PASSWORD,
      verifier: labVerifierOptions(lab, { smtp: { maxConnectionsPerExchanger: CAP } }, { connectTimeoutMs: 10_000, commandTimeoutMs: 10_000 }),
    });
    try {
      const origin = await app.listen({ host: '127.0.0.1', port: 0 });
      const list = run(origin, Array.from({ length: LIST_LENGTH }, (_, i) => `user${i}@list-tarpit.com`), 0);
      await sleep(2000);
      const signup = await run(origin, ['alice@signup-tarpit.com'], 255);
      const a = await list;
      expect(signup.statuses).toEqual(['Success']);
      expect(a.statuses).toEqual(Array(LIST_LENGTH).fill('Success'));
      // The signup's RCPT and its domain's catch-all probe, each after at most one round of the list's: 6 s.
      expect(signup.tookMs).toBeLessThan(4 * RCPT_DELAY_MS);
      expect(a.tookMs).toBeLessThan(22_000);
      expect(lab.stats('tarpit').maxConcurrent).toBeLessThanOrEqual(CAP);
    } finally {
      await app.close();
    }
  }, 60_000);
});
