/**
 * SMTP replies (RFC 5321 §4.2): the shape every transport returns, and the parsing of raw reply text.
 *
 * A reply is one or more lines `ddd-text` ending with a line `ddd text` (or a bare `ddd`), all with the same code
 * (RFC 5321 §4.2.1). The enhanced status code (RFC 3463 §2, `class.subject.detail`) is written by the server at the
 * start of a line's text when it supports ENHANCEDSTATUSCODES (RFC 2034 §3).
 */

export interface SmtpReply {
  /** The three-digit reply code (RFC 5321 §4.2); 0 when the reply cannot be parsed. */
  code: number;
  /** The first enhanced status code (RFC 3463) at the start of a line whose class matches the code, e.g. `5.1.1`. */
  enhancedCode: string | null;
  /** The text of each line, after the code and its separator; an enhanced code stays in it. */
  lines: string[];
  /** `lines` joined by "\n": the `text` that `classifySmtpReply` takes. */
  text: string;
}

const CR = 13;
const LF = 10;
const SPACE = 32;
const HYPHEN = 45;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
const DOT = 46;

function isDigit(c: number): boolean {
  return c >= DIGIT_0 && c <= DIGIT_9;
}

/** A valid reply code (RFC 5321 §4.2): three digits, the first 2-5, the second 0-5. */
export function isReplyCode(code: unknown): code is number {
  return typeof code === 'number' && Number.isInteger(code) && code >= 200 && code <= 559 && code % 100 < 60;
}

/** The reply code at the start of a line, or -1. */
function lineCode(line: string): number {
  if (line.length < 3 || !isDigit(line.charCodeAt(0)) || !isDigit(line.charCodeAt(1)) || !isDigit(line.charCodeAt(2))) {
    return -1;
  }
  const code = Number(line.slice(0, 3));
  if (!isReplyCode(code)) return -1;
  if (line.length > 3) {
    const separator = line.charCodeAt(3);
    if (separator !== SPACE && separator !== HYPHEN) return -1;
  }
  return code;
}

/**
 * Parses a whole raw reply (lines separated by CRLF or a bare LF, a trailing line break allowed). Every line must
 * carry the same valid code, every line but the last a `-` separator and the last a space or nothing; otherwise the
 * reply is malformed and its `code` is 0 (its text is kept, for the record).
 */
export function parseReply(raw: string): SmtpReply {
  const rawLines = splitLines(raw);
  const lines: string[] = [];
  let code = rawLines.length === 0 ? 0 : lineCode(rawLines[0]!);
  for (let i = 0; i < rawLines.length; i++) {
    const line = rawLines[i]!;
    const last = i === rawLines.length - 1;
    if (code > 0) {
      const separator = line.length > 3 ? line.charCodeAt(3) : SPACE;
      if (lineCode(line) !== code || (separator === HYPHEN) === last) code = 0;
    }
    lines.push(line.length > 3 ? line.slice(4) : '');
  }
  if (code <= 0) return { code: 0, enhancedCode: null, lines: rawLines, text: rawLines.join('\n') };
  const text = lines.join('\n');
  return { code, enhancedCode: enhancedCodeOf(code, text), lines, text };
}

/** A reply from its code and its text (lines joined by "\n", as `classifySmtpReply` takes it). */
export function replyOf(code: number, text: string): SmtpReply {
  const lines = text.split('\n');
  return { code, enhancedCode: enhancedCodeOf(code, text), lines, text };
}

function splitLines(raw: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw.charCodeAt(i) !== LF) continue;
    const end = i > start && raw.charCodeAt(i - 1) === CR ? i - 1 : i;
    lines.push(raw.slice(start, end));
    start = i + 1;
  }
  if (start < raw.length) lines.push(raw.slice(start));
  return lines;
}

/**
 * The enhanced status code of a reply: the first `class.subject.detail` at the start of the text or of a line
 * (docs/verification.md#reading-smtp-replies), whose class (2, 4 or 5; RFC 3463 §3.1) equals the first digit of the
 * reply code. Subject and detail are 1-3 digits (RFC 3463 §2). It must be followed by a space or the end of the line.
 */
export function enhancedCodeOf(code: number, text: string): string | null {
  const replyClass = Math.floor(code / 100);
  let lineStart = 0;
  while (lineStart <= text.length) {
    const found = enhancedCodeAt(text, lineStart, replyClass);
    if (found !== null) return found;
    const next = text.indexOf('\n', lineStart);
    if (next < 0) break;
    lineStart = next + 1;
  }
  return null;
}

function enhancedCodeAt(text: string, start: number, replyClass: number): string | null {
  const first = text.charCodeAt(start) - DIGIT_0;
  if (first !== replyClass || text.charCodeAt(start + 1) !== DOT) return null;
  let i = start + 2;
  for (let part = 0; part < 2; part++) {
    const digitsStart = i;
    while (i < text.length && isDigit(text.charCodeAt(i)) && i - digitsStart < 3) i++;
    if (i === digitsStart) return null;
    if (part === 0) {
      if (text.charCodeAt(i) !== DOT) return null;
      i++;
    }
  }
  const after = text.charCodeAt(i);
  if (i < text.length && after !== SPACE && after !== LF && after !== CR) return null;
  return text.slice(start, i);
}
