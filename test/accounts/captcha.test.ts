// The CAPTCHA verifier on its own, against the siteverify lab on loopback: its options, the member it reads, the 24
// hours an accepted token is remembered and the bound on how many, and nothing left behind by a check that timed out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CaptchaRefused, CaptchaUnavailable, CaptchaVerifier, readCaptchaAnswer, REMEMBERED_TOKEN_MS } from '../../packages/server/src/accounts/captcha.js';
import { expectNoLeak } from '../lab/leaks.js';
import { startSiteverifyLab, type SiteverifyLab } from '../lab/siteverify.js';

const PROVIDERS = { turnstile: { secretKey: 's' }, reCaptchaV3: { secretKey: 's3' } };
let lab: SiteverifyLab;

beforeAll(async () => {
  lab = await startSiteverifyLab();
});
afterAll(() => lab?.close());

describe('CaptchaVerifier: options', () => {
  it('refuses a siteverify URL that is not absolute http(s), an unknown provider, a bad timeout or bound', () => {
    expect(() => new CaptchaVerifier({ siteverifyUrls: { turnstile: 'ftp://example.com/x' } })).toThrow(/turnstile must be an absolute http or https URL/);
    expect(() => new CaptchaVerifier({ siteverifyUrls: { hCaptcha: '/siteverify' } })).toThrow(TypeError);
    expect(() => new CaptchaVerifier({ siteverifyUrls: { funCaptcha: 'https://example.com' } as never })).toThrow(/no provider funCaptcha/);
    expect(() => new CaptchaVerifier({ timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => new CaptchaVerifier({ maxRememberedTokens: 1.5 })).toThrow(/maxRememberedTokens/);
    // Loopback is the operator's to choose.
    expect(() => new CaptchaVerifier({ siteverifyUrls: { turnstile: 'http://127.0.0.1:1/siteverify' } })).not.toThrow();
  });

  it('reads the provider without case, into the user\'s provider key', () => {
    expect(readCaptchaAnswer({ provider: 'TURNSTILE', token: 't' })).toEqual({ provider: 'turnstile', token: 't' });
    expect(readCaptchaAnswer({ provider: 'recaptcha_V2', token: 't' })).toEqual({ provider: 'reCaptchaV2', token: 't' });
    expect(readCaptchaAnswer({ provider: 'Recaptcha_v3', token: 't' })).toEqual({ provider: 'reCaptchaV3', token: 't' });
    expect(readCaptchaAnswer({ provider: 'HCAPTCHA', token: 't', extra: 1 })).toEqual({ provider: 'hCaptcha', token: 't' });
    expect(() => readCaptchaAnswer({ provider: 'reCaptchaV2', token: 't' })).toThrow(CaptchaRefused);
  });
});

describe('CaptchaVerifier: tokens used up', () => {
  it('an accepted token is refused for 24 hours, then forgotten', async () => {
    let now = 1_000_000;
    const verifier = new CaptchaVerifier({ siteverifyUrls: lab.urls }, () => now);
    const token = lab.issue('turnstile');
    const captcha = { provider: 'Turnstile', token };
    await verifier.check(captcha, PROVIDERS, '192.0.2.1');
    now += REMEMBERED_TOKEN_MS - 1;
    await expect(verifier.check(captcha, PROVIDERS, '192.0.2.1')).rejects.toThrow(/already used/);
    now += 1;
    await verifier.check(captcha, PROVIDERS, '192.0.2.1');
    expect(lab.callsWith(token)).toHaveLength(2);
  });

  it('past its bound the oldest accepted token is forgotten first', async () => {
    const verifier = new CaptchaVerifier({ siteverifyUrls: lab.urls, maxRememberedTokens: 2 });
    const tokens = [lab.issue('turnstile'), lab.issue('turnstile'), lab.issue('turnstile')];
    for (const token of tokens) await verifier.check({ provider: 'turnstile', token }, PROVIDERS, '192.0.2.1');
    // The first was pushed out by the third: checked again, and remembered again, which pushes out the second.
    await verifier.check({ provider: 'turnstile', token: tokens[0] }, PROVIDERS, '192.0.2.1');
    await expect(verifier.check({ provider: 'turnstile', token: tokens[2] }, PROVIDERS, '192.0.2.1')).rejects.toThrow(/already used/);
    await expect(verifier.check({ provider: 'turnstile', token: tokens[0] }, PROVIDERS, '192.0.2.1')).rejects.toThrow(/already used/);
    await verifier.check({ provider: 'turnstile', token: tokens[1] }, PROVIDERS, '192.0.2.1');
    expect(lab.callsWith(tokens[0]!)).toHaveLength(2);
  });

  it('the same token of two providers is two tokens', async () => {
    const verifier = new CaptchaVerifier({ siteverifyUrls: lab.urls });
    const token = lab.issue('turnstile');
    await verifier.check({ provider: 'turnstile', token }, PROVIDERS, '192.0.2.1');
    // Asked of reCAPTCHA v3, the lab refuses it (it issued it for Turnstile): refused by the provider, not as used.
    await expect(verifier.check({ provider: 'reCaptcha_v3', token }, PROVIDERS, '192.0.2.1')).rejects.toThrow(/refused the CAPTCHA token/);
  });
});

describe('CaptchaVerifier: nothing left behind', () => {
  it('a check that timed out and one that passed leave no timer or socket once the provider is gone', async () => {
    await expectNoLeak(async () => {
      const own = await startSiteverifyLab();
      const verifier = new CaptchaVerifier({ siteverifyUrls: own.urls, timeoutMs: 100 });
      const slow = own.issue('turnstile', { delayMs: 60_000 });
      await expect(verifier.check({ provider: 'turnstile', token: slow }, PROVIDERS, '192.0.2.1')).rejects.toBeInstanceOf(CaptchaUnavailable);
      await verifier.check({ provider: 'turnstile', token: own.issue('turnstile') }, PROVIDERS, '192.0.2.1');
      await own.close();
    }, 3000);
  });
});
