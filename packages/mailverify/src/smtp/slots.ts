/**
 * Connection slots: a global cap, a per-exchanger-address cap and a per-egress cap on open SMTP connections
 * (docs/verification.md#safety-defaults), and the choice of the egress each connection leaves by.
 *
 * A slot is held from before the connection opens until it is closed. Waiters are served by priority (the higher
 * first, asked again each time a slot frees, since the work behind a waiter can change), then in arrival order; a
 * waiter whose exchanger is at its cap, or none of whose egresses has room, is passed over for the next one. A slot
 * goes out by the usable egress with the fewest open connections (ties: the order the egresses were given).
 */
export interface SlotLimits {
  /** Open connections in all (default 50). */
  maxConnections: number;
  /** Open connections to one exchanger address (default 3). */
  maxConnectionsPerExchanger: number;
}

/** An egress as the slots count it. */
export interface EgressLimit {
  readonly id: string;
  /** Connections open through it at once. */
  readonly maxConnections: number;
}

/** Which egresses a waiter may use, read each time slots are handed out (cooling and budgets change). */
export interface EgressChoice {
  /** The ids it may leave by now, in the order given (default: all). */
  readonly usable?: () => readonly string[];
  /** Connections through one egress for this group of exchangers (a provider) at once. */
  readonly group?: { readonly id: string; readonly maxPerEgress: number };
}

export interface Slot {
  /** The egress the connection leaves by. */
  readonly egress: string;
  /** Gives the slot back, once the connection is closed (or was never opened). Later calls do nothing. */
  release(): void;
}

interface Waiter {
  readonly key: string;
  readonly priority: () => number;
  readonly choice: EgressChoice;
  readonly grant: (slot: Slot | null) => void;
}

/** Without egresses of its own, the slots have the one implicit egress, as the verifier does. */
const IMPLICIT_EGRESS: readonly EgressLimit[] = [{ id: 'default', maxConnections: Infinity }];

export class ConnectionSlots {
  private open = 0;
  private readonly openByKey = new Map<string, number>();
  /** Open connections by egress, and by egress and group (`<group> <egress>`). */
  private readonly openByEgress = new Map<string, number>();
  private readonly openByGroup = new Map<string, number>();
  private readonly egresses: readonly EgressLimit[];
  private readonly egressIds: readonly string[];
  private waiters: Waiter[] = [];
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly limits: SlotLimits,
    egresses: readonly EgressLimit[] = IMPLICIT_EGRESS,
  ) {
    this.egresses = egresses.length === 0 ? IMPLICIT_EGRESS : egresses;
    this.egressIds = this.egresses.map((egress) => egress.id);
  }

  /**
   * A slot for the exchanger address `key`, when the caps allow and one of the waiter's egresses has room;
   * `priority` and `choice.usable` are read whenever slots are handed out. Null when `choice.usable` names no egress
   * at all: nothing may go out for that work now (its egresses cool), and waiting for a slot would not change it.
   */
  acquire(key: string, priority: () => number = () => 0, choice: EgressChoice = {}): Promise<Slot | null> {
    return new Promise((grant) => {
      this.waiters.push({ key, priority, choice, grant });
      this.serveWaiters();
    });
  }

  /** Hands out slots again: what a waiter may use has changed (a cooling ended, a budget refilled). */
  wake(): void {
    this.serveWaiters();
  }

  /** Connections open through one egress now. */
  openThrough(egress: string): number {
    return this.openByEgress.get(egress) ?? 0;
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
      let bestEgress: string | null = null;
      for (let i = 0; i < this.waiters.length; i++) {
        const waiter = this.waiters[i]!;
        if ((this.openByKey.get(waiter.key) ?? 0) >= this.limits.maxConnectionsPerExchanger) continue;
        const priority = waiter.priority();
        // Strictly higher: among equals the earliest waiter keeps its turn.
        if (priority <= bestPriority) continue;
        const usable = waiter.choice.usable?.() ?? this.egressIds;
        if (usable.length === 0) {
          this.waiters.splice(i--, 1);
          waiter.grant(null);
          continue;
        }
        const egress = this.freestEgress(waiter.choice, usable);
        if (egress === null) continue;
        best = i;
        bestPriority = priority;
        bestEgress = egress;
      }
      if (best < 0) return;
      const [waiter] = this.waiters.splice(best, 1);
      const group = waiter!.choice.group?.id;
      this.open++;
      add(this.openByKey, waiter!.key, 1);
      add(this.openByEgress, bestEgress!, 1);
      if (group !== undefined) add(this.openByGroup, `${group} ${bestEgress}`, 1);
      waiter!.grant(this.slot(waiter!.key, bestEgress!, group));
    }
  }

  /** The usable egress with room and the fewest open connections; the first given among equals. Null: none has room. */
  private freestEgress(choice: EgressChoice, usable: readonly string[]): string | null {
    let freest: string | null = null;
    let fewest = Infinity;
    for (const egress of this.egresses) {
      if (!usable.includes(egress.id)) continue;
      const open = this.openByEgress.get(egress.id) ?? 0;
      if (open >= egress.maxConnections || open >= fewest) continue;
      if (choice.group !== undefined && (this.openByGroup.get(`${choice.group.id} ${egress.id}`) ?? 0) >= choice.group.maxPerEgress) continue;
      freest = egress.id;
      fewest = open;
    }
    return freest;
  }

  private slot(key: string, egress: string, group: string | undefined): Slot {
    let released = false;
    return {
      egress,
      release: () => {
        if (released) return;
        released = true;
        this.open--;
        add(this.openByKey, key, -1);
        add(this.openByEgress, egress, -1);
        if (group !== undefined) add(this.openByGroup, `${group} ${egress}`, -1);
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

/** Adds to a count, dropping it at zero (the maps hold only what is open). */
function add(counts: Map<string, number>, key: string, by: number): void {
  const count = (counts.get(key) ?? 0) + by;
  if (count <= 0) counts.delete(key);
  else counts.set(key, count);
}
