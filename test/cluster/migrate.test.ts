// `mailverify migrate`, run from the build as a child process (`npm run test:cluster` builds dist/ first): a data
// folder made through the SQLite store's API (jobs completed, in progress, large, deleted and expired; users, one
// deleted; credits with an open reservation; settings; a callback already tried once) copied into a new PostgreSQL
// schema, where the PostgreSQL store finds everything as the SQLite one had it and goes on from there; a second copy
// into the same schema, a folder without a database and missing flags refused, with no password in any message.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MICRO } from '../../packages/server/src/accounts/credits.js';
import { UsernameTakenError } from '../../packages/server/src/accounts/types.js';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import type { JobStatus, ServiceStore } from '../../packages/server/src/jobs/types.js';
import { reservation } from '../accounts/credit-store-suite.js';
import { userRecord } from '../accounts/user-store-suite.js';
import { entryFor, inputsOf, newJob } from '../jobs/job-store-suite.js';
import { POSTGRES_URL, postgresSchemas, sql } from './postgres.js';

const cli = fileURLToPath(new URL('../../packages/mailverify/bin/mailverify.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mailverify-migrate-'));
const dataDir = join(dir, 'data');
const schemas = postgresSchemas();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function mailverify(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const ALL: JobStatus[] = ['InProgress', 'Completed', 'Deleted', 'Expired'];
const JOBS = ['job-done', 'job-running', 'job-large', 'job-deleted', 'job-expired'];

/** Everything a server reads from its store, through the store's API. */
async function contents(store: ServiceStore) {
  const jobs = await store.listJobs({ sort: 'createdOn', include: ALL, limit: 100 });
  const entries: Record<string, unknown[]> = {};
  const pending: Record<string, unknown[]> = {};
  for (const id of JOBS) {
    entries[id] = [];
    for (let after = -1; ; ) {
      const page = await store.entries(id, { after, limit: 1000 });
      entries[id].push(...page.data);
      if (!page.more) break;
      after = page.data.at(-1)!.index;
    }
    pending[id] = await store.pendingInputs(id, -1, 100_000);
  }
  return {
    jobs,
    entries,
    pending,
    users: await store.listUsers({ includeDeleted: true, sort: 'createdOn', offset: 0, limit: 100 }),
    alice: await store.userByUsername('ALICE'),
    balance: await store.creditBalance('2026-03-10'),
    usage: await store.dailyUsage({ limit: 100 }),
    callbacks: await store.dueCallbacks(Number.MAX_SAFE_INTEGER, 100),
    settings: await Promise.all(['root.id', 'secret', 'overrides:abc'].map((key) => store.getSetting(key))),
    totals: await store.jobTotals(),
  };
}

let before: Awaited<ReturnType<typeof contents>>;

beforeAll(async () => {
  mkdirSync(dataDir);
  const store = await openSqliteStore(join(dataDir, 'mailverify.db'));
  await store.addCreditPacks(100 * MICRO);
  // Completed: reserved, answered (one Duplicate), settled, its callback tried once and due again.
  expect(await store.reserveCredits(reservation('job-done', 3))).toBe('reserved');
  const done = inputsOf(3);
  await store.createJob(newJob('job-done', { callback: { url: 'https://hooks.example.org/done', version: '1.1', skipServerCertificateValidation: false } }), done);
  await store.saveResults('job-done', done.map((input, i) => entryFor(i, input, i === 2 ? 'Duplicate' : 'Success')));
  await store.completeJob('job-done', '2025-03-01T10:06:00.000Z', {
    jobId: 'job-done',
    url: 'https://hooks.example.org/done',
    skipServerCertificateValidation: false,
    idempotencyKey: 'key-done',
    body: '{"event":"completed"}',
    dueAt: 1_000,
  });
  const [callback] = await store.dueCallbacks(1_000, 1);
  await store.callbackAttempted(callback!.id, 1_000, 31_000);
  // In progress: its reservation open, half its entries answered.
  expect(await store.reserveCredits(reservation('job-running', 4, { freeDaily: MICRO }))).toBe('reserved');
  const running = inputsOf(4);
  await store.createJob(newJob('job-running', { name: 'running', priority: 10, overrides: 'overrides:abc' }), running);
  await store.saveResults('job-running', [entryFor(0, running[0]!), entryFor(3, running[3]!)]);
  // Larger than a chunk of the copy, in progress.
  const large = inputsOf(12_000);
  await store.createJob(newJob('job-large', { createdOn: '2025-03-01T11:00:00.000Z' }), large);
  await store.saveResults('job-large', large.slice(0, 7_000).map((input, i) => entryFor(i, input)));
  // Tombstones.
  await store.createJob(newJob('job-deleted'), inputsOf(2));
  await store.endJob('job-deleted', 'Deleted', '2025-03-02T00:00:00.000Z');
  await store.createJob(newJob('job-expired', { retentionMs: 60_000 }), inputsOf(1));
  await store.completeJob('job-expired', '2025-03-01T10:07:00.000Z');
  await store.endJob('job-expired', 'Expired', '2025-03-01T10:08:00.000Z');
  // Users: one with a password and a second factor, one deleted (its username free again), one without a username.
  await store.createUser(userRecord('u-alice', 'Alice', { passwordHash: '$argon2id$v=19$x', passwordVersion: 2, totp: { secret: 'ABCDEF', lastStep: 9 } }));
  await store.createUser(userRecord('u-bob', 'bob'));
  expect(await store.updateUser({ ...userRecord('u-bob', 'bob'), etag: 'u-bob-2', deletedOn: '2026-01-02T00:00:00.000Z' }, 'u-bob-1')).toBe(true);
  await store.createUser(userRecord('u-app', undefined, { createdOn: '2026-01-03T00:00:00.000Z' }));
  await store.setSetting('root.id', '6f1f3c1e-0000-4000-8000-000000000001');
  await store.setSetting('secret', 'the token secret');
  await store.setSetting('overrides:abc', '[{"match":"*@example.org","classification":"Deliverable"}]');
  before = await contents(store);
  await store.close();
});

describe('mailverify migrate', () => {
  const schema = schemas.fresh();

  it('copies a data folder into a new PostgreSQL schema and says what it copied', () => {
    const run = mailverify(['migrate', '--from', dataDir, '--store', POSTGRES_URL, '--store-schema', schema]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `mailverify: copied 5 jobs (12,007 entries), 3 users, 1 pending callback, 3 settings, credits: 95 in packs, 1 day of usage, 1 open reservation into the PostgreSQL schema ${schema}\n`,
    );
  });

  it('leaves the PostgreSQL store holding what the SQLite store held, and going on from there', async () => {
    const store = await schemas.open(schema);
    expect(await contents(store)).toEqual(before);
    // The job sequences were kept, and new jobs come after them; usernames are unique as before.
    const made = await store.createJob(newJob('job-new'), inputsOf(1));
    expect(made.sequence).toBeGreaterThan(Math.max(...before.jobs.data.map((job) => job.sequence)));
    await expect(store.createUser(userRecord('u-other', 'ALICE'))).rejects.toBeInstanceOf(UsernameTakenError);
    await store.createUser(userRecord('u-bob2', 'Bob'));
    // The running job's reservation came along: it is settled when the job completes (2 of 4 verified).
    expect(await store.settleReservations()).toBe(0);
    await store.completeJob('job-running', '2025-03-01T10:09:00.000Z');
    expect(await store.creditBalance('2026-03-10')).toEqual({ packs: 97 * MICRO, freeUsed: MICRO });
    // The callback keeps its attempts and due time.
    expect(await store.dueCallbacks(31_000, 10)).toEqual([{ ...before.callbacks[0], attempts: 1, firstAttemptAt: 1_000, dueAt: 31_000 }]);
  });

  it('refuses to copy into a schema that holds jobs or users, changing nothing, and names no password', async () => {
    const withPassword = POSTGRES_URL.replace('postgres://postgres@', 'postgres://postgres:hunter2-secret@');
    expect(withPassword).toContain('hunter2-secret');
    const run = mailverify(['migrate', '--from', dataDir, '--store', withPassword, '--store-schema', schema]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^mailverify: copying into the PostgreSQL schema ${schema}: the schema already holds jobs, users and credits: an import goes into an empty one\n$`));
    expect(run.stderr).not.toContain('hunter2');
    expect(run.stdout).toBe('');
    expect(await sql(schema, 'SELECT COUNT(*)::integer AS n FROM jobs')).toEqual([{ n: 6 }]);
  });

  it('refuses a folder without a database, and a command line without its folder or store', () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const missing = mailverify(['migrate', '--from', empty, '--store', POSTGRES_URL, '--store-schema', schemas.fresh()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`mailverify: ${empty}: not the data folder of a server (no mailverify.db in it)\n`);
    const noStore = mailverify(['migrate', '--from', dataDir]);
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toMatch(/--store: the PostgreSQL database to copy into is missing/);
    expect(mailverify(['migrate', '--store', POSTGRES_URL]).code).toBe(2);
    expect(mailverify(['migrate', '--from', dataDir, '--store', 'mysql://x']).stderr).toMatch(/postgres:\/\//);
    expect(mailverify(['migrate', '--help']).stdout).toMatch(/^Usage: mailverify migrate --from DIR/);
  });
});
