/**
 * The CLI's output: entries formatted as JSON lines or CSV records, written in batches.
 *
 * A million-line input gives a million results; one `write` per result would cost a system call each, more than the
 * offline checks themselves. Lines are collected and written together when the batch is large, or when the process
 * is about to wait for something (more input, DNS, SMTP), so results still appear as soon as they are known.
 */
import { escapeFormula } from '../engine/csv-formulas.js';
import { ENTRY_FIELDS, type Entry } from '../engine/entry.js';
import { csvText, type CsvFormulas } from './csv.js';

/**
 * A JSON string literal: the string quoted as it is when nothing in it needs an escape (the common case), else
 * JSON.stringify's escaping (quote, backslash, control characters, lone surrogates as `\udXXX`).
 */
function jsonString(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text);
  }
  return '"' + text + '"';
}

function jsonValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return jsonString(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    default:
      if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
        let list = '[';
        for (let i = 0; i < value.length; i++) list += (i === 0 ? '' : ',') + jsonString(value[i] as string);
        return list + ']';
      }
      return JSON.stringify(value) ?? 'null';
  }
}

/**
 * The entry as one JSON object, fields in the service's order (ENTRY_FIELDS), absent fields left out: the same text
 * as `JSON.stringify` of the ordered entry, built without walking the object generically.
 */
export function jsonLine(entry: Entry): string {
  let line = '{"index":' + jsonValue(entry.index);
  const input = entry.inputData;
  const quotedInput = jsonString(input);
  line += ',"inputData":' + quotedInput;
  for (let f = 2; f < ENTRY_FIELDS.length; f++) {
    const field = ENTRY_FIELDS[f]!;
    const value = entry[field];
    if (value === undefined) continue;
    // The address is usually the input itself: its literal is already made.
    line += ',"' + field + '":' + (value === input ? quotedInput : jsonValue(value));
  }
  // mailverify's own fields, after the service's.
  if (entry.hasMixedScriptDomainName !== undefined) line += ',"hasMixedScriptDomainName":' + jsonValue(entry.hasMixedScriptDomainName);
  if (entry.evidence !== undefined) line += ',"evidence":' + JSON.stringify(entry.evidence);
  return line + '}';
}

/** What `mailverify check` writes: JSON lines, CSV, or TSV (CSV with tabs). */
export type OutputFormat = 'jsonl' | 'csv' | 'tsv';

/** The field delimiter of a tabular output format. */
export const delimiterOf = (output: OutputFormat): ',' | '\t' => (output === 'tsv' ? '\t' : ',');

/**
 * The entry as a CSV record, fields in ENTRY_FIELDS order, then the input's own columns when given: absent fields
 * empty, the suggestions joined by spaces, text that starts like a formula escaped unless `formulas` is `keep`
 * (numbers and booleans are never text).
 */
export function csvRecord(entry: Entry, formulas: CsvFormulas = 'escape', columns?: readonly string[]): string[] {
  const record: string[] = [];
  for (const field of ENTRY_FIELDS) {
    const value = entry[field];
    if (value === undefined) record.push('');
    else if (typeof value === 'number' || typeof value === 'boolean') record.push(String(value));
    else {
      const text = Array.isArray(value) ? value.join(' ') : value;
      record.push(formulas === 'escape' ? escapeFormula(text) : text);
    }
  }
  if (columns !== undefined) for (const field of columns) record.push(formulas === 'escape' ? escapeFormula(field) : field);
  return record;
}

/** CSV records are turned into text this many at a time. */
const CSV_RECORDS_PER_BATCH = 512;

// --- JSON lines encoded straight into the output buffer. ---

const QUOTE = 0x22;
const ascii = (text: string): Uint8Array => Buffer.from(text, 'latin1');
/** `,"field":` for each field (the first without the comma). */
const FIELD_PREFIXES = ENTRY_FIELDS.map((field, f) => ascii(`${f === 0 ? '{' : ','}"${field}":`));
const TRUE = ascii('true');
const FALSE = ascii('false');
const LINE_END = ascii('}\n');
/** Bytes of the line outside the values, and the most one value other than a string can take. */
const FIXED_BYTES = FIELD_PREFIXES.reduce((sum, prefix) => sum + prefix.length, LINE_END.length);
const MAX_SCALAR_BYTES = 24;
/** The most UTF-8 bytes one UTF-16 unit can take in a JSON string (`\u001f` takes six). */
const MAX_JSON_BYTES_PER_UNIT = 6;

function putBytes(buffer: Buffer, at: number, bytes: Uint8Array): number {
  for (let k = 0; k < bytes.length; k++) buffer[at + k] = bytes[k]!;
  return at + bytes.length;
}

/** A JSON string literal at `at`: copied byte by byte while it is plain ASCII, else encoded from jsonString. */
function putString(buffer: Buffer, at: number, text: string): number {
  buffer[at] = QUOTE;
  let to = at + 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === QUOTE || c === 0x5c || c >= 0x80) return at + buffer.write(jsonString(text), at, 'utf8');
    buffer[to++] = c;
  }
  buffer[to] = QUOTE;
  return to + 1;
}

/** A whole number from 0 to 2^31 - 1 in decimal digits (what JSON.stringify writes for it). */
function putCount(buffer: Buffer, at: number, value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = (rest / 10) | 0) digits++;
  let to = at + digits;
  for (let rest = value; to > at; rest = (rest / 10) | 0) buffer[--to] = 0x30 + (rest % 10);
  return at + digits;
}

function putValue(buffer: Buffer, at: number, value: unknown): number {
  if (typeof value === 'string') return putString(buffer, at, value);
  if (typeof value === 'boolean') return putBytes(buffer, at, value ? TRUE : FALSE);
  if (typeof value === 'number' && (value | 0) === value && value >= 0) return putCount(buffer, at, value);
  return at + buffer.write(jsonValue(value), at, 'utf8');
}

/** Bytes a string value may take at most, quotes included. */
const stringBound = (value: unknown): number =>
  typeof value === 'string' ? value.length * MAX_JSON_BYTES_PER_UNIT + 2 : value === undefined ? 0 : MAX_SCALAR_BYTES;

/**
 * An upper bound of the bytes `jsonLine(entry) + '\n'` takes in UTF-8; Infinity for a list of suggestions,
 * evidence or the mixed-script flag, which are left to jsonLine. The fields are read by name (reading them by a computed key costs several times as much).
 */
function jsonLineBound(entry: Entry): number {
  if (entry.suggestions !== undefined || entry.evidence !== undefined || entry.hasMixedScriptDomainName !== undefined) return Infinity;
  return (
    FIXED_BYTES +
    MAX_SCALAR_BYTES * 10 +
    stringBound(entry.inputData) +
    stringBound(entry.classification) +
    stringBound(entry.status) +
    stringBound(entry.emailAddress) +
    stringBound(entry.emailAddressLocalPart) +
    stringBound(entry.emailAddressDomainPart) +
    stringBound(entry.asciiEmailAddressDomainPart) +
    stringBound(entry.custom) +
    stringBound(entry.completedOn)
  );
}

/** Writes field `f` of ENTRY_FIELDS with its value, unless the value is absent. */
function putField(buffer: Buffer, at: number, f: number, value: unknown): number {
  if (value === undefined) return at;
  return putValue(buffer, putBytes(buffer, at, FIELD_PREFIXES[f]!), value);
}

/**
 * Writes `jsonLine(entry) + '\n'` at `at`; the caller has made room for jsonLineBound(entry) bytes. The fields go
 * in ENTRY_FIELDS order (the unit tests compare the output with JSON.stringify of the ordered entry).
 */
function putJsonLine(buffer: Buffer, at: number, entry: Entry): number {
  let to = putField(buffer, at, 0, entry.index);
  to = putField(buffer, to, 1, entry.inputData);
  to = putField(buffer, to, 2, entry.classification);
  to = putField(buffer, to, 3, entry.status);
  to = putField(buffer, to, 4, entry.emailAddress);
  to = putField(buffer, to, 5, entry.emailAddressLocalPart);
  to = putField(buffer, to, 6, entry.emailAddressDomainPart);
  to = putField(buffer, to, 7, entry.asciiEmailAddressDomainPart);
  to = putField(buffer, to, 8, entry.hasInternationalMailboxName);
  to = putField(buffer, to, 9, entry.hasInternationalDomainName);
  to = putField(buffer, to, 10, entry.isDisposableEmailAddress);
  to = putField(buffer, to, 11, entry.isRoleAccount);
  to = putField(buffer, to, 12, entry.isFreeEmailAddress);
  to = putField(buffer, to, 13, entry.syntaxFailureIndex);
  to = putField(buffer, to, 15, entry.custom);
  to = putField(buffer, to, 16, entry.duplicateOf);
  to = putField(buffer, to, 17, entry.completedOn);
  return putBytes(buffer, to, LINE_END);
}

/**
 * The output of a chunk of results, encoded into a buffer of its own (an ArrayBuffer that can be transferred to
 * another thread): JSON lines as BatchedWriter encodes them, or CSV records (the text of a list of records is the
 * concatenation of each record's, so a chunk's text is the same whatever the batches around it).
 */
export class EncodedChunk {
  private buffer: Buffer;
  private used = 0;
  private readonly csvRecords: string[][] = [];

  constructor(
    private readonly output: OutputFormat,
    private readonly csvFormulas: CsvFormulas,
    expectedBytes: number,
    /** Memory of an earlier chunk, written and given back: used when it is large enough. */
    spare?: ArrayBuffer,
  ) {
    this.buffer = spare !== undefined && spare.byteLength >= expectedBytes ? Buffer.from(spare) : Buffer.allocUnsafeSlow(Math.max(expectedBytes, 1024));
  }

  /** Adds the entry's result; in CSV and TSV, followed by its input record's `columns` when given. */
  add(entry: Entry, columns?: readonly string[]): void {
    if (this.output !== 'jsonl') {
      this.csvRecords.push(csvRecord(entry, this.csvFormulas, columns));
      return;
    }
    const bound = jsonLineBound(entry);
    if (bound === Infinity) return this.addText(jsonLine(entry) + '\n');
    this.makeRoom(bound);
    this.used = putJsonLine(this.buffer, this.used, entry);
  }

  /** The bytes of the chunk's results; the chunk is done with. */
  bytes(): Uint8Array {
    if (this.csvRecords.length > 0) this.addText(csvText(this.csvRecords, delimiterOf(this.output)));
    return new Uint8Array(this.buffer.buffer, this.buffer.byteOffset, this.used);
  }

  private addText(text: string): void {
    this.makeRoom(text.length * MAX_BYTES_PER_UNIT);
    this.used += this.buffer.write(text, this.used, 'utf8');
  }

  private makeRoom(bytes: number): void {
    if (this.buffer.length - this.used >= bytes) return;
    const larger = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.used + bytes));
    this.buffer.copy(larger, 0, 0, this.used);
    this.buffer = larger;
  }
}

/** Output is encoded into buffers of this size and written one buffer at a time. */
const BATCH_BYTES = 1 << 18;
/** The most UTF-8 bytes one UTF-16 unit can take (a surrogate pair, two units, takes four). */
const MAX_BYTES_PER_UNIT = 3;

/**
 * Collects output text and writes it in batches, honouring back-pressure: `add` returns a promise only when a batch
 * was written and the stream asked to wait (`write` returned false) and has not drained yet. Text is encoded into
 * the batch buffer as it comes, so no string outlives its line.
 */
export class BatchedWriter {
  private buffer: Buffer = Buffer.allocUnsafe(BATCH_BYTES);
  private used = 0;
  private flushScheduled = false;
  private drained: Promise<void> | null = null;

  private csvRecords: string[][] = [];
  private waken: (() => void) | null = null;
  /** The stream's error (EPIPE once the reader of a pipe has gone): nothing more is written after it. */
  error: NodeJS.ErrnoException | undefined;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly csvFormulas: CsvFormulas = 'escape',
    /** The field delimiter of CSV records: a tab for TSV. */
    private readonly delimiter: ',' | '\t' = ',',
  ) {
    out.on('error', (error: NodeJS.ErrnoException) => {
      this.error ??= error;
      this.waken?.(); // a wait for 'drain' ends: no drain comes after an error
    });
  }

  /** Adds the entry as a JSON line (`jsonLine(entry)` and a line break), encoded in place when it fits. */
  addJsonLine(entry: Entry): Promise<void> | undefined {
    const bound = jsonLineBound(entry);
    if (bound > this.buffer.length) return this.add(jsonLine(entry) + '\n');
    if (bound > this.buffer.length - this.used) this.flush();
    this.used = putJsonLine(this.buffer, this.used, entry);
    this.scheduleFlush();
    return this.drained ?? undefined;
  }

  /**
   * Adds bytes encoded elsewhere (an EncodedChunk's): what waits is written first, then they are, as they are;
   * `written` is called once the stream is done with them (their memory may then be used again).
   */
  addBytes(bytes: Uint8Array, written?: () => void): Promise<void> | undefined {
    this.flush();
    this.send(bytes, written);
    return this.drained ?? undefined;
  }

  /** Adds the entry as a CSV record (`csvRecord(entry)`), followed by its input record's `columns` when given. */
  addCsvRecord(entry: Entry, columns?: readonly string[]): Promise<void> | undefined {
    this.csvRecords.push(csvRecord(entry, this.csvFormulas, columns));
    if (this.csvRecords.length >= CSV_RECORDS_PER_BATCH) return this.takeCsvRecords();
    this.scheduleFlush();
    return this.drained ?? undefined;
  }

  private takeCsvRecords(): Promise<void> | undefined {
    const records = this.csvRecords;
    this.csvRecords = [];
    return this.add(csvText(records, this.delimiter));
  }

  add(text: string): Promise<void> | undefined {
    if (text.length * MAX_BYTES_PER_UNIT > this.buffer.length - this.used) {
      this.flush();
      if (text.length * MAX_BYTES_PER_UNIT > this.buffer.length) {
        this.send(Buffer.from(text, 'utf8'));
        return this.drained ?? undefined;
      }
    }
    this.used += this.buffer.write(text, this.used, 'utf8');
    this.scheduleFlush();
    return this.drained ?? undefined;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    // Runs once the current burst of results is done and the process waits for I/O.
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /** Writes what is waiting and resolves once the stream has taken it. */
  async end(): Promise<void> {
    this.flush();
    if (this.drained !== null) await this.drained;
  }

  private flush(): void {
    if (this.csvRecords.length > 0) this.takeCsvRecords();
    if (this.used === 0 || this.error !== undefined) return;
    const batch = this.buffer.subarray(0, this.used);
    // The stream may hold on to the written buffer until it is sent: the next batch gets a new one.
    this.buffer = Buffer.allocUnsafe(BATCH_BYTES);
    this.used = 0;
    this.send(batch);
  }

  private send(bytes: Uint8Array, written?: () => void): void {
    if (this.error !== undefined) return;
    const taken = written === undefined ? this.out.write(bytes) : this.out.write(bytes, (error) => error == null && written());
    if (!taken && this.drained === null) {
      this.drained = new Promise((resolve) => {
        const done = (): void => {
          this.out.removeListener('drain', done);
          this.drained = this.waken = null;
          resolve();
        };
        this.waken = done;
        this.out.once('drain', done);
      });
    }
  }
}
