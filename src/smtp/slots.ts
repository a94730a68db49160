/**
 * Connection slots: a global cap and a per-exchanger-address cap on open SMTP connections
 * (docs/verification.md#safety-defaults).
 *
 * A slot is held from before the connection opens until it is closed. Waiters are served by priority (the higher
 * first, asked again each time a slot frees, since the work behind a waiter can change), then in arrival order; a
 * waiter whose exchanger is at its cap is passed over for the next one.
 */
export interface SlotLimits {
  /** Open connections in all (default 50). */
  maxConnections: number;
  /** Open connections to one exchanger address (default 3). */
  maxConnectionsPerExchanger: number;
}

export interface Slot {
  /** Gives the slot back, once the connection is closed (or was never opened). Later calls do nothing. */
  release(): void;
}

interface Waiter {
  readonly key: string;
  readonly priority: () => number;
  readonly grant: (slot: Slot) => void;
}

export class ConnectionSlots {
  private open = 0;
  private readonly openByKey = new Map<string, number>();
  private waiters: Waiter[] = [];
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly limits: SlotLimits) {}

  /** A slot for the exchanger address `key`, when the caps allow; `priority` is read whenever slots are handed out. */
  acquire(key: string, priority: () => number = () => 0): Promise<Slot> {
    return new Promise((grant) => {
      this.waiters.push({ key, priority, grant });
      this.serveWaiters();
    });
  }

  /** Connections open now (for tests and statistics). */
  get openConnections(): number {
    return this.open;
  }

  /** Slots asked for and not yet given. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Resolves when no connection is open and nobody waits for one. */
  idle(): Promise<void> {
    if (this.open === 0 && this.waiters.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private serveWaiters(): void {
    while (this.open < this.limits.maxConnections && this.waiters.length > 0) {
      let best = -1;
      let bestPriority = -Infinity;
      for (let i = 0; i < this.waiters.length; i++) {
        const waiter = this.waiters[i]!;
        if ((this.openByKey.get(waiter.key) ?? 0) >= this.limits.maxConnectionsPerExchanger) continue;
        const priority = waiter.priority();
        // Strictly higher: among equals the earliest waiter keeps its turn.
        if (priority > bestPriority) {
          best = i;
          bestPriority = priority;
        }
      }
      if (best < 0) return;
      const [waiter] = this.waiters.splice(best, 1);
      this.open++;
      this.openByKey.set(waiter!.key, (this.openByKey.get(waiter!.key) ?? 0) + 1);
      waiter!.grant(this.slot(waiter!.key));
    }
  }

  private slot(key: string): Slot {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.open--;
        const count = (this.openByKey.get(key) ?? 1) - 1;
        if (count === 0) this.openByKey.delete(key);
        else this.openByKey.set(key, count);
        this.serveWaiters();
        this.checkIdle();
      },
    };
  }

  private checkIdle(): void {
    if (this.open !== 0 || this.waiters.length !== 0) return;
    const idle = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of idle) resolve();
  }
}
