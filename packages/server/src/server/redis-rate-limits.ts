/**
 * The request rate limits' counts in Redis, shared by every server process of a cluster: the same GCRA arithmetic as
 * MemoryRateLimitStore (whole microseconds), in one Lua script per request so that two processes never both take a
 * bucket's last token.
 *
 * Keys (under `mailverify:<prefix>:`):
 * - `rate:<ip>`: the time at which the IP's bucket is full again, in microseconds since the epoch; it expires at that
 *   time, when a missing key means the same thing (a full bucket).
 * - `inflight:<ip>`: requests of the IP in flight under /v1.4; its expiry (5 minutes from the last request let in, an
 *   option) bounds what a process that died with requests in flight leaves counted.
 *
 * Times are the callers' (`now` of each process): the machines of a cluster keep their clocks in step (NTP); a
 * difference of some milliseconds moves a refill by as much.
 */
import { keyPrefix, RedisScript, type RedisCounterOptions } from '../cluster/redis.js';
import type { Bucket, RateLimitStore } from './rate-limits.js';

/** How long requests in flight stay counted after the last one was let in, when their process never says they ended. */
export const DEFAULT_IN_FLIGHT_EXPIRY_MS = 5 * 60_000;

export interface RedisRateLimitStoreOptions extends RedisCounterOptions {
  /** Milliseconds an IP's in-flight count is kept after its last request was let in (default 300,000). */
  readonly inFlightExpiryMs?: number;
}

// Numbers leave the scripts as strings: Redis would truncate a Lua number to an integer, and microseconds since the
// epoch are too many digits for Lua's default formatting.
const TAKE_TOKEN = new RedisScript(`
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local capacity = tonumber(ARGV[3])
local stored = redis.call('GET', KEYS[1])
local arrival = now
if stored then arrival = math.max(tonumber(stored), now) end
local tolerance = interval * (capacity - 1)
if arrival - now > tolerance then return string.format('%.0f', arrival - tolerance - now) end
local full = arrival + interval
redis.call('SET', KEYS[1], string.format('%.0f', full), 'PX', string.format('%.0f', math.max(1, math.ceil((full - now) / 1000))))
return '0'
`);

const ENTER = new RedisScript(`
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`);

const LEAVE = new RedisScript(`
local count = redis.call('DECR', KEYS[1])
if count <= 0 then redis.call('DEL', KEYS[1]) end
return count
`);

export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: RedisCounterOptions['redis'];
  private readonly prefix: string;
  private readonly inFlightExpiryMs: number;

  constructor(options: RedisRateLimitStoreOptions) {
    this.redis = options.redis;
    this.prefix = keyPrefix(options.prefix);
    this.inFlightExpiryMs = options.inFlightExpiryMs ?? DEFAULT_IN_FLIGHT_EXPIRY_MS;
    if (!Number.isSafeInteger(this.inFlightExpiryMs) || this.inFlightExpiryMs < 1) {
      throw new TypeError('mailverify: inFlightExpiryMs must be a whole number of milliseconds from 1');
    }
  }

  async takeToken(key: string, { intervalMs, capacity }: Bucket, nowMs: number): Promise<number> {
    const args = [Math.round(nowMs * 1000), Math.round(intervalMs * 1000), capacity];
    const waitMicros = await TAKE_TOKEN.run(this.redis, [`${this.prefix}rate:${key}`], args);
    return Number(waitMicros) / 1000;
  }

  async enter(key: string, max: number): Promise<boolean> {
    return (await ENTER.run(this.redis, [`${this.prefix}inflight:${key}`], [max, this.inFlightExpiryMs])) === 1;
  }

  async leave(key: string): Promise<void> {
    await LEAVE.run(this.redis, [`${this.prefix}inflight:${key}`], []);
  }
}
