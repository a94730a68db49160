/**
 * The counters of request rates and account protection, where they live: this process's memory by default (embedded),
 * or Redis when several server processes share them (a cluster), so that a limit holds across the cluster and not
 * once per process.
 */
import type { UsedCaptchaTokens } from '../accounts/captcha.js';
import { RedisCaptchaTokens, RedisFirstFactorAttempts, RedisSignInLimits, RedisThrottle, RedisTotpFailures, RedisTotpSteps } from '../accounts/redis-counters.js';
import type { SignInLimits, TotpFailureLimits } from '../accounts/sign-in-limits.js';
import type { SubmissionThrottle } from '../accounts/throttling.js';
import type { SecondFactorAttempts, TotpStepClaims } from '../accounts/totp.js';
import type { RedisCounterOptions } from '../cluster/redis.js';
import type { RateLimitStore } from './rate-limits.js';
import { RedisRateLimitStore } from './redis-rate-limits.js';

/** Each absent one is kept in this process's memory. */
export interface SharedCounters {
  /** Request rate buckets and requests in flight (used when rate limits are on and give no store of their own). */
  readonly rateLimits?: RateLimitStore;
  /** Accepted submissions under users' throttling rules. */
  readonly throttle?: SubmissionThrottle;
  /** Failed sign-ins per username and per client IP. */
  readonly signIns?: SignInLimits;
  /** Wrong TOTP codes and revocations of first-factor tokens. */
  readonly firstFactorAttempts?: SecondFactorAttempts;
  /** Wrong TOTP codes per user. */
  readonly totpFailures?: TotpFailureLimits;
  /** TOTP time steps accepted per user. */
  readonly totpSteps?: TotpStepClaims;
  /** CAPTCHA tokens being checked or accepted. */
  readonly captchaTokens?: UsedCaptchaTokens;
}

/**
 * Shared counters could not be read or written (their Redis is away): the request is answered 503 with
 * `Retry-After`, never let through unchecked.
 */
export class SharedCountersUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the shared counters cannot be reached', { cause });
    this.name = 'SharedCountersUnavailableError';
  }
}

/**
 * `counter` whose failed calls (the promises they return, rejected) reject with SharedCountersUnavailableError, and so
 * do those of the objects they give (a reservation's attempt, a throttling slot).
 */
function unavailableWhenFailing<T extends object>(counter: T): T {
  const wrap = (value: unknown): unknown => (typeof value === 'object' && value !== null ? unavailableWhenFailing(value) : value);
  return new Proxy(counter, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return wrap(value);
      return (...args: unknown[]): unknown => {
        const result: unknown = value.apply(target, args);
        if (!(result instanceof Promise)) return wrap(result);
        return result.then(wrap, (error: unknown) => Promise.reject(new SharedCountersUnavailableError(error)));
      };
    },
  });
}

/**
 * Every counter in Redis, under `mailverify:<prefix>:`; `now` is the time source of those that read one. A failed
 * command rejects with SharedCountersUnavailableError; give a client that fails its commands at once while Redis is
 * away (openRedis with `enableOfflineQueue: false`), so that requests are answered 503 at once rather than held.
 */
export function redisSharedCounters(options: RedisCounterOptions & { readonly now?: () => number }): Required<SharedCounters> {
  return {
    rateLimits: unavailableWhenFailing(new RedisRateLimitStore(options)),
    throttle: unavailableWhenFailing(new RedisThrottle(options)),
    signIns: unavailableWhenFailing(new RedisSignInLimits(options)),
    firstFactorAttempts: unavailableWhenFailing(new RedisFirstFactorAttempts(options)),
    totpFailures: unavailableWhenFailing(new RedisTotpFailures(options)),
    totpSteps: unavailableWhenFailing(new RedisTotpSteps(options)),
    captchaTokens: unavailableWhenFailing(new RedisCaptchaTokens(options)),
  };
}
