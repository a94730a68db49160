// ConnectionSlots is a pure scheduling structure: caps, priority order, idle.
import { describe, expect, it } from 'vitest';
import { ConnectionSlots, type Slot } from '../../packages/mailverify/src/smtp/slots.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A slot that must be given (the waiter has a usable egress). */
async function acquire(slots: ConnectionSlots, ...args: Parameters<ConnectionSlots['acquire']>): Promise<Slot> {
  const slot = await slots.acquire(...args);
  if (slot === null) throw new Error('no slot was given');
  return slot;
}

describe('ConnectionSlots', () => {
  it('keeps to the per-exchanger cap and serves waiters in order', async () => {
    const slots = new ConnectionSlots({ maxConnections: 10, maxConnectionsPerExchanger: 2 });
    const granted: string[] = [];
    const held: Slot[] = [];
    for (const name of ['a', 'b', 'c']) void acquire(slots, 'mx1').then((slot) => (granted.push(name), held.push(slot)));
    await tick();
    expect(granted).toEqual(['a', 'b']);
    expect(slots.openConnections).toBe(2);
    expect(slots.waiting).toBe(1);
    held[0]!.release();
    await tick();
    expect(granted).toEqual(['a', 'b', 'c']);
    expect(slots.openConnections).toBe(2);
  });

  it('keeps to the global cap across exchangers, passing over a waiter whose exchanger is full', async () => {
    const slots = new ConnectionSlots({ maxConnections: 2, maxConnectionsPerExchanger: 1 });
    const granted: string[] = [];
    const held = new Map<string, Slot>();
    for (const [name, key] of [['first', 'mx1'], ['second', 'mx1'], ['third', 'mx2'], ['fourth', 'mx3']] as const) {
      void acquire(slots, key).then((slot) => (granted.push(name), held.set(name, slot)));
    }
    await tick();
    expect(granted).toEqual(['first', 'third']);
    held.get('third')!.release();
    await tick();
    // mx1 is still at its cap: the next waiter for another exchanger goes first.
    expect(granted).toEqual(['first', 'third', 'fourth']);
  });

  it('hands a free slot to the highest priority, read when the slot frees, then to the earliest', async () => {
    const slots = new ConnectionSlots({ maxConnections: 1, maxConnectionsPerExchanger: 1 });
    const first = await acquire(slots, 'mx0');
    const granted: string[] = [];
    const priorities = new Map([['low', 10], ['high', 200], ['mid', 127], ['mid-later', 127]]);
    for (const name of priorities.keys()) {
      void acquire(slots, `mx-${name}`, () => priorities.get(name)!).then((slot) => (granted.push(name), slot.release()));
    }
    priorities.set('low', 255); // the work behind a waiter changed while it waited
    first.release();
    await tick();
    expect(granted).toEqual(['low', 'high', 'mid', 'mid-later']);
  });

  it('releases once, and idle() waits for the last connection', async () => {
    const slots = new ConnectionSlots({ maxConnections: 2, maxConnectionsPerExchanger: 2 });
    const a = await acquire(slots, 'mx1');
    const b = await acquire(slots, 'mx1');
    let idle = false;
    void slots.idle().then(() => (idle = true));
    a.release();
    a.release();
    await tick();
    expect(slots.openConnections).toBe(1);
    expect(idle).toBe(false);
    b.release();
    await tick();
    expect(idle).toBe(true);
    expect(slots.openConnections).toBe(0);
  });

  it('sends each connection out by the usable egress with the fewest open ones, the first given among equals', async () => {
    const slots = new ConnectionSlots({ maxConnections: 10, maxConnectionsPerExchanger: 10 }, [
      { id: 'a', maxConnections: 2 },
      { id: 'b', maxConnections: 5 },
      { id: 'c', maxConnections: 5 },
    ]);
    const taken: Slot[] = [];
    for (let i = 0; i < 4; i++) taken.push(await acquire(slots, `mx${i}`));
    expect(taken.map((slot) => slot.egress)).toEqual(['a', 'b', 'c', 'a']);
    // 'a' is at its cap of 2: the next goes by the freest of the others.
    taken.push(await acquire(slots, 'mx4'));
    expect(taken[4]!.egress).toBe('b');
    expect([slots.openThrough('a'), slots.openThrough('b'), slots.openThrough('c')]).toEqual([2, 2, 1]);
    taken[0]!.release();
    expect((await acquire(slots, 'mx5')).egress).toBe('a');
  });

  it('passes over a waiter whose usable egresses are full, serves it when woken, and gives null when none is usable', async () => {
    const slots = new ConnectionSlots({ maxConnections: 10, maxConnectionsPerExchanger: 10 }, [
      { id: 'a', maxConnections: 1 },
      { id: 'b', maxConnections: 10 },
    ]);
    const held = await acquire(slots, 'mx0', () => 0, { usable: () => ['a'] });
    let usable = ['a'];
    const granted: string[] = [];
    void acquire(slots, 'mx1', () => 200, { usable: () => usable }).then((slot) => granted.push(`first:${slot.egress}`));
    void acquire(slots, 'mx2', () => 0, { usable: () => ['b'] }).then((slot) => granted.push(`second:${slot.egress}`));
    await tick();
    expect(granted).toEqual(['second:b']);
    usable = ['b'];
    await tick();
    expect(granted).toEqual(['second:b']);
    slots.wake();
    await tick();
    expect(granted).toEqual(['second:b', 'first:b']);
    expect(await slots.acquire('mx3', () => 0, { usable: () => [] })).toBeNull();
    expect(slots.waiting).toBe(0);
    held.release();
  });

  it('caps the connections of one group (a provider) per egress', async () => {
    const slots = new ConnectionSlots({ maxConnections: 10, maxConnectionsPerExchanger: 10 }, [
      { id: 'a', maxConnections: 10 },
      { id: 'b', maxConnections: 10 },
    ]);
    const group = { id: 'google', maxPerEgress: 1 };
    const first = await acquire(slots, 'mx1', () => 0, { group });
    const second = await acquire(slots, 'mx2', () => 0, { group });
    expect([first.egress, second.egress]).toEqual(['a', 'b']);
    let third: Slot | null = null;
    void acquire(slots, 'mx3', () => 0, { group }).then((slot) => (third = slot));
    // Another provider is not held up by this one's cap.
    expect((await acquire(slots, 'mx4', () => 0, { group: { id: 'other', maxPerEgress: 1 } })).egress).toBe('a');
    await tick();
    expect(third).toBeNull();
    second.release();
    await tick();
    expect(third!.egress).toBe('b');
  });
});
