// Verified Basic credentials remembered for at most 60 seconds under a keyed hash, with a fake clock: exact matches
// only, expiry, the stamp given back, a user's entries forgotten at once, the bound on entries, and neither the
// username nor the password kept in memory.
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REMEMBERED_CREDENTIAL_MS, RememberedCredentials } from '../../packages/server/src/accounts/remembered-credentials.js';

const ALICE = '0b6c1d6e-6a4f-4d8a-9a57-2f4d3f0c1a11';
const BOB = '7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
const STAMP = { passwordVersion: 3, etag: 'etag-1' };

function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let t = Date.UTC(2026, 0, 1);
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('RememberedCredentials', () => {
  it('recalls the exact username and password it was given, with the user and stamp', () => {
    const remembered = new RememberedCredentials({ now: fakeClock().now });
    remembered.remember('alice', 's3cret', ALICE, STAMP);
    expect(remembered.recall('alice', 's3cret')).toEqual({ userId: ALICE, passwordVersion: 3, etag: 'etag-1' });
    expect(remembered.recall('alice', 's3cret ')).toBeUndefined();
    expect(remembered.recall('alice', 'S3cret')).toBeUndefined();
    expect(remembered.recall('bob', 's3cret')).toBeUndefined();
  });

  it('keeps the username and password apart (no pair is read as another)', () => {
    const remembered = new RememberedCredentials({ now: fakeClock().now });
    remembered.remember('a:b', 'c', ALICE, STAMP);
    remembered.remember('x', '', BOB, STAMP);
    expect(remembered.recall('a', 'b:c')).toBeUndefined();
    expect(remembered.recall('a:b:c', '')).toBeUndefined();
    expect(remembered.recall('', 'x')).toBeUndefined();
    expect(remembered.recall('a:b', 'c')?.userId).toBe(ALICE);
  });

  it('forgets a credential 60 seconds after it was verified', () => {
    const clock = fakeClock();
    const remembered = new RememberedCredentials({ now: clock.now });
    remembered.remember('alice', 's3cret', ALICE, STAMP);
    clock.advance(REMEMBERED_CREDENTIAL_MS - 1);
    expect(remembered.recall('alice', 's3cret')?.userId).toBe(ALICE);
    clock.advance(1);
    expect(remembered.recall('alice', 's3cret')).toBeUndefined();
    expect(remembered.size).toBe(0);
  });

  it('starts the 60 seconds again when the credential is verified again', () => {
    const clock = fakeClock();
    const remembered = new RememberedCredentials({ now: clock.now });
    remembered.remember('alice', 's3cret', ALICE, STAMP);
    clock.advance(50_000);
    remembered.remember('alice', 's3cret', ALICE, { passwordVersion: 3, etag: 'etag-2' });
    clock.advance(50_000);
    expect(remembered.recall('alice', 's3cret')).toEqual({ userId: ALICE, passwordVersion: 3, etag: 'etag-2' });
    expect(remembered.size).toBe(1);
  });

  it('forgets every credential of a user at once, and only that user', () => {
    const remembered = new RememberedCredentials({ now: fakeClock().now });
    remembered.remember('alice', 'one', ALICE, STAMP);
    remembered.remember('ALICE', 'one', ALICE, STAMP);
    remembered.remember('alice', 'one', ALICE, STAMP);
    remembered.remember('bob', 'two', BOB, STAMP);
    remembered.forgetUser(ALICE);
    expect(remembered.recall('alice', 'one')).toBeUndefined();
    expect(remembered.recall('ALICE', 'one')).toBeUndefined();
    expect(remembered.recall('bob', 'two')?.userId).toBe(BOB);
    expect(remembered.size).toBe(1);
    // Remembered again after being forgotten, and forgotten again.
    remembered.remember('alice', 'one', ALICE, STAMP);
    expect(remembered.recall('alice', 'one')?.userId).toBe(ALICE);
    remembered.forgetUser(ALICE);
    expect(remembered.recall('alice', 'one')).toBeUndefined();
  });

  it('follows a credential that changed hands (a username renamed, then taken by another user)', () => {
    const remembered = new RememberedCredentials({ now: fakeClock().now });
    remembered.remember('carol', 'same', ALICE, STAMP);
    remembered.remember('carol', 'same', BOB, STAMP);
    remembered.forgetUser(ALICE);
    expect(remembered.recall('carol', 'same')?.userId).toBe(BOB);
    remembered.forgetUser(BOB);
    expect(remembered.recall('carol', 'same')).toBeUndefined();
  });

  it('keeps at most maxEntries, pushing out the least recently used', () => {
    const remembered = new RememberedCredentials({ now: fakeClock().now, maxEntries: 3 });
    remembered.remember('u1', 'p', ALICE, STAMP);
    remembered.remember('u2', 'p', ALICE, STAMP);
    remembered.remember('u3', 'p', BOB, STAMP);
    expect(remembered.recall('u1', 'p')?.userId).toBe(ALICE);
    remembered.remember('u4', 'p', BOB, STAMP);
    expect(remembered.size).toBe(3);
    expect(remembered.recall('u2', 'p')).toBeUndefined();
    expect(remembered.recall('u1', 'p')?.userId).toBe(ALICE);
    remembered.forgetUser(BOB);
    expect(remembered.size).toBe(1);
    expect(remembered.recall('u1', 'p')?.userId).toBe(ALICE);
  });

  it('keeps neither the username nor the password', () => {
    const remembered = new RememberedCredentials({ now: fakeClock().now });
    remembered.remember('distinctive-user', 'distinctive-password', ALICE, STAMP);
    const memory = inspect(remembered, { depth: Infinity, showHidden: true, maxArrayLength: Infinity, maxStringLength: Infinity });
    expect(memory).toContain(ALICE);
    expect(memory).not.toContain('distinctive');
  });

  it('keys its entries differently in each process (a random key)', () => {
    const clock = fakeClock();
    const first = new RememberedCredentials({ now: clock.now });
    const second = new RememberedCredentials({ now: clock.now });
    first.remember('alice', 's3cret', ALICE, STAMP);
    second.remember('alice', 's3cret', ALICE, STAMP);
    const keysOf = (r: RememberedCredentials): string[] =>
      [...inspect(r, { depth: Infinity, showHidden: true }).matchAll(/'([A-Za-z0-9_-]{43})'/g)].map((m) => m[1]!);
    expect(keysOf(first).length).toBeGreaterThan(0);
    expect(keysOf(first).filter((key) => keysOf(second).includes(key))).toEqual([]);
  });
});
