// The cluster's recipient ledger on a real Redis: two "processes" (two clients, two ledgers) share one budget per
// egress × provider: the minute's limit across both, what a round gives back is free again, and peek says what a
// process last learned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRecipientLedger } from '../../packages/server/src/cluster/budget.js';
import type { Redis } from '../../packages/server/src/cluster/redis.js';
import { testRedis, type TestRedis } from './redis-helpers.js';

let redis: TestRedis;
let reader: Redis;
let first: RedisRecipientLedger;
let second: RedisRecipientLedger;

beforeAll(async () => {
  redis = testRedis('budget');
  first = new RedisRecipientLedger(await redis.client(), `mailverify:${redis.prefix}:`);
  second = new RedisRecipientLedger(await redis.client(), `mailverify:${redis.prefix}:`);
  reader = await redis.client();
});

/** The times of the RCPTs in a pair's minute window, as Redis holds them. */
async function minuteTimes(egress: string, provider: string): Promise<number[]> {
  const flat = await reader.zrange(`mailverify:${redis.prefix}:budget:${egress}:${provider}:minute`, 0, -1, 'WITHSCORES');
  return flat.filter((_, i) => i % 2 === 1).map(Number);
}

afterAll(() => redis?.close());

describe('RedisRecipientLedger', () => {
  it('grants a minute limit once across processes, takes back what was not sent, and waits out the window', async () => {
    const limits = { perMinute: 5 };
    expect(await first.take('egress-a', 'gmail', 3, limits)).toMatchObject({ granted: 3, retryInMs: 0, daySpent: false });
    expect(await second.take('egress-a', 'gmail', 3, limits)).toMatchObject({ granted: 2, retryInMs: 0, daySpent: false });
    const refused = await first.take('egress-a', 'gmail', 1, limits);
    expect(refused.granted).toBe(0);
    expect(refused.retryInMs).toBeGreaterThan(55_000);
    expect(refused.retryInMs).toBeLessThanOrEqual(60_000);
    expect(first.peek('egress-a', 'gmail', limits).retryInMs).toBeGreaterThan(55_000);
    // Another egress, or another provider, has a budget of its own.
    expect((await first.take('egress-b', 'gmail', 5, limits)).granted).toBe(5);
    expect((await first.take('egress-a', 'yahoo', 5, limits)).granted).toBe(5);
    // Two not sent after all: free again, for either process.
    await second.giveBack('egress-a', 'gmail', 2, limits);
    expect(second.peek('egress-a', 'gmail', limits).retryInMs).toBe(0);
    expect((await first.take('egress-a', 'gmail', 4, limits)).granted).toBe(2);
  });

  it("a round's RCPTs count from when its replies are in (restamp); giving back takes the grant's own", async () => {
    const limits = { perMinute: 10 };
    const early = await first.take('egress-a', 'outlook', 3, limits);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const late = await second.take('egress-a', 'outlook', 3, limits);
    expect(late.at! - early.at!).toBeGreaterThanOrEqual(15);
    // The early grant gives one back: one of its own goes, not one of the later grant's.
    await first.giveBack('egress-a', 'outlook', 1, limits, early);
    expect((await minuteTimes('egress-a', 'outlook')).filter((at) => at === early.at)).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Its round is over: its two RCPTs count from now, after the later grant's.
    await first.restamp('egress-a', 'outlook', 2, limits, early);
    const times = await minuteTimes('egress-a', 'outlook');
    expect(times).toHaveLength(5);
    expect(times.filter((at) => at === early.at)).toHaveLength(0);
    expect(Math.min(...times.filter((at) => at !== late.at))).toBeGreaterThan(late.at!);
  });

  it('a day budget spent by one process is spent for the other', async () => {
    const limits = { perDay: 4 };
    expect((await first.take('egress-a', 'icloud', 3, limits)).granted).toBe(3);
    expect(await second.take('egress-a', 'icloud', 3, limits)).toMatchObject({ granted: 1, retryInMs: 0, daySpent: false });
    expect(second.peek('egress-a', 'icloud', limits).daySpent).toBe(true);
    expect(await first.take('egress-a', 'icloud', 1, limits)).toEqual({ granted: 0, retryInMs: 0, daySpent: true });
    // No limits: everything, without a word to Redis.
    expect(await first.take('egress-a', 'icloud', 7, {})).toEqual({ granted: 7, retryInMs: 0, daySpent: false });
  });
});
