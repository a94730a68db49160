// The measure of typo suggestions (test/suggest/measure.ts says how the sets are made): at least 90% of the real typos
// from public sources and of the single-slip typos of the common domains get the right suggestion first, and no real
// unrelated domain gets any. The figures are kept in FIGURES.md; SUGGEST_UPDATE=1 rewrites it.
import { readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSuggester } from '../../packages/mailverify/src/suggest/suggest.js';
import {
  FIGURES_FILE,
  commonDomains,
  figuresMarkdown,
  knownMailboxDomains,
  measure,
  type Measurement,
  parsesAsDomain,
  realTypos,
  typosOf,
  unrelatedDomains,
} from './measure.js';

const RIGHT_FIRST_TARGET = 0.9;

describe('the measure', () => {
  it('generates every single slip, once, deterministically', () => {
    const typos = typosOf('ab.c');
    // Insertions 5 × 38, deletions 4, substitutions 4 × 37, swaps 3, less the repeats and the domain itself.
    expect(typos).toEqual(typosOf('ab.c'));
    expect(new Set(typos).size).toBe(typos.length);
    expect(typos).not.toContain('ab.c');
    for (const typo of ['b.c', 'a.c', 'abc', 'ab.', 'xab.c', 'a-b.c', 'ab.cd', 'ab..c', 'zb.c', 'a-.c', 'ba.c', 'a.bc', 'abc.']) {
      expect(typos, typo).toContain(typo);
    }
    expect(typosOf('gmail.com')).toEqual(expect.arrayContaining(['gmial.com', 'gmai.com', 'gmaill.com', 'gmail.co', 'gmail.cm', 'gmail.con', 'gmailc.om']));
  });

  it('uses at least 1,000 real unrelated domains, each once, none of them a mailbox domain of the tables', () => {
    const unrelated = unrelatedDomains();
    expect(unrelated.length).toBeGreaterThanOrEqual(1000);
    expect(new Set(unrelated).size).toBe(unrelated.length);
    const known = knownMailboxDomains();
    for (const domain of unrelated) {
      expect(parsesAsDomain(domain), domain).toBe(true);
      expect(known.has(domain), domain).toBe(false);
    }
    expect(commonDomains().length).toBeGreaterThanOrEqual(200);
  });

  it('uses at least 150 real typo pairs, each pointing at a common domain', () => {
    const pairs = realTypos();
    expect(pairs.length).toBeGreaterThanOrEqual(150);
    const common = new Set(commonDomains());
    for (const [typo, intended] of pairs) expect(common.has(intended), `${typo} → ${intended}`).toBe(true);
  });
});

describe('typo suggestions, measured', () => {
  let result: Measurement;
  beforeAll(() => {
    result = measure(createSuggester());
  });

  it(`put the right suggestion first for at least ${RIGHT_FIRST_TARGET * 100}% of the real typos`, () => {
    const { figures, realMisses } = result;
    expect(figures.realRightFirst / figures.realMeasured, `misses: ${JSON.stringify(realMisses)}`).toBeGreaterThanOrEqual(RIGHT_FIRST_TARGET);
  });

  it(`put the right suggestion first for at least ${RIGHT_FIRST_TARGET * 100}% of the single-slip typos`, () => {
    const { figures } = result;
    expect(figures.rightFirst / figures.measured).toBeGreaterThanOrEqual(RIGHT_FIRST_TARGET);
  });

  it('suggest nothing for any of the unrelated domains', () => {
    expect(result.falseSuggestions).toEqual([]);
  });

  it('match FIGURES.md', () => {
    const current = figuresMarkdown(result.figures);
    if (process.env.SUGGEST_UPDATE === '1') writeFileSync(FIGURES_FILE, current);
    let recorded = '';
    try {
      recorded = readFileSync(FIGURES_FILE, 'utf8');
    } catch {
      // A missing file fails below with the same message.
    }
    expect(recorded, 'test/suggest/FIGURES.md is out of date: run SUGGEST_UPDATE=1 npx vitest run test/suggest').toBe(current);
  });
});
