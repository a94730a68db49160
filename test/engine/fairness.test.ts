// Fair scheduling on a slow exchanger (docs/verification.md#batches), against a lab server that answers each RCPT
// after a delay, as tarpitting servers do: the waiting recipients spread over the connections the per-exchanger cap
// allows, a batch of a higher priority that comes later is answered after a few RCPT delays rather than after the
// whole list, and the list itself still finishes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/mailverify/src/index.js';
import { labVerifier } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

/** The tarpit's wait before each RCPT reply. */
const RCPT_DELAY_MS = 1500;
const LIST_LENGTH = 30;
const CAP = 3;

let lab: MailLab;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: { tarpit: { mailboxes: ['alice', ...Array.from({ length: LIST_LENGTH }, (_, i) => `user${i}`)], delayMs: { rcpt: RCPT_DELAY_MS } } },
    domains: { 'list-tarpit.com': ['tarpit'], 'signup-tarpit.com': ['tarpit'] },
  });
});

afterAll(async () => {
  await lab.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function timed(entries: AsyncIterable<Entry>): Promise<{ entries: Entry[]; doneAt: number }> {
  const out: Entry[] = [];
  for await (const entry of entries) out.push(entry);
  return { entries: out, doneAt: performance.now() };
}

describe('a slow exchanger', () => {
  it('spreads a list over its connections, and a later batch of a higher priority is answered within a few RCPT delays', async () => {
    lab.reset();
    const v = labVerifier(lab, { smtp: { maxConnectionsPerExchanger: CAP } }, { connectTimeoutMs: 10_000, commandTimeoutMs: 10_000 });
    try {
      const startedA = performance.now();
      const list = timed(v.verifyMany(Array.from({ length: LIST_LENGTH }, (_, i) => `user${i}@list-tarpit.com`), { priority: 0 }));
      await sleep(2000);
      const startedB = performance.now();
      const signup = await timed(v.verifyMany(['alice@signup-tarpit.com'], { priority: 255 }));
      const a = await list;

      expect(signup.entries.map((e) => e.status)).toEqual(['Success']);
      expect(a.entries).toHaveLength(LIST_LENGTH);
      expect(a.entries.every((e) => e.status === 'Success')).toBe(true);
      // The signup's RCPT and its domain's catch-all probe, each after at most one round of the list's on a session
      // (one RCPT each on this exchanger): four RCPT delays, 6 s.
      expect(signup.doneAt - startedB).toBeLessThan(4 * RCPT_DELAY_MS);
      // 30 recipients, two probes and the signup's RCPT over 3 connections: 11 RCPT delays each, plus the first
      // round's transaction of 10 before the pace was known; 22 s at most.
      expect(a.doneAt - startedA).toBeLessThan(22_000);
      expect(lab.stats('tarpit').maxConcurrent).toBeLessThanOrEqual(CAP);
      expect(lab.stats('tarpit').connections).toBeGreaterThan(1);
    } finally {
      await v.close();
    }
  }, 60_000);
});
