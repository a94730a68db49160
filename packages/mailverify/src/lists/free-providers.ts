/**
 * The free-provider package list, screened before use. The list (email-providers all.json) collects domains seen in
 * sign-ups, and with the real providers it keeps names no provider can have and typos of the big providers
 * (`example.com`, `hotmail.con`, `yaho.com`). An entry is taken out when:
 *
 * - `reserved`: it is, or is under, a special-use name (data/free-provider-exclusions.ts, RFC 2606, 6761, ...);
 * - `no-public-suffix`: its top-level domain is not delegated (`hotmail.con`, `webmail.co.yu`), so no mail reaches it;
 * - `suffix-typo`: it is the name of a common mailbox domain (src/suggest/common-domains.ts) on a typo form users make
 *   of that domain's suffix (`gmail.co`, `hotmail.cm`, `yahoo.om`: one slip from gmail.com, hotmail.com, yahoo.com),
 *   or a common domain with its suffix typed twice (`gmail.com.com`);
 * - `listed-typo`: it is in the table of known typos (data/free-provider-exclusions.ts).
 *
 * Every entry left is on a delegated suffix, not special-use, and not a domain the built-in suggester corrects (the
 * test over the whole list in test/lists/free-providers.test.ts holds both sides to that).
 */
import { parse } from 'tldts';
import { COMMON_DOMAINS, SUFFIX_TYPOS } from '../suggest/common-domains.js';
import { namesOf } from './data/sourced.js';
import { RESERVED_DOMAINS, TYPO_DOMAINS } from './data/free-provider-exclusions.js';

export type ExclusionReason = 'reserved' | 'no-public-suffix' | 'suffix-typo' | 'listed-typo';

export interface Exclusion {
  readonly domain: string;
  readonly reason: ExclusionReason;
}

export interface ScreenedList {
  readonly kept: string[];
  readonly removed: Exclusion[];
}

/** Entries are clean host names (from usableEntries): tldts can skip URL parsing and validation. */
const HOST_NAME_INPUT = { extractHostname: false, validateHostname: false, detectIp: false, mixedInputs: false };

/**
 * Typo form of a suffix → the heads of the common domains with the suffix it stands for (`co` → gmail, yahoo, ...
 * of the `.com` domains). Built on first use.
 */
let headsByTypoSuffix: Map<string, string[]> | undefined;

function commonHeadsByTypoSuffix(): Map<string, string[]> {
  if (headsByTypoSuffix !== undefined) return headsByTypoSuffix;
  headsByTypoSuffix = new Map();
  for (const [domain] of COMMON_DOMAINS.flatMap((group) => group.domains)) {
    for (const [suffix, typos] of Object.entries(SUFFIX_TYPOS)) {
      if (!domain.endsWith(`.${suffix}`)) continue;
      const head = domain.slice(0, -suffix.length - 1);
      for (const typo of typos) {
        const heads = headsByTypoSuffix.get(typo) ?? [];
        heads.push(head);
        headsByTypoSuffix.set(typo, heads);
      }
    }
  }
  return headsByTypoSuffix;
}

let commonDomains: ReadonlySet<string> | undefined;

/** A common domain with its suffix typed twice (`gmail.com.com`). */
function repeatsCommonSuffix(domain: string): boolean {
  commonDomains ??= new Set(COMMON_DOMAINS.flatMap((group) => group.domains.map(([name]) => name)));
  for (let dot = domain.indexOf('.'); dot !== -1; dot = domain.indexOf('.', dot + 1)) {
    const common = domain.slice(0, dot);
    if (commonDomains.has(common) && common.endsWith(`.${domain.slice(dot + 1)}`)) return true;
  }
  return false;
}

/**
 * A common domain's name on a typo form of its suffix (`gmail.co`). Only the exact name: one more slip in it would
 * also take real providers (`boxmail.co` is a slip of foxmail.com's name on a typo form of `.com`).
 */
function isSuffixTypo(domain: string): boolean {
  if (repeatsCommonSuffix(domain)) return true;
  const heads = commonHeadsByTypoSuffix();
  for (let dot = domain.indexOf('.'); dot !== -1; dot = domain.indexOf('.', dot + 1)) {
    if (heads.get(domain.slice(dot + 1))?.includes(domain.slice(0, dot)) === true) return true;
  }
  return false;
}

/** Top-level labels that are public suffixes themselves (`com`, `de`): most entries need no further look-up. */
const suffixTopLevels = new Map<string, boolean>();

/**
 * The entry is under a delegated (ICANN) public suffix. Asked per top-level label first, since the list's 8,700 names
 * have few: only names under a TLD that is no suffix of its own (`za`: `co.za` is) or none at all are parsed whole.
 */
function hasPublicSuffix(domain: string): boolean {
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  let isSuffix = suffixTopLevels.get(tld);
  if (isSuffix === undefined) {
    isSuffix = parse(tld, HOST_NAME_INPUT).isIcann === true;
    suffixTopLevels.set(tld, isSuffix);
  }
  return isSuffix || parse(domain, HOST_NAME_INPUT).isIcann === true;
}

const RESERVED_NAMES = namesOf(RESERVED_DOMAINS);
const LISTED_TYPOS: ReadonlySet<string> = new Set(namesOf(TYPO_DOMAINS));

/** Special-use names cover their subdomains, top-level ones included (a DomainSet lets a public suffix cover only itself). */
function isReserved(domain: string): boolean {
  return RESERVED_NAMES.some((name) => domain === name || domain.endsWith(`.${name}`));
}

/** Why a package entry is not a free provider, or null when it may be one. */
export function exclusionReason(domain: string): ExclusionReason | null {
  if (isReserved(domain)) return 'reserved';
  if (!hasPublicSuffix(domain)) return 'no-public-suffix';
  if (isSuffixTypo(domain)) return 'suffix-typo';
  if (LISTED_TYPOS.has(domain)) return 'listed-typo';
  return null;
}

/** Splits package entries (in stored form) into the free providers and the entries taken out, with the reason. */
export function screenFreeProviders(entries: readonly string[]): ScreenedList {
  const kept: string[] = [];
  const removed: Exclusion[] = [];
  for (const domain of entries) {
    const reason = exclusionReason(domain);
    if (reason === null) kept.push(domain);
    else removed.push({ domain, reason });
  }
  return { kept, removed };
}
