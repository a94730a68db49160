// The request rate limits' counts in a real Redis (RedisRateLimitStore): the same answers as the memory store on the
// same timeline, exact under concurrent takes from two clients (two server processes), shared by two listening
// servers, keys that expire once they say nothing a missing key does not, and no socket left after the clients close.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type Redis } from '../../packages/server/src/cluster/redis.js';
import { MemoryRateLimitStore, type Bucket } from '../../packages/server/src/server/rate-limits.js';
import { RedisRateLimitStore } from '../../packages/server/src/server/redis-rate-limits.js';
import { ManualClock } from '../jobs/manual-clock.js';
import { expectTooManyRequests, start } from '../server/http-client.js';
import { testRedis, until, type TestRedis } from './redis-helpers.js';

const BUCKET: Bucket = { intervalMs: 1000 / 6, capacity: 15 };
const T0 = Date.parse('2026-03-01T00:00:00.000Z');

let test: TestRedis;
let one: Redis;
let two: Redis;
let ips = 0;
const freshIp = (): string => `203.0.113.${++ips}`;

beforeAll(async () => {
  test = testRedis('rate');
  [one, two] = [await test.client(), await test.client()];
});

afterAll(async () => {
  await test?.close();
});

describe('a token bucket of 15 refilling 6 per second', () => {
  it('answers as the memory store does, token for token, on the same timeline', async () => {
    const memory = new MemoryRateLimitStore();
    const redis = new RedisRateLimitStore({ redis: one, prefix: test.prefix });
    const ip = freshIp();
    // A fixed walk of gaps: bursts, partial refills, fractions of a token, long idles.
    const gaps = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 50, 117, 1, 166, 167, 0, 0, 1000, 0, 0, 0, 0, 0, 0, 0, 333, 10_000, 0, 3, 7, 160];
    let now = T0;
    const seen: number[] = [];
    for (const gap of gaps) {
      now += gap;
      const expected = memory.takeToken(ip, BUCKET, now);
      expect(await redis.takeToken(ip, BUCKET, now)).toBe(expected);
      seen.push(expected);
    }
    // The walk does reach both answers, and a wait of a fraction of a millisecond.
    expect(seen.filter((wait) => wait === 0).length).toBeGreaterThan(15);
    expect(seen.some((wait) => wait > 0 && !Number.isInteger(wait))).toBe(true);
  });

  it('refills at 6 per second up to 15, on a clock moved by hand', async () => {
    const store = new RedisRateLimitStore({ redis: one, prefix: test.prefix });
    const ip = freshIp();
    let now = T0 + 1_000_000;
    for (let i = 0; i < 15; i++) expect(await store.takeToken(ip, BUCKET, now)).toBe(0);
    expect(await store.takeToken(ip, BUCKET, now)).toBeCloseTo(1000 / 6, 3);
    now += Math.ceil(1000 / 6);
    expect(await store.takeToken(ip, BUCKET, now)).toBe(0);
    expect(await store.takeToken(ip, BUCKET, now)).toBeGreaterThan(0);
    now += 60_000;
    let granted = 0;
    for (let i = 0; i < 20; i++) if ((await store.takeToken(ip, BUCKET, now)) === 0) granted++;
    expect(granted).toBe(15);
  });

  it('50 concurrent takes through two clients sharing a prefix: exactly 15 granted', async () => {
    const stores = [new RedisRateLimitStore({ redis: one, prefix: test.prefix }), new RedisRateLimitStore({ redis: two, prefix: test.prefix })];
    const ip = freshIp();
    const now = T0 + 2_000_000;
    const waits = await Promise.all(Array.from({ length: 50 }, (_, i) => stores[i % 2]!.takeToken(ip, BUCKET, now)));
    expect(waits.filter((wait) => wait === 0)).toHaveLength(15);
    expect(waits.filter((wait) => wait > 0)).toHaveLength(35);
  });

  it('another prefix is another cluster: it does not see these counts', async () => {
    const ip = freshIp();
    const now = T0 + 3_000_000;
    const mine = new RedisRateLimitStore({ redis: one, prefix: test.prefix });
    const other = new RedisRateLimitStore({ redis: one, prefix: `${test.prefix}-other` });
    for (let i = 0; i < 15; i++) await mine.takeToken(ip, BUCKET, now);
    expect(await mine.takeToken(ip, BUCKET, now)).toBeGreaterThan(0);
    expect(await other.takeToken(ip, BUCKET, now)).toBe(0);
    await one.del(`mailverify:${test.prefix}-other:rate:${ip}`);
  });

  it("a bucket's key expires when the bucket is full again", async () => {
    const store = new RedisRateLimitStore({ redis: one, prefix: test.prefix });
    const ip = freshIp();
    const key = `mailverify:${test.prefix}:rate:${ip}`;
    await store.takeToken(ip, BUCKET, Date.now());
    // Full again one interval later: the key lives no longer than that.
    const ttl = await one.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(167);
    await until(async () => (await one.exists(key)) === 0, 'the bucket key expires');
  });
});

describe('requests in flight', () => {
  it('20 concurrent entries through two clients with 5 allowed: exactly 5 counted; leaving frees places; the key goes at zero', async () => {
    const stores = [new RedisRateLimitStore({ redis: one, prefix: test.prefix }), new RedisRateLimitStore({ redis: two, prefix: test.prefix })];
    const ip = freshIp();
    const key = `mailverify:${test.prefix}:inflight:${ip}`;
    const entered = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.enter(ip, 5)));
    expect(entered.filter(Boolean)).toHaveLength(5);
    expect(await stores[1]!.enter(ip, 5)).toBe(false);
    await stores[0]!.leave(ip);
    expect(await stores[1]!.enter(ip, 5)).toBe(true);
    expect(await stores[0]!.enter(ip, 5)).toBe(false);
    const ttl = await one.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300_000);
    for (let i = 0; i < 5; i++) await stores[i % 2]!.leave(ip);
    expect(await one.exists(key)).toBe(0);
    // A stray leave (its count expired) leaves nothing behind and no negative count.
    await stores[0]!.leave(ip);
    expect(await one.exists(key)).toBe(0);
    expect(await stores[0]!.enter(ip, 1)).toBe(true);
    await stores[0]!.leave(ip);
  });

  it('a count left by a process that died expires', async () => {
    const store = new RedisRateLimitStore({ redis: one, prefix: test.prefix, inFlightExpiryMs: 200 });
    const ip = freshIp();
    expect(await store.enter(ip, 1)).toBe(true);
    expect(await store.enter(ip, 1)).toBe(false);
    await until(async () => store.enter(ip, 1), 'the in-flight count expires');
    await store.leave(ip);
  });
});

describe('two listening servers on one Redis', () => {
  it('share each IP bucket: 10 requests to one and 5 to the other use it up; the next to either is 429', async () => {
    const clock = new ManualClock(T0 + 4_000_000);
    const rateLimits = (redis: Redis) => ({ store: new RedisRateLimitStore({ redis, prefix: test.prefix }) });
    const a = await start({ clock, trustProxy: '127.0.0.1', rateLimits: rateLimits(one) });
    const b = await start({ clock, trustProxy: '127.0.0.1', rateLimits: rateLimits(two) });
    try {
      const ip = freshIp();
      for (let i = 0; i < 10; i++) expect((await a.call('GET', '/v2.7/email-validations', { auth: null, forwardedFor: ip })).status).toBe(401);
      for (let i = 0; i < 5; i++) expect((await b.call('GET', '/v2.7/email-validations', { auth: null, forwardedFor: ip })).status).toBe(401);
      expectTooManyRequests(await a.call('GET', '/v2.7/email-validations', { auth: null, forwardedFor: ip }));
      expectTooManyRequests(await b.call('GET', '/v2.7/email-validations', { auth: null, forwardedFor: ip }));
      clock.advance(1000);
      expect((await b.call('GET', '/v2.7/email-validations', { forwardedFor: ip })).status).toBe(200);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('closing', () => {
  it('a client closed leaves no socket open: its own stream ends and Redis no longer lists its connection', async () => {
    const own = testRedis('rate-close');
    const redis = await own.client();
    const store = new RedisRateLimitStore({ redis, prefix: own.prefix });
    await store.takeToken(freshIp(), BUCKET, Date.now());
    const id = await redis.client('ID');
    expect(String(await one.client('LIST', 'ID', id))).toContain(`id=${id} `);
    await own.close();
    expect(redis.status).toBe('end');
    expect(redis.stream.destroyed).toBe(true);
    await until(async () => String(await one.client('LIST', 'ID', id)) === '', 'Redis sees the connection closed');
  });

  it('an unreachable Redis: openRedis rejects at once instead of retrying for ever', async () => {
    await expect(openRedis('redis://127.0.0.1:1')).rejects.toThrow(/ECONNREFUSED|connect/i);
  });
});
