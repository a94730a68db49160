// The top-level check answers from its per-label memory exactly as a full public-suffix parse would.
import { parse } from 'tldts';
import { describe, expect, it } from 'vitest';
import { hasPublicTopLevel } from '../../packages/mailverify/src/domain/top-level.js';

const SPECIAL_USE = ['test', 'example', 'invalid', 'localhost', 'local', 'onion', 'alt'];

describe('hasPublicTopLevel', () => {
  it('agrees with a full parse for every two- and three-letter label, under names that list rules of their own', () => {
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const topLevels = ['museum', 'kawasaki', 'xn--p1ai', 'amazon', ...SPECIAL_USE];
    for (const a of letters) for (const b of letters) topLevels.push(a + b, ...[...letters].map((c) => a + b + c));
    // www first: under za (only co.za, ac.za... are listed) the first domain seen must not decide for the others.
    const names = ['www', 'co', 'ac', 'gov', 'city.kawasaki', 'x.co', 'blogspot', ''];
    let public_ = 0;
    for (const topLevel of topLevels) {
      for (const name of names) {
        const domain = name === '' ? topLevel : `${name}.${topLevel}`;
        const expected = parse(domain).isIcann === true && !SPECIAL_USE.includes(topLevel);
        if (expected) public_++;
        if (hasPublicTopLevel(domain) !== expected) expect([domain, hasPublicTopLevel(domain)]).toEqual([domain, expected]);
      }
    }
    expect(public_).toBeGreaterThan(2000);
    expect(hasPublicTopLevel('www.za')).toBe(false);
    expect(hasPublicTopLevel('example.co.za')).toBe(true);
    expect(hasPublicTopLevel('mail.home.arpa')).toBe(false);
  });
});
