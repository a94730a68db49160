// The SQLite job store on real database files in a temporary folder: the shared JobStore suite (job-store-suite.ts),
// then what is SQLite's own: the file's mode and schema versions, what an opening finishes after a stopped process,
// and a writer killed with SIGKILL in the middle of saving results.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import Database from 'libsql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore, SqliteJobStore } from '../../packages/server/src/jobs/sqlite-store.js';
import type { JobStore } from '../../packages/server/src/jobs/types.js';
import { createAnswered, describeJobStore, entryFor, inputsOf, newJob } from './job-store-suite.js';

const dir = mkdtempSync(join(tmpdir(), 'mailverify-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
const freshPath = () => join(dir, `jobs-${++fileCount}.db`);

const open: JobStore[] = [];
async function openStore(path = freshPath(), options?: Parameters<typeof openSqliteStore>[1]): Promise<JobStore> {
  const store = await openSqliteStore(path, options);
  open.push(store);
  return store;
}
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

describeJobStore('the SQLite store', {
  fresh: freshPath,
  open: (path) => openSqliteStore(path),
  duplicateId: /UNIQUE constraint failed: jobs\.id/,
});

describe('an unfinished creation', () => {
  it('removes, at the next opening, a job whose creation a stopped process left unfinished', async () => {
    const path = freshPath();
    const store = await openStore(path);
    await store.createJob(newJob('whole'), inputsOf(3));
    await store.close();
    // What a process killed in the middle of a creation leaves: the job row still Creating, some of its inputs.
    const raw = new Database(path);
    raw.exec(`INSERT INTO jobs (id, owner, client_ip, quality, deduplication, interface, created_on, status, no_of_entries)
              VALUES ('half', 'owner-1', '192.0.2.7', 'Standard', 'Off', 'v2', '2025-03-01T10:00:00.000Z', 'Creating', 50000)`);
    raw.exec(`INSERT INTO entries (job, idx, input_data) SELECT (SELECT sequence FROM jobs WHERE id = 'half'), value, 'x@example.org'
              FROM generate_series(0, 19999)`);
    raw.close();
    const reopened = await openStore(path);
    expect(await reopened.getJob('half')).toBeNull();
    expect((await reopened.unfinishedJobs()).map((j) => j.id)).toEqual(['whole']);
    const check = new Database(path);
    expect((check.prepare('SELECT count(*) AS n FROM entries').get() as { n: number }).n).toBe(3);
    expect((check.prepare(`SELECT count(*) AS n FROM jobs WHERE id = 'half'`).get() as { n: number }).n).toBe(0);
    check.close();
  });
});

describe('the file', () => {
  it('opens in WAL mode at the current schema version, and refuses a database from a newer version', async () => {
    const path = freshPath();
    await (await openSqliteStore(path)).close();
    // Readable by its owner only: the settings hold secrets.
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    const db = new Database(path);
    expect(db.pragma('journal_mode')).toEqual([{ journal_mode: 'wal' }]);
    expect(db.pragma('user_version')).toEqual([{ user_version: 5 }]);
    db.exec('PRAGMA user_version = 6');
    db.close();
    await expect(openSqliteStore(path)).rejects.toThrow(/schema version 6/);
  });

  it('a database of schema version 3 gains the credit tables: an empty balance, its jobs kept', async () => {
    const path = freshPath();
    const old = await openSqliteStore(path);
    await old.createJob(newJob('kept-v3'), [{ inputData: 'jo@example.org' }]);
    await old.close();
    const db = new Database(path);
    db.exec('ALTER TABLE jobs DROP COLUMN overrides; DROP TABLE credit_balance; DROP TABLE credit_days; DROP TABLE credit_reservations; PRAGMA user_version = 3');
    db.close();
    const store = await openSqliteStore(path);
    expect((await store.getJob('kept-v3'))?.noOfEntries).toBe(1);
    expect(await store.creditBalance('2026-01-01')).toEqual({ packs: 0, freeUsed: 0 });
    expect(await store.addCreditPacks(2_500_000)).toBe(2_500_000);
    await store.close();
    const check = new Database(path);
    expect(check.pragma('user_version')).toEqual([{ user_version: 5 }]);
    check.close();
  });

  it('finishes ending a job whose entries were left when the process stopped', async () => {
    const path = freshPath();
    const store = await openSqliteStore(path);
    await createAnswered(store, 'job-a', 30, (i) => i < 10);
    await createAnswered(store, 'job-b', 5);
    await store.close();
    // The state endJob leaves between its two steps: a tombstone that still has entries.
    const db = new Database(path);
    db.exec(`UPDATE jobs SET status = 'Deleted', ended_on = '2025-03-02T00:00:00.000Z' WHERE id = 'job-a'`);
    expect(db.prepare(`SELECT count(*) AS n FROM entries`).all()).toEqual([{ n: 35 }]);
    db.close();
    // Opened without finishing the ending: the tombstone takes no results although its inputs are still there.
    const unfinished = new SqliteJobStore(path);
    expect(await unfinished.saveResults('job-a', [entryFor(20, { inputData: 'user20@example.org' })])).toBe(0);
    expect(await unfinished.getJob('job-a')).toMatchObject({ status: 'Deleted', noOfCompleted: 10 });
    await unfinished.close();
    await (await openSqliteStore(path)).close();
    const after = new Database(path);
    expect(after.prepare(`SELECT count(*) AS n FROM entries`).all()).toEqual([{ n: 5 }]);
    after.close();
  });
});

describe('a writer killed with SIGKILL', () => {
  const batch = 250;
  let child: string;
  beforeAll(async () => {
    // The child process runs the store's own code, bundled; libsql stays a package, found through NODE_PATH.
    const entry = join(dir, 'child.ts');
    writeFileSync(
      entry,
      `import { openSqliteStore } from ${JSON.stringify(resolve('packages/server/src/jobs/sqlite-store.ts'))};
       const [path, synchronous] = process.argv.slice(2);
       (async () => {
         const store = await openSqliteStore(path, { synchronous });
         const count = 100_000;
         const inputs = Array.from({ length: count }, (_, i) => ({ inputData: 'user' + i + '@example.org' }));
         await store.createJob({ id: 'job-k', owner: 'o', clientIP: '192.0.2.1', quality: 'Standard', deduplication: 'Off',
           interface: 'v2', createdOn: '2025-03-01T10:00:00.000Z' }, inputs);
         for (let start = 0; ; start += ${batch}) {
           const entries = [];
           for (let i = start; i < start + ${batch}; i++) entries.push({ index: i, inputData: inputs[i].inputData,
             classification: 'Deliverable', status: 'Success', emailAddress: inputs[i].inputData, completedOn: '2025-03-01T10:00:01.000Z' });
           await store.saveResults('job-k', entries);
           process.stdout.write('saved ' + (start + ${batch}) + '\\n');
         }
       })();`,
    );
    child = join(dir, 'child.cjs');
    await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', packages: 'external', outfile: child, logLevel: 'warning' });
  });

  for (const synchronous of ['FULL', 'NORMAL'] as const) {
    it(`keeps every committed batch and no part of the one it was in (synchronous ${synchronous})`, async () => {
      const path = freshPath();
      const process_ = spawn(process.execPath, [child, path, synchronous], {
        env: { ...process.env, NODE_PATH: resolve('node_modules') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let acknowledged = 0;
      let errors = '';
      process_.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
      const killed = new Promise<NodeJS.Signals | null>((resolveExit) => process_.on('exit', (_code, signal) => resolveExit(signal)));
      await new Promise<void>((resolveKill, reject) => {
        let buffered = '';
        process_.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString();
          const lines = buffered.split('\n');
          buffered = lines.pop()!;
          for (const line of lines) acknowledged = Number(line.split(' ')[1]);
          // Kill while it writes, some batches in.
          if (acknowledged >= 40 * batch && process_.exitCode === null && !process_.killed) {
            process_.kill('SIGKILL');
            resolveKill();
          }
        });
        process_.on('exit', () => reject(new Error(`child exited before the kill: ${errors}`)));
      });
      expect(await killed).toBe('SIGKILL');

      const store = await openStore(path);
      const job = (await store.getJob('job-k'))!;
      expect(job.noOfEntries).toBe(100_000);
      // Whole batches only, at least every acknowledged one, and the count agrees with the entries.
      expect(job.noOfCompleted % batch).toBe(0);
      expect(job.noOfCompleted).toBeGreaterThanOrEqual(acknowledged);
      const page = await store.entries('job-k', { after: job.noOfCompleted - 2, limit: 10 });
      expect(page).toMatchObject({ more: false });
      expect(page.data.map((entry) => entry.index)).toEqual([job.noOfCompleted - 1]);
      const pending = await store.pendingInputs('job-k', -1, 1);
      expect(pending).toEqual([{ index: job.noOfCompleted, inputData: `user${job.noOfCompleted}@example.org` }]);
      let answered = 0;
      for (let after = -1; ; ) {
        const chunk = await store.entries('job-k', { after, limit: 1000 });
        for (const entry of chunk.data) expect(entry.index).toBe(answered++);
        if (!chunk.more) break;
        after = chunk.data.at(-1)!.index;
      }
      expect(answered).toBe(job.noOfCompleted);
    });
  }
});
