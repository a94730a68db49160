/**
 * The counters of request rates and account protection, where they live: this process's memory by default (embedded),
 * or Redis when several server processes share them (a cluster), so that a limit holds across the cluster and not
 * once per process.
 */
import type { UsedCaptchaTokens } from '../accounts/captcha.js';
import { RedisCaptchaTokens, RedisFirstFactorAttempts, RedisSignInLimits, RedisThrottle, RedisTotpSteps } from '../accounts/redis-counters.js';
import type { SignInLimits } from '../accounts/sign-in-limits.js';
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
  /** TOTP time steps accepted per user. */
  readonly totpSteps?: TotpStepClaims;
  /** CAPTCHA tokens being checked or accepted. */
  readonly captchaTokens?: UsedCaptchaTokens;
}

/** Every counter in Redis, under `mailverify:<prefix>:`; `now` is the time source of those that read one. */
export function redisSharedCounters(options: RedisCounterOptions & { readonly now?: () => number }): Required<SharedCounters> {
  return {
    rateLimits: new RedisRateLimitStore(options),
    throttle: new RedisThrottle(options),
    signIns: new RedisSignInLimits(options),
    firstFactorAttempts: new RedisFirstFactorAttempts(options),
    totpSteps: new RedisTotpSteps(options),
    captchaTokens: new RedisCaptchaTokens(options),
  };
}
