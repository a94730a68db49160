// A real Redis for the cluster suite (MAILVERIFY_TEST_REDIS_URL, default redis://127.0.0.1:6379): each test file gets
// clients on a key prefix of its own, and deletes every key under it at the end.
import { randomBytes } from 'node:crypto';
import { closeRedis, openRedis, type Redis } from '../../packages/server/src/cluster/redis.js';

export const REDIS_URL = process.env['MAILVERIFY_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

export interface TestRedis {
  /** A prefix no other run uses (and the start of prefixes of its own: `<prefix>-<name>`). */
  readonly prefix: string;
  /** A new client (another "process" of the cluster); closed by `close`. */
  client(): Promise<Redis>;
  /** The keys under the prefix now, sorted. */
  keys(): Promise<string[]>;
  /** Deletes the prefix's keys and closes every client. */
  close(): Promise<void>;
}

export function testRedis(name: string): TestRedis {
  const prefix = `test-${name}-${randomBytes(6).toString('hex')}`;
  const clients: Redis[] = [];
  const client = async (): Promise<Redis> => {
    const redis = await openRedis(REDIS_URL);
    clients.push(redis);
    return redis;
  };
  const scan = async (pattern: string): Promise<string[]> => {
    const redis = clients[0] ?? (await client());
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return [...new Set(found)].sort();
  };
  const keys = (): Promise<string[]> => scan(`mailverify:${prefix}:*`);
  return {
    prefix,
    client,
    keys,
    async close() {
      // Prefixes made from this one (`<prefix>-…`) too, and the connection leases' keys (`semaphore:mailverify:…`).
      const left = [...(await scan(`mailverify:${prefix}*`)), ...(await scan(`semaphore:mailverify:${prefix}*`))];
      for (let at = 0; at < left.length; at += 1000) await clients[0]!.del(...left.slice(at, at + 1000));
      await Promise.all(clients.splice(0).map((redis) => closeRedis(redis)));
    },
  };
}

/** Waits (up to 10 s) for `condition` to hold, asking again every 20 ms. */
export async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting until ${what}`);
}
