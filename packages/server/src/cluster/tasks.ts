/**
 * The work of a cluster as BullMQ tasks on one queue. A task names a job and what to do for it; the job's data stay in
 * PostgreSQL, so a task lost with Redis is made again from the store (reconciler.ts).
 *
 * - `plan`: reads the job's inputs without a result and splits them into `verify` tasks by mail route (planner.ts).
 * - `verify`: verifies some inputs of a job (one pass) and stores their results; the inputs whose result may change at
 *   a later pass go into a `verify` task of the next pass, delayed by the quality level's wait.
 *
 * Task ids are deterministic (`<kind>.<job>.<plan>.<n>.<pass>`; BullMQ refuses `:` in ids), so a task added twice (a plan run again after its
 * worker died) is queued once.
 */
import type { JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobRecord } from '../jobs/types.js';

export const QUEUE_NAME = 'verify';

export interface PlanTask {
  readonly kind: 'plan';
  readonly jobId: string;
  /** Tells plans of one job apart (a job is planned again when its tasks were lost). */
  readonly generation: string;
}

export interface VerifyTask {
  readonly kind: 'verify';
  readonly jobId: string;
  /** The plan that made it (the generation of its plan task): the ids of its verify tasks derive from it. */
  readonly plan: string;
  /** Its number in the plan. */
  readonly part: number;
  /** Inputs to verify (job indexes, ascending). */
  readonly indexes: readonly number[];
  /**
   * Inputs answered before that earlier occurrences of a duplicate refer to (deduplication): given to the batch as
   * settled, so that later copies are still Duplicates of them.
   */
  readonly settled: readonly number[];
  /** 1 for the first pass. */
  readonly pass: number;
}

export type Task = PlanTask | VerifyTask;

/** A job's priority (0–255, higher first; absent 127) as BullMQ's (1 first). */
export function queuePriority(priority: number | undefined): number {
  return 256 - (priority ?? 127);
}

/** What every task is added with: finished tasks leave Redis at once (the store keeps the results). */
export const TASK_DEFAULTS: JobsOptions = {
  removeOnComplete: true,
  removeOnFail: true,
  // A task that throws (the store unreachable for too long) is tried again later; the reconciler is the last resort.
  attempts: 20,
  backoff: { type: 'exponential', delay: 1_000 },
};

export function planTaskId(jobId: string, generation: string): string {
  return `plan.${jobId}.${generation}`;
}

export function verifyTaskId(task: VerifyTask): string {
  return `verify.${task.jobId}.${task.plan}.${task.part}.${task.pass}`;
}

/** Queues a new plan of `job` (a generation of its own: a plan made again is a new task). */
export async function addPlanTask(queue: Queue<Task>, job: JobRecord): Promise<void> {
  const generation = Date.now().toString(36);
  const task: PlanTask = { kind: 'plan', jobId: job.id, generation };
  await queue.add('plan', task, { ...TASK_DEFAULTS, jobId: planTaskId(job.id, generation), priority: queuePriority(job.priority) });
}

/**
 * The cluster's queue of tasks on `redis` (a client with `maxRetriesPerRequest: null`), loading BullMQ only now. Its
 * connection errors (Redis restarting) are retried by BullMQ and must not crash the process.
 */
export async function openTaskQueue(redis: Redis, queuePrefix: string): Promise<Queue<Task>> {
  const { Queue } = await import('bullmq');
  const queue = new Queue<Task>(QUEUE_NAME, { connection: redis, prefix: queuePrefix });
  queue.on('error', () => {});
  return queue;
}
