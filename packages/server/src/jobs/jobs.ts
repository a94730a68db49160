/**
 * Jobs: submitted lists verified in the background on one shared verifier, their results written to a store as they
 * finish. Every running job is one batch of the verifier's planner (`verifyMany`), so jobs share its connections,
 * caches and caps, and a job's priority decides who gets a free connection first.
 *
 * Durability: results are written in batched transactions at least every `flushIntervalMs` (default 200 ms). After
 * a crash, a job still InProgress is run again over its inputs without a result; the store keeps the first result of
 * an entry, so every entry is answered exactly once.
 *
 * A full disk: a write the store refuses with StorageFullError is tried again, after 100 ms and then twice as long
 * each time up to 5 s, until it succeeds; meanwhile the job takes no more results from its batch (memory stays
 * bounded by the batch's window) and goes on by itself once the disk has room, without a restart.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  SETTLED,
  findQuality,
  nextTurn,
  type Entry,
  type QualityLevel,
  type SettledInput,
  type Verifier,
} from 'mailverify/internal';
import { completionEvent } from './callbacks.js';
import { OverrideLists } from './overrides.js';
import { isoTime, realClock, type Clock } from './clock.js';
import { entryPages } from './pages.js';
import { StorageFullError, type JobDraft, type JobInput, type JobRecord, type JobStore, type NewJob, type PendingInput } from './types.js';

/** The first wait before a write refused for a full disk is tried again; each wait doubles, up to the second. */
const FULL_DISK_FIRST_RETRY_MS = 100;
const FULL_DISK_LAST_RETRY_MS = 5_000;


export interface JobsOptions {
  readonly store: JobStore;
  /** The verifier every job runs on. The caller closes it, after `Jobs.close()`. */
  readonly verifier: Verifier;
  /** Results are written at least this often (default 200 ms)... */
  readonly flushIntervalMs?: number;
  /** ...or as soon as this many are waiting (default 1,000). */
  readonly flushEntries?: number;
  /** Inputs read from the store at once (default 2,000). */
  readonly readChunk?: number;
  /** The time source of completion and end times (default: the real clock). */
  readonly clock?: Clock;
  /** Told when a completed job put its callback event in the store's outbox (the delivery worker's `wake`). */
  readonly onCallbackQueued?: (jobId: string) => void;
  /** The custom quality levels jobs may name (by id, without case), besides Standard, High and Extreme. */
  readonly qualityLevels?: readonly QualityLevel[];
  /**
   * Told when a job names a quality level that is not configured (one removed before a restart): the job runs at the
   * verifier's own level (default: console.warn).
   */
  readonly onUnknownQuality?: (quality: string, jobId: string) => void;
  /** Where a job that fails for a reason of ours is reported (default: console.error). */
  readonly onError?: (error: unknown, jobId: string) => void;
}

export interface JobProgress {
  /** 0–1. */
  readonly percentage: number;
  readonly estimatedTimeRemainingMs?: number;
}

/**
 * What the server needs of whoever runs its jobs: `Jobs` in one process, or the cluster's job front
 * (src/cluster/jobs.ts), which stores jobs and queues them for workers elsewhere.
 */
export interface JobRunner {
  readonly options: { readonly store: JobStore };
  readonly clock: Clock;
  /** Stores the job with its inputs, then starts it. */
  submit(job: NewJob, inputs: readonly JobInput[]): Promise<JobRecord>;
  /** A job whose inputs are stored while they arrive; `commit` starts it. */
  draft(): JobDraft;
  get(id: string): Promise<JobRecord | null>;
  /** Progress of a running job when this process knows it; undefined otherwise (the store's counts tell). */
  progress(id: string): JobProgress | undefined;
  /** Resolves when the job is no longer in progress, or after `ms`, whichever comes first. */
  waitForEnd(id: string, ms: number): Promise<void>;
  /** Ends a job as Deleted; the tombstone, or null for an unknown id. */
  delete(id: string): Promise<JobRecord | null>;
  close(): Promise<void>;
}

export class Jobs implements JobRunner {
  private readonly runs = new Map<string, JobRun>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /** @internal Override lists read from the store, by key. */
  readonly overrideLists: OverrideLists;
  private closing = false;

  /** @internal */
  readonly clock: Clock;

  private constructor(readonly options: JobsOptions) {
    this.clock = options.clock ?? realClock;
    this.overrideLists = new OverrideLists(options.store);
  }

  /** Opens the jobs of `store`, and runs again every job a previous process left InProgress. */
  static async open(options: JobsOptions): Promise<Jobs> {
    const jobs = new Jobs(options);
    for (const job of await options.store.unfinishedJobs()) jobs.start(job);
    return jobs;
  }

  /** Stores the job with its inputs, then starts it. */
  async submit(job: NewJob, inputs: readonly JobInput[]): Promise<JobRecord> {
    if (this.closing) throw new Error('jobs: closed');
    const record = await this.options.store.createJob(job, inputs);
    this.start(record);
    return record;
  }

  /**
   * A job whose inputs are stored while they arrive (a streamed submission): `commit` makes it whole and starts it,
   * `discard` leaves nothing. A store without drafts gets the inputs at the commit, held in memory until then.
   */
  draft(): JobDraft {
    if (this.closing) throw new Error('jobs: closed');
    return lazyDraft(this.options.store, async (draft, job) => {
      if (this.closing) {
        await draft.discard();
        throw new Error('jobs: closed');
      }
      const record = await draft.commit(job);
      this.start(record);
      return record;
    });
  }

  get(id: string): Promise<JobRecord | null> {
    return this.options.store.getJob(id);
  }

  /** Progress of a running job; undefined when it is not running here. */
  progress(id: string): JobProgress | undefined {
    return this.runs.get(id)?.progress();
  }

  /** Resolves when the job is no longer running here, or after `ms`, whichever comes first. */
  waitForEnd(id: string, ms: number): Promise<void> {
    if (ms <= 0 || !this.runs.has(id)) return Promise.resolve();
    return new Promise((resolve) => {
      let waiters = this.waiters.get(id);
      if (waiters === undefined) this.waiters.set(id, (waiters = new Set()));
      const done = (): void => {
        clearTimeout(timer);
        waiters!.delete(done);
        if (waiters!.size === 0 && this.waiters.get(id) === waiters) this.waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
  }

  /**
   * Ends a job as Deleted (a running one is stopped first; results not yet written are dropped with the rest).
   * Returns the tombstone, or null for an unknown id. A job already ended is returned as it is. When the store
   * refuses the tombstone (a full disk: StorageFullError), the job is as it was, and a running one goes on.
   */
  async delete(id: string): Promise<JobRecord | null> {
    const { store } = this.options;
    const run = this.runs.get(id);
    if (run !== undefined) await run.stop();
    const job = await store.getJob(id);
    if (job === null || job.status === 'Deleted' || job.status === 'Expired') return job;
    try {
      await store.endJob(id, 'Deleted', isoTime(this.clock));
    } catch (error) {
      const current = await store.getJob(id);
      if (run !== undefined && !this.closing && current?.status === 'InProgress') this.start(current);
      throw error;
    }
    return store.getJob(id);
  }

  /**
   * Stops every running job, writing the results it has: they go on from there at the next open. The store and the
   * verifier stay open (their owner closes them).
   */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.runs.values()].map((run) => run.stop()));
  }

  private start(job: JobRecord): void {
    if (this.runs.has(job.id)) return;
    const run = new JobRun(this, job);
    this.runs.set(job.id, run);
    void run.finished.then(() => {
      this.runs.delete(job.id);
      for (const wake of [...(this.waiters.get(job.id) ?? [])]) wake();
    });
  }

  /** @internal */
  report(error: unknown, jobId: string): void {
    (this.options.onError ?? ((e: unknown, id: string) => console.error(`mailverify: job ${id} failed:`, e)))(error, jobId);
  }

  /** @internal */
  unknownQuality(quality: string, jobId: string): void {
    const warn = (name: string, id: string): void => console.warn(`mailverify: job ${id} names the quality level ${name}, which is not configured: it runs at the verifier's level`);
    (this.options.onUnknownQuality ?? warn)(quality, jobId);
  }
}

/**
 * A draft made at its first input (a submission refused before any, such as a body too large, costs the store
 * nothing); a store without drafts gets the inputs at the commit, held in memory until then. `commit` makes the store's
 * draft whole and starts the job as its runner does.
 */
export function lazyDraft(store: JobStore, commit: (draft: JobDraft, job: NewJob) => Promise<JobRecord>): JobDraft {
  let made: Promise<JobDraft> | undefined;
  const storeDraft = (): Promise<JobDraft> => (made ??= store.draftJob !== undefined ? store.draftJob() : Promise.resolve(inMemoryDraft(store)));
  return {
    add: async (inputs) => (await storeDraft()).add(inputs),
    clear: async () => {
      if (made !== undefined) await (await made).clear();
    },
    discard: async () => {
      if (made !== undefined) await (await made).discard();
    },
    commit: async (job) => commit(await storeDraft(), job),
  };
}

/** The draft of a store without drafts of its own: inputs held until the commit hands them to `createJob`. */
function inMemoryDraft(store: JobStore): JobDraft {
  let inputs: JobInput[] = [];
  return {
    add: async (more) => {
      for (const input of more) inputs.push(input);
    },
    clear: async () => {
      inputs = [];
    },
    commit: (job) => store.createJob(job, inputs),
    discard: async () => {
      inputs = [];
    },
  };
}

/** One job on the planner: reads its inputs from the store, writes its results back in batches. */
class JobRun {
  readonly finished: Promise<void>;
  private readonly controller = new AbortController();
  private stopping = false;
  private buffer: Entry[] = [];
  private writing: Promise<void> = Promise.resolve();
  /** The first write that failed: nothing more is written, and the job is run again at the next start. */
  private writeError: { error: unknown } | null = null;
  /** A write waits for room on a full disk: the batch is not read on meanwhile. */
  private waitingForDisk = false;
  private timer: NodeJS.Timeout | null = null;
  private completed: number;
  private estimatedTimeRemainingMs: number | undefined;
  /** The job index of each input of the batch, by batch index (a resumed job skips the inputs it has answered). */
  private readonly jobIndexes: number[] = [];

  constructor(
    private readonly jobs: Jobs,
    private readonly job: JobRecord,
  ) {
    this.completed = job.noOfCompleted;
    this.finished = this.run();
  }

  progress(): JobProgress {
    const percentage = this.job.noOfEntries === 0 ? 1 : Math.min(1, this.completed / this.job.noOfEntries);
    return this.estimatedTimeRemainingMs === undefined
      ? { percentage }
      : { percentage, estimatedTimeRemainingMs: this.estimatedTimeRemainingMs };
  }

  /** Stops the batch and waits until the results it had are written. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.controller.abort(new Error('job stopped'));
    await this.finished;
  }

  /**
   * Runs a write of the store; one refused for a full disk is tried again with growing waits until it succeeds, or
   * until the job stops (then the refusal is thrown).
   */
  private async whileDiskFull<T>(write: () => Promise<T>): Promise<T> {
    const { signal } = this.controller;
    for (let waitMs = FULL_DISK_FIRST_RETRY_MS; ; waitMs = Math.min(2 * waitMs, FULL_DISK_LAST_RETRY_MS)) {
      try {
        const result = await write();
        this.waitingForDisk = false;
        return result;
      } catch (error) {
        if (!(error instanceof StorageFullError) || signal.aborted) throw error;
      }
      this.waitingForDisk = true;
      await sleep(waitMs, undefined, { signal }).catch(() => {});
    }
  }

  private async run(): Promise<void> {
    const { store, verifier } = this.jobs.options;
    const { job } = this;
    try {
      // The account's rules when the job was submitted, whatever they are now.
      const overrides = job.overrides === undefined ? undefined : await this.jobs.overrideLists.get(job.overrides);
      const quality = findQuality(job.quality, this.jobs.options.qualityLevels);
      if (quality === null) this.jobs.unknownQuality(job.quality, job.id);
      const batch = verifier.verifyMany(this.inputs(), {
        deduplication: job.deduplication,
        ...(overrides !== undefined && { overrides }),
        priority: job.priority ?? 127,
        ...(quality !== null && { quality }),
        signal: this.controller.signal,
        onProgress: (progress) => {
          this.estimatedTimeRemainingMs = progress.estimatedTimeRemainingMs;
        },
      });
      for await (const entry of batch) {
        if (this.writeError !== null) throw this.writeError.error;
        entry.index = this.jobIndexes[entry.index]!;
        if (entry.duplicateOf !== undefined) entry.duplicateOf = this.jobIndexes[entry.duplicateOf]!;
        this.buffer.push(entry);
        this.completed++;
        if (this.buffer.length >= (this.jobs.options.flushEntries ?? 1_000)) this.write();
        else this.timer ??= setTimeout(() => this.write(), this.jobs.options.flushIntervalMs ?? 200);
        if (this.waitingForDisk) await this.writing;
      }
      this.write();
      await this.writing;
      if (this.writeError !== null) throw this.writeError.error;
      const stored = await store.getJob(job.id);
      if (stored !== null && stored.status === 'InProgress' && stored.noOfCompleted === stored.noOfEntries) {
        // The callback event goes into the outbox with the completion, in one transaction: it is sent even if the
        // process stops right after.
        const completedOn = isoTime(this.jobs.clock);
        const event = completionEvent(stored, completedOn);
        await this.whileDiskFull(() => store.completeJob(job.id, completedOn, event));
        if (event !== undefined) this.jobs.options.onCallbackQueued?.(job.id);
      } else if (stored !== null && stored.status === 'InProgress') {
        throw new Error(`${stored.noOfEntries - stored.noOfCompleted} entries have no result after the batch ended`);
      }
    } catch (error) {
      if (!this.stopping) this.jobs.report(error, job.id);
      // Whatever finished before the stop is kept: the job goes on from there at the next start.
      this.write();
      await this.writing;
      const failure = this.writeError?.error;
      // A stop on a full disk drops the results it could not write (verified again when the job runs again), as a
      // kill would; the store has already said that the disk is full.
      const expected = failure === error || (this.stopping && failure instanceof StorageFullError);
      if (this.writeError !== null && !expected) this.jobs.report(failure, job.id);
    } finally {
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
    }
  }

  /** Writes the waiting results, one write after the other. */
  private write(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.buffer.length === 0) return;
    const entries = this.buffer;
    this.buffer = [];
    const { store } = this.jobs.options;
    this.writing = this.writing.then(async () => {
      if (this.writeError !== null) return;
      try {
        // A save of a thousand results takes a few milliseconds: many running jobs save one per turn of the loop,
        // with requests read in between, not all in one.
        await nextTurn();
        await this.whileDiskFull(() => store.saveResults(this.job.id, entries));
      } catch (error) {
        this.writeError = { error };
      }
    });
  }

  /**
   * The job's inputs without a result, in index order, read from the store a chunk at a time. A resumed job that
   * marks duplicates also gets its answered inputs, as settled ones: a later copy of one is then still a Duplicate.
   */
  private async *inputs(): AsyncGenerator<PendingInput | SettledInput> {
    const { store } = this.jobs.options;
    const chunk = this.jobs.options.readChunk ?? 2_000;
    const settled = this.job.noOfCompleted > 0 && this.job.deduplication !== 'Off' ? this.answered(chunk) : null;
    let nextSettled = settled === null ? null : await settled.next();
    let after = -1;
    for (;;) {
      const pending = await store.pendingInputs(this.job.id, after, chunk);
      for (const input of pending) {
        while (nextSettled !== null && !nextSettled.done && nextSettled.value.index < input.index) {
          this.jobIndexes.push(nextSettled.value.index);
          yield { inputData: nextSettled.value.inputData, [SETTLED]: nextSettled.value };
          nextSettled = await settled!.next();
        }
        this.jobIndexes.push(input.index);
        yield input;
      }
      if (pending.length < chunk) return;
      after = pending[pending.length - 1]!.index;
    }
  }

  /** The job's answered entries, in index order. */
  private async *answered(chunk: number): AsyncGenerator<Entry> {
    for await (const page of entryPages(this.jobs.options.store, this.job.id, chunk)) yield* page;
  }
}
