/**
 * What the Redis-backed counters share: the client type (a type import only, so that nothing loads ioredis until a
 * cluster opens a connection), the key prefix, and Lua scripts run by their SHA-1 with a fallback to the full text
 * when Redis does not know them (after a restart, `SCRIPT FLUSH` or `FLUSHALL`).
 *
 * The client is ioredis, the one BullMQ uses, so that the queue and the counters can share connection settings.
 */
import { createHash } from 'node:crypto';
import type { Redis, RedisOptions } from 'ioredis';

export type { Redis } from 'ioredis';

export interface RedisCounterOptions {
  /** A connected ioredis client; the caller closes it (`quit()`) when done. */
  readonly redis: Redis;
  /**
   * Keys are named `mailverify:<prefix>:…` (default prefix `default`), so that several clusters or test runs can
   * share one Redis without seeing each other's counts. Processes of one cluster give the same prefix.
   */
  readonly prefix?: string;
}

/** `mailverify:<prefix>:`, the start of every key of these counters. */
export function keyPrefix(prefix = 'default'): string {
  if (prefix === '' || /[\s{}]/.test(prefix)) throw new TypeError('mailverify: a Redis key prefix must be non-empty, without spaces or braces');
  return `mailverify:${prefix}:`;
}

/**
 * Opens an ioredis client for `url` (`redis://[user:password@]host:port[/db]`, or `rediss://` for TLS), loading ioredis
 * only now, and waits until it is ready. A connection that cannot be made rejects instead of retrying for ever.
 */
export async function openRedis(url: string, options: RedisOptions = {}): Promise<Redis> {
  const { Redis: Client } = await import('ioredis');
  const redis = new Client(url, { lazyConnect: true, connectionName: 'mailverify', ...options });
  // The first connection's error is the rejection below (the socket's own, such as ECONNREFUSED, rather than the
  // client's "Connection is closed"); later ones are the caller's to listen to ('error').
  let cause: unknown;
  const quiet = (error: unknown): void => {
    cause ??= error;
  };
  redis.on('error', quiet);
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw cause ?? error;
  } finally {
    redis.off('error', quiet);
  }
  return redis;
}

/** A Lua script, run atomically by Redis (no other command runs between its steps). */
export class RedisScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}

/** Closes `redis` gracefully (`QUIT`, after the commands already sent) and resolves once its socket is closed. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'wait') {
    // Never connected (lazyConnect): nothing to say goodbye to.
    redis.disconnect();
    return;
  }
  const ended = new Promise<void>((resolve) => redis.once('end', () => resolve()));
  try {
    await redis.quit();
  } catch {
    // The connection is broken already: dropped without a goodbye.
    redis.disconnect();
  }
  await ended;
}
