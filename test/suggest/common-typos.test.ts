// Typo suggestions on the slips users make most on the 30 commonest mailbox domains (test/suggest/common-typos.ts
// builds the set), and how rarely real domains that are no typo get one: the domains of the disposable-mail list
// the engine ships (services under their own names, none of them a common mailbox domain).
import { describe, expect, it } from 'vitest';
import { disposableDomainData, usableEntries } from '../../packages/mailverify/src/lists/packages.js';
import { createSuggester } from '../../packages/mailverify/src/suggest/suggest.js';
import { THIRTY_COMMON_DOMAINS, commonTypoSet, slipsOf } from './common-typos.js';
import { knownMailboxDomains, percent } from './measure.js';

const RIGHT_FIRST_TARGET = 0.9;
const FALSE_SUGGESTION_LIMIT = 0.005;
const LOCAL_PART = 'jane';
const suggester = createSuggester();

describe('the set of common slips', () => {
  it('has each kind of slip of a domain, once, and not the domain', () => {
    const typos = slipsOf('gmail.com').map(({ typo }) => typo);
    expect(new Set(typos).size).toBe(typos.length);
    expect(typos).not.toContain('gmail.com');
    for (const typo of ['gmil.com', 'gmial.com', 'gmaol.com', 'fmail.com', 'gmaill.com', 'gmail.comm', 'gmail.con', 'gmail.cmo', 'gmail.vom', 'gmail.om']) {
      expect(typos, typo).toContain(typo);
    }
    expect(typos).not.toContain('gmaip.com'); // p is not next to l on its row
    expect(typos).not.toContain('gmail.ner');
    expect(slipsOf('cox.net').map(({ typo }) => typo)).toEqual(expect.arrayContaining(['cox.nte', 'cox.ner', 'coxx.net', 'cox.nett']));
    expect(slipsOf('t-online.de').map(({ typo }) => typo)).not.toContain('tonline.de'); // a hyphen is no letter
  });

  it('covers the 30 domains and leaves out typos that are real domains', () => {
    expect(new Set(THIRTY_COMMON_DOMAINS).size).toBe(30);
    const set = commonTypoSet();
    expect(new Set(set.typos.map(({ intended }) => intended)).size).toBe(30);
    const known = knownMailboxDomains();
    for (const domain of THIRTY_COMMON_DOMAINS) expect(known.has(domain), domain).toBe(true);
    expect(set.typos.some(({ typo }) => known.has(typo))).toBe(false);
    expect(set.droppedKnown + set.droppedUnrelated).toBeGreaterThan(0); // e.g. mail.ru → mil.ru, a real domain
    expect(set.typos.length).toBe(set.generated - set.droppedUnparsable - set.droppedKnown - set.droppedUnrelated);
  });
});

describe('suggestions for the common slips', () => {
  it(`put the right domain first for at least ${RIGHT_FIRST_TARGET * 100}% of them`, () => {
    const { typos, generated, droppedUnparsable, droppedKnown, droppedUnrelated } = commonTypoSet();
    const misses: string[] = [];
    for (const { typo, intended } of typos) {
      const first = suggester.suggest(LOCAL_PART, typo)[0];
      if (first !== `${LOCAL_PART}@${intended}`) misses.push(`${typo} → ${first ?? 'none'} (${intended})`);
    }
    const right = typos.length - misses.length;
    console.log(
      `common slips: ${generated} generated, ${droppedUnparsable + droppedKnown + droppedUnrelated} left out ` +
        `(${droppedKnown} mailbox domains, ${droppedUnrelated} unrelated real domains, ${droppedUnparsable} not domains); ` +
        `right first ${right} of ${typos.length} (${percent(right, typos.length)})`,
    );
    expect(right / typos.length, misses.join('\n')).toBeGreaterThanOrEqual(RIGHT_FIRST_TARGET);
  });
});

describe('suggestions for real domains that are no typo', () => {
  it(`are given for at most ${FALSE_SUGGESTION_LIMIT * 100}% of the disposable-mail services' domains`, () => {
    const known = knownMailboxDomains();
    const domains = usableEntries(disposableDomainData()).filter((domain) => !known.has(domain));
    expect(domains.length).toBeGreaterThan(1000);
    const suggested = domains.filter((domain) => suggester.suggest(LOCAL_PART, domain).length > 0);
    console.log(`disposable-mail domains with a suggestion: ${suggested.length} of ${domains.length} (${percent(suggested.length, domains.length)}): ${suggested.join(' ')}`);
    expect(suggested.length / domains.length).toBeLessThanOrEqual(FALSE_SUGGESTION_LIMIT);
  });
});
