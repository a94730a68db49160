/**
 * Limits on failed sign-ins (wrong Basic or token-request credentials, unknown usernames included), in memory, over a
 * sliding 15-minute window: 10 failures are allowed per username and 100 per client IP; the attempt after the 10th (or
 * the 100th) is refused, and every one after it, with 429 and `Retry-After` and without checking the password, until
 * the oldest counted failure is 15 minutes old and the count falls below the limit again.
 *
 * The server asks `retryAfter` before checking a password and calls `recordFailure` when the check fails. A refused
 * attempt is not itself a failure (its password was never checked), so a block ends on time whatever is tried meanwhile.
 */
import { createHash } from 'node:crypto';

export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** Failures allowed per username within the window: the next attempt is refused. */
export const USERNAME_FAILURE_LIMIT = 10;
/** Failures allowed per client IP within the window: the next attempt is refused. */
export const ADDRESS_FAILURE_LIMIT = 100;

export interface SignInLimiterOptions {
  /** Milliseconds since the epoch; Date.now by default. */
  readonly now?: () => number;
  /** Usernames tracked at most (default 50,000): about 300 bytes each at worst, 15 MB in all. */
  readonly maxUsernames?: number;
  /** Client IPs tracked at most (default 10,000): about 1 KB each at worst (100 timestamps), 10 MB in all. */
  readonly maxAddresses?: number;
}

/**
 * Recent failures per key, at most `limit` timestamps each (the newest): enough to answer exactly, since a key is
 * blocked while `limit` of its failures are in the window, until the oldest of those leaves it.
 *
 * Memory is bounded twice. Keys whose newest failure has left the window are dropped as time passes (the maps are in
 * order of last failure, so those are always at the front). And at most `maxKeys` are kept: beyond, the key whose last
 * failure is oldest among those below their limit goes first, and a key at its limit (a blocked username or IP), the
 * one of oldest last failure, only when no other is left but the key just counted. So a flood of random usernames, one
 * failure each, pushes out its own entries and not the blocks of the accounts under attack; to push out a block, the
 * table must fill with blocked keys, `maxKeys` × `limit` failures within 15 minutes (half a million for usernames,
 * which the per-IP limit spreads over 5,000 client IPs). Even then a new key is counted, at the expense of old blocks.
 */
class FailureLog {
  /** Keys with fewer than `limit` failures kept, in order of last failure. */
  private readonly belowLimit = new Map<string, number[]>();
  /** Keys with `limit` failures kept (blocked unless the oldest has left the window since), in order of last failure. */
  private readonly atLimit = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {
    if (!(maxKeys >= 1)) throw new RangeError('at least one key must be tracked');
  }

  get size(): number {
    return this.belowLimit.size + this.atLimit.size;
  }

  /** Whole seconds (>= 1) until `key` is no longer blocked; 0 when it is not. */
  secondsBlocked(key: string, now: number): number {
    const live = this.liveFailures(key, now);
    if (live.length < this.limit) return 0;
    // All `limit` kept failures are in the window: the block lasts until the oldest of them leaves it.
    return Math.max(1, Math.ceil((Math.min(...live) + this.windowMs - now) / 1000));
  }

  record(key: string, now: number): void {
    this.dropExpired(now);
    const times = this.liveFailures(key, now);
    times.push(now);
    // Sorted, in case the clock stepped back; only the newest `limit` decide anything.
    if (times.length > 1 && times[times.length - 2]! > now) times.sort((a, b) => a - b);
    if (times.length > this.limit) times.splice(0, times.length - this.limit);
    this.belowLimit.delete(key);
    this.atLimit.delete(key);
    // A copy of the exact length: an array grown by push keeps spare room.
    (times.length >= this.limit ? this.atLimit : this.belowLimit).set(key, times.slice());
    while (this.size > this.maxKeys) {
      // Never the key just counted (it is the newest below its limit): it could then never reach its limit.
      const oldestBelow = this.belowLimit.keys().next().value;
      const victim = oldestBelow !== undefined && oldestBelow !== key ? oldestBelow : this.atLimit.keys().next().value!;
      this.belowLimit.delete(victim);
      this.atLimit.delete(victim);
    }
  }

  /** The kept failures of `key` still in the window (a failure at t counts while now < t + window). */
  private liveFailures(key: string, now: number): number[] {
    const times = this.belowLimit.get(key) ?? this.atLimit.get(key);
    return times === undefined ? [] : Array.from(times).filter((t) => t + this.windowMs > now);
  }

  private dropExpired(now: number): void {
    for (const map of [this.belowLimit, this.atLimit]) {
      for (const [key, times] of map) {
        if (times[times.length - 1]! + this.windowMs > now) break;
        map.delete(key);
      }
    }
  }
}

/** A key of bounded size: a long one (an attacker's username can be kilobytes) is replaced by its SHA-256. */
export function boundedKey(text: string): string {
  return text.length <= 128 ? text : `sha256:${createHash('sha256').update(text, 'utf8').digest('base64url')}`;
}

/** Usernames match case-insensitively in ASCII, as the user store compares them. */
export function usernameKey(username: string): string {
  return boundedKey(username.replace(/[A-Z]/g, (c) => c.toLowerCase()));
}

/** Where failed sign-ins are counted: SignInLimiter in this process's memory, or a store shared by a cluster (RedisSignInLimits). */
export interface SignInLimits {
  /** Whole seconds (>= 1) to answer in `Retry-After` when a sign-in as `username` from `ip` is refused; 0 when it may go on. */
  retryAfter(username: string, ip: string): number | Promise<number>;
  /** Counts a failed sign-in against its username and its IP. */
  recordFailure(username: string, ip: string): void | Promise<void>;
}

export class SignInLimiter implements SignInLimits {
  private readonly now: () => number;
  private readonly byUsername: FailureLog;
  private readonly byAddress: FailureLog;

  constructor(options: SignInLimiterOptions = {}) {
    this.now = options.now ?? Date.now;
    this.byUsername = new FailureLog(USERNAME_FAILURE_LIMIT, SIGN_IN_WINDOW_MS, options.maxUsernames ?? 50_000);
    this.byAddress = new FailureLog(ADDRESS_FAILURE_LIMIT, SIGN_IN_WINDOW_MS, options.maxAddresses ?? 10_000);
  }

  /**
   * Whole seconds to answer in `Retry-After` (>= 1) when a sign-in as `username` from `ip` is refused, until both its
   * username and its IP are below their limits again; 0 when it may go on to the password check.
   */
  retryAfter(username: string, ip: string): number {
    const now = this.now();
    return Math.max(this.byUsername.secondsBlocked(usernameKey(username), now), this.byAddress.secondsBlocked(boundedKey(ip), now));
  }

  /** Counts a failed sign-in (a wrong password or an unknown username) against its username and its IP. */
  recordFailure(username: string, ip: string): void {
    const now = this.now();
    this.byUsername.record(usernameKey(username), now);
    this.byAddress.record(boundedKey(ip), now);
  }

  /** Usernames and IPs tracked now (for tests and metrics). */
  get trackedKeys(): { readonly usernames: number; readonly addresses: number } {
    return { usernames: this.byUsername.size, addresses: this.byAddress.size };
  }
}
