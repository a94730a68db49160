// The SQLite store on a small tmpfs filled by a ballast file: a write refused for the full disk (SQLITE_FULL) rejects
// with StorageFullError and leaves the database as it was; the store says once that the disk is full and once that it
// can be written again; what a refused write left to do (a creation cut short) is finished when space comes back.
//
// Mounting a tmpfs needs root (CI runs the tests as root). Where it cannot be mounted, the tests fail and say why.
import { mkdirSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/mailverify/src/engine/entry.js';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import { StorageFullError, type JobStore } from '../../packages/server/src/jobs/types.js';
import { fillDisk, mountTmpfs, readDatabase, tmpfsForTests, unmountTmpfs } from '../lab/full-disk.js';
import { newJob } from './new-job.js';

let dir: string;
let mountPoint: string;
let mounted = false;

const tmpfs = tmpfsForTests('the full-disk tests of the SQLite store');

beforeAll(() => {
  if (!tmpfs.available) return;
  dir = mkdtempSync(join(tmpdir(), 'mailverify-store-full-'));
  mountPoint = join(dir, 'data');
  mountTmpfs(mountPoint, '8M');
  mounted = true;
});

afterAll(() => {
  if (mounted) unmountTmpfs(mountPoint);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Counts of rows in the database file (read in a child process). */
function rowCounts(file: string): { jobs: number; entries: number; integrity: string } {
  return readDatabase(
    file,
    `const count = (table) => db.prepare('SELECT COUNT(*) AS n FROM ' + table).get().n;
    const [{ integrity_check: integrity }] = db.pragma('integrity_check');
    answer({ jobs: count('jobs'), entries: count('entries'), integrity });`,
  );
}

function result(index: number, inputData: string): Entry {
  return { index, inputData, classification: 'Deliverable', status: 'Success', completedOn: '2026-01-01T00:00:00.000Z' } as Entry;
}

async function withStore(name: string, test: (store: JobStore, file: string, events: string[]) => Promise<void>): Promise<void> {
  const folder = join(mountPoint, name);
  mkdirSync(folder);
  const file = join(folder, 'mailverify.db');
  const events: string[] = [];
  const store = await openSqliteStore(file, {
    onStorageFull: (error) => events.push(`full: ${(error as { code?: string }).code}`),
    onStorageWritable: () => events.push('writable'),
  });
  try {
    await test(store, file, events);
  } finally {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

tmpfs.describe('SqliteJobStore on a full disk', () => {
  it('refuses a write with StorageFullError and keeps the database as it was; says once when it is full, once when it is not', async () => {
    await withStore('refused', async (store, file, events) => {
      const inputs = Array.from({ length: 200 }, (_, i) => ({ inputData: `user${i}@example.com` }));
      const job = await store.createJob(newJob({ id: '00000000-0000-4000-8000-000000000001' }), inputs);
      await store.saveResults(job.id, [result(0, inputs[0]!.inputData)]);
      const ballast = join(mountPoint, 'ballast');
      fillDisk(ballast);
      const results = inputs.map((input, i) => result(i, input.inputData)).slice(1);
      await expect(store.saveResults(job.id, results)).rejects.toBeInstanceOf(StorageFullError);
      await expect(store.saveResults(job.id, results)).rejects.toThrow(/full/);
      await expect(store.endJob(job.id, 'Deleted', '2026-01-01T00:00:01.000Z')).rejects.toBeInstanceOf(StorageFullError);
      await expect(store.createJob(newJob({ id: '00000000-0000-4000-8000-000000000002' }), inputs)).rejects.toBeInstanceOf(StorageFullError);
      expect(events).toEqual(['full: SQLITE_FULL']);
      // Nothing of the refused writes: the job as it was, one result, no second job.
      expect(await store.getJob(job.id)).toMatchObject({ status: 'InProgress', noOfCompleted: 1 });
      expect((await store.entries(job.id, { limit: 1000 })).data.map((entry) => entry.index)).toEqual([0]);
      expect(await store.getJob('00000000-0000-4000-8000-000000000002')).toBeNull();

      unlinkSync(ballast);
      expect(await store.saveResults(job.id, results)).toBe(199);
      expect(events).toEqual(['full: SQLITE_FULL', 'writable']);
      expect(await store.getJob(job.id)).toMatchObject({ noOfCompleted: 200 });
      await store.close();
      expect(rowCounts(file)).toEqual({ jobs: 1, entries: 200, integrity: 'ok' });
    });
  });

  it('removes a job whose creation a full disk cut short once writes succeed again', async () => {
    await withStore('creation', async (store, file) => {
      // Room for the job and some of its inputs (written 20,000 a transaction), not for all of them.
      const inputs = Array.from({ length: 200_000 }, (_, i) => ({ inputData: `someone.with.a.long.name${i}@example.com` }));
      const ballast = join(mountPoint, 'ballast');
      fillDisk(ballast, 1536 * 1024);
      await expect(store.createJob(newJob({ id: '00000000-0000-4000-8000-000000000003' }), inputs)).rejects.toBeInstanceOf(StorageFullError);
      expect(await store.getJob('00000000-0000-4000-8000-000000000003')).toBeNull();
      // Unseen, but there: its removal needs room too.
      const cut = rowCounts(file);
      expect(cut.jobs).toBe(1);
      expect(cut.entries).toBeGreaterThan(0);

      unlinkSync(ballast);
      // The first write that succeeds finishes the removal, a batch at a time after it.
      await store.setSetting('probe', 'written');
      let counts = rowCounts(file);
      for (const giveUp = Date.now() + 10_000; counts.jobs > 0 || counts.entries > 0; counts = rowCounts(file)) {
        if (Date.now() > giveUp) throw new Error(`the cut creation is still there: ${JSON.stringify(counts)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(counts).toEqual({ jobs: 0, entries: 0, integrity: 'ok' });
    });
  });
});
