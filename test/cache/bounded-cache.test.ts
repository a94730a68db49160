// The engine's bounded cache (packages/mailverify/src/cache/bounded-cache.ts): least recently used out first, a time
// to live checked on reading, on a clock the test moves.
import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../packages/mailverify/src/cache/bounded-cache.js';

describe('BoundedCache', () => {
  it('keeps at most max entries, pushing out the least recently used one', () => {
    const cache = new BoundedCache<string, number>({ max: 2 });
    cache.set('a', 1).set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the more recently used
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.size]).toEqual([1, undefined, 3, 2]);
    cache.set('a', 10); // replacing counts as a use, and keeps one entry
    cache.set('d', 4);
    expect([cache.get('a'), cache.get('c'), cache.get('d'), cache.size]).toEqual([10, undefined, 4, 2]);
  });

  it("forgets an entry once its time to live is over, the cache's or the one set gave", () => {
    let now = 1_000;
    const cache = new BoundedCache<string, string>({ max: 10, ttl: 100, now: () => now });
    cache.set('default', 'x');
    cache.set('short', 'y', { ttl: 10 });
    cache.set('long', 'z', { ttl: 1_000 });
    now += 10;
    expect([cache.get('default'), cache.get('short'), cache.get('long')]).toEqual(['x', undefined, 'z']);
    now += 90;
    expect([cache.get('default'), cache.get('long'), cache.size]).toEqual([undefined, 'z', 1]);
  });

  it('keeps entries without a time to live until they are pushed out or deleted', () => {
    let now = 0;
    const cache = new BoundedCache<number, number>({ max: 3, now: () => now });
    cache.set(1, 1);
    now = Number.MAX_SAFE_INTEGER;
    expect(cache.get(1)).toBe(1);
    expect([cache.delete(1), cache.delete(1), cache.get(1)]).toEqual([true, false, undefined]);
  });

  it('refuses a max that is not a whole number from 1', () => {
    for (const max of [0, -1, 1.5, Number.NaN]) expect(() => new BoundedCache({ max })).toThrow(RangeError);
  });
});
