/**
 * Throttling of a user's submissions: each rule `{ limit, period, scope }` allows at most `limit` accepted submissions
 * in any sliding window of its period, counted per user (`Global`) or per user and client IP (`IPAddress`).
 *
 * What is counted is a log of the times of accepted submissions, one per user and one per (user, client IP). Every rule
 * of a scope reads the same log, so rules are read afresh at each submission (a changed rule applies at the next one)
 * and see every submission made before within its window, whatever the rules were then: a user's submissions are
 * counted while it has no rules too, so that rules emptied and set again, or set for the first time, count them.
 *
 * Memory stays bounded: a log keeps the times of the last day (the longest period a rule may have), and at most the
 * newest KEPT_SUBMISSIONS of them, or the largest limit of its user's rules when that is more (a rule only ever reads
 * its newest `limit` times in its window, so the rules of the moment are always exact); a log with nothing left in the
 * last day is forgotten. So at most two numbers per accepted submission (a stored job) of the last day are kept, and
 * no more than KEPT_SUBMISSIONS per log of a user without such large limits. The price: a rule set later with a limit
 * above KEPT_SUBMISSIONS sees only the newest KEPT_SUBMISSIONS of the submissions made before it.
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

/**
 * Where submissions are counted: Throttle in this process's memory, or a store shared by a cluster's processes
 * (RedisThrottle). `take` checks and counts at once, atomically for the user.
 */
export interface SubmissionThrottle {
  take(user: string, ip: string, rules: readonly ThrottlingRule[]): ThrottleDecision | Promise<ThrottleDecision>;
}

/** `Retry-After` for a wait of `waitMs`: whole seconds, at least 1. */
export const retryAfterSeconds = (waitMs: number): number => Math.max(1, Math.ceil(waitMs / 1000));

/** The longest a submission counts toward any rule: the longest period. */
export const KEPT_MS = PERIOD_MS.Day;

/** The submissions kept per log at least (more when a rule of the user's allows more). */
export const KEPT_SUBMISSIONS = 1_000;

/** How many times a log of a user with `rules` keeps. */
export const keptSubmissions = (rules: readonly ThrottlingRule[]): number => rules.reduce((most, rule) => Math.max(most, rule.limit), KEPT_SUBMISSIONS);

/** How often, at most, every log is looked through for those with nothing left in the last day. */
const SWEEP_EVERY_MS = 60_000;

export class Throttle implements SubmissionThrottle {
  /** Per key: the times of accepted submissions of the last day, oldest first. */
  private readonly logs = new Map<string, number[]>();
  private lastSweep: number;

  constructor(private readonly now: () => number = Date.now) {
    this.lastSweep = now();
  }

  /**
   * Checks a submission of `user` from `ip` against `rules` and, when every rule allows it (always, without rules),
   * counts it at once (so that two submissions at the same time cannot both take the last slot).
   */
  take(user: string, ip: string, rules: readonly ThrottlingRule[]): ThrottleDecision {
    const now = this.now();
    this.sweep(now);
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
    const kept = keptSubmissions(rules);
    const written = [keys.Global, keys.IPAddress].map((key) => this.record(key, now, kept));
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

  /** The times of a log of the last day at `now`. */
  private live(key: string, now: number): number[] {
    const times = this.logs.get(key);
    if (times === undefined) return [];
    const first = times.findIndex((time) => time > now - KEPT_MS);
    if (first < 0) {
      this.logs.delete(key);
      return [];
    }
    if (first > 0) times.splice(0, first);
    return times;
  }

  private record(key: string, now: number, kept: number): string {
    const times = this.live(key, now);
    times.push(now);
    // In order even if the clock stepped back.
    if (times.length > 1 && times[times.length - 2]! > now) times.sort((a, b) => a - b);
    if (times.length > kept) times.splice(0, times.length - kept);
    this.logs.set(key, times);
    return key;
  }

  private unrecord(key: string, time: number): void {
    const times = this.logs.get(key);
    if (times === undefined) return;
    const index = times.lastIndexOf(time);
    if (index >= 0) times.splice(index, 1);
    if (times.length === 0) this.logs.delete(key);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS && now >= this.lastSweep) return;
    this.lastSweep = now;
    for (const [key, times] of this.logs) {
      if (times[times.length - 1]! <= now - KEPT_MS) this.logs.delete(key);
    }
  }
}
