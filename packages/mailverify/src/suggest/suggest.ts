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
 *   the namespace (nearly every 3-letter `.com` is registered), so they need a longer name or a typing-typical edit,
 *   and a letter far from the one meant near the start or end of a short name makes another word (`grail`, `libera`).
 * - The dominant providers (gmail.com, yahoo.com, hotmail.com), far commoner than any name near them, also take a
 *   neighbouring key for the first letter (`tahoo`, on any of the name's suffixes: `tahoo.co.uk`) and two slips of
 *   the hand (`gimal`, `gmial.co`); a big provider without its first letter is taken when the rest starts with a
 *   vowel (`ahoo.com`, `andex.ru`); common names of six letters or more take both too (`kibero.it`, `ibero.it`); a
 *   common domain with its suffix typed twice is taken (`gmail.com.com`).
 * - Ties rank by the kind of slip (swapped or doubled letters and neighbouring keys first) and then popularity.
 *
 * Before any of that, a domain that looks like a common domain but is not it (UTS #39 skeletons, look-alike.ts:
 * `gmаil.com` with a Cyrillic а, `rnsn.com`) gets that domain alone. Such a name is no slip of the hand but a
 * homograph, pasted or planted, so it is suggested even when the domain has MX records (`lookAlike`).
 */
import { parse } from 'tldts';
import { COMMON_DOMAINS, COMMON_SUFFIXES, PROVIDER_VARIANTS, SUFFIX_TYPOS } from './common-domains.js';
import { detached, toUnicodeDomain } from '../syntax/idna.js';
import { asciiLookAlikes, hasALabel, skeleton } from './look-alike.js';

// The look-alike checks the pipeline asks beside the suggestions (makeEntry, bench/suggest).
export { isMixedScriptDomain } from './look-alike.js';

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
   * domain is well known or no typo is likely. `asciiDomain` is lower-case A-labels (ParsedAddress.asciiDomainPart);
   * `international` is ParsedAddress.hasInternationalDomainName, which spares a search for `xn--` labels (absent:
   * searched).
   */
  suggest(localPart: string, asciiDomain: string, international?: boolean): string[];
  /** The look-alike's suggestion alone (see `suggest`): what a domain with MX records still gets. */
  lookAlike(localPart: string, asciiDomain: string, international?: boolean): string[];
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
  /** The weight given (addresses per 100,000): the two-slip rules apply to the commonest only. */
  readonly weight: number;
  /**
   * The weights of every target with the same name added up (yahoo: yahoo.com, yahoo.co.uk, yahoo.fr...): the
   * first-letter rules go by the name, as a user who types `tahoo` means Yahoo whatever the suffix.
   */
  nameWeight: number;
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
/** Look-alike answers kept for domains with U-labels (their skeleton costs microseconds). */
const LOOK_ALIKE_CACHE_LIMIT = 4096;
const NONE: readonly never[] = [];
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

/**
 * How many slips apart `a` and `b` are, up to 3 meaning "more than two" (optimal string alignment distance:
 * insertions, deletions, substitutions, swaps of adjacent characters). Names are short, so a full table is cheap;
 * rows are reused.
 */
const osaRows = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

function slipsApart(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || b.length > 60) return 3; // the rows hold 64
  let [before, previous, current] = osaRows as [Int32Array, Int32Array, Int32Array];
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        d = Math.min(d, before[j - 2]! + 1);
      }
      current[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > 2) return 3;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[b.length]!, 3);
}

/**
 * Whether two slips from `intended` look like slips of the hand rather than another word: the letters are the same
 * but for at most two (a letter moved, `gimal`, `yaooh`; doubled or dropped, `hotlamil`, `gml`; one changed,
 * `gmiel`), or two letters are replaced, each by a neighbouring key (`hoynail`: y is next to t, n next to m). Not
 * `gmac` or `hotmart`, real names two slips from gmail and hotmail.
 */
function isTwoSlipsOfTheHand(typed: string, intended: string): boolean {
  if (typed.length > intended.length + 1) return false; // two letters added make a longer name (`yahoofs`, `gnwmail`)
  const counts = new Map<string, number>();
  for (const letter of typed) counts.set(letter, (counts.get(letter) ?? 0) + 1);
  for (const letter of intended) counts.set(letter, (counts.get(letter) ?? 0) - 1);
  let difference = 0;
  for (const count of counts.values()) difference += Math.abs(count);
  if (difference <= 2) return true;
  if (typed.length !== intended.length) return false;
  for (let i = 0; i < typed.length; i++) {
    if (typed[i] !== intended[i] && !isNeighbour(typed[i], intended[i])) return false;
  }
  return true;
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
/**
 * A letter changed to one far from it on the keyboard, in the first two letters or the last: in a shorter name it is
 * as often another word (`grail` for gmail, `libera` for libero) as a slip, unless a vowel stands for a vowel or a
 * letter next to it is typed twice.
 */
const DISTANT_KEY_MIN_LENGTH = 7;
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
/**
 * The few providers so much commoner than any other name near them that more is taken for a slip of theirs (weight as
 * in COMMON_DOMAINS, addresses per 100,000): a neighbouring key for the first letter (`tahoo`, `hmail`) and, in a
 * name with no common domain one slip away, two slips (`gimal`, `hotlamil`). Today gmail.com, yahoo.com, hotmail.com.
 */
const DOMINANT_WEIGHT = 5000;
/** Two slips only in names this long: shorter names two slips from gmail or yahoo are mostly other real names. */
const TWO_SLIP_MIN_LENGTH = 5;
/** Cost of two slips: above any one slip, so a one-slip candidate always ranks first. */
const TWO_SLIP_COST = 1.2;
/**
 * A dropped first letter, from a provider of this weight: the rest is a typo when it starts with a vowel (`ahoo`,
 * `andex`, `utlook`); when it starts with a consonant it is too often a real name or word (`cloud` of icloud).
 */
const DROPPED_FIRST_LETTER_WEIGHT = 800;
/**
 * From this length, names of this weight or more also take a neighbouring key for the first letter (`kibero`,
 * `tandex`, `prange`) and, when the rest starts with a vowel, the first letter dropped (`ibero`, `ogers`): among the
 * 26^6 (some 300 million) six-letter strings, a slip of a common provider's name is far likelier than another real
 * name, as the measures of test/suggest show (no unrelated domain corrected).
 */
const FIRST_LETTER_SIX_LETTER_NAME = 6;
const FIRST_LETTER_SIX_LETTER_WEIGHT = 100;

function isVowel(letter: string | undefined): boolean {
  return letter !== undefined && letter.length === 1 && 'aeiou'.includes(letter);
}

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
    const target = { domain, head, suffix, nameLength: head.replaceAll('.', '').length, lettersOnly: LETTERS_ONLY.test(head), bonus, weight, nameWeight: 0 };
    targets.push(target);
    byDomain.set(domain, target);
    wellKnown.add(domain);
  }
  const nameWeights = new Map<string, number>();
  for (const target of targets) nameWeights.set(target.head, (nameWeights.get(target.head) ?? 0) + target.weight);
  for (const target of targets) target.nameWeight = nameWeights.get(target.head) ?? target.weight;
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
  // Single-label suffixes only (gmail.com, yahoo.com, hotmail.com): twoSlipTargets splits at the last dot.
  const dominant = targets.filter(
    (target) => target.weight >= DOMINANT_WEIGHT && target.nameLength >= TWO_SLIP_MIN_LENGTH && !target.suffix.includes('.'),
  );
  const commonSuffixes = new Set(COMMON_SUFFIXES.map(([suffix]) => suffix));
  const listedTypos = new Map<string, Set<string>>(Object.entries(SUFFIX_TYPOS).map(([s, typos]) => [s, new Set(typos)]));

  // Look-alikes: the LDH strings with a target's skeleton, listed, their hashes among the quick test's keys (so that
  // most domains pass without a lookup); domains with U-labels by their skeleton.
  const ldhLookAlikes = new Map<string, Target>();
  for (const target of targets) {
    for (const variant of asciiLookAlikes(target.domain)) {
      if (variant === target.domain || ldhLookAlikes.has(variant)) continue;
      ldhLookAlikes.set(variant, target);
      keyHashes.add(stringHash(variant));
    }
  }
  let bySkeleton: Map<string, Target> | undefined;
  const internationalLookAlikes = new Map<string, Target | null>();

  /** The common domain `domain` looks like but is not, if any. */
  function lookAlikeTarget(domain: string, international: boolean | undefined): Target | undefined {
    let target: Target | null | undefined;
    if (international ?? hasALabel(domain)) {
      target = internationalLookAlikes.get(domain);
      if (target === undefined) {
        if (bySkeleton === undefined) {
          bySkeleton = new Map();
          for (const t of targets) if (!bySkeleton.has(skeleton(t.domain))) bySkeleton.set(skeleton(t.domain), t);
        }
        target = bySkeleton.get(skeleton(toUnicodeDomain(domain))) ?? null;
        if (internationalLookAlikes.size >= LOOK_ALIKE_CACHE_LIMIT) internationalLookAlikes.clear();
        internationalLookAlikes.set(detached(domain), target);
      }
    } else {
      target = ldhLookAlikes.get(domain);
    }
    return target === null || target === undefined || target.domain === domain ? undefined : target;
  }

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
        if (first && isVowel(target.head[1]) && target.lettersOnly && takesFirstLetterSlip(target, DROPPED_FIRST_LETTER_WEIGHT)) return true;
        return length >= (first ? FIRST_LETTER_MIN_LENGTH : ANY_SLIP_MIN_LENGTH);
      case 'substitute':
        if (first && isNeighbour(edit.typed, edit.intended) && target.lettersOnly && takesFirstLetterSlip(target, DOMINANT_WEIGHT)) return true;
        if (!isNeighbour(edit.typed, edit.intended) && length < DISTANT_KEY_MIN_LENGTH) {
          if (length < ANY_SLIP_MIN_LENGTH || first || edit.at === target.head.length - 1) return false;
          // Inside the name, or a vowel for a vowel (`gmeil`), or the letter next to it typed twice (`yahho`); a
          // consonant far from the one meant near the start makes another word (`grail` for gmail).
          const doubled = edit.typed === target.head[edit.at - 1] || edit.typed === target.head[edit.at + 1];
          return edit.at > 1 || doubled || (isVowel(edit.typed) && isVowel(edit.intended));
        }
        return length >= (first ? FIRST_LETTER_MIN_LENGTH : ANY_SLIP_MIN_LENGTH);
    }
  }

  /** Whether a slip in the first letter of the name is taken: a big provider's name, or a common six-letter one. */
  function takesFirstLetterSlip(target: Target, bigWeight: number): boolean {
    if (target.nameLength >= ANY_SLIP_MIN_LENGTH && target.nameWeight >= bigWeight) return true;
    return target.nameLength >= FIRST_LETTER_SIX_LETTER_NAME && target.nameWeight >= FIRST_LETTER_SIX_LETTER_WEIGHT;
  }

  /** Whether a real suffix is taken for a slip of the common domain's suffix. */
  function acceptsSuffixSlip(typedSuffix: string, target: Target): boolean {
    if (target.nameLength >= ANY_SLIP_MIN_LENGTH) return true;
    // A listed typo form (`aol.co`) or a suffix hardly ever seen in addresses (`msn.mom`, `aol.om`).
    const unusual = listedTypos.get(target.suffix)?.has(typedSuffix) === true || !commonSuffixes.has(typedSuffix);
    return unusual && target.nameLength >= SHORT_NAME_SUFFIX_MIN_LENGTH;
  }

  /**
   * The dominant providers two slips from `domain`, with the first letter kept: both in the name, on the same suffix
   * (`gimal.com`, `hotlamil.com`), or one in the name and the suffix a listed typo form of theirs (`gmial.co`). Asked
   * only when no common domain is one slip away.
   */
  function twoSlipTargets(domain: string): readonly Target[] {
    let found: Target[] | undefined;
    for (const target of dominant) {
      // Cheap tests first: most domains start with another letter, or are too long or short to be two slips away.
      if (domain.charCodeAt(0) !== target.head.charCodeAt(0) || Math.abs(domain.length - target.domain.length) > 3) continue;
      const dot = domain.lastIndexOf('.');
      const typed = domain.slice(0, dot);
      const suffix = domain.slice(dot + 1);
      if (suffix === target.suffix) {
        // Exactly two: one slip away is judged by the one-slip rules, which may have refused it (`grail` for gmail).
        if (slipsApart(typed, target.head) === 2 && isTwoSlipsOfTheHand(typed, target.head)) (found ??= []).push(target);
      } else if (listedTypos.get(target.suffix)?.has(suffix) === true && slipsApart(typed, target.head) === 1) {
        (found ??= []).push(target);
      }
    }
    return found ?? NONE;
  }

  /**
   * A common domain typed twice over at its end (`gmail.com.com`, `hotmail.co.uk.co.uk`): after the first label, the
   * suffix twice. Tested on characters first, since every domain of two labels or more is asked.
   */
  function repeatedSuffixTarget(domain: string): Target | undefined {
    const start = domain.indexOf('.') + 1;
    const rest = domain.length - start;
    if (start === 0 || rest % 2 === 0) return undefined;
    const middle = start + (rest - 1) / 2;
    if (domain.charCodeAt(middle) !== 0x2e) return undefined;
    for (let i = start; i < middle; i++) if (domain.charCodeAt(i) !== domain.charCodeAt(middle + 1 + i - start)) return undefined;
    const target = byDomain.get(domain.slice(0, middle));
    return target?.suffix === domain.slice(start, middle) ? target : undefined;
  }

  function suggestDomains(domain: string, international: boolean | undefined): string[] {
    if (wellKnown.has(domain)) return []; // the commonest case, known before the suffix is looked up
    const real = icannSuffix(domain);
    if (isWellKnown(domain, real)) return [];
    const hasALabels = international ?? hasALabel(domain);
    const lookAlike = hasALabels ? lookAlikeTarget(domain, true) : undefined;
    if (lookAlike !== undefined) return [lookAlike.domain];
    const repeated = repeatedSuffixTarget(domain);
    if (repeated !== undefined) return [repeated.domain];
    // A domain that may be real is only ever corrected to a common domain one slip away (two for the dominant
    // providers); most domains have none, which the hash test tells without building the candidates.
    const nearOneSlip = real === null || mayBeOneSlipFromTarget(domain, keyHashes);
    const ldhLookAlike = nearOneSlip && !hasALabels ? lookAlikeTarget(domain, false) : undefined;
    if (ldhLookAlike !== undefined) return [ldhLookAlike.domain];
    const twoSlips = nearOneSlip ? undefined : twoSlipTargets(domain);
    if (twoSlips?.length === 0) return [];
    const scored = new Map<string, number>();
    const offer = (suggestion: string, cost: number, bonus: number): void => {
      const score = cost - bonus;
      if (score < (scored.get(suggestion) ?? Infinity)) scored.set(suggestion, score);
    };

    for (const [target, edit] of nearOneSlip ? oneSlipTargets(domain) : []) {
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
    else if (scored.size === 0) for (const target of twoSlips ?? twoSlipTargets(domain)) offer(target.domain, TWO_SLIP_COST, target.bonus);
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
    suggest(localPart: string, asciiDomain: string, international?: boolean): string[] {
      return suggestDomains(asciiDomain, international)
        .slice(0, maxSuggestions)
        .map((domain) => `${localPart}@${domain}`);
    },
    lookAlike(localPart: string, asciiDomain: string, international?: boolean): string[] {
      if (maxSuggestions < 1 || isWellKnown(asciiDomain, icannSuffix(asciiDomain))) return [];
      const target = lookAlikeTarget(asciiDomain, international);
      return target === undefined ? [] : [`${localPart}@${target.domain}`];
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
