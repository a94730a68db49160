// The account's override rules in the store (packages/server/src/jobs/overrides.ts) on a real SQLite file: each
// distinct list kept once under its content key, the account's current list, a job's key kept with it (schema version
// 5, and the migration of a version 4 database), and the runner verifying a job with the list it was submitted with.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterAll, describe, expect, it } from 'vitest';
import { createVerifier } from '../../packages/mailverify/src/engine/verifier.js';
import { Jobs } from '../../packages/server/src/jobs/jobs.js';
import {
  CURRENT_OVERRIDES,
  accountOverrides,
  accountOverridesKey,
  readOverrideList,
  saveOverrideList,
  setAccountOverrides,
} from '../../packages/server/src/jobs/overrides.js';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import { newJob } from './new-job.js';

const dir = mkdtempSync(join(tmpdir(), 'mailverify-overrides-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;
const freshPath = () => join(dir, `store-${++count}.db`);

const RISKY = [{ match: '*@example.org', classification: 'Risky' }];
const VIP = [{ match: 'boss@example.org', classification: 'VIP' }, { match: '*@example.org', classification: 'Deliverable' }];

describe('override lists in the store', () => {
  it('keeps each distinct list once under the SHA-256 of its JSON; an empty list has no key', async () => {
    const store = await openSqliteStore(freshPath());
    try {
      const key = await saveOverrideList(store, RISKY);
      expect(key).toMatch(/^overrides:[0-9a-f]{64}$/);
      expect(await saveOverrideList(store, [{ ...RISKY[0]! }])).toBe(key);
      expect(await saveOverrideList(store, VIP)).not.toBe(key);
      expect(await readOverrideList(store, key!)).toEqual(RISKY);
      expect(await saveOverrideList(store, [])).toBeUndefined();
      await expect(readOverrideList(store, 'overrides:0000')).rejects.toThrow(/missing/);
    } finally {
      await store.close();
    }
  });

  it('the account\'s current list: none at first, set, replaced, emptied; kept across a reopening', async () => {
    const path = freshPath();
    let store = await openSqliteStore(path);
    expect(await accountOverrides(store)).toEqual([]);
    expect(await accountOverridesKey(store)).toBeUndefined();
    const first = await setAccountOverrides(store, RISKY);
    await setAccountOverrides(store, VIP);
    await store.close();
    store = await openSqliteStore(path);
    try {
      expect(await accountOverrides(store)).toEqual(VIP);
      // The list a job may still name stays.
      expect(await readOverrideList(store, first!)).toEqual(RISKY);
      await setAccountOverrides(store, []);
      expect(await accountOverrides(store)).toEqual([]);
      expect(await store.getSetting(CURRENT_OVERRIDES)).toBe('');
    } finally {
      await store.close();
    }
  });

  it('a job keeps the key of its list (schema version 5); a job without rules keeps none', async () => {
    const path = freshPath();
    let store = await openSqliteStore(path);
    const key = await saveOverrideList(store, RISKY);
    await store.createJob(newJob({ id: 'with-rules', overrides: key! }), [{ inputData: 'jo@example.org' }]);
    const draft = await store.draftJob();
    await draft.add([{ inputData: 'jo@example.org' }]);
    await draft.commit(newJob({ id: 'drafted', overrides: key! }));
    await store.createJob(newJob({ id: 'no-rules' }), [{ inputData: 'jo@example.org' }]);
    await store.close();
    store = await openSqliteStore(path);
    try {
      expect((await store.getJob('with-rules'))?.overrides).toBe(key);
      expect((await store.getJob('drafted'))?.overrides).toBe(key);
      expect(await store.getJob('no-rules')).not.toHaveProperty('overrides');
      expect((await store.listJobs({ sort: 'createdOn', limit: 10 })).data.map((job) => job.overrides)).toEqual([key, key, undefined]);
    } finally {
      await store.close();
    }
  });

  it('a database of schema version 4 gains the column: its jobs kept, without rules; new jobs keep theirs', async () => {
    const path = freshPath();
    const old = await openSqliteStore(path);
    await old.createJob(newJob({ id: 'kept-v4' }), [{ inputData: 'jo@example.org' }]);
    await old.close();
    // What version 4 looked like: no overrides column.
    const db = new Database(path);
    db.exec('ALTER TABLE jobs DROP COLUMN overrides; PRAGMA user_version = 4');
    db.close();
    const store = await openSqliteStore(path);
    try {
      const kept = await store.getJob('kept-v4');
      expect(kept?.noOfEntries).toBe(1);
      expect(kept).not.toHaveProperty('overrides');
      const key = await saveOverrideList(store, RISKY);
      await store.createJob(newJob({ id: 'new-v5', overrides: key! }), []);
      expect((await store.getJob('new-v5'))?.overrides).toBe(key);
    } finally {
      await store.close();
    }
    const check = new Database(path);
    expect(check.pragma('user_version')).toEqual([{ user_version: 5 }]);
    check.close();
  });
});

describe('the runner verifies a job with its own list', () => {
  it('whatever the account\'s list became, also in a runner opened after a restart', async () => {
    const path = freshPath();
    // Syntax checks only: the rules decide before any list or network stage.
    const open = async () => {
      const store = await openSqliteStore(path);
      const verifier = createVerifier({ checks: 'syntax' });
      const jobs = await Jobs.open({ store, verifier, flushIntervalMs: 10 });
      return { store, jobs, close: async () => (await jobs.close(), await verifier.close(), await store.close()) };
    };
    let fixture = await open();
    const riskyKey = await setAccountOverrides(fixture.store, RISKY);
    const vipKey = await saveOverrideList(fixture.store, VIP);
    const inputs = [{ inputData: 'boss@example.org' }, { inputData: 'jo@example.org' }, { inputData: 'jo@example.net' }];
    await fixture.jobs.submit(newJob({ id: 'risky-job', overrides: riskyKey! }), inputs);
    await fixture.jobs.waitForEnd('risky-job', 10_000);
    await setAccountOverrides(fixture.store, []);
    await fixture.close();
    // A job left InProgress with its key (as a stop before it ran leaves one) runs with that list after the restart.
    const store = await openSqliteStore(path);
    await store.createJob(newJob({ id: 'vip-job', overrides: vipKey! }), inputs);
    await store.close();
    fixture = await open();
    try {
      await fixture.jobs.waitForEnd('vip-job', 10_000);
      const entries = async (id: string) => (await fixture.store.entries(id, { limit: 10 })).data.map((e) => [e.status, e.classification]);
      expect(await entries('risky-job')).toEqual([['OverrideMatch', 'Risky'], ['OverrideMatch', 'Risky'], ['Success', 'Deliverable']]);
      expect(await entries('vip-job')).toEqual([['OverrideMatch', 'VIP'], ['OverrideMatch', 'Deliverable'], ['Success', 'Deliverable']]);
    } finally {
      await fixture.close();
    }
  });
});
