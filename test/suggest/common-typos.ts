/**
 * The typing slips users make most on the commonest mailbox domains, one slip per typo, as a fixed set:
 *
 * - a letter left out (`gmil.com`);
 * - two adjacent letters swapped (`gmial.com`);
 * - a letter replaced by its neighbour on the same QWERTY row (`gmaol.com`: o is next to i);
 * - the last letter of the name typed twice (`gmaill.com`), and the last letter of the domain (`gmail.comm`);
 * - the suffix typos `.con .cmo .vom .comm .om` (for `.com`) and `.nte .ner` (for `.net`).
 *
 * Left out, and counted: a typo that is itself a mailbox domain of the suggester's tables (COMMON_DOMAINS,
 * PROVIDER_VARIANTS: `gmail.com` → `mail.com`, `hotmail.fr` → `hotmail.gr`) or a real, unrelated domain of
 * test/suggest/unrelated-domains.txt (`mail.ru` → `mil.ru`, `icloud.com` → `cloud.com`): a domain a user may mean. So is a typo the parser does not return unchanged (the engine asks no
 * suggestion for it).
 */
import { knownMailboxDomains, parsesAsDomain, unrelatedDomains } from './measure.js';

/** The 30 commonest mailbox domains across the regions of COMMON_DOMAINS (its weights), in that table's spelling. */
export const THIRTY_COMMON_DOMAINS = [
  'gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'icloud.com', 'aol.com', 'live.com', 'msn.com', 'comcast.net',
  'hotmail.co.uk', 'yahoo.co.uk', 'gmx.de', 'web.de', 'mail.ru', 'yandex.ru', 'orange.fr', 'libero.it', 'protonmail.com',
  'att.net', 'verizon.net', 'sbcglobal.net', 'googlemail.com', 'btinternet.com', 't-online.de', 'hotmail.fr',
  'wanadoo.fr', 'bigpond.com', 'rogers.com', 'shaw.ca', 'cox.net',
] as const;

/** The letter rows of the QWERTY layout (ISO/IEC 9995-1 key positions, US and UK ISO 9995-2 letter assignment). */
export const QWERTY_LETTER_ROWS = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'] as const;

/** Suffix typos by the suffix they stand for: forms of SUFFIX_TYPOS (src/suggest/common-domains.ts, its sources there). */
export const SUFFIX_SLIPS: Readonly<Record<string, readonly string[]>> = {
  com: ['con', 'cmo', 'vom', 'comm', 'om'],
  net: ['nte', 'ner'],
};

export type SlipKind = 'deleted' | 'swapped' | 'neighbour' | 'doubled' | 'suffix';

export interface Typo {
  readonly typo: string;
  readonly intended: string;
  readonly kind: SlipKind;
}

const LETTER = /^[a-z]$/;

function rowNeighbours(letter: string): string[] {
  for (const row of QWERTY_LETTER_ROWS) {
    const at = row.indexOf(letter);
    if (at >= 0) return [row[at - 1], row[at + 1]].filter((key): key is string => key !== undefined);
  }
  return [];
}

/** Every typo of the kinds above of one domain, each once (the first kind that makes it), without the domain. */
export function slipsOf(domain: string): Typo[] {
  const found = new Map<string, Typo>();
  const add = (typo: string, kind: SlipKind): void => {
    if (typo !== domain && !found.has(typo)) found.set(typo, { typo, intended: domain, kind });
  };
  for (let i = 0; i < domain.length; i++) {
    const letter = domain[i]!;
    if (!LETTER.test(letter)) continue;
    add(domain.slice(0, i) + domain.slice(i + 1), 'deleted');
    const next = domain[i + 1];
    if (next !== undefined && LETTER.test(next) && next !== letter) add(domain.slice(0, i) + next + letter + domain.slice(i + 2), 'swapped');
    for (const key of rowNeighbours(letter)) add(domain.slice(0, i) + key + domain.slice(i + 1), 'neighbour');
  }
  const firstDot = domain.indexOf('.');
  add(domain.slice(0, firstDot) + domain[firstDot - 1] + domain.slice(firstDot), 'doubled');
  add(domain + domain.at(-1), 'doubled');
  const lastDot = domain.lastIndexOf('.');
  for (const slip of SUFFIX_SLIPS[domain.slice(lastDot + 1)] ?? []) add(domain.slice(0, lastDot + 1) + slip, 'suffix');
  return [...found.values()];
}

export interface CommonTypoSet {
  readonly typos: readonly Typo[];
  readonly generated: number;
  readonly droppedUnparsable: number;
  readonly droppedKnown: number;
  readonly droppedUnrelated: number;
}

export function commonTypoSet(): CommonTypoSet {
  const known = knownMailboxDomains();
  const unrelated = new Set(unrelatedDomains());
  const typos: Typo[] = [];
  let generated = 0;
  let droppedUnparsable = 0;
  let droppedKnown = 0;
  let droppedUnrelated = 0;
  for (const domain of THIRTY_COMMON_DOMAINS) {
    for (const typo of slipsOf(domain)) {
      generated++;
      if (!parsesAsDomain(typo.typo)) droppedUnparsable++;
      else if (known.has(typo.typo)) droppedKnown++;
      else if (unrelated.has(typo.typo)) droppedUnrelated++;
      else typos.push(typo);
    }
  }
  return { typos, generated, droppedUnparsable, droppedKnown, droppedUnrelated };
}
