// The free-provider list is screened (packages/mailverify/src/lists/free-providers.ts): documentation names, names
// under no delegated suffix and typos of the big providers are no free providers, and a typo domain gets a suggestion
// instead.
import { describe, expect, it } from 'vitest';
import { parse } from 'tldts';
import { createLists } from '../../packages/mailverify/src/lists/lists.js';
import { exclusionReason, screenFreeProviders, type ExclusionReason } from '../../packages/mailverify/src/lists/free-providers.js';
import { freeProviderDomainData, usableEntries } from '../../packages/mailverify/src/lists/packages.js';
import { RESERVED_DOMAINS, TYPO_DOMAINS } from '../../packages/mailverify/src/lists/data/free-provider-exclusions.js';
import { namesOf } from '../../packages/mailverify/src/lists/data/sourced.js';
import { normalizeDomain } from '../../packages/mailverify/src/lists/domain-set.js';
import { createSuggester } from '../../packages/mailverify/src/suggest/suggest.js';

const lists = createLists();
const suggester = createSuggester();
const upstream = usableEntries(freeProviderDomainData());

/**
 * How many package entries each rule takes out (email-providers 2.26.0); docs/lists.md quotes these. A package update
 * that moves them fails here: look at what changed, then update both.
 */
const REMOVED: Record<ExclusionReason, number> = {
  reserved: 1,
  'no-public-suffix': 7,
  'suffix-typo': 5,
  'listed-typo': 12,
};

describe('free providers: what is not one', () => {
  it('the documentation name example.com and the typo domains hotmail.con, yaho.com, gmail.co are no free providers', () => {
    for (const domain of ['example.com', 'hotmail.con', 'yaho.com', 'gmail.co', 'gmail.om', 'hotmail.cm']) {
      expect(upstream, domain).toContain(domain); // the package lists them
      expect(lists.isFreeProvider(domain), domain).toBe(false);
    }
  });

  it('a typo domain of the list gets a suggestion instead', () => {
    expect(suggester.suggest('jane', 'hotmail.con')).toEqual(['jane@hotmail.com']);
    expect(suggester.suggest('jane', 'yaho.com')).toEqual(['jane@yahoo.com']);
    expect(suggester.suggest('jane', 'gmail.co')).toEqual(['jane@gmail.com']);
  });

  it('special-use names never are, with their subdomains', () => {
    for (const domain of ['example.com', 'mail.example.org', 'example', 'a.test', 'localhost', 'x.invalid', 'printer.local',
      'abc.onion', 'router.home.arpa', 'x.alt']) {
      expect(exclusionReason(domain), domain).toBe('reserved');
    }
    expect(exclusionReason('gmail.com')).toBeNull();
    expect(exclusionReason('example.de')).toBeNull(); // a registered name, not reserved
  });

  it('a suffix typo is the exact name of a common domain on a typo form of its suffix', () => {
    expect(exclusionReason('gmail.cm')).toBe('suffix-typo');
    expect(exclusionReason('outlook.co')).toBe('suffix-typo');
    expect(exclusionReason('aol.co')).toBe('suffix-typo');
    expect(exclusionReason('gmail.con')).toBe('no-public-suffix');
    expect(exclusionReason('boxmail.co')).toBeNull(); // a slip of foxmail.com's name as well: a provider of its own
    expect(exclusionReason('hotmail.co.uk')).toBeNull();
    expect(exclusionReason('gmx.co.uk')).toBeNull();
  });

  it('options are not screened: a caller who lists a name means it', () => {
    expect(createLists({ freeProviderDomains: ['example.com'] }).isFreeProvider('example.com')).toBe(true);
  });
});

describe('free providers: the whole package list, screened', () => {
  const screened = screenFreeProviders(upstream);
  const reserved = namesOf(RESERVED_DOMAINS);
  const isReserved = (domain: string): boolean => reserved.some((name) => domain === name || domain.endsWith(`.${name}`));

  it('every entry still flagged is under a delegated suffix, not special-use, and not corrected by the suggester', () => {
    const flagged = upstream.filter((domain) => lists.isFreeProvider(domain));
    expect(flagged.length).toBeGreaterThan(5_000);
    const wrong: string[] = [];
    for (const domain of flagged) {
      if (parse(domain).isIcann !== true) wrong.push(`${domain}: no delegated suffix`);
      if (isReserved(domain)) wrong.push(`${domain}: special-use`);
      const suggestion = suggester.suggest('x', domain)[0];
      if (suggestion !== undefined) wrong.push(`${domain}: corrected to ${suggestion.slice(2)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('takes out the recorded number of entries for each reason', () => {
    const counts: Record<string, number> = {};
    for (const { reason } of screened.removed) counts[reason] = (counts[reason] ?? 0) + 1;
    console.info(
      `free providers: ${upstream.length} usable package entries, ${screened.kept.length} kept, removed: ` +
        Object.entries(counts).map(([reason, n]) => `${n} ${reason}`).join(', '),
    );
    expect(counts).toEqual(REMOVED);
    expect(screened.kept.length + screened.removed.length).toBe(upstream.length);
  });

  it('takes out nothing but what a rule or a table names', () => {
    for (const { domain, reason } of screened.removed) expect(exclusionReason(domain), domain).toBe(reason);
    for (const domain of screened.kept) expect(exclusionReason(domain), domain).toBeNull();
  });
});

describe('the exclusion tables', () => {
  it('hold stored-form names, each once, with a source per group', () => {
    for (const groups of [RESERVED_DOMAINS, TYPO_DOMAINS]) {
      const names = namesOf(groups);
      expect(names.map((name) => normalizeDomain(name))).toEqual(names);
      expect(new Set(names).size).toBe(names.length);
      for (const group of groups) expect(group.source.length).toBeGreaterThan(20);
    }
  });

  it('list as typos only domains the suggester corrects to the domain named', () => {
    for (const group of TYPO_DOMAINS) {
      for (const typo of group.names) expect(suggester.suggest('x', typo)[0], typo).toBe(`x@${group.intended}`);
    }
  });
});
