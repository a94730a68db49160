/**
 * CSV export (RFC 4180): UTF-8 without BOM, a header row, CRLF line ends, quotes only where a cell needs them, and
 * text that a spreadsheet would take for a formula (`=1+1`) written with a leading `'` (engine/csv-formulas.ts).
 */
import { Readable, pipeline } from 'node:stream';
import { stringify } from 'csv-stringify';
import { escapeFormula } from '../../engine/csv-formulas.js';
import type { Entry } from '../../engine/entry.js';
import { HEADER, cellsOf, type Cell } from './rows.js';

/** The CSV text of the pages, as a stream that reads the next page only when the previous one has been taken. */
export function csvStream(pages: AsyncIterable<Entry[]>): Readable {
  async function* records(): AsyncGenerator<string[]> {
    yield [...HEADER];
    for await (const page of pages) {
      for (const entry of page) yield cellsOf(entry).map(csvText);
    }
  }
  // RFC 4180 section 2: CRLF between records, fields with a comma, quote or line break in double quotes.
  // csv-stringify quotes a cell holding the record delimiter (CRLF) but not a lone CR or LF: those are quoted here,
  // and so are cells with white space at an edge, so that no reader takes them apart or trims them.
  // A failure on either side destroys the other; the reply sees it and drops the connection.
  return pipeline(Readable.from(records()), stringify({ record_delimiter: 'windows', quoted_match: /[\r\n]|^\s|\s$/ }), () => {});
}

/** Text with formulas neutralised, numbers as JavaScript writes them, booleans as `true` / `false`, absent fields empty. */
export function csvText(cell: Cell): string {
  if (typeof cell === 'string') return escapeFormula(cell);
  return cell === undefined ? '' : String(cell);
}
