// Trusted origins: the serialized origin of an Origin header, expressions normalized the same way, and the wildcard
// matcher (`*` any run, none included; `?` exactly one), which never builds a regular expression from an expression.
import { describe, expect, it } from 'vitest';
import { normalizedExpression, originTrusted, serializedOrigin } from '../../packages/server/src/accounts/origins.js';
import { wildcardMatches } from '../../packages/mailverify/src/text/wildcard.js';

describe('serializedOrigin', () => {
  it('lower case, the default port of http and https left out, other ports kept', () => {
    expect(serializedOrigin('https://shop.example.com:8443')).toBe('https://shop.example.com:8443');
    expect(serializedOrigin('HTTPS://Shop.Example.COM')).toBe('https://shop.example.com');
    expect(serializedOrigin('https://shop.example.com:443')).toBe('https://shop.example.com');
    expect(serializedOrigin('http://shop.example.com:80')).toBe('http://shop.example.com');
    expect(serializedOrigin('http://shop.example.com:443')).toBe('http://shop.example.com:443');
    expect(serializedOrigin('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(serializedOrigin('http://[::1]:8080')).toBe('http://[::1]:8080');
  });

  it('no origin: absent, `null`, a list, a path, user info, a port out of range', () => {
    for (const header of [undefined, '', 'null', 'NULL', 'https://a.example https://b.example', 'https://a.example, https://b.example',
      'https://a.example/', 'https://a.example/path', 'https://user@a.example', 'https://a.example:65536', 'https://a.example:', 'a.example',
      '://a.example', `https://${'a'.repeat(600)}.example`]) {
      expect(serializedOrigin(header), String(header)).toBeNull();
    }
  });
});

describe('normalizedExpression', () => {
  it('lower case, without the default port of its scheme or a trailing slash', () => {
    expect(normalizedExpression('https://Shop.example.com:443/')).toBe('https://shop.example.com');
    expect(normalizedExpression('http://*.example.com:80')).toBe('http://*.example.com');
    expect(normalizedExpression('https://*.example.com:80')).toBe('https://*.example.com:80');
    expect(normalizedExpression('*')).toBe('*');
  });
});

describe('wildcardMatches', () => {
  it('`*` is any run of characters, none included; `?` exactly one; the rest literally (regex characters too)', () => {
    expect(wildcardMatches('https://*.example.com', 'https://shop.example.com')).toBe(true);
    expect(wildcardMatches('https://*.example.com', 'https://a.b.example.com')).toBe(true);
    expect(wildcardMatches('https://*.example.com', 'https://.example.com')).toBe(true);
    expect(wildcardMatches('https://*.example.com', 'https://example.com')).toBe(false);
    expect(wildcardMatches('https://*.example.com', 'https://shop.example.com.evil.test')).toBe(false);
    expect(wildcardMatches('https://*example.com', 'https://example.com')).toBe(true);
    expect(wildcardMatches('https://shop?.example.com', 'https://shop1.example.com')).toBe(true);
    expect(wildcardMatches('https://shop?.example.com', 'https://shop.example.com')).toBe(false);
    expect(wildcardMatches('https://shop?.example.com', 'https://shop12.example.com')).toBe(false);
    // `.` is a dot, not any character; `+`, `(`, `[` are themselves.
    expect(wildcardMatches('https://a.example.com', 'https://aXexample.com')).toBe(false);
    expect(wildcardMatches('http://a+b(c)[d]', 'http://a+b(c)[d]')).toBe(true);
    expect(wildcardMatches('http://a+b', 'http://aab')).toBe(false);
    expect(wildcardMatches('*', '')).toBe(true);
    expect(wildcardMatches('', '')).toBe(true);
    expect(wildcardMatches('?', '')).toBe(false);
    expect(wildcardMatches('**a**', 'bab')).toBe(true);
    expect(wildcardMatches('*a*b', 'xaxbxb')).toBe(true);
    expect(wildcardMatches('*a*b', 'xaxbxc')).toBe(false);
    expect(wildcardMatches('https://*:8443', 'https://shop.example.com:8443')).toBe(true);
    expect(wildcardMatches('https://*:8443', 'https://shop.example.com')).toBe(false);
  });

  it('agrees with an escaped regular expression on every pattern and text over a small alphabet', () => {
    const alphabet = ['a', 'b', '*', '?'];
    const texts = ['', 'a', 'b', 'ab', 'ba', 'aab', 'abab', 'bbb', 'abba'];
    const patterns: string[] = [''];
    for (let length = 1; length <= 4; length++) {
      for (const prefix of patterns.filter((p) => p.length === length - 1)) for (const c of alphabet) patterns.push(prefix + c);
    }
    for (const pattern of patterns) {
      const regex = new RegExp(`^${pattern.replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 's');
      for (const text of texts) expect(wildcardMatches(pattern, text), `${pattern} ~ ${text}`).toBe(regex.test(text));
    }
  });

  it('a pattern made to backtrack is answered (an exponential matcher would never finish it)', () => {
    // `*a*a*a...*b` against `aaaa...`: exponential for a backtracking regex engine, at most length × length steps here.
    expect(wildcardMatches(`${'*a'.repeat(120)}*b`, 'a'.repeat(500))).toBe(false);
    expect(wildcardMatches(`${'*a'.repeat(120)}*`, 'a'.repeat(500))).toBe(true);
  });
});

describe('originTrusted', () => {
  const expressions = ['https://shop.example.com', 'https://*.shop.example.com:8443', 'http://localhost:30??'];

  it('an Origin some expression matches, case-insensitively, default ports as browsers send them', () => {
    expect(originTrusted(expressions, 'https://shop.example.com')).toBe(true);
    expect(originTrusted(expressions, 'https://SHOP.example.com:443')).toBe(true);
    expect(originTrusted(expressions, 'https://eu.shop.example.com:8443')).toBe(true);
    expect(originTrusted(expressions, 'http://localhost:3000')).toBe(true);
    expect(originTrusted(['HTTPS://Shop.Example.com:443/'], 'https://shop.example.com')).toBe(true);
  });

  it('nothing else: another scheme, host or port, no Origin, `null`, even for `*`', () => {
    expect(originTrusted(expressions, 'http://shop.example.com')).toBe(false);
    expect(originTrusted(expressions, 'https://shop.example.com:8443')).toBe(false);
    expect(originTrusted(expressions, 'https://eu.shop.example.com')).toBe(false);
    expect(originTrusted(expressions, 'http://localhost:300')).toBe(false);
    expect(originTrusted(expressions, 'https://shop.example.com.evil.test')).toBe(false);
    expect(originTrusted(['*'], undefined)).toBe(false);
    expect(originTrusted(['*'], 'null')).toBe(false);
    expect(originTrusted(['null'], 'null')).toBe(false);
    expect(originTrusted(['*'], 'https://any.example')).toBe(true);
    expect(originTrusted([], 'https://shop.example.com')).toBe(false);
  });
});
