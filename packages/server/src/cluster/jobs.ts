/**
 * The jobs of an API server in a cluster: stored in PostgreSQL and queued for the workers (a plan task each), never
 * run here. A `waitTime` request is answered when the store says that the job completed or ended (LISTEN/NOTIFY), on
 * whichever process that happened. A job whose task could not be queued (Redis down) is planned by the reconciler.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { isoTime, realClock, type Clock } from '../jobs/clock.js';
import { lazyDraft, type JobProgress, type JobRunner } from '../jobs/jobs.js';
import type { Listening, PostgresJobStore } from '../jobs/postgres-store.js';
import type { JobDraft, JobInput, JobRecord, NewJob } from '../jobs/types.js';
import { withDeadline } from './deadline.js';
import { addPlanTask, openTaskQueue, type Task } from './tasks.js';

/** How long a submission waits for the queue before it leaves the job to the reconciler. */
const ENQUEUE_TIMEOUT_MS = 2_000;

export interface ClusterJobsOptions {
  readonly store: PostgresJobStore;
  /** A client for the queue (`maxRetriesPerRequest: null`); the caller closes it after `close()`. */
  readonly redis: Redis;
  readonly queuePrefix: string;
  readonly clock?: Clock;
  /** A job stored but not queued (the reconciler plans it later); default console.warn. */
  readonly onQueueError?: (error: unknown, jobId: string) => void;
}

export class ClusterJobs implements JobRunner {
  readonly clock: Clock;
  readonly options: { readonly store: PostgresJobStore };
  readonly #queue: Queue<Task>;
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #onQueueError: (error: unknown, jobId: string) => void;
  #listening: Listening | null = null;
  #closing = false;

  private constructor(options: ClusterJobsOptions, queue: Queue<Task>) {
    this.options = { store: options.store };
    this.clock = options.clock ?? realClock;
    this.#queue = queue;
    this.#onQueueError = options.onQueueError ?? ((error, id) => console.warn(`mailverify: job ${id} could not be queued (the reconciler plans it):`, error));
  }

  static async open(options: ClusterJobsOptions): Promise<ClusterJobs> {
    const queue = await openTaskQueue(options.redis, options.queuePrefix);
    const jobs = new ClusterJobs(options, queue);
    try {
      jobs.#listening = await options.store.listenJobEnds(
        (id) => jobs.#wake(id),
        // Words sent while the connection was down are lost: every waiter looks at the store again.
        () => void jobs.#recheckAll(),
      );
    } catch (error) {
      await queue.close();
      throw error;
    }
    return jobs;
  }

  async submit(job: NewJob, inputs: readonly JobInput[]): Promise<JobRecord> {
    if (this.#closing) throw new Error('jobs: closed');
    const record = await this.options.store.createJob(job, inputs);
    await this.#enqueue(record);
    return record;
  }

  draft(): JobDraft {
    if (this.#closing) throw new Error('jobs: closed');
    return lazyDraft(this.options.store, async (draft, job) => {
      const record = await draft.commit(job);
      await this.#enqueue(record);
      return record;
    });
  }

  get(id: string): Promise<JobRecord | null> {
    return this.options.store.getJob(id);
  }

  progress(): JobProgress | undefined {
    return undefined;
  }

  async waitForEnd(id: string, ms: number): Promise<void> {
    if (ms <= 0) return;
    let waiters = this.#waiters.get(id);
    if (waiters === undefined) this.#waiters.set(id, (waiters = new Set()));
    let done!: () => void;
    const ended = new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), ms);
      done = () => {
        clearTimeout(timer);
        waiters!.delete(done);
        if (waiters!.size === 0 && this.#waiters.get(id) === waiters) this.#waiters.delete(id);
        resolve();
      };
    });
    waiters.add(done);
    // Listening before looking: a job that ends between the two is not missed.
    const job = await this.options.store.getJob(id).catch(() => null);
    if (job === null || job.status !== 'InProgress') done();
    return ended;
  }

  async delete(id: string): Promise<JobRecord | null> {
    const { store } = this.options;
    const job = await store.getJob(id);
    if (job === null || job.status === 'Deleted' || job.status === 'Expired') return job;
    // Workers still on it see the tombstone at their next write and stop.
    await store.endJob(id, 'Deleted', isoTime(this.clock));
    return store.getJob(id);
  }

  /** The queue's tasks by state (for metrics). */
  async taskCounts(): Promise<Record<string, number>> {
    return this.#queue.getJobCounts('wait', 'prioritized', 'delayed', 'active');
  }

  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    for (const waiters of [...this.#waiters.values()]) for (const wake of [...waiters]) wake();
    await this.#listening?.close();
    await this.#queue.close();
  }

  async #enqueue(job: JobRecord): Promise<void> {
    const added = addPlanTask(this.#queue, job);
    try {
      // Redis down: the submission is answered all the same (the job is stored); the reconciler plans it.
      await withDeadline(added, ENQUEUE_TIMEOUT_MS, 'the queue did not answer in time');
    } catch (error) {
      this.#onQueueError(error, job.id);
    }
  }

  #wake(id: string): void {
    for (const wake of [...(this.#waiters.get(id) ?? [])]) wake();
  }

  async #recheckAll(): Promise<void> {
    for (const id of [...this.#waiters.keys()]) {
      const job = await this.options.store.getJob(id).catch(() => null);
      if (job !== null && job.status !== 'InProgress') this.#wake(id);
    }
  }
}
