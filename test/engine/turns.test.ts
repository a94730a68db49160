// nextTurn: pieces of work that yield share the event loop's turns, one slice per turn, with I/O read in between.
import { once } from 'node:events';
import { createServer, connect, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { nextTurn } from '../../packages/mailverify/src/engine/turns.js';

describe('nextTurn', () => {
  it('releases its callers in the order they asked, one per turn of the event loop', async () => {
    // An independent chain of immediates counts the turns: each turn runs one of its links.
    let turn = 0;
    let counting = true;
    const tick = (): void => {
      turn++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const released: { worker: number; turn: number }[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, worker) => {
        for (let slice = 0; slice < 3; slice++) {
          await nextTurn();
          released.push({ worker, turn });
        }
      }),
    );
    counting = false;
    expect(released).toHaveLength(60);
    // No two slices in one turn.
    expect(new Set(released.map((r) => r.turn)).size).toBe(60);
    // First come, first served: the workers take the turns round after round.
    expect(released.slice(0, 20).map((r) => r.worker)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(released.slice(20, 40).map((r) => r.worker)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('lets a waiting socket be read after a slice or two, however many pieces of work are yielding', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const [accepted] = (await once(server, 'connection')) as [import('node:net').Socket];
    await once(client, 'connect');
    let slices = 0;
    let slicesBeforeData = -1;
    accepted.once('data', () => (slicesBeforeData = slices));
    // The byte is in the server's socket before any slice runs; fifty workers then yield ten times each.
    client.write('x');
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        for (let i = 0; i < 10; i++) {
          await nextTurn();
          slices++;
        }
      }),
    );
    client.destroy();
    accepted.destroy();
    server.close();
    await once(server, 'close');
    expect(slicesBeforeData).toBeGreaterThanOrEqual(0);
    // With a setImmediate each, the first turn would run all fifty slices before the poll phase read the byte.
    expect(slicesBeforeData).toBeLessThan(5);
  });
});
