/**
 * Jobs: lists of addresses verified in the background, kept in a store, read page by page. This layer knows nothing
 * of HTTP; the server (src/server/) translates requests into these calls and their answers into the REST interface.
 * A store keeps the data (SQLite by default, `sqlite-store.ts`); a JobRunner runs the jobs on one shared verifier.
 */
import type { Deduplication, Entry, StatusCode } from 'mailverify/internal';
import type { CreditStore } from '../accounts/credits.js';
import type { UserRecord, UserStore } from '../accounts/types.js';

export type JobStatus = 'InProgress' | 'Completed' | 'Deleted' | 'Expired';

/** The interface a job was submitted through: its entries and overview are written in that version's shapes. */
export type JobInterface = 'v2' | 'v1.4';

export interface CallbackSettings {
  /** Absolute http(s) URL. */
  readonly url: string;
  readonly version: '1.0' | '1.1';
  readonly skipServerCertificateValidation: boolean;
}

/** One input of a job. */
export interface JobInput {
  readonly inputData: string;
  readonly custom?: string;
}

/** What a submission fixes; the store adds the rest. */
export interface NewJob {
  /** A random UUID, lower case. */
  readonly id: string;
  /** The id of the user who submitted it. */
  readonly owner: string;
  /** The client's address (an IPv4-mapped IPv6 address in its IPv4 form). */
  readonly clientIP: string;
  readonly name?: string;
  /** 'Standard', 'High' or 'Extreme'. */
  readonly quality: string;
  readonly deduplication: Deduplication;
  /** 0–255; absent: normal (127), and left out of the overview. */
  readonly priority?: number;
  /** The job's own retention in milliseconds; absent: the server's default applies. */
  readonly retentionMs?: number;
  readonly callback?: CallbackSettings;
  readonly interface: JobInterface;
  /**
   * The key of the account's override rules at submission (a setting of the store, src/jobs/overrides.ts): the job
   * runs with that list whatever the account's rules become. Absent: no rules.
   */
  readonly overrides?: string;
  /** ISO 8601 UTC with milliseconds: the time the request was accepted (createdOn = submittedOn). */
  readonly createdOn: string;
}

/** A job as the store keeps it. Deleted and expired jobs are tombstones: their entries are gone. */
export interface JobRecord extends NewJob {
  readonly status: JobStatus;
  readonly noOfEntries: number;
  /** Entries with a result. */
  readonly noOfCompleted: number;
  readonly completedOn?: string;
  /** When it became Deleted or Expired. */
  readonly endedOn?: string;
  /** Creation order: ties of createdOn are listed in this order. */
  readonly sequence: number;
}

/** Which entries a page holds: by status (include and exclude lists, both optional). */
export interface EntryFilter {
  readonly include?: readonly StatusCode[];
  readonly exclude?: readonly StatusCode[];
}

/** A page of entries: `after` (exclusive) forwards, or `before` (exclusive) backwards; always in index order. */
export interface EntryPageQuery extends EntryFilter {
  readonly after?: number;
  readonly before?: number;
  readonly limit: number;
}

export interface Page<T> {
  readonly data: T[];
  /** More items past the last one in the direction of travel. */
  readonly more: boolean;
}

export interface JobListQuery {
  /** The jobs of this owner; absent: every job of the account. */
  readonly owner?: string;
  /** Newest first (default) or oldest first. */
  readonly sort: 'createdOn' | '-createdOn';
  /** Inclusive bounds on createdOn, ISO 8601. */
  readonly createdSince?: string;
  readonly createdUntil?: string;
  readonly include?: readonly JobStatus[];
  readonly exclude?: readonly JobStatus[];
  /** Keyset paging on `sequence`, exclusive, in the order of `sort`. */
  readonly afterSequence?: number;
  readonly beforeSequence?: number;
  readonly limit: number;
}

/**
 * A completion callback event, made when its job completes and kept in the store's outbox until it is delivered or
 * dropped. The key and the body are fixed at creation: every try sends the same ones.
 */
export interface CallbackEvent {
  readonly jobId: string;
  readonly url: string;
  readonly skipServerCertificateValidation: boolean;
  /** A random UUID, sent as `Idempotency-Key`. */
  readonly idempotencyKey: string;
  /** The JSON body. */
  readonly body: string;
  /** When the first try is due (milliseconds since the epoch): the job's completion. */
  readonly dueAt: number;
}

/** An event of the outbox with its delivery state. */
export interface CallbackDelivery extends CallbackEvent {
  /** The outbox's own id of the event. */
  readonly id: number;
  /** Tries made so far. */
  readonly attempts: number;
  /** When the first try started (milliseconds since the epoch); absent before it. */
  readonly firstAttemptAt?: number;
}

/** The jobs of one status, and their entries. */
export interface JobTotals {
  readonly status: JobStatus;
  readonly jobs: number;
  /** Entries of these jobs: all of them, and those with a result (a deleted or expired job's were its own). */
  readonly entries: number;
  readonly completedEntries: number;
}

/** An input still without a result, for the runner. */
export interface PendingInput extends JobInput {
  readonly index: number;
}

/** A job being created from inputs that arrive in batches (see `JobStore.draftJob`). */
export interface JobDraft {
  /** Stores the next inputs; their indexes follow those of the inputs added before. */
  add(inputs: readonly JobInput[]): Promise<void>;
  /** Drops every input added so far. */
  clear(): Promise<void>;
  /** Makes the job whole and visible, InProgress, with the inputs added. */
  commit(job: NewJob): Promise<JobRecord>;
  /** Removes the draft and its inputs. */
  discard(): Promise<void>;
}

/**
 * A write the store refused because the disk holding it is full (SQLite's SQLITE_FULL). Nothing of the write was
 * kept; the same write can succeed once space comes back. A store of another kind throws it for the same condition.
 */
export class StorageFullError extends Error {
  constructor(cause?: unknown) {
    super(cause instanceof Error ? cause.message : 'the disk holding the job store is full', { cause });
    this.name = 'StorageFullError';
  }
}

/**
 * Where jobs live. Every method may be asynchronous (a PostgreSQL store will be); the SQLite store answers at once.
 * Methods never see HTTP; ids are checked by the caller. A write refused for a full disk rejects with
 * StorageFullError and changes nothing: the runner tries it again, the server answers 507 (503 to a DELETE).
 */
export interface JobStore {
  /**
   * The job and all its inputs. A store may write them in several transactions (other work going on between), but
   * the job is seen by no other call until it is whole, and a creation cut short by a crash leaves nothing behind.
   */
  createJob(job: NewJob, inputs: readonly JobInput[]): Promise<JobRecord>;
  /**
   * Optional: a job whose inputs are stored batch by batch while its submission arrives, seen by no other call until
   * it is committed, and leaving nothing behind when discarded or cut short by a crash. Without it, the inputs of a
   * streamed submission are held in memory and given to `createJob` at the end.
   */
  draftJob?(): Promise<JobDraft>;
  getJob(id: string): Promise<JobRecord | null>;
  listJobs(query: JobListQuery): Promise<Page<JobRecord>>;
  /** Entries with a result, in index order; `more` says whether the filter matches more past the page. */
  entries(jobId: string, query: EntryPageQuery): Promise<Page<Entry>>;
  /** How many entries with a result the filter matches (0 for an unknown job). */
  countEntries(jobId: string, filter: EntryFilter): Promise<number>;
  /** The entry at `index`, or null when it has no result (or the job has no such index). */
  entry(jobId: string, index: number): Promise<Entry | null>;
  /** Inputs without a result, from `afterIndex` (exclusive), in index order. */
  pendingInputs(jobId: string, afterIndex: number, limit: number): Promise<PendingInput[]>;
  /**
   * Stores results (entries carry their job index); an entry that already has a result keeps it, so a result that
   * comes twice (after a restart) is stored once. Returns how many entries got their first result.
   */
  saveResults(jobId: string, entries: readonly Entry[]): Promise<number>;
  /**
   * Marks the job Completed at `completedOn` (every entry has its result) and, in the same transaction, puts its
   * callback event in the outbox. A job that is not InProgress is left as it is, and the event is not kept.
   */
  completeJob(jobId: string, completedOn: string, callback?: CallbackEvent): Promise<void>;
  /** Jobs InProgress: run again after a restart. */
  unfinishedJobs(): Promise<JobRecord[]>;
  /** Drops the job's entries and its pending callback, and keeps a tombstone with `status` from `endedOn`. */
  endJob(jobId: string, status: 'Deleted' | 'Expired', endedOn: string): Promise<void>;
  /** Completed jobs whose retention ended by `now` (their own, else `defaultRetentionMs`). */
  expiredJobs(now: string, defaultRetentionMs: number): Promise<JobRecord[]>;
  /** Removes tombstones ended before `before`; returns how many. */
  purgeTombstones(before: string): Promise<number>;
  /** Outbox events due by `now` (milliseconds since the epoch), soonest first, at most `limit`. */
  dueCallbacks(now: number, limit: number): Promise<CallbackDelivery[]>;
  /** When the next outbox event is due (milliseconds since the epoch); null when the outbox is empty. */
  nextCallbackAt(): Promise<number | null>;
  /** Records a failed try of event `id`: one more attempt, the first try's start, and when the next one is due. */
  callbackAttempted(id: number, firstAttemptAt: number, dueAt: number): Promise<void>;
  /** Removes event `id` from the outbox (delivered or given up); an id no longer there is ignored. */
  removeCallback(id: number): Promise<void>;
  /** The jobs by status with their entries (for metrics, read at each scrape: one pass over the jobs, not the entries). */
  jobTotals(): Promise<JobTotals[]>;
  /** Small settings kept with the data (the root user's id, the token signing secret). */
  getSetting(key: string): Promise<string | null>;
  setSetting(key: string, value: string): Promise<void>;
  /**
   * Optional: keeps `value` under `key` unless the key has a value already, and returns the value kept, in one step
   * (processes that start together on a shared store agree on one).
   */
  initSetting?(key: string, value: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A store the server keeps everything in: jobs, users and credits. Both stores of this package (SQLite and PostgreSQL)
 * are one; a host's own store needs credits only when they are accounted.
 */
export type ServiceStore = JobStore & UserStore & CreditStore;

/**
 * An entry as a store keeps it, for copying a store into another: the job's sequence, the input, and the result in
 * the stores' shared form (store-rows.ts), null until answered.
 */
export interface StoredEntry {
  readonly job: number;
  readonly index: number;
  readonly inputData: string;
  readonly custom: string | null;
  readonly status: string | null;
  readonly result: string | null;
}

/** The credits a store keeps, in micro-credits: the packs balance, each day's consumption, the open reservations. */
export interface StoredCredits {
  readonly packs: number;
  readonly days: readonly { readonly day: number; readonly free: number; readonly packs: number }[];
  readonly reservations: readonly {
    readonly jobId: string;
    readonly day: number;
    readonly free: number;
    readonly packs: number;
    readonly unitPrice: number;
  }[];
}

/**
 * Everything a store keeps, read from one consistent snapshot. The large parts come in chunks (a few thousand rows
 * each), in the order they were made: jobs and users by sequence, entries by job and index, callbacks by id.
 */
export interface StoreContents {
  jobs(): AsyncIterable<JobRecord[]>;
  entries(): AsyncIterable<StoredEntry[]>;
  users(): AsyncIterable<UserRecord[]>;
  callbacks(): AsyncIterable<CallbackDelivery[]>;
  settings(): Promise<ReadonlyMap<string, string>>;
  credits(): Promise<StoredCredits>;
}

/**
 * Writes a store's contents into another, a chunk at a time, keeping sequences, ids and times as they are: jobs
 * before their entries and callbacks.
 */
export interface StoreImport {
  jobs(jobs: readonly JobRecord[]): Promise<void>;
  entries(entries: readonly StoredEntry[]): Promise<void>;
  users(users: readonly UserRecord[]): Promise<void>;
  callbacks(callbacks: readonly CallbackDelivery[]): Promise<void>;
  settings(settings: ReadonlyMap<string, string>): Promise<void>;
  credits(credits: StoredCredits): Promise<void>;
}
