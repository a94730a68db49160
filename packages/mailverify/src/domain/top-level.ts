/**
 * The top-level check of the pipeline (docs/verification.md#the-pipeline, step 3): a domain whose top-level label is
 * not in the public suffix list, or is reserved for special use, cannot exist on the Internet; no DNS query is made for
 * it.
 */
import { parse } from 'tldts';

/** Special-use names (RFC 6761 §6, RFC 6762 §3, RFC 7686 §2, RFC 9476 §2, RFC 8375 §3). */
const SPECIAL_USE_SUFFIXES: readonly string[] = ['test', 'example', 'invalid', 'localhost', 'local', 'onion', 'alt', 'home.arpa'];

function hasSuffix(domain: string, suffix: string): boolean {
  return domain === suffix || (domain.endsWith(suffix) && domain.charCodeAt(domain.length - suffix.length - 1) === 0x2e);
}

/**
 * Top-level labels that are public suffixes themselves (`com`, `jp`): every domain under one of them ends in an ICANN
 * suffix, so the answer is known from the label alone. Under the others (`za`, which lists only `co.za` and its
 * siblings; wildcard-only ones such as `*.ck`; labels not in the list at all) the answer depends on more than the
 * label, and the domain is parsed. There are some 1,500 top-level labels; the map is cleared if junk input ever fills
 * it past a few thousand.
 */
const topLevelIsSuffix = new Map<string, boolean>();
const MAX_TOP_LEVELS = 4096;

/** True when a lower-case ASCII domain ends in an ICANN top-level domain that is not special-use. */
export function hasPublicTopLevel(asciiDomain: string): boolean {
  if (SPECIAL_USE_SUFFIXES.some((suffix) => hasSuffix(asciiDomain, suffix))) return false;
  const topLevel = asciiDomain.slice(asciiDomain.lastIndexOf('.') + 1);
  let isSuffix = topLevelIsSuffix.get(topLevel);
  if (isSuffix === undefined) {
    isSuffix = parse(topLevel).isIcann === true;
    if (topLevelIsSuffix.size >= MAX_TOP_LEVELS) topLevelIsSuffix.clear();
    // A copy, so that the key never holds a whole input line alive.
    topLevelIsSuffix.set((' ' + topLevel).slice(1), isSuffix);
  }
  return isSuffix || parse(asciiDomain).isIcann === true;
}
