/**
 * The TOTP second factor (RFC 6238) through `otpauth`: SHA-1, 6 digits, 30-second steps, the parameters every
 * authenticator app reads; new secrets of 160 bits (the length RFC 4226 section 4 recommends) in base32, their
 * `otpauth://` URIs, and the check of a code, each time step accepted once per user. Also the count of wrong codes per
 * first-factor token.
 */
import { timingSafeEqual } from 'node:crypto';
import { HOTP, Secret, TOTP } from 'otpauth';

export const TOTP_ISSUER = 'mailverify';
export const TOTP_ALGORITHM = 'SHA1';
export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
/** Steps of clock skew allowed either way (RFC 6238 section 5.2 recommends at most one). */
export const TOTP_SKEW_STEPS = 1;
/** 160 bits. */
const SECRET_BYTES = 20;

/** A new random secret of 160 bits, in base32 (RFC 4648, no padding): 32 characters. */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

/**
 * The `otpauth://totp/…` URI of a secret (the Key Uri Format authenticator apps read from a QR code), with the issuer
 * `mailverify` in the label and as a parameter, and the algorithm, digits and period spelled out.
 */
export function totpUri(secret: string, accountName: string): string {
  return new TOTP({
    issuer: TOTP_ISSUER,
    label: accountName,
    secret: Secret.fromBase32(secret),
    algorithm: TOTP_ALGORITHM,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  }).toString();
}

/** The time step of an instant (ms since the epoch): RFC 6238 section 4.2, T = floor((now - T0) / X), T0 = 0. */
export function totpStep(now: number): number {
  return Math.floor(now / 1000 / TOTP_PERIOD_SECONDS);
}

/**
 * The time step `passCode` is the code of, when it is one of the current step or one step either side (RFC 6238
 * section 5.2) and later than `lastStep`, the last step accepted for the user; else null. The caller stores the step
 * returned as the user's new `lastStep`, so that no code is accepted twice (section 5.2: "the verifier MUST NOT accept
 * the second attempt of the OTP after the successful validation has been issued for the first OTP"). Anything but
 * exactly 6 ASCII digits is null. `secret` is base32, as made by `newTotpSecret` (throws a TypeError if it is not).
 */
export function acceptTotp(secret: string, passCode: string, lastStep: number | undefined, now: number): number | null {
  const key = Secret.fromBase32(secret);
  if (!/^[0-9]{6}$/.test(passCode)) return null;
  const given = Buffer.from(passCode, 'ascii');
  const current = totpStep(now);
  let accepted: number | null = null;
  // Every candidate computed and compared, so the time taken does not tell which step matched. When two steps share
  // the code (one chance in a million), the later one is taken: the same code is then not accepted again for the other.
  for (let step = current - TOTP_SKEW_STEPS; step <= current + TOTP_SKEW_STEPS; step++) {
    if (step < 0) continue;
    const expected = Buffer.from(HOTP.generate({ secret: key, algorithm: TOTP_ALGORITHM, digits: TOTP_DIGITS, counter: step }), 'ascii');
    const fresh = lastStep === undefined || step > lastStep;
    if (timingSafeEqual(given, expected) && fresh) accepted = step;
  }
  return accepted;
}

/** Wrong or reused codes a first-factor token may be used for: the fifth revokes it. */
export const FIRST_FACTOR_WRONG_CODES = 5;

export interface FirstFactorAttemptsOptions {
  /** Milliseconds since the epoch; Date.now by default. */
  readonly now?: () => number;
  /** Tokens tracked at most (default 10,000, about 1 MB). */
  readonly maxTokens?: number;
}

/**
 * Wrong or reused TOTP codes per first-factor token (by its `jti`), in memory. The fifth revokes the token: its answer
 * is still 403, and the token answers 401 from then on, until it expires.
 *
 * An entry is kept until its token expires (a first-factor token lives 5 minutes), after which the token is refused
 * anyway. At most `maxTokens` are kept: beyond, expired entries go first, then tokens still counting (the one whose
 * last wrong code is oldest first), and revoked ones only when no other is left. Forgetting a count gives nothing that
 * signing in again for a new token would not, and only someone who knows a user's password can get a first-factor
 * token at all.
 */
/** Wrong codes and revocations of first-factor tokens: FirstFactorAttempts in memory, or shared by a cluster (Redis). */
export interface SecondFactorAttempts {
  /** Whether the token `jti` was revoked (and has not expired since). */
  isRevoked(jti: string): boolean | Promise<boolean>;
  /** Counts a wrong or reused code of the token `jti` (expiring at `expiresAt`); true when this one revoked it. */
  recordWrongCode(jti: string, expiresAt: number): boolean | Promise<boolean>;
  /** Revokes the token `jti` (expiring at `expiresAt`). */
  revoke(jti: string, expiresAt: number): void | Promise<void>;
}

/**
 * The time steps accepted per user, so that no step is accepted twice even when two requests (to two processes of a
 * cluster) check the same code at once: the step is claimed atomically before it is accepted. The user's record keeps
 * its last step too; this is what makes the claim atomic across processes.
 */
export interface TotpStepClaims {
  /** Claims `step` for `userId`: false when that step or a later one was claimed already. */
  claim(userId: string, step: number): boolean | Promise<boolean>;
}

/**
 * How long a claimed step must be remembered: until the clock is so far past it that no code of it (or an earlier
 * step) is accepted any more, plus one step for clocks a little apart. Milliseconds since the epoch.
 */
export const totpClaimExpiresAt = (step: number): number => (step + TOTP_SKEW_STEPS + 2) * TOTP_PERIOD_SECONDS * 1000;

/** Claimed steps in this process's memory; a user's entry goes once it can no longer refuse anything. */
export class MemoryTotpSteps implements TotpStepClaims {
  private readonly last = new Map<string, number>();
  private lastSweep = -Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  claim(userId: string, step: number): boolean {
    const now = this.now();
    if (now - this.lastSweep >= 60_000 || now < this.lastSweep) {
      this.lastSweep = now;
      for (const [id, claimed] of this.last) if (totpClaimExpiresAt(claimed) <= now) this.last.delete(id);
    }
    const claimed = this.last.get(userId);
    if (claimed !== undefined && claimed >= step) return false;
    this.last.set(userId, step);
    return true;
  }

  /** Users with a step remembered (for tests). */
  get size(): number {
    return this.last.size;
  }
}

export class FirstFactorAttempts implements SecondFactorAttempts {
  private readonly now: () => number;
  private readonly maxTokens: number;
  /** Tokens with fewer than five wrong codes, in order of their last. */
  private readonly counting = new Map<string, { wrongCodes: number; readonly expiresAt: number }>();
  /** Revoked tokens, in order of revocation, with when they expire. */
  private readonly revoked = new Map<string, number>();

  constructor(options: FirstFactorAttemptsOptions = {}) {
    this.now = options.now ?? Date.now;
    this.maxTokens = Math.max(1, options.maxTokens ?? 10_000);
  }

  /** Whether the token `jti` was revoked by its fifth wrong code (and has not expired since). */
  isRevoked(jti: string): boolean {
    const expiresAt = this.revoked.get(jti);
    return expiresAt !== undefined && this.now() < expiresAt;
  }

  /**
   * Counts a wrong or reused code given with the token `jti`, which expires at `expiresAt` (ms since the epoch, from its
   * `exp`). True when this was the fifth: the token is revoked from now on.
   */
  recordWrongCode(jti: string, expiresAt: number): boolean {
    const now = this.now();
    this.dropExpired(now);
    if (this.isRevoked(jti)) return true;
    const entry = this.counting.get(jti) ?? { wrongCodes: 0, expiresAt };
    entry.wrongCodes++;
    if (entry.wrongCodes >= FIRST_FACTOR_WRONG_CODES) {
      this.counting.delete(jti);
      this.revoked.set(jti, entry.expiresAt);
    } else {
      // Moved to the end: the map is in order of last wrong code.
      this.counting.delete(jti);
      this.counting.set(jti, entry);
    }
    if (this.size > this.maxTokens) this.dropExpired(now, true);
    while (this.size > this.maxTokens) {
      // The token still counting whose last wrong code is oldest, but never the one just counted (the newest), which
      // could then never reach its fifth; a revoked one only when no other is left.
      const oldestCounting = this.counting.keys().next().value;
      if (oldestCounting !== undefined && oldestCounting !== jti) this.counting.delete(oldestCounting);
      else this.revoked.delete(this.revoked.keys().next().value!);
    }
    return entry.wrongCodes >= FIRST_FACTOR_WRONG_CODES;
  }

  /**
   * Revokes the token `jti` (expiring at `expiresAt`) once it has done its work: a first-factor token gets one full
   * token, not one for every code its holder can read off the device until it expires.
   */
  revoke(jti: string, expiresAt: number): void {
    this.dropExpired(this.now());
    this.counting.delete(jti);
    this.revoked.set(jti, expiresAt);
    while (this.counting.size + this.revoked.size > this.maxTokens) this.revoked.delete(this.revoked.keys().next().value!);
  }

  /** Tokens tracked now (for tests and metrics). */
  get size(): number {
    return this.counting.size + this.revoked.size;
  }

  /**
   * Drops the entries of expired tokens: from the front of the maps only (they are roughly in order of expiry, tokens
   * having one lifetime), unless `all`, when the cap is reached.
   */
  private dropExpired(now: number, all = false): void {
    for (const [jti, entry] of this.counting) {
      if (entry.expiresAt <= now) this.counting.delete(jti);
      else if (!all) break;
    }
    for (const [jti, expiresAt] of this.revoked) {
      if (expiresAt <= now) this.revoked.delete(jti);
      else if (!all) break;
    }
  }
}
