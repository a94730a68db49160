// ConnectionSlots is a pure scheduling structure; the sessions here are plain objects that only record QUIT.
import { describe, expect, it } from 'vitest';
import { ConnectionSlots, type Lease } from '../../src/smtp/slots.js';
import type { SmtpSession } from '../../src/smtp/transport.js';

function session(): SmtpSession & { quits: number } {
  const s = {
    quits: 0,
    closed: false,
    async quit() {
      s.quits++;
      s.closed = true;
    },
  };
  return s as unknown as SmtpSession & { quits: number };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ConnectionSlots', () => {
  it('keeps to the per-exchanger cap and serves waiters in order', async () => {
    const slots = new ConnectionSlots({ maxConnections: 10, maxConnectionsPerExchanger: 2 });
    const granted: string[] = [];
    const leases: Lease[] = [];
    for (const name of ['a', 'b', 'c']) void slots.acquire('mx1').then((lease) => (granted.push(name), leases.push(lease)));
    await tick();
    expect(granted).toEqual(['a', 'b']);
    expect(slots.openConnections).toBe(2);
    leases[0]!.release(null);
    await tick();
    expect(granted).toEqual(['a', 'b', 'c']);
    expect(slots.openConnections).toBe(2);
  });

  it('keeps to the global cap across exchangers', async () => {
    const slots = new ConnectionSlots({ maxConnections: 2, maxConnectionsPerExchanger: 2 });
    const granted: string[] = [];
    const leases = new Map<string, Lease>();
    for (const key of ['mx1', 'mx2', 'mx3']) void slots.acquire(key).then((lease) => (granted.push(key), leases.set(key, lease)));
    await tick();
    expect(granted).toEqual(['mx1', 'mx2']);
    leases.get('mx2')!.release(null);
    await tick();
    expect(granted).toEqual(['mx1', 'mx2', 'mx3']);
  });

  it('hands a live session to the next work for the same exchanger, and ends it with QUIT otherwise', async () => {
    const slots = new ConnectionSlots({ maxConnections: 10, maxConnectionsPerExchanger: 1 });
    const first = await slots.acquire('mx1');
    expect(first.session).toBeNull();
    const next = slots.acquire('mx1');
    const live = session();
    first.release(live);
    const second = await next;
    expect(second.session).toBe(live);
    expect(live.quits).toBe(0);
    second.release(live);
    await slots.idle();
    expect(live.quits).toBe(1);
    expect(slots.openConnections).toBe(0);
  });

  it('never hands a used session to work that asked for a fresh connection', async () => {
    const slots = new ConnectionSlots({ maxConnections: 10, maxConnectionsPerExchanger: 1 });
    const first = await slots.acquire('mx1');
    const fresh = slots.acquire('mx1', { fresh: true });
    const live = session();
    first.release(live);
    const lease = await fresh;
    expect(lease.session).toBeNull();
    expect(live.quits).toBe(1);
    lease.release(null);
    await slots.idle();
  });

  it('releases once, and idle() waits for the last connection', async () => {
    const slots = new ConnectionSlots({ maxConnections: 1, maxConnectionsPerExchanger: 1 });
    const lease = await slots.acquire('mx1');
    let idle = false;
    void slots.idle().then(() => (idle = true));
    await tick();
    expect(idle).toBe(false);
    lease.release(null);
    lease.release(null);
    await tick();
    expect(idle).toBe(true);
    expect(slots.openConnections).toBe(0);
  });
});
