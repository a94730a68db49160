/**
 * Provider sign-up rules (IspSpecificSyntaxFailure, docs/syntax.md#provider-rules): the local parts that well-known free providers
 * can ever have issued. Applied after the RFC checks, to plain (unquoted) local parts; a quoted local part fails at
 * its opening quote. The username is the local part up to the provider's sub-address separator. The failure index is
 * the first offending character, or the `@` for a length rule.
 */
import { getPublicSuffix } from 'tldts';
import { LocalBit, PLAIN_LOCAL } from './chars.js';
import { detached } from './idna.js';

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
  /** Dots in the username do not matter: `j.doe` and `jdoe` are one mailbox (relaxed deduplication). */
  readonly dotsIgnored?: boolean;
  /** The domain every domain of the provider stands for (relaxed deduplication). */
  readonly canonicalDomain?: string;
  readonly source: string;
}

export const PROVIDER_RULES: readonly ProviderRule[] = [
  {
    domains: [['gmail', 'com'], ['googlemail', 'com']],
    separator: '+',
    startsWithLetter: false,
    symbols: '.',
    length: { min: 6, max: 30, counts: 'alphanumeric' },
    dotsIgnored: true,
    canonicalDomain: 'gmail.com',
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
  /** What each ASCII character is to the rule (a CharClass); one read per character of the local part. */
  readonly classes: Uint8Array;
  // The rule's checks as plain fields of one shape (the rules themselves differ in which optional fields they have).
  readonly startsWithLetter: boolean;
  readonly maxDots: number;
  readonly countsAll: boolean;
  readonly minLength: number;
  readonly maxLength: number;
  /**
   * The LocalBit classes of a plain local part that make its answer depend on where a character stands (a separator,
   * a character the rule refuses) or that the length cannot be counted without (a symbol left out of an
   * alphanumeric count): with none of them, and no more dots than `plainMaxDots`, the answer needs no second read.
   */
  readonly rereadBits: number;
  /** maxDots, or 0 when the rule refuses dots. */
  readonly plainMaxDots: number;
}

const enum CharClass {
  Invalid = 0,
  Letter = 1,
  Digit = 2,
  Symbol = 3,
  /** A dot the rule allows (counted against maxDots). */
  Dot = 4,
  Separator = 5,
}

const DOMAIN_ENTRIES: readonly DomainEntry[] = PROVIDER_RULES.flatMap((rule) =>
  rule.domains.map(([name, suffix]) => ({
    name,
    suffix,
    rule,
    classes: charClasses(rule),
    startsWithLetter: rule.startsWithLetter,
    maxDots: rule.maxDots ?? Infinity,
    countsAll: rule.length?.counts === 'all',
    minLength: rule.length?.min ?? 0,
    maxLength: rule.length?.max ?? Infinity,
    rereadBits: rereadBits(rule),
    plainMaxDots: rule.symbols.includes('.') ? (rule.maxDots ?? Infinity) : 0,
  })),
);

function rereadBits(rule: ProviderRule): number {
  let accepted = LocalBit.Letter | LocalBit.Digit;
  if (rule.length?.counts !== 'alphanumeric') {
    // A symbol with a bit of its own; OtherSymbol stands for many characters, some of which the rule may refuse.
    for (const symbol of rule.symbols) {
      const bit = PLAIN_LOCAL[symbol.charCodeAt(0)]!;
      if (bit !== LocalBit.OtherSymbol && bit !== LocalBit.Dot) accepted |= bit;
    }
  }
  return (LocalBit.Letter | LocalBit.Digit | LocalBit.Underscore | LocalBit.Hyphen | LocalBit.Plus | LocalBit.OtherSymbol) & ~accepted;
}

function charClasses(rule: ProviderRule): Uint8Array {
  const table = new Uint8Array(128);
  for (let c = 0x30; c <= 0x39; c++) table[c] = CharClass.Digit;
  for (let c = 0x41; c <= 0x5a; c++) table[c] = table[c | 0x20] = CharClass.Letter;
  for (const symbol of rule.symbols) table[symbol.charCodeAt(0)] = symbol === '.' ? CharClass.Dot : CharClass.Symbol;
  if (rule.separator !== null) table[rule.separator.charCodeAt(0)] = CharClass.Separator;
  return table;
}

/**
 * The entries by the length of their second-level name and its first letter. Every address is looked up, so nearly
 * every other domain is rejected by one read of this table, and the match compares character codes in place.
 */
const ENTRY_INDEX: (DomainEntry[] | undefined)[] = [];
const indexKey = (nameLength: number, firstChar: number): number => nameLength * 32 + (firstChar & 31);
for (const entry of DOMAIN_ENTRIES) (ENTRY_INDEX[indexKey(entry.name.length, entry.name.charCodeAt(0))] ??= []).push(entry);
const LONGEST_NAME = Math.max(...DOMAIN_ENTRIES.map((entry) => entry.name.length));

/**
 * Suffixes already judged, compared in place: nearly all addresses at `yahoo.*`, `hotmail.*` and `live.*` use a few
 * dozen suffixes (com, co.uk, fr, co.jp...), so their answer costs no substring. Further suffixes are judged each time.
 */
const knownSuffixes: { readonly suffix: string; readonly isPublic: boolean }[] = [];
const KNOWN_SUFFIX_LIMIT = 64;

/** Whether `domain[from, to)` (a valid ASCII domain name, any case) is a public suffix. */
function isPublicSuffixAt(domain: string, from: number, to: number): boolean {
  const length = to - from;
  for (const known of knownSuffixes) {
    if (known.suffix.length === length && matchesAt(domain, from, known.suffix)) return known.isPublic;
  }
  const suffix = domain.slice(from, to).toLowerCase();
  const isPublic = getPublicSuffix(suffix) === suffix;
  if (knownSuffixes.length < KNOWN_SUFFIX_LIMIT) knownSuffixes.push({ suffix: detached(suffix), isPublic });
  return isPublic;
}

/**
 * True when `text[from, from + expected.length)` is `expected` (lower-case letters, digits, `.` and `-`), ignoring
 * ASCII case: setting bit 0x20 lower-cases a letter and leaves digits, `.` and `-` unchanged.
 */
function matchesAt(text: string, from: number, expected: string): boolean {
  for (let i = 0; i < expected.length; i++) {
    if ((text.charCodeAt(from + i) | 0x20) !== expected.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The provider entries a domain whose first label has this length and first character may match: undefined for
 * nearly every domain. The parser asks when the first label ends, at the cost of one table read.
 */
export function providerCandidates(firstLabelLength: number, firstChar: number): ProviderCandidates | undefined {
  return firstLabelLength > LONGEST_NAME ? undefined : ENTRY_INDEX[indexKey(firstLabelLength, firstChar)];
}

export type ProviderCandidates = readonly DomainEntry[];

/** The entry for the valid domain name `domain[from, to)` (ASCII, any case), if any. */
function domainEntryFor(domain: string, from: number, to: number, candidates?: ProviderCandidates): DomainEntry | undefined {
  let dot: number;
  if (candidates === undefined) {
    dot = from + 1;
    while (dot < to && domain.charCodeAt(dot) !== 0x2e) dot++;
    candidates = providerCandidates(dot - from, domain.charCodeAt(from));
    if (candidates === undefined) return undefined;
  } else {
    dot = from + candidates[0]!.name.length; // the candidates share the length of the first label
  }
  for (const entry of candidates) {
    if (!matchesAt(domain, from, entry.name)) continue;
    if (entry.suffix === '*') {
      if (isPublicSuffixAt(domain, dot + 1, to)) return entry;
    } else if (to - dot - 1 === entry.suffix.length && matchesAt(domain, dot + 1, entry.suffix)) {
      return entry;
    }
  }
  return undefined;
}

/** The rule that applies to an ASCII domain, if any. */
export function providerRuleFor(asciiDomain: string): ProviderRule | undefined {
  return domainEntryFor(asciiDomain, 0, asciiDomain.length)?.rule;
}

/**
 * Checks the local part `input[localStart, localEnd)` against the rule of the provider of the valid ASCII domain
 * `domain[domainFrom, domainTo)` (whose `providerCandidates` the caller may pass). Returns the failure index, or null
 * when no rule applies or the local part follows it.
 */
export function checkProviderRules(
  input: string,
  localStart: number,
  localEnd: number,
  atIndex: number,
  domain: string,
  domainFrom: number,
  domainTo: number,
  candidates?: ProviderCandidates,
): number | null {
  const entry = domainEntryFor(domain, domainFrom, domainTo, candidates);
  return entry === undefined ? null : localPartFailure(entry, input, localStart, localEnd, atIndex);
}

/**
 * checkProviderRules for a plain address `input` (no CFWS, `@` at `atIndex`, a valid ASCII domain after it) whose
 * local part is dot-atoms of ASCII atext, given the union `bits` of the LocalBit classes of its characters and its
 * number of dots, both gathered while it was scanned. The local part is read again only when the answer depends on
 * where a character stands.
 */
export function checkPlainProviderRules(
  input: string,
  atIndex: number,
  candidates: ProviderCandidates,
  bits: number,
  dots: number,
): number | null {
  const entry = domainEntryFor(input, atIndex + 1, input.length, candidates);
  if (entry === undefined) return null;
  if ((bits & entry.rereadBits) !== 0 || dots > entry.plainMaxDots) return localPartFailure(entry, input, 0, atIndex, atIndex);
  // Only letters, digits and symbols the rule accepts, no separator: the username is the whole local part.
  if (entry.startsWithLetter && PLAIN_LOCAL[input.charCodeAt(0)] !== LocalBit.Letter) return 0;
  const counted = entry.countsAll ? atIndex : atIndex - dots;
  return counted < entry.minLength || counted > entry.maxLength ? atIndex : null;
}

/** The index where the local part `input[localStart, localEnd)` breaks the entry's rule, or null. */
function localPartFailure(entry: DomainEntry, input: string, localStart: number, localEnd: number, atIndex: number): number | null {
  const { classes, startsWithLetter, maxDots, countsAll } = entry;
  let dots = 0;
  let counted = 0;
  let pos = localStart;
  for (; pos < localEnd; pos++) {
    const c = input.charCodeAt(pos);
    // Non-ASCII is invalid, and so is a quote (a quoted local part fails at its opening quote).
    const kind = c < 0x80 ? classes[c]! : CharClass.Invalid;
    if (kind === CharClass.Letter) {
      counted++;
      continue;
    }
    if (kind === CharClass.Separator) break;
    if (pos === localStart && startsWithLetter) return pos;
    if (kind === CharClass.Digit) {
      counted++;
      continue;
    }
    if (kind === CharClass.Invalid) return pos;
    if (kind === CharClass.Dot && ++dots > maxDots) return pos;
    if (countsAll) counted++;
  }
  // An empty username (`+tag@...`): the separator stands where the first letter must be.
  if (pos === localStart && startsWithLetter) return pos;
  if (counted < entry.minLength || counted > entry.maxLength) return atIndex;
  return null;
}
