/**
 * The throttling stage of a submission's admission: a user's throttling rules, read from its current record at each
 * submission (root has none). A submission let through is counted at once and uncounted if a later stage refuses it
 * or its job is not stored, so only accepted submissions count.
 */
import { Throttle, type SubmissionThrottle } from '../accounts/throttling.js';
import type { Clock } from '../jobs/clock.js';
import type { AdmissionStage } from './admission-stage.js';
import { clientAddress } from './auth.js';
import { tooManyRequests } from './problems.js';

/** Counted in `throttle` when given (a store shared by a cluster), else in this process's memory. */
export function throttlingStage(clock: Clock, throttle: SubmissionThrottle = new Throttle(() => clock.now())): AdmissionStage {
  return {
    name: 'throttling',
    async admit({ principal, request }) {
      const rules = principal.user?.detail.throttling.rules;
      if (principal.isRoot || rules === undefined) return;
      const decision = await throttle.take(principal.id, clientAddress(request), rules);
      if (!decision.admitted) {
        throw tooManyRequests('This user\'s throttling rules allow no more submissions now', decision.retryAfterSeconds * 1000);
      }
      return { giveBack: () => decision.slot.giveBack() };
    },
  };
}
