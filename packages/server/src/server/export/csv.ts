/**
 * CSV export (RFC 4180): UTF-8 without BOM, a header row, CRLF line ends, quotes only where a cell needs them, and
 * text that a spreadsheet would take for a formula (`=1+1`) written with a leading `'` (engine/csv-formulas.ts).
 *
 * Written here, one text per page, rather than by csv-stringify: its stream takes one record at a time, and the
 * export spent more time in that per-row machinery than in reading the store. The quoting is csv-stringify's, with
 * the options the export used (`record_delimiter: 'windows'`, `quoted_match: /[\r\n]|^\s|\s$/`); a test holds the
 * two byte for byte on the same rows (test/server/export-csv.test.ts).
 */
import { Readable } from 'node:stream';
import { escapeFormula, type Entry } from 'mailverify/internal';
import { HEADER, cellsOf, type Cell } from './rows.js';

/**
 * A field that must be quoted: it holds the delimiter, a quote or a line break (RFC 4180 section 2, rule 6), or has
 * white space at an edge, so that no reader takes it apart or trims it.
 */
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/** The CSV text of the pages, one chunk per page, as a stream that reads the next page only when the previous one has been taken. */
export function csvStream(pages: AsyncIterable<Entry[]>): Readable {
  // A page's text is one chunk: a high-water mark of one byte holds at most a page ahead of the reader.
  return Readable.from(csvTexts(pages), { objectMode: false, highWaterMark: 1 });
}

async function* csvTexts(pages: AsyncIterable<Entry[]>): AsyncGenerator<string> {
  yield csvRecord(HEADER);
  for await (const page of pages) {
    let text = '';
    for (const entry of page) text += csvRecord(cellsOf(entry));
    yield text;
  }
}

/** One record, CRLF at its end (RFC 4180 section 2, rules 1 and 4). */
export function csvRecord(cells: readonly Cell[]): string {
  let record = csvField(cells[0]);
  for (let i = 1; i < cells.length; i++) record += `,${csvField(cells[i])}`;
  return `${record}\r\n`;
}

/** A cell as a field: csvText, quoted where needed. */
function csvField(cell: Cell): string {
  const text = csvText(cell);
  // Numbers and booleans never need quotes. RFC 4180 section 2, rule 7: a quote inside a quoted field is doubled.
  return typeof cell === 'string' && NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Text with formulas neutralised, numbers as JavaScript writes them, booleans as `true` / `false`, absent fields empty. */
export function csvText(cell: Cell): string {
  if (typeof cell === 'string') return escapeFormula(cell);
  return cell === undefined ? '' : String(cell);
}
