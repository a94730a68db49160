/**
 * The CAPTCHA stage of a submission's admission (the first one): the provider's check of src/accounts/captcha.ts, its
 * outcomes answered as problem documents.
 */
import { CaptchaRefused, CaptchaUnavailable, type CaptchaVerifier } from '../accounts/captcha.js';
import type { AdmissionStage } from './admission-stage.js';
import { ProblemError } from './problems.js';

/** Seconds a client waits before sending its submission again when the CAPTCHA provider could not be asked. */
export const CAPTCHA_RETRY_AFTER_S = 10;

/**
 * The CAPTCHA of a user who submits with one (`captcha.isEnabled`; root never does): its token checked with the
 * provider, 401 `/problems/captcha-validation-failed` when it is missing or refused, 503
 * `/problems/captcha-provider-unavailable` with `Retry-After` when the provider cannot say. An accepted token is used
 * up whatever happens to the submission after: nothing to give back. The 401's challenge names no scheme a browser
 * would ask a password for: the credentials were right.
 */
export function captchaStage(verifier: CaptchaVerifier): AdmissionStage {
  return {
    name: 'captcha',
    async admit({ request, principal, job, settings }) {
      const captcha = principal.user?.detail.captcha;
      if (captcha?.isEnabled !== true) return;
      try {
        const { provider } = await verifier.check(settings.captcha, captcha.providers, job.clientIP);
        request.log.debug({ provider }, 'captcha accepted');
      } catch (error) {
        if (error instanceof CaptchaRefused) {
          request.log.info({ codes: error.providerCodes }, `captcha refused: ${error.message}`);
          throw new ProblemError(401, error.message, '/problems/captcha-validation-failed', { 'WWW-Authenticate': 'Captcha realm="mailverify"' });
        }
        if (error instanceof CaptchaUnavailable) {
          request.log.warn({ provider: error.provider }, `captcha provider unavailable: ${error.message}`);
          throw new ProblemError(503, `${error.message} The CAPTCHA cannot be checked now: send the submission again later.`, '/problems/captcha-provider-unavailable', {
            'Retry-After': String(CAPTCHA_RETRY_AFTER_S),
          });
        }
        throw error;
      }
    },
  };
}
