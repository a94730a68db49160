// The account protection counters in a real Redis: throttling windows, failed sign-ins (places reserved before each
// check), wrong TOTP codes per user and per first-factor token, accepted TOTP steps and used CAPTCHA tokens. Each gives the memory counterpart's answers on the
// same timeline, is exact under concurrent calls from two clients (two server processes), lets each client see the
// other's counts, and keeps its keys only as long as they can change an answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsedTokens } from '../../packages/server/src/accounts/captcha.js';
import {
  RESERVED_PLACE_LIFE_MS,
  RedisCaptchaTokens,
  RedisFirstFactorAttempts,
  RedisSignInLimits,
  RedisThrottle,
  RedisTotpFailures,
  RedisTotpSteps,
} from '../../packages/server/src/accounts/redis-counters.js';
import { SIGN_IN_WINDOW_MS, SignInLimiter, TOTP_FAILURE_LIMIT, TotpFailureLimiter, type Reservation } from '../../packages/server/src/accounts/sign-in-limits.js';
import { KEPT_SUBMISSIONS, Throttle, type ThrottleDecision } from '../../packages/server/src/accounts/throttling.js';
import { FirstFactorAttempts, MemoryTotpSteps, totpClaimExpiresAt, totpStep } from '../../packages/server/src/accounts/totp.js';
import type { ThrottlingRule } from '../../packages/server/src/accounts/types.js';
import type { Redis } from '../../packages/server/src/cluster/redis.js';
import { redisSharedCounters } from '../../packages/server/src/server/shared-counters.js';
import { expectTooManyRequests, start } from '../server/http-client.js';
import { testRedis, until, type TestRedis } from './redis-helpers.js';

let test: TestRedis;
let one: Redis;
let two: Redis;
let now = Date.parse('2026-03-01T00:00:00.000Z');
const clock = (): number => now;
let ids = 0;
const fresh = (what: string): string => `${what}-${++ids}`;

beforeAll(async () => {
  test = testRedis('counters');
  [one, two] = [await test.client(), await test.client()];
});

afterAll(async () => {
  await test?.close();
  // Every key of the file was under its prefix, and is gone.
  const check = testRedis('counters-check');
  const redis = await check.client();
  expect(await redis.keys(`mailverify:${test.prefix}:*`)).toEqual([]);
  await check.close();
});

const key = (rest: string): string => `mailverify:${test.prefix}:${rest}`;
const both = <T>(make: (redis: Redis) => T): [T, T] => [make(one), make(two)];

const summary = (decision: ThrottleDecision): string => (decision.admitted ? 'admitted' : `wait ${decision.retryAfterSeconds}`);

describe('throttling windows', () => {
  const RULES: ThrottlingRule[] = [
    { limit: 3, period: 'Minute', scope: 'Global' },
    { limit: 2, period: 'Minute', scope: 'IPAddress' },
    { limit: 5, period: 'Hour', scope: 'Global' },
  ];

  it('decide as the memory throttle does, on the same timeline, gives back included', async () => {
    const memory = new Throttle(clock);
    const [redis] = both((r) => new RedisThrottle({ redis: r, prefix: test.prefix, now: clock }));
    const user = fresh('user');
    const steps: Array<[number, string, boolean]> = [
      [0, '192.0.2.1', false], [1, '192.0.2.1', false], [1, '192.0.2.1', false], [1, '192.0.2.2', true], [1, '192.0.2.2', false],
      [5_000, '192.0.2.3', false], [60_000, '192.0.2.1', false], [10, '192.0.2.1', false], [10, '192.0.2.1', false],
      [30_000, '192.0.2.4', false], [3_600_000, '192.0.2.1', false], [0, '192.0.2.1', false],
    ];
    const seen: string[] = [];
    for (const [gap, ip, giveBack] of steps) {
      now += gap;
      const [expected, got] = [memory.take(user, ip, RULES), await redis.take(user, ip, RULES)];
      expect(summary(got)).toBe(summary(expected));
      seen.push(summary(expected));
      if (giveBack && expected.admitted && got.admitted) {
        expected.slot.giveBack();
        await got.slot.giveBack();
      }
    }
    expect(seen).toContain('admitted');
    expect(seen.some((answer) => answer.startsWith('wait'))).toBe(true);
  });

  it('50 concurrent submissions through two clients, 7 allowed per minute: exactly 7 admitted, seen by both', async () => {
    const throttles = both((r) => new RedisThrottle({ redis: r, prefix: test.prefix, now: clock }));
    const user = fresh('user');
    const rules: ThrottlingRule[] = [{ limit: 7, period: 'Minute', scope: 'Global' }];
    const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => throttles[i % 2]!.take(user, `198.51.100.${i}`, rules)));
    expect(decisions.filter((decision) => decision.admitted)).toHaveLength(7);
    // One given back on one client is a place on the other.
    const admitted = decisions.find((decision) => decision.admitted)!;
    if (admitted.admitted) await admitted.slot.giveBack();
    expect((await throttles[1].take(user, '198.51.100.1', rules)).admitted).toBe(true);
    expect((await throttles[0].take(user, '198.51.100.1', rules)).admitted).toBe(false);
  });

  it('keys live for a day, and a submission without rules is counted in them too', async () => {
    const throttle = new RedisThrottle({ redis: one, prefix: test.prefix, now: clock });
    const user = fresh('user');
    await throttle.take(user, '192.0.2.9', [{ limit: 1, period: 'Minute', scope: 'IPAddress' }]);
    const keys = [key(`throttle:{${user}}:`), key(`throttle:{${user}}:192.0.2.9`)];
    now += 60_000;
    expect((await throttle.take(user, '192.0.2.9', [])).admitted).toBe(true);
    for (const name of keys) {
      const ttl = await one.pttl(name);
      expect(ttl).toBeGreaterThan(60_000);
      expect(ttl).toBeLessThanOrEqual(86_400_000);
      expect(await one.zcard(name)).toBe(2);
    }
  });

  it('rules emptied and set again, a cap on what is kept: decide as the memory throttle does, gives back included', async () => {
    const memory = new Throttle(clock);
    const redis = new RedisThrottle({ redis: two, prefix: test.prefix, now: clock });
    const user = fresh('user');
    const decide = async (rules: ThrottlingRule[], ip = '192.0.2.30', giveBack = false): Promise<string> => {
      const [expected, got] = [memory.take(user, ip, rules), await redis.take(user, ip, rules)];
      expect(summary(got)).toBe(summary(expected));
      if (giveBack && expected.admitted && got.admitted) {
        expected.slot.giveBack();
        await got.slot.giveBack();
      }
      return summary(expected);
    };
    const daily = (limit: number): ThrottlingRule[] => [{ limit, period: 'Day', scope: 'Global' }];
    expect(await decide(daily(2))).toBe('admitted');
    expect(await decide([])).toBe('admitted');
    // Given back without rules: not counted.
    expect(await decide([], '192.0.2.31', true)).toBe('admitted');
    now += 3_600_000;
    expect(await decide(daily(2))).toMatch(/^wait /);
    expect(await decide(daily(3))).toBe('admitted');
    // Past the cap without rules: both keep the newest KEPT_SUBMISSIONS.
    for (let i = 0; i < KEPT_SUBMISSIONS; i++) {
      now += 1;
      await decide([]);
    }
    expect(await decide(daily(KEPT_SUBMISSIONS))).toMatch(/^wait /);
    expect(await decide(daily(KEPT_SUBMISSIONS + 1))).toBe('admitted');
    expect(await two.zcard(key(`throttle:{${user}}:`))).toBe(KEPT_SUBMISSIONS + 1);
  });
});

/** The Retry-After a reservation answers, 0 when it got a place (then given back). */
async function retryAfterOf(reservation: Reservation | Promise<Reservation>): Promise<number> {
  const settled = await reservation;
  if ('retryAfterSeconds' in settled) return settled.retryAfterSeconds;
  await settled.attempt.release();
  return 0;
}

/** A failure counted through a reservation (which must get a place). */
async function fail(reservation: Reservation | Promise<Reservation>): Promise<void> {
  const settled = await reservation;
  if (!('attempt' in settled)) throw new Error(`refused: Retry-After ${settled.retryAfterSeconds}`);
  await settled.attempt.failed();
}

describe('failed sign-ins', () => {
  it('block as the memory limiter does: the 11th attempt for a username, until the oldest failure is 15 minutes old', async () => {
    const memory = new SignInLimiter({ now: clock });
    const [redis, other] = both((r) => new RedisSignInLimits({ redis: r, prefix: test.prefix, now: clock }));
    const username = fresh('Jane');
    for (let i = 0; i < 10; i++) {
      expect(await retryAfterOf(redis.reserve(username, '192.0.2.20'))).toBe(memory.retryAfter(username, '192.0.2.20'));
      await fail(memory.reserve(username, '192.0.2.20'));
      await fail((i % 2 === 0 ? redis : other).reserve(username, '192.0.2.20'));
      now += 7_000;
    }
    // Blocked, whatever the case of the username, on both clients.
    const expected = memory.retryAfter(username, '192.0.2.20');
    expect(expected).toBeGreaterThan(0);
    expect(await retryAfterOf(redis.reserve(username.toUpperCase(), '192.0.2.21'))).toBe(memory.retryAfter(username.toUpperCase(), '192.0.2.21'));
    expect(await retryAfterOf(other.reserve(username, '192.0.2.20'))).toBe(expected);
    now += expected * 1000 - 1000;
    expect(await retryAfterOf(redis.reserve(username, '192.0.2.20'))).toBe(memory.retryAfter(username, '192.0.2.20'));
    now += 1000;
    expect(memory.retryAfter(username, '192.0.2.20')).toBe(0);
    expect(await retryAfterOf(redis.reserve(username, '192.0.2.20'))).toBe(0);
  });

  it('100 failures from one address block it; concurrent failures from two clients are all counted', async () => {
    const limits = both((r) => new RedisSignInLimits({ redis: r, prefix: test.prefix, now: clock }));
    const ip = '192.0.2.30';
    for (let round = 0; round < 2; round++) await Promise.all(Array.from({ length: 50 }, (_, i) => fail(limits[i % 2]!.reserve(fresh('someone'), ip))));
    expect(await retryAfterOf(limits[0].reserve(fresh('someone'), ip))).toBe(SIGN_IN_WINDOW_MS / 1000);
    expect(await one.zcard(key(`signin:ip:${ip}`))).toBe(100);
    const ttl = await one.pttl(key(`signin:ip:${ip}`));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(SIGN_IN_WINDOW_MS);
  });

  it('a guess takes its place before it is checked: of 60 concurrent reservations for one username from two clients, 10 get one', async () => {
    const limits = both((r) => new RedisSignInLimits({ redis: r, prefix: test.prefix, now: clock }));
    const username = fresh('kilo-desk');
    const reservations = await Promise.all(Array.from({ length: 60 }, (_, i) => limits[i % 2]!.reserve(username, `192.0.2.${40 + (i % 50)}`)));
    const placed = reservations.filter((r) => 'attempt' in r);
    expect(placed).toHaveLength(10);
    // Refused while the places are being checked: they settle at once.
    for (const refused of reservations.filter((r) => 'retryAfterSeconds' in r)) expect(refused).toEqual({ retryAfterSeconds: 1 });
    // A right password gives its place back; the wrong ones stay as failures.
    for (const [i, reservation] of placed.entries()) {
      if (!('attempt' in reservation)) continue;
      if (i === 0) await reservation.attempt.release();
      else await reservation.attempt.failed();
    }
    expect(await one.zcard(key(`signin:user:${username}`))).toBe(9);
    expect(await one.exists(key(`signin:checking:user:${username}`))).toBe(0);
    await fail(limits[1].reserve(username, '192.0.2.99'));
    expect(await retryAfterOf(limits[0].reserve(username, '192.0.2.98'))).toBe(SIGN_IN_WINDOW_MS / 1000);
  });

  it('a place never settled (its process died) stops counting after a minute', async () => {
    const [redis] = both((r) => new RedisSignInLimits({ redis: r, prefix: test.prefix, now: clock }));
    const username = fresh('lost');
    for (let i = 0; i < 10; i++) expect('attempt' in (await redis.reserve(username, '192.0.2.60'))).toBe(true);
    expect(await retryAfterOf(redis.reserve(username, '192.0.2.60'))).toBe(1);
    now += RESERVED_PLACE_LIFE_MS + 1;
    expect(await retryAfterOf(redis.reserve(username, '192.0.2.60'))).toBe(0);
    const ttl = await one.pttl(key(`signin:checking:user:${username}`));
    expect(ttl).toBeLessThanOrEqual(RESERVED_PLACE_LIFE_MS);
  });
  it('two listening servers share them: 10 failures split between them, the 11th on either is 429', async () => {
    const servers = await Promise.all([one, two].map((redis) => start({ sharedCounters: redisSharedCounters({ redis, prefix: test.prefix }) })));
    try {
      const username = fresh('nobody');
      for (let i = 0; i < 10; i++) {
        const answer = await servers[i % 2]!.call('POST', '/v2.7/auth/tokens', { auth: null, json: { username, password: 'wrong password' } });
        expect(answer.status).toBe(401);
      }
      for (const server of servers) {
        expectTooManyRequests(await server.call('POST', '/v2.7/auth/tokens', { auth: null, json: { username, password: 'wrong password' } }));
      }
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});

describe('wrong TOTP codes per user', () => {
  it('block the 11th code of a user for 15 minutes, across clients, as the memory limiter does', async () => {
    const memory = new TotpFailureLimiter({ now: clock });
    const [redis, other] = both((r) => new RedisTotpFailures({ redis: r, prefix: test.prefix, now: clock }));
    const user = fresh('user');
    const reservations = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? redis : other).reserve(user)));
    expect(reservations.filter((r) => 'attempt' in r)).toHaveLength(TOTP_FAILURE_LIMIT);
    for (const reservation of reservations) if ('attempt' in reservation) await reservation.attempt.failed();
    for (let i = 0; i < TOTP_FAILURE_LIMIT; i++) await fail(memory.reserve(user));
    expect(await retryAfterOf(other.reserve(user))).toBe(SIGN_IN_WINDOW_MS / 1000);
    expect(await retryAfterOf(memory.reserve(user))).toBe(SIGN_IN_WINDOW_MS / 1000);
    expect(await retryAfterOf(redis.reserve(fresh('user')))).toBe(0);
    now += SIGN_IN_WINDOW_MS;
    expect(await retryAfterOf(redis.reserve(user))).toBe(0);
    expect(await retryAfterOf(memory.reserve(user))).toBe(0);
  });
});

describe('wrong TOTP codes per first-factor token', () => {
  it('the fifth wrong code revokes the token, once, among concurrent ones from two clients; the key ends with the token', async () => {
    const [a, b] = both((r) => new RedisFirstFactorAttempts({ redis: r, prefix: test.prefix, now: clock }));
    const jti = fresh('jti');
    const expiresAt = now + 300_000;
    const revoked = await Promise.all(Array.from({ length: 5 }, (_, i) => (i % 2 === 0 ? a : b).recordWrongCode(jti, expiresAt)));
    expect(revoked.filter(Boolean)).toHaveLength(1);
    expect(await b.isRevoked(jti)).toBe(true);
    expect(await a.recordWrongCode(jti, expiresAt)).toBe(true);
    const ttl = await one.pttl(key(`totp:token:${jti}`));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300_000);
  });

  it('answer as the memory count does; a revoked token is revoked on the other client; an expired token is nothing', async () => {
    const memory = new FirstFactorAttempts({ now: clock });
    const [a, b] = both((r) => new RedisFirstFactorAttempts({ redis: r, prefix: test.prefix, now: clock }));
    const jti = fresh('jti');
    for (let i = 0; i < 4; i++) expect(await a.recordWrongCode(jti, now + 60_000)).toBe(memory.recordWrongCode(jti, now + 60_000));
    expect(await b.isRevoked(jti)).toBe(memory.isRevoked(jti));
    const done = fresh('jti');
    memory.revoke(done, now + 60_000);
    await a.revoke(done, now + 60_000);
    expect(await b.isRevoked(done)).toBe(memory.isRevoked(done));
    expect(await b.isRevoked(done)).toBe(true);
    const old = fresh('jti');
    await a.revoke(old, now - 1);
    expect(await b.isRevoked(old)).toBe(false);
    expect(await one.exists(key(`totp:token:${old}`))).toBe(0);
  });
});

describe('accepted TOTP steps', () => {
  it('20 concurrent claims of one step through two clients: exactly one wins; earlier steps lose, a later one wins', async () => {
    const [a, b] = both((r) => new RedisTotpSteps({ redis: r, prefix: test.prefix }));
    const memory = new MemoryTotpSteps(clock);
    const user = fresh('user');
    const step = totpStep(Date.now());
    const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).claim(user, step)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(memory.claim(user, step)).toBe(true);
    // The claim of step + 1 below sets the key's lifetime from the clock as it reads it then, no earlier than this.
    const beforeClaims = Date.now();
    for (const [s, expected] of [[step, false], [step - 1, false], [step + 1, true], [step + 1, false]] as const) {
      expect(await b.claim(user, s)).toBe(expected);
      expect(memory.claim(user, s)).toBe(expected);
    }
    // Kept until no code of that step could be accepted any more, and no longer.
    const ttl = await one.pttl(key(`totp:step:${user}`));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(totpClaimExpiresAt(step + 1) - beforeClaims);
  });
});

describe('used CAPTCHA tokens', () => {
  it('a token is checked by one client at a time, remembered 24 hours once accepted, free again when refused', async () => {
    const [a, b] = both((r) => new RedisCaptchaTokens({ redis: r, prefix: test.prefix }));
    const memory = new UsedTokens(100, Date.now);
    const token = fresh('token');
    const takes = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).take(token)));
    expect(takes.filter(Boolean)).toHaveLength(1);
    expect(memory.take(token)).toBe(true);
    expect(memory.take(token)).toBe(false);
    // Refused by the provider: free again.
    await a.release(token, false);
    memory.release(token, false);
    expect(await b.take(token)).toBe(memory.take(token));
    await b.release(token, true);
    memory.release(token, true);
    expect(await a.take(token)).toBe(memory.take(token));
    expect(await a.take(token)).toBe(false);
    const ttl = await one.pttl(key(`captcha:${token}`));
    expect(ttl).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(24 * 3_600_000);
  });

  it('a check whose process died frees its token after the check expiry', async () => {
    const tokens = new RedisCaptchaTokens({ redis: one, prefix: test.prefix, checkExpiryMs: 150 });
    const token = fresh('token');
    expect(await tokens.take(token)).toBe(true);
    expect(await tokens.take(token)).toBe(false);
    await until(() => tokens.take(token), 'the check expires');
    await tokens.release(token, false);
    expect(await one.exists(key(`captcha:${token}`))).toBe(0);
  });
});
