/**
 * A process's part in a cluster (docs/scaling.md): its Redis clients, the workers it runs (none on a pure API server),
 * its jobs front when it answers HTTP, and the maintenance it may be elected for. `serve` and `worker` both start one.
 */
import {
  createNodemailerTransport,
  createSharedVerifier,
  type QualityLevel,
  type Verifier,
  type VerifierOptions,
} from 'mailverify/internal';
import type { Clock } from '../jobs/clock.js';
import type { PostgresJobStore } from '../jobs/postgres-store.js';
import { closeRedis, keyPrefix, openRedis, type Redis } from './redis.js';
import { RedisRecipientLedger } from './budget.js';
import { SharedCooling } from './cooling.js';
import { leasedTransport } from './leases.js';
import { ClusterMaintenance, type Duty } from './maintenance.js';
import { ClusterWorker } from './worker.js';

export interface ClusterSettings {
  /** The queue's Redis, `redis://[user:password@]host:port[/db]` (or `rediss://`). */
  readonly queue: string;
  /** Keys under `mailverify:<prefix>:` (default `default`): the same in every process of one cluster. */
  readonly prefix?: string;
  /** Workers this process runs (default 0: none). */
  readonly workers?: number;
  /** Tasks one worker runs at once (default 8). */
  readonly concurrency?: number;
  /** The lease of a running task and of an SMTP connection: a dead worker's work is free again after it (default 30 s). */
  readonly leaseMs?: number;
  /** Inputs per verify task, routes aside (default 1,000). */
  readonly chunkSize?: number;
  /** Time between rounds of the reconciler (default 5 s). */
  readonly reconcileIntervalMs?: number;
}

export interface ClusterRuntimeOptions extends ClusterSettings {
  readonly store: PostgresJobStore;
  /** The options of every worker's verifier (as `check` takes them). */
  readonly verifier?: VerifierOptions;
  readonly qualityLevels?: readonly QualityLevel[];
  readonly clock?: Clock;
  /** The elected process's duties besides the reconciler (callback delivery, retention purges). */
  readonly duties?: () => Duty[];
  readonly log?: {
    warn(message: string, details?: Record<string, unknown>): void;
    error(message: string, details?: Record<string, unknown>): void;
  };
}

export class ClusterRuntime {
  private constructor(
    /** The queue's client (BullMQ asks for `maxRetriesPerRequest: null`). */
    readonly queueRedis: Redis,
    /** The connection leases: commands wait (some ten seconds) through a short loss of Redis before they fail. */
    readonly redis: Redis,
    /**
     * The shared counters of the API (rates, sign-ins, throttling, TOTP, CAPTCHA): commands fail at once while Redis is
     * away, so that requests are answered 503 at once rather than held for the retries.
     */
    readonly countersRedis: Redis,
    readonly queuePrefix: string,
    readonly workers: readonly ClusterWorker[],
    readonly verifiers: readonly Verifier[],
    readonly maintenance: ClusterMaintenance,
    /** The cooling of egress × provider pairs, shared with the cluster (null on a pure API server). */
    private readonly cooling: SharedCooling | null,
  ) {}

  static async start(options: ClusterRuntimeOptions): Promise<ClusterRuntime> {
    const workerCount = options.workers ?? 0;
    if (!Number.isSafeInteger(workerCount) || workerCount < 0) throw new TypeError(`cluster: workers must be a whole number, got ${String(options.workers)}`);
    const prefix = keyPrefix(options.prefix);
    const queuePrefix = prefix.slice(0, -1);
    const queueRedis = await openRedis(options.queue, { maxRetriesPerRequest: null }).catch((error: unknown) => {
      // The URL may hold a password: the error names the option, and the client's reason.
      throw new Error(`the queue's Redis (--queue) cannot be reached: ${(error as Error).message}`, { cause: error });
    });
    queueRedis.on('error', () => {});
    let redis: Redis | undefined;
    let countersRedis: Redis | undefined;
    const workers: ClusterWorker[] = [];
    const verifiers: Verifier[] = [];
    let cooling: SharedCooling | null = null;
    try {
      redis = await openRedis(options.queue);
      redis.on('error', () => {});
      countersRedis = await openRedis(options.queue, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
      countersRedis.on('error', () => {});
      const smtp = options.verifier?.smtp ?? {};
      // The recipient budgets and the cooling of egress × provider pairs: one of each per process, shared with every
      // other process through Redis.
      const sharingFailed = (error: unknown) => options.log?.warn('mailverify: the egress budgets or cooling cannot be shared through Redis now', { err: error });
      if (workerCount > 0) cooling = await SharedCooling.open(redis, prefix, sharingFailed);
      const shared = cooling === null ? null : { ledger: new RedisRecipientLedger(redis, prefix, sharingFailed), cooling };
      for (let n = 0; n < workerCount && shared !== null; n++) {
        const transport = await leasedTransport(smtp.transport ?? createNodemailerTransport(), {
          redis,
          keyPrefix: prefix,
          perExchanger: smtp.maxConnectionsPerExchanger ?? 3,
          total: smtp.maxConnections ?? 50,
          ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
        });
        const verifier = createSharedVerifier({ ...options.verifier, smtp: { ...smtp, transport } }, shared);
        verifiers.push(verifier);
        workers.push(
          await ClusterWorker.start({
            store: options.store,
            redis: queueRedis,
            queuePrefix,
            verifier,
            ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
            ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
            ...(options.chunkSize !== undefined && { chunkSize: options.chunkSize }),
            ...(options.qualityLevels !== undefined && { qualityLevels: options.qualityLevels }),
            ...(options.clock !== undefined && { clock: options.clock }),
            onError: (error, jobId) => options.log?.error('mailverify: a task failed; it is tried again', { err: error, jobId }),
          }),
        );
      }
      const maintenance = await ClusterMaintenance.start({
        store: options.store,
        redis: queueRedis,
        queuePrefix,
        ...(options.reconcileIntervalMs !== undefined && { intervalMs: options.reconcileIntervalMs }),
        ...(options.duties !== undefined && { duties: options.duties }),
        ...(options.clock !== undefined && { clock: options.clock }),
        onError: (error) => options.log?.error('mailverify: a cluster maintenance round failed', { err: error }),
        onReplanned: (jobId) => options.log?.warn('mailverify: a job had no task in the queue: planned again', { jobId }),
      });
      return new ClusterRuntime(queueRedis, redis, countersRedis, queuePrefix, workers, verifiers, maintenance, cooling);
    } catch (error) {
      await Promise.all(workers.map((worker) => worker.close()));
      await Promise.all(verifiers.map((verifier) => verifier.close()));
      await cooling?.close();
      if (countersRedis !== undefined) await closeRedis(countersRedis);
      if (redis !== undefined) await closeRedis(redis);
      await closeRedis(queueRedis);
      throw error;
    }
  }

  /** Workers hand their tasks back, maintenance stops, then the verifiers and clients close (the store is the caller's). */
  async close(): Promise<void> {
    await Promise.all([...this.workers.map((worker) => worker.close()), this.maintenance.close()]);
    await Promise.all(this.verifiers.map((verifier) => verifier.close()));
    await this.cooling?.close();
    await closeRedis(this.countersRedis);
    await closeRedis(this.redis);
    await closeRedis(this.queueRedis);
  }
}
