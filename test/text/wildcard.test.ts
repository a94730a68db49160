// The wildcard matcher of override rules and trusted origins, checked against a regular expression built from the
// same pattern (escaped, `*` → `.*`, `?` → `.` over code points) on every small pattern and text of a few characters.
import { describe, expect, it } from 'vitest';
import { compileWildcard, wildcardMatches } from '../../packages/mailverify/src/text/wildcard.js';

const ALPHABET = ['a', 'b', '.', 'é', '😀'];

function reference(pattern: string): RegExp {
  const body = [...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, 'su');
}

function* words(alphabet: readonly string[], maxLength: number): Generator<string> {
  yield '';
  let level = [''];
  for (let length = 1; length <= maxLength; length++) {
    level = level.flatMap((word) => alphabet.map((c) => word + c));
    yield* level;
  }
}

describe('wildcards', () => {
  it('compileWildcard agrees with the reference on every pattern of up to 4 characters and text of up to 4', () => {
    const texts = [...words(ALPHABET, 4)];
    let checked = 0;
    for (const pattern of words([...ALPHABET.slice(0, 3), '😀', '*', '?'], 4)) {
      const compiled = compileWildcard(pattern);
      const regex = reference(pattern);
      for (const text of texts) {
        const expected = regex.test(text);
        if (compiled(text) !== expected) throw new Error(`${JSON.stringify(pattern)} on ${JSON.stringify(text)}: expected ${expected}`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1_000_000);
  });

  it('`?` is one code point, not one UTF-16 unit, on both paths', () => {
    expect(compileWildcard('a?b')('a😀b')).toBe(true);
    expect(compileWildcard('a??b')('a😀b')).toBe(false);
    expect(wildcardMatches([...'a?b'], [...'a😀b'])).toBe(true);
  });

  it('pieces of a star pattern must not overlap the fixed end', () => {
    expect(compileWildcard('ab*ba')('aba')).toBe(false);
    expect(compileWildcard('ab*ba')('abba')).toBe(true);
    expect(compileWildcard('*x*x*')('x')).toBe(false);
    expect(compileWildcard('*x*x*')('xx')).toBe(true);
  });
});
