/**
 * The top-level check of the pipeline (decisions.md §4 step 3): a domain whose top-level label is not in the public
 * suffix list, or is reserved for special use, cannot exist on the Internet; no DNS query is made for it.
 */
import { parse } from 'tldts';

/** Special-use names (RFC 6761 §6, RFC 6762 §3, RFC 7686 §2, RFC 9476 §2, RFC 8375 §3). */
const SPECIAL_USE_SUFFIXES: readonly string[] = ['test', 'example', 'invalid', 'localhost', 'local', 'onion', 'alt', 'home.arpa'];

function hasSuffix(domain: string, suffix: string): boolean {
  return domain === suffix || (domain.endsWith(suffix) && domain.charCodeAt(domain.length - suffix.length - 1) === 0x2e);
}

/** True when a lower-case ASCII domain ends in an ICANN top-level domain that is not special-use. */
export function hasPublicTopLevel(asciiDomain: string): boolean {
  if (SPECIAL_USE_SUFFIXES.some((suffix) => hasSuffix(asciiDomain, suffix))) return false;
  return parse(asciiDomain).isIcann === true;
}
