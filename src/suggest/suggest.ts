/**
 * Typo suggestions (docs/verification.md#lists-flags-and-suggestions): whole alternative addresses for a domain that is
 * one typing slip away from a common mailbox domain (`gmial.com`, `yaho.com`, `outlok.com`), or has a mistyped suffix
 * (`hotmail.con`, `gmail.co`, `hotmail.co.ul`, `stripe.con`).
 *
 * The engine asks only when the domain has no MX records in the same run (a typo domain that exists and takes mail,
 * such as a registered `hotmial.com`, is the user's to keep), so this module never does DNS: it is pure, offline and
 * precomputed. What it guards against on its own is correcting a real domain, which it cannot look up; the rules
 * below trade recall on typos for that (figures in test/suggest/FIGURES.md):
 *
 * - A domain that is well known (a common domain, a provider's other domain, a host under one) gets nothing.
 * - Candidates are the common domains at Damerau-Levenshtein distance 1 (optimal string alignment: one insertion,
 *   deletion, substitution or swap of adjacent characters), found through an index of single deletions.
 * - A suffix that is not a delegated top-level domain (`con`, `cmo`, `co.ul`) means the domain cannot exist, so any
 *   such candidate is taken, and a mistyped suffix is also corrected on unknown names (`stripe.con` → `stripe.com`)
 *   and together with one slip in a common name (`hotmal.con`).
 * - Otherwise the domain may be real, and the slip must be typical of the name's length: short names are dense in
 *   the namespace (nearly every 3-letter `.com` is registered), so they need a longer name or a typing-typical edit.
 * - Ties rank by the kind of slip (swapped or doubled letters and neighbouring keys first) and then popularity.
 */
import { parse } from 'tldts';
import { COMMON_DOMAINS, COMMON_SUFFIXES, PROVIDER_VARIANTS, SUFFIX_TYPOS } from './common-domains.js';

export interface SuggesterOptions {
  /** The domains suggestions point to, with a weight (popularity); replaces the built-in COMMON_DOMAINS. */
  domains?: Iterable<readonly [domain: string, weight: number]>;
  /** More domains that are real and must never be corrected (added to the built-in PROVIDER_VARIANTS). */
  wellKnown?: Iterable<string>;
  /** At most this many suggestions per address (default 3). */
  maxSuggestions?: number;
}

export interface Suggester {
  /**
   * Alternative addresses, best first: `localPart@suggestedDomain`, the local part kept as written. Empty when the
   * domain is well known or no typo is likely. `asciiDomain` is lower-case A-labels (ParsedAddress.asciiDomainPart).
   */
  suggest(localPart: string, asciiDomain: string): string[];
  /** True for a common or otherwise known mailbox domain, and for hosts under one (`outlook.live.com`). */
  isWellKnown(asciiDomain: string): boolean;
}

interface Target {
  readonly domain: string;
  /** Everything before the public suffix (`yahoo` in yahoo.co.uk, `i.softbank` in i.softbank.jp). */
  readonly head: string;
  readonly suffix: string;
  /** The head's length without dots: how strict the rules are. */
  readonly nameLength: number;
  readonly lettersOnly: boolean;
  /** Popularity bonus: ranks candidates whose slips cost the same. */
  readonly bonus: number;
}

/** One typing slip that turns `intended` into `typed`, in `intended`'s positions. */
interface Edit {
  readonly kind: 'insert' | 'delete' | 'substitute' | 'transpose';
  readonly at: number;
  /** The character typed (insert, substitute), or the first of the swapped pair. */
  readonly typed: string;
  /** The character meant (delete, substitute). */
  readonly intended: string;
}

const DEFAULT_MAX_SUGGESTIONS = 3;
/** Weight of log10(popularity) against the cost of a slip: popularity only decides between near-equal slips. */
const POPULARITY = 0.1;
/** Further suggestions are given only when they are about as likely as the first. */
const RUNNER_UP_MARGIN = 0.15;

// --- The keyboard: neighbouring keys make the commonest substitutions and insertions. ---

const QWERTY_ROWS = ['1234567890-', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'];
/** Row offsets of a staggered keyboard, in half keys. */
const ROW_OFFSET = [0, 1, 2, 3];

const NEIGHBOURS: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const place = new Map<string, [row: number, col: number]>();
  QWERTY_ROWS.forEach((row, r) => [...row].forEach((key, c) => place.set(key, [r, c * 2 + (ROW_OFFSET[r] ?? 0)])));
  const neighbours = new Map<string, Set<string>>();
  for (const [a, [ra, ca]] of place) {
    const set = new Set<string>();
    for (const [b, [rb, cb]] of place) {
      // Same row: the next key (2 half keys away); adjacent rows: the two keys touching it (1 half key away).
      if (a !== b && ((ra === rb && Math.abs(ca - cb) === 2) || (Math.abs(ra - rb) === 1 && Math.abs(ca - cb) === 1))) set.add(b);
    }
    neighbours.set(a, set);
  }
  return neighbours;
})();

function isNeighbour(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && NEIGHBOURS.get(a)?.has(b) === true;
}

// --- Single edits. ---

/** The one slip that turns `intended` into `typed`, or null when they are equal or more than one slip apart. */
export function singleEdit(typed: string, intended: string): Edit | null {
  const lengthDifference = typed.length - intended.length;
  if (Math.abs(lengthDifference) > 1) return null;
  let p = 0;
  const shorter = Math.min(typed.length, intended.length);
  while (p < shorter && typed.charCodeAt(p) === intended.charCodeAt(p)) p++;
  if (lengthDifference === 1) {
    return typed.slice(p + 1) === intended.slice(p) ? { kind: 'insert', at: p, typed: typed[p] ?? '', intended: '' } : null;
  }
  if (lengthDifference === -1) {
    return typed.slice(p) === intended.slice(p + 1) ? { kind: 'delete', at: p, typed: '', intended: intended[p] ?? '' } : null;
  }
  if (p === typed.length) return null;
  if (typed.slice(p + 1) === intended.slice(p + 1)) {
    return { kind: 'substitute', at: p, typed: typed[p] ?? '', intended: intended[p] ?? '' };
  }
  if (typed[p] === intended[p + 1] && typed[p + 1] === intended[p] && typed.slice(p + 2) === intended.slice(p + 2)) {
    return { kind: 'transpose', at: p, typed: typed[p] ?? '', intended: intended[p] ?? '' };
  }
  return null;
}

/**
 * How unusual a slip is, 0.3 (a swap) to 1 (a random key). The order follows studies of typing errors: swapped and
 * doubled letters and neighbouring keys are far more frequent than arbitrary substitutions.
 */
function editCost(edit: Edit, intended: string): number {
  const before = intended[edit.at - 1];
  const after = intended[edit.at];
  switch (edit.kind) {
    case 'transpose':
      return 0.3;
    case 'delete':
      // A doubled letter typed once (`yaho`) or a skipped key.
      return edit.intended === before || edit.intended === intended[edit.at + 1] ? 0.3 : 0.6;
    case 'insert':
      if (edit.typed === before || edit.typed === after) return 0.3;
      return isNeighbour(edit.typed, before) || isNeighbour(edit.typed, after) ? 0.5 : 0.9;
    case 'substitute':
      return isNeighbour(edit.typed, edit.intended) ? 0.5 : 1;
  }
}

/** A swap, a doubled or undoubled letter: slips that rarely turn one real name into another. */
function isTypingTypical(edit: Edit, intended: string): boolean {
  return editCost(edit, intended) <= 0.3;
}

/** Whether the slip is in the part before the suffix (an insertion just before the dot lengthens the name). */
function isInName(edit: Edit, target: Target): boolean {
  return edit.kind === 'insert' ? edit.at <= target.head.length : edit.at < target.head.length;
}

function involvesDot(edit: Edit, intended: string): boolean {
  return edit.typed === '.' || edit.intended === '.' || (edit.kind === 'transpose' && intended[edit.at + 1] === '.');
}

// --- Suffixes. ---

interface SuffixFix {
  readonly suffix: string;
  readonly cost: number;
  readonly bonus: number;
}

let suffixFixesCache: ReadonlyMap<string, readonly SuffixFix[]> | undefined;

/**
 * Every typo form of the common suffixes (one slip, plus the listed forms) → the suffixes it may stand for. About
 * 30,000 entries, built once per process on first use and shared by all suggesters.
 */
function suffixFixes(): ReadonlyMap<string, readonly SuffixFix[]> {
  suffixFixesCache ??= buildSuffixFixes();
  return suffixFixesCache;
}

function buildSuffixFixes(): Map<string, SuffixFix[]> {
  const fixes = new Map<string, SuffixFix[]>();
  const add = (typed: string, fix: SuffixFix): void => {
    const list = fixes.get(typed) ?? [];
    if (!list.some((f) => f.suffix === fix.suffix)) list.push(fix);
    fixes.set(typed, list);
  };
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789.-';
  for (const [suffix, weight] of COMMON_SUFFIXES) {
    const bonus = POPULARITY * Math.log10(weight);
    for (const typed of SUFFIX_TYPOS[suffix] ?? []) add(typed, { suffix, cost: 0.3, bonus });
    for (const typed of oneSlipVariants(suffix, alphabet)) {
      const edit = singleEdit(typed, suffix);
      if (edit !== null) add(typed, { suffix, cost: editCost(edit, suffix), bonus });
    }
  }
  return fixes;
}

function* oneSlipVariants(word: string, alphabet: string): Generator<string> {
  for (let i = 0; i <= word.length; i++) {
    for (const c of alphabet) yield word.slice(0, i) + c + word.slice(i);
    if (i < word.length) {
      yield word.slice(0, i) + word.slice(i + 1);
      for (const c of alphabet) yield word.slice(0, i) + c + word.slice(i + 1);
      if (i + 1 < word.length) yield word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
    }
  }
}

// --- The suggester. ---

/** The public suffix of a domain, when it is a delegated (ICANN) one; null when the domain cannot exist. */
function icannSuffix(domain: string): { suffix: string; registrable: string | null } | null {
  const parsed = parse(domain);
  if (parsed.isIcann !== true || parsed.publicSuffix === null) return null;
  return { suffix: parsed.publicSuffix, registrable: parsed.domain };
}

// Name lengths (the part before the suffix, without dots) from which a slip is taken for a typo when the domain
// may be real. The shorter the name, the likelier its neighbours are registered names too.
/** Any slip but in the first letter (`gmial`, `gmai`, `gmaol`, `yahpo`). */
const ANY_SLIP_MIN_LENGTH = 5;
/** A deleted or changed first letter (`otmail`; `cloud` is a real name, not a slip of `icloud`). */
const FIRST_LETTER_MIN_LENGTH = 7;
/** An added letter (`aoll`, `livve`, `sfre`): it makes a longer name, and longer names are sparse. */
const INSERTION_MIN_LENGTH = 3;
/** A swap or a doubled letter typed once (`lvie`, `yaho`). */
const TYPICAL_SLIP_MIN_LENGTH = 4;
/** A digit or hyphen typed into an all-letter name (`l1ve`, `ao-l`): hardly ever a registered name. */
const STRAY_CHARACTER_MIN_LENGTH = 3;
const STRAY_CHARACTER = /^[0-9-]$/;
const LETTERS_ONLY = /^[a-z]+$/;
/** A moved, added or dropped dot (`aolc.om`, `ao.l.com`): a name with a stray dot is not a registered name. */
const DOT_SLIP_MIN_LENGTH = 3;
/** A real but unusual suffix (`aol.om`, `me.cm`, a listed form like `aol.co`); from 5 letters any (`gmail.co`). */
const SHORT_NAME_SUFFIX_MIN_LENGTH = 2;

export function createSuggester(options: SuggesterOptions = {}): Suggester {
  const maxSuggestions = options.maxSuggestions ?? DEFAULT_MAX_SUGGESTIONS;
  const targets: Target[] = [];
  const byDomain = new Map<string, Target>();
  const wellKnown = new Set<string>();

  const domainRows = options.domains ?? COMMON_DOMAINS.flatMap((group) => group.domains);
  for (const [name, weight] of domainRows) {
    const domain = name.toLowerCase();
    const suffix = icannSuffix(domain)?.suffix;
    if (suffix === undefined || suffix === domain || byDomain.has(domain)) continue;
    const head = domain.slice(0, -suffix.length - 1);
    const bonus = POPULARITY * Math.log10(Math.max(weight, 1));
    const target = { domain, head, suffix, nameLength: head.replaceAll('.', '').length, lettersOnly: LETTERS_ONLY.test(head), bonus };
    targets.push(target);
    byDomain.set(domain, target);
    wellKnown.add(domain);
  }
  for (const group of PROVIDER_VARIANTS) for (const name of group.names) wellKnown.add(name);
  for (const name of options.wellKnown ?? []) wellKnown.add(name.toLowerCase());

  // Symmetric-deletion index: two strings one slip apart share themselves or a single deletion.
  const index = new Map<string, Target[]>();
  for (const target of targets) {
    for (const key of withDeletions(target.domain)) {
      const list = index.get(key);
      if (list === undefined) index.set(key, [target]);
      else if (!list.includes(target)) list.push(target);
    }
  }
  const keyHashes = new Set<number>();
  for (const key of index.keys()) keyHashes.add(stringHash(key));
  const commonSuffixes = new Set(COMMON_SUFFIXES.map(([suffix]) => suffix));
  const listedTypos = new Map<string, Set<string>>(Object.entries(SUFFIX_TYPOS).map(([s, typos]) => [s, new Set(typos)]));

  function isWellKnown(domain: string, real: ReturnType<typeof icannSuffix>): boolean {
    return wellKnown.has(domain) || (real?.registrable != null && wellKnown.has(real.registrable));
  }

  /** The common domains one slip from `typed`, with the slip. */
  function oneSlipTargets(typed: string): [Target, Edit][] {
    const found: [Target, Edit][] = [];
    for (const key of withDeletions(typed)) {
      for (const target of index.get(key) ?? []) {
        if (found.some(([t]) => t === target)) continue;
        const edit = singleEdit(typed, target.domain);
        if (edit !== null) found.push([target, edit]);
      }
    }
    return found;
  }

  /**
   * Whether a slip in the part before the suffix is taken for a typo of a domain that may be real. Slips that make
   * the name shorter or change a letter in a short name mostly give another real name (`mil.ru`, `life.com`,
   * `ms.com`); slips that make it longer rarely do. And research on typing errors finds few in the first letter.
   */
  function acceptsNameSlip(edit: Edit, target: Target): boolean {
    const length = target.nameLength;
    const first = edit.at === 0;
    if (STRAY_CHARACTER.test(edit.typed) && target.lettersOnly) return length >= STRAY_CHARACTER_MIN_LENGTH;
    switch (edit.kind) {
      case 'insert':
        return length >= (first ? ANY_SLIP_MIN_LENGTH : INSERTION_MIN_LENGTH);
      case 'transpose':
        return length >= (first ? ANY_SLIP_MIN_LENGTH : TYPICAL_SLIP_MIN_LENGTH);
      case 'delete':
        if (isTypingTypical(edit, target.domain) && !first && length >= TYPICAL_SLIP_MIN_LENGTH) return true;
        return length >= (first ? FIRST_LETTER_MIN_LENGTH : ANY_SLIP_MIN_LENGTH);
      case 'substitute':
        return length >= (first ? FIRST_LETTER_MIN_LENGTH : ANY_SLIP_MIN_LENGTH);
    }
  }

  /** Whether a real suffix is taken for a slip of the common domain's suffix. */
  function acceptsSuffixSlip(typedSuffix: string, target: Target): boolean {
    if (target.nameLength >= ANY_SLIP_MIN_LENGTH) return true;
    // A listed typo form (`aol.co`) or a suffix hardly ever seen in addresses (`msn.mom`, `aol.om`).
    const unusual = listedTypos.get(target.suffix)?.has(typedSuffix) === true || !commonSuffixes.has(typedSuffix);
    return unusual && target.nameLength >= SHORT_NAME_SUFFIX_MIN_LENGTH;
  }

  function suggestDomains(domain: string): string[] {
    if (wellKnown.has(domain)) return []; // the commonest case, known before the suffix is looked up
    const real = icannSuffix(domain);
    if (isWellKnown(domain, real)) return [];
    // A domain that may be real is only ever corrected to a common domain one slip away; most domains have none.
    if (real !== null && !mayBeOneSlipFromTarget(domain, keyHashes)) return [];
    const scored = new Map<string, number>();
    const offer = (suggestion: string, cost: number, bonus: number): void => {
      const score = cost - bonus;
      if (score < (scored.get(suggestion) ?? Infinity)) scored.set(suggestion, score);
    };

    for (const [target, edit] of oneSlipTargets(domain)) {
      const cost = editCost(edit, target.domain);
      if (real === null) {
        offer(target.domain, cost, target.bonus); // the domain cannot exist: any near common domain will do
        continue;
      }
      if (involvesDot(edit, target.domain)) {
        if (target.nameLength >= DOT_SLIP_MIN_LENGTH) offer(target.domain, cost, target.bonus);
      } else if (isInName(edit, target)) {
        if (acceptsNameSlip(edit, target)) offer(target.domain, cost, target.bonus);
      } else if (acceptsSuffixSlip(domain.slice(target.head.length + 1), target)) {
        offer(target.domain, cost, target.bonus);
      }
    }

    if (real === null) fixSuffix(domain, offer, scored.size > 0);
    const ranked = [...scored].sort((a, b) => a[1] - b[1]);
    const best = ranked[0]?.[1] ?? 0;
    return ranked.filter(([, score]) => score <= best + RUNNER_UP_MARGIN).map(([suggestion]) => suggestion);
  }

  /**
   * A suffix that cannot exist: replace it by a common suffix one slip away (`co.ul` → `co.uk`). The result is a
   * common domain, one more slip from one in a long name (`hotmal.con`), or, when no common domain is near at all,
   * the name with its suffix fixed (`stripe.con` → `stripe.com`).
   */
  function fixSuffix(domain: string, offer: (suggestion: string, cost: number, bonus: number) => void, foundCommon: boolean): void {
    const generic: [string, number, number][] = [];
    for (let dot = domain.indexOf('.'); dot !== -1; dot = domain.indexOf('.', dot + 1)) {
      const head = domain.slice(0, dot);
      for (const fix of suffixFixes().get(domain.slice(dot + 1)) ?? []) {
        const fixed = `${head}.${fix.suffix}`;
        const target = byDomain.get(fixed);
        if (target !== undefined) {
          offer(fixed, fix.cost, target.bonus);
          foundCommon = true;
          continue;
        }
        for (const [near, edit] of oneSlipTargets(fixed)) {
          // Two slips: only in a long name, and not in its first letter.
          if (isInName(edit, near) && near.nameLength >= ANY_SLIP_MIN_LENGTH && edit.at > 0) {
            offer(near.domain, fix.cost + editCost(edit, near.domain), near.bonus);
            foundCommon = true;
          }
        }
        if (icannSuffix(fixed) !== null && !head.startsWith('-') && !head.endsWith('-')) generic.push([fixed, fix.cost, fix.bonus]);
      }
    }
    if (!foundCommon) for (const [fixed, cost, bonus] of generic) offer(fixed, cost, bonus);
  }

  return {
    isWellKnown: (asciiDomain) => isWellKnown(asciiDomain, icannSuffix(asciiDomain)),
    suggest(localPart: string, asciiDomain: string): string[] {
      return suggestDomains(asciiDomain)
        .slice(0, maxSuggestions)
        .map((domain) => `${localPart}@${domain}`);
    },
  };
}

// --- A quick test for the symmetric-deletion index. ---

/** Multiplier of the polynomial string hash; results are kept to 30 bits, so they stay small integers. */
const HASH_BASE = 0x01000193;
const HASH_MASK = 0x3fffffff;
/** Longest domain the quick test handles (RFC 1035 §2.3.4); longer strings skip it. */
const HASH_MAX_LENGTH = 255;
/** HASH_BASE to the power n, modulo 2^32. */
const HASH_POWERS = new Int32Array(HASH_MAX_LENGTH + 1);
HASH_POWERS[0] = 1;
for (let n = 1; n <= HASH_MAX_LENGTH; n++) HASH_POWERS[n] = Math.imul(HASH_POWERS[n - 1]!, HASH_BASE);
/** Hashes of the suffixes of the string under test (reused: the suggester is synchronous). */
const suffixHashes = new Int32Array(HASH_MAX_LENGTH + 1);

/** sum of text[k] * HASH_BASE^(n-1-k), modulo 2^32. */
function polynomialHash(text: string): number {
  let hash = 0;
  for (let k = 0; k < text.length; k++) hash = (Math.imul(hash, HASH_BASE) + text.charCodeAt(k)) | 0;
  return hash;
}

function stringHash(text: string): number {
  return polynomialHash(text) & HASH_MASK;
}

/**
 * False when no key of the deletion index can equal `text` or `text` with one character deleted, so that
 * oneSlipTargets would find nothing; true when one may (the index itself decides). The n + 1 hashes come from
 * prefix and suffix hashes in one pass each, without making the strings.
 */
function mayBeOneSlipFromTarget(text: string, keyHashes: ReadonlySet<number>): boolean {
  const n = text.length;
  if (n > HASH_MAX_LENGTH) return true;
  if (keyHashes.has(stringHash(text))) return true;
  suffixHashes[n] = 0;
  for (let j = n - 1; j >= 0; j--) suffixHashes[j] = (Math.imul(text.charCodeAt(j), HASH_POWERS[n - 1 - j]!) + suffixHashes[j + 1]!) | 0;
  let prefix = 0;
  for (let i = 0; i < n; i++) {
    // text without text[i]: the prefix shifted past the suffix that follows it.
    const deleted = (Math.imul(prefix, HASH_POWERS[n - 1 - i]!) + suffixHashes[i + 1]!) & HASH_MASK;
    if (keyHashes.has(deleted)) return true;
    prefix = (Math.imul(prefix, HASH_BASE) + text.charCodeAt(i)) | 0;
  }
  return false;
}

/** The string and every string one deletion shorter (the keys of the symmetric-deletion index). */
function withDeletions(text: string): Set<string> {
  const keys = new Set<string>([text]);
  for (let i = 0; i < text.length; i++) keys.add(text.slice(0, i) + text.slice(i + 1));
  return keys;
}
