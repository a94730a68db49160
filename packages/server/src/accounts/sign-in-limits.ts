/**
 * Limits on failed sign-ins (wrong Basic or token-request credentials, unknown usernames included) and on wrong TOTP
 * codes, in memory, over a sliding 15-minute window: 10 failures are allowed per username and 100 per client IP, 10
 * wrong codes per user; the attempt after the 10th (or the 100th) is refused, and every one after it, with 429 and
 * `Retry-After` and without checking the password or code, until the oldest counted failure is 15 minutes old and the
 * count falls below the limit again.
 *
 * An attempt takes its place in the count before it is checked (`reserve`): concurrent guesses cannot all be checked
 * while the count is read before and written after. A reserved place counts as a failure until the check settles it:
 * `failed` keeps it as one, `release` (a right password, or a check that could not be made) gives it back. A refused
 * attempt is not itself a failure (its password was never checked), so a block ends on time whatever is tried
 * meanwhile. While only places still being checked fill the count, `Retry-After` is 1 second: they settle at once.
 */
import { createHash } from 'node:crypto';
import { usernameKey } from './usernames.js';

export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** Failures allowed per username within the window: the next attempt is refused. */
export const USERNAME_FAILURE_LIMIT = 10;
/** Failures allowed per client IP within the window: the next attempt is refused. */
export const ADDRESS_FAILURE_LIMIT = 100;
/**
 * Wrong TOTP codes allowed per user within the window (RFC 4226 section 7.3, RFC 6238 section 5.2: the verifier
 * throttles guesses): at most 960 guesses a day, each with 3 chances in a million (the current step and one either
 * side), so half a chance of a right guess takes some 240 days of guessing, with the user's password known.
 */
export const TOTP_FAILURE_LIMIT = 10;
/** The `Retry-After` of an attempt refused while only places still being checked fill the count. */
export const PENDING_RETRY_SECONDS = 1;

/** A place taken in the failure counts for an attempt about to be checked. */
export interface LimitedAttempt {
  /** The check failed: the place stays as a failure for the window. */
  failed(): void | Promise<void>;
  /** The check passed (or was not made): the place is given back. Once settled, later calls do nothing. */
  release(): void | Promise<void>;
}

/** An attempt that may go on to its check, or the whole seconds (>= 1) to answer in `Retry-After`. */
export type Reservation = { readonly attempt: LimitedAttempt } | { readonly retryAfterSeconds: number };

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
  /** Places reserved per key and not settled yet: as many as attempts being checked, so bounded by concurrency. */
  private readonly pending = new Map<string, number>();

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

  /** Whole seconds (>= 1) until `key` is no longer blocked, places being checked counted as failures; 0 when it is not. */
  secondsBlocked(key: string, now: number): number {
    const live = this.liveFailures(key, now);
    if (live.length < this.limit) return live.length + (this.pending.get(key) ?? 0) >= this.limit ? PENDING_RETRY_SECONDS : 0;
    // All `limit` kept failures are in the window: the block lasts until the oldest of them leaves it.
    return Math.max(1, Math.ceil((Math.min(...live) + this.windowMs - now) / 1000));
  }

  /** Takes a place for an attempt of `key` being checked. */
  hold(key: string): void {
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
  }

  /** Gives back a place taken by `hold`. */
  unhold(key: string): void {
    const count = (this.pending.get(key) ?? 1) - 1;
    if (count <= 0) this.pending.delete(key);
    else this.pending.set(key, count);
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

/** The key a username is counted under: the user store's key (usernameKey), bounded. */
export const limitedUsernameKey = (username: string): string => boundedKey(usernameKey(username));

/**
 * Reserves a place in each of `logs` for their keys at `now`, or refuses with the longest block among them. Every
 * place or none is taken.
 */
function reserveIn(places: readonly (readonly [FailureLog, string])[], now: () => number): Reservation {
  const at = now();
  const retryAfterSeconds = Math.max(0, ...places.map(([log, key]) => log.secondsBlocked(key, at)));
  if (retryAfterSeconds > 0) return { retryAfterSeconds };
  for (const [log, key] of places) log.hold(key);
  let settled = false;
  const settle = (failed: boolean): void => {
    if (settled) return;
    settled = true;
    const end = now();
    for (const [log, key] of places) {
      log.unhold(key);
      if (failed) log.record(key, end);
    }
  };
  return { attempt: { failed: () => settle(true), release: () => settle(false) } };
}

/** Where failed sign-ins are counted: SignInLimiter in this process's memory, or a store shared by a cluster (RedisSignInLimits). */
export interface SignInLimits {
  /** Takes a place for a sign-in as `username` from `ip` about to be checked, or refuses it while either is locked out. */
  reserve(username: string, ip: string): Reservation | Promise<Reservation>;
}

/** Where wrong TOTP codes are counted per user: TotpFailureLimiter in memory, or shared by a cluster (RedisTotpFailures). */
export interface TotpFailureLimits {
  /** Takes a place for a code of the user `userId` about to be checked, or refuses it while the user is locked out. */
  reserve(userId: string): Reservation | Promise<Reservation>;
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

  reserve(username: string, ip: string): Reservation {
    return reserveIn(this.places(username, ip), this.now);
  }

  /**
   * Whole seconds to answer in `Retry-After` (>= 1) when a sign-in as `username` from `ip` is refused, until both its
   * username and its IP are below their limits again; 0 when it may go on to the password check.
   */
  retryAfter(username: string, ip: string): number {
    const now = this.now();
    return Math.max(...this.places(username, ip).map(([log, key]) => log.secondsBlocked(key, now)));
  }

  /** Counts a failed sign-in (a wrong password or an unknown username) against its username and its IP. */
  recordFailure(username: string, ip: string): void {
    const now = this.now();
    for (const [log, key] of this.places(username, ip)) log.record(key, now);
  }

  /** Usernames and IPs tracked now (for tests and metrics). */
  get trackedKeys(): { readonly usernames: number; readonly addresses: number } {
    return { usernames: this.byUsername.size, addresses: this.byAddress.size };
  }

  private places(username: string, ip: string): [FailureLog, string][] {
    return [
      [this.byUsername, limitedUsernameKey(username)],
      [this.byAddress, boundedKey(ip)],
    ];
  }
}

export interface TotpFailureLimiterOptions {
  /** Milliseconds since the epoch; Date.now by default. */
  readonly now?: () => number;
  /** Users tracked at most (default 50,000). */
  readonly maxUsers?: number;
}

/** Wrong TOTP codes per user in this process's memory: TOTP_FAILURE_LIMIT within the window, then 429. */
export class TotpFailureLimiter implements TotpFailureLimits {
  private readonly now: () => number;
  private readonly byUser: FailureLog;

  constructor(options: TotpFailureLimiterOptions = {}) {
    this.now = options.now ?? Date.now;
    this.byUser = new FailureLog(TOTP_FAILURE_LIMIT, SIGN_IN_WINDOW_MS, options.maxUsers ?? 50_000);
  }

  reserve(userId: string): Reservation {
    return reserveIn([[this.byUser, boundedKey(userId)]], this.now);
  }
}
