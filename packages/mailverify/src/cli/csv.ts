/**
 * CSV and TSV on the csv-parse library: the addresses of one column of the input's records, read
 * as a stream in batches, and result records written as CSV.
 */
import { pipeline, type Readable } from 'node:stream';
import { CsvError, parse, type Parser } from 'csv-parse';

export interface CsvColumn {
  /** One character; not a quote or a line break. */
  delimiter: string;
  /** The column holding the addresses: a zero-based index, or a name in the header (which implies `header`). */
  column: number | string;
  /** The first record is a header, not an address. */
  header: boolean;
  /** Told of the header record, once it has been read. */
  onHeader?: (header: string[]) => void;
  /** Told of the records of each batch, just before the batch's addresses are yielded (record k has address k). */
  onRecords?: (records: string[][]) => void;
}

/**
 * The longest CSV record read: 1 MiB, far beyond the 254 octets of an address and the rows of any address list. A
 * longer record is an input error (a quote left open swallows the rest of the file into one field: this stops it).
 */
export const MAX_RECORD_SIZE = 1 << 20;

/**
 * The addresses of CSV text, a batch per chunk parsed, in order: one column of each record. A blank line is no
 * record. Malformed CSV, a record without the column and a header without the named column are errors naming the line
 * (the first line of the record); the addresses before the error are yielded first.
 */
export async function* csvAddresses(input: Readable, options: CsvColumn): AsyncGenerator<string[]> {
  const parser = parse({
    bom: true,
    delimiter: options.delimiter,
    // CRLF, LF and CR, even mixed in one file.
    record_delimiter: ['\r\n', '\n', '\r'],
    // Records may have as many fields as they like: only the address column must be there.
    relax_column_count: true,
    // A quote inside an unquoted field is kept: `"john doe"@example.org` is an address.
    relax_quotes: true,
    max_record_size: MAX_RECORD_SIZE,
  });
  // The callback is told of every failure (the parser's own are also thrown below, named by line).
  pipeline(input, parser, () => {});
  let column = typeof options.column === 'number' ? options.column : -1;
  let headerPending = options.header || typeof options.column === 'string';
  /** The line the next record starts on (csv-parse counts a CRLF inside a quoted field twice: counted here). */
  let line = 1;
  try {
    for (;;) {
      const addresses: string[] = [];
      const records: string[][] = [];
      let failure: Error | undefined;
      let read = 0;
      for (let record: string[] | null; failure === undefined && (record = parser.read() as string[] | null) !== null; ) {
        read++;
        const start = line;
        line += lineSpan(record);
        if (record.length === 1 && record[0] === '') continue; // a blank line
        if (headerPending) {
          headerPending = false;
          if (typeof options.column === 'string') column = headerColumn(record, options.column, start);
          options.onHeader?.(record);
          continue;
        }
        const address = record[column];
        if (address === undefined) {
          failure = new Error(
            `line ${start} of the input has ${record.length} field${record.length === 1 ? '' : 's'}, no column ${describeColumn(options.column, column)}`,
          );
        } else {
          addresses.push(address);
          if (options.onRecords !== undefined) records.push(record);
        }
      }
      // A failed parser still hands out the records it parsed before the failure.
      failure ??= read === 0 && parser.errored !== null ? inputError(parser.errored, line) : undefined;
      if (addresses.length > 0) {
        options.onRecords?.(records);
        yield addresses;
      }
      if (failure !== undefined) throw failure;
      if (read > 0) continue;
      if (parser.readableEnded || parser.destroyed) return;
      await readableOrEnd(parser);
    }
  } finally {
    parser.destroy();
  }
}

/** The lines a record takes: one, and one more per line break (CRLF, LF or CR) inside its quoted fields. */
function lineSpan(record: string[]): number {
  let span = 1;
  for (const field of record) {
    if (field.indexOf('\n') < 0 && field.indexOf('\r') < 0) continue;
    for (let i = 0; i < field.length; i++) {
      const c = field.charCodeAt(i);
      if (c === 0x0a || (c === 0x0d && field.charCodeAt(i + 1) !== 0x0a)) span++;
    }
  }
  return span;
}

/** The index of the named column: the name as written, or else the one name equal to it ignoring case and edge spaces. */
function headerColumn(header: string[], name: string, line: number): number {
  const exact = header.indexOf(name);
  if (exact >= 0) return exact;
  const wanted = name.trim().toLowerCase();
  const loose = header.flatMap((field, at) => (field.trim().toLowerCase() === wanted ? [at] : []));
  if (loose.length === 1) return loose[0]!;
  const shown = header.slice(0, 50).map((field) => JSON.stringify(field));
  if (header.length > shown.length) shown.push(`and ${header.length - shown.length} more`);
  throw new Error(`the header (line ${line} of the input) has no column ${JSON.stringify(name)}; its columns are ${shown.join(', ')}`);
}

const describeColumn = (asked: number | string, at: number): string =>
  typeof asked === 'number' ? `${asked} (zero-based)` : `${at} (zero-based), ${JSON.stringify(asked)} in the header`;

/** A parser's failure as an input error naming the line its record starts on; other failures (reading) as they are. */
function inputError(error: Error, line: number): Error {
  if (!(error instanceof CsvError)) return error;
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') {
    return new Error(`line ${line} of the input opens a quoted CSV field that is not closed by the end of the input`);
  }
  if (error.code === 'CSV_MAX_RECORD_SIZE') {
    return new Error(
      `line ${line} of the input starts a CSV record longer than ${MAX_RECORD_SIZE.toLocaleString('en')} characters (is a quote not closed?)`,
    );
  }
  return new Error(`line ${line} of the input starts a record that is not CSV: ${error.message}`);
}

/** Resolves when the parser has records to read, has ended, or has failed. */
function readableOrEnd(parser: Parser): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      for (const event of EVENTS) parser.off(event, done);
      resolve();
    };
    for (const event of EVENTS) parser.on(event, done);
  });
}
const EVENTS = ['readable', 'end', 'error', 'close'] as const;

/**
 * What CSV output does with text that a spreadsheet would take for a formula (`=1+1`): `escape` writes it with a
 * leading `'` (engine/csv-formulas.ts); `keep` writes it as it is, for programs that read the file.
 */
export type CsvFormulas = 'escape' | 'keep';
export const CSV_FORMULAS: readonly CsvFormulas[] = ['escape', 'keep'];

/** Fields that must be quoted, by delimiter: those holding it, a quote, a CR or an LF (RFC 4180 section 2, rule 6). */
const NEEDS_QUOTES = { ',': /[",\r\n]/, '\t': /["\t\r\n]/ } as const;

/**
 * Records as CSV (or, with a tab, TSV) text, each ended by a line feed. A field is quoted when it holds the
 * delimiter, a quote, a CR or an LF, its quotes doubled (rule 7): a field with a lone CR stays whole for readers that
 * end records at a CR. White space at a field's edges is kept as it is, as RFC 4180 reads it. (The quoting of
 * csv-stringify's defaults, which a test holds it to.)
 */
export function csvText(records: readonly (readonly string[])[], delimiter: ',' | '\t' = ','): string {
  const needsQuotes = NEEDS_QUOTES[delimiter];
  let text = '';
  for (const record of records) {
    for (let i = 0; i < record.length; i++) {
      const field = record[i]!;
      if (i > 0) text += delimiter;
      text += needsQuotes.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
    }
    text += '\n';
  }
  return text;
}
