/**
 * A cap on DNS queries in flight (caps bound resources, not addresses): at most `max` queries at a time, the others
 * waiting their turn in arrival order. A query's own deadline starts when it is sent, not while it waits.
 *
 * `withdraw()` takes back the work nobody wants any more (see `Interest`): a waiting query leaves the queue unsent,
 * and a query in flight is aborted (the resolver is given an AbortSignal; the built-in one closes its socket and
 * clears its timers). Either rejects at once with a WithdrawnError. The slot of a query in flight is given back
 * when the resolver lets go of it, so a resolver that ignores the signal still counts against the cap.
 */
import { WithdrawnError, type Interest } from './interest.js';

interface Waiting {
  readonly interest: Interest;
  readonly start: () => void;
  readonly reject: (error: Error) => void;
}

interface Running {
  readonly interest: Interest;
  readonly controller: AbortController;
  readonly reject: (error: Error) => void;
}

export class QueryLimit {
  private inFlight = 0;
  private waiting: Waiting[] = [];
  private readonly running = new Set<Running>();

  constructor(private readonly max: number) {}

  /** Runs `query` when a slot is free, unless its interest is withdrawn first. */
  run<T>(interest: Interest, query: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (interest.withdrawn) return Promise.reject(new WithdrawnError());
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        const running: Running = { interest, controller: new AbortController(), reject };
        this.running.add(running);
        let sent: Promise<T>;
        try {
          sent = query(running.controller.signal);
        } catch (error) {
          sent = Promise.reject(error);
        }
        sent.then(resolve, reject).finally(() => {
          this.running.delete(running);
          this.release();
        });
      };
      if (this.inFlight < this.max) {
        this.inFlight++;
        start();
      } else {
        this.waiting.push({ interest, start, reject });
      }
    });
  }

  /** Drops the waiting queries nobody wants any more and aborts those in flight. */
  withdraw(): void {
    if (this.waiting.length > 0) {
      const kept: Waiting[] = [];
      for (const entry of this.waiting) {
        if (entry.interest.withdrawn) entry.reject(new WithdrawnError());
        else kept.push(entry);
      }
      this.waiting = kept;
    }
    for (const running of this.running) {
      if (!running.interest.withdrawn || running.controller.signal.aborted) continue;
      running.reject(new WithdrawnError());
      running.controller.abort();
    }
  }

  /** The slot passes straight to the next query waiting, if any. */
  private release(): void {
    const next = this.waiting.shift();
    if (next === undefined) this.inFlight--;
    else next.start();
  }
}
