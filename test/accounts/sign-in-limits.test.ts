// Failed sign-ins per username and per client IP over a sliding 15-minute window, with a fake clock: the exact
// thresholds (10 and 100 failures allowed, the next attempt refused), Retry-After until the oldest counted failure is
// 15 minutes old, case-insensitive usernames, and the bounds on memory (expiry, and a cap that keeps blocks).
import { describe, expect, it } from 'vitest';
import {
  ADDRESS_FAILURE_LIMIT,
  SIGN_IN_WINDOW_MS,
  SignInLimiter,
  TOTP_FAILURE_LIMIT,
  TotpFailureLimiter,
  USERNAME_FAILURE_LIMIT,
  type Reservation,
} from '../../packages/server/src/accounts/sign-in-limits.js';

const MINUTE = 60_000;

function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let t = Date.UTC(2026, 0, 1);
  return { now: () => t, advance: (ms) => (t += ms) };
}

/** A different client IP for each failure, so that only the username limit is in play. */
let addressCounter = 0;
const freshIp = (): string => `10.0.${Math.floor(addressCounter / 250)}.${(addressCounter++ % 250) + 1}`;

describe('SignInLimiter, per username', () => {
  it('allows 10 failures and refuses the attempt after the 10th', () => {
    expect(USERNAME_FAILURE_LIMIT).toBe(10);
    const clock = fakeClock();
    const limiter = new SignInLimiter({ now: clock.now });
    for (let i = 1; i <= 9; i++) limiter.recordFailure('alice', freshIp());
    expect(limiter.retryAfter('alice', freshIp())).toBe(0);
    limiter.recordFailure('alice', freshIp());
    // All 10 happened now: refused for the whole window, whatever the IP.
    expect(limiter.retryAfter('alice', freshIp())).toBe(SIGN_IN_WINDOW_MS / 1000);
    expect(limiter.retryAfter('bob', freshIp())).toBe(0);
  });

  it('counts usernames case-insensitively (ASCII, as the store matches them)', () => {
    const limiter = new SignInLimiter({ now: fakeClock().now });
    for (const name of ['Alice', 'ALICE', 'alice', 'aLiCe', 'ALice', 'alicE', 'AlIcE', 'alICE', 'ALICe']) limiter.recordFailure(name, freshIp());
    expect(limiter.retryAfter('alice', freshIp())).toBe(0);
    limiter.recordFailure('aliCE', freshIp());
    expect(limiter.retryAfter('ALICE', freshIp())).toBeGreaterThan(0);
    expect(limiter.retryAfter('alice2', freshIp())).toBe(0);
  });

  it('answers Retry-After in whole seconds until the oldest counted failure is 15 minutes old', () => {
    const clock = fakeClock();
    const limiter = new SignInLimiter({ now: clock.now });
    // One failure a minute, at minutes 0 to 9.
    for (let i = 0; i < 10; i++) {
      limiter.recordFailure('carol', freshIp());
      clock.advance(MINUTE);
    }
    // Minute 10: the oldest (minute 0) counts for 5 more minutes.
    expect(limiter.retryAfter('carol', freshIp())).toBe(300);
    clock.advance(5 * MINUTE - 1500);
    expect(limiter.retryAfter('carol', freshIp())).toBe(2);
    clock.advance(1000);
    // Half a second left: rounded up, never 0 while refused.
    expect(limiter.retryAfter('carol', freshIp())).toBe(1);
    clock.advance(500);
    // Minute 15: the oldest is 15 minutes old and no longer counts; 9 remain.
    expect(limiter.retryAfter('carol', freshIp())).toBe(0);
    // The window slides: one more failure makes 10 again, until the failure of minute 1 leaves it.
    limiter.recordFailure('carol', freshIp());
    expect(limiter.retryAfter('carol', freshIp())).toBe(60);
  });

  it('keeps a block until the count is below the limit when more failures got in (concurrent checks)', () => {
    const clock = fakeClock();
    const limiter = new SignInLimiter({ now: clock.now });
    // 12 failures at minutes 0 to 11 (two more checks were under way when the 10th was recorded).
    for (let i = 0; i < 12; i++) {
      limiter.recordFailure('dave', freshIp());
      clock.advance(MINUTE);
    }
    // Minute 12: below the limit once the failures of minutes 0, 1 and 2 have left, at minute 17.
    expect(limiter.retryAfter('dave', freshIp())).toBe(300);
    clock.advance(5 * MINUTE - 1);
    expect(limiter.retryAfter('dave', freshIp())).toBe(1);
    clock.advance(1);
    expect(limiter.retryAfter('dave', freshIp())).toBe(0);
  });

  it('tells long usernames apart (they are kept as digests)', () => {
    const limiter = new SignInLimiter({ now: fakeClock().now });
    const long = 'x'.repeat(5000);
    for (let i = 0; i < 10; i++) limiter.recordFailure(`${long}a`, freshIp());
    expect(limiter.retryAfter(`${long}A`, freshIp())).toBeGreaterThan(0);
    expect(limiter.retryAfter(`${long}b`, freshIp())).toBe(0);
  });
});

describe('SignInLimiter, per client IP', () => {
  it('allows 100 failures from one IP and refuses the attempt after the 100th, whatever the username', () => {
    expect(ADDRESS_FAILURE_LIMIT).toBe(100);
    const clock = fakeClock();
    const limiter = new SignInLimiter({ now: clock.now });
    for (let i = 0; i < 99; i++) limiter.recordFailure(`user${i}`, '203.0.113.7');
    expect(limiter.retryAfter('someone', '203.0.113.7')).toBe(0);
    clock.advance(MINUTE);
    limiter.recordFailure('user99', '203.0.113.7');
    // Refused until the first 99 (a minute older than the 100th) leave the window.
    expect(limiter.retryAfter('someone', '203.0.113.7')).toBe(14 * 60);
    expect(limiter.retryAfter('someone', '203.0.113.8')).toBe(0);
  });

  it('answers the longer of the two waits when both the username and the IP are refused', () => {
    const clock = fakeClock();
    const limiter = new SignInLimiter({ now: clock.now });
    for (let i = 0; i < 100; i++) limiter.recordFailure(`user${i}`, '198.51.100.1');
    clock.advance(5 * MINUTE);
    for (let i = 0; i < 10; i++) limiter.recordFailure('erin', freshIp());
    expect(limiter.retryAfter('nobody', '198.51.100.1')).toBe(10 * 60);
    expect(limiter.retryAfter('erin', freshIp())).toBe(15 * 60);
    expect(limiter.retryAfter('erin', '198.51.100.1')).toBe(15 * 60);
  });
});

describe('SignInLimiter memory', () => {
  it('drops keys whose failures have all left the window', () => {
    const clock = fakeClock();
    const limiter = new SignInLimiter({ now: clock.now });
    for (let i = 0; i < 50; i++) limiter.recordFailure(`user${i}`, `192.0.2.${i}`);
    expect(limiter.trackedKeys).toEqual({ usernames: 50, addresses: 50 });
    clock.advance(SIGN_IN_WINDOW_MS);
    limiter.recordFailure('late', '192.0.2.200');
    expect(limiter.trackedKeys).toEqual({ usernames: 1, addresses: 1 });
  });

  it('keeps at most the cap, pushing out keys below their limit before blocked ones', () => {
    const clock = fakeClock();
    const limiter = new SignInLimiter({ now: clock.now, maxUsernames: 20, maxAddresses: 20 });
    for (let i = 0; i < 10; i++) limiter.recordFailure('victim', freshIp());
    const blockedFor = limiter.retryAfter('victim', freshIp());
    expect(blockedFor).toBe(15 * 60);
    // A flood of random usernames, one failure each, from many IPs.
    for (let i = 0; i < 5000; i++) {
      clock.advance(10);
      limiter.recordFailure(`random-${i}`, freshIp());
    }
    expect(limiter.trackedKeys.usernames).toBe(20);
    expect(limiter.trackedKeys.addresses).toBe(20);
    expect(limiter.retryAfter('victim', freshIp())).toBe(blockedFor - 50);
    // The newest flood entries are the ones still tracked.
    for (let i = 0; i < 9; i++) limiter.recordFailure('random-4999', freshIp());
    expect(limiter.retryAfter('random-4999', freshIp())).toBeGreaterThan(0);
  });

  it('when every other tracked key is blocked, still counts a new key, pushing out the block of oldest last failure', () => {
    const clock = fakeClock();
    const limiter = new SignInLimiter({ now: clock.now, maxUsernames: 3 });
    for (const name of ['first', 'second', 'third', 'fourth']) {
      for (let i = 0; i < 10; i++) limiter.recordFailure(name, freshIp());
      clock.advance(MINUTE);
    }
    expect(limiter.trackedKeys.usernames).toBe(3);
    expect(limiter.retryAfter('first', freshIp())).toBe(0);
    for (const name of ['second', 'third', 'fourth']) expect(limiter.retryAfter(name, freshIp())).toBeGreaterThan(0);
  });
});

const placed = (reservations: readonly Reservation[]) => reservations.flatMap((r) => ('attempt' in r ? [r.attempt] : []));

describe('reservations: a guess takes its place in the count before it is checked', () => {
  it('60 concurrent guesses for one username: 10 get a place, the rest are refused for a second while those are checked', () => {
    const clock = fakeClock();
    const limiter = new SignInLimiter({ now: clock.now });
    const reservations = Array.from({ length: 60 }, () => limiter.reserve('kilo-desk', freshIp()));
    const attempts = placed(reservations);
    expect(attempts).toHaveLength(USERNAME_FAILURE_LIMIT);
    for (const refused of reservations.filter((r) => 'retryAfterSeconds' in r)) expect(refused).toEqual({ retryAfterSeconds: 1 });
    // Nine wrong, one right (given back): one more guess may be checked, then the username is locked out.
    for (const attempt of attempts.slice(1)) attempt.failed();
    attempts[0]!.release();
    // Settling twice changes nothing.
    attempts[1]!.failed();
    attempts[0]!.release();
    expect(limiter.retryAfter('kilo-desk', freshIp())).toBe(0);
    placed([limiter.reserve('kilo-desk', freshIp())])[0]!.failed();
    expect(limiter.retryAfter('kilo-desk', freshIp())).toBe(SIGN_IN_WINDOW_MS / 1000);
  });

  it('150 concurrent guesses from one address: 100 get a place', () => {
    const limiter = new SignInLimiter({ now: fakeClock().now });
    const attempts = placed(Array.from({ length: 150 }, (_, i) => limiter.reserve(`user-${i}`, '192.0.2.7')));
    expect(attempts).toHaveLength(ADDRESS_FAILURE_LIMIT);
    for (const attempt of attempts) attempt.failed();
    expect(limiter.retryAfter('someone-else', '192.0.2.7')).toBe(SIGN_IN_WINDOW_MS / 1000);
  });

  it('a refused reservation takes no place in either count', () => {
    const limiter = new SignInLimiter({ now: fakeClock().now });
    for (let i = 0; i < 10; i++) limiter.recordFailure('locked', '192.0.2.8');
    for (let i = 0; i < 200; i++) expect('retryAfterSeconds' in limiter.reserve('locked', '192.0.2.8')).toBe(true);
    // The address holds the 10 failures of the username only.
    expect(placed([limiter.reserve('another', '192.0.2.8')])).toHaveLength(1);
  });

  it('counts the Kelvin sign apart from K: the user store does not fold it either (usernames are ASCII)', () => {
    const limiter = new SignInLimiter({ now: fakeClock().now });
    for (let i = 0; i < 10; i++) limiter.recordFailure('kilo-desk', freshIp());
    expect(limiter.retryAfter('KILO-DESK', freshIp())).toBeGreaterThan(0);
    expect(limiter.retryAfter('\u212Ailo-desk', freshIp())).toBe(0);
  });
});

describe('TotpFailureLimiter', () => {
  it('allows 10 wrong codes per user within 15 minutes, reserved before each check', () => {
    expect(TOTP_FAILURE_LIMIT).toBe(10);
    const clock = fakeClock();
    const limiter = new TotpFailureLimiter({ now: clock.now });
    const attempts = placed(Array.from({ length: 30 }, () => limiter.reserve('user-1')));
    expect(attempts).toHaveLength(10);
    for (const attempt of attempts) attempt.failed();
    expect(limiter.reserve('user-1')).toEqual({ retryAfterSeconds: SIGN_IN_WINDOW_MS / 1000 });
    expect(placed([limiter.reserve('user-2')])).toHaveLength(1);
    clock.advance(SIGN_IN_WINDOW_MS);
    expect(placed([limiter.reserve('user-1')])).toHaveLength(1);
  });
});
