/**
 * IDNA for domain labels: UTS-46 (Unicode IDNA Compatibility Processing, https://www.unicode.org/reports/tr46/)
 * through the `tr46` package, so that every Node.js version gives the same answers (the runtime's own URL parser
 * has applied different Unicode versions and different rules from one release to the next).
 */
import tr46 from 'tr46';

/**
 * UTS-46 §4 steps 1–3 (map, normalize, break) and the status of each code point (§4.1 step 7: disallowed code points
 * fail) without any rule that judges a label as a whole: the mapping of characters and of list data. Nontransitional
 * (UTS-46 §4 Processing, as IDNA2008: `ß`, `ς`, ZWJ and ZWNJ are kept, not mapped away).
 */
const MAPPING_ONLY = {
  transitionalProcessing: false,
  checkHyphens: false,
  checkBidi: false,
  checkJoiners: false,
  useSTD3ASCIIRules: false,
  verifyDNSLength: false,
} as const;

/**
 * UTS-46 §4.1 validity criteria for one whole label, as RFC 5891 §5.4 asks of a U-label or a decoded A-label.
 * CheckHyphens is off: it also refuses `--` in the third and fourth positions (RFC 5891 §4.2.3.1), and a label is
 * only required to be LDH, as `ab--cd` is (RFC 1035 §2.3.1, docs/syntax.md#domains). The rule that a label neither
 * starts nor ends with `-` is the parser's, applied to the mapped Unicode label, to its A-label and to the label an
 * `xn--` label decodes to (isValidALabel).
 */
const LABEL_RULES = {
  transitionalProcessing: false,
  checkHyphens: false,
  checkBidi: true, // RFC 5893 §2, the Bidi rule
  checkJoiners: true, // RFC 5892 Appendix A.1 and A.2: ZWNJ and ZWJ only in their contexts (CONTEXTJ)
  useSTD3ASCIIRules: true, // RFC 1035 §2.3.1: letters, digits and hyphens
  verifyDNSLength: true, // RFC 1035 §2.3.4: 1 to 63 octets; a label of ignored characters only maps to nothing
  ignoreInvalidPunycode: false, // RFC 3492: an `xn--` label must decode
} as const;

const CHAR_CACHE_LIMIT = 4096;
const charCache = new Map<number, string | null>();

/**
 * The UTS-46 mapping of one non-ASCII code point, or null when UTS-46 disallows it everywhere. The character is
 * mapped after a plain letter (`a`) and the letter removed, so that a combining mark is not judged as the start of a
 * label; one that composes with the letter maps to '' here, which is harmless for the uses below (disallowed test,
 * hyphen test, non-LDH test). No rule for whole labels applies: the Bidi rule and CONTEXTJ would judge the artificial
 * label `a` + character, not the label the character stands in.
 */
export function mapDomainChar(codePoint: number): string | null {
  let mapped = charCache.get(codePoint);
  if (mapped !== undefined) return mapped;
  const { domain, error } = tr46.toUnicode('a' + String.fromCodePoint(codePoint), MAPPING_ONLY);
  mapped = error ? null : domain.slice(1);
  if (charCache.size < CHAR_CACHE_LIMIT) charCache.set(codePoint, mapped);
  return mapped;
}

/**
 * The lower-case A-labels of a domain name (list data, `müll.email` → `xn--mll-hoa.email`), or null when it holds a
 * disallowed code point. Mapping only: the caller judges what it keeps.
 */
export function mapDomainToAscii(domain: string): string | null {
  return tr46.toASCII(domain, MAPPING_ONLY);
}

const UNICODE_CACHE_LIMIT = 4096;
const unicodeCache = new Map<string, string>();

/**
 * The U-labels of lower-case A-labels the parser has checked (`xn--gmil-63d.com` → `gmаil.com`), by the mapping
 * alone. Decoding costs microseconds: the answers are kept.
 */
export function toUnicodeDomain(asciiDomain: string): string {
  let unicode = unicodeCache.get(asciiDomain);
  if (unicode === undefined) {
    unicode = tr46.toUnicode(asciiDomain, MAPPING_ONLY).domain;
    if (unicodeCache.size >= UNICODE_CACHE_LIMIT) unicodeCache.clear();
    unicodeCache.set(detached(asciiDomain), unicode);
  }
  return unicode;
}

const LABEL_CACHE_LIMIT = 4096;

/**
 * A copy of `text` that holds no reference to a larger string. A substring may be a view of the whole input (or of
 * the chunk of a file the input was cut from); a cache key kept as such a view would keep all of that alive.
 */
export function detached(text: string): string {
  return (' ' + text).slice(1);
}
const labelCache = new Map<string, string | null>();

/**
 * The lower-case A-label of a label that has non-ASCII characters, or null when UTS-46 rejects the label as a whole
 * (LABEL_RULES). Each label is judged alone: a label is a Bidi domain name when it has a right-to-left character.
 */
export function toALabel(label: string): string | null {
  let alabel = labelCache.get(label);
  if (alabel !== undefined) return alabel;
  const ascii = tr46.toASCII(label, LABEL_RULES);
  // A label that maps to several labels is not one valid label.
  alabel = ascii === null || ascii.includes('.') ? null : ascii;
  if (labelCache.size >= LABEL_CACHE_LIMIT) labelCache.clear();
  labelCache.set(detached(label), alabel);
  return alabel;
}

/**
 * True when an ASCII label starting with `xn--` is a valid A-label (RFC 5890 §2.3.2.1, RFC 5891 §5.4): it decodes
 * (RFC 3492) to a label with non-ASCII characters that passes LABEL_RULES and neither starts nor ends with `-`, and
 * encoding that gives it back unchanged.
 */
export function isValidALabel(lowerLabel: string): boolean {
  let valid = aLabelCache.get(lowerLabel);
  if (valid !== undefined) return valid;
  const { domain: decoded, error } = tr46.toUnicode(lowerLabel, LABEL_RULES);
  valid = !error && !decoded.startsWith('-') && !decoded.endsWith('-') && toALabel(decoded) === lowerLabel;
  if (aLabelCache.size >= LABEL_CACHE_LIMIT) aLabelCache.clear();
  aLabelCache.set(detached(lowerLabel), valid);
  return valid;
}

/** Decoding, checking and re-encoding a label costs tens of microseconds: the answers are kept, as for toALabel. */
const aLabelCache = new Map<string, boolean>();
