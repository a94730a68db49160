/**
 * A JSON submission body read as it arrives (the streaming tokenizer and parser of `@streamparser/json`), so that a
 * body of a million entries is neither held whole nor parsed in one pause of the event loop. The elements of the
 * top-level `entries` array are handed over one at a time; the other members the caller names are kept.
 *
 * The answers are those of the buffered parser of src/server/app.ts, in the same order: a body past the limit is 413
 * whatever it holds; then bytes that are not UTF-8 are 400 wherever they are; then nesting deeper than
 * MAX_JSON_DEPTH is 400 (the tokenizer stops at the first bracket too many: the parser's work per value grows with the
 * depth); then malformed JSON, a `__proto__` key or a `constructor.prototype` anywhere is Fastify's 400 (the refusals
 * of secure-json-parse); repeated keys keep the last value, as JSON.parse does.
 */
import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { Tokenizer, TokenParser, TokenType, type ParsedTokenInfo } from '@streamparser/json';
import { errorCodes } from 'fastify';
import { nextTurn } from 'mailverify/internal';
import { MAX_JSON_DEPTH, tooDeep } from './json-depth.js';
import { ProblemError } from './problems.js';

/** Bytes of the body parsed between two calls of the reader's `drain`. */
const PARSE_SLICE = 64 * 1024;

/**
 * The body of a request whose route reads it as a stream: the payload Fastify would have parsed (after any
 * decompression of the request), left unread by the content-type parser.
 */
export class StreamedBody {
  constructor(
    readonly payload: Readable & { receivedEncodedLength?: number },
    readonly contentLength: number | undefined,
  ) {}
}

export interface JsonBodyReader {
  /** A top-level `entries` member begins; a repeated one replaces the one before (`isArray`: its value is an array). */
  entriesStart(isArray: boolean): void;
  /** The next element of the top-level `entries` array (when it is one). */
  entry(value: unknown, index: number): void;
  /** Called after each slice of the body and awaited before the next is parsed (a store's batch). */
  drain(): Promise<void>;
}

export interface JsonBody {
  /** `none`: an empty body; `other`: a JSON value that is not an object. */
  readonly root: 'none' | 'object' | 'other';
  /** The members asked for, when the root is an object, and their last values; no prototype. */
  readonly members: Record<string, unknown>;
  /** The last top-level `entries` member: absent, an array (its elements went to `entry`), or something else. */
  readonly entries: 'absent' | 'array' | 'other';
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** White space and the structural characters but quotes: the bytes that leave the tokenizer in its first state. */
const STRUCTURAL_OR_SPACE = new Set(Buffer.from(' \t\n\r{}[],:'));
/** Thrown by the token observer at the first bracket past the depth cap. */
const TOO_DEEP = new Error('the body nests too deep');

interface Frame {
  readonly isObject: boolean;
  expectsKey: boolean;
  key: string | null;
  /** This object is the value of a `constructor` key. */
  readonly isConstructorValue: boolean;
  /** The last value of this object's `constructor` key is an object with a `prototype` key. */
  poisonedConstructor: boolean;
}

/** Reads `body` through, handing entries to `reader`; throws the refusal of the buffered parser when there is one. */
export async function readJsonBody(body: StreamedBody, bodyLimit: number, members: readonly string[], reader: JsonBodyReader): Promise<JsonBody> {
  const { payload, contentLength } = body;
  if (contentLength !== undefined && contentLength > bodyLimit) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();

  const result: { root: JsonBody['root']; entries: JsonBody['entries']; members: Record<string, unknown> } = {
    root: 'none',
    entries: 'absent',
    members: Object.create(null) as Record<string, unknown>,
  };
  const wanted = new Set(members);
  let jsonError = false;
  /** The body nests deeper than MAX_JSON_DEPTH: tokenizing stopped there. */
  let deep = false;
  let poisoned = false;
  const frames: Frame[] = [];
  let awaitingEntries = false;

  const tokenizer = keepingByteOrderMarks(new Tokenizer());
  const parser = new TokenParser({ paths: ['$.entries.*', ...members.map((name) => `$.${name}`)], keepStack: false });
  tokenizer.onError = (error) => {
    if (error === TOO_DEEP) deep = true;
    else jsonError = true;
  };
  parser.onError = () => {
    jsonError = true;
  };
  /** An error of the reader (a bug, not the body's fault): the parser would report it as malformed JSON. */
  let readerFailure: { error: unknown } | null = null;
  parser.onValue = ({ value, key, stack }) => {
    if (stack.length === 1 && typeof key === 'string' && wanted.has(key)) result.members[key] = value;
    else if (stack.length === 2 && result.entries === 'array' && typeof key === 'number') {
      try {
        reader.entry(value, key);
      } catch (error) {
        readerFailure ??= { error };
      }
    }
  };
  const throwReaderFailure = (): void => {
    if (readerFailure !== null) throw readerFailure.error;
  };
  tokenizer.onToken = (token: ParsedTokenInfo) => {
    observe(token);
    parser.write(token);
  };

  /** What the token says of the root, the `entries` member and prototype keys, before the parser builds values. */
  function observe({ token, value }: ParsedTokenInfo): void {
    const top = frames[frames.length - 1];
    if (top?.isObject === true && top.expectsKey && token === TokenType.STRING) {
      const key = value as string;
      top.expectsKey = false;
      top.key = key;
      if (key === '__proto__') poisoned = true;
      if (key === 'prototype' && top.isConstructorValue) frames[frames.length - 2]!.poisonedConstructor = true;
      // A later `constructor` replaces the earlier one's value, as JSON.parse keeps the last.
      if (key === 'constructor') top.poisonedConstructor = false;
      if (key === 'entries' && frames.length === 1) awaitingEntries = true;
      return;
    }
    switch (token) {
      case TokenType.COMMA:
        if (top?.isObject === true) top.expectsKey = true;
        return;
      case TokenType.COLON:
        return;
      case TokenType.RIGHT_BRACE:
      case TokenType.RIGHT_BRACKET:
        if (frames.pop()?.poisonedConstructor === true) poisoned = true;
        return;
      default:
        break;
    }
    // A value begins.
    if (frames.length === 0) result.root = token === TokenType.LEFT_BRACE ? 'object' : 'other';
    if (awaitingEntries && frames.length === 1) {
      awaitingEntries = false;
      result.entries = token === TokenType.LEFT_BRACKET ? 'array' : 'other';
      reader.entriesStart(result.entries === 'array');
    }
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
      // Thrown out of the tokenizer's loop, which ends there (its onError hears it): nothing deeper is parsed.
      if (frames.length >= MAX_JSON_DEPTH) throw TOO_DEEP;
      const isConstructorValue = top?.isObject === true && top.key === 'constructor' && token === TokenType.LEFT_BRACE;
      frames.push({ isObject: token === TokenType.LEFT_BRACE, expectsKey: true, key: null, isConstructorValue, poisonedConstructor: false });
    }
  }

  let received = 0;
  let notUtf8 = false;
  /** The bytes of a UTF-8 sequence cut by the end of the last chunk. */
  let carried: Buffer = Buffer.alloc(0);
  /** The first bytes, until it is known whether they start with byte order marks. */
  let head: Buffer | null = Buffer.alloc(0);
  let boms = 0;
  /**
   * The first bytes without their byte order marks: the decoder of the buffered parser dropped one, secure-json-parse
   * a second; a third is malformed JSON (which the tokenizer would let pass).
   */
  const afterByteOrderMarks = (start: Buffer): Buffer => {
    let rest = start;
    while (rest.subarray(0, BOM.length).equals(BOM)) {
      if (boms === 2) {
        jsonError = true;
        break;
      }
      rest = rest.subarray(BOM.length);
      boms++;
    }
    return rest;
  };

  /**
   * Only white space and brackets, commas and colons fed so far (after the byte order marks): the tokenizer is still
   * in its first state, where it takes a byte order mark as one at the start until the first string, number or
   * literal. JSON.parse (the buffered parser) refuses one there: malformed JSON (RFC 8259, section 2: white space is
   * space, tab, line feed, return).
   */
  let tokenizerAtStart = true;
  const feed = (bytes: Buffer): void => {
    if (tokenizerAtStart) {
      for (const byte of bytes) {
        if (STRUCTURAL_OR_SPACE.has(byte)) continue;
        if (byte === BOM[0]) jsonError = true;
        tokenizerAtStart = false;
        break;
      }
    }
    if (bytes.length > 0 && !jsonError && !deep) tokenizer.write(bytes);
    throwReaderFailure();
  };

  const chunks = payload.iterator({ destroyOnReturn: false });
  let readToEnd = false;
  try {
    for await (const chunk of withStatus(chunks)) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      received += bytes.length;
      if (received > bodyLimit || (payload.receivedEncodedLength ?? 0) > bodyLimit) {
        throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
      }
      if (notUtf8) continue;
      const joined = carried.length === 0 ? bytes : Buffer.concat([carried, bytes]);
      const cut = completeUtf8Length(joined);
      if (!isUtf8(joined.subarray(0, cut))) {
        notUtf8 = true;
        continue;
      }
      carried = Buffer.from(joined.subarray(cut));
      let text = bytes;
      if (head !== null) {
        head = Buffer.concat([head, bytes]);
        if (head.length < 3 * BOM.length && BOM.subarray(0, Math.min(head.length, BOM.length)).equals(head.subarray(0, BOM.length))) continue;
        text = afterByteOrderMarks(head);
        head = null;
      }
      // A chunk is parsed a slice at a time, each slice in a turn of its own (nextTurn): a large chunk (a
      // decompressed one, a socket's read of a fast client) does not hold the event loop, and fifty bodies arriving
      // at once are parsed a slice each in turn, with other requests read in between, not fifty slices in one turn.
      let at = 0;
      do {
        await nextTurn();
        feed(text.subarray(at, at + PARSE_SLICE));
        await reader.drain();
        at += PARSE_SLICE;
      } while (at < text.length);
    }
    readToEnd = true;
  } finally {
    // A body left part-read (refused before its end) is read on to nothing, as Fastify does: the connection can then
    // carry the client's next request.
    if (!readToEnd) payload.resume();
  }
  if (contentLength !== undefined && (payload.receivedEncodedLength || received) !== contentLength) {
    throw new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH();
  }
  if (notUtf8 || carried.length > 0) {
    throw new ProblemError(400, 'The request body is not valid UTF-8.', '/problems/invalid-body');
  }
  if (received === 0) return result;
  if (head !== null) feed(afterByteOrderMarks(head));
  // A body of byte order marks only: one is an empty body to the buffered parser, two are malformed JSON.
  if (received === BOM.length && boms === 1) throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
  if (deep) throw tooDeep();
  if (!jsonError && !tokenizer.isEnded) tokenizer.end();
  throwReaderFailure();
  if (jsonError || !parser.isEnded || poisoned) throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  return result;
}

/**
 * The tokenizer with a string builder that keeps U+FEFF: its own decodes each run of a string with a TextDecoder
 * whose `ignoreBOM` is off, which drops the character at the start of every run (`"a\uFEFFb"` became `"ab"`).
 */
function keepingByteOrderMarks(tokenizer: Tokenizer): Tokenizer {
  const builder = (tokenizer as unknown as { bufferedString?: { decoder?: InstanceType<typeof TextDecoder> } }).bufferedString;
  if (!(builder?.decoder instanceof TextDecoder)) throw new Error('@streamparser/json: the tokenizer has no string decoder to replace');
  builder.decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  return tokenizer;
}

/** The chunks of a body; an error of the stream without a client-error status gets 400, as Fastify gives it. */
async function* withStatus(chunks: AsyncIterable<unknown>): AsyncGenerator<unknown> {
  try {
    yield* chunks;
  } catch (error) {
    const status = (error as { statusCode?: unknown } | null)?.statusCode;
    if (error instanceof Error && !(typeof status === 'number' && status >= 400)) Object.assign(error, { statusCode: 400 });
    throw error;
  }
}

/** How many bytes of `bytes` remain once a UTF-8 sequence cut short by its end is set aside. */
function completeUtf8Length(bytes: Buffer): number {
  for (let at = bytes.length - 1; at >= Math.max(0, bytes.length - 4); at--) {
    const byte = bytes[at]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return bytes.length - at < length ? at : bytes.length;
  }
  return bytes.length;
}
