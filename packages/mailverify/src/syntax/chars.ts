/** Character classes of the address grammar, as lookup tables over ASCII code points. */

export const enum Ch {
  TAB = 0x09,
  LF = 0x0a,
  CR = 0x0d,
  SPACE = 0x20,
  EXCLAMATION = 0x21,
  QUOTE = 0x22,
  HASH = 0x23,
  OPEN_PAREN = 0x28,
  CLOSE_PAREN = 0x29,
  PLUS = 0x2b,
  HYPHEN = 0x2d,
  DOT = 0x2e,
  DIGIT_0 = 0x30,
  DIGIT_9 = 0x39,
  COLON = 0x3a,
  AT = 0x40,
  UPPER_Z = 0x5a,
  OPEN_BRACKET = 0x5b,
  BACKSLASH = 0x5c,
  CLOSE_BRACKET = 0x5d,
  UNDERSCORE = 0x5f,
  LOWER_A = 0x61,
  LOWER_Z = 0x7a,
  TILDE = 0x7e,
  DEL = 0x7f,
  C1_LAST = 0x9f,
  HIGH_SURROGATE_FIRST = 0xd800,
  HIGH_SURROGATE_LAST = 0xdbff,
  LOW_SURROGATE_FIRST = 0xdc00,
  LOW_SURROGATE_LAST = 0xdfff,
  IDEOGRAPHIC_FULL_STOP = 0x3002,
  FULLWIDTH_FULL_STOP = 0xff0e,
  HALFWIDTH_IDEOGRAPHIC_FULL_STOP = 0xff61,
}

function table(chars: string, ranges: ReadonlyArray<readonly [number, number]> = []): Uint8Array {
  const t = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) t[chars.charCodeAt(i)] = 1;
  for (const [from, to] of ranges) for (let c = from; c <= to; c++) t[c] = 1;
  return t;
}

const LETTERS_DIGITS: ReadonlyArray<readonly [number, number]> = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x61, 0x7a],
];

/** RFC 5322 §3.2.3 atext (ASCII part; RFC 6531 §3.3 adds UTF8-non-ascii). */
export const ATEXT = table("!#$%&'*+-/=?^_`{|}~", LETTERS_DIGITS);

/** RFC 1035 §2.3.1 / RFC 5321 §4.1.2 Let-dig and Ldh-str characters. */
export const LDH = table('-', LETTERS_DIGITS);

/** RFC 5321 §4.1.2 qtextSMTP: %d32-33 / %d35-91 / %d93-126 (RFC 6531 adds UTF8-non-ascii). */
export const QTEXT = table('', [
  [32, 33],
  [35, 91],
  [93, 126],
]);

/** RFC 5322 §3.2.2 ctext: %d33-39 / %d42-91 / %d93-126 (obs-ctext controls rejected; RFC 6532 adds non-ASCII). */
export const CTEXT = table('', [
  [33, 39],
  [42, 91],
  [93, 126],
]);

/**
 * RFC 5322 §3.4.1 dtext %d33-90 / %d94-126: what may stand inside `[...]`. `[`, `\` (obs-dtext quoted pairs), white
 * space, controls and non-ASCII can never appear in an RFC 5321 §4.1.3 address literal.
 */
export const DTEXT = table('', [
  [33, 90],
  [94, 126],
]);

/**
 * Classes of ASCII characters in a plain local part (dot-atoms of ASCII atext), as parse.ts's fast path reads them:
 * one bit per kind of character a provider rule judges (provider-rules.ts), so that the union of the bits gathered
 * during the scan answers most rules without a second read of the local part; the dot and the `@` end an atom;
 * 0 for every character a plain local part cannot hold. Lower-case letters are passed before the table is read.
 */
export const enum LocalBit {
  Letter = 1,
  Digit = 2,
  Underscore = 4,
  Hyphen = 8,
  Plus = 16,
  OtherSymbol = 32,
  Dot = 64,
  At = 128,
}

function localBitOf(c: number): number {
  if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) return LocalBit.Letter;
  if (c >= Ch.DIGIT_0 && c <= Ch.DIGIT_9) return LocalBit.Digit;
  if (c === Ch.UNDERSCORE) return LocalBit.Underscore;
  if (c === Ch.HYPHEN) return LocalBit.Hyphen;
  if (c === Ch.PLUS) return LocalBit.Plus;
  if (c === Ch.DOT) return LocalBit.Dot;
  if (c === Ch.AT) return LocalBit.At;
  return ATEXT[c] === 1 ? LocalBit.OtherSymbol : 0;
}

export const PLAIN_LOCAL = Uint8Array.from({ length: 128 }, (_, c) => localBitOf(c));

export const isWsp = (c: number): boolean => c === Ch.SPACE || c === Ch.TAB;

/** UTS-46 §2.3 label separators: full stop and its ideographic and full-width forms. */
export const isLabelSeparator = (c: number): boolean =>
  c === Ch.DOT || c === Ch.IDEOGRAPHIC_FULL_STOP || c === Ch.FULLWIDTH_FULL_STOP || c === Ch.HALFWIDTH_IDEOGRAPHIC_FULL_STOP;

/**
 * Width in UTF-16 units of the non-ASCII character at `i` (code `c >= 0x80`), or 0 when it is not an acceptable
 * UTF8-non-ascii character (RFC 6531 §3.3): a C1 control (docs/syntax.md#domains) or a lone surrogate (not encodable as UTF-8).
 */
export function nonAsciiWidth(input: string, i: number, c: number): number {
  if (c <= Ch.C1_LAST) return 0;
  if (c >= Ch.HIGH_SURROGATE_FIRST && c <= Ch.LOW_SURROGATE_LAST) {
    if (c > Ch.HIGH_SURROGATE_LAST) return 0;
    const next = input.charCodeAt(i + 1);
    return next >= Ch.LOW_SURROGATE_FIRST && next <= Ch.LOW_SURROGATE_LAST ? 2 : 0;
  }
  return 1;
}

/** UTF-8 octets of a non-ASCII character of UTF-16 width `width` and first unit `c`. */
export const utf8Octets = (c: number, width: number): number => (width === 2 ? 4 : c < 0x800 ? 2 : 3);

/**
 * Characters a local part may not hold, though RFC 6531 admits every non-ASCII character, because they make an address
 * invisible, ambiguous or dangerous to display (the policy of python-email-validator's `check_unsafe_chars`):
 * Unicode general category C (controls, format characters such as U+200B, U+202E and U+FEFF, surrogates, private use,
 * unassigned) and the separators Zl and Zp (U+2028, U+2029), and U+FFFD, the mark of broken decoding.
 */
export const UNSAFE_IN_LOCAL_PART = 1;
/** Zs: spaces other than U+0020 (U+00A0, U+3000...); accepted inside a quoted string only. */
export const SPACE_SEPARATOR = 2;
/** Category M: a combining mark cannot begin a local part, having nothing to combine with. */
export const COMBINING_MARK = 4;

let bmpCategories: Uint8Array | undefined;
const UNSAFE_CATEGORY = /[\p{C}\p{Zl}\p{Zp}\uFFFD]/u;
const SPACE_CATEGORY = /\p{Zs}/u;
const MARK_CATEGORY = /\p{M}/u;

function categoryBits(character: string): number {
  return (
    (UNSAFE_CATEGORY.test(character) ? UNSAFE_IN_LOCAL_PART : 0) |
    (SPACE_CATEGORY.test(character) ? SPACE_SEPARATOR : 0) |
    (MARK_CATEGORY.test(character) ? COMBINING_MARK : 0)
  );
}

/**
 * The category bits above of the non-ASCII character at `i` (first unit `c`, `width` from nonAsciiWidth). Characters
 * of the Basic Multilingual Plane are looked up in a table built once, on first use, from the Unicode data of the
 * JavaScript engine; the rare supplementary ones are tested directly.
 */
export function localCharacterBits(input: string, i: number, c: number, width: number): number {
  if (width === 2) return categoryBits(input.slice(i, i + 2));
  if (bmpCategories === undefined) {
    bmpCategories = new Uint8Array(0x10000);
    for (let code = 0x80; code < 0x10000; code++) bmpCategories[code] = categoryBits(String.fromCharCode(code));
  }
  return bmpCategories[c]!;
}
