// A clock that tests move forward by hand: the time source of the callback worker and the retention purger, so that
// 10 s, 1 h or 30 days pass at once. Its timers fire in order of their due time as `advance` passes it; a timer set
// already due fires on the next turn of the event loop, as a real one would.
import type { Clock, ClockTimer } from '../../packages/server/src/jobs/clock.js';

interface Timer {
  readonly id: number;
  readonly due: number;
  readonly callback: () => void;
}

export class ManualClock implements Clock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, Timer>();
  #immediate: NodeJS.Immediate | undefined;

  constructor(start = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): ClockTimer {
    const timer = { id: this.#nextId++, due: this.#now + Math.max(0, ms), callback };
    this.#timers.set(timer.id, timer);
    if (timer.due <= this.#now) this.#immediate ??= setImmediate(() => this.#fireDue());
    return timer.id;
  }

  clearTimeout(timer: ClockTimer): void {
    this.#timers.delete(timer as number);
  }

  /** Moves the time forward by `ms`, firing every timer that falls due on the way, each at its due time. */
  advance(ms: number): void {
    this.advanceTo(this.#now + ms);
  }

  advanceTo(time: number): void {
    if (time < this.#now) throw new RangeError('a clock does not go back');
    for (;;) {
      const next = this.#earliest();
      if (next === undefined || next.due > time) break;
      this.#now = Math.max(this.#now, next.due);
      this.#timers.delete(next.id);
      next.callback();
    }
    this.#now = time;
  }

  /** The due times of the timers set, soonest first. */
  timers(): number[] {
    return [...this.#timers.values()].map((timer) => timer.due).sort((a, b) => a - b);
  }

  #earliest(): Timer | undefined {
    let earliest: Timer | undefined;
    for (const timer of this.#timers.values()) if (earliest === undefined || timer.due < earliest.due) earliest = timer;
    return earliest;
  }

  #fireDue(): void {
    this.#immediate = undefined;
    this.advanceTo(this.#now);
  }
}
