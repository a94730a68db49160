/**
 * Who still wants a piece of network work. Work shared by several parties (a domain's resolution shared by batches,
 * a query shared by resolutions) is withdrawn only once every party that asked for it has been; a party that joins
 * later brings it back (docs/verification.md#batches: an aborted batch leaves nothing queued).
 */
export interface Interest {
  readonly withdrawn: boolean;
}

/** The interest of a caller that never withdraws (a lookup made outside a batch). */
export const LASTING: Interest = { withdrawn: false };

/** The interest of the parties sharing one piece of work: withdrawn while every one of them is. */
export class SharedInterest implements Interest {
  private readonly parties = new Set<Interest>();

  constructor(first: Interest) {
    this.parties.add(first);
  }

  join(party: Interest): void {
    this.parties.add(party);
  }

  get withdrawn(): boolean {
    for (const party of this.parties) if (!party.withdrawn) return false;
    return true;
  }
}

/** The work was withdrawn before it was done: nobody waits for its result. */
export class WithdrawnError extends Error {
  override readonly name = 'WithdrawnError';
  constructor() {
    super('withdrawn: nobody waits for this work any more');
  }
}
