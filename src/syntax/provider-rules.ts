/**
 * Provider sign-up rules (IspSpecificSyntaxFailure, decisions.md §3): the local parts that well-known free providers
 * can ever have issued. Applied after the RFC checks, to plain (unquoted) local parts; a quoted local part fails at
 * its opening quote. The username is the local part up to the provider's sub-address separator. The failure index is
 * the first offending character, or the `@` for a length rule.
 */
import { getPublicSuffix } from 'tldts';

export interface ProviderRule {
  /** The provider's domains as second-level name and suffix; suffix `*` stands for any public suffix. */
  readonly domains: readonly (readonly [name: string, suffix: string])[];
  /** The sub-address separator; the username ends before it. */
  readonly separator: string | null;
  /** The first character must be an ASCII letter. */
  readonly startsWithLetter: boolean;
  /** Characters allowed besides ASCII letters and digits. */
  readonly symbols: string;
  /** At most this many dots in the username. */
  readonly maxDots?: number;
  /** Length bounds of the username. */
  readonly length?: { readonly min: number; readonly max: number; readonly counts: 'all' | 'alphanumeric' };
  readonly source: string;
}

export const PROVIDER_RULES: readonly ProviderRule[] = [
  {
    domains: [['gmail', 'com'], ['googlemail', 'com']],
    separator: '+',
    startsWithLetter: false,
    symbols: '.',
    length: { min: 6, max: 30, counts: 'alphanumeric' },
    // "Choose a username 6–30 characters long"; "letters (a-z), numbers (0-9), and periods (.)"; periods don't
    // matter in Gmail addresses. Sub-addressing with "+".
    source: 'https://support.google.com/mail/answer/9211434',
  },
  {
    domains: [['yahoo', '*'], ['ymail', 'com'], ['rocketmail', 'com']],
    separator: '-',
    startsWithLetter: true,
    symbols: '._',
    maxDots: 1,
    length: { min: 4, max: 32, counts: 'all' },
    // Yahoo ID: 4 to 32 characters, starts with a letter, letters, numbers, underscores and one period;
    // disposable addresses are "base-keyword" (Yahoo Help, "Create and manage disposable email addresses").
    source: 'https://login.yahoo.com/account/create (sign-up form rules); https://help.yahoo.com/kb/SLN28338.html',
  },
  {
    domains: [['outlook', 'com'], ['msn', 'com'], ['hotmail', '*'], ['live', '*']],
    separator: '+',
    startsWithLetter: true,
    symbols: '._-',
    // Microsoft account e-mail names: letters, numbers, periods, underscores and hyphens, starting with a letter;
    // plus addressing is supported by Outlook.com.
    source: 'https://signup.live.com (sign-up form rules); https://support.microsoft.com/office/plus-addressing',
  },
  {
    domains: [['aol', 'com']],
    separator: null,
    startsWithLetter: true,
    symbols: '._',
    maxDots: 1,
    length: { min: 3, max: 32, counts: 'all' },
    // AOL (Yahoo platform): 3 to 32 characters, starts with a letter, letters, numbers, underscores and one period.
    source: 'https://login.aol.com/account/create (sign-up form rules)',
  },
  {
    domains: [['icloud', 'com'], ['me', 'com'], ['mac', 'com']],
    separator: '+',
    startsWithLetter: true,
    symbols: '._',
    length: { min: 3, max: 20, counts: 'all' },
    // iCloud Mail address: 3 to 20 characters, starts with a letter, letters, numbers, periods and underscores;
    // plus addressing is supported.
    source: 'https://support.apple.com/guide/icloud/create-a-primary-email-address-mm4ff2f1c0a8/icloud',
  },
];

interface DomainEntry {
  readonly name: string;
  readonly suffix: string;
  readonly rule: ProviderRule;
  /** `rule.symbols` as a lookup table over ASCII. */
  readonly symbols: Uint8Array;
}

// Every address is looked up here, so the match works on the domain in place: lengths first, then characters.
const DOMAIN_ENTRIES: readonly DomainEntry[] = PROVIDER_RULES.flatMap((rule) =>
  rule.domains.map(([name, suffix]) => ({ name, suffix, rule, symbols: asciiTable(rule.symbols) })),
);

function asciiTable(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1;
  return table;
}
const publicSuffixCache = new Map<string, boolean>();

function isPublicSuffix(suffix: string): boolean {
  let known = publicSuffixCache.get(suffix);
  if (known === undefined) {
    known = getPublicSuffix(suffix) === suffix;
    if (publicSuffixCache.size < 1024) publicSuffixCache.set(suffix, known);
  }
  return known;
}

/** The rule that applies to a lower-case ASCII domain, if any. */
export function providerRuleFor(asciiDomain: string): ProviderRule | undefined {
  return domainEntryFor(asciiDomain)?.rule;
}

/** The entries by the length of their second-level name: most domains are rejected by that length alone. */
const ENTRIES_BY_NAME_LENGTH: readonly (readonly DomainEntry[])[] = (() => {
  const byLength: DomainEntry[][] = [];
  for (const entry of DOMAIN_ENTRIES) (byLength[entry.name.length] ??= []).push(entry);
  return byLength;
})();
const NO_ENTRIES: readonly DomainEntry[] = [];

function domainEntryFor(asciiDomain: string): DomainEntry | undefined {
  // The first dot is within the longest name, or there is nothing to find.
  let dot = -1;
  for (let i = 0; i < asciiDomain.length && i < ENTRIES_BY_NAME_LENGTH.length; i++) {
    if (asciiDomain.charCodeAt(i) === 0x2e) {
      dot = i;
      break;
    }
  }
  if (dot <= 0) return undefined;
  for (const entry of ENTRIES_BY_NAME_LENGTH[dot] ?? NO_ENTRIES) {
    if (!asciiDomain.startsWith(entry.name)) continue;
    if (entry.suffix === '*') {
      if (isPublicSuffix(asciiDomain.slice(dot + 1))) return entry;
    } else if (asciiDomain.length === dot + 1 + entry.suffix.length && asciiDomain.endsWith(entry.suffix)) {
      return entry;
    }
  }
  return undefined;
}

const isLetter = (c: number): boolean => ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * Checks the local part `input[localStart, localEnd)` against the rule of its provider. Returns the failure index,
 * or null when no rule applies or the local part follows it.
 */
export function checkProviderRules(
  input: string,
  localStart: number,
  localEnd: number,
  atIndex: number,
  asciiDomain: string,
): number | null {
  const entry = domainEntryFor(asciiDomain);
  if (entry === undefined) return null;
  const { rule, symbols } = entry;
  const separator = rule.separator === null ? -1 : rule.separator.charCodeAt(0);
  const startsWithLetter = rule.startsWithLetter;
  const maxDots = rule.maxDots ?? Infinity;
  const countsAll = rule.length?.counts === 'all';
  let dots = 0;
  let counted = 0;
  let pos = localStart;
  for (; pos < localEnd; pos++) {
    const c = input.charCodeAt(pos);
    if (c === separator) break;
    if (isLetter(c)) {
      counted++;
      continue;
    }
    if (pos === localStart && startsWithLetter) return pos;
    if (isDigit(c)) {
      counted++;
      continue;
    }
    // Also catches a quoted local part (`"`) and any non-ASCII character.
    if (c >= 0x80 || symbols[c] !== 1) return pos;
    if (c === 0x2e && ++dots > maxDots) return pos;
    if (countsAll) counted++;
  }
  // An empty username (`+tag@...`): the separator stands where the first letter must be.
  if (pos === localStart && startsWithLetter) return pos;
  if (rule.length !== undefined && (counted < rule.length.min || counted > rule.length.max)) return atIndex;
  return null;
}
