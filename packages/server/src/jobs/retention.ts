/**
 * Retention: a completed job is kept for its retention (its own, else the server's default, 30 days), counted from its
 * completion; then its entries are deleted and it becomes an Expired tombstone. Tombstones (Expired and Deleted) are
 * kept 30 days from their end, so that requests for them answer 410 rather than 404, then removed.
 *
 * A purge round runs at start and then every `intervalMs` (60 s) on the clock, so a job is purged within a minute
 * after its retention ends; a job whose retention ended while the server was down is purged at the next start.
 */
import { realClock, type Clock, type ClockTimer } from './clock.js';
import type { JobStore } from './types.js';

/** How long a tombstone is kept after its job ended. */
export const TOMBSTONE_RETENTION_MS = 30 * 24 * 3_600_000;
/** The longest time between two purge rounds. */
export const PURGE_INTERVAL_MS = 60_000;

export interface RetentionOptions {
  readonly store: JobStore;
  /** The retention of a job that does not set its own, from its completion (milliseconds). */
  readonly defaultRetentionMs: number;
  /** Default: the real clock. */
  readonly clock?: Clock;
  /** Time between purge rounds (default and most 60,000 ms). */
  readonly intervalMs?: number;
  /** Where a failed round is told (default: console.error); the next round tries again. */
  readonly onError?: (error: unknown) => void;
}

export interface PurgeRound {
  /** Jobs that became Expired. */
  readonly expired: number;
  /** Tombstones removed. */
  readonly tombstones: number;
}

export class RetentionPurger {
  readonly #options: RetentionOptions;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  #timer: ClockTimer | undefined;
  #round: Promise<unknown> | null = null;
  #closed = false;

  constructor(options: RetentionOptions) {
    const intervalMs = options.intervalMs ?? PURGE_INTERVAL_MS;
    if (!Number.isFinite(intervalMs) || intervalMs <= 0 || intervalMs > PURGE_INTERVAL_MS) {
      throw new RangeError(`intervalMs: a positive number of milliseconds up to ${PURGE_INTERVAL_MS}`);
    }
    if (!Number.isSafeInteger(options.defaultRetentionMs) || options.defaultRetentionMs < 0) {
      throw new RangeError('defaultRetentionMs: a non-negative integer');
    }
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#intervalMs = intervalMs;
  }

  /** Runs a round now, then one every interval until `close()`. */
  start(): void {
    if (this.#closed || this.#round !== null || this.#timer !== undefined) return;
    this.#tick();
  }

  /** One round: expires the jobs whose retention ended, removes the tombstones past theirs. */
  async purge(): Promise<PurgeRound> {
    const { store, defaultRetentionMs } = this.#options;
    const now = this.#clock.now();
    const nowIso = new Date(now).toISOString();
    let expired = 0;
    for (const job of await store.expiredJobs(nowIso, defaultRetentionMs)) {
      if (this.#closed) break;
      await store.endJob(job.id, 'Expired', nowIso);
      expired++;
    }
    const tombstones = this.#closed ? 0 : await store.purgeTombstones(new Date(now - TOMBSTONE_RETENTION_MS).toISOString());
    return { expired, tombstones };
  }

  /** Resolves when no round is under way. */
  async settled(): Promise<void> {
    while (this.#round !== null) await this.#round;
  }

  /** Stops the rounds; a round under way finishes the job it is on. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#round;
  }

  #tick(): void {
    this.#timer = undefined;
    // Rounds start an interval apart, however long one takes.
    const started = this.#clock.now();
    const round = this.purge()
      .catch((error: unknown) => (this.#options.onError ?? ((e) => console.error('mailverify: retention purge failed:', e)))(error))
      .finally(() => {
        this.#round = null;
        if (!this.#closed) this.#timer = this.#clock.setTimeout(() => this.#tick(), started + this.#intervalMs - this.#clock.now());
      });
    this.#round = round;
  }
}
