/**
 * Throttling of a user's submissions: each rule `{ limit, period, scope }` allows at most `limit` accepted submissions
 * in any sliding window of its period, counted per user (`Global`) or per user and client IP (`IPAddress`).
 *
 * What is counted is a log of the times of accepted submissions, one per user and one per (user, client IP). Every rule
 * of a scope reads the same log, so rules are read afresh at each submission (a changed rule applies at the next one)
 * and still see the submissions made under the rules before. Memory stays bounded: a log keeps only the times within
 * the longest period of its user's rules, and a log with nothing left in its window is forgotten; so at most two
 * numbers per accepted submission (a stored job) of the last day are kept, and fewer under shorter periods.
 */
import type { ThrottlingRule } from './types.js';

export const PERIOD_MS: Readonly<Record<ThrottlingRule['period'], number>> = {
  Minute: 60_000,
  Hour: 3_600_000,
  Day: 86_400_000,
};

/** A submission let through: `giveBack` uncounts it (a later check refused it, or its job was not stored). */
export interface ThrottleSlot {
  giveBack(): void | Promise<void>;
}

export type ThrottleDecision =
  | { readonly admitted: true; readonly slot: ThrottleSlot }
  | { readonly admitted: false; /** Whole seconds (>= 1) until the rule that refused lets a submission through. */ readonly retryAfterSeconds: number };

interface Log {
  /** Times of accepted submissions, oldest first. */
  times: number[];
  /** How long its times are of use (the longest period of its user's rules when last written). */
  keepMs: number;
}

/**
 * Where submissions are counted: Throttle in this process's memory, or a store shared by a cluster's processes
 * (RedisThrottle). `take` checks and counts at once, atomically for the user.
 */
export interface SubmissionThrottle {
  take(user: string, ip: string, rules: readonly ThrottlingRule[]): ThrottleDecision | Promise<ThrottleDecision>;
}

/** `Retry-After` for a wait of `waitMs`: whole seconds, at least 1. */
export const retryAfterSeconds = (waitMs: number): number => Math.max(1, Math.ceil(waitMs / 1000));

/** How often, at most, every log is looked through for those with nothing left in their window. */
const SWEEP_EVERY_MS = 60_000;

export class Throttle implements SubmissionThrottle {
  private readonly logs = new Map<string, Log>();
  private lastSweep: number;

  constructor(private readonly now: () => number = Date.now) {
    this.lastSweep = now();
  }

  /**
   * Checks a submission of `user` from `ip` against `rules` and, when every rule allows it, counts it at once (so
   * that two submissions at the same time cannot both take the last slot).
   */
  take(user: string, ip: string, rules: readonly ThrottlingRule[]): ThrottleDecision {
    const now = this.now();
    this.sweep(now);
    if (rules.length === 0) {
      // Nothing limits this user now: what was counted for it can go.
      this.forgetUnlimited(user, ip);
      return { admitted: true, slot: { giveBack: () => {} } };
    }
    const keepMs = Math.max(...rules.map((rule) => PERIOD_MS[rule.period]));
    const keys = { Global: `${user}\n`, IPAddress: `${user}\n${ip}` };
    let waitMs = 0;
    for (const rule of rules) {
      const times = this.live(keys[rule.scope], now);
      const windowStart = now - PERIOD_MS[rule.period];
      const inWindow = times.filter((time) => time > windowStart);
      if (inWindow.length >= rule.limit) {
        // The submission fits once enough of the counted ones have left the window: the oldest that must go leaves
        // at its time plus the period.
        const mustLeave = inWindow[inWindow.length - rule.limit]!;
        waitMs = Math.max(waitMs, mustLeave + PERIOD_MS[rule.period] - now);
      }
    }
    if (waitMs > 0) return { admitted: false, retryAfterSeconds: retryAfterSeconds(waitMs) };
    // Counted in both logs whatever the scopes of today's rules, so that a rule added later sees it.
    const written = [keys.Global, keys.IPAddress].map((key) => this.record(key, now, keepMs));
    let given = false;
    return {
      admitted: true,
      slot: {
        giveBack: () => {
          if (given) return;
          given = true;
          for (const key of written) this.unrecord(key, now);
        },
      },
    };
  }

  /** Logs kept now (for tests and metrics). */
  get size(): number {
    return this.logs.size;
  }

  /** The times of a log still of use at `now`. */
  private live(key: string, now: number): number[] {
    const log = this.logs.get(key);
    if (log === undefined) return [];
    const first = log.times.findIndex((time) => time > now - log.keepMs);
    if (first < 0) {
      this.logs.delete(key);
      return [];
    }
    if (first > 0) log.times.splice(0, first);
    return log.times;
  }

  private record(key: string, now: number, keepMs: number): string {
    const times = this.live(key, now);
    times.push(now);
    // In order even if the clock stepped back.
    if (times.length > 1 && times[times.length - 2]! > now) times.sort((a, b) => a - b);
    this.logs.set(key, { times, keepMs });
    return key;
  }

  private unrecord(key: string, time: number): void {
    const log = this.logs.get(key);
    if (log === undefined) return;
    const index = log.times.lastIndexOf(time);
    if (index >= 0) log.times.splice(index, 1);
    if (log.times.length === 0) this.logs.delete(key);
  }

  private forgetUnlimited(user: string, ip: string): void {
    this.logs.delete(`${user}\n`);
    this.logs.delete(`${user}\n${ip}`);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS && now >= this.lastSweep) return;
    this.lastSweep = now;
    for (const [key, log] of this.logs) {
      if (log.times[log.times.length - 1]! <= now - log.keepMs) this.logs.delete(key);
    }
  }
}
