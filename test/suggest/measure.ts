/**
 * How well the suggester does, on both sides:
 *
 * - Real typos: the pairs of test/suggest/real-typos.txt, typos seen in real addresses and collected as test data by
 *   other typo correctors (mailgun/flanker, mailcheck, Verimail.js, ZooTools/email-spell-checker; the file names
 *   each source). A pair whose typo does not parse as a domain, or is itself a well-known mailbox domain, is counted
 *   as dropped, as below.
 *
 * - Typos: EVERY single-slip typo of each common domain: deletion of any character, insertion of any of [a-z0-9.-]
 *   anywhere, substitution of any character by any of [a-z0-9-] (and a dot by any of those), swap of adjacent
 *   characters. Generated in a fixed order, so the figures are reproducible. Dropped before measuring, and counted:
 *   - typos that do not parse as a domain (`gmail..com`, `-gmail.com`, a trailing dot): the engine answers those with a
 *     syntax status and never asks for a suggestion;
 *   - typos that are themselves well known (`gmail.com` → `mail.com`, `hotmail.de` → `hotmail.dk`): real mailbox
 *     domains, not typos;
 *   - typos that are real, unrelated domains of the list below (`mail.ru` → `mil.ru`, `libero.it` → `libera.it`):
 *     they are measured on the other side, as domains that must not be corrected.
 *   The same typo of one domain counts once (deleting either `o` of yahoo gives one `yaho.com`); the same typo of two
 *   domains counts for each (`yahoo.cm` is a slip of yahoo.com and of yahoo.ca: only one of them can be first).
 * - Unrelated domains: real domains that are not mailbox providers (test/suggest/unrelated-domains.txt), any
 *   suggestion for which is wrong.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { COMMON_DOMAINS, PROVIDER_VARIANTS } from '../../packages/mailverify/src/suggest/common-domains.js';
import type { Suggester } from '../../packages/mailverify/src/suggest/suggest.js';
import { parseAddress } from '../../packages/mailverify/src/syntax/parse.js';

const INSERTED = 'abcdefghijklmnopqrstuvwxyz0123456789.-';
const SUBSTITUTED = 'abcdefghijklmnopqrstuvwxyz0123456789-';
const LOCAL_PART = 'john.smith';

export const UNRELATED_DOMAINS_FILE = fileURLToPath(new URL('./unrelated-domains.txt', import.meta.url));
export const REAL_TYPOS_FILE = fileURLToPath(new URL('./real-typos.txt', import.meta.url));
export const FIGURES_FILE = fileURLToPath(new URL('./FIGURES.md', import.meta.url));

export function commonDomains(): string[] {
  return COMMON_DOMAINS.flatMap((group) => group.domains.map(([domain]) => domain));
}

/** The mailbox domains of the data tables, exactly (not hosts under them: `g.mail.com` is a typo of gmail.com). */
export function knownMailboxDomains(): Set<string> {
  return new Set([...commonDomains(), ...PROVIDER_VARIANTS.flatMap((group) => group.names)]);
}

function dataLines(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

export function unrelatedDomains(): string[] {
  return dataLines(UNRELATED_DOMAINS_FILE);
}

/** The real typos, [typo, intended], each pair once (sources overlap). */
export function realTypos(): [string, string][] {
  const pairs = new Map<string, [string, string]>();
  for (const line of dataLines(REAL_TYPOS_FILE)) {
    const comma = line.lastIndexOf(',');
    const pair: [string, string] = [line.slice(0, comma).toLowerCase(), line.slice(comma + 1).toLowerCase()];
    pairs.set(pair.join(','), pair);
  }
  return [...pairs.values()];
}

/** Every single-slip typo of a domain, in a fixed order, without duplicates and without the domain itself. */
export function typosOf(domain: string): string[] {
  const typos = new Set<string>();
  for (let i = 0; i <= domain.length; i++) {
    for (const c of INSERTED) typos.add(domain.slice(0, i) + c + domain.slice(i));
    if (i === domain.length) break;
    typos.add(domain.slice(0, i) + domain.slice(i + 1));
    for (const c of SUBSTITUTED) typos.add(domain.slice(0, i) + c + domain.slice(i + 1));
    if (i + 1 < domain.length) typos.add(domain.slice(0, i) + domain[i + 1] + domain[i] + domain.slice(i + 2));
  }
  typos.delete(domain);
  return [...typos];
}

/** True when the engine would get this domain from the parser unchanged (so it may ask for a suggestion). */
export function parsesAsDomain(domain: string): boolean {
  const parsed = parseAddress(`${LOCAL_PART}@${domain}`);
  return parsed.ok && parsed.asciiDomainPart === domain;
}

export interface Figures {
  realTypos: number;
  realDroppedUnparsable: number;
  realDroppedWellKnown: number;
  realMeasured: number;
  realRightFirst: number;
  realWrongFirst: number;
  realNone: number;
  commonDomains: number;
  generated: number;
  droppedUnparsable: number;
  droppedWellKnown: number;
  droppedUnrelated: number;
  measured: number;
  rightFirst: number;
  wrongFirst: number;
  none: number;
  unrelated: number;
  unrelatedWithSuggestion: number;
}

export interface Measurement {
  figures: Figures;
  /** Real typos without the right suggestion first: [typo, intended, first suggestion or '']. */
  realMisses: [string, string, string][];
  /** Typos whose first suggestion is another domain: [typo, intended, suggested]. */
  wrong: [string, string, string][];
  /** Typos without a suggestion: [typo, intended]. */
  missed: [string, string][];
  /** Unrelated domains with a suggestion: [domain, first suggestion]. */
  falseSuggestions: [string, string][];
}

export function measure(suggester: Suggester): Measurement {
  const unrelated = unrelatedDomains();
  const unrelatedSet = new Set(unrelated);
  const known = knownMailboxDomains();
  const figures: Figures = {
    realTypos: 0,
    realDroppedUnparsable: 0,
    realDroppedWellKnown: 0,
    realMeasured: 0,
    realRightFirst: 0,
    realWrongFirst: 0,
    realNone: 0,
    commonDomains: 0,
    generated: 0,
    droppedUnparsable: 0,
    droppedWellKnown: 0,
    droppedUnrelated: 0,
    measured: 0,
    rightFirst: 0,
    wrongFirst: 0,
    none: 0,
    unrelated: unrelated.length,
    unrelatedWithSuggestion: 0,
  };
  const wrong: [string, string, string][] = [];
  const missed: [string, string][] = [];
  const falseSuggestions: [string, string][] = [];
  const realMisses: [string, string, string][] = [];

  for (const [typo, intended] of realTypos()) {
    figures.realTypos++;
    if (!parsesAsDomain(typo)) figures.realDroppedUnparsable++;
    else if (known.has(typo)) figures.realDroppedWellKnown++;
    else {
      figures.realMeasured++;
      const first = suggester.suggest(LOCAL_PART, typo)[0];
      if (first === `${LOCAL_PART}@${intended}`) figures.realRightFirst++;
      else {
        if (first === undefined) figures.realNone++;
        else figures.realWrongFirst++;
        realMisses.push([typo, intended, first?.slice(LOCAL_PART.length + 1) ?? '']);
      }
    }
  }

  for (const domain of commonDomains()) {
    figures.commonDomains++;
    for (const typo of typosOf(domain)) {
      figures.generated++;
      if (!parsesAsDomain(typo)) figures.droppedUnparsable++;
      else if (known.has(typo)) figures.droppedWellKnown++;
      else if (unrelatedSet.has(typo)) figures.droppedUnrelated++;
      else {
        figures.measured++;
        const first = suggester.suggest(LOCAL_PART, typo)[0];
        if (first === `${LOCAL_PART}@${domain}`) figures.rightFirst++;
        else if (first === undefined) {
          figures.none++;
          missed.push([typo, domain]);
        } else {
          figures.wrongFirst++;
          wrong.push([typo, domain, first.slice(LOCAL_PART.length + 1)]);
        }
      }
    }
  }
  for (const domain of unrelated) {
    const first = suggester.suggest(LOCAL_PART, domain)[0];
    if (first !== undefined) {
      figures.unrelatedWithSuggestion++;
      falseSuggestions.push([domain, first.slice(LOCAL_PART.length + 1)]);
    }
  }
  return { figures, realMisses, wrong, missed, falseSuggestions };
}

export function percent(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(2)}%`;
}

/** The table kept in test/suggest/FIGURES.md (and quoted in the README). */
export function figuresMarkdown(f: Figures): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  return [
    '# Typo suggestions: measured figures',
    '',
    'Generated by `test/suggest/measure.test.ts` (regenerate with `SUGGEST_UPDATE=1 npx vitest run test/suggest`).',
    'How the sets are made: `test/suggest/measure.ts`.',
    '',
    '## Real typos (`test/suggest/real-typos.txt`)',
    '',
    '| measure | value |',
    '| --- | ---: |',
    `| typo pairs from public sources | ${n(f.realTypos)} |`,
    `| dropped: not a valid domain | ${n(f.realDroppedUnparsable)} |`,
    `| dropped: itself a well-known mailbox domain | ${n(f.realDroppedWellKnown)} |`,
    `| typos measured | ${n(f.realMeasured)} |`,
    `| right suggestion first | ${n(f.realRightFirst)} (${percent(f.realRightFirst, f.realMeasured)}) |`,
    `| a suggestion, but a wrong one first | ${n(f.realWrongFirst)} (${percent(f.realWrongFirst, f.realMeasured)}) |`,
    `| no suggestion | ${n(f.realNone)} (${percent(f.realNone, f.realMeasured)}) |`,
    '',
    '## Every single slip of the common domains, and unrelated real domains',
    '',
    '| measure | value |',
    '| --- | ---: |',
    `| common domains | ${n(f.commonDomains)} |`,
    `| single-slip typos generated | ${n(f.generated)} |`,
    `| dropped: not a valid domain | ${n(f.droppedUnparsable)} |`,
    `| dropped: itself a well-known mailbox domain | ${n(f.droppedWellKnown)} |`,
    `| dropped: itself a listed unrelated domain | ${n(f.droppedUnrelated)} |`,
    `| typos measured | ${n(f.measured)} |`,
    `| right suggestion first | ${n(f.rightFirst)} (${percent(f.rightFirst, f.measured)}) |`,
    `| a suggestion, but a wrong one first | ${n(f.wrongFirst)} (${percent(f.wrongFirst, f.measured)}) |`,
    `| no suggestion | ${n(f.none)} (${percent(f.none, f.measured)}) |`,
    `| unrelated real domains | ${n(f.unrelated)} |`,
    `| unrelated domains with any suggestion | ${n(f.unrelatedWithSuggestion)} (${percent(f.unrelatedWithSuggestion, f.unrelated)}) |`,
    '',
  ].join('\n');
}
