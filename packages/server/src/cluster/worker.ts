/**
 * A cluster worker: takes tasks from the BullMQ queue (tasks.ts) and runs them on one verifier, writing results to the
 * PostgreSQL store. Several tasks run at once on the verifier (`concurrency`), sharing its connections and caches as
 * the batches of one process do; a task's priority is its job's.
 *
 * - A plan task splits a job into verify tasks (planner.ts).
 * - A verify task runs one pass of `verifyMany` over its inputs and stores the results in batches; the transaction that
 *   stores a job's last result completes the job and puts its callback in the outbox. Results that a later pass may
 *   change go into a verify task of the next pass, delayed by the quality level's wait.
 * - While a task runs, BullMQ holds a lock on it (the lease, `leaseMs`), renewed by this worker; a worker that dies
 *   stops renewing, and its tasks go back to the queue once the lease has expired. The store keeps the first result of
 *   an entry, so work done twice is stored once.
 * - `close()` (SIGTERM) stops every task, stores the results it has and hands the task back to the queue at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job as QueueTask, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  SETTLED,
  findQuality,
  planningFor,
  type Entry,
  type Planning,
  type QualityLevel,
  type SettledInput,
  type Verifier,
} from 'mailverify/internal';
import { completionNow } from '../jobs/callbacks.js';
import { realClock, type Clock } from '../jobs/clock.js';
import { OverrideLists } from '../jobs/overrides.js';
import type { PostgresJobStore } from '../jobs/postgres-store.js';
import type { JobInput, JobRecord } from '../jobs/types.js';
import { withDeadline } from './deadline.js';
import { planJob } from './planner.js';
import { QUEUE_NAME, TASK_DEFAULTS, openTaskQueue, queuePriority, verifyTaskId, type PlanTask, type Task, type VerifyTask } from './tasks.js';

export interface ClusterWorkerOptions {
  readonly store: PostgresJobStore;
  /** A client for the queue (`maxRetriesPerRequest: null`, as BullMQ asks); the caller closes it after `close()`. */
  readonly redis: Redis;
  /** BullMQ's key prefix: `mailverify:<prefix>` (the same in every process of the cluster). */
  readonly queuePrefix: string;
  /** The verifier tasks run on (made with the cluster's connection leases); the caller closes it after `close()`. */
  readonly verifier: Verifier;
  /** Tasks run at once (default 8). */
  readonly concurrency?: number;
  /** The lease of a running task: a dead worker's tasks return to the queue after it (default 30 s). */
  readonly leaseMs?: number;
  /** Inputs per verify task, routes aside (default 1,000). */
  readonly chunkSize?: number;
  readonly qualityLevels?: readonly QualityLevel[];
  readonly clock?: Clock;
  /** A task that failed for a reason of ours (it is tried again); default console.error. */
  readonly onError?: (error: unknown, jobId: string) => void;
}

/** Results are written at least this often... */
const FLUSH_INTERVAL_MS = 200;
/** ...or as soon as this many wait. */
const FLUSH_ENTRIES = 1_000;
/** Waits between tries of a write the store refused (the database restarting...), doubling up to the last. */
const WRITE_FIRST_RETRY_MS = 100;
const WRITE_LAST_RETRY_MS = 5_000;
/** A write still refused after this long fails the task (BullMQ tries it again later). */
const WRITE_GIVE_UP_MS = 5 * 60_000;
/** On close, results waiting are written for at most this long: the task goes back to the queue within the 10 s. */
const CLOSE_WRITE_MS = 5_000;

export class ClusterWorker {
  readonly #options: ClusterWorkerOptions;
  readonly #planning: Planning;
  readonly #running = new Set<AbortController>();
  readonly #overrideLists: OverrideLists;
  readonly #clock: Clock;
  #queue!: Queue<Task>;
  #worker!: Worker<Task>;
  #closing = false;
  #closingAt: number | null = null;

  private constructor(options: ClusterWorkerOptions) {
    this.#options = options;
    this.#planning = planningFor(options.verifier);
    this.#overrideLists = new OverrideLists(options.store);
    this.#clock = options.clock ?? realClock;
  }

  static async start(options: ClusterWorkerOptions): Promise<ClusterWorker> {
    const { Worker } = await import('bullmq');
    const worker = new ClusterWorker(options);
    const leaseMs = options.leaseMs ?? 30_000;
    worker.#queue = await openTaskQueue(options.redis, options.queuePrefix);
    worker.#worker = new Worker<Task>(QUEUE_NAME, (task, token) => worker.#process(task, token), {
      connection: options.redis,
      prefix: options.queuePrefix,
      concurrency: options.concurrency ?? 8,
      lockDuration: leaseMs,
      stalledInterval: Math.max(1_000, Math.floor(leaseMs / 2)),
      // A task whose worker died goes back to the queue however often that happens.
      maxStalledCount: 1_000,
    });
    // Errors of the queue's connection (Redis restarting) are retried by BullMQ; they must not crash the process.
    worker.#worker.on('error', () => {});
    await worker.#worker.waitUntilReady();
    return worker;
  }

  /** Stops taking tasks; running ones store what they have and go back to the queue. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#closingAt = Date.now();
    for (const controller of this.#running) controller.abort(new Error('the worker is closing'));
    await this.#worker.close();
    await this.#queue.close();
  }

  async #process(task: QueueTask<Task>, token: string | undefined): Promise<void> {
    const controller = new AbortController();
    this.#running.add(controller);
    if (this.#closing) controller.abort(new Error('the worker is closing'));
    try {
      if (task.data.kind === 'plan') await this.#plan(task.data, controller.signal);
      else await this.#verify(task.data, controller.signal);
    } catch (error) {
      if (this.#closing && controller.signal.aborted) {
        // Handed back: due at once, for another worker (or this one at its next start).
        const { DelayedError } = await import('bullmq');
        await task.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      (this.#options.onError ?? ((e: unknown, id: string) => console.error(`mailverify: a task of job ${id} failed:`, e)))(error, task.data.jobId);
      throw error;
    } finally {
      this.#running.delete(controller);
    }
  }

  async #plan(task: PlanTask, signal: AbortSignal): Promise<void> {
    const { store } = this.#options;
    const job = await store.getJob(task.jobId);
    if (job === null || job.status !== 'InProgress') return;
    const tasks = await planJob(store, this.#planning, job, task.generation, this.#options.chunkSize ?? 1_000, signal);
    // Every input answered already (a plan made again after the last results): the job completes now.
    if (tasks.length === 0) return void (await this.#write(job.id, [], new AbortController().signal));
    await this.#queue.addBulk(tasks.map((verify) => this.#queued(verify, job)));
  }

  #queued(task: VerifyTask, job: JobRecord, delay = 0) {
    return { name: task.kind, data: task, opts: { ...TASK_DEFAULTS, jobId: verifyTaskId(task), priority: queuePriority(job.priority), delay } };
  }

  async #verify(task: VerifyTask, signal: AbortSignal): Promise<void> {
    const { store, verifier } = this.#options;
    const job = await store.getJob(task.jobId);
    if (job === null || job.status !== 'InProgress') return;
    const deduplicating = job.deduplication !== 'Off';
    const stored = await store.inputsAt(job.id, [...task.settled, ...task.indexes]);
    const items: (JobInput | SettledInput)[] = [];
    const jobIndexes: number[] = [];
    for (const input of stored) {
      if (input.entry !== null && !deduplicating) continue;
      jobIndexes.push(input.index);
      items.push(input.entry !== null ? { inputData: input.inputData, [SETTLED]: input.entry } : input.custom === undefined ? { inputData: input.inputData } : { inputData: input.inputData, custom: input.custom });
    }
    const quality = findQuality(job.quality, this.#options.qualityLevels);
    const level = this.#planning.level(quality ?? undefined);
    const lastPass = task.pass >= level.passes;
    const overrides = job.overrides === undefined ? undefined : await this.#overrideLists.get(job.overrides);
    // A job deleted meanwhile stops the batch (its results are not kept).
    const stop = new AbortController();
    const gone = (): void => stop.abort(new Error('the job ended'));
    const writer = new ResultWriter((entries) => this.#write(job.id, entries, signal, gone));
    const held = new Set<number>();
    try {
      const batch = verifier.verifyMany(items, {
        deduplication: job.deduplication,
        ...(overrides !== undefined && { overrides }),
        priority: job.priority ?? 127,
        ...(quality !== null && { quality }),
        passes: 1,
        signal: AbortSignal.any([signal, stop.signal]),
      });
      for await (const entry of batch) {
        entry.index = jobIndexes[entry.index]!;
        if (entry.duplicateOf !== undefined) entry.duplicateOf = jobIndexes[entry.duplicateOf]!;
        const waits = this.#planning.transient.has(entry.status) || (entry.duplicateOf !== undefined && held.has(entry.duplicateOf));
        if (!lastPass && waits) held.add(entry.index);
        else writer.push(entry);
      }
    } catch (error) {
      // What finished is kept, then the stop goes on (a closing worker hands the task back).
      await writer.end(Date.now() + CLOSE_WRITE_MS).catch(() => {});
      if (stop.signal.aborted && !signal.aborted) return;
      throw error;
    }
    if (held.size > 0) {
      const next: VerifyTask = { ...task, indexes: [...held].sort((a, b) => a - b), pass: task.pass + 1 };
      await this.#queue.add(next.kind, next, this.#queued(next, job, level.passDelayMs).opts);
    }
    await writer.end(Date.now() + WRITE_GIVE_UP_MS);
    // A task with nothing left to store still completes a job whose last results another task stored without seeing
    // them all (the reconciler does it too, later).
    if (writer.written === 0 && held.size === 0) await this.#write(job.id, [], signal);
  }

  /**
   * Stores results and, in the same transaction, completes the job when they are its last; tries again while the store
   * refuses (a restart), until `WRITE_GIVE_UP_MS`. Tells `gone` when the job has ended (its results are dropped).
   */
  async #write(jobId: string, entries: readonly Entry[], signal: AbortSignal, gone?: () => void): Promise<void> {
    const { store } = this.#options;
    const giveUpAt = Date.now() + WRITE_GIVE_UP_MS;
    for (let waitMs = WRITE_FIRST_RETRY_MS; ; waitMs = Math.min(2 * waitMs, WRITE_LAST_RETRY_MS)) {
      try {
        const { saved } = await store.saveResultsCompleting(jobId, entries, (job) => completionNow(job, this.#clock));
        if (saved === 0 && entries.length > 0 && gone !== undefined) {
          const job = await store.getJob(jobId);
          if (job === null || job.status === 'Deleted' || job.status === 'Expired') gone();
        }
        return;
      } catch (error) {
        // A closing worker gives its writes a few seconds: the task goes back to the queue in time.
        const limit = signal.aborted && this.#closingAt !== null ? Math.min(giveUpAt, this.#closingAt + CLOSE_WRITE_MS) : giveUpAt;
        if (Date.now() + waitMs > limit) throw error;
      }
      await sleep(waitMs);
    }
  }
}

/** Results of one task, written in batches one after the other. */
class ResultWriter {
  written = 0;
  #buffer: Entry[] = [];
  #chain: Promise<void> = Promise.resolve();
  #failure: { error: unknown } | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly save: (entries: readonly Entry[]) => Promise<void>) {}

  push(entry: Entry): void {
    if (this.#failure !== null) throw this.#failure.error;
    this.#buffer.push(entry);
    if (this.#buffer.length >= FLUSH_ENTRIES) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), FLUSH_INTERVAL_MS);
  }

  /** Writes what waits; rejects with the first write's failure. */
  async end(deadline: number): Promise<void> {
    this.#flush();
    await withDeadline(this.#chain, deadline - Date.now(), 'results could not be written in time');
    if (this.#failure !== null) throw this.#failure.error;
  }

  #flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#buffer.length === 0) return;
    const entries = this.#buffer;
    this.#buffer = [];
    this.#chain = this.#chain.then(async () => {
      if (this.#failure !== null) return;
      try {
        await this.save(entries);
        this.written += entries.length;
      } catch (error) {
        this.#failure = { error };
      }
    });
  }
}
