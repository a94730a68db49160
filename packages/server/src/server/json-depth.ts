/**
 * The deepest nesting of arrays and objects the server reads in a client's JSON, whatever the body (a submission, its
 * unknown fields, a JSON Patch and its values, a file import's settings, a TOTP step). No document of the interface
 * comes near it (a user's firewall rule is 4 levels down); the cap is System.Text.Json's default `MaxDepth`, which the
 * service reproduced here reads its bodies with. Without it, a 600 KB body of nested brackets held the event loop for
 * minutes (a streaming parser's work grows with the square of the depth) or overflowed a recursive walk (a JSON Patch
 * library's clone).
 */
import { ProblemError } from './problems.js';

export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);

/**
 * Whether the JSON text `body` (UTF-8 bytes or a string) opens more than `max` arrays and objects inside each other:
 * one pass, brackets inside strings not counted. Malformed JSON is left to the parser: this only measures.
 */
export function nestsDeeperThan(body: Buffer | string, max = MAX_JSON_DEPTH): boolean {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  let depth = 0;
  let inString = false;
  for (let at = 0; at < bytes.length; at++) {
    const byte = bytes[at]!;
    if (inString) {
      // RFC 8259 §7: a backslash escapes the next character; UTF-8 continuation bytes are never ASCII.
      if (byte === BACKSLASH) at++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (OPENERS.has(byte)) {
      if (++depth > max) return true;
    } else if (CLOSERS.has(byte)) depth--;
  }
  return false;
}

/** The answer to a body that nests deeper than the cap. */
export function tooDeep(): ProblemError {
  return new ProblemError(400, `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`, '/problems/invalid-body');
}

/** JSON.parse of a client's JSON text, refused with 400 (`tooDeep`) first when it nests deeper than the cap. */
export function parseClientJson(text: string): unknown {
  if (nestsDeeperThan(text)) throw tooDeep();
  return JSON.parse(text);
}
