/**
 * What each corpus row means under OUR policy (docs/syntax.md).
 *
 * Every row of test/fixtures/corpora/*.jsonl gets an Expectation, decided from the input and the suite's own metadata,
 * never from our parser's answer:
 * - `undecidable`: the suite asks another question (an option we do not have, a test upstream does not enforce);
 * - `verdict`: the suite's validity, and the validity our policy gives. They differ only through a named policy rule
 *   (a Reason). With no rule, the policy is taken to agree with the suite, so a parser that disagrees there is a
 *   suspected bug, not a deviation.
 *
 * The rules read addresses through two small helpers: `lex`, which removes comments and folding white space and notes
 * where they stood and which obsolete forms it met, and `isPlainMailbox`, a deliberately simple reading of §3 used
 * only to confirm that nothing else is wrong with a row when a suite objects to one feature we accept.
 */
import { isIPv6 } from 'node:net';
import tr46 from 'tr46';
import type { SyntaxOptions } from '../../packages/mailverify/src/index.js';

// ---------------------------------------------------------------------------------------------------------------
// Corpus rows

export const SUITES = [
  'egulias-emailvalidator',
  'email-addresses',
  'go-net-mail',
  'hapi-address',
  'iamcal-rfc822',
  'isemail',
  'python-email-validator',
  'validatorjs-isemail',
] as const;
export type Suite = (typeof SUITES)[number];

/** One JSON line of a corpus file; the fields besides `address` and `valid` differ per suite (corpora/README.md). */
export interface CorpusRow {
  readonly address: string;
  readonly valid: boolean;
  readonly [field: string]: unknown;
}

export interface Row {
  readonly suite: Suite;
  /** The row's `id` where the suite has one (isemail, iamcal), otherwise its zero-based line number. */
  readonly key: string | number;
  readonly data: CorpusRow;
}

export function rowsOf(suite: Suite, jsonl: string): Row[] {
  return jsonl
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => {
      const data = JSON.parse(line) as CorpusRow;
      const id = data['id'];
      return { suite, key: typeof id === 'string' || typeof id === 'number' ? id : index, data };
    });
}

// ---------------------------------------------------------------------------------------------------------------
// Reasons: the fixed set of one-line explanations a deviation may carry

export const REASON = {
  // Our policy accepts what the suite rejects.
  CFWS_EDGE: 'CFWS accepted at the edges and stripped (docs/syntax.md)',
  IPV6_ONE_GROUP: 'IPv6 `::` standing for a single group accepted (docs/syntax.md, as RFC 4291 parsers do)',
  ESCAPED_NON_ASCII: 'escaped non-ASCII character in a quoted string accepted (RFC 6532, docs/syntax.md)',
  QUOTED_LOCAL: 'quoted local part accepted (RFC 5321 Quoted-string)',
  ADDRESS_LITERAL: 'IPv4/IPv6 address literal accepted (RFC 5321 §4.1.3)',
  NON_ASCII_LOCAL: 'any UTF-8 character but unsafe ones accepted in the local part (RFC 6531 UTF8-non-ascii)',
  UTS46_MAPPED: 'full-width or compatibility characters in the domain are mapped by UTS-46 and accepted',
  UTS46_SYMBOL: 'a non-letter character that UTS-46 keeps (tr46, docs/syntax.md) accepted in a label',
  SHORT_TLD: 'one-letter top-level label accepted (only an all-digit one is rejected)',
  SPECIAL_USE: 'special-use domain names are not a syntax question (DomainDoesNotExist at pipeline step 3)',
  NFC_CHECK: 'python checks the NFC-normalized address; we check the code points as written',
  TLD_LETTER: 'python requires a top-level label ending in a letter; we only reject an all-digit one',
  RESERVED_HYPHENS: 'python rejects `ab--` labels (RFC 5891 reserved hyphens); we only require LDH labels',
  // Our policy rejects what the suite accepts.
  UNSAFE_LOCAL:
    'unsafe Unicode in the local part rejected: category C, Zl, Zp, U+FFFD, a Zs space outside quotes, a leading combining mark (docs/syntax.md)',
  DISPLAY_NAME: 'display name or angle-addr syntax is not an address (docs/syntax.md)',
  ADDRESS_LIST: 'address list or group syntax is not an address (docs/syntax.md)',
  UNCLOSED: 'unclosed quoted string, comment or domain literal rejected',
  NO_AT: 'no `@` outside quotes and comments (AtSignNotFound)',
  EMPTY_LOCAL: 'empty local part rejected (InvalidLocalPartLength)',
  EMPTY_LABEL: 'empty domain or empty domain label rejected',
  CFWS_INNER: 'CFWS between atoms or labels rejected (obsolete RFC 5322 syntax, docs/syntax.md)',
  OBS_FWS: 'obs-FWS (more than one CRLF fold in a row) rejected (docs/syntax.md)',
  BAD_FWS: 'CR or LF outside a CRLF fold followed by white space rejected',
  QUOTED_CONTROL: 'TAB, CR, LF or another control character inside quotes rejected (RFC 5321 qtextSMTP)',
  OBS_CONTROL: 'escaped or commented control character rejected (obs-qp, obs-ctext; docs/syntax.md)',
  OBS_LOCAL_PART: 'obs-local-part mixing quoted strings and atoms rejected (docs/syntax.md)',
  BACKSLASH: 'backslash outside quotes rejected (docs/syntax.md)',
  EMPTY_QUOTED: 'empty quoted string rejected (docs/syntax.md)',
  LOCAL_LENGTH: 'local part over 64 UTF-8 octets rejected (the suite does not count it, or only warns)',
  LENGTH: 'label over 63, domain over 253 or address over 254 octets (A-label form) rejected',
  SINGLE_LABEL: 'single-label domain rejected (at least two labels, docs/syntax.md)',
  NUMERIC_TLD: 'numeric top-level label rejected (docs/syntax.md)',
  BAD_A_LABEL: '`xn--` label that is not a valid A-label rejected (docs/syntax.md)',
  UTS46_DISALLOWED: 'domain character that UTS-46 disallows or maps to a non-LDH character rejected (docs/syntax.md)',
  IDNA_LABEL: 'label that IDNA rejects as a whole (context rules, bidi) rejected (docs/syntax.md)',
  BAD_LITERAL: 'malformed or untagged address literal rejected (the suite only warns)',
  PROVIDER: 'provider rule: a Gmail username is 6-30 letters or digits, dots allowed (IspSpecificSyntaxFailure)',
  // Refused under the syntax options the suite's own options map to (syntaxOptionsFor).
  REFUSED_QUOTED: 'quoted local part refused (allowQuotedLocalPart: false)',
  REFUSED_LITERAL: 'address literal refused (allowAddressLiteral: false)',
  REFUSED_NON_ASCII_LOCAL: 'non-ASCII local part refused (allowInternationalLocalPart: false)',
  // The suite asks another question.
  SKIPPED_UPSTREAM: 'the upstream test is skipped: its expectation is not enforced',
  OPT_PY_EMPTY_LOCAL: 'option allow_empty_local=true: a policy option we don\'t have',
  OPT_PY_TEST_ENV: 'option test_environment=true (accepts the bare domain `test`): a policy option we don\'t have',
  OPT_HAPI_UNICODE: 'option allowUnicode=false refuses a non-ASCII domain too: a policy option we don\'t have',
  OPT_HAPI_TLDS: 'option tlds (allow list of top-level labels): a policy option we don\'t have',
  OPT_HAPI_SEGMENTS: 'option minDomainSegments=1: a policy option we don\'t have',
  OPT_IGNORE_LENGTH: 'option ignoreLength / ignore_max_length=true: a policy option we don\'t have',
  OPT_VJS_UNDERSCORES: 'option allow_underscores=true: a policy option we don\'t have',
  OPT_VJS_REQUIRE_NAME: 'option require_display_name=true: a policy option we don\'t have',
  OPT_VJS_IP_DOMAIN: 'option allow_ip_domain=true (a bare IP address as the domain): a policy option we don\'t have',
  OPT_VJS_BLACKLISTED_CHARS: 'option blacklisted_chars: a policy option we don\'t have',
  OPT_VJS_HOST_LIST: 'option host_blacklist / host_whitelist: a policy option we don\'t have',
  OPT_EA_RFC6532_OFF: 'email-addresses main export with rfc6532 off refuses a non-ASCII domain too: a policy option we don\'t have',
  OPT_EA_PARTIAL: 'option partial=true accepts a prefix of the input: a policy option we don\'t have',
  OPT_EA_STRICT: 'option strict / rejectTLD: a policy option we don\'t have',
  OPT_EGULIAS_NO_WARNINGS: 'NoRFCWarningsValidation rejects any RFC warning: a policy option we don\'t have',
  // Extra facts the suite reports in another form than our API.
  FACT_UNQUOTED: 'the suite strips needless quotes and escapes; our local part keeps them as written (docs/syntax.md)',
  FACT_NFC: 'the suite NFC-normalizes the local part; ours is as written',
  FACT_LITERAL: 'the suite normalizes the IPv6 literal; our domainPart is as written',
  FACT_DOMAIN: 'the suite reports the normalized U-label domain; our domainPart is as written',
} as const;
export type Reason = (typeof REASON)[keyof typeof REASON];

// ---------------------------------------------------------------------------------------------------------------
// Expectations

/** The fields of a successful parseAddress result that a suite's extra facts are compared with. */
export type FactField = 'emailAddress' | 'localPart' | 'domainPart' | 'asciiDomainPart' | 'hasInternationalMailboxName';

export interface Fact {
  /** The suite's field name. */
  readonly name: string;
  readonly suiteValue: string | boolean;
  readonly field: FactField;
  /** Why the suite's value differs from ours by design; null when they must be equal. */
  readonly reason: Reason | null;
}

export type Expectation =
  | { readonly kind: 'undecidable'; readonly suiteSays: string; readonly reason: Reason }
  | {
      readonly kind: 'verdict';
      readonly suiteValid: boolean;
      /** What docs/syntax.md says; equal to suiteValid unless `reason` names a policy rule that differs. */
      readonly valid: boolean;
      readonly reason: Reason | null;
      /** Extra facts asserted by the suite, for rows both sides accept. */
      readonly facts: readonly Fact[];
    };

interface Call {
  readonly valid: boolean;
  readonly reason: Reason;
}

export function expectationFor(row: Row): Expectation {
  const { data } = row;
  const suiteSays = data.valid ? 'valid' : 'invalid';
  if (data['skippedUpstream'] === true) return { kind: 'undecidable', suiteSays, reason: REASON.SKIPPED_UPSTREAM };
  const a = analyse(data.address);
  const call = suiteRule(row, a) ?? genericRule(row, a);
  const option = optionQuestion(row, a, call);
  if (option !== null) return { kind: 'undecidable', suiteSays, reason: option };
  const valid = call?.valid ?? data.valid;
  return {
    kind: 'verdict',
    suiteValid: data.valid,
    valid,
    reason: call !== null && call.valid !== data.valid ? call.reason : null,
    facts: data.valid && valid ? factsOf(row, a) : [],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading addresses

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** C0 controls, DEL and C1 controls (docs/syntax.md counts U+0080–U+009F as controls). */
const isControl = (c: number): boolean => c < 0x20 || (c >= 0x7f && c <= 0x9f);
const isFwsChar = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;

type Defect = 'obs-FWS' | 'bad FWS' | 'control in quotes' | 'obs-qp or obs-ctext';

export interface Lexed {
  /** The input without comments and folding white space. */
  readonly core: string;
  /** Where CFWS stood: nowhere, only at the edges of the parts, or also between atoms or labels. */
  readonly cfws: 'none' | 'edges' | 'inner';
  /** The first obsolete or malformed form met in white space, quotes or comments. */
  readonly defect: Defect | null;
}

/**
 * A small RFC 5322 lexer: quoted strings and domain literals are kept whole, comments and white space removed. An
 * unclosed quoted string, comment or literal gives null.
 */
export function lex(input: string): Lexed | null {
  let core = '';
  let cfws: Lexed['cfws'] = 'none';
  let defect: Defect | null = null;
  let pendingCfws = false;
  const note = (d: Defect): void => {
    defect ??= d;
  };
  const emit = (text: string): void => {
    if (pendingCfws) {
      // Edges: at the start, right after the `@` or right before it (docs/syntax.md).
      const atEdge = core === '' || core.endsWith('@') || text.startsWith('@');
      cfws = !atEdge ? 'inner' : cfws === 'none' ? 'edges' : cfws;
      pendingCfws = false;
    }
    core += text;
  };
  let i = 0;
  while (i < input.length) {
    const c = input.charCodeAt(i);
    let end: number;
    if (c === QUOTE) {
      end = scanQuoted(input, i, note);
      if (end < 0) return null;
      emit(input.slice(i, end));
    } else if (c === 0x5b /* [ */) {
      end = input.indexOf(']', i) + 1;
      if (end === 0) return null;
      emit(input.slice(i, end));
    } else if (c === 0x28 /* ( */) {
      end = scanComment(input, i, note);
      if (end < 0) return null;
      pendingCfws = true;
    } else if (isFwsChar(c)) {
      end = scanFws(input, i, note);
      pendingCfws = true;
    } else if (c === BACKSLASH) {
      // Not RFC 5322 outside quotes, but keep the pair whole: `a\ b` is one (rejected) word, not CFWS between two.
      end = Math.min(i + 2, input.length);
      emit(input.slice(i, end));
    } else {
      end = i + 1;
      emit(input[i]!);
    }
    i = end;
  }
  if (pendingCfws && cfws === 'none') cfws = 'edges';
  return { core, cfws, defect };
}

function scanQuoted(input: string, start: number, note: (d: Defect) => void): number {
  for (let j = start + 1; j < input.length; j++) {
    const c = input.charCodeAt(j);
    if (c === QUOTE) return j + 1;
    if (c === BACKSLASH) {
      if (j + 1 >= input.length) return -1;
      if (isControl(input.charCodeAt(++j))) note('obs-qp or obs-ctext');
    } else if (isControl(c)) {
      note('control in quotes');
    }
  }
  return -1;
}

function scanComment(input: string, start: number, note: (d: Defect) => void): number {
  let depth = 0;
  let j = start;
  while (j < input.length) {
    const c = input.charCodeAt(j);
    if (c === 0x28) {
      depth++;
    } else if (c === 0x29) {
      if (--depth === 0) return j + 1;
    } else if (c === BACKSLASH) {
      if (j + 1 >= input.length) return -1;
      const escaped = input.charCodeAt(++j);
      if (isControl(escaped) && escaped !== 0x09) note('obs-qp or obs-ctext');
    } else if (isFwsChar(c)) {
      j = scanFws(input, j, note);
      continue;
    } else if (isControl(c)) {
      note('obs-qp or obs-ctext');
    }
    j++;
  }
  return -1;
}

/** A run of white space: RFC 5322 FWS allows one CRLF, followed by WSP. */
function scanFws(input: string, start: number, note: (d: Defect) => void): number {
  let folds = 0;
  let j = start;
  while (j < input.length && isFwsChar(input.charCodeAt(j))) {
    const c = input.charCodeAt(j);
    if (c === 0x0d && input.charCodeAt(j + 1) === 0x0a && (input[j + 2] === ' ' || input[j + 2] === '\t')) {
      folds++;
      j += 2;
    } else if (c === 0x0d || c === 0x0a) {
      note('bad FWS');
      j++;
    } else {
      j++;
    }
  }
  if (folds > 1) note('obs-FWS');
  return j;
}

interface Parts {
  readonly local: string;
  readonly domain: string;
  /** More than one `@` outside quotes and literals. */
  readonly extraAt: boolean;
}

/** Splits a CFWS-free address at its `@` signs outside quoted strings and literals. */
function splitParts(core: string): Parts | null {
  const ats: number[] = [];
  let quoted = false;
  let literal = false;
  for (let i = 0; i < core.length; i++) {
    const c = core[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (literal) {
      literal = c !== ']';
    } else if (c === '"') {
      quoted = true;
    } else if (c === '[') {
      literal = true;
    } else if (c === '@') {
      ats.push(i);
    }
  }
  const first = ats[0];
  const last = ats[ats.length - 1];
  if (first === undefined || last === undefined) return null;
  return { local: core.slice(0, first), domain: core.slice(last + 1), extraAt: ats.length > 1 };
}

/** What the rules need to know about one input. */
export interface Analysis {
  readonly input: string;
  readonly lexed: Lexed | null;
  readonly parts: Parts | null;
}

export function analyse(input: string): Analysis {
  const lexed = lex(input);
  return { input, lexed, parts: lexed === null ? null : splitParts(lexed.core) };
}

const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');
const hasNonAscii = (s: string): boolean => /[^\x00-\x7f]/.test(s);
const isQuoted = (local: string): boolean => /^"(?:[^"\\]|\\[\s\S])*"$/.test(local);
const isLiteral = (domain: string): boolean => domain.startsWith('[') && domain.endsWith(']');
/** UTS-46 §2.3 label separators. */
const labelsOf = (domain: string): string[] => domain.split(/[.\u3002\uff0e\uff61]/);

/** An IPv4 or `IPv6:` literal, well formed (docs/syntax.md: leading zeros allowed, tag case-insensitive). */
function isWellFormedLiteral(domain: string): boolean {
  const body = domain.slice(1, -1);
  const v6 = /^ipv6:(.*)$/i.exec(body);
  if (v6 !== null) return isIPv6(v6[1]!) && !v6[1]!.includes('%');
  return isIPv4(body);
}

function isIPv4(s: string): boolean {
  const parts = s.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/** An IPv6 literal whose `::` stands for exactly one 16-bit group (an IPv4 tail counts as two groups). */
function compressesOneGroup(domain: string): boolean {
  const v6 = /^\[ipv6:(.*)\]$/i.exec(domain);
  if (v6 === null || !isWellFormedLiteral(domain) || !v6[1]!.includes('::')) return false;
  const groups = v6[1]!.split(/::|:/).filter((g) => g !== '');
  const count = groups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  return count === 7;
}

/** UTS-46 mapping only (docs/syntax.md#domains): null when a code point is disallowed. */
const mappedDomainOf = (domain: string): string | null => {
  const { domain: mapped, error } = tr46.toUnicode(domain, { transitionalProcessing: false });
  return error ? null : mapped;
};

/** The rules docs/syntax.md#domains applies to each label as a whole, lengths and LDH aside (judged below). */
const LABEL_RULES = { transitionalProcessing: false, checkBidi: true, checkJoiners: true } as const;

/** The lower-case A-label form of a domain name, each label judged alone by UTS-46 (tr46), or null when it has none. */
const asciiDomainOf = (domain: string): string | null => {
  const labels = mappedDomainOf(domain)?.split('.').map((label) => tr46.toASCII(label, LABEL_RULES));
  return labels === undefined || labels.includes(null) ? null : labels.join('.');
};

/** An `xn--` label that docs/syntax.md refuses: it does not decode to a valid label that encodes back to it. */
const isBadALabel = (label: string): boolean => {
  const lower = label.toLowerCase();
  const { domain: decoded, error } = tr46.toUnicode(lower, LABEL_RULES);
  return error || decoded.startsWith('-') || decoded.endsWith('-') || tr46.toASCII(decoded, LABEL_RULES) !== lower;
};

const ATEXT_CLASS = "A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~\\u00a0-\\ud7ff\\ue000-\\uffff\\u{10000}-\\u{10ffff}";
const DOT_STRING = new RegExp(`^[${ATEXT_CLASS}]+(?:\\.[${ATEXT_CLASS}]+)*$`, 'u');
const NON_ASCII_CLASS = '\\u00a0-\\ud7ff\\ue000-\\uffff\\u{10000}-\\u{10ffff}';
const QUOTED_STRING = new RegExp(
  `^"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e${NON_ASCII_CLASS}]|\\\\[\\x20-\\x7e${NON_ASCII_CLASS}])+"$`,
  'u',
);
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * docs/syntax.md for the plain cases, provider rules aside: no CFWS; a dot-string or non-empty quoted string of at most
 * 64 UTF-8 octets; a well-formed IPv4/IPv6 literal, or a domain whose UTS-46 A-label form has at least two LDH labels
 * of at most 63 octets, a top-level label that is not all digits and at most 253 octets; at most 254 octets in all.
 */
export function isPlainMailbox(address: string): boolean {
  const parts = splitParts(address);
  if (parts === null || parts.extraAt) return false;
  const { local, domain } = parts;
  if (!DOT_STRING.test(local) && !QUOTED_STRING.test(local)) return false;
  if (utf8Length(local) > 64) return false;
  if (isLiteral(domain)) return isWellFormedLiteral(domain) && utf8Length(local) + 1 + domain.length <= 254;
  const ascii = asciiDomainOf(domain);
  if (ascii === null || ascii.length > 253 || utf8Length(local) + 1 + ascii.length > 254) return false;
  const labels = ascii.split('.');
  const unicodeLabels = tr46.toUnicode(ascii).domain.split('.');
  return (
    labels.length >= 2 &&
    labels.every((label) => LDH_LABEL.test(label)) &&
    unicodeLabels.every((label) => !label.startsWith('-') && !label.endsWith('-')) &&
    !/^\d+$/.test(labels[labels.length - 1]!)
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Policy rules (docs/syntax.md), in the order they are tried

type Predicate = (a: Analysis, parts: Parts) => boolean;

/** Forms our policy rejects, whatever a suite says. */
const REJECTED: ReadonlyArray<readonly [Reason, Predicate]> = [
  [REASON.CFWS_INNER, (a) => a.lexed?.cfws === 'inner'],
  [REASON.OBS_FWS, (a) => a.lexed?.defect === 'obs-FWS'],
  [REASON.BAD_FWS, (a) => a.lexed?.defect === 'bad FWS'],
  [REASON.QUOTED_CONTROL, (a) => a.lexed?.defect === 'control in quotes'],
  [REASON.OBS_CONTROL, (a) => a.lexed?.defect === 'obs-qp or obs-ctext'],
  [REASON.OBS_LOCAL_PART, (_, p) => p.local.includes('"') && !isQuoted(p.local)],
  [REASON.BACKSLASH, (_, p) => !p.local.startsWith('"') && p.local.includes('\\')],
  [REASON.UNSAFE_LOCAL, (_, p) => hasUnsafeLocalCharacter(p.local)],
  [REASON.EMPTY_LOCAL, (_, p) => p.local === ''],
  [REASON.EMPTY_QUOTED, (_, p) => p.local === '""'],
  [REASON.EMPTY_LABEL, (_, p) => !isLiteral(p.domain) && labelsOf(p.domain).some((label) => label === '')],
  [REASON.LOCAL_LENGTH, (_, p) => utf8Length(p.local) > 64],
  [REASON.SINGLE_LABEL, (_, p) => p.domain !== '' && !isLiteral(p.domain) && labelsOf(p.domain).length === 1],
  [REASON.NUMERIC_TLD, (_, p) => !isLiteral(p.domain) && /^\d+$/.test(labelsOf(p.domain).pop()!)],
  [REASON.BAD_A_LABEL, (_, p) => labelsOf(p.domain).some((l) => /^xn--/i.test(l) && isBadALabel(l))],
  [
    REASON.UTS46_DISALLOWED,
    (_, p) => !isLiteral(p.domain) && [...p.domain].some((ch) => hasNonAscii(ch) && mappedDomainOf(`a${ch}`) === null),
  ],
  [REASON.IDNA_LABEL, (_, p) => !isLiteral(p.domain) && hasNonAscii(p.domain) && asciiDomainOf(p.domain) === null],
  [REASON.BAD_LITERAL, (_, p) => isLiteral(p.domain) && !isWellFormedLiteral(p.domain)],
  [REASON.LENGTH, (_, p) => exceedsDomainLengths(p)],
  [REASON.PROVIDER, (_, p) => breaksGmailRule(p)],
];

/** docs/syntax.md, unsafe Unicode: written from the policy's text, apart from the parser's table. */
function hasUnsafeLocalCharacter(local: string): boolean {
  const quoted = local.startsWith('"');
  const characters = [...local];
  if (!quoted && characters.length > 0 && /^\p{M}$/u.test(characters[0]!)) return true;
  return characters.some((ch) => /[\p{C}\p{Zl}\p{Zp}\uFFFD]/u.test(ch) && ch.charCodeAt(0) >= 0x80 || (!quoted && /\p{Zs}/u.test(ch) && ch !== ' '));
}

/** Features that make some suites reject an address our policy accepts; tried once the address is plain. */
const ACCEPTED: ReadonlyArray<readonly [Reason, Predicate]> = [
  [REASON.CFWS_EDGE, (a) => a.lexed?.cfws === 'edges'],
  [REASON.IPV6_ONE_GROUP, (_, p) => compressesOneGroup(p.domain)],
  [REASON.ESCAPED_NON_ASCII, (_, p) => /^".*\\[^\x00-\x7f]/u.test(p.local)],
  [REASON.QUOTED_LOCAL, (_, p) => p.local.startsWith('"')],
  [REASON.ADDRESS_LITERAL, (_, p) => isLiteral(p.domain)],
  [REASON.NON_ASCII_LOCAL, (_, p) => hasNonAscii(p.local)],
  [REASON.UTS46_MAPPED, (_, p) => hasNonAscii(p.domain) && !/(^|\.)xn--/.test(asciiDomainOf(p.domain) ?? '')],
  [REASON.UTS46_SYMBOL, (_, p) => /[^\x00-\x7f\p{L}\p{M}\p{N}]/u.test(p.domain)],
  [REASON.SHORT_TLD, (_, p) => /^[a-z]$/i.test(labelsOf(p.domain).pop()!)],
];

function exceedsDomainLengths(p: Parts): boolean {
  if (isLiteral(p.domain)) return false;
  const ascii = asciiDomainOf(p.domain);
  if (ascii === null) return false;
  return (
    ascii.split('.').some((label) => label.length > 63) ||
    ascii.length > 253 ||
    utf8Length(p.local) + 1 + ascii.length > 254
  );
}

/** docs/syntax.md provider rules, for the only provider in the corpora (see
 * packages/mailverify/src/syntax/provider-rules.ts). */
function breaksGmailRule(p: Parts): boolean {
  if (!/^(gmail|googlemail)\.com$/i.test(p.domain)) return false;
  const username = p.local.split('+')[0]!;
  const alphanumerics = username.replace(/\./g, '');
  return !/^[a-z0-9.]*$/i.test(username) || alphanumerics.length < 6 || alphanumerics.length > 30;
}

/** Header-syntax suites: they parse display names, angle addresses, groups or lists. */
const HEADER_SUITES: ReadonlySet<Suite> = new Set([
  'email-addresses',
  'go-net-mail',
  'python-email-validator',
  'validatorjs-isemail',
]);

function headerSyntax(row: Row, a: Analysis): Call | null {
  if (!HEADER_SUITES.has(row.suite) || a.lexed === null) return null;
  const outsideQuotes = a.lexed.core.replace(/"(?:[^"\\]|\\[\s\S])*"|\[[^\]]*\]/g, '');
  if (/[<>]/.test(outsideQuotes)) return { valid: false, reason: REASON.DISPLAY_NAME };
  if (/[,;:]/.test(outsideQuotes)) return { valid: false, reason: REASON.ADDRESS_LIST };
  return null;
}

function genericRule(row: Row, a: Analysis): Call | null {
  const header = headerSyntax(row, a);
  if (header !== null) return header;
  if (a.lexed === null) return { valid: false, reason: REASON.UNCLOSED };
  const parts = a.parts;
  if (parts === null) return { valid: false, reason: REASON.NO_AT };
  const options = syntaxOptionsFor(row);
  for (const [reason, applies] of REJECTED) {
    if (reason === REASON.PROVIDER && options.providerRules === false) continue;
    if (applies(a, parts)) return { valid: false, reason };
  }
  for (const [reason, applies] of REFUSED) if (applies(options, parts)) return { valid: false, reason };
  if (!isPlainMailbox(a.lexed.core)) return null;
  for (const [reason, applies] of ACCEPTED) if (applies(a, parts)) return { valid: true, reason };
  return null;
}

/** Suite-specific objections, read from the suite's own error message, to addresses our policy accepts. */
function suiteRule(row: Row, a: Analysis): Call | null {
  if (row.suite !== 'python-email-validator' || a.lexed === null || !isPlainMailbox(a.lexed.core)) return null;
  const error = String(row.data['error'] ?? row.data['errorContains'] ?? '');
  if (error.includes('special-use or reserved name')) return { valid: true, reason: REASON.SPECIAL_USE };
  if (/^After Unicode normalization|too long after normalization/.test(error)) {
    return { valid: true, reason: REASON.NFC_CHECK };
  }
  if (error.includes('not within a valid top-level domain')) return { valid: true, reason: REASON.TLD_LETTER };
  if (error.includes('two letters followed by two dashes')) return { valid: true, reason: REASON.RESERVED_HYPHENS };
  return null;
}

// ---------------------------------------------------------------------------------------------------------------
// Options: the suite's options mapped to ours; rows whose expectation holds only under an option we do not have

/**
 * The syntax options (packages/mailverify/src/syntax/policy.ts) that say what the suite's options for this row say.
 * Only the suites with such options map them; every other row is parsed with the defaults.
 */
export function syntaxOptionsFor(row: Row): SyntaxOptions {
  const { data } = row;
  switch (row.suite) {
    case 'python-email-validator':
      // Python's defaults refuse quoted local parts and literals; it has no provider rules.
      return {
        allowQuotedLocalPart: opt(data, 'allow_quoted_local') === true,
        allowAddressLiteral: opt(data, 'allow_domain_literal') === true,
        allowInternationalLocalPart: opt(data, 'allow_smtputf8') !== false,
        providerRules: false,
      };
    case 'validatorjs-isemail':
      // validator.js's Gmail rule is its option domain_specific_validation, off by default.
      return {
        allowAddressLiteral: opt(data, 'allow_ip_domain') === true,
        allowInternationalLocalPart: opt(data, 'allow_utf8_local_part') !== false,
        providerRules: opt(data, 'domain_specific_validation') === true,
      };
    case 'hapi-address':
      return opt(data, 'allowUnicode') === false ? { allowInternationalLocalPart: false } : {};
    case 'email-addresses':
      return isAsciiOnlyExport(data) ? { allowInternationalLocalPart: false } : {};
    default:
      return {};
  }
}

/** email-addresses' main export parses ASCII only unless its option rfc6532 is on. */
const isAsciiOnlyExport = (data: CorpusRow): boolean =>
  data['function'] === 'addrs (main export)' && opt(data, 'rfc6532') !== true;

/** Forms the row's syntax options refuse. */
const REFUSED: ReadonlyArray<readonly [Reason, (options: SyntaxOptions, parts: Parts) => boolean]> = [
  [REASON.REFUSED_QUOTED, (o, p) => o.allowQuotedLocalPart === false && p.local.startsWith('"')],
  [REASON.REFUSED_LITERAL, (o, p) => o.allowAddressLiteral === false && p.domain.startsWith('[')],
  [REASON.REFUSED_NON_ASCII_LOCAL, (o, p) => o.allowInternationalLocalPart === false && hasNonAscii(p.local)],
];

interface OptionRule {
  readonly suite: Suite;
  readonly reason: Reason;
  /** `loosens`: the option makes the suite accept; `restricts`: it makes the suite reject. */
  readonly effect: 'loosens' | 'restricts';
  /** The option is in force for this row and bears on it. */
  readonly applies: (data: CorpusRow, a: Analysis, p: Parts | null) => boolean;
}

const opt = (data: CorpusRow, name: string): unknown =>
  (data['options'] as Record<string, unknown> | undefined)?.[name];
const tldOf = (p: Parts | null): string =>
  p === null ? '' : (labelsOf(asciiDomainOf(p.domain) ?? p.domain).pop() ?? '');
const exceedsAnyLength = (p: Parts | null): boolean =>
  p !== null && (utf8Length(p.local) > 64 || exceedsDomainLengths(p));

/** A validator.js host list entry: a plain host, or a RegExp written "/src/flags" (corpora/README.md). */
function matchesHost(entry: string, host: string): boolean {
  const regex = /^\/(.*)\/([a-z]*)$/.exec(entry);
  return regex === null ? entry === host : new RegExp(regex[1]!, regex[2]).test(host);
}

const OPTION_RULES: readonly OptionRule[] = [
  {
    suite: 'python-email-validator',
    reason: REASON.OPT_PY_EMPTY_LOCAL,
    effect: 'loosens',
    applies: (d, _, p) => opt(d, 'allow_empty_local') === true && p !== null && (p.local === '' || p.local === '""'),
  },
  {
    suite: 'python-email-validator',
    reason: REASON.OPT_PY_TEST_ENV,
    effect: 'loosens',
    applies: (d, _, p) => opt(d, 'test_environment') === true && p?.domain.toLowerCase() === 'test',
  },
  {
    suite: 'hapi-address',
    reason: REASON.OPT_HAPI_UNICODE,
    effect: 'restricts',
    applies: (d, _, p) => opt(d, 'allowUnicode') === false && p !== null && hasNonAscii(p.domain),
  },
  {
    suite: 'hapi-address',
    reason: REASON.OPT_HAPI_TLDS,
    effect: 'restricts',
    applies: (d, _, p) => {
      const allow = (opt(d, 'tlds') as { allow?: string[] } | undefined)?.allow;
      return allow !== undefined && !allow.includes(tldOf(p).toLowerCase());
    },
  },
  {
    suite: 'hapi-address',
    reason: REASON.OPT_HAPI_SEGMENTS,
    effect: 'loosens',
    applies: (d, _, p) => Number(opt(d, 'minDomainSegments') ?? 2) < 2 && p !== null && labelsOf(p.domain).length < 2,
  },
  {
    suite: 'hapi-address',
    reason: REASON.OPT_IGNORE_LENGTH,
    effect: 'loosens',
    applies: (d, _, p) => opt(d, 'ignoreLength') === true && exceedsAnyLength(p),
  },
  {
    suite: 'validatorjs-isemail',
    reason: REASON.OPT_IGNORE_LENGTH,
    effect: 'loosens',
    applies: (d, _, p) => opt(d, 'ignore_max_length') === true && exceedsAnyLength(p),
  },
  {
    suite: 'validatorjs-isemail',
    reason: REASON.OPT_VJS_UNDERSCORES,
    effect: 'loosens',
    applies: (d, _, p) => opt(d, 'allow_underscores') === true && p !== null && p.domain.includes('_'),
  },
  {
    suite: 'validatorjs-isemail',
    reason: REASON.OPT_VJS_REQUIRE_NAME,
    effect: 'restricts',
    applies: (d, a) => opt(d, 'require_display_name') === true && !a.input.includes('<'),
  },
  {
    suite: 'validatorjs-isemail',
    reason: REASON.OPT_VJS_IP_DOMAIN,
    effect: 'loosens',
    applies: (d, _, p) => opt(d, 'allow_ip_domain') === true && p !== null && /^[\d.]+$/.test(p.domain),
  },
  {
    suite: 'validatorjs-isemail',
    reason: REASON.OPT_VJS_BLACKLISTED_CHARS,
    effect: 'restricts',
    applies: (d, _, p) => {
      const chars = opt(d, 'blacklisted_chars');
      return typeof chars === 'string' && p !== null && [...chars].some((c) => p.local.includes(c));
    },
  },
  {
    suite: 'validatorjs-isemail',
    reason: REASON.OPT_VJS_HOST_LIST,
    effect: 'restricts',
    applies: (d, _, p) => {
      const host = p?.domain.toLowerCase() ?? '';
      const black = opt(d, 'host_blacklist') as string[] | undefined;
      const white = opt(d, 'host_whitelist') as string[] | undefined;
      return (
        (black !== undefined && black.some((e) => matchesHost(e, host))) ||
        (white !== undefined && !white.some((e) => matchesHost(e, host)))
      );
    },
  },
  {
    suite: 'email-addresses',
    reason: REASON.OPT_EA_RFC6532_OFF,
    effect: 'restricts',
    applies: (d, _, p) => isAsciiOnlyExport(d) && p !== null && hasNonAscii(p.domain),
  },
  {
    suite: 'email-addresses',
    reason: REASON.OPT_EA_PARTIAL,
    effect: 'loosens',
    applies: (d) => opt(d, 'partial') === true,
  },
  {
    suite: 'email-addresses',
    reason: REASON.OPT_EA_STRICT,
    effect: 'restricts',
    applies: (d) => opt(d, 'strict') === true || opt(d, 'rejectTLD') === true,
  },
  {
    suite: 'egulias-emailvalidator',
    reason: REASON.OPT_EGULIAS_NO_WARNINGS,
    effect: 'restricts',
    applies: (d) => d['validation'] === 'NoRFCWarningsValidation' && d['reason'] === 'RFCWarnings',
  },
];

/**
 * The option that decides this row, if any. A restricting option does not decide a row our policy rejects through a
 * rule of its own: both sides reject it whatever the option says.
 */
function optionQuestion(row: Row, a: Analysis, call: Call | null): Reason | null {
  const { data } = row;
  for (const rule of OPTION_RULES) {
    if (rule.suite !== row.suite || !rule.applies(data, a, a.parts)) continue;
    if (rule.effect === 'loosens' && data.valid) return rule.reason;
    if (rule.effect === 'restricts' && !data.valid && (call === null || call.valid)) return rule.reason;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------------------
// Extra facts

function factsOf(row: Row, a: Analysis): Fact[] {
  const { data } = row;
  const written = a.parts;
  if (a.lexed === null || written === null) return [];
  const facts: Fact[] = [];
  const add = (name: string, field: FactField, writtenValue: string | null, why: (v: string) => Reason | null) => {
    const value = data[name];
    if (typeof value !== 'string') return;
    facts.push({ name, suiteValue: value, field, reason: value === writtenValue ? null : why(value) });
  };
  const localWhy = (v: string): Reason | null => localTransform(written.local, v);
  const domainWhy = (v: string): Reason | null => domainTransform(written.domain, v);
  const addressWhy = (v: string): Reason | null => {
    const parts = splitParts(v);
    if (parts === null) return null;
    return (
      (parts.local === written.local ? null : localTransform(written.local, parts.local)) ??
      (parts.domain === written.domain ? null : domainTransform(written.domain, parts.domain))
    );
  };
  switch (row.suite) {
    case 'python-email-validator':
      add('normalized', 'emailAddress', a.lexed.core, addressWhy);
      add('localPart', 'localPart', written.local, localWhy);
      add('domain', 'domainPart', written.domain, domainWhy);
      add('asciiDomain', 'asciiDomainPart', null, () => null);
      if (typeof data['smtputf8'] === 'boolean') {
        // smtputf8 is true exactly when the local part is non-ASCII (the domain goes out as A-labels).
        const smtputf8 = data['smtputf8'];
        facts.push({ name: 'smtputf8', suiteValue: smtputf8, field: 'hasInternationalMailboxName', reason: null });
      }
      break;
    case 'email-addresses':
      // `normalized` is the library's semantic address: CFWS and quotes removed.
      add('normalized', 'emailAddress', a.lexed.core, addressWhy);
      add('localPart', 'localPart', written.local, localWhy);
      add('localPartSemantic', 'localPart', written.local, localWhy);
      add('domain', 'domainPart', written.domain, domainWhy);
      break;
    case 'go-net-mail': {
      const expected = data['expected'];
      if (Array.isArray(expected) && expected.length === 1) {
        const address = (expected[0] as { address?: unknown }).address;
        if (typeof address === 'string') {
          facts.push({
            name: 'expected[0].address',
            suiteValue: address,
            field: 'emailAddress',
            reason: address === a.lexed.core ? null : addressWhy(address),
          });
        }
      }
      break;
    }
    default:
      break;
  }
  return facts;
}

function localTransform(written: string, theirs: string): Reason | null {
  if (written.startsWith('"')) return REASON.FACT_UNQUOTED;
  if (written.normalize('NFC') === theirs) return REASON.FACT_NFC;
  return null;
}

function domainTransform(written: string, theirs: string): Reason | null {
  if (isLiteral(written)) return REASON.FACT_LITERAL;
  if (tr46.toUnicode(asciiDomainOf(written) ?? '').domain === theirs) return REASON.FACT_DOMAIN;
  return null;
}
