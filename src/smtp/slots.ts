/**
 * Connection slots: a global cap and a per-exchanger cap on open SMTP connections (decisions.md §11), and the reuse
 * of a connection by the next piece of work waiting for the same exchanger (decisions.md §6).
 *
 * A slot is held from before the connection opens until it is closed. When work finishes with a live session and
 * more work waits for the same exchanger, the session and its slot pass to that work directly; otherwise the session
 * is ended with QUIT and, once it is closed, the slot goes to whoever waits first.
 */
import type { SmtpSession } from './transport.js';

export interface SlotLimits {
  /** Open connections in all (default 50). */
  maxConnections: number;
  /** Open connections to one exchanger address (default 3). */
  maxConnectionsPerExchanger: number;
}

export interface Lease {
  /** A live session handed over by earlier work on the same exchanger, or null: open one. */
  readonly session: SmtpSession | null;
  /**
   * Gives the slot back with the session it holds (null: closed or never opened). A live session goes to work
   * waiting for the same exchanger, or is ended with QUIT; the slot is free once the connection is closed.
   */
  release(session: SmtpSession | null): void;
}

interface Waiter {
  readonly key: string;
  /** Wants a connection of its own: never handed a session that earlier work used. */
  readonly fresh: boolean;
  readonly grant: (lease: Lease) => void;
}

export class ConnectionSlots {
  private open = 0;
  private readonly openByKey = new Map<string, number>();
  private readonly waiters: Waiter[] = [];
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly limits: SlotLimits) {}

  /**
   * A slot for the exchanger `key`, when the caps allow; waiters are served in arrival order. With `fresh`, the lease
   * never carries a session that earlier work used.
   */
  acquire(key: string, options: { fresh?: boolean } = {}): Promise<Lease> {
    return new Promise((grant) => {
      this.waiters.push({ key, fresh: options.fresh === true, grant });
      this.serveWaiters();
    });
  }

  /** Connections open now (for tests and statistics). */
  get openConnections(): number {
    return this.open;
  }

  /** Resolves when no connection is open and nobody waits for one. */
  idle(): Promise<void> {
    if (this.open === 0 && this.waiters.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private serveWaiters(): void {
    for (let i = 0; i < this.waiters.length && this.open < this.limits.maxConnections; ) {
      const waiter = this.waiters[i]!;
      if ((this.openByKey.get(waiter.key) ?? 0) >= this.limits.maxConnectionsPerExchanger) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      this.open++;
      this.openByKey.set(waiter.key, (this.openByKey.get(waiter.key) ?? 0) + 1);
      waiter.grant(this.lease(waiter.key, null));
    }
  }

  private free(key: string): void {
    this.open--;
    const count = (this.openByKey.get(key) ?? 1) - 1;
    if (count === 0) this.openByKey.delete(key);
    else this.openByKey.set(key, count);
    this.serveWaiters();
    if (this.open === 0 && this.waiters.length === 0) {
      const idle = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of idle) resolve();
    }
  }

  private lease(key: string, session: SmtpSession | null): Lease {
    let released = false;
    return {
      session,
      release: (live) => {
        if (released) return;
        released = true;
        if (live === null || live.closed) return this.free(key);
        const next = this.waiters.findIndex((w) => w.key === key && !w.fresh);
        if (next >= 0) {
          const [waiter] = this.waiters.splice(next, 1);
          return waiter!.grant(this.lease(key, live));
        }
        // quit() never rejects (transport contract).
        void live.quit().then(() => this.free(key));
      },
    };
  }
}
