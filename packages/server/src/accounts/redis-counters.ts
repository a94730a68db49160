/**
 * The account protection counters in Redis, shared by every server process of a cluster: throttling windows, failed
 * sign-ins, wrong TOTP codes per user and per first-factor token, accepted TOTP steps, used CAPTCHA tokens. Each behaves as its
 * in-memory counterpart; each check-and-count is one atomic Redis step (a Lua script or MULTI), and every key expires
 * once it can no longer change an answer, so nothing grows without bound (memory is bounded by expiry here, not by a
 * count of keys: Redis's own `maxmemory` is the operator's cap).
 *
 * Keys, under `mailverify:<prefix>:`:
 * - `throttle:{<user>}:` and `throttle:{<user>}:<ip>`: sorted sets of accepted submissions (score: time in ms), rules or
 *   not, kept for a day and at most as many as Throttle keeps (src/accounts/throttling.ts). The braces keep a user's two
 *   keys in one Redis Cluster slot, as the script that checks both needs.
 * - `signin:user:<username>` and `signin:ip:<ip>`: sorted sets of the newest failures (at most the limit), for 15 minutes;
 *   `signin:checking:user:<username>` and `signin:checking:ip:<ip>`: the sign-ins being checked (places reserved before
 *   the password check), for a minute at most.
 * - `totp:user:<user>` and `totp:user:checking:<user>`: the same for wrong TOTP codes per user.
 * - `totp:token:<jti>`: wrong codes of a first-factor token (5: revoked), until the token expires.
 * - `totp:step:<user>`: the last TOTP step accepted for the user, until no code of it could be accepted any more.
 * - `captcha:<hash>`: `checking` while a token is checked, then `accepted` for 24 hours.
 *
 * Times are the callers' clocks (options `now`), as in memory, and expiries are relative to them (never Redis's own
 * clock); the machines of a cluster keep their clocks in step (NTP).
 */
import { randomBytes } from 'node:crypto';
import { keyPrefix, RedisScript, type Redis, type RedisCounterOptions } from '../cluster/redis.js';
import { REMEMBERED_TOKEN_MS, type UsedCaptchaTokens } from './captcha.js';
import {
  ADDRESS_FAILURE_LIMIT,
  boundedKey,
  limitedUsernameKey,
  PENDING_RETRY_SECONDS,
  SIGN_IN_WINDOW_MS,
  TOTP_FAILURE_LIMIT,
  USERNAME_FAILURE_LIMIT,
  type Reservation,
  type SignInLimits,
  type TotpFailureLimits,
} from './sign-in-limits.js';
import { KEPT_MS, keptSubmissions, PERIOD_MS, retryAfterSeconds, type SubmissionThrottle, type ThrottleDecision } from './throttling.js';
import { FIRST_FACTOR_WRONG_CODES, totpClaimExpiresAt, type SecondFactorAttempts, type TotpStepClaims } from './totp.js';
import type { ThrottlingRule } from './types.js';

export interface RedisClockOptions extends RedisCounterOptions {
  /** Milliseconds since the epoch; Date.now by default. */
  readonly now?: () => number;
}

/** A member unique among those written at the same millisecond. */
const uniqueMember = (now: number): string => `${now}:${randomBytes(6).toString('base64url')}`;

/** A client, the keys of one counter kind, and the time source. */
abstract class RedisCounter {
  protected readonly redis: Redis;
  protected readonly prefix: string;
  protected readonly now: () => number;

  constructor(options: RedisClockOptions, kind: string) {
    this.redis = options.redis;
    this.prefix = `${keyPrefix(options.prefix)}${kind}:`;
    this.now = options.now ?? Date.now;
  }
}

// Numbers leave the scripts as strings: Redis would truncate a Lua number to an integer.
const THROTTLE_TAKE = new RedisScript(`
local now = tonumber(ARGV[1])
local keep = tonumber(ARGV[2])
local kept = tonumber(ARGV[4])
local wait = 0
for i = 5, #ARGV, 3 do
  local key = KEYS[tonumber(ARGV[i])]
  local limit = tonumber(ARGV[i + 1])
  local period = tonumber(ARGV[i + 2])
  local after = '(' .. string.format('%.0f', now - period)
  local count = redis.call('ZCOUNT', key, after, '+inf')
  if count >= limit then
    local leaving = redis.call('ZRANGEBYSCORE', key, after, '+inf', 'WITHSCORES', 'LIMIT', count - limit, 1)
    local w = tonumber(leaving[2]) + period - now
    if w > wait then wait = w end
  end
end
if wait > 0 then return string.format('%.0f', wait) end
for k = 1, 2 do
  redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', string.format('%.0f', now - keep))
  redis.call('ZADD', KEYS[k], string.format('%.0f', now), ARGV[3])
  redis.call('ZREMRANGEBYRANK', KEYS[k], 0, -(kept + 1))
  redis.call('PEXPIRE', KEYS[k], string.format('%.0f', keep))
end
return '0'
`);

/** Throttling windows in Redis: the answers of Throttle, with the submissions of every process counted. */
export class RedisThrottle extends RedisCounter implements SubmissionThrottle {
  constructor(options: RedisClockOptions) {
    super(options, 'throttle');
  }

  async take(user: string, ip: string, rules: readonly ThrottlingRule[]): Promise<ThrottleDecision> {
    const now = this.now();
    const keys = [`${this.prefix}{${user}}:`, `${this.prefix}{${user}}:${boundedKey(ip)}`];
    // Counted without rules too (no rule to check): rules set later count it.
    const member = uniqueMember(now);
    const args: (string | number)[] = [now, KEPT_MS, member, keptSubmissions(rules)];
    for (const rule of rules) args.push(rule.scope === 'Global' ? 1 : 2, rule.limit, PERIOD_MS[rule.period]);
    const waitMs = Number(await THROTTLE_TAKE.run(this.redis, keys, args));
    if (waitMs > 0) return { admitted: false, retryAfterSeconds: retryAfterSeconds(waitMs) };
    let given = false;
    return {
      admitted: true,
      slot: {
        giveBack: async () => {
          if (given) return;
          given = true;
          await this.redis.multi().zrem(keys[0]!, member).zrem(keys[1]!, member).exec();
        },
      },
    };
  }
}

// Reserves a place in every counted key, or refuses with the longest block among them (milliseconds): KEYS are pairs
// (failures, places being checked) and ARGV[4 + i] the limit of pair i. Failures are a sorted set of the newest `limit`
// in the window (score: time); places a sorted set of reservations not settled yet (score: when taken), forgotten
// after ARGV[3] ms (a process that died while checking). One script, so concurrent guesses cannot all get a place.
const RESERVE = new RedisScript(`
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local placeLife = tonumber(ARGV[3])
local member = ARGV[4]
local wait = 0
for i = 1, #KEYS, 2 do
  local limit = tonumber(ARGV[4 + (i + 1) / 2])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', string.format('%.0f', now - window))
  redis.call('ZREMRANGEBYSCORE', KEYS[i + 1], '-inf', string.format('%.0f', now - placeLife))
  local failures = redis.call('ZCARD', KEYS[i])
  if failures >= limit then
    local oldest = redis.call('ZRANGE', KEYS[i], failures - limit, failures - limit, 'WITHSCORES')
    local w = tonumber(oldest[2]) + window - now
    if w > wait then wait = w end
  elseif failures + redis.call('ZCARD', KEYS[i + 1]) >= limit then
    if ${PENDING_RETRY_SECONDS * 1000} > wait then wait = ${PENDING_RETRY_SECONDS * 1000} end
  end
end
if wait > 0 then return string.format('%.0f', wait) end
for i = 1, #KEYS, 2 do
  redis.call('ZADD', KEYS[i + 1], string.format('%.0f', now), member)
  redis.call('PEXPIRE', KEYS[i + 1], string.format('%.0f', placeLife))
end
return '0'
`);

// Settles a reservation: its places are given back and, when ARGV[3] is '1' (the check failed), it becomes a failure
// of each key, of which only the newest ARGV[4 + i] are kept, for the window ARGV[2].
const SETTLE = new RedisScript(`
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
for i = 1, #KEYS, 2 do
  redis.call('ZREM', KEYS[i + 1], ARGV[4])
  if ARGV[3] == '1' then
    local limit = tonumber(ARGV[4 + (i + 1) / 2])
    redis.call('ZADD', KEYS[i], string.format('%.0f', now), ARGV[4])
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', string.format('%.0f', now - window))
    redis.call('ZREMRANGEBYRANK', KEYS[i], 0, -(limit + 1))
    redis.call('PEXPIRE', KEYS[i], string.format('%.0f', window))
  end
end
return 1
`);

/** How long a place taken for a check stays counted when its process never settles it (it died): far beyond a check. */
export const RESERVED_PLACE_LIFE_MS = 60_000;

/** Failure counts of keys with limits, reserved before each check (src/accounts/sign-in-limits.ts), in Redis. */
abstract class RedisFailureCounter extends RedisCounter {
  protected async reserveIn(places: readonly (readonly [string, number])[]): Promise<Reservation> {
    const keys = places.flatMap(([key]) => [`${this.prefix}${key}`, `${this.prefix}checking:${key}`]);
    const limits = places.map(([, limit]) => limit);
    const member = uniqueMember(this.now());
    const waitMs = Number(await RESERVE.run(this.redis, keys, [this.now(), SIGN_IN_WINDOW_MS, RESERVED_PLACE_LIFE_MS, member, ...limits]));
    if (waitMs > 0) return { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    let settled = false;
    const settle = async (failed: boolean): Promise<void> => {
      if (settled) return;
      settled = true;
      await SETTLE.run(this.redis, keys, [this.now(), SIGN_IN_WINDOW_MS, failed ? '1' : '0', member, ...limits]);
    };
    return { attempt: { failed: () => settle(true), release: () => settle(false) } };
  }
}

/** Failed sign-ins in Redis: the same limits and windows as SignInLimiter, counted across the cluster. */
export class RedisSignInLimits extends RedisFailureCounter implements SignInLimits {
  constructor(options: RedisClockOptions) {
    super(options, 'signin');
  }

  reserve(username: string, ip: string): Promise<Reservation> {
    return this.reserveIn([
      [`user:${limitedUsernameKey(username)}`, USERNAME_FAILURE_LIMIT],
      [`ip:${boundedKey(ip)}`, ADDRESS_FAILURE_LIMIT],
    ]);
  }
}

/** Wrong TOTP codes per user in Redis: the limit and window of TotpFailureLimiter, counted across the cluster. */
export class RedisTotpFailures extends RedisFailureCounter implements TotpFailureLimits {
  constructor(options: RedisClockOptions) {
    super(options, 'totp:user');
  }

  reserve(userId: string): Promise<Reservation> {
    return this.reserveIn([[boundedKey(userId), TOTP_FAILURE_LIMIT]]);
  }
}

const RECORD_WRONG_CODE = new RedisScript(`
local count = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return count
`);

/** Wrong TOTP codes and revocations of first-factor tokens in Redis, as FirstFactorAttempts counts them. */
export class RedisFirstFactorAttempts extends RedisCounter implements SecondFactorAttempts {
  constructor(options: RedisClockOptions) {
    super(options, 'totp:token');
  }

  async isRevoked(jti: string): Promise<boolean> {
    return Number((await this.redis.get(this.prefix + jti)) ?? 0) >= FIRST_FACTOR_WRONG_CODES;
  }

  async recordWrongCode(jti: string, expiresAt: number): Promise<boolean> {
    // A token already expired is refused anyway: nothing to keep. Expiry is relative, from this process's clock.
    const ttl = Math.ceil(expiresAt - this.now());
    if (ttl <= 0) return false;
    return Number(await RECORD_WRONG_CODE.run(this.redis, [this.prefix + jti], [ttl])) >= FIRST_FACTOR_WRONG_CODES;
  }

  async revoke(jti: string, expiresAt: number): Promise<void> {
    const ttl = Math.ceil(expiresAt - this.now());
    if (ttl <= 0) return;
    await this.redis.set(this.prefix + jti, FIRST_FACTOR_WRONG_CODES, 'PX', ttl);
  }
}

const CLAIM_STEP = new RedisScript(`
local last = redis.call('GET', KEYS[1])
if last and tonumber(last) >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`);

/** The last TOTP step accepted per user, claimed atomically across the cluster. */
export class RedisTotpSteps extends RedisCounter implements TotpStepClaims {
  constructor(options: RedisClockOptions) {
    super(options, 'totp:step');
  }

  async claim(userId: string, step: number): Promise<boolean> {
    // A step too old to be accepted by anyone is refused without a key (which would expire at once).
    const ttl = totpClaimExpiresAt(step) - this.now();
    if (ttl <= 0) return false;
    return (await CLAIM_STEP.run(this.redis, [this.prefix + userId], [step, ttl])) === 1;
  }
}

/** How long a token stays taken by a check that never ended (its process died): far beyond a siteverify timeout. */
export const DEFAULT_CAPTCHA_CHECK_EXPIRY_MS = 60_000;

const RELEASE_TOKEN = new RedisScript(`
if ARGV[1] == '1' then
  redis.call('SET', KEYS[1], 'accepted', 'PX', ARGV[2])
elseif redis.call('GET', KEYS[1]) == 'checking' then
  redis.call('DEL', KEYS[1])
end
return 1
`);

/** Used CAPTCHA tokens in Redis: a token is good once across the cluster. */
export class RedisCaptchaTokens implements UsedCaptchaTokens {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly checkExpiryMs: number;

  constructor(options: RedisCounterOptions & { readonly checkExpiryMs?: number }) {
    this.redis = options.redis;
    this.prefix = `${keyPrefix(options.prefix)}captcha:`;
    this.checkExpiryMs = options.checkExpiryMs ?? DEFAULT_CAPTCHA_CHECK_EXPIRY_MS;
  }

  async take(key: string): Promise<boolean> {
    return (await this.redis.set(this.prefix + key, 'checking', 'PX', this.checkExpiryMs, 'NX')) === 'OK';
  }

  async release(key: string, accepted: boolean): Promise<void> {
    await RELEASE_TOKEN.run(this.redis, [this.prefix + key], [accepted ? '1' : '0', REMEMBERED_TOKEN_MS]);
  }
}
