// The job runner on a real SQLite file and the mail lab: jobs run on one shared verifier, results are written as they
// finish, a stopped runner leaves its jobs to the next one, and every entry is answered exactly once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newJob } from './new-job.js';
import type { Verifier } from '../../packages/mailverify/src/index.js';
import { Jobs } from '../../packages/server/src/jobs/jobs.js';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import type { JobInput, JobStore } from '../../packages/server/src/jobs/types.js';
import { labVerifier } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

let lab: MailLab;
let dir: string;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: {
      quick: { mailboxes: ['alice', 'bob'] },
      slow: { mailboxes: ['alice', 'bob'], delayMs: { rcpt: 400 } },
    },
    domains: { 'quick-job.com': ['quick'], 'slow-job.com': ['slow'], 'other-job.com': ['quick'] },
  });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-jobs-'));
});

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});


async function fixture(name: string): Promise<{ store: JobStore; verifier: Verifier; jobs: Jobs; close: () => Promise<void> }> {
  const store = await openSqliteStore(join(dir, `${name}.db`));
  const verifier = labVerifier(lab);
  const jobs = await Jobs.open({ store, verifier, flushIntervalMs: 20 });
  return {
    store,
    verifier,
    jobs,
    close: async () => {
      await jobs.close();
      await verifier.close();
      await store.close();
    },
  };
}

async function allEntries(store: JobStore, id: string) {
  const page = await store.entries(id, { limit: 100_000 });
  return page.data;
}

const inputs = (n: number, domain = 'quick-job.com'): JobInput[] =>
  Array.from({ length: n }, (_, i) => ({ inputData: `${['alice', 'bob', 'nobody'][i % 3]}@${domain}`, custom: `#${i}` }));

describe('Jobs', () => {
  it('runs a job to completion: every entry stored once with its job index, completedOn set', async () => {
    const { store, jobs, close } = await fixture('complete');
    try {
      const job = await jobs.submit(newJob(), inputs(30));
      expect(job).toMatchObject({ status: 'InProgress', noOfEntries: 30, noOfCompleted: 0 });
      await jobs.waitForEnd(job.id, 10_000);
      const done = await store.getJob(job.id);
      expect(done).toMatchObject({ status: 'Completed', noOfCompleted: 30 });
      expect(done!.completedOn).toMatch(/Z$/);
      const entries = await allEntries(store, job.id);
      expect(entries.map((e) => e.index)).toEqual([...Array(30).keys()]);
      expect(entries.map((e) => e.custom)).toEqual(inputs(30).map((i) => i.custom));
      expect(entries.filter((e) => e.status === 'MailboxDoesNotExist')).toHaveLength(10);
      expect(jobs.progress(job.id)).toBeUndefined();
    } finally {
      await close();
    }
  });

  it('reports progress while running, and waitForEnd returns at its deadline when the job is not done', async () => {
    const { jobs, close } = await fixture('progress');
    try {
      const job = await jobs.submit(newJob(), inputs(4, 'slow-job.com'));
      expect(jobs.progress(job.id)).toEqual({ percentage: 0 });
      const started = Date.now();
      await jobs.waitForEnd(job.id, 50);
      expect(Date.now() - started).toBeGreaterThanOrEqual(45);
      expect(jobs.progress(job.id)).toBeDefined();
      await jobs.waitForEnd(job.id, 10_000);
      expect(jobs.progress(job.id)).toBeUndefined();
    } finally {
      await close();
    }
  });

  it('delete stops a running job and leaves a tombstone without entries', async () => {
    const { store, jobs, close } = await fixture('delete');
    try {
      const job = await jobs.submit(newJob(), inputs(6, 'slow-job.com'));
      const tombstone = await jobs.delete(job.id);
      expect(tombstone).toMatchObject({ id: job.id, status: 'Deleted' });
      expect((await store.entries(job.id, { limit: 10 })).data).toEqual([]);
      expect(jobs.progress(job.id)).toBeUndefined();
      expect(await jobs.delete(randomUUID())).toBeNull();
    } finally {
      await close();
    }
  });

  it('a runner closed mid-job leaves it InProgress with what it finished; the next one completes it, each entry once', async () => {
    const first = await fixture('resume');
    const job = await first.jobs.submit(newJob({ deduplication: 'Safe' }), [
      ...inputs(6, 'quick-job.com'),
      ...inputs(6, 'slow-job.com'),
      { inputData: 'ALICE@quick-job.com' },
    ]);
    // Wait until the quick ones are written, then stop while the slow server holds its RCPTs.
    while ((await first.store.getJob(job.id))!.noOfCompleted < 6) await new Promise((r) => setTimeout(r, 10));
    await first.close();
    const midway = (await openSqliteStore(join(dir, 'resume.db')));
    const stopped = await midway.getJob(job.id);
    await midway.close();
    expect(stopped!.status).toBe('InProgress');
    expect(stopped!.noOfCompleted).toBeGreaterThanOrEqual(6);
    expect(stopped!.noOfCompleted).toBeLessThan(13);

    const second = await fixture('resume');
    try {
      await second.jobs.waitForEnd(job.id, 10_000);
      const done = await second.store.getJob(job.id);
      expect(done).toMatchObject({ status: 'Completed', noOfCompleted: 13 });
      const entries = await allEntries(second.store, job.id);
      expect(entries.map((e) => e.index)).toEqual([...Array(13).keys()]);
      // Duplicates are marked against originals answered before the restart too.
      expect(entries[3]).toMatchObject({ status: 'Duplicate', duplicateOf: 0 });
      expect(entries[12]).toMatchObject({ status: 'Duplicate', duplicateOf: 0, classification: 'Deliverable' });
      expect(entries[6]).toMatchObject({ status: 'Success', inputData: 'alice@slow-job.com' });
    } finally {
      await second.close();
    }
  });

  it('a resumed job marks a later copy of an address answered before the restart as its Duplicate', async () => {
    const store = await openSqliteStore(join(dir, 'settled.db'));
    const job = await store.createJob(newJob({ deduplication: 'Safe' }), [
      { inputData: 'alice@quick-job.com' },
      { inputData: 'bob@quick-job.com' },
      { inputData: 'ALICE@quick-job.com', custom: 'copy' },
    ]);
    // What a previous process stored before it was killed: entry 0's result (a catch-all verdict, to tell it apart).
    const earlier = { index: 0, inputData: 'alice@quick-job.com', classification: 'Risky', status: 'ServerIsCatchAll' as const, completedOn: '2026-01-01T00:00:00.000Z' };
    expect(await store.saveResults(job.id, [earlier])).toBe(1);
    await store.close();
    const { store: reopened, jobs, close } = await fixture('settled');
    try {
      await jobs.waitForEnd(job.id, 10_000);
      const entries = await allEntries(reopened, job.id);
      expect(entries.map((e) => [e.index, e.status, e.classification, e.duplicateOf, e.custom])).toEqual([
        [0, 'ServerIsCatchAll', 'Risky', undefined, undefined],
        [1, 'Success', 'Deliverable', undefined, undefined],
        [2, 'Duplicate', 'Risky', 0, 'copy'],
      ]);
      expect(entries[2]).toMatchObject({ emailAddress: 'ALICE@quick-job.com', isFreeEmailAddress: false });
    } finally {
      await close();
    }
  });

  it('runs many jobs at once on one verifier: they share its connections', async () => {
    const { store, jobs, close } = await fixture('shared');
    try {
      lab.reset();
      const submitted = await Promise.all(
        Array.from({ length: 5 }, (_, i) => jobs.submit(newJob({ priority: i * 50 }), inputs(12, i % 2 === 0 ? 'quick-job.com' : 'other-job.com'))),
      );
      await Promise.all(submitted.map((job) => jobs.waitForEnd(job.id, 10_000)));
      for (const job of submitted) expect((await store.getJob(job.id))!.status).toBe('Completed');
      // 60 addresses over two domains of one exchanger: a handful of sessions, not one per job or address.
      expect(lab.stats('quick').connections).toBeLessThanOrEqual(5);
    } finally {
      await close();
    }
  });
});
