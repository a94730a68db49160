/**
 * A server process in a cluster (option `cluster`): its jobs are queued for workers rather than run here, its shared
 * counters live in Redis, and it runs the workers and maintenance the settings ask for. The cluster's modules (BullMQ,
 * ioredis) are loaded only here, when a cluster is configured.
 */
import type { ClusterRuntime, ClusterRuntimeOptions, ClusterSettings } from '../cluster/runtime.js';
import type { ClusterJobs } from '../cluster/jobs.js';
import { withDeadline } from '../cluster/deadline.js';
import type { JobStore } from '../jobs/types.js';
import { redisSharedCounters, type SharedCounters } from './shared-counters.js';

export interface ClusterParts {
  readonly runtime: ClusterRuntime;
  readonly jobs: ClusterJobs;
  readonly sharedCounters: SharedCounters;
  /** Resolves when Redis answers a PING within READY_TIMEOUT_MS; rejects otherwise (the readiness probe). */
  ready(): Promise<void>;
}

const READY_TIMEOUT_MS = 2_000;

export async function openClusterParts(
  settings: ClusterSettings,
  store: JobStore,
  options: Omit<ClusterRuntimeOptions, keyof ClusterSettings | 'store'>,
): Promise<ClusterParts> {
  const { PostgresJobStore } = await import('../jobs/postgres-store.js');
  if (!(store instanceof PostgresJobStore)) {
    throw new TypeError('mailverify: option cluster needs a PostgreSQL store (option store: openPostgresStore(...))');
  }
  const { ClusterRuntime } = await import('../cluster/runtime.js');
  const { ClusterJobs } = await import('../cluster/jobs.js');
  const runtime = await ClusterRuntime.start({ ...settings, ...options, store });
  try {
    const jobs = await ClusterJobs.open({
      store,
      redis: runtime.queueRedis,
      queuePrefix: runtime.queuePrefix,
      ...(options.clock !== undefined && { clock: options.clock }),
      onQueueError: (error, jobId) => options.log?.warn('mailverify: a job could not be queued; the reconciler plans it', { err: error, jobId }),
    });
    const clock = options.clock;
    return {
      runtime,
      jobs,
      ready: async () => {
        await withDeadline(runtime.redis.ping(), READY_TIMEOUT_MS, 'Redis did not answer in time');
      },
      sharedCounters: redisSharedCounters({
        redis: runtime.countersRedis,
        ...(settings.prefix !== undefined && { prefix: settings.prefix }),
        ...(clock !== undefined && { now: () => clock.now() }),
      }),
    };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}
