// The TOTP second factor with the real otpauth at fixed times: the RFC 6238 Appendix B vectors (SHA-1, last 6 digits),
// one step of skew either way and no more, each step accepted once (replay refused), malformed codes refused, new
// secrets and their otpauth URIs; and the count of wrong codes per first-factor token, with a fake clock.
import { Secret, TOTP, URI } from 'otpauth';
import { describe, expect, it } from 'vitest';
import {
  FIRST_FACTOR_WRONG_CODES,
  FirstFactorAttempts,
  MemoryTotpSteps,
  acceptTotp,
  totpClaimExpiresAt,
  newTotpSecret,
  totpStep,
  totpUri,
} from '../../packages/server/src/accounts/totp.js';

/** The RFC 6238 Appendix B secret, "12345678901234567890" in ASCII, as base32. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
/** RFC 6238 Appendix B, SHA-1: time (seconds) and the last 6 digits of its 8-digit code. */
const RFC_VECTORS: ReadonlyArray<readonly [number, string]> = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
  [20000000000, '353130'],
];

describe('acceptTotp', () => {
  it('accepts the RFC 6238 test vectors and answers their time step', () => {
    for (const [seconds, code] of RFC_VECTORS) {
      expect(acceptTotp(RFC_SECRET, code, undefined, seconds * 1000)).toBe(Math.floor(seconds / 30));
    }
  });

  it('allows one step of clock skew either way, and no more', () => {
    const at = 1111111109_000;
    const step = totpStep(at);
    expect(acceptTotp(RFC_SECRET, '081804', undefined, at + 30_000)).toBe(step);
    expect(acceptTotp(RFC_SECRET, '081804', undefined, at - 30_000)).toBe(step);
    expect(acceptTotp(RFC_SECRET, '081804', undefined, at + 60_000)).toBeNull();
    expect(acceptTotp(RFC_SECRET, '081804', undefined, at - 60_000)).toBeNull();
  });

  it('never accepts a step again once it was accepted (replay), nor an earlier one', () => {
    const secret = newTotpSecret();
    const at = Date.UTC(2026, 0, 1, 12, 0, 10);
    const code = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: at });
    const step = acceptTotp(secret, code, undefined, at);
    expect(step).toBe(totpStep(at));
    // The same code again, within its step or in the next one.
    expect(acceptTotp(secret, code, step!, at)).toBeNull();
    expect(acceptTotp(secret, code, step!, at + 30_000)).toBeNull();
    // The previous step's code, still within the skew, is older than the accepted step.
    const previous = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: at - 30_000 });
    expect(acceptTotp(secret, previous, step!, at)).toBeNull();
    // The next step's code is accepted.
    const next = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: at + 30_000 });
    expect(acceptTotp(secret, next, step!, at + 30_000)).toBe(step! + 1);
  });

  it('refuses a wrong code', () => {
    const at = 59_000;
    expect(acceptTotp(RFC_SECRET, '287083', undefined, at)).toBeNull();
    expect(acceptTotp(RFC_SECRET, '000000', undefined, at)).toBeNull();
    // A code of another secret.
    const other = newTotpSecret();
    expect(acceptTotp(RFC_SECRET, TOTP.generate({ secret: Secret.fromBase32(other), timestamp: at }), undefined, at)).toBeNull();
  });

  it('refuses anything but exactly 6 ASCII digits', () => {
    const at = 59_000;
    for (const code of ['', '28708', '2870820', '94287082', ' 287082', '287082 ', '28708a', '287 082', '+28708', '２８７０８２', '287082\n']) {
      expect(acceptTotp(RFC_SECRET, code, undefined, at)).toBeNull();
    }
  });

  it('throws for a secret that is not base32', () => {
    expect(() => acceptTotp('not base32!', '287082', undefined, 59_000)).toThrow(TypeError);
  });
});

describe('newTotpSecret and totpUri', () => {
  it('makes 160-bit random secrets in base32', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(Secret.fromBase32(secret).bytes.length).toBe(20);
    expect(newTotpSecret()).not.toBe(secret);
  });

  it('writes the otpauth URI an authenticator app reads: issuer mailverify, SHA1, 6 digits, 30 s', () => {
    const secret = newTotpSecret();
    const uri = totpUri(secret, 'alice@example.com');
    const url = new URL(uri);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe('/mailverify:alice@example.com');
    expect(Object.fromEntries(url.searchParams)).toEqual({ issuer: 'mailverify', secret, algorithm: 'SHA1', digits: '6', period: '30' });
    // Read back by otpauth, it gives the codes acceptTotp accepts.
    const parsed = URI.parse(uri);
    const at = Date.UTC(2026, 5, 1);
    expect(acceptTotp(secret, parsed.generate({ timestamp: at }), undefined, at)).toBe(totpStep(at));
  });
});

describe('FirstFactorAttempts', () => {
  function fakeClock(): { now: () => number; advance: (ms: number) => void } {
    let t = Date.UTC(2026, 0, 1);
    return { now: () => t, advance: (ms) => (t += ms) };
  }

  it('revokes a token at its fifth wrong or reused code, and only that token', () => {
    expect(FIRST_FACTOR_WRONG_CODES).toBe(5);
    const clock = fakeClock();
    const attempts = new FirstFactorAttempts({ now: clock.now });
    const expiresAt = clock.now() + 5 * 60_000;
    for (let i = 1; i <= 4; i++) {
      expect(attempts.recordWrongCode('token-a', expiresAt)).toBe(false);
      expect(attempts.isRevoked('token-a')).toBe(false);
    }
    attempts.recordWrongCode('token-b', expiresAt);
    expect(attempts.recordWrongCode('token-a', expiresAt)).toBe(true);
    expect(attempts.isRevoked('token-a')).toBe(true);
    expect(attempts.isRevoked('token-b')).toBe(false);
    expect(attempts.isRevoked('token-c')).toBe(false);
  });

  it('revokes a token that has done its work, until it expires', () => {
    const clock = fakeClock();
    const attempts = new FirstFactorAttempts({ now: clock.now });
    const expiresAt = clock.now() + 5 * 60_000;
    attempts.recordWrongCode('used', expiresAt);
    attempts.revoke('used', expiresAt);
    expect(attempts.isRevoked('used')).toBe(true);
    expect(attempts.isRevoked('other')).toBe(false);
    clock.advance(5 * 60_000);
    expect(attempts.isRevoked('used')).toBe(false);
  });

  it('forgets tokens once they have expired', () => {
    const clock = fakeClock();
    const attempts = new FirstFactorAttempts({ now: clock.now });
    const expiresAt = clock.now() + 5 * 60_000;
    for (let i = 0; i < 5; i++) attempts.recordWrongCode('revoked', expiresAt);
    attempts.recordWrongCode('counting', expiresAt);
    expect(attempts.size).toBe(2);
    clock.advance(5 * 60_000);
    expect(attempts.isRevoked('revoked')).toBe(false);
    attempts.recordWrongCode('later', clock.now() + 5 * 60_000);
    expect(attempts.size).toBe(1);
  });

  it('keeps at most maxTokens, forgetting counting tokens before revoked ones', () => {
    const clock = fakeClock();
    const attempts = new FirstFactorAttempts({ now: clock.now, maxTokens: 3 });
    const expiresAt = clock.now() + 5 * 60_000;
    for (let i = 0; i < 5; i++) attempts.recordWrongCode('revoked', expiresAt);
    for (let i = 0; i < 100; i++) attempts.recordWrongCode(`flood-${i}`, expiresAt);
    expect(attempts.size).toBe(3);
    expect(attempts.isRevoked('revoked')).toBe(true);
    // The token being counted is kept while others come and go: its fifth code still revokes it.
    for (let i = 0; i < 4; i++) {
      attempts.recordWrongCode('target', expiresAt);
      attempts.recordWrongCode(`more-${i}`, expiresAt);
    }
    expect(attempts.recordWrongCode('target', expiresAt)).toBe(true);
    expect(attempts.isRevoked('target')).toBe(true);
  });

  it('at the cap, drops expired tokens before forgetting live ones', () => {
    const clock = fakeClock();
    const attempts = new FirstFactorAttempts({ now: clock.now, maxTokens: 2 });
    const longExpiry = clock.now() + 5 * 60_000;
    attempts.recordWrongCode('long-lived', longExpiry);
    attempts.recordWrongCode('short-lived', clock.now() + 60_000);
    clock.advance(60_000);
    attempts.recordWrongCode('new', clock.now() + 5 * 60_000);
    expect(attempts.size).toBe(2);
    // Its count went on: the fifth wrong code revokes it.
    for (let i = 0; i < 3; i++) expect(attempts.recordWrongCode('long-lived', longExpiry)).toBe(false);
    expect(attempts.recordWrongCode('long-lived', longExpiry)).toBe(true);
  });
});

describe('MemoryTotpSteps', () => {
  it('claims a step once per user: the same or an earlier step is refused, a later one claimed; users apart', () => {
    const steps = new MemoryTotpSteps(() => 0);
    expect(steps.claim('a', 10)).toBe(true);
    expect(steps.claim('a', 10)).toBe(false);
    expect(steps.claim('a', 9)).toBe(false);
    expect(steps.claim('b', 10)).toBe(true);
    expect(steps.claim('a', 11)).toBe(true);
    expect(steps.size).toBe(2);
  });

  it('forgets a user once no code of its last step could be accepted any more', () => {
    let now = 0;
    const steps = new MemoryTotpSteps(() => now);
    const step = totpStep(1_700_000_000_000);
    now = 1_700_000_000_000;
    expect(steps.claim('a', step)).toBe(true);
    // Until then, the step (and those before it) stays refused.
    now = totpClaimExpiresAt(step) - 1;
    expect(steps.claim('a', step)).toBe(false);
    now = totpClaimExpiresAt(step) + 60_000;
    expect(steps.claim('b', totpStep(now))).toBe(true);
    expect(steps.size).toBe(1);
    // No code of a step that old is accepted (one step of skew), so forgetting it lets nothing through.
    expect(totpStep(now) - 1).toBeGreaterThan(step);
  });
});
