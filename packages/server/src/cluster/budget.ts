/**
 * The recipient budgets of provider profiles, cluster-wide: the RCPTs per egress × provider in any 60 s and any 24 h
 * counted in Redis by one Lua script per grant (atomic: two workers never both take the last place), with Redis's
 * clock. The minute's RCPTs are members of a sorted set scored by their time; the day's are counts in one-minute
 * buckets, as the in-process ledger keeps them (packages/mailverify/src/smtp/egress/budget.ts). `peek` answers from
 * what this process last learned (a hint for choosing an egress; `take` decides). While Redis cannot be reached, this
 * process's own ledger stands in, and that is told once.
 */
import { LocalRecipientLedger, pairKey, type Grant, type RateLimits, type RecipientLedger } from 'mailverify/internal';
import { RedisScript, type Redis } from './redis.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
/** Keys of a pair not used for this long go (a day's buckets and a little more). */
const KEY_TTL_MS = DAY_MS + 2 * MINUTE_MS;

// KEYS: minute (zset of RCPT times), day buckets (zset of bucket starts), day counts (hash), day total, sequence.
// ARGV: wanted, perMinute (-1: none), perDay (-1: none), key TTL.
// Returns: granted, wait (ms) when nothing was granted, day spent now (0/1), then for peek: day spent after the
// grant (0/1) and the wait until the minute has room after it (0: room); and the time the grant's RCPTs carry.
const TAKE = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wanted = tonumber(ARGV[1])
local perMinute = tonumber(ARGV[2])
local perDay = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local total = tonumber(redis.call('GET', KEYS[4]) or '0')
local horizon = now - ${DAY_MS} - ${MINUTE_MS}
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', horizon)
for _, bucket in ipairs(old) do
  total = total - tonumber(redis.call('HGET', KEYS[3], bucket) or '0')
  redis.call('HDEL', KEYS[3], bucket)
end
if #old > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', horizon) end
if total < 0 then total = 0 end
redis.call('SET', KEYS[4], total, 'PX', ttl)
if perDay >= 0 and total >= perDay then return {0, 0, 1, 1, 0, now} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ${MINUTE_MS})
local inMinute = redis.call('ZCARD', KEYS[1])
local granted = wanted
if perDay >= 0 then granted = math.min(granted, perDay - total) end
if perMinute >= 0 then granted = math.min(granted, perMinute - inMinute) end
if granted < 0 then granted = 0 end
local function roomIn()
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #oldest == 0 then return 1 end
  return math.max(1, tonumber(oldest[2]) + ${MINUTE_MS} - now)
end
if granted == 0 then
  local wait = roomIn()
  return {0, wait, 0, 0, wait, now}
end
if perMinute >= 0 then
  local last = redis.call('INCRBY', KEYS[5], granted)
  redis.call('PEXPIRE', KEYS[5], ttl)
  for i = 1, granted do redis.call('ZADD', KEYS[1], now, now .. ':' .. (last - granted + i)) end
  redis.call('PEXPIRE', KEYS[1], ttl)
end
local bucket = now - (now % ${MINUTE_MS})
redis.call('ZADD', KEYS[2], bucket, bucket)
redis.call('HINCRBY', KEYS[3], bucket, granted)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
total = total + granted
redis.call('SET', KEYS[4], total, 'PX', ttl)
local spent = 0
if perDay >= 0 and total >= perDay then spent = 1 end
local full = 0
if perMinute >= 0 and inMinute + granted >= perMinute then full = roomIn() end
return {granted, 0, 0, spent, full, now}
`);

// The same KEYS; ARGV: count, perMinute (-1: none), the grant's time (-1: the newest RCPTs). The grant's RCPTs of
// the minute, and the newest of the day, go.
const GIVE_BACK = new RedisScript(`
local count = tonumber(ARGV[1])
if tonumber(ARGV[2]) >= 0 then
  if tonumber(ARGV[3]) >= 0 then
    local own = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[3], ARGV[3], 'LIMIT', 0, count)
    if #own > 0 then redis.call('ZREM', KEYS[1], unpack(own)) end
  else
    redis.call('ZPOPMAX', KEYS[1], count)
  end
end
local total = tonumber(redis.call('GET', KEYS[4]) or '0')
local left = count
while left > 0 do
  local newest = redis.call('ZRANGE', KEYS[2], -1, -1)
  if #newest == 0 then break end
  local bucket = newest[1]
  local inBucket = tonumber(redis.call('HGET', KEYS[3], bucket) or '0')
  local taken = math.min(left, inBucket)
  left = left - taken
  total = total - taken
  if inBucket - taken <= 0 then
    redis.call('HDEL', KEYS[3], bucket)
    redis.call('ZREM', KEYS[2], bucket)
  else
    redis.call('HSET', KEYS[3], bucket, inBucket - taken)
  end
end
if total < 0 then total = 0 end
redis.call('SET', KEYS[4], total, 'KEEPTTL')
return total
`);

// KEYS: minute, sequence. ARGV: count, the grant's time, key TTL. Up to `count` of the grant's RCPTs count from now.
const RESTAMP = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local count = tonumber(ARGV[1])
local own = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[2], 'LIMIT', 0, count)
if #own > 0 then redis.call('ZREM', KEYS[1], unpack(own)) end
local last = redis.call('INCRBY', KEYS[2], count)
for i = 1, count do redis.call('ZADD', KEYS[1], now, now .. ':' .. (last - count + i)) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
return now
`);

/** What this process last learned of a pair, for `peek` (performance.now()'s clock). */
interface Known {
  daySpent: boolean;
  roomAt: number;
}

export class RedisRecipientLedger implements RecipientLedger {
  private readonly known = new Map<string, Known>();
  private readonly fallback = new LocalRecipientLedger();
  /** Grants the fallback made (Redis away): given back and restamped there. */
  private readonly fallbackGrants = new WeakSet<Grant>();
  private failing = false;

  /** `keyPrefix`: `mailverify:<prefix>:` (redis.ts); `onError` hears the first failure of a run of them. */
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  async take(egress: string, provider: string, wanted: number, limits: RateLimits): Promise<Grant> {
    if (limits.perMinute === undefined && limits.perDay === undefined) return { granted: wanted, retryInMs: 0, daySpent: false };
    let answer: number[];
    try {
      answer = (await TAKE.run(this.redis, this.keys(egress, provider), [wanted, limits.perMinute ?? -1, limits.perDay ?? -1, KEY_TTL_MS])) as number[];
      this.failing = false;
    } catch (error) {
      this.failed(error);
      const grant = await this.fallback.take(egress, provider, wanted, limits);
      this.fallbackGrants.add(grant);
      return grant;
    }
    const [granted = 0, retryInMs = 0, daySpent = 0, spentAfter = 0, roomIn = 0, at = 0] = answer;
    this.known.set(pairKey(egress, provider), { daySpent: spentAfter === 1, roomAt: roomIn > 0 ? performance.now() + roomIn : 0 });
    return { granted, retryInMs, daySpent: daySpent === 1, ...(granted > 0 && { at }) };
  }

  async giveBack(egress: string, provider: string, count: number, limits: RateLimits, grant?: Grant): Promise<void> {
    if (count <= 0 || (limits.perMinute === undefined && limits.perDay === undefined)) return;
    if (grant !== undefined && this.fallbackGrants.has(grant)) return this.fallback.giveBack(egress, provider, count, limits, grant);
    const known = this.known.get(pairKey(egress, provider));
    if (known !== undefined) known.roomAt = 0;
    try {
      await GIVE_BACK.run(this.redis, this.keys(egress, provider), [count, limits.perMinute ?? -1, grant?.at ?? -1]);
    } catch (error) {
      this.failed(error);
    }
  }

  async restamp(egress: string, provider: string, count: number, limits: RateLimits, grant: Grant): Promise<void> {
    if (count <= 0 || limits.perMinute === undefined || grant.at === undefined) return;
    if (this.fallbackGrants.has(grant)) return this.fallback.restamp(egress, provider, count, limits, grant);
    const [minute, , , , sequence] = this.keys(egress, provider);
    try {
      await RESTAMP.run(this.redis, [minute!, sequence!], [count, grant.at, KEY_TTL_MS]);
    } catch (error) {
      this.failed(error);
    }
  }

  peek(egress: string, provider: string, limits: RateLimits): { readonly daySpent: boolean; readonly retryInMs: number } {
    if (this.failing) return this.fallback.peek(egress, provider, limits);
    const known = this.known.get(pairKey(egress, provider));
    if (known === undefined) return { daySpent: false, retryInMs: 0 };
    const wait = known.roomAt - performance.now();
    return { daySpent: limits.perDay !== undefined && known.daySpent, retryInMs: wait > 0 ? Math.ceil(wait) : 0 };
  }

  private keys(egress: string, provider: string): string[] {
    const base = `${this.keyPrefix}budget:${egress}:${provider}:`;
    return [`${base}minute`, `${base}buckets`, `${base}counts`, `${base}total`, `${base}seq`];
  }

  private failed(error: unknown): void {
    if (!this.failing) this.onError(error);
    this.failing = true;
  }
}
