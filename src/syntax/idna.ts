/**
 * IDNA for domain labels: UTS-46 mapping through Node's WHATWG `domainToASCII`/`domainToUnicode` (nontransitional,
 * without the STD3 and hyphen checks, which the parser applies itself), and the A-label decode check.
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import punycode from 'punycode/punycode.js';

const CHAR_CACHE_LIMIT = 4096;
const charCache = new Map<number, string | null>();

/** Code points whose validity depends on their neighbours (RFC 5892 CONTEXTJ): judged with the whole label. */
const ZERO_WIDTH_NON_JOINER = 0x200c;
const ZERO_WIDTH_JOINER = 0x200d;

/**
 * The UTS-46 mapping of one non-ASCII code point, or null when UTS-46 disallows it everywhere. Node maps whole host
 * names only, so the character is mapped after a plain letter (`a`, which keeps the host from reading as an IPv4
 * number) and the letter removed; a combining mark that composes with it maps to '' here, which is harmless for the
 * uses below (disallowed test, hyphen test, non-LDH test).
 */
export function mapDomainChar(codePoint: number): string | null {
  let mapped = charCache.get(codePoint);
  if (mapped !== undefined) return mapped;
  const ch = String.fromCodePoint(codePoint);
  if (codePoint === ZERO_WIDTH_NON_JOINER || codePoint === ZERO_WIDTH_JOINER) {
    mapped = ch;
  } else {
    const unicode = domainToUnicode('a' + ch);
    mapped = unicode === '' ? null : unicode.slice(1);
  }
  if (charCache.size < CHAR_CACHE_LIMIT) charCache.set(codePoint, mapped);
  return mapped;
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

/** The lower-case A-label of a label that has non-ASCII characters, or null when IDNA rejects the label as a whole. */
export function toALabel(label: string): string | null {
  let alabel = labelCache.get(label);
  if (alabel !== undefined) return alabel;
  const ascii = domainToASCII(label);
  // A label that maps to nothing (only ignored characters) or to several labels is not one valid label.
  alabel = ascii === '' || ascii.includes('.') ? null : ascii;
  if (labelCache.size >= LABEL_CACHE_LIMIT) labelCache.clear();
  labelCache.set(detached(label), alabel);
  return alabel;
}

/**
 * True when an ASCII label starting with `xn--` is a valid A-label (RFC 5890 §2.3.2.1): it decodes (RFC 3492), the
 * result has non-ASCII characters, and Node's UTS-46 processing accepts it and gives it back unchanged.
 */
export function isValidALabel(lowerLabel: string): boolean {
  let valid = aLabelCache.get(lowerLabel);
  if (valid !== undefined) return valid;
  valid = decodesToValidALabel(lowerLabel);
  if (aLabelCache.size >= LABEL_CACHE_LIMIT) aLabelCache.clear();
  aLabelCache.set(detached(lowerLabel), valid);
  return valid;
}

/** Decoding and re-encoding costs some 1.5 µs a label: the answers are kept, as for toALabel. */
const aLabelCache = new Map<string, boolean>();

function decodesToValidALabel(lowerLabel: string): boolean {
  let decoded: string;
  try {
    decoded = punycode.decode(lowerLabel.slice(4));
  } catch {
    return false;
  }
  let hasNonAscii = false;
  for (let i = 0; i < decoded.length; i++) {
    if (decoded.charCodeAt(i) >= 0x80) {
      hasNonAscii = true;
      break;
    }
  }
  return hasNonAscii && domainToASCII(decoded) === lowerLabel;
}
