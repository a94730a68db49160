/**
 * What one process of the cluster does for all: the reconciler, completion callbacks and retention purges. The
 * processes elect it through the store (an advisory lock held on a connection of its own, tryHold); when it dies, its
 * connection closes, the lock is free, and another takes over at its next round.
 *
 * The reconciler makes Redis disposable: every `intervalMs` it reads the job ids of the queue's tasks (waiting, active,
 * delayed) and the store's jobs in progress. A job in progress with no task, two rounds in a row (a task moves between
 * lists while they are read), is planned again: its inputs without a result get new tasks. A job whose every entry has
 * its result but is not completed (its last writer died between two steps) is completed. The store keeps the first
 * result of an entry, so a part verified twice is stored once.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { completionNow } from '../jobs/callbacks.js';
import { realClock, type Clock } from '../jobs/clock.js';
import type { Hold, Listening, PostgresJobStore } from '../jobs/postgres-store.js';
import type { JobRecord } from '../jobs/types.js';
import { addPlanTask, openTaskQueue, type Task } from './tasks.js';

/** A duty of the elected process: started when it is elected, closed when it stops being it. */
export interface Duty {
  start(): void;
  /** Told when a job completed anywhere in the cluster (a callback may be due). */
  wake?(): void;
  close(): Promise<void>;
}

export interface MaintenanceOptions {
  readonly store: PostgresJobStore;
  /** A client for the queue (`maxRetriesPerRequest: null`); the caller closes it after `close()`. */
  readonly redis: Redis;
  readonly queuePrefix: string;
  /** Time between rounds (default 5 s): the longest a lost task waits, twice, before its job is planned again. */
  readonly intervalMs?: number;
  /** The duties besides the reconciler, made anew each time this process is elected. */
  readonly duties?: () => Duty[];
  readonly clock?: Clock;
  /** A round that failed (the next one tries again); default console.error. */
  readonly onError?: (error: unknown) => void;
  /** Told of each job planned again (default: nothing). */
  readonly onReplanned?: (jobId: string) => void;
}

/** Jobs read from the store at once. */
const JOB_PAGE = 500;
/** States of tasks still to run. */
const LIVE_STATES = ['active', 'wait', 'waiting', 'delayed', 'prioritized', 'waiting-children'] as const;

export class ClusterMaintenance {
  readonly #options: MaintenanceOptions;
  readonly #clock: Clock;
  readonly #queue: Queue<Task>;
  #hold: Hold | null = null;
  #duties: Duty[] = [];
  #listening: Listening | null = null;
  #timer: NodeJS.Timeout | null = null;
  #round: Promise<void> = Promise.resolve();
  #closed = false;
  /** Jobs found without a task at the last round. */
  #missing = new Set<string>();

  private constructor(options: MaintenanceOptions, queue: Queue<Task>) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#queue = queue;
  }

  static async start(options: MaintenanceOptions): Promise<ClusterMaintenance> {
    const queue = await openTaskQueue(options.redis, options.queuePrefix);
    const maintenance = new ClusterMaintenance(options, queue);
    maintenance.#schedule(0);
    return maintenance;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    await this.#round;
    await this.#stepDown();
    await this.#queue.close();
  }

  #schedule(delayMs: number): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#round = this.#round.then(() => this.#roundOnce());
      void this.#round.then(() => this.#schedule(this.#options.intervalMs ?? 5_000));
    }, delayMs);
  }

  async #roundOnce(): Promise<void> {
    if (this.#closed) return;
    try {
      if (this.#hold === null) await this.#stand();
      if (this.#hold !== null) await this.#reconcile();
    } catch (error) {
      (this.#options.onError ?? ((e: unknown) => console.error('mailverify: cluster maintenance round failed:', e)))(error);
    }
  }

  /** Tries to be elected; starts the duties when it is. */
  async #stand(): Promise<void> {
    const hold = await this.#options.store.tryHold('maintenance');
    if (hold === null) return;
    if (this.#closed) return void (await hold.release());
    this.#hold = hold;
    this.#missing = new Set();
    this.#duties = this.#options.duties?.() ?? [];
    for (const duty of this.#duties) duty.start();
    this.#listening = await this.#options.store
      .listenJobEnds(() => {
        for (const duty of this.#duties) duty.wake?.();
      })
      .catch(() => null);
    void hold.lost.then(() => {
      if (this.#hold === hold) void this.#stepDown();
    });
  }

  async #stepDown(): Promise<void> {
    const hold = this.#hold;
    this.#hold = null;
    const duties = this.#duties;
    this.#duties = [];
    await Promise.all(duties.map((duty) => duty.close()));
    await this.#listening?.close();
    this.#listening = null;
    await hold?.release();
  }

  async #reconcile(): Promise<void> {
    const { store } = this.#options;
    const live = new Set<string>();
    for (const id of await this.#queue.getRanges([...LIVE_STATES], 0, -1)) {
      // Task ids are `<kind>.<job id>.…` (tasks.ts).
      const jobId = id.split('.')[1];
      if (jobId !== undefined) live.add(jobId);
    }
    const missing = new Set<string>();
    let after = 0;
    for (;;) {
      const jobs = await store.jobsInProgress(after, JOB_PAGE);
      for (const job of jobs) {
        if (job.noOfCompleted >= job.noOfEntries) await this.#complete(job);
        else if (!live.has(job.id)) {
          if (this.#missing.has(job.id)) await this.#replan(job);
          else missing.add(job.id);
        }
      }
      if (jobs.length < JOB_PAGE) break;
      after = jobs[jobs.length - 1]!.sequence;
    }
    this.#missing = missing;
  }

  async #complete(job: JobRecord): Promise<void> {
    await this.#options.store.saveResultsCompleting(job.id, [], (stored) => completionNow(stored, this.#clock));
  }

  async #replan(job: JobRecord): Promise<void> {
    await addPlanTask(this.#queue, job);
    this.#options.onReplanned?.(job.id);
  }
}
