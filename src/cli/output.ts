/**
 * The CLI's output: entries formatted as JSON lines or CSV records, written in batches.
 *
 * A million-line input gives a million results; one `write` per result would cost a system call each, more than the
 * offline checks themselves. Lines are collected and written together when the batch is large, or when the process
 * is about to wait for something (more input, DNS, SMTP), so results still appear as soon as they are known.
 */
import { ENTRY_FIELDS, type Entry } from '../engine/entry.js';
import { csvField } from './csv.js';

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
  return line + '}';
}

export function csvLine(entry: Entry): string {
  let line = '';
  for (let f = 0; f < ENTRY_FIELDS.length; f++) line += (f === 0 ? '' : ',') + csvField(entry[ENTRY_FIELDS[f]!]);
  return line;
}

/** Output is encoded into buffers of this size and written one buffer at a time. */
const BATCH_BYTES = 1 << 20;
/** The most UTF-8 bytes one UTF-16 unit can take (a surrogate pair, two units, takes four). */
const MAX_BYTES_PER_UNIT = 3;

/**
 * Collects output text and writes it in batches, honouring back-pressure: `add` returns a promise only when a batch
 * was written and the stream asked to wait (`write` returned false) and has not drained yet. Text is encoded into
 * the batch buffer as it comes, so no string outlives its line.
 */
export class BatchedWriter {
  private buffer = Buffer.allocUnsafe(BATCH_BYTES);
  private used = 0;
  private flushScheduled = false;
  private drained: Promise<void> | null = null;

  constructor(private readonly out: NodeJS.WritableStream) {}

  add(text: string): Promise<void> | undefined {
    if (text.length * MAX_BYTES_PER_UNIT > this.buffer.length - this.used) {
      this.flush();
      if (text.length * MAX_BYTES_PER_UNIT > this.buffer.length) {
        this.send(Buffer.from(text, 'utf8'));
        return this.drained ?? undefined;
      }
    }
    this.used += this.buffer.write(text, this.used, 'utf8');
    if (!this.flushScheduled) {
      // Runs once the current burst of results is done and the process waits for I/O.
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.flush();
      });
    }
    return this.drained ?? undefined;
  }

  /** Writes what is waiting and resolves once the stream has taken it. */
  async end(): Promise<void> {
    this.flush();
    if (this.drained !== null) await this.drained;
  }

  private flush(): void {
    if (this.used === 0) return;
    const batch = this.buffer.subarray(0, this.used);
    // The stream may hold on to the written buffer until it is sent: the next batch gets a new one.
    this.buffer = Buffer.allocUnsafe(BATCH_BYTES);
    this.used = 0;
    this.send(batch);
  }

  private send(bytes: Buffer): void {
    if (!this.out.write(bytes) && this.drained === null) {
      this.drained = new Promise((resolve) =>
        this.out.once('drain', () => {
          this.drained = null;
          resolve();
        }),
      );
    }
  }
}
