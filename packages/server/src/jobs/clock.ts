/**
 * The time source of the server's background work: job timestamps (completion, end), completion callback retries and
 * retention purges all read the time and wait on timers through a Clock. The real clock is the default; a host (or a
 * test) may pass its own, such as one it moves forward by hand.
 *
 * Network timeouts (a callback's 5-second answer time, DNS and SMTP deadlines) are not on the clock: they measure how
 * long a peer takes, which only real time can.
 */

/** A timer of a clock; only the clock that made it knows what it is. */
export type ClockTimer = unknown;

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `callback` once, `ms` milliseconds from now (a delay of 0 or less: as soon as possible). */
  setTimeout(callback: () => void, ms: number): ClockTimer;
  /** Cancels a timer of this clock; a timer that fired or was cleared is ignored. */
  clearTimeout(timer: ClockTimer): void;
}

/** Node's timers take at most 2^31 - 1 ms; a longer wait is taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The system clock: Date.now() and Node's timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    const handle: { timer?: NodeJS.Timeout } = {};
    const due = Date.now() + Math.max(0, ms);
    const wait = (): void => {
      const left = due - Date.now();
      handle.timer = left > MAX_TIMER_MS ? setTimeout(wait, MAX_TIMER_MS) : setTimeout(callback, Math.max(0, left));
    };
    wait();
    return handle;
  },
  clearTimeout(timer) {
    const handle = timer as { timer?: NodeJS.Timeout } | undefined;
    if (handle?.timer !== undefined) clearTimeout(handle.timer);
  },
};

/** A clock time as the store writes it: ISO 8601 UTC with milliseconds. */
export function isoTime(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}
