import { afterEach, describe, expect, it, vi } from 'vitest';
import { DomainSet, DomainSetUnion, normalizeDomain } from '../../packages/mailverify/src/lists/domain-set.js';

describe('DomainSet lookups', () => {
  const set = new DomainSet(['mailinator.com', 'mail.example.org']);

  it('matches a listed domain and every subdomain of it', () => {
    expect(set.matches('mailinator.com')).toBe(true);
    expect(set.matches('x.mailinator.com')).toBe(true);
    expect(set.matches('a.b.c.mailinator.com')).toBe(true);
    expect(set.match('a.b.mailinator.com')).toBe('mailinator.com');
  });

  it('matches on label boundaries only, and never a parent of an entry', () => {
    expect(set.matches('mymailinator.com')).toBe(false);
    expect(set.matches('mailinator.com.evil.net')).toBe(false);
    expect(set.matches('com')).toBe(false);
    expect(set.matches('example.org')).toBe(false);
    expect(set.matches('smtp.example.org')).toBe(false);
    expect(set.matches('in.mail.example.org')).toBe(true);
  });

  it('folds ASCII case and ignores a trailing dot', () => {
    expect(set.matches('X.MailInator.COM')).toBe(true);
    expect(set.matches('mail.example.org.')).toBe(true);
  });

  it('lets a listed public suffix match only itself', () => {
    const suffixes = new DomainSet(['pp.ua', 'com.ar', 'dns.army']);
    expect(suffixes.matches('pp.ua')).toBe(true);
    expect(suffixes.matches('shop.pp.ua')).toBe(false);
    expect(suffixes.matches('acme.com.ar')).toBe(false);
    expect(suffixes.matches('x.dns.army')).toBe(false);
  });

  it('handles the longest possible names', () => {
    const deep = `${'a.'.repeat(125)}mailinator.com`;
    expect(deep.split('.')).toHaveLength(127);
    expect(set.matches(deep)).toBe(true);
    expect(set.matches(`${'a.'.repeat(125)}example.com`)).toBe(false);
  });

  it('is empty-safe', () => {
    expect(new DomainSet().matches('mailinator.com')).toBe(false);
    expect(set.matches('')).toBe(false);
  });
});

describe('DomainSet lookups cost one hash lookup per label count that entries have', () => {
  afterEach(() => vi.restoreAllMocks());

  it('looks up only the parents whose label count some entry has', () => {
    const twoLabels = new DomainSet(['mailinator.com', 'yopmail.com']);
    const has = vi.spyOn(Set.prototype, 'has');
    expect(twoLabels.matches('a.b.c.d.mailinator.com')).toBe(true);
    expect(twoLabels.matches('a.b.c.d.example.com')).toBe(false);
    const calls = has.mock.calls.length;
    vi.restoreAllMocks();
    expect(calls).toBe(2);
  });
});

describe('DomainSet changes', () => {
  it('adds and deletes entries, reporting whether anything changed', () => {
    const set = new DomainSet();
    expect(set.add('Example.COM.')).toBe(true);
    expect(set.add('example.com')).toBe(false);
    expect(set.add('not a domain')).toBe(false);
    expect(set.size).toBe(1);
    expect([...set]).toEqual(['example.com']);
    expect(set.hasEntry('EXAMPLE.com')).toBe(true);
    expect(set.delete('example.com')).toBe(true);
    expect(set.delete('example.com')).toBe(false);
    expect(set.matches('x.example.com')).toBe(false);
  });

  it('deletes the exact entry only: a subdomain of a listed domain still matches through it', () => {
    const set = new DomainSet(['example.com']);
    expect(set.delete('x.example.com')).toBe(false);
    expect(set.matches('x.example.com')).toBe(true);
  });

  it('builds from any iterable, skipping what is not a host name', () => {
    const set = new DomainSet(new Set(['a.org', 'b@c.org', '', 'b.org']));
    expect([...set].sort()).toEqual(['a.org', 'b.org']);
  });
});

describe('normalizeDomain', () => {
  it('stores lower-case A-labels without a trailing dot', () => {
    expect(normalizeDomain(' Mail.Example.ORG. ')).toBe('mail.example.org');
    expect(normalizeDomain('müll.email')).toBe('xn--mll-hoa.email');
  });

  it('refuses what is not a host name', () => {
    for (const bad of ['', ' ', '.', 'a..b', 'ywoe@mailed.ro', 'a b.com', '.example.com']) {
      expect(normalizeDomain(bad), bad).toBeNull();
    }
  });
});

describe('DomainSetUnion', () => {
  const sets = [
    new DomainSet(['mailinator.com', 'dns.army', 'co.uk']),
    new DomainSet(['gmail.com', 'mail.example.org', 'mailinator.com']),
    new DomainSet(['duck.com', 'x.duck.com']),
  ];
  const union = new DomainSetUnion(sets);

  it('answers every set in one lookup, bit i for set i, as each set would', () => {
    const domains = [
      'mailinator.com', 'x.mailinator.com', 'MAILINATOR.COM.', 'gmail.com', 'a.gmail.com', 'example.org',
      'mail.example.org', 'a.mail.example.org', 'duck.com', 'x.duck.com', 'y.x.duck.com', 'dns.army', 'me.dns.army',
      'co.uk', 'acme.co.uk', 'unlisted.net', 'com', '',
    ];
    for (const domain of domains) {
      const expected = sets.reduce((bits, set, i) => bits | (set.matches(domain) ? 1 << i : 0), 0);
      expect(union.matches(domain), domain).toBe(expected);
    }
    expect(union.matches('x.mailinator.com')).toBe(0b011);
    expect(union.matches('someone.dns.army')).toBe(0); // a listed public suffix covers only itself
  });

  it('answers 0 for a union of empty sets', () => {
    expect(new DomainSetUnion([new DomainSet(), new DomainSet()]).matches('gmail.com')).toBe(0);
  });
});
