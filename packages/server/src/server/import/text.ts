/**
 * Text files: plain text (one address per line) and delimiter-separated values (CSV, TSV: quotes per RFC 4180 on
 * csv-parse), decoded from their charset as they are read from disk.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import iconv from 'iconv-lite';
import { ProblemError, invalidField } from '../problems.js';
import type { EntryCollector } from './entries.js';
import type { LineEnding } from './settings.js';

/**
 * The longest row read: 1 MiB of text, far beyond an address (1,024 characters) and the rows of any address list.
 * A longer row is refused before more of it is held (a file of one 100 MB line costs 1 MiB, not 100 MB).
 */
export const MAX_ROW_LENGTH = 1 << 20;

/** Byte order marks; one wins over the declared charset. */
const BOMS: ReadonlyArray<readonly [string, readonly number[]]> = [
  ['utf-8', [0xef, 0xbb, 0xbf]],
  ['utf-16le', [0xff, 0xfe]],
  ['utf-16be', [0xfe, 0xff]],
];

/** 415 for a file that is not text in its charset. */
const unreadable = (detail: string): ProblemError => new ProblemError(415, `inputFile: ${detail}`);

/**
 * The file's text in chunks. The charset is the BOM's, else the declared one, else UTF-8; UTF-8 is decoded strictly
 * (a byte sequence that is not UTF-8 is 415: the file is in another charset than declared), others with iconv-lite.
 */
export async function* decodedText(path: string, charset: string | undefined): AsyncGenerator<string> {
  const stream = createReadStream(path, { highWaterMark: 1 << 16 });
  let decode: ((chunk: Buffer) => string) | undefined;
  let flush: (() => string) | undefined;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (decode === undefined) {
        const bom = BOMS.find(([, bytes]) => bytes.every((byte, at) => chunk[at] === byte));
        [decode, flush] = decoderOf(bom?.[0] ?? charset ?? 'utf-8');
      }
      const text = decode(chunk);
      if (text !== '') yield text;
    }
    const rest = flush?.() ?? '';
    if (rest !== '') yield rest;
  } finally {
    stream.destroy();
  }
}

function decoderOf(charset: string): [(chunk: Buffer) => string, () => string] {
  if (/^utf-?8$/i.test(charset)) {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const guard = (read: () => string): string => {
      try {
        return read();
      } catch {
        throw unreadable('the file is not UTF-8 text (give its charset in the part\'s Content-Type)');
      }
    };
    return [(chunk) => guard(() => decoder.decode(chunk, { stream: true })), () => guard(() => decoder.decode())];
  }
  if (!iconv.encodingExists(charset)) throw unreadable(`the charset ${JSON.stringify(charset)} is not one this server decodes`);
  const decoder = iconv.getDecoder(charset);
  return [(chunk) => decoder.write(chunk), () => decoder.end() ?? ''];
}

/** What separates lines: any of CRLF, LF and CR for `Auto`, else only the one named. */
const SEPARATORS: Record<LineEnding, RegExp> = { Auto: /\r\n|\n|\r/g, CrLf: /\r\n/g, Cr: /\r/g, Lf: /\n/g };
const RECORD_DELIMITERS: Record<LineEnding, string[]> = { Auto: ['\r\n', '\n', '\r'], CrLf: ['\r\n'], Cr: ['\r'], Lf: ['\n'] };

/** A plain text file: each line one row, its whole text the cell (column 0). */
export async function readPlainText(text: AsyncIterable<string>, collector: EntryCollector): Promise<void> {
  if (collector.layout.column > 0) throw invalidField('settings.column', 'a plain text file has one column (0)');
  const separator = SEPARATORS[collector.layout.lineEnding];
  let pending = '';
  let row = 0;
  for await (const chunk of text) {
    const buffer = pending + chunk;
    let start = 0;
    separator.lastIndex = 0;
    for (let match: RegExpExecArray | null; (match = separator.exec(buffer)) !== null; ) {
      // A CR at the end of a chunk may be the first half of a CRLF: decided with the next chunk.
      if (match[0] === '\r' && match.index === buffer.length - 1) break;
      if (collector.isPastEnd(row)) return;
      const line = buffer.slice(start, match.index);
      collector.add(row++, line, line === '' ? 0 : 1);
      start = match.index + match[0].length;
    }
    pending = buffer.slice(start);
    if (pending.length > MAX_ROW_LENGTH) throw rowTooLong(row);
  }
  // The file's last CR ends its last line (it was held back above).
  if (pending.endsWith('\r') && (collector.layout.lineEnding === 'Auto' || collector.layout.lineEnding === 'Cr')) {
    pending = pending.slice(0, -1);
  }
  if (pending !== '' && !collector.isPastEnd(row)) collector.add(row, pending, 1);
}

/** A delimited file: each record one row (a quoted cell may hold the delimiter or a line break). */
export async function readDelimited(text: AsyncIterable<string>, defaultDelimiter: string, collector: EntryCollector): Promise<void> {
  const { column, lineEnding, delimiter = defaultDelimiter } = collector.layout;
  const parser = parse({
    delimiter,
    record_delimiter: RECORD_DELIMITERS[lineEnding],
    // Rows may have any number of cells: only the chosen column matters.
    relax_column_count: true,
    // A quote inside an unquoted cell is kept: `"john doe"@example.org` is an address.
    relax_quotes: true,
    skip_empty_lines: false,
    max_record_size: MAX_ROW_LENGTH,
  });
  const source = Readable.from(text, { objectMode: false });
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);
  let row = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (collector.isPastEnd(row)) return;
      collector.add(row++, record[column], record.length === 1 && record[0] === '' ? 0 : record.length);
    }
  } catch (error) {
    throw csvProblem(error, row);
  } finally {
    source.destroy();
    parser.destroy();
  }
}

/** csv-parse's failures as problems naming the row; a problem from the decoder as it is. */
function csvProblem(error: unknown, row: number): unknown {
  if (!(error instanceof CsvError)) return error;
  switch (error.code) {
    case 'CSV_MAX_RECORD_SIZE':
      return new ProblemError(400, `inputFile: row ${row} is longer than ${MAX_ROW_LENGTH} characters (is a quote left open?).`);
    case 'CSV_QUOTE_NOT_CLOSED':
      return unreadable(`row ${row} opens a quoted cell that is not closed by the end of the file`);
    default:
      return unreadable(`row ${row} is not well-formed CSV (${error.message})`);
  }
}

function rowTooLong(row: number): ProblemError {
  return new ProblemError(400, `inputFile: row ${row} is longer than ${MAX_ROW_LENGTH} characters, not a list of addresses.`);
}
