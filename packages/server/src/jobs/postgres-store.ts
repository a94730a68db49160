/**
 * The job store on PostgreSQL (the `pg` driver, loaded only when a store is opened), for a cluster of processes
 * sharing one database. The same semantics as the SQLite store (sqlite-store.ts), with these differences:
 *
 * - Every object lives in one schema (option `schema`, default `public`), set as each connection's `search_path`.
 * - Schema versions are rows of `mailverify_migrations`; MIGRATIONS[n] brings version n to n + 1. They run at
 *   opening inside a transaction holding a transaction-level advisory lock keyed on the schema, so processes that
 *   start together apply each version once, one after the other.
 * - `createJob` writes the job and its inputs in one transaction (no other process sees it until it commits, and a
 *   crash leaves nothing). Inputs go in multi-row inserts of INSERT_ROWS rows, each a single statement over arrays.
 * - A draft is a job row `Creating`, touched at each batch. Since other processes may be filling their own drafts, an
 *   opening removes only drafts left untouched for DRAFT_ABANDONED_MS.
 * - The first result of an entry wins: results are written only where `result IS NULL`, under a lock on the job row,
 *   so concurrent writers of the same entries store each result once and count it once.
 * - A full disk (SQLSTATE 53100, disk_full) rejects the write with a StorageFullError; PostgreSQL has rolled the
 *   transaction back.
 * - Usernames are unique through a partial unique index (a race between two processes ends in one UsernameTakenError);
 *   a user's update is one UPDATE compared on its etag, which PostgreSQL re-checks on the row a concurrent update left.
 * - Every change of credits (reservation, settlement, packs) first locks the one balance row: they take turns across
 *   processes, each deciding on what the one before committed, so none overdraws or passes the monthly maximum.
 *   A job's completion or end locks its job row, then the balance; nothing locks them the other way round.
 * - A reservation whose job was never stored is given back by `settleReservations` only once it is
 *   DRAFT_ABANDONED_MS old: other processes may be storing theirs meanwhile.
 * - `importContents` writes a whole store into an empty schema in one transaction (`mailverify migrate`).
 *
 * Times compared as text (createdOn, endedOn) are columns with the "C" collation: byte order, as in SQLite.
 */
import type { Pool, PoolClient, QueryResultRow } from 'pg';
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
import { UsernameTakenError, type UserListQuery, type UserRecord } from '../accounts/types.js';
import { STATUS_CODES, type Entry } from 'mailverify/internal';
import {
  CREATING,
  JOB_STATUSES,
  LIVE_STATUSES,
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
import {
  StorageFullError,
  type CallbackDelivery,
  type CallbackEvent,
  type EntryFilter,
  type EntryPageQuery,
  type JobDraft,
  type JobInput,
  type JobListQuery,
  type JobRecord,
  type JobStatus,
  type JobTotals,
  type NewJob,
  type Page,
  type PendingInput,
  type ServiceStore,
  type StoreImport,
} from './types.js';

/** An input of a job as stored, with its result if it has one. */
export interface StoredInput extends PendingInput {
  readonly entry: Entry | null;
}

/** A listening connection (`listenJobEnds`). */
export interface Listening {
  close(): Promise<void>;
}

/** A lock held by this process among those sharing the store (`tryHold`). */
export interface Hold {
  /** Resolves when the hold ended: released, or its connection lost. */
  readonly lost: Promise<void>;
  release(): Promise<void>;
}

export interface PostgresStoreOptions {
  /** A PostgreSQL URL, `postgres://user:password@host:port/database`. */
  readonly connectionString: string;
  /** The schema holding the store's tables (created if missing); default `public`. */
  readonly schema?: string;
  /** Connections in the pool (default 10). */
  readonly max?: number;
}

/**
 * Schema migrations, in order: MIGRATIONS[n] takes the schema from version n to n + 1. Add new versions at the end;
 * never change a released one.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE jobs (
    sequence        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              text NOT NULL UNIQUE,
    owner           text NOT NULL,
    client_ip       text NOT NULL,
    name            text,
    quality         text NOT NULL,
    deduplication   text NOT NULL,
    priority        integer,
    retention_ms    bigint,
    callback        text,
    interface       text NOT NULL,
    overrides       text,
    created_on      text COLLATE "C" NOT NULL,
    status          text COLLATE "C" NOT NULL,
    no_of_entries   integer NOT NULL,
    no_of_completed integer NOT NULL DEFAULT 0,
    completed_on    text COLLATE "C",
    completed_at_ms bigint,
    ended_on        text COLLATE "C",
    -- A draft's last batch (drafts of processes that stopped are removed once it is old).
    touched_at      timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX jobs_by_owner_newest ON jobs (owner, created_on DESC, sequence);
  CREATE INDEX jobs_by_owner_oldest ON jobs (owner, created_on, sequence);
  CREATE INDEX jobs_by_completion ON jobs (completed_at_ms) WHERE status = 'Completed';
  CREATE INDEX jobs_by_end ON jobs (ended_on) WHERE ended_on IS NOT NULL;
  CREATE INDEX jobs_in_progress ON jobs (sequence) WHERE status IN ('InProgress', '${CREATING}');

  CREATE TABLE entries (
    job        bigint NOT NULL REFERENCES jobs (sequence) ON DELETE CASCADE,
    idx        integer NOT NULL,
    input_data text NOT NULL,
    custom     text,
    status     text,
    result     text,
    PRIMARY KEY (job, idx)
  );
  -- Answered entries by status, in index order (filtered pages); inputs without a result cost nothing.
  CREATE INDEX entries_by_status ON entries (job, status, idx) WHERE status IS NOT NULL;

  CREATE TABLE settings (
    key   text PRIMARY KEY,
    value text NOT NULL
  );

  -- Completion callbacks waiting to be delivered (one per job at most). Times in milliseconds since the epoch.
  CREATE TABLE callback_outbox (
    id                          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job                         bigint NOT NULL UNIQUE REFERENCES jobs (sequence) ON DELETE CASCADE,
    url                         text NOT NULL,
    skip_certificate_validation boolean NOT NULL,
    idempotency_key             text NOT NULL,
    body                        text NOT NULL,
    attempts                    integer NOT NULL DEFAULT 0,
    first_attempt_at            bigint,
    due_at                      bigint NOT NULL
  );
  CREATE INDEX callback_outbox_by_due ON callback_outbox (due_at);
  `,
  `
  -- Users of the account: the record as JSON, with the columns looked up or kept unique beside it. A username is
  -- unique case-insensitively among users not deleted: username_key is its lower-cased form, NULL once deleted.
  CREATE TABLE users (
    sequence     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           text NOT NULL UNIQUE,
    username_key text,
    etag         text NOT NULL,
    record       text NOT NULL
  );
  CREATE UNIQUE INDEX users_by_username ON users (username_key) WHERE username_key IS NOT NULL;

  -- Credits, in micro-credits. Days are yyyymmdd integers (UTC), in calendar order.
  -- The packs balance: one row, locked by every change of credits.
  CREATE TABLE credit_balance (
    id    integer PRIMARY KEY CHECK (id = 1),
    packs bigint NOT NULL CHECK (packs >= 0)
  );
  INSERT INTO credit_balance (id, packs) VALUES (1, 0);
  -- What each day consumed, open reservations included.
  CREATE TABLE credit_days (
    day   integer PRIMARY KEY,
    free  bigint NOT NULL DEFAULT 0,
    packs bigint NOT NULL DEFAULT 0
  );
  -- Reservations of jobs not yet settled, by job id (the job may not be stored yet).
  CREATE TABLE credit_reservations (
    job_id      text PRIMARY KEY,
    day         integer NOT NULL,
    free        bigint NOT NULL,
    packs       bigint NOT NULL,
    unit_price  bigint NOT NULL,
    reserved_at timestamptz NOT NULL DEFAULT now()
  );
  `,
];

/** Inputs per INSERT statement (arrays of this many values: 4 parameters whatever the count). */
const INSERT_ROWS = 10_000;
/** Entries deleted per transaction when a job ends: keeps each transaction, and the locks it holds, short. */
const DELETE_BATCH = 20_000;
/** A job with at least this many inputs has the entries table analysed once they are stored. */
const ANALYZE_AFTER_INPUTS = 10_000;
/** The wait before a failed listening connection is made again. */
const LISTEN_RETRY_MS = 500;
/** How often a held lock's connection is checked. */
const HOLD_CHECK_MS = 5_000;
/** A draft untouched this long belongs to a process that stopped: an opening removes it. */
const DRAFT_ABANDONED_MS = 60 * 60 * 1000;
/** PostgreSQL's SQLSTATE for a full disk (class 53, insufficient resources). */
const DISK_FULL = '53100';
/** PostgreSQL's SQLSTATE for a unique violation. */
const UNIQUE_VIOLATION = '23505';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Opens a store on PostgreSQL: connects, creates the schema or brings it to the current version, tidies up. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresJobStore> {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) throw new TypeError(`schema: lower-case letters, digits and _, not ${JSON.stringify(schema)}`);
  const max = options.max ?? 10;
  if (!Number.isSafeInteger(max) || max < 1) throw new TypeError('max: a positive integer');
  // Loaded here, not at the top: only a server that uses PostgreSQL loads the driver.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: options.connectionString, max, options: `-c search_path=${schema}` });
  // An idle connection that fails (the server restarted) is dropped by the pool; the error must not crash the process.
  pool.on('error', () => {});
  const store = new PostgresJobStore(pool, schema, options.connectionString);
  try {
    await store.migrate(schema);
    await store.finishEndedJobs();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

export class PostgresJobStore implements ServiceStore {
  readonly #pool: Pool;
  readonly #schema: string;
  readonly #connectionString: string;
  #closed = false;

  constructor(pool: Pool, schema = 'public', connectionString = '') {
    this.#pool = pool;
    this.#schema = schema;
    this.#connectionString = connectionString;
  }

  /** Creates the schema and applies the migrations it lacks, one process at a time. */
  async migrate(schema: string): Promise<void> {
    await this.#transaction(async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`mailverify:${schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS mailverify_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const { rows } = await client.query('SELECT COALESCE(MAX(version), 0) AS version FROM mailverify_migrations');
      const version = Number(rows[0]!['version']);
      if (version > MIGRATIONS.length) {
        throw new Error(`the database has schema version ${version}; this version of the software knows up to ${MIGRATIONS.length}`);
      }
      for (let next = version; next < MIGRATIONS.length; next++) {
        await client.query(MIGRATIONS[next]!);
        await client.query('INSERT INTO mailverify_migrations (version) VALUES ($1)', [next + 1]);
      }
    });
  }

  /**
   * Finishes what stopped processes left: drafts abandoned for DRAFT_ABANDONED_MS, and the entries of ended jobs.
   */
  async finishEndedJobs(): Promise<void> {
    const drafts = await this.#rows(
      `SELECT sequence FROM jobs WHERE status = '${CREATING}' AND touched_at < now() - make_interval(secs => $1)`,
      [DRAFT_ABANDONED_MS / 1000],
    );
    for (const row of drafts) await this.#removeJob(Number(row['sequence']));
    const ended = await this.#rows(
      `SELECT sequence FROM jobs
       WHERE status IN ('Deleted', 'Expired') AND EXISTS (SELECT 1 FROM entries WHERE job = jobs.sequence)`,
    );
    for (const row of ended) await this.#deleteEntries(Number(row['sequence']));
  }

  async createJob(job: NewJob, inputs: readonly JobInput[]): Promise<JobRecord> {
    checkIso('createdOn', job.createdOn);
    const record = await this.#transaction<JobRecord>(async (client) => {
      const { rows } = await client.query(
        `INSERT INTO jobs (id, owner, client_ip, name, quality, deduplication, priority, retention_ms, callback, interface,
           overrides, created_on, status, no_of_entries)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'InProgress', $13) RETURNING sequence`,
        [...jobValues(job), inputs.length],
      );
      const sequence = Number(rows[0]!['sequence']);
      await insertInputs(client, sequence, 0, inputs);
      return { ...job, status: 'InProgress', noOfEntries: inputs.length, noOfCompleted: 0, sequence };
    });
    await this.#analyzeAfter(inputs.length);
    return record;
  }

  /**
   * After a large job's inputs: ANALYZE the entries table. Its workers read and write those rows within seconds, long
   * before autovacuum would analyse them, and without statistics the planner takes a job's entries for a handful of
   * rows and scans all of them for each page and each batch of results (measured: 50 times the rows read, and half
   * of PostgreSQL's CPU, on a job of 100,000). ANALYZE samples a fixed number of rows, whatever the table's size.
   */
  async #analyzeAfter(inputs: number): Promise<void> {
    if (inputs < ANALYZE_AFTER_INPUTS || this.#closed) return;
    // Statistics help; their absence is no failure of the job.
    await this.#query('ANALYZE entries').catch(() => {});
  }

  async draftJob(): Promise<JobDraft> {
    const [row] = await this.#rows(
      `INSERT INTO jobs (id, owner, client_ip, quality, deduplication, interface, created_on, status, no_of_entries)
       VALUES ('creating:' || gen_random_uuid(), '', '', '', '', '', '', '${CREATING}', 0) RETURNING sequence`,
    );
    const sequence = Number(row!['sequence']);
    let count = 0;
    let ended = false;
    const open = (): void => {
      if (ended) throw new Error('the job draft is already committed or discarded');
    };
    return {
      add: async (inputs) => {
        open();
        await this.#transaction(async (client) => {
          await client.query('UPDATE jobs SET touched_at = now() WHERE sequence = $1', [sequence]);
          await insertInputs(client, sequence, count, inputs);
        });
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
        const updated = await this.#transaction(async (client) => {
          const result = await client.query(
            `UPDATE jobs SET id = $1, owner = $2, client_ip = $3, name = $4, quality = $5, deduplication = $6, priority = $7,
               retention_ms = $8, callback = $9, interface = $10, overrides = $11, created_on = $12, status = 'InProgress',
               no_of_entries = $13
             WHERE sequence = $14 AND status = '${CREATING}'`,
            [...jobValues(job), count, sequence],
          );
          return result.rowCount ?? 0;
        });
        if (updated === 0) throw new Error('the job draft was removed (left untouched too long)');
        ended = true;
        await this.#analyzeAfter(count);
        return { ...job, status: 'InProgress', noOfEntries: count, noOfCompleted: 0, sequence };
      },
      discard: async () => {
        if (ended) return;
        ended = true;
        // Closed meanwhile: an opening removes the draft once it is old.
        if (this.#closed) return;
        await this.#removeJob(sequence);
      },
    };
  }

  async getJob(id: string): Promise<JobRecord | null> {
    const [row] = await this.#rows(`SELECT * FROM jobs WHERE id = $1 AND status <> '${CREATING}'`, [id]);
    return row === undefined ? null : jobRecord(row);
  }

  async listJobs(query: JobListQuery): Promise<Page<JobRecord>> {
    checkListQuery(query);
    const statuses = selectedStatuses(query.include, query.exclude, JOB_STATUSES, LIVE_STATUSES);
    if (statuses.length === 0) return { data: [], more: false };
    const parameters: unknown[] = [];
    const p = (value: unknown): string => `$${parameters.push(value)}`;
    const conditions = [`status = ANY(${p(statuses)}::text[])`];
    if (query.owner !== undefined) conditions.push(`owner = ${p(query.owner)}`);
    if (query.createdSince !== undefined) conditions.push(`created_on >= ${p(query.createdSince)}`);
    if (query.createdUntil !== undefined) conditions.push(`created_on <= ${p(query.createdUntil)}`);
    // The order is (createdOn, sequence) with createdOn descending for '-createdOn'; ties are always in creation order.
    // Backwards paging walks the same order reversed and turns the page round.
    const backwards = query.beforeSequence !== undefined;
    const createdDescending = (query.sort === '-createdOn') !== backwards;
    const cursor = query.afterSequence ?? query.beforeSequence;
    if (cursor !== undefined) {
      const [row] = await this.#rows('SELECT created_on FROM jobs WHERE sequence = $1', [cursor]);
      if (row === undefined) throw new RangeError(`no job with sequence ${cursor}`);
      const createdOn = p(row['created_on']);
      const past = createdDescending ? '<' : '>';
      conditions.push(`created_on ${past}= ${createdOn} AND (created_on ${past} ${createdOn} OR sequence ${backwards ? '<' : '>'} ${p(cursor)})`);
    }
    const order = `created_on ${createdDescending ? 'DESC' : 'ASC'}, sequence ${backwards ? 'DESC' : 'ASC'}`;
    const rows = await this.#rows(
      `SELECT * FROM jobs WHERE ${conditions.join(' AND ')} ORDER BY ${order} LIMIT ${p(query.limit + 1)}`,
      parameters,
    );
    return pageOf(rows.map(jobRecord), query.limit, backwards);
  }

  async entries(jobId: string, query: EntryPageQuery): Promise<Page<Entry>> {
    checkLimit(query.limit);
    if (query.after !== undefined && query.before !== undefined) throw new RangeError('after and before together');
    const job = await this.#sequenceOf(jobId);
    if (job === undefined) return { data: [], more: false };
    const backwards = query.before !== undefined;
    // An exclusive bound; without one, from the start.
    const from = query.before ?? query.after ?? -1;
    const past = backwards ? '<' : '>';
    const direction = backwards ? 'DESC' : 'ASC';
    let rows: Row[];
    if (query.include === undefined && query.exclude === undefined) {
      rows = await this.#rows(
        `SELECT idx, input_data, status, result FROM entries
         WHERE job = $1 AND idx ${past} $2 AND status IS NOT NULL ORDER BY idx ${direction} LIMIT $3`,
        [job, from, query.limit + 1],
      );
    } else {
      // One index range per status, merged: each reads at most limit + 1 keys however rare or common the status is.
      const statuses = selectedStatuses(query.include, query.exclude, STATUS_CODES, STATUS_CODES);
      rows = await this.#rows(
        `SELECT e.idx, e.input_data, e.status, e.result FROM unnest($2::text[]) AS s (status)
         CROSS JOIN LATERAL (
           SELECT idx, input_data, status, result FROM entries
           WHERE job = $1 AND status = s.status AND idx ${past} $3 ORDER BY idx ${direction} LIMIT $4
         ) AS e
         ORDER BY e.idx ${direction} LIMIT $4`,
        [job, statuses, from, query.limit + 1],
      );
    }
    return pageOf(rows.map(toEntry), query.limit, backwards);
  }

  async countEntries(jobId: string, filter: EntryFilter): Promise<number> {
    const job = await this.#sequenceOf(jobId);
    if (job === undefined) return 0;
    const all = filter.include === undefined && filter.exclude === undefined;
    const [row] = await this.#rows(
      `SELECT COUNT(*) AS n FROM entries WHERE job = $1 AND ${all ? 'status IS NOT NULL' : 'status = ANY($2::text[])'}`,
      all ? [job] : [job, selectedStatuses(filter.include, filter.exclude, STATUS_CODES, STATUS_CODES)],
    );
    return Number(row!['n']);
  }

  async entry(jobId: string, index: number): Promise<Entry | null> {
    const [row] = await this.#rows(
      `SELECT idx, input_data, status, result FROM entries
       WHERE job = (SELECT sequence FROM jobs WHERE id = $1) AND idx = $2 AND status IS NOT NULL`,
      [jobId, index],
    );
    return row === undefined ? null : toEntry(row);
  }

  async pendingInputs(jobId: string, afterIndex: number, limit: number): Promise<PendingInput[]> {
    checkLimit(limit);
    const rows = await this.#rows(
      `SELECT idx, input_data, custom FROM entries
       WHERE job = (SELECT sequence FROM jobs WHERE id = $1) AND idx > $2 AND result IS NULL ORDER BY idx LIMIT $3`,
      [jobId, afterIndex, limit],
    );
    return rows.map(toPendingInput);
  }

  async saveResults(jobId: string, entries: readonly Entry[]): Promise<number> {
    return (await this.#saveResults(jobId, entries, async () => false)).saved;
  }

  /** Stores results, then runs `then` in the same transaction (told the job's sequence) when the job takes results. */
  async #saveResults(
    jobId: string,
    entries: readonly Entry[],
    then: (client: PoolClient, sequence: number) => Promise<boolean>,
  ): Promise<{ readonly saved: number; readonly completed: boolean }> {
    // The first result of an index in this call wins, as it would one call after another.
    const first = new Map<number, Entry>();
    for (const entry of entries) if (!first.has(entry.index)) first.set(entry.index, entry);
    const indexes: number[] = [];
    const statuses: string[] = [];
    const inputData: string[] = [];
    // The usual entry repeats its input: stored without inputData when the row's input is the same.
    const sameInput: string[] = [];
    const ownInput: string[] = [];
    for (const entry of first.values()) {
      const values = resultValues(entry);
      indexes.push(entry.index);
      statuses.push(entry.status);
      inputData.push(entry.inputData);
      ownInput.push(JSON.stringify(values));
      values[0] = null;
      sameInput.push(JSON.stringify(values));
    }
    return this.#transaction(async (client) => {
      // The job row locked first: writers of one job take turns, and an ending job waits for them (or they for it).
      const { rows } = await client.query('SELECT sequence, status FROM jobs WHERE id = $1 FOR UPDATE', [jobId]);
      if (rows.length === 0) throw new Error(`no job ${jobId}`);
      // A tombstone takes no results (a job ended while its last results were on their way).
      if (rows[0]!['status'] === 'Deleted' || rows[0]!['status'] === 'Expired') return { saved: 0, completed: false };
      const job = Number(rows[0]!['sequence']);
      if (indexes.length === 0) return { saved: 0, completed: await then(client, job) };
      // The indexes as an index condition too: before the new job's entries are analyzed, the planner takes them for a
      // row or two and would otherwise scan them all against every result (seconds per write on a large job).
      const saved = await client.query(
        `UPDATE entries AS e
         SET status = v.status, result = CASE WHEN v.input_data = e.input_data THEN v.same_input ELSE v.own_input END
         FROM unnest($2::integer[], $3::text[], $4::text[], $5::text[], $6::text[]) AS v (idx, status, input_data, same_input, own_input)
         WHERE e.job = $1 AND e.idx = ANY($2::integer[]) AND e.idx = v.idx AND e.result IS NULL`,
        [job, indexes, statuses, inputData, sameInput, ownInput],
      );
      const count = saved.rowCount ?? 0;
      if (count > 0) await client.query('UPDATE jobs SET no_of_completed = no_of_completed + $1 WHERE sequence = $2', [count, job]);
      return { saved: count, completed: await then(client, job) };
    });
  }

  async completeJob(jobId: string, completedOn: string, callback?: CallbackEvent): Promise<void> {
    checkIso('completedOn', completedOn);
    if (callback !== undefined) checkCallbackEvent(callback, jobId);
    const job = await this.#requireSequence(jobId);
    // Only a job in progress completes: a job ended meanwhile stays a tombstone, and sends no callback.
    await this.#transaction(async (client) => {
      const completed = await client.query(
        `UPDATE jobs SET status = 'Completed', completed_on = $1, completed_at_ms = $2 WHERE sequence = $3 AND status = 'InProgress'`,
        [completedOn, Date.parse(completedOn), job],
      );
      if ((completed.rowCount ?? 0) > 0) await this.#completed(client, jobId, job, callback);
    });
  }

  /**
   * Stores results as `saveResults` does and, in the same transaction, completes the job when they were its last
   * ones: `completion` gives the completion time and callback event from the job as stored with them. The job is
   * completed by the one transaction that stores its last result, whichever process runs it.
   */
  async saveResultsCompleting(
    jobId: string,
    entries: readonly Entry[],
    completion: (job: JobRecord) => { readonly completedOn: string; readonly callback?: CallbackEvent },
  ): Promise<{ readonly saved: number; readonly completed: boolean }> {
    return this.#saveResults(jobId, entries, async (client, sequence) => {
      const [row] = (await client.query('SELECT * FROM jobs WHERE sequence = $1', [sequence])).rows;
      const job = jobRecord(row!);
      if (job.status !== 'InProgress' || job.noOfCompleted < job.noOfEntries) return false;
      const { completedOn, callback } = completion(job);
      checkIso('completedOn', completedOn);
      if (callback !== undefined) checkCallbackEvent(callback, jobId);
      await client.query(`UPDATE jobs SET status = 'Completed', completed_on = $1, completed_at_ms = $2 WHERE sequence = $3`, [
        completedOn,
        Date.parse(completedOn),
        sequence,
      ]);
      await this.#completed(client, jobId, sequence, callback);
      return true;
    });
  }

  /** In a completing transaction: the callback event into the outbox, and the word to listeners (at commit). */
  async #completed(client: PoolClient, jobId: string, sequence: number, callback: CallbackEvent | undefined): Promise<void> {
    await settleJob(client, jobId, sequence);
    if (callback !== undefined) {
      await client.query(
        `INSERT INTO callback_outbox (job, url, skip_certificate_validation, idempotency_key, body, due_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [sequence, callback.url, callback.skipServerCertificateValidation, callback.idempotencyKey, callback.body, callback.dueAt],
      );
    }
    await client.query('SELECT pg_notify($1, $2)', [this.#endedChannel(), jobId]);
  }

  async unfinishedJobs(): Promise<JobRecord[]> {
    return (await this.#rows(`SELECT * FROM jobs WHERE status = 'InProgress' ORDER BY sequence`)).map(jobRecord);
  }

  async endJob(jobId: string, status: 'Deleted' | 'Expired', endedOn: string): Promise<void> {
    checkEnding(status, endedOn);
    const job = await this.#requireSequence(jobId);
    // The tombstone and the dropped callback first (an ended job stays ended), then its entries a batch at a time; if
    // the process stops in between, the next opening finishes the deletion. Its credit reservation is settled with the
    // tombstone, its verified entries counted before they go.
    await this.#transaction(async (client) => {
      const ended = await client.query(
        `UPDATE jobs SET status = $1, ended_on = $2 WHERE sequence = $3 AND status IN ('InProgress', 'Completed')`,
        [status, endedOn, job],
      );
      if ((ended.rowCount ?? 0) > 0) await settleJob(client, jobId, job);
      await client.query('DELETE FROM callback_outbox WHERE job = $1', [job]);
      await client.query('SELECT pg_notify($1, $2)', [this.#endedChannel(), jobId]);
    });
    await this.#deleteEntries(job);
  }

  async expiredJobs(now: string, defaultRetentionMs: number): Promise<JobRecord[]> {
    checkRetention(now, defaultRetentionMs);
    const nowMs = Date.parse(now);
    const rows = await this.#rows(
      `SELECT * FROM jobs WHERE status = 'Completed' AND completed_at_ms <= $1
         AND completed_at_ms + COALESCE(retention_ms, $2) <= $1 ORDER BY sequence`,
      [nowMs, defaultRetentionMs],
    );
    return rows.map(jobRecord);
  }

  async purgeTombstones(before: string): Promise<number> {
    checkIso('before', before);
    const result = await this.#query(`DELETE FROM jobs WHERE ended_on < $1 AND status IN ('Deleted', 'Expired')`, [before]);
    return result.rowCount ?? 0;
  }

  async dueCallbacks(now: number, limit: number): Promise<CallbackDelivery[]> {
    checkLimit(limit);
    const rows = await this.#rows(
      `SELECT o.*, jobs.id AS job_id FROM callback_outbox AS o JOIN jobs ON jobs.sequence = o.job
       WHERE due_at <= $1 ORDER BY due_at, o.id LIMIT $2`,
      [now, limit],
    );
    return rows.map(toCallbackDelivery);
  }

  async nextCallbackAt(): Promise<number | null> {
    const [row] = await this.#rows('SELECT MIN(due_at) AS next FROM callback_outbox');
    return row?.['next'] === null || row?.['next'] === undefined ? null : Number(row['next']);
  }

  async callbackAttempted(id: number, firstAttemptAt: number, dueAt: number): Promise<void> {
    checkAttemptTimes(firstAttemptAt, dueAt);
    await this.#query('UPDATE callback_outbox SET attempts = attempts + 1, first_attempt_at = $1, due_at = $2 WHERE id = $3', [
      firstAttemptAt,
      dueAt,
      id,
    ]);
  }

  async removeCallback(id: number): Promise<void> {
    await this.#query('DELETE FROM callback_outbox WHERE id = $1', [id]);
  }

  async jobTotals(): Promise<JobTotals[]> {
    const rows = await this.#rows(
      `SELECT status, COUNT(*) AS jobs, COALESCE(SUM(no_of_entries), 0) AS entries, COALESCE(SUM(no_of_completed), 0) AS completed
       FROM jobs WHERE status <> '${CREATING}' GROUP BY status ORDER BY status`,
    );
    return rows.map((row) => ({
      status: row['status'] as JobStatus,
      jobs: Number(row['jobs']),
      entries: Number(row['entries']),
      completedEntries: Number(row['completed']),
    }));
  }

  async getSetting(key: string): Promise<string | null> {
    const [row] = await this.#rows('SELECT value FROM settings WHERE key = $1', [key]);
    return row === undefined ? null : (row['value'] as string);
  }

  async setSetting(key: string, value: string): Promise<void> {
    await this.#query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [
      key,
      value,
    ]);
  }

  /** Keeps `value` under `key` unless the key has a value already; returns the value kept (processes starting together agree). */
  async initSetting(key: string, value: string): Promise<string> {
    await this.#query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value]);
    return (await this.getSetting(key)) ?? value;
  }

  /** The inputs at `indexes` (those the job has), in index order, each with its result or null. */
  async inputsAt(jobId: string, indexes: readonly number[]): Promise<StoredInput[]> {
    const rows = await this.#rows(
      `SELECT idx, input_data, custom, status, result FROM entries
       WHERE job = (SELECT sequence FROM jobs WHERE id = $1) AND idx = ANY($2::integer[]) ORDER BY idx`,
      [jobId, indexes],
    );
    return rows.map(toStoredInput);
  }

  /** Every input of the job from `afterIndex` (exclusive), in index order, each with its result or null. */
  async storedInputs(jobId: string, afterIndex: number, limit: number): Promise<StoredInput[]> {
    checkLimit(limit);
    const rows = await this.#rows(
      `SELECT idx, input_data, custom, status, result FROM entries
       WHERE job = (SELECT sequence FROM jobs WHERE id = $1) AND idx > $2 ORDER BY idx LIMIT $3`,
      [jobId, afterIndex, limit],
    );
    return rows.map(toStoredInput);
  }

  /** Jobs in progress, in creation order, a page at a time (keyset on `sequence`, exclusive). */
  async jobsInProgress(afterSequence: number, limit: number): Promise<JobRecord[]> {
    checkLimit(limit);
    return (
      await this.#rows(`SELECT * FROM jobs WHERE status = 'InProgress' AND sequence > $1 ORDER BY sequence LIMIT $2`, [afterSequence, limit])
    ).map(jobRecord);
  }

  /**
   * Listens for jobs that complete or end, in every process sharing the store: `onEnded(jobId)` at each one's commit.
   * The listening connection is made again when it fails (the server restarted); `onReconnected` is told, since words
   * sent meanwhile are lost. Resolves once listening.
   */
  async listenJobEnds(onEnded: (jobId: string) => void, onReconnected: () => void = () => {}): Promise<Listening> {
    const { default: pg } = await import('pg');
    const channel = this.#endedChannel();
    let closed = false;
    let client: InstanceType<typeof pg.Client> | null = null;
    let retry: NodeJS.Timeout | null = null;
    const connect = async (): Promise<void> => {
      const next = new pg.Client({ connectionString: this.#connectionString });
      next.on('error', () => {});
      next.on('notification', (message) => {
        if (message.channel === channel && message.payload !== undefined) onEnded(message.payload);
      });
      next.on('end', () => {
        if (client === next) client = null;
        if (!closed) again(true);
      });
      await next.connect();
      await next.query(`LISTEN "${channel}"`);
      if (closed) return void (await next.end().catch(() => {}));
      client = next;
    };
    const again = (reconnected: boolean): void => {
      if (retry !== null || closed) return;
      retry = setTimeout(() => {
        retry = null;
        connect().then(
          () => reconnected && onReconnected(),
          () => again(reconnected),
        );
      }, LISTEN_RETRY_MS);
    };
    try {
      await connect();
    } catch (error) {
      throw storeError(error);
    }
    return {
      close: async () => {
        closed = true;
        if (retry !== null) clearTimeout(retry);
        await client?.end().catch(() => {});
      },
    };
  }

  async createUser(user: UserRecord): Promise<void> {
    await uniqueUsername(() =>
      this.#query('INSERT INTO users (id, username_key, etag, record) VALUES ($1, $2, $3, $4)', [
        user.id,
        storedUsernameKey(user),
        user.etag,
        JSON.stringify(user),
      ]),
    );
  }

  async getUser(id: string): Promise<UserRecord | null> {
    const [row] = await this.#rows('SELECT record FROM users WHERE id = $1', [id]);
    return row === undefined ? null : (JSON.parse(row['record'] as string) as UserRecord);
  }

  async userByUsername(username: string): Promise<UserRecord | null> {
    const [row] = await this.#rows('SELECT record FROM users WHERE username_key = $1', [usernameKey(username)]);
    return row === undefined ? null : (JSON.parse(row['record'] as string) as UserRecord);
  }

  async updateUser(user: UserRecord, expectedEtag: string): Promise<boolean> {
    const result = await uniqueUsername(() =>
      this.#query('UPDATE users SET username_key = $1, etag = $2, record = $3 WHERE id = $4 AND etag = $5', [
        storedUsernameKey(user),
        user.etag,
        JSON.stringify(user),
        user.id,
        expectedEtag,
      ]),
    );
    return result.rowCount === 1;
  }

  async listUsers(query: UserListQuery): Promise<{ data: UserRecord[]; more: boolean }> {
    // An account has users by the hundred, not the million: read whole, ordered here (in JavaScript's string order).
    const rows = await this.#rows('SELECT record FROM users ORDER BY sequence');
    const users = rows
      .map((row) => JSON.parse(row['record'] as string) as UserRecord)
      .filter((user) => (query.includeDeleted || user.deletedOn === undefined) && (query.type === undefined || user.detail.type === query.type));
    const sorted = sortUsers(users, query.sort);
    return { data: sorted.slice(query.offset, query.offset + query.limit), more: sorted.length > query.offset + query.limit };
  }

  async reserveCredits(request: Parameters<CreditStore['reserveCredits']>[0]): Promise<ReserveOutcome> {
    const { jobId, entries, unitPrice } = request;
    const cost = entries * unitPrice;
    if (!Number.isSafeInteger(cost) || cost <= 0) throw new RangeError(`a reservation costs a positive whole number of micro-credits, not ${cost}`);
    const day = dayKey(request.day);
    const month = monthOf(request.day);
    return this.#transaction(async (client) => {
      const packs = await lockBalance(client);
      const { rows } = await client.query(
        `SELECT COALESCE(SUM(free) FILTER (WHERE day = $1), 0) AS today, COALESCE(SUM(free + packs), 0) AS month
         FROM credit_days WHERE day BETWEEN $2 AND $3`,
        [day, dayKey(month.first), dayKey(month.last)],
      );
      const plan = planReservation(
        {
          freeDaily: request.freeDaily,
          freeUsedToday: Number(rows[0]!['today']),
          packs,
          monthlyMax: request.monthlyMax,
          usedThisMonth: Number(rows[0]!['month']),
        },
        cost,
      );
      if (plan.outcome !== 'reserved') return plan.outcome;
      await client.query('UPDATE credit_balance SET packs = packs - $1 WHERE id = 1', [plan.packs]);
      await addToDay(client, day, plan.free, plan.packs);
      await client.query('INSERT INTO credit_reservations (job_id, day, free, packs, unit_price) VALUES ($1, $2, $3, $4, $5)', [
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
    await this.#transaction(async (client) => {
      await lockBalance(client);
      await release(client, jobId, 0);
    });
  }

  async settleReservations(): Promise<number> {
    const open = await this.#rows('SELECT job_id FROM credit_reservations');
    let settled = 0;
    for (const { job_id: jobId } of open) {
      const done = await this.#transaction(async (client) => {
        await lockBalance(client);
        // Read again under the lock: another process may have settled it, or stored its job, meanwhile.
        const { rows } = await client.query(
          `SELECT r.reserved_at < now() - make_interval(secs => $2) AS abandoned, jobs.sequence, jobs.status
           FROM credit_reservations AS r LEFT JOIN jobs ON jobs.id = r.job_id WHERE r.job_id = $1`,
          [jobId, DRAFT_ABANDONED_MS / 1000],
        );
        const row = rows[0];
        if (row === undefined || row['status'] === 'InProgress') return false;
        // A job never stored (or whose creation did not finish) gives back the whole reservation, once no process
        // can still be storing it.
        if (row['sequence'] === null || row['status'] === CREATING) {
          if (row['abandoned'] !== true) return false;
          await release(client, jobId as string, 0);
        } else {
          await settleJob(client, jobId as string, Number(row['sequence']));
        }
        return true;
      });
      if (done) settled++;
    }
    return settled;
  }

  async addCreditPacks(micro: number): Promise<number> {
    if (!Number.isSafeInteger(micro) || micro <= 0) throw new RangeError(`credits: a positive whole number of micro-credits, not ${micro}`);
    return this.#transaction(async (client) => {
      const packs = (await lockBalance(client)) + micro;
      if (packs > MAX_BALANCE_MICRO) throw new RangeError('the credit packs balance would pass its largest value');
      await client.query('UPDATE credit_balance SET packs = $1 WHERE id = 1', [packs]);
      return packs;
    });
  }

  async creditBalance(day: string): Promise<{ packs: number; freeUsed: number }> {
    const [row] = await this.#rows(
      'SELECT packs, (SELECT free FROM credit_days WHERE day = $1) AS free FROM credit_balance WHERE id = 1',
      [dayKey(day)],
    );
    return { packs: Number(row!['packs']), freeUsed: Number(row!['free'] ?? 0) };
  }

  async dailyUsage(query: DailyUsageQuery): Promise<{ data: DailyUsage[]; more: boolean }> {
    checkLimit(query.limit);
    if (query.after !== undefined && query.before !== undefined) throw new RangeError('after and before together');
    const parameters: unknown[] = [];
    const conditions = ['(free > 0 OR packs > 0)'];
    const bound = (condition: string, value: number | undefined): void => {
      if (value !== undefined) conditions.push(`${condition} $${parameters.push(value)}`);
    };
    bound('day >=', query.since === undefined ? undefined : dayKey(query.since));
    bound('day <=', query.until === undefined ? undefined : dayKey(query.until));
    bound('day >', query.after);
    bound('day <', query.before);
    const backwards = query.before !== undefined;
    const rows = await this.#rows(
      `SELECT day, free, packs FROM credit_days WHERE ${conditions.join(' AND ')}
       ORDER BY day ${backwards ? 'DESC' : 'ASC'} LIMIT $${parameters.push(query.limit + 1)}`,
      parameters,
    );
    const more = rows.length > query.limit;
    if (more) rows.length = query.limit;
    if (backwards) rows.reverse();
    return {
      data: rows.map((row) => {
        const day = String(row['day']);
        return { date: `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)}`, freeCredits: Number(row['free']), creditPacks: Number(row['packs']) };
      }),
      more,
    };
  }

  /**
   * Tries to become the one holder of `name` among the processes sharing the store (a session advisory lock on a
   * connection of its own): null when another holds it. The hold ends with `release()`, or when the connection fails
   * (`lost` resolves then), so a process that dies lets another take over.
   */
  async tryHold(name: string): Promise<Hold | null> {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: this.#connectionString });
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query('SELECT pg_try_advisory_lock(hashtext($1)) AS held', [`mailverify:${this.#schema}:${name}`]);
      if (rows[0]?.['held'] !== true) {
        await client.end();
        return null;
      }
    } catch (error) {
      await client.end().catch(() => {});
      throw storeError(error);
    }
    let release: () => void = () => {};
    const lost = new Promise<void>((resolve) => (release = resolve));
    client.on('end', release);
    // A connection that dies quietly (a cable pulled) is noticed by a query now and then.
    const check = setInterval(() => client.query('SELECT 1').catch(() => client.end().catch(() => {})), HOLD_CHECK_MS);
    void lost.then(() => clearInterval(check));
    return {
      lost,
      release: async () => {
        clearInterval(check);
        await client.end().catch(() => {});
        release();
      },
    };
  }

  /** The notification channel of job endings, one per schema (a channel name is at most 63 bytes). */
  #endedChannel(): string {
    return `mailverify_ended_${this.#schema}`.slice(0, 63);
  }

  /**
   * Runs `work` on an import into this store, all in one transaction: committed once `work` has written everything,
   * rolled back if it throws (the schema stays empty). The store's tables are locked meanwhile (other processes may
   * read them, not write). Refused when the schema already holds jobs, users or credits; settings are replaced.
   */
  async importContents<T>(work: (target: StoreImport) => Promise<T>): Promise<T> {
    return this.#transaction(async (client) => {
      await client.query(
        'LOCK TABLE jobs, entries, settings, callback_outbox, users, credit_balance, credit_days, credit_reservations IN EXCLUSIVE MODE',
      );
      const { rows } = await client.query(
        `SELECT EXISTS (SELECT 1 FROM jobs) AS jobs, EXISTS (SELECT 1 FROM users) AS users,
           EXISTS (SELECT 1 FROM credit_days) OR EXISTS (SELECT 1 FROM credit_reservations)
             OR (SELECT packs FROM credit_balance WHERE id = 1) <> 0 AS credits`,
      );
      const held = ['jobs', 'users', 'credits'].filter((part) => rows[0]![part] === true);
      if (held.length > 0) {
        const parts = held.length === 1 ? held[0] : `${held.slice(0, -1).join(', ')} and ${held.at(-1)}`;
        throw new Error(`the schema already holds ${parts}: an import goes into an empty one`);
      }
      // Rows as one JSON array per statement, read back by json_to_recordset: one parameter whatever the chunk's size.
      const insert = async (sql: string, values: readonly unknown[]): Promise<void> => {
        if (values.length > 0) await client.query(sql, [JSON.stringify(values)]);
      };
      const result = await work({
        jobs: (jobs) =>
          insert(
            `INSERT INTO jobs (sequence, id, owner, client_ip, name, quality, deduplication, priority, retention_ms, callback, interface,
               overrides, created_on, status, no_of_entries, no_of_completed, completed_on, completed_at_ms, ended_on)
             OVERRIDING SYSTEM VALUE
             SELECT sequence, id, owner, client_ip, name, quality, deduplication, priority, retention_ms, callback, interface,
               overrides, created_on, status, no_of_entries, no_of_completed, completed_on, completed_at_ms, ended_on
             FROM json_to_recordset($1::json) AS x (sequence bigint, id text, owner text, client_ip text, name text, quality text,
               deduplication text, priority integer, retention_ms bigint, callback text, interface text, overrides text,
               created_on text, status text, no_of_entries integer, no_of_completed integer, completed_on text,
               completed_at_ms bigint, ended_on text)`,
            jobs.map((job) => {
              const [id, owner, client_ip, name, quality, deduplication, priority, retention_ms, callback, iface, overrides, created_on] = jobValues(job);
              return {
                sequence: job.sequence,
                id,
                owner,
                client_ip,
                name,
                quality,
                deduplication,
                priority,
                retention_ms,
                callback,
                interface: iface,
                overrides,
                created_on,
                status: job.status,
                no_of_entries: job.noOfEntries,
                no_of_completed: job.noOfCompleted,
                completed_on: job.completedOn ?? null,
                completed_at_ms: job.completedOn === undefined ? null : Date.parse(job.completedOn),
                ended_on: job.endedOn ?? null,
              };
            }),
          ),
        entries: (entries) =>
          insert(
            `INSERT INTO entries (job, idx, input_data, custom, status, result)
             SELECT job, idx, input_data, custom, status, result
             FROM json_to_recordset($1::json) AS x (job bigint, idx integer, input_data text, custom text, status text, result text)`,
            entries.map((entry) => ({
              job: entry.job,
              idx: entry.index,
              input_data: entry.inputData,
              custom: entry.custom,
              status: entry.status,
              result: entry.result,
            })),
          ),
        users: (users) =>
          insert(
            `INSERT INTO users (id, username_key, etag, record)
             SELECT id, username_key, etag, record FROM json_to_recordset($1::json) AS x (id text, username_key text, etag text, record text)`,
            users.map((user) => ({ id: user.id, username_key: storedUsernameKey(user), etag: user.etag, record: JSON.stringify(user) })),
          ),
        callbacks: (callbacks) =>
          insert(
            `INSERT INTO callback_outbox (id, job, url, skip_certificate_validation, idempotency_key, body, attempts, first_attempt_at, due_at)
             OVERRIDING SYSTEM VALUE
             SELECT x.id, jobs.sequence, url, skip, key, body, attempts, first_attempt_at, due_at
             FROM json_to_recordset($1::json) AS x (id bigint, job_id text, url text, skip boolean, key text, body text, attempts integer,
               first_attempt_at bigint, due_at bigint)
             JOIN jobs ON jobs.id = x.job_id`,
            callbacks.map((callback) => ({
              id: callback.id,
              job_id: callback.jobId,
              url: callback.url,
              skip: callback.skipServerCertificateValidation,
              key: callback.idempotencyKey,
              body: callback.body,
              attempts: callback.attempts,
              first_attempt_at: callback.firstAttemptAt ?? null,
              due_at: callback.dueAt,
            })),
          ),
        settings: async (settings) => {
          for (const [key, value] of settings) {
            await client.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
          }
        },
        credits: async (credits) => {
          await client.query('UPDATE credit_balance SET packs = $1 WHERE id = 1', [credits.packs]);
          await insert(
            'INSERT INTO credit_days (day, free, packs) SELECT day, free, packs FROM json_to_recordset($1::json) AS x (day integer, free bigint, packs bigint)',
            credits.days,
          );
          await insert(
            `INSERT INTO credit_reservations (job_id, day, free, packs, unit_price)
             SELECT job_id, day, free, packs, unit_price
             FROM json_to_recordset($1::json) AS x (job_id text, day integer, free bigint, packs bigint, unit_price bigint)`,
            credits.reservations.map((reservation) => ({ ...reservation, job_id: reservation.jobId, unit_price: reservation.unitPrice })),
          );
        },
      });
      // Jobs and callbacks kept their sequences and ids (a listing cursor stays valid): the next ones made come after.
      for (const [table, column] of [['jobs', 'sequence'], ['callback_outbox', 'id']] as const) {
        await client.query(
          `SELECT setval(pg_get_serial_sequence('${table}', '${column}'), MAX(${column})) FROM ${table} HAVING MAX(${column}) IS NOT NULL`,
        );
      }
      return result;
    });
  }

  /** Closes every connection of the pool; closing again does nothing. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }

  /** Removes a job row and its entries (a draft), unless the store closes meanwhile. */
  async #removeJob(sequence: number): Promise<void> {
    await this.#deleteEntries(sequence);
    if (!this.#closed) await this.#query('DELETE FROM jobs WHERE sequence = $1', [sequence]);
  }

  /** Deletes a job's entries a batch per transaction. */
  async #deleteEntries(job: number): Promise<void> {
    for (;;) {
      const result = await this.#query(
        'DELETE FROM entries WHERE job = $1 AND idx IN (SELECT idx FROM entries WHERE job = $1 ORDER BY idx LIMIT $2)',
        [job, DELETE_BATCH],
      );
      // Closed meanwhile: the next opening finishes the deletion.
      if ((result.rowCount ?? 0) < DELETE_BATCH || this.#closed) return;
    }
  }

  async #sequenceOf(jobId: string): Promise<number | undefined> {
    const [row] = await this.#rows('SELECT sequence FROM jobs WHERE id = $1', [jobId]);
    return row === undefined ? undefined : Number(row['sequence']);
  }

  async #requireSequence(jobId: string): Promise<number> {
    const sequence = await this.#sequenceOf(jobId);
    if (sequence === undefined) throw new Error(`no job ${jobId}`);
    return sequence;
  }

  async #query(sql: string, parameters: unknown[] = []): Promise<{ rows: QueryResultRow[]; rowCount: number | null }> {
    if (this.#closed) throw new Error('the job store is closed');
    try {
      return await this.#pool.query(sql, parameters);
    } catch (error) {
      throw storeError(error);
    }
  }

  async #rows(sql: string, parameters: unknown[] = []): Promise<Row[]> {
    return (await this.#query(sql, parameters)).rows;
  }

  /** Runs `work` in one transaction on one connection of the pool, rolled back if it throws. */
  async #transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error('the job store is closed');
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw storeError(error);
    }
    let broken: unknown;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        // A connection that cannot roll back is not given back to the pool.
        broken = rollbackError;
      }
      throw storeError(error);
    } finally {
      client.release(broken instanceof Error ? broken : undefined);
    }
  }
}

function toStoredInput(row: Row): StoredInput {
  return { ...toPendingInput(row), entry: row['result'] === null ? null : toEntry(row) };
}

/** Locks the credit balance row for the transaction (every change of credits takes it first); the packs balance. */
async function lockBalance(client: PoolClient): Promise<number> {
  const { rows } = await client.query('SELECT packs FROM credit_balance WHERE id = 1 FOR UPDATE');
  return Number(rows[0]!['packs']);
}

async function addToDay(client: PoolClient, day: number, free: number, packs: number): Promise<void> {
  await client.query(
    `INSERT INTO credit_days (day, free, packs) VALUES ($1, $2, $3)
     ON CONFLICT (day) DO UPDATE SET free = credit_days.free + excluded.free, packs = credit_days.packs + excluded.packs`,
    [day, free, packs],
  );
}

/**
 * Closes the reservation of `jobId` (the balance locked): the cost of `verified` entries stays consumed, the rest goes
 * back to the reservation's day and, for packs, to the balance. No reservation: nothing.
 */
async function release(client: PoolClient, jobId: string, verified: number): Promise<void> {
  const { rows } = await client.query('DELETE FROM credit_reservations WHERE job_id = $1 RETURNING day, free, packs, unit_price', [jobId]);
  const row = rows[0];
  if (row === undefined) return;
  const back = settlement({ free: Number(row['free']), packs: Number(row['packs']), unitPrice: Number(row['unit_price']) }, verified);
  await addToDay(client, Number(row['day']), -back.free, -back.packs);
  await client.query('UPDATE credit_balance SET packs = packs + $1 WHERE id = 1', [back.packs]);
}

/**
 * Settles the reservation of a finished job: its entries with a result that are not Duplicate were verified. Locks
 * the balance only when there is a reservation (a job submitted with credits off has none).
 */
async function settleJob(client: PoolClient, jobId: string, sequence: number): Promise<void> {
  const { rows: open } = await client.query('SELECT 1 FROM credit_reservations WHERE job_id = $1', [jobId]);
  if (open.length === 0) return;
  await lockBalance(client);
  const { rows } = await client.query(
    `SELECT no_of_completed - (SELECT COUNT(*) FROM entries WHERE job = $1 AND status = 'Duplicate') AS verified
     FROM jobs WHERE sequence = $1`,
    [sequence],
  );
  await release(client, jobId, Number(rows[0]!['verified']));
}

/** Runs a write to the users table; a username already taken becomes UsernameTakenError. */
async function uniqueUsername<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const { code, constraint } = error as { code?: unknown; constraint?: unknown };
    if (code === UNIQUE_VIOLATION && constraint === 'users_by_username') throw new UsernameTakenError();
    throw error;
  }
}

/** PostgreSQL's disk_full as a StorageFullError; any other error as it is. */
function storeError(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code === DISK_FULL ? new StorageFullError(error) : error;
}

/** Inputs from job index `first` on, INSERT_ROWS per statement. */
async function insertInputs(client: PoolClient, sequence: number, first: number, inputs: readonly JobInput[]): Promise<void> {
  for (let start = 0; start < inputs.length; start += INSERT_ROWS) {
    const batch = inputs.slice(start, start + INSERT_ROWS);
    await client.query(
      `INSERT INTO entries (job, idx, input_data, custom)
       SELECT $1, $2::integer + (n - 1)::integer, d, c FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS t (d, c, n)`,
      [sequence, first + start, batch.map((input) => input.inputData), batch.map((input) => input.custom ?? null)],
    );
  }
}

/** A job row with PostgreSQL's 64-bit integers (strings from the driver) as numbers. */
function jobRecord(row: Row): JobRecord {
  return toRecord({
    ...row,
    sequence: Number(row['sequence']),
    retention_ms: row['retention_ms'] === null ? null : Number(row['retention_ms']),
  });
}
