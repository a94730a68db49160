/**
 * Request rate limits per client IP (off unless configured), counted before authentication:
 * - every request under `/v2.x` takes a token of its IP's bucket (6 per second, 15 at most by default);
 * - at most 5 requests per IP are in flight under `/v1.4`, from the moment their headers are read until their answer
 *   ends or the client hangs up.
 * Beyond either: 429 with `Retry-After` (whole seconds, at least 1). A request is placed by the route the router chose,
 * not by the bytes of its path: `/v2%2E7/...` and `/%76%32.7/...` reach the routes of `/v2.7` and count as they do
 * (a path that no route matches is judged decoded, so that a path under a version counts whatever it is). Probes, metrics and the OpenAPI document are not
 * under a version path and are never counted. CORS preflights are answered by the CORS layer before any route hook
 * and are not counted either: they carry no credentials and do no work, and counting them would halve a browser
 * app's rate; the actual request gets its CORS headers first, so a browser can read its 429 and Retry-After.
 *
 * The bucket is GCRA (the generic cell rate algorithm, ITU-T I.371), which is a token bucket exactly: one time per IP,
 * the theoretical arrival time of the next request, instead of a token count refilled by a timer. The counts live
 * behind RateLimitStore: this process's memory by default; a store shared by several processes (Redis: the same
 * arithmetic in one Lua script per request, and INCR/DECR with an expiry for requests in flight) can be passed in.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../jobs/clock.js';
import { clientAddress } from './auth.js';
import { DEFAULT_BURST, DEFAULT_LEGACY_IN_FLIGHT, DEFAULT_RATE_PER_SECOND } from './defaults.js';
import { tooManyRequests } from './problems.js';
import { routedPath } from './query.js';

export interface RateLimitOptions {
  /** Tokens added to an IP's bucket per second, for requests under /v2.x (default 6). */
  readonly perSecond?: number;
  /** The most tokens a bucket holds: the burst an idle client may send at once (default 15). */
  readonly burst?: number;
  /** The most requests of one IP in flight under /v1.4 (default 5). */
  readonly legacyInFlight?: number;
  /** Where buckets and requests in flight are counted (default: in this process's memory). */
  readonly store?: RateLimitStore;
}

export interface Bucket {
  /** Milliseconds between two tokens. */
  readonly intervalMs: number;
  readonly capacity: number;
}

/** The counts behind the limits. Each operation is atomic for its key (concurrent requests never both take a last token). */
export interface RateLimitStore {
  /** Takes a token of `key`'s bucket at `now`: 0 when one was taken, else the milliseconds until one is free. */
  takeToken(key: string, bucket: Bucket, now: number): number | Promise<number>;
  /** Counts one more request of `key` in flight unless `max` are: whether it was counted. */
  enter(key: string, max: number): boolean | Promise<boolean>;
  /** A request counted by `enter` has ended. */
  leave(key: string): void | Promise<void>;
}

/** How often, at most, buckets that are full again are dropped. */
const SWEEP_EVERY_MS = 10_000;

/** The counts in this process's memory: one number per IP seen in the last seconds, one per IP with requests in flight. */
export class MemoryRateLimitStore implements RateLimitStore {
  /** Per key: the time at which its bucket is full again (GCRA's theoretical arrival time), in microseconds. */
  private readonly fullAt = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  private lastSweep = -Infinity;

  takeToken(key: string, { intervalMs, capacity }: Bucket, nowMs: number): number {
    this.sweep(nowMs);
    // In whole microseconds: sums of a fraction such as 1000/6 ms would drift, and refuse the 15th token of 15.
    const now = Math.round(nowMs * 1000);
    const interval = Math.round(intervalMs * 1000);
    const arrival = Math.max(this.fullAt.get(key) ?? now, now);
    // The bucket holds capacity - (arrival - now) / interval tokens; a request needs one.
    const tolerance = interval * (capacity - 1);
    if (arrival - now > tolerance) return (arrival - tolerance - now) / 1000;
    this.fullAt.set(key, arrival + interval);
    return 0;
  }

  enter(key: string, max: number): boolean {
    const count = this.inFlight.get(key) ?? 0;
    if (count >= max) return false;
    this.inFlight.set(key, count + 1);
    return true;
  }

  leave(key: string): void {
    const count = (this.inFlight.get(key) ?? 1) - 1;
    if (count <= 0) this.inFlight.delete(key);
    else this.inFlight.set(key, count);
  }

  /** Keys counted now (for tests and metrics). */
  get size(): { readonly buckets: number; readonly inFlight: number } {
    return { buckets: this.fullAt.size, inFlight: this.inFlight.size };
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS && now >= this.lastSweep) return;
    this.lastSweep = now;
    for (const [key, time] of this.fullAt) if (time <= now * 1000) this.fullAt.delete(key);
  }
}

const V2 = /^\/v2\.\d+(?:\/|$)/;
const V14 = /^\/v1\.4(?:\/|$)/;


/**
 * Adds the limits to `app` as a request hook: called before the routes are registered, it runs ahead of their hooks,
 * authentication included.
 */
export function addRateLimits(app: FastifyInstance, base: string, clock: Clock, options: RateLimitOptions): void {
  const perSecond = options.perSecond ?? DEFAULT_RATE_PER_SECOND;
  const bucket: Bucket = { intervalMs: 1000 / perSecond, capacity: options.burst ?? DEFAULT_BURST };
  const maxInFlight = options.legacyInFlight ?? DEFAULT_LEGACY_IN_FLIGHT;
  if (!(perSecond > 0) || !(bucket.capacity >= 1) || !(maxInFlight >= 1)) {
    throw new Error('mailverify: rate limits need a positive rate, a burst of at least 1 and at least 1 request in flight');
  }
  const store = options.store ?? new MemoryRateLimitStore();
  app.addHook('onRequest', async (request, reply) => {
    const path = routedPath(request);
    if (!path.startsWith(`${base}/`)) return;
    const rest = path.slice(base.length);
    const ip = clientAddress(request);
    if (V2.test(rest)) {
      const waitMs = await store.takeToken(ip, bucket, clock.now());
      if (waitMs > 0) throw tooManyRequests(`More than ${perSecond} requests per second from this address`, waitMs);
    } else if (V14.test(rest)) {
      if (!(await store.enter(ip, maxInFlight))) {
        // No time is known at which one of them ends: the shortest wait a client can be told.
        throw tooManyRequests(`${maxInFlight} requests from this address are in progress already`, 0);
      }
      // 'close' comes once the answer is sent, or when the connection ends first (an aborted request).
      reply.raw.once('close', () => {
        Promise.resolve()
          .then(() => store.leave(ip))
          .catch((error: unknown) => app.log.error({ err: error }, 'mailverify: a request in flight could not be uncounted'));
      });
    }
  });
}
