/**
 * The job store on an embedded SQLite database (the `libsql` package: SQLite with better-sqlite3's synchronous API).
 *
 * - One connection per store, in WAL mode: readers never wait for the writer, and a committed transaction is in the
 *   WAL before COMMIT returns, so killing the process (SIGKILL) loses nothing committed. `synchronous` is FULL by
 *   default, which also keeps the last transactions through a power loss (the WAL is synced at every commit);
 *   NORMAL (synced at checkpoints only) is an option.
 * - Jobs are numbered by `sequence` (the rowid, AUTOINCREMENT: never reused, so a listing cursor never points at a
 *   newer job). Entries are keyed by (job sequence, index): an integer key keeps the table and its indexes small.
 * - An entry's input is stored at creation; its result (the entry as JSON, without the fields kept in columns) when
 *   it is answered. The first result wins.
 * - Schema versions are `PRAGMA user_version`; MIGRATIONS[n] brings version n to n + 1.
 *
 * Every method runs synchronously on the connection and answers with a settled promise; SQLite errors reject with
 * SQLite's message.
 *
 * A full disk (SQLITE_FULL) rejects the write with a `StorageFullError`. SQLite has then rolled the transaction back
 * (https://sqlite.org/lang_transaction.html, "Response To Errors Within A Transaction"); frames of it already in the
 * WAL carry no commit mark and are never read, so the store stays as it was before the write. What a write
 * refused this way leaves to do (the entries of a deleted job, a job whose creation failed) is done by the first
 * write that succeeds after it.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import Database from 'libsql';
import { STATUS_CODES, nextTurn, type Entry } from 'mailverify/internal';
import { StorageFullError } from './types.js';
import {
  CREATING,
  JOB_STATUSES,
  LIVE_STATUSES,
  TOMBSTONE_STATUSES,
  checkAttemptTimes,
  checkCallbackEvent,
  checkEnding,
  checkIso,
  checkLimit,
  checkListQuery,
  checkRetention,
  jobValues,
  pageOf,
  resultValues,
  selectedStatuses,
  toCallbackDelivery,
  toEntry,
  toPendingInput,
  toRecord,
  type Row,
} from './store-rows.js';
import { UsernameTakenError, type UserListQuery, type UserRecord } from '../accounts/types.js';
import { sortUsers, storedUsernameKey } from '../accounts/listing.js';
import { usernameKey } from '../accounts/usernames.js';
import {
  MAX_BALANCE_MICRO,
  dayKey,
  monthOf,
  planReservation,
  settlement,
  type CreditStore,
  type DailyUsage,
  type DailyUsageQuery,
  type ReserveOutcome,
} from '../accounts/credits.js';
import type {
  CallbackDelivery,
  CallbackEvent,
  EntryFilter,
  EntryPageQuery,
  JobDraft,
  JobInput,
  JobListQuery,
  JobRecord,
  JobStatus,
  JobTotals,
  NewJob,
  Page,
  PendingInput,
  ServiceStore,
  StoreContents,
  StoredCredits,
  StoredEntry,
} from './types.js';

export interface SqliteStoreOptions {
  /**
   * FULL (default): a commit survives a power loss. NORMAL: faster commits; a commit survives the process being
   * killed, but a power loss may lose the transactions since the last checkpoint.
   */
  readonly synchronous?: 'FULL' | 'NORMAL';
  /** How long a statement waits for a lock held by another connection (milliseconds; default 5000). */
  readonly busyTimeoutMs?: number;
  /** Told once when a write is refused because the disk is full, with SQLite's error. */
  readonly onStorageFull?: (error: unknown) => void;
  /** Told once when a write succeeds after writes were refused for a full disk. */
  readonly onStorageWritable?: () => void;
}

/**
 * Schema migrations, in order: MIGRATIONS[n] takes the database from user_version n to n + 1. Add new versions at
 * the end (ALTER TABLE ... ADD COLUMN and the like); never change a released one.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE jobs (
    sequence        INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    owner           TEXT NOT NULL,
    client_ip       TEXT NOT NULL,
    name            TEXT,
    quality         TEXT NOT NULL,
    deduplication   TEXT NOT NULL,
    priority        INTEGER,
    retention_ms    INTEGER,
    callback        TEXT,
    interface       TEXT NOT NULL,
    created_on      TEXT NOT NULL,
    status          TEXT NOT NULL,
    no_of_entries   INTEGER NOT NULL,
    no_of_completed INTEGER NOT NULL DEFAULT 0,
    completed_on    TEXT,
    completed_at_ms INTEGER,
    ended_on        TEXT
  );
  -- A user's jobs, newest first (ties in creation order) forwards, oldest first backwards.
  CREATE INDEX jobs_by_owner_newest ON jobs (owner, created_on DESC, sequence);
  -- A user's jobs, oldest first forwards, newest first (ties in reverse creation order) backwards.
  CREATE INDEX jobs_by_owner_oldest ON jobs (owner, created_on, sequence);
  CREATE INDEX jobs_by_completion ON jobs (completed_at_ms) WHERE status = 'Completed';
  CREATE INDEX jobs_by_end ON jobs (ended_on) WHERE ended_on IS NOT NULL;

  -- A rowid table rather than WITHOUT ROWID: rows with a result are a few hundred bytes, too large for the
  -- clustered b-tree of a WITHOUT ROWID table to pay off (https://sqlite.org/withoutrowid.html, section 4).
  -- The primary key's index serves pages in index order and the scan for inputs without a result (no partial index
  -- on those: it would slow every insert and every saved result, to speed up a scan that the runner, reading on from
  -- where it was, makes once after a restart).
  CREATE TABLE entries (
    job        INTEGER NOT NULL REFERENCES jobs (sequence) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,
    input_data TEXT NOT NULL,
    custom     TEXT,
    status     TEXT,
    result     TEXT,
    PRIMARY KEY (job, idx)
  );
  -- Answered entries by status, in index order (filtered pages). Partial: inputs without a result cost nothing.
  CREATE INDEX entries_by_status ON entries (job, status, idx) WHERE status IS NOT NULL;

  CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  `
  -- Completion callbacks waiting to be delivered (one per job at most), with their delivery state. Times are
  -- milliseconds since the epoch. A row goes when it is delivered, given up, or its job ends or is purged.
  CREATE TABLE callback_outbox (
    id                          INTEGER PRIMARY KEY AUTOINCREMENT,
    job                         INTEGER NOT NULL UNIQUE REFERENCES jobs (sequence) ON DELETE CASCADE,
    url                         TEXT NOT NULL,
    skip_certificate_validation INTEGER NOT NULL,
    idempotency_key             TEXT NOT NULL,
    body                        TEXT NOT NULL,
    attempts                    INTEGER NOT NULL DEFAULT 0,
    first_attempt_at            INTEGER,
    due_at                      INTEGER NOT NULL
  );
  CREATE INDEX callback_outbox_by_due ON callback_outbox (due_at);
  `,
  `
  -- Users of the account: the record as JSON, with the columns looked up or kept unique beside it. A username is
  -- unique case-insensitively among users not deleted: username_key is its lower-cased form, NULL once deleted.
  CREATE TABLE users (
    sequence     INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    username_key TEXT,
    etag         TEXT NOT NULL,
    record       TEXT NOT NULL
  );
  CREATE UNIQUE INDEX users_by_username ON users (username_key) WHERE username_key IS NOT NULL;
  `,
  `
  -- Credits, in micro-credits (integers: sums stay exact). Days are yyyymmdd integers (UTC), in calendar order.
  -- The packs balance: one row.
  CREATE TABLE credit_balance (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    packs INTEGER NOT NULL
  );
  INSERT INTO credit_balance (id, packs) VALUES (1, 0);
  -- What each day consumed, open reservations included.
  CREATE TABLE credit_days (
    day   INTEGER PRIMARY KEY,
    free  INTEGER NOT NULL DEFAULT 0,
    packs INTEGER NOT NULL DEFAULT 0
  );
  -- Reservations of jobs not yet settled, by job id (the job may not be stored yet).
  CREATE TABLE credit_reservations (
    job_id     TEXT PRIMARY KEY,
    day        INTEGER NOT NULL,
    free       INTEGER NOT NULL,
    packs      INTEGER NOT NULL,
    unit_price INTEGER NOT NULL
  );
  `,
  `
  -- The settings key of the override rules a job was submitted with (NULL: none).
  ALTER TABLE jobs ADD COLUMN overrides TEXT;
  `,
];

/** Inputs inserted per statement when a job is created. */
const INSERT_ROWS = 100;

/**
 * Inputs inserted per transaction when a job is created; other work runs between two (a million inputs would hold
 * the event loop for a second in one). Until the last one, the job is `Creating`: invisible, never run, and removed
 * at the next opening if the process stopped in between (its submission was never answered).
 */
const CREATE_BATCH = 20_000;

/** Entries deleted per transaction when a job ends: keeps each pause of the event loop short. */
const DELETE_BATCH = 20_000;

/** Rows per chunk of an export: memory stays small whatever the store holds. */
const EXPORT_CHUNK = 5_000;


export async function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Promise<SqliteJobStore> {
  const store = new SqliteJobStore(path, options);
  try {
    await store.finishEndedJobs();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

export class SqliteJobStore implements ServiceStore {
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();
  readonly #options: SqliteStoreOptions;
  readonly #synchronous: 'FULL' | 'NORMAL';
  #closed = false;
  /** The last write was refused for a full disk. */
  #full = false;
  /** Jobs (by sequence) whose removal a full disk cut short: ended jobs' entries, creations that failed. */
  readonly #leftovers = new Set<number>();
  #tidying = false;

  /** Opens (creating or migrating) the database; `openSqliteStore` also finishes interrupted job endings. */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    const synchronous = options.synchronous ?? 'FULL';
    if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
      throw new TypeError(`synchronous: FULL or NORMAL, not ${String(synchronous)}`);
    }
    this.#options = options;
    this.#synchronous = synchronous;
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
      throw new TypeError('busyTimeoutMs: a non-negative integer');
    }
    // The settings hold secrets (the token signing key): a new database file is readable by its owner only, and
    // SQLite gives its WAL and shared-memory files the same permissions.
    if (path !== ':memory:' && !path.startsWith('file:')) closeSync(openSync(path, 'a', 0o600));
    this.#db = new Database(path);
    try {
      this.#db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      const [mode] = this.#db.pragma('journal_mode = WAL') as Row[];
      if (mode?.['journal_mode'] !== 'wal' && path !== ':memory:') {
        throw new Error(`${path}: WAL mode refused (${String(mode?.['journal_mode'])})`);
      }
      this.#db.exec(`PRAGMA synchronous = ${synchronous}; PRAGMA foreign_keys = ON;`);
      // After a large transaction (a job of a million inputs), the WAL is cut back to 64 MiB once checkpointed.
      this.#db.exec(`PRAGMA journal_size_limit = ${64 * 1024 * 1024}`);
      this.#migrate();
    } catch (error) {
      this.#db.close();
      throw error;
    }
  }

  async createJob(job: NewJob, inputs: readonly JobInput[]): Promise<JobRecord> {
    checkIso('createdOn', job.createdOn);
    const draft = await this.draftJob();
    try {
      await draft.add(inputs);
      return await draft.commit(job);
    } catch (error) {
      if (!this.#closed) await draft.discard();
      throw error;
    }
  }

  /**
   * A job row in the `Creating` state (invisible, never run, removed at the next opening if the process stops
   * first), filled with its inputs a transaction at a time and given its settings when committed.
   */
  async draftJob(): Promise<JobDraft> {
    const sequence = this.#write(() => {
      const { lastInsertRowid } = this.#statement(
        `INSERT INTO jobs (id, owner, client_ip, quality, deduplication, interface, created_on, status, no_of_entries)
         VALUES (?, '', '', '', '', '', '', '${CREATING}', 0)`,
      ).run([`creating:${randomUUID()}`]);
      return Number(lastInsertRowid);
    });
    let count = 0;
    let ended = false;
    const open = (): void => {
      if (ended) throw new Error('the job draft is already committed or discarded');
    };
    return {
      add: async (inputs) => {
        open();
        await this.#insertInputs(sequence, count, inputs, 'NORMAL');
        count += inputs.length;
      },
      clear: async () => {
        open();
        await this.#deleteEntries(sequence);
        count = 0;
      },
      commit: async (job) => {
        open();
        checkIso('createdOn', job.createdOn);
        this.#write(() =>
          this.#statement(
            `UPDATE jobs SET id = ?, owner = ?, client_ip = ?, name = ?, quality = ?, deduplication = ?, priority = ?,
               retention_ms = ?, callback = ?, interface = ?, overrides = ?, created_on = ?, status = 'InProgress',
               no_of_entries = ?
             WHERE sequence = ?`,
          ).run([...jobValues(job), count, sequence]),
        );
        ended = true;
        return { ...job, status: 'InProgress', noOfEntries: count, noOfCompleted: 0, sequence };
      },
      discard: async () => {
        if (ended) return;
        ended = true;
        // Closed meanwhile: the next opening removes the draft.
        if (this.#closed) return;
        try {
          await this.#removeJob(sequence);
        } catch (error) {
          // The draft stays Creating (never seen), removed once a write succeeds after a full disk, or at the next
          // opening; only a full disk is expected here.
          this.#leftovers.add(sequence);
          if (!(error instanceof StorageFullError)) throw error;
        }
      },
    };
  }

  /**
   * Inserts inputs from job index `first` on, CREATE_BATCH per transaction with a turn of the event loop between.
   * `NORMAL`: the transactions are not synced on their own (a draft's inputs need to last only once it is committed;
   * the commit, at the store's level, syncs the WAL with every frame before it; in WAL mode NORMAL never corrupts).
   */
  async #insertInputs(sequence: number, first: number, inputs: readonly JobInput[], synchronous = this.#synchronous): Promise<void> {
    const insertInput = this.#statement('INSERT INTO entries (job, idx, input_data, custom) VALUES (?, ?, ?, ?)');
    const insertInputs = this.#statement(
      `INSERT INTO entries (job, idx, input_data, custom) VALUES ${new Array<string>(INSERT_ROWS).fill('(?, ?, ?, ?)').join(', ')}`,
    );
    // Many rows per statement: each call into SQLite costs more than the row it inserts.
    const values = new Array<unknown>(4 * INSERT_ROWS);
    for (let start = 0; start < inputs.length; start += CREATE_BATCH) {
      if (start > 0) await nextTurn();
      const end = Math.min(start + CREATE_BATCH, inputs.length);
      this.#write(synchronous, () => {
        let index = start;
        for (; index + INSERT_ROWS <= end; index += INSERT_ROWS) {
          for (let row = 0, at = 0; row < INSERT_ROWS; row++, at += 4) {
            const input = inputs[index + row]!;
            values[at] = sequence;
            values[at + 1] = first + index + row;
            values[at + 2] = input.inputData;
            values[at + 3] = input.custom ?? null;
          }
          insertInputs.run(values);
        }
        for (; index < end; index++) {
          const input = inputs[index]!;
          insertInput.run([sequence, first + index, input.inputData, input.custom ?? null]);
        }
      });
    }
  }

  async getJob(id: string): Promise<JobRecord | null> {
    const row = this.#statement(`SELECT * FROM jobs WHERE id = ? AND status != '${CREATING}'`).get([id]) as Row | undefined;
    return row === undefined ? null : toRecord(row);
  }

  async listJobs(query: JobListQuery): Promise<Page<JobRecord>> {
    checkListQuery(query);
    const conditions: string[] = [];
    const parameters: unknown[] = [];
    if (query.owner !== undefined) {
      conditions.push('owner = ?');
      parameters.push(query.owner);
    }
    const statuses = selectedStatuses(query.include, query.exclude, JOB_STATUSES, LIVE_STATUSES);
    if (statuses.length === 0) return { data: [], more: false };
    conditions.push(`status IN (${placeholders(statuses.length)})`);
    parameters.push(...statuses);
    if (query.createdSince !== undefined) {
      conditions.push('created_on >= ?');
      parameters.push(query.createdSince);
    }
    if (query.createdUntil !== undefined) {
      conditions.push('created_on <= ?');
      parameters.push(query.createdUntil);
    }
    // The order is (createdOn, sequence) with createdOn descending for '-createdOn'; ties are always in creation order.
    // Backwards paging walks the same order reversed and turns the page round.
    const backwards = query.beforeSequence !== undefined;
    const newestFirst = query.sort === '-createdOn';
    const createdDescending = newestFirst !== backwards;
    const sequenceDescending = backwards;
    const cursor = query.afterSequence ?? query.beforeSequence;
    if (cursor !== undefined) {
      const row = this.#statement('SELECT created_on FROM jobs WHERE sequence = ?').get([cursor]) as Row | undefined;
      if (row === undefined) throw new RangeError(`no job with sequence ${cursor}`);
      const createdOn = row['created_on'];
      const past = createdDescending ? '<' : '>';
      conditions.push(`created_on ${past}= ? AND (created_on ${past} ? OR sequence ${sequenceDescending ? '<' : '>'} ?)`);
      parameters.push(createdOn, createdOn, cursor);
    }
    const order = `created_on ${createdDescending ? 'DESC' : 'ASC'}, sequence ${sequenceDescending ? 'DESC' : 'ASC'}`;
    const rows = this.#statement(`SELECT * FROM jobs WHERE ${conditions.join(' AND ')} ORDER BY ${order} LIMIT ?`).all([
      ...parameters,
      query.limit + 1,
    ]) as Row[];
    return pageOf(rows.map(toRecord), query.limit, backwards);
  }

  async entries(jobId: string, query: EntryPageQuery): Promise<Page<Entry>> {
    checkLimit(query.limit);
    if (query.after !== undefined && query.before !== undefined) throw new RangeError('after and before together');
    const job = this.#sequenceOf(jobId);
    if (job === undefined) return { data: [], more: false };
    const backwards = query.before !== undefined;
    // An exclusive bound; without one, from the start.
    const from = query.before ?? query.after ?? -1;
    const past = backwards ? '<' : '>';
    const direction = backwards ? 'DESC' : 'ASC';
    let rows: Row[];
    if (query.include === undefined && query.exclude === undefined) {
      rows = this.#statement(
        `SELECT idx, input_data, status, result FROM entries
         WHERE job = ? AND idx ${past} ? AND status IS NOT NULL ORDER BY idx ${direction} LIMIT ?`,
      ).all([job, from, query.limit + 1]) as Row[];
    } else {
      // One index range per status, merged: each reads at most limit + 1 keys however rare or common the status is.
      const statuses = selectedStatuses(query.include, query.exclude, STATUS_CODES, STATUS_CODES);
      const byStatus = this.#statement(
        `SELECT idx FROM entries WHERE job = ? AND status = ? AND idx ${past} ? ORDER BY idx ${direction} LIMIT ?`,
      ).pluck();
      const indexes: number[] = [];
      for (const status of statuses) indexes.push(...(byStatus.all([job, status, from, query.limit + 1]) as number[]));
      indexes.sort(backwards ? (a, b) => b - a : (a, b) => a - b);
      if (indexes.length > query.limit + 1) indexes.length = query.limit + 1;
      rows = this.#statement(
        `SELECT idx, input_data, status, result FROM entries
         WHERE job = ? AND idx IN (SELECT value FROM json_each(?)) ORDER BY idx ${direction}`,
      ).all([job, JSON.stringify(indexes)]) as Row[];
    }
    return pageOf(rows.map(toEntry), query.limit, backwards);
  }

  async countEntries(jobId: string, filter: EntryFilter): Promise<number> {
    const job = this.#sequenceOf(jobId);
    if (job === undefined) return 0;
    if (filter.include === undefined && filter.exclude === undefined) {
      return (this.#statement('SELECT COUNT(*) AS n FROM entries WHERE job = ? AND status IS NOT NULL').get([job]) as Row)['n'] as number;
    }
    // One index range per status, as for a filtered page.
    const byStatus = this.#statement('SELECT COUNT(*) AS n FROM entries WHERE job = ? AND status = ?');
    let count = 0;
    for (const status of selectedStatuses(filter.include, filter.exclude, STATUS_CODES, STATUS_CODES)) {
      count += (byStatus.get([job, status]) as Row)['n'] as number;
    }
    return count;
  }

  async entry(jobId: string, index: number): Promise<Entry | null> {
    const row = this.#statement(
      `SELECT idx, input_data, status, result FROM entries
       WHERE job = (SELECT sequence FROM jobs WHERE id = ?) AND idx = ? AND status IS NOT NULL`,
    ).get([jobId, index]) as Row | undefined;
    return row === undefined ? null : toEntry(row);
  }

  async pendingInputs(jobId: string, afterIndex: number, limit: number): Promise<PendingInput[]> {
    checkLimit(limit);
    const rows = this.#statement(
      `SELECT idx, input_data, custom FROM entries
       WHERE job = (SELECT sequence FROM jobs WHERE id = ?) AND idx > ? AND result IS NULL ORDER BY idx LIMIT ?`,
    ).all([jobId, afterIndex, limit]) as Row[];
    return rows.map(toPendingInput);
  }

  async saveResults(jobId: string, entries: readonly Entry[]): Promise<number> {
    const job = this.#requireSequence(jobId);
    // A tombstone takes no results (a job ended while its last results were on their way).
    const ended = this.#statement(`SELECT 1 FROM jobs WHERE sequence = ? AND status IN ('Deleted', 'Expired')`);
    if (ended.get([job]) !== undefined) return 0;
    const save = this.#statement(
      'UPDATE entries SET status = ?, result = ? WHERE job = ? AND idx = ? AND result IS NULL AND input_data = ?',
    );
    const saveWithInputData = this.#statement(
      'UPDATE entries SET status = ?, result = ? WHERE job = ? AND idx = ? AND result IS NULL',
    );
    const count = this.#statement('UPDATE jobs SET no_of_completed = no_of_completed + ? WHERE sequence = ?');
    return this.#write(() => {
      let saved = 0;
      for (const entry of entries) {
        // The usual entry repeats its input: stored without inputData when the row's input is the same.
        const values = resultValues(entry);
        values[0] = null;
        const { changes } = save.run([entry.status, JSON.stringify(values), job, entry.index, entry.inputData]);
        if (changes > 0) {
          saved += changes;
        } else {
          values[0] = entry.inputData;
          saved += saveWithInputData.run([entry.status, JSON.stringify(values), job, entry.index]).changes;
        }
      }
      if (saved > 0) count.run([saved, job]);
      return saved;
    });
  }

  async completeJob(jobId: string, completedOn: string, callback?: CallbackEvent): Promise<void> {
    checkIso('completedOn', completedOn);
    if (callback !== undefined) checkCallbackEvent(callback, jobId);
    const job = this.#requireSequence(jobId);
    const complete = this.#statement(
      `UPDATE jobs SET status = 'Completed', completed_on = ?, completed_at_ms = ?
       WHERE sequence = ? AND status = 'InProgress'`,
    );
    const enqueue = this.#statement(
      `INSERT INTO callback_outbox (job, url, skip_certificate_validation, idempotency_key, body, due_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    // Only a job in progress completes: a job ended meanwhile stays a tombstone, and sends no callback.
    this.#write(() => {
      const { changes } = complete.run([completedOn, Date.parse(completedOn), job]);
      if (changes > 0) this.#settle(jobId, job);
      if (changes > 0 && callback !== undefined) {
        enqueue.run([
          job,
          callback.url,
          callback.skipServerCertificateValidation ? 1 : 0,
          callback.idempotencyKey,
          callback.body,
          callback.dueAt,
        ]);
      }
    });
  }

  async unfinishedJobs(): Promise<JobRecord[]> {
    const rows = this.#statement(`SELECT * FROM jobs WHERE status = 'InProgress' ORDER BY sequence`).all() as Row[];
    return rows.map(toRecord);
  }

  async endJob(jobId: string, status: 'Deleted' | 'Expired', endedOn: string): Promise<void> {
    checkEnding(status, endedOn);
    const job = this.#requireSequence(jobId);
    // The tombstone first (an ended job stays ended), then its entries; if the process stops in between, opening the
    // store finishes the deletion.
    const end = this.#statement(
      `UPDATE jobs SET status = ?, ended_on = ? WHERE sequence = ? AND status IN ('InProgress', 'Completed')`,
    );
    // A callback not yet delivered is dropped with the job.
    const dropCallback = this.#statement('DELETE FROM callback_outbox WHERE job = ?');
    // Its credit reservation is settled with the tombstone, its verified entries counted before they go.
    this.#write(() => {
      if (end.run([status, endedOn, job]).changes > 0) this.#settle(jobId, job);
      dropCallback.run([job]);
    });
    try {
      await this.#deleteEntries(job);
    } catch (error) {
      if (!(error instanceof StorageFullError)) throw error;
      // The job has ended (its tombstone is written); its entries go once the disk has room again.
      this.#leftovers.add(job);
    }
  }

  async expiredJobs(now: string, defaultRetentionMs: number): Promise<JobRecord[]> {
    checkRetention(now, defaultRetentionMs);
    const nowMs = Date.parse(now);
    const rows = this.#statement(
      `SELECT * FROM jobs WHERE status = 'Completed' AND completed_at_ms <= ?
         AND completed_at_ms + COALESCE(retention_ms, ?) <= ? ORDER BY sequence`,
    ).all([nowMs, defaultRetentionMs, nowMs]) as Row[];
    return rows.map(toRecord);
  }

  async purgeTombstones(before: string): Promise<number> {
    checkIso('before', before);
    return this.#write(
      () => this.#statement(`DELETE FROM jobs WHERE ended_on < ? AND status IN ('Deleted', 'Expired')`).run([before]).changes,
    );
  }

  async dueCallbacks(now: number, limit: number): Promise<CallbackDelivery[]> {
    checkLimit(limit);
    const rows = this.#statement(
      `SELECT callback_outbox.*, jobs.id AS job_id FROM callback_outbox JOIN jobs ON jobs.sequence = callback_outbox.job
       WHERE due_at <= ? ORDER BY due_at, callback_outbox.id LIMIT ?`,
    ).all([now, limit]) as Row[];
    return rows.map(toCallbackDelivery);
  }

  async nextCallbackAt(): Promise<number | null> {
    const row = this.#statement('SELECT MIN(due_at) AS next FROM callback_outbox').get() as Row | undefined;
    return (row?.['next'] as number | null | undefined) ?? null;
  }

  async callbackAttempted(id: number, firstAttemptAt: number, dueAt: number): Promise<void> {
    checkAttemptTimes(firstAttemptAt, dueAt);
    const update = this.#statement(
      'UPDATE callback_outbox SET attempts = attempts + 1, first_attempt_at = ?, due_at = ? WHERE id = ?',
    );
    this.#write(() => update.run([firstAttemptAt, dueAt, id]));
  }

  async removeCallback(id: number): Promise<void> {
    const remove = this.#statement('DELETE FROM callback_outbox WHERE id = ?');
    this.#write(() => remove.run([id]));
  }

  async jobTotals(): Promise<JobTotals[]> {
    const rows = this.#statement(
      `SELECT status, COUNT(*) AS jobs, TOTAL(no_of_entries) AS entries, TOTAL(no_of_completed) AS completed
       FROM jobs WHERE status <> '${CREATING}' GROUP BY status ORDER BY status`,
    ).all() as Row[];
    return rows.map((row) => ({
      status: row['status'] as JobStatus,
      jobs: row['jobs'] as number,
      entries: row['entries'] as number,
      completedEntries: row['completed'] as number,
    }));
  }

  async createUser(user: UserRecord): Promise<void> {
    const insert = this.#statement('INSERT INTO users (id, username_key, etag, record) VALUES (?, ?, ?, ?)');
    this.#write(() => uniqueUsername(() => insert.run([user.id, storedUsernameKey(user), user.etag, JSON.stringify(user)])));
  }

  async getUser(id: string): Promise<UserRecord | null> {
    const row = this.#statement('SELECT record FROM users WHERE id = ?').get([id]) as Row | undefined;
    return row === undefined ? null : (JSON.parse(row['record'] as string) as UserRecord);
  }

  async userByUsername(username: string): Promise<UserRecord | null> {
    const row = this.#statement('SELECT record FROM users WHERE username_key = ?').get([usernameKey(username)]) as Row | undefined;
    return row === undefined ? null : (JSON.parse(row['record'] as string) as UserRecord);
  }

  async updateUser(user: UserRecord, expectedEtag: string): Promise<boolean> {
    const update = this.#statement('UPDATE users SET username_key = ?, etag = ?, record = ? WHERE id = ? AND etag = ?');
    return this.#write(() => uniqueUsername(() => update.run([storedUsernameKey(user), user.etag, JSON.stringify(user), user.id, expectedEtag]).changes === 1));
  }

  async listUsers(query: UserListQuery): Promise<{ data: UserRecord[]; more: boolean }> {
    // An account has users by the hundred, not the million: read whole, ordered here (in JavaScript's string order).
    const rows = this.#statement('SELECT record FROM users ORDER BY sequence').all() as Row[];
    const users = rows
      .map((row) => JSON.parse(row['record'] as string) as UserRecord)
      .filter((user) => (query.includeDeleted || user.deletedOn === undefined) && (query.type === undefined || user.detail.type === query.type));
    const sorted = sortUsers(users, query.sort);
    return { data: sorted.slice(query.offset, query.offset + query.limit), more: sorted.length > query.offset + query.limit };
  }

  async getSetting(key: string): Promise<string | null> {
    const row = this.#statement('SELECT value FROM settings WHERE key = ?').get([key]) as Row | undefined;
    return row === undefined ? null : (row['value'] as string);
  }

  async setSetting(key: string, value: string): Promise<void> {
    const upsert = this.#statement(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    this.#write(() => upsert.run([key, value]));
  }

  async reserveCredits(request: Parameters<CreditStore['reserveCredits']>[0]): Promise<ReserveOutcome> {
    const { jobId, entries, unitPrice } = request;
    const cost = entries * unitPrice;
    if (!Number.isSafeInteger(cost) || cost <= 0) throw new RangeError(`a reservation costs a positive whole number of micro-credits, not ${cost}`);
    const day = dayKey(request.day);
    const month = monthOf(request.day);
    return this.#write(() => {
      const today = this.#value('SELECT free AS value FROM credit_days WHERE day = ?', [day]) as number | undefined;
      const plan = planReservation(
        {
          freeDaily: request.freeDaily,
          freeUsedToday: today ?? 0,
          packs: this.#packs(),
          monthlyMax: request.monthlyMax,
          usedThisMonth: this.#value('SELECT TOTAL(free + packs) AS value FROM credit_days WHERE day BETWEEN ? AND ?', [
            dayKey(month.first),
            dayKey(month.last),
          ]) as number,
        },
        cost,
      );
      if (plan.outcome !== 'reserved') return plan.outcome;
      this.#statement('UPDATE credit_balance SET packs = packs - ? WHERE id = 1').run([plan.packs]);
      this.#addToDay(day, plan.free, plan.packs);
      this.#statement('INSERT INTO credit_reservations (job_id, day, free, packs, unit_price) VALUES (?, ?, ?, ?, ?)').run([
        jobId,
        day,
        plan.free,
        plan.packs,
        unitPrice,
      ]);
      return 'reserved';
    });
  }

  async releaseReservation(jobId: string): Promise<void> {
    this.#write(() => this.#release(jobId, 0));
  }

  async settleReservations(): Promise<number> {
    const open = this.#statement(
      `SELECT credit_reservations.job_id AS job_id, jobs.sequence AS sequence, jobs.status AS status
       FROM credit_reservations LEFT JOIN jobs ON jobs.id = credit_reservations.job_id`,
    ).all() as Row[];
    let settled = 0;
    for (const row of open) {
      if (row['status'] === 'InProgress') continue;
      const jobId = row['job_id'] as string;
      // A job never stored (or whose creation did not finish) gives back the whole reservation.
      if (row['sequence'] === null || row['status'] === CREATING) this.#write(() => this.#release(jobId, 0));
      else this.#write(() => this.#settle(jobId, row['sequence'] as number));
      settled++;
    }
    return settled;
  }

  async addCreditPacks(micro: number): Promise<number> {
    if (!Number.isSafeInteger(micro) || micro <= 0) throw new RangeError(`credits: a positive whole number of micro-credits, not ${micro}`);
    return this.#write(() => {
      const packs = this.#packs() + micro;
      if (packs > MAX_BALANCE_MICRO) throw new RangeError('the credit packs balance would pass its largest value');
      this.#statement('UPDATE credit_balance SET packs = ? WHERE id = 1').run([packs]);
      return packs;
    });
  }

  async creditBalance(day: string): Promise<{ packs: number; freeUsed: number }> {
    const freeUsed = this.#value('SELECT free AS value FROM credit_days WHERE day = ?', [dayKey(day)]) as number | undefined;
    return { packs: this.#packs(), freeUsed: freeUsed ?? 0 };
  }

  async dailyUsage(query: DailyUsageQuery): Promise<{ data: DailyUsage[]; more: boolean }> {
    checkLimit(query.limit);
    if (query.after !== undefined && query.before !== undefined) throw new RangeError('after and before together');
    const conditions = ['(free > 0 OR packs > 0)'];
    const parameters: unknown[] = [];
    const bound = (condition: string, value: number | undefined): void => {
      if (value === undefined) return;
      conditions.push(condition);
      parameters.push(value);
    };
    bound('day >= ?', query.since === undefined ? undefined : dayKey(query.since));
    bound('day <= ?', query.until === undefined ? undefined : dayKey(query.until));
    bound('day > ?', query.after);
    bound('day < ?', query.before);
    const backwards = query.before !== undefined;
    const rows = this.#statement(
      `SELECT day, free, packs FROM credit_days WHERE ${conditions.join(' AND ')} ORDER BY day ${backwards ? 'DESC' : 'ASC'} LIMIT ?`,
    ).all([...parameters, query.limit + 1]) as Row[];
    const more = rows.length > query.limit;
    if (more) rows.length = query.limit;
    if (backwards) rows.reverse();
    return {
      data: rows.map((row) => {
        const day = String(row['day']);
        return { date: `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)}`, freeCredits: row['free'] as number, creditPacks: row['packs'] as number };
      }),
      more,
    };
  }

  /** The `value` column of a query's first row (undefined without a row). */
  #value(sql: string, parameters: unknown[]): unknown {
    return (this.#statement(sql).get(parameters) as Row | undefined)?.['value'];
  }

  #packs(): number {
    return this.#value('SELECT packs AS value FROM credit_balance WHERE id = 1', []) as number;
  }

  #addToDay(day: number, free: number, packs: number): void {
    this.#statement(
      `INSERT INTO credit_days (day, free, packs) VALUES (?, ?, ?)
       ON CONFLICT (day) DO UPDATE SET free = free + excluded.free, packs = packs + excluded.packs`,
    ).run([day, free, packs]);
  }

  /**
   * Closes the reservation of `jobId` (inside a write): the cost of `verified` entries stays consumed, the rest goes
   * back to the reservation's day and, for packs, to the balance. No reservation: nothing.
   */
  #release(jobId: string, verified: number): void {
    const row = this.#statement('SELECT day, free, packs, unit_price FROM credit_reservations WHERE job_id = ?').get([jobId]) as Row | undefined;
    if (row === undefined) return;
    const back = settlement({ free: row['free'] as number, packs: row['packs'] as number, unitPrice: row['unit_price'] as number }, verified);
    this.#addToDay(row['day'] as number, -back.free, -back.packs);
    this.#statement('UPDATE credit_balance SET packs = packs + ? WHERE id = 1').run([back.packs]);
    this.#statement('DELETE FROM credit_reservations WHERE job_id = ?').run([jobId]);
  }

  /** Settles the reservation of a finished job (inside a write): its entries with a result that are not Duplicate were verified. */
  #settle(jobId: string, sequence: number): void {
    if (this.#statement('SELECT 1 FROM credit_reservations WHERE job_id = ?').get([jobId]) === undefined) return;
    const completed = this.#value('SELECT no_of_completed AS value FROM jobs WHERE sequence = ?', [sequence]) as number;
    const duplicates = this.#value(`SELECT COUNT(*) AS value FROM entries WHERE job = ? AND status = 'Duplicate'`, [sequence]) as number;
    this.#release(jobId, completed - duplicates);
  }

  /**
   * Runs `work` on everything the store keeps, read in one read transaction: a snapshot, which writes committed by
   * other connections meanwhile do not change. Nothing else may use this store until `work` settles.
   */
  async exportContents<T>(work: (contents: StoreContents) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error('the job store is closed');
    this.#db.exec('BEGIN');
    try {
      return await work({
        jobs: () => this.#chunks(`SELECT * FROM jobs WHERE status <> '${CREATING}' AND sequence > ? ORDER BY sequence LIMIT ?`, [0], (row) => [row['sequence']], toRecord),
        entries: () =>
          this.#chunks(
            `SELECT job, idx, input_data, custom, status, result FROM entries
             WHERE (job, idx) > (?, ?) AND job NOT IN (SELECT sequence FROM jobs WHERE status = '${CREATING}')
             ORDER BY job, idx LIMIT ?`,
            [0, -1],
            (row) => [row['job'], row['idx']],
            (row): StoredEntry => ({
              job: row['job'] as number,
              index: row['idx'] as number,
              inputData: row['input_data'] as string,
              custom: row['custom'] as string | null,
              status: row['status'] as string | null,
              result: row['result'] as string | null,
            }),
          ),
        users: () =>
          this.#chunks('SELECT sequence, record FROM users WHERE sequence > ? ORDER BY sequence LIMIT ?', [0], (row) => [row['sequence']], (row) =>
            JSON.parse(row['record'] as string) as UserRecord,
          ),
        callbacks: () =>
          this.#chunks(
            `SELECT callback_outbox.*, jobs.id AS job_id FROM callback_outbox JOIN jobs ON jobs.sequence = callback_outbox.job
             WHERE callback_outbox.id > ? ORDER BY callback_outbox.id LIMIT ?`,
            [0],
            (row) => [row['id']],
            toCallbackDelivery,
          ),
        settings: async () => {
          const rows = this.#statement('SELECT key, value FROM settings ORDER BY key').all() as Row[];
          return new Map(rows.map((row) => [row['key'] as string, row['value'] as string]));
        },
        credits: async (): Promise<StoredCredits> => ({
          packs: this.#packs(),
          days: (this.#statement('SELECT day, free, packs FROM credit_days ORDER BY day').all() as Row[]).map((row) => ({
            day: row['day'] as number,
            free: row['free'] as number,
            packs: row['packs'] as number,
          })),
          reservations: (this.#statement('SELECT * FROM credit_reservations ORDER BY job_id').all() as Row[]).map((row) => ({
            jobId: row['job_id'] as string,
            day: row['day'] as number,
            free: row['free'] as number,
            packs: row['packs'] as number,
            unitPrice: row['unit_price'] as number,
          })),
        }),
      });
    } finally {
      if (!this.#closed && this.#db.inTransaction) this.#db.exec('ROLLBACK');
    }
  }

  /** The rows of a keyset-paged query (its last parameter the limit), EXPORT_CHUNK at a time, as `map` makes them. */
  async *#chunks<T>(sql: string, first: unknown[], keyOf: (row: Row) => unknown[], map: (row: Row) => T): AsyncGenerator<T[]> {
    for (let key = first; ; ) {
      const rows = this.#statement(sql).all([...key, EXPORT_CHUNK]) as Row[];
      if (rows.length > 0) yield rows.map(map);
      if (rows.length < EXPORT_CHUNK) return;
      key = keyOf(rows.at(-1)!);
    }
  }

  /** Checkpoints the WAL into the database file and closes the connection; closing again does nothing. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    try {
      this.#db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch (error) {
      // A checkpoint the disk has no room for: the WAL keeps the commits, and the next opening reads them.
      if (fullDiskError(error) === null) throw error;
    } finally {
      this.#db.close();
    }
  }

  /**
   * Finishes what a process stopped in the middle of: removes jobs it was still creating (never answered to their
   * submitter), and deletes the entries left by job endings.
   */
  async finishEndedJobs(): Promise<void> {
    const creating = this.#statement(`SELECT sequence FROM jobs WHERE status = '${CREATING}'`).pluck().all() as number[];
    for (const job of creating) {
      await this.#removeJob(job);
    }
    const jobs = this.#statement(
      `SELECT sequence FROM jobs
       WHERE status IN ('Deleted', 'Expired') AND EXISTS (SELECT 1 FROM entries WHERE job = jobs.sequence)`,
    )
      .pluck()
      .all() as number[];
    for (const job of jobs) await this.#deleteEntries(job);
  }

  /** Removes a job row and its entries (a creation that did not finish), unless the store closes meanwhile. */
  async #removeJob(sequence: number): Promise<void> {
    await this.#deleteEntries(sequence);
    if (!this.#closed) this.#write(() => this.#statement('DELETE FROM jobs WHERE sequence = ?').run([sequence]));
  }

  /** Deletes a job's entries a batch per transaction, letting other work run between batches. */
  async #deleteEntries(job: number): Promise<void> {
    const batchEnd = this.#statement('SELECT idx FROM entries WHERE job = ? ORDER BY idx LIMIT 1 OFFSET ?').pluck();
    const deleteUpTo = this.#statement('DELETE FROM entries WHERE job = ? AND idx <= ?');
    const deleteAll = this.#statement('DELETE FROM entries WHERE job = ?');
    for (;;) {
      const last = batchEnd.all([job, DELETE_BATCH - 1])[0] as number | undefined;
      if (last === undefined) {
        this.#write(() => deleteAll.run([job]));
        return;
      }
      this.#write(() => deleteUpTo.run([job, last]));
      await nextTurn();
      // Closed meanwhile: the next opening finishes the deletion.
      if (this.#closed) return;
    }
  }

  #migrate(): void {
    const [row] = this.#db.pragma('user_version') as Row[];
    const version = Number(row?.['user_version'] ?? 0);
    if (version > MIGRATIONS.length) {
      throw new Error(`the database has schema version ${version}; this version of the software knows up to ${MIGRATIONS.length}`);
    }
    for (let next = version; next < MIGRATIONS.length; next++) {
      this.#write(() => {
        this.#db.exec(MIGRATIONS[next]!);
        this.#db.exec(`PRAGMA user_version = ${next + 1}`);
      });
    }
  }

  /** A prepared statement, prepared once per connection. */
  #statement(sql: string): Database.Statement {
    if (this.#closed) throw new Error('the job store is closed');
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Runs `work` in one write transaction (IMMEDIATE: takes the write lock at once), rolled back if it throws; with
   * `synchronous` NORMAL, a transaction whose commit need not be synced (the connection's own level otherwise). A full
   * disk rejects with a StorageFullError; the first write to succeed after one says so and finishes the leftovers.
   */
  #write<T>(work: () => T): T;
  #write<T>(synchronous: 'FULL' | 'NORMAL', work: () => T): T;
  #write<T>(first: 'FULL' | 'NORMAL' | (() => T), second?: () => T): T {
    if (this.#closed) throw new Error('the job store is closed');
    const work = typeof first === 'function' ? first : second!;
    const relaxed = typeof first === 'string' && first !== this.#synchronous;
    let result: T;
    try {
      if (relaxed) this.#db.exec(`PRAGMA synchronous = ${first}`);
      try {
        this.#db.exec('BEGIN IMMEDIATE');
        try {
          result = work();
          this.#db.exec('COMMIT');
        } catch (error) {
          // SQLite rolls some failures back itself (SQLITE_FULL among them); roll back only what is still open.
          if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
          throw error;
        }
      } finally {
        if (relaxed) this.#db.exec(`PRAGMA synchronous = ${this.#synchronous}`);
      }
    } catch (error) {
      const full = fullDiskError(error);
      if (full === null) throw error;
      if (!this.#full) {
        this.#full = true;
        this.#options.onStorageFull?.(error);
      }
      throw full;
    }
    if (this.#full) {
      this.#full = false;
      this.#options.onStorageWritable?.();
      if (this.#leftovers.size > 0) setImmediate(() => void this.#tidy());
    }
    return result;
  }

  /** Removes what full disks left: entries of ended jobs, jobs whose creation failed. Stops at the next refusal. */
  async #tidy(): Promise<void> {
    if (this.#tidying) return;
    this.#tidying = true;
    try {
      for (const job of [...this.#leftovers]) {
        if (this.#closed) return;
        const row = this.#statement('SELECT status FROM jobs WHERE sequence = ?').get([job]) as Row | undefined;
        if (row !== undefined && row['status'] === CREATING) {
          await this.#removeJob(job);
        } else if (row !== undefined && (TOMBSTONE_STATUSES as readonly unknown[]).includes(row['status'])) {
          await this.#deleteEntries(job);
        }
        this.#leftovers.delete(job);
      }
    } catch {
      // Refused again (the disk is full, or the store closed): the next write that succeeds tries again.
    } finally {
      this.#tidying = false;
    }
  }

  #sequenceOf(jobId: string): number | undefined {
    const row = this.#statement('SELECT sequence FROM jobs WHERE id = ?').get([jobId]) as Row | undefined;
    return row === undefined ? undefined : (row['sequence'] as number);
  }

  #requireSequence(jobId: string): number {
    const sequence = this.#sequenceOf(jobId);
    if (sequence === undefined) throw new Error(`no job ${jobId}`);
    return sequence;
  }
}

/** A StorageFullError for SQLite's SQLITE_FULL (the disk is full), else null. */
/** Runs a write to the users table; a username already taken becomes UsernameTakenError. */
function uniqueUsername<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' && /username_key/.test((error as Error).message)) throw new UsernameTakenError();
    throw error;
  }
}

function fullDiskError(error: unknown): StorageFullError | null {
  if (error instanceof StorageFullError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' ? new StorageFullError(error) : null;
}

function placeholders(count: number): string {
  return new Array<string>(count).fill('?').join(', ');
}
