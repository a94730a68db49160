/**
 * The second factor's state of one server: what its TOTP routes share across the interface versions.
 */
import { FirstFactorAttempts, MemoryTotpSteps, type SecondFactorAttempts, type TotpStepClaims } from '../accounts/totp.js';
import { TotpFailureLimiter, type TotpFailureLimits } from '../accounts/sign-in-limits.js';

/**
 * What the TOTP routes of one server share across its interface versions: wrong codes per first-factor token, and
 * changes of a user's TOTP made one after the other (a time step is accepted once, whatever the timing of two requests,
 * whichever version they come through).
 */
export interface SecondFactorState {
  readonly attempts: SecondFactorAttempts;
  /** Wrong codes per user (across its first-factor tokens), reserved before each check. */
  readonly failures: TotpFailureLimits;
  /** Steps accepted per user, claimed before a code is accepted (across a cluster's processes when shared). */
  readonly steps: TotpStepClaims;
  serially<T>(userId: string, work: () => Promise<T>): Promise<T>;
}

/** The state in this process's memory, unless stores shared by a cluster are given. */
export function newSecondFactorState(
  shared: { readonly attempts?: SecondFactorAttempts; readonly failures?: TotpFailureLimits; readonly steps?: TotpStepClaims } = {},
): SecondFactorState {
  const queues = new Map<string, Promise<unknown>>();
  return {
    attempts: shared.attempts ?? new FirstFactorAttempts(),
    failures: shared.failures ?? new TotpFailureLimiter(),
    steps: shared.steps ?? new MemoryTotpSteps(),
    serially: <T>(userId: string, work: () => Promise<T>): Promise<T> => {
      const previous = queues.get(userId) ?? Promise.resolve();
      const next = previous.then(work, work);
      const settled = next.then(
        () => undefined,
        () => undefined,
      );
      queues.set(userId, settled);
      void settled.then(() => {
        if (queues.get(userId) === settled) queues.delete(userId);
      });
      return next;
    },
  };
}
