// Throttling rules over sliding windows, on a fake clock: the exact limit per period, Retry-After until the oldest
// counted submission leaves the window, Global and IPAddress scopes, several rules at once, slots given back, rules
// changed between submissions, submissions counted while a user has no rules, and memory bounded: a day of
// submissions at most, the newest KEPT_SUBMISSIONS (or the largest limit) per log, forgotten once nothing is left.
import { describe, expect, it } from 'vitest';
import { KEPT_SUBMISSIONS, PERIOD_MS, Throttle } from '../../packages/server/src/accounts/throttling.js';
import type { ThrottlingRule } from '../../packages/server/src/accounts/types.js';

function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let t = Date.UTC(2026, 0, 1);
  return { now: () => t, advance: (ms) => (t += ms) };
}

const rule = (limit: number, period: ThrottlingRule['period'], scope: ThrottlingRule['scope'] = 'Global'): ThrottlingRule => ({ limit, period, scope });

/** Submits once; the Retry-After in seconds when refused, 0 when admitted. */
function submit(throttle: Throttle, rules: readonly ThrottlingRule[], user = 'u1', ip = '192.0.2.1'): number {
  const decision = throttle.take(user, ip, rules);
  return decision.admitted ? 0 : decision.retryAfterSeconds;
}

describe('Throttle', () => {
  it('allows `limit` submissions in a sliding window and refuses the next until the oldest leaves it', () => {
    const clock = fakeClock();
    const throttle = new Throttle(clock.now);
    const rules = [rule(3, 'Minute')];
    for (let i = 0; i < 3; i++) {
      expect(submit(throttle, rules)).toBe(0);
      clock.advance(10_000);
    }
    // At 30 s: the first (at 0 s) leaves the window at 60 s.
    expect(submit(throttle, rules)).toBe(30);
    clock.advance(29_500);
    // Half a second left: rounded up, never 0 while refused.
    expect(submit(throttle, rules)).toBe(1);
    clock.advance(500);
    expect(submit(throttle, rules)).toBe(0);
    // Now the one of 10 s is the oldest counted.
    expect(submit(throttle, rules)).toBe(10);
  });

  it('knows hours and days', () => {
    expect(PERIOD_MS).toEqual({ Minute: 60_000, Hour: 3_600_000, Day: 86_400_000 });
    const clock = fakeClock();
    const throttle = new Throttle(clock.now);
    expect(submit(throttle, [rule(1, 'Day')])).toBe(0);
    clock.advance(3_600_000);
    expect(submit(throttle, [rule(1, 'Day')])).toBe(23 * 3600);
    // The one of an hour ago has just left an hour's window.
    expect(submit(throttle, [rule(2, 'Hour')])).toBe(0);
    expect(submit(throttle, [rule(2, 'Hour')])).toBe(0);
    expect(submit(throttle, [rule(2, 'Hour')])).toBe(3600);
  });

  it('counts Global per user and IPAddress per user and client IP', () => {
    const throttle = new Throttle(fakeClock().now);
    const perIp = [rule(1, 'Minute', 'IPAddress')];
    expect(submit(throttle, perIp, 'u1', '192.0.2.1')).toBe(0);
    expect(submit(throttle, perIp, 'u1', '192.0.2.1')).toBe(60);
    expect(submit(throttle, perIp, 'u1', '192.0.2.2')).toBe(0);
    expect(submit(throttle, perIp, 'u2', '192.0.2.1')).toBe(0);
    const global = [rule(2, 'Minute')];
    // The user's two submissions from two IPs make two.
    expect(submit(throttle, global, 'u1', '192.0.2.3')).toBe(60);
    expect(submit(throttle, global, 'u3', '192.0.2.1')).toBe(0);
  });

  it('applies every rule: the longest wait answers', () => {
    const clock = fakeClock();
    const throttle = new Throttle(clock.now);
    const rules = [rule(2, 'Minute'), rule(3, 'Hour')];
    expect(submit(throttle, rules)).toBe(0);
    expect(submit(throttle, rules)).toBe(0);
    expect(submit(throttle, rules)).toBe(60);
    clock.advance(60_000);
    expect(submit(throttle, rules)).toBe(0);
    // Two in the minute, three in the hour: the hour's oldest leaves first at 1 h.
    expect(submit(throttle, rules)).toBe(3600 - 60);
  });

  it('uncounts a slot given back, once', () => {
    const throttle = new Throttle(fakeClock().now);
    const rules = [rule(1, 'Minute')];
    const first = throttle.take('u1', '192.0.2.1', rules);
    expect(first.admitted).toBe(true);
    expect(submit(throttle, rules)).toBe(60);
    if (first.admitted) {
      first.slot.giveBack();
      first.slot.giveBack();
    }
    expect(submit(throttle, rules)).toBe(0);
    expect(submit(throttle, rules)).toBe(60);
  });

  it('reads the rules at each submission: counted submissions still count under a new rule', () => {
    const clock = fakeClock();
    const throttle = new Throttle(clock.now);
    for (let i = 0; i < 3; i++) expect(submit(throttle, [rule(10, 'Minute', 'IPAddress')])).toBe(0);
    // A Global rule added: the three submissions made under the IP rule count toward it.
    expect(submit(throttle, [rule(3, 'Minute')])).toBe(60);
    // Raised: let through.
    expect(submit(throttle, [rule(4, 'Minute')])).toBe(0);
    // No rule: nothing refused, and still counted.
    expect(submit(throttle, [])).toBe(0);
    expect(submit(throttle, [])).toBe(0);
    expect(throttle.size).toBe(2);
    // Six made, under rules or none: a rule set again counts them all.
    expect(submit(throttle, [rule(6, 'Minute')])).toBe(60);
    expect(submit(throttle, [rule(7, 'Minute')])).toBe(0);
  });

  it('keeps a day of submissions whatever the periods of the rules of the moment: a longer period added later sees them', () => {
    const clock = fakeClock();
    const throttle = new Throttle(clock.now);
    for (let i = 0; i < 3; i++) {
      expect(submit(throttle, [rule(1, 'Minute')])).toBe(0);
      clock.advance(3_600_000);
    }
    // Three in the last day (the first 3 hours ago): a daily rule of 3 refuses until it is 24 hours old.
    expect(submit(throttle, [rule(3, 'Day')])).toBe(21 * 3600);
    clock.advance(21 * 3_600_000);
    expect(submit(throttle, [rule(3, 'Day')])).toBe(0);
  });

  it(`keeps at most the newest ${KEPT_SUBMISSIONS} per log, or a larger limit of the user's rules`, () => {
    const clock = fakeClock();
    const throttle = new Throttle(clock.now);
    for (let i = 0; i < KEPT_SUBMISSIONS + 5; i++) {
      expect(submit(throttle, [])).toBe(0);
      clock.advance(10);
    }
    // Every rule up to the cap is exact; one above it sees only the cap.
    expect(submit(throttle, [rule(KEPT_SUBMISSIONS, 'Day')])).toBeGreaterThan(0);
    expect(submit(throttle, [rule(KEPT_SUBMISSIONS + 2, 'Day')])).toBe(0);
    // Under a rule of a larger limit, the log keeps that many: exact for it.
    const big = [rule(KEPT_SUBMISSIONS + 10, 'Day')];
    for (let i = 0; i < 9; i++) expect(submit(throttle, big)).toBe(0);
    expect(submit(throttle, big)).toBeGreaterThan(0);
  });

  it('forgets logs with nothing left in the last day', () => {
    const clock = fakeClock();
    const throttle = new Throttle(clock.now);
    for (let user = 0; user < 100; user++) submit(throttle, [rule(5, 'Minute', 'IPAddress')], `user-${user}`, `198.51.100.${user}`);
    // A Global and an IPAddress log per user, kept for a day.
    expect(throttle.size).toBe(200);
    clock.advance(61_000);
    submit(throttle, [rule(5, 'Minute')], 'other');
    expect(throttle.size).toBe(202);
    clock.advance(86_400_000);
    submit(throttle, [], 'another');
    expect(throttle.size).toBe(2);
  });
});
