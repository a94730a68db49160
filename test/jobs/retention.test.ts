// Retention on a real SQLite file with jobs run offline: a completed job is purged (entries gone, Expired tombstone)
// within a minute after its retention ends, its own or the default; tombstones go 30 days after their end; all of it
// through a restart too. Time is a ManualClock moved forward by the tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newJob } from './new-job.js';
import { createVerifier } from '../../packages/mailverify/src/index.js';
import { Jobs } from '../../packages/server/src/jobs/jobs.js';
import { PURGE_INTERVAL_MS, RetentionPurger } from '../../packages/server/src/jobs/retention.js';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import type { JobRecord, JobStore, NewJob } from '../../packages/server/src/jobs/types.js';
import { ManualClock } from './manual-clock.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const DEFAULT_RETENTION_MS = 30 * DAY;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-retention-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Fixture {
  store: JobStore;
  jobs: Jobs;
  purger: RetentionPurger;
  errors: unknown[];
  close(): Promise<void>;
}

async function open(path: string, clock: ManualClock): Promise<Fixture> {
  const store = await openSqliteStore(path);
  const verifier = createVerifier({ checks: 'syntax' });
  const jobs = await Jobs.open({ store, verifier, clock, flushIntervalMs: 10 });
  const errors: unknown[] = [];
  const purger = new RetentionPurger({ store, clock, defaultRetentionMs: DEFAULT_RETENTION_MS, onError: (error) => errors.push(error) });
  purger.start();
  await purger.settled();
  let closed = false;
  const fixture: Fixture = {
    store,
    jobs,
    purger,
    errors,
    async close() {
      if (closed) return;
      closed = true;
      await purger.close();
      await jobs.close();
      await verifier.close();
      await store.close();
    },
  };
  cleanups.push(() => fixture.close());
  return fixture;
}

/** A completed job of three entries, at the clock's time. */
async function completed(fixture: Fixture, overrides: Partial<NewJob> = {}): Promise<JobRecord> {
  const job = await fixture.jobs.submit(
    newJob(overrides),
    [{ inputData: 'jo@example.org' }, { inputData: 'no-at-sign' }, { inputData: 'ann@example.org' }],
  );
  await fixture.jobs.waitForEnd(job.id, 10_000);
  const done = await fixture.store.getJob(job.id);
  expect(done?.status).toBe('Completed');
  return done!;
}

/** Moves the clock to `time` and waits for the purge rounds that fell due. */
async function advanceTo(clock: ManualClock, purger: RetentionPurger, time: number): Promise<void> {
  clock.advanceTo(time);
  await purger.settled();
  // A round whose next one fell due while it ran starts on the next turn of the event loop.
  await new Promise((resolve) => setImmediate(resolve));
  await purger.settled();
}

async function entryCount(store: JobStore, id: string): Promise<number> {
  return (await store.entries(id, { limit: 1_000 })).data.length;
}

describe('retention', () => {
  it('purges a completed job within a minute after its own retention ends: entries gone, an Expired tombstone', async () => {
    const clock = new ManualClock();
    const fixture = await open(join(dir, 'own.db'), clock);
    const short = await completed(fixture, { retentionMs: HOUR });
    const kept = await completed(fixture);
    const completedAt = Date.parse(short.completedOn!);
    expect(completedAt).toBe(clock.now());
    expect(clock.timers()).toEqual([clock.now() + PURGE_INTERVAL_MS]);

    await advanceTo(clock, fixture.purger, completedAt + HOUR - 1);
    expect((await fixture.store.getJob(short.id))?.status).toBe('Completed');
    expect(await entryCount(fixture.store, short.id)).toBe(3);

    await advanceTo(clock, fixture.purger, completedAt + HOUR + MINUTE);
    const tombstone = await fixture.store.getJob(short.id);
    expect(tombstone).toMatchObject({ id: short.id, owner: 'owner-1', status: 'Expired' });
    // Ended at the round that found it, within the minute.
    const endedAt = Date.parse(tombstone!.endedOn!);
    expect(endedAt).toBeGreaterThanOrEqual(completedAt + HOUR);
    expect(endedAt).toBeLessThanOrEqual(completedAt + HOUR + MINUTE);
    expect(await entryCount(fixture.store, short.id)).toBe(0);
    // The job without its own retention has the default's: 30 days.
    expect((await fixture.store.getJob(kept.id))?.status).toBe('Completed');
    expect(await entryCount(fixture.store, kept.id)).toBe(3);
    expect(fixture.errors).toEqual([]);
  });

  it('the default retention is 30 days from completion; tombstones, expired or deleted, are removed 30 days after their end', async () => {
    const clock = new ManualClock();
    const fixture = await open(join(dir, 'default.db'), clock);
    const job = await completed(fixture);
    const deleted = await completed(fixture);
    const completedAt = Date.parse(job.completedOn!);
    clock.advance(DAY);
    await fixture.jobs.delete(deleted.id);
    const deletedAt = clock.now();

    await advanceTo(clock, fixture.purger, completedAt + DEFAULT_RETENTION_MS - 1);
    expect((await fixture.store.getJob(job.id))?.status).toBe('Completed');
    await advanceTo(clock, fixture.purger, completedAt + DEFAULT_RETENTION_MS + MINUTE);
    const expired = await fixture.store.getJob(job.id);
    expect(expired?.status).toBe('Expired');
    const expiredAt = Date.parse(expired!.endedOn!);

    // The deleted job's tombstone goes first (it ended a day after the other completed, 29 days before it expired).
    await advanceTo(clock, fixture.purger, deletedAt + 30 * DAY - 1);
    expect((await fixture.store.getJob(deleted.id))?.status).toBe('Deleted');
    await advanceTo(clock, fixture.purger, deletedAt + 30 * DAY + MINUTE);
    expect(await fixture.store.getJob(deleted.id)).toBeNull();
    expect((await fixture.store.getJob(job.id))?.status).toBe('Expired');

    await advanceTo(clock, fixture.purger, expiredAt + 30 * DAY + MINUTE);
    expect(await fixture.store.getJob(job.id)).toBeNull();
    expect(fixture.errors).toEqual([]);
  });

  it('through a restart: a job whose retention ended while the server was down is purged when it starts again', async () => {
    const clock = new ManualClock();
    const path = join(dir, 'restart.db');
    const before = await open(path, clock);
    const job = await completed(before, { retentionMs: 5 * MINUTE });
    await before.close();
    clock.advance(10 * MINUTE);
    expect(clock.timers()).toEqual([]);

    const after = await open(path, clock);
    expect((await after.store.getJob(job.id))?.status).toBe('Expired');
    expect(await entryCount(after.store, job.id)).toBe(0);
    // And its tombstone is removed 30 days later by the rounds of the new process.
    await advanceTo(clock, after.purger, clock.now() + 30 * DAY + MINUTE);
    expect(await after.store.getJob(job.id)).toBeNull();
  });

  it('through a restart: a job reopened before its retention ends is purged by the rounds of the new process', async () => {
    const clock = new ManualClock();
    const path = join(dir, 'reopen.db');
    const before = await open(path, clock);
    const job = await completed(before, { retentionMs: HOUR });
    const completedAt = Date.parse(job.completedOn!);
    await before.close();

    const after = await open(path, clock);
    expect((await after.store.getJob(job.id))?.status).toBe('Completed');
    await advanceTo(clock, after.purger, completedAt + HOUR + MINUTE);
    expect((await after.store.getJob(job.id))?.status).toBe('Expired');
  });

  it('refuses an interval over a minute, and a retention that is not a whole number of milliseconds', async () => {
    const store = await openSqliteStore(join(dir, 'options.db'));
    cleanups.push(() => store.close());
    expect(() => new RetentionPurger({ store, defaultRetentionMs: DAY, intervalMs: 2 * MINUTE })).toThrow(/intervalMs/);
    expect(() => new RetentionPurger({ store, defaultRetentionMs: 1.5 })).toThrow(/defaultRetentionMs/);
  });
});
