/**
 * Recipient budgets per egress × provider: RCPT commands (real recipients and catch-all probes) in any 60 s and in any
 * 24 h, as a provider profile's `recipientsPerMinute` and `recipientsPerDay` allow. A session takes a grant before
 * each round and gives back what the round did not use; once the round's replies are in, its RCPTs count from then
 * (a server counts them when they reach it, which can be well after the grant). The in-process ledger is here; a
 * cluster's is shared through Redis (packages/server/src/cluster/budget.ts), behind the same interface.
 */

export interface RateLimits {
  readonly perMinute?: number;
  readonly perDay?: number;
}

export interface Grant {
  /** Recipients the round may carry now (0 to `wanted`). */
  readonly granted: number;
  /** With nothing granted: the wait until the minute's window lets one more through (0 when the day is spent). */
  readonly retryInMs: number;
  /** The day's budget is spent: this egress takes no more of the provider's recipients for now. */
  readonly daySpent: boolean;
  /** With something granted: when its RCPTs were counted (the ledger's clock), which names the grant later. */
  readonly at?: number;
}

export interface RecipientLedger {
  /** Up to `wanted` recipients for the pair now, recorded as sent. */
  take(egress: string, provider: string, wanted: number, limits: RateLimits): Promise<Grant>;
  /** `count` recipients of `grant` (default: the latest counted) that were not sent after all. */
  giveBack(egress: string, provider: string, count: number, limits: RateLimits, grant?: Grant): Promise<void>;
  /**
   * The round of `grant` is over and `count` RCPTs of it were sent: they count from now rather than from the grant, so
   * that the minute's window never frees before the server's own does (a count above what is left of the grant adds).
   */
  restamp(egress: string, provider: string, count: number, limits: RateLimits, grant: Grant): Promise<void>;
  /**
   * The pair's budget as last known, read without taking: whether the day is spent, and when the minute's window has
   * no room, the wait until it has (0 when it has room).
   */
  peek(egress: string, provider: string, limits: RateLimits): { readonly daySpent: boolean; readonly retryInMs: number };
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

interface PairLedger {
  /** The time of each RCPT in the last 60 s, oldest first (at most `perMinute`). */
  minute: number[];
  /** RCPTs of the last 24 h in buckets of one minute: [bucket start, count], oldest first. */
  day: [number, number][];
  dayTotal: number;
}

/** The ledger of one process. `now` is injectable for tests (`performance.now()`'s clock otherwise). */
export class LocalRecipientLedger implements RecipientLedger {
  private readonly pairs = new Map<string, PairLedger>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  take(egress: string, provider: string, wanted: number, limits: RateLimits): Promise<Grant> {
    return Promise.resolve(this.takeNow(egress, provider, wanted, limits));
  }

  takeNow(egress: string, provider: string, wanted: number, limits: RateLimits): Grant {
    if (limits.perMinute === undefined && limits.perDay === undefined) return { granted: wanted, retryInMs: 0, daySpent: false };
    const now = this.now();
    const pair = this.pair(egress, provider, now);
    const dayLeft = limits.perDay === undefined ? Infinity : limits.perDay - pair.dayTotal;
    if (dayLeft <= 0) return { granted: 0, retryInMs: 0, daySpent: true };
    const minuteLeft = limits.perMinute === undefined ? Infinity : limits.perMinute - pair.minute.length;
    const granted = Math.max(0, Math.min(wanted, dayLeft, minuteLeft));
    if (granted === 0) return { granted: 0, retryInMs: Math.max(1, pair.minute[0]! + MINUTE_MS - now), daySpent: false };
    if (limits.perMinute !== undefined) for (let i = 0; i < granted; i++) pair.minute.push(now);
    const bucket = now - (now % MINUTE_MS);
    const last = pair.day.at(-1);
    if (last !== undefined && last[0] === bucket) last[1] += granted;
    else pair.day.push([bucket, granted]);
    pair.dayTotal += granted;
    return { granted, retryInMs: 0, daySpent: false, at: now };
  }

  giveBack(egress: string, provider: string, count: number, limits: RateLimits, grant?: Grant): Promise<void> {
    if (count <= 0 || (limits.perMinute === undefined && limits.perDay === undefined)) return Promise.resolve();
    const pair = this.pairs.get(pairKey(egress, provider));
    if (pair === undefined) return Promise.resolve();
    if (limits.perMinute !== undefined) {
      // The grant's own entries: a later grant's, removed instead, would leave this one's earlier times behind.
      if (grant?.at === undefined) pair.minute.splice(Math.max(0, pair.minute.length - count));
      else removeTimes(pair.minute, grant.at, count);
    }
    let left = count;
    while (left > 0 && pair.day.length > 0) {
      const last = pair.day.at(-1)!;
      const taken = Math.min(left, last[1]);
      last[1] -= taken;
      left -= taken;
      pair.dayTotal -= taken;
      if (last[1] === 0) pair.day.pop();
    }
    return Promise.resolve();
  }

  restamp(egress: string, provider: string, count: number, limits: RateLimits, grant: Grant): Promise<void> {
    if (count <= 0 || limits.perMinute === undefined || grant.at === undefined) return Promise.resolve();
    const pair = this.pairs.get(pairKey(egress, provider));
    if (pair === undefined) return Promise.resolve();
    const now = this.now();
    this.expire(pair, now);
    removeTimes(pair.minute, grant.at, count);
    // Now is the latest time: the window stays in order.
    for (let i = 0; i < count; i++) pair.minute.push(now);
    return Promise.resolve();
  }

  peek(egress: string, provider: string, limits: RateLimits): { readonly daySpent: boolean; readonly retryInMs: number } {
    const pair = this.pairs.get(pairKey(egress, provider));
    if (pair === undefined) return { daySpent: false, retryInMs: 0 };
    const now = this.now();
    this.expire(pair, now);
    const daySpent = limits.perDay !== undefined && pair.dayTotal >= limits.perDay;
    const full = limits.perMinute !== undefined && pair.minute.length >= limits.perMinute;
    return { daySpent, retryInMs: full ? Math.max(1, pair.minute[0]! + MINUTE_MS - now) : 0 };
  }

  private pair(egress: string, provider: string, now: number): PairLedger {
    const name = pairKey(egress, provider);
    let pair = this.pairs.get(name);
    if (pair === undefined) this.pairs.set(name, (pair = { minute: [], day: [], dayTotal: 0 }));
    this.expire(pair, now);
    return pair;
  }

  private expire(pair: PairLedger, now: number): void {
    let drop = 0;
    while (drop < pair.minute.length && pair.minute[drop]! <= now - MINUTE_MS) drop++;
    if (drop > 0) pair.minute.splice(0, drop);
    while (pair.day.length > 0 && pair.day[0]![0] + MINUTE_MS <= now - DAY_MS) pair.dayTotal -= pair.day.shift()![1];
  }
}

/** Removes up to `count` entries equal to `at` from the ordered `times`. */
function removeTimes(times: number[], at: number, count: number): void {
  const end = times.lastIndexOf(at);
  if (end < 0) return;
  let start = end;
  while (start > 0 && end - start + 1 < count && times[start - 1] === at) start--;
  times.splice(start, end - start + 1);
}

/** The key of an egress × provider pair in the maps of budgets and coolings (an egress id never holds a space). */
export function pairKey(egress: string, provider: string): string {
  return `${egress} ${provider}`;
}
