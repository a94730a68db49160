/**
 * The rows of an export: each entry as one row of cells in the order of the service's Job entry table (ENTRY_FIELDS).
 */
import { ENTRY_FIELDS, type Entry } from 'mailverify/internal';

/** The header row: the entry's JSON field names. */
export const HEADER: readonly string[] = ENTRY_FIELDS;

/**
 * A cell: text, a number, a boolean, or empty (the entry lacks the field). The types carry into the spreadsheets
 * (xlsx inline strings, xls LABELSST records are text, never formulas); CSV has none, so its text cells are
 * neutralised where a spreadsheet would read a formula (csv.ts).
 */
export type Cell = string | number | boolean | undefined;

/** Entries read per store call: large enough to keep the per-call cost small, small enough to bound memory. */
export const EXPORT_PAGE = 2000;

/** The entry's cells, in ENTRY_FIELDS order; `suggestions` joined with `; `. */
export function cellsOf(entry: Entry): Cell[] {
  const cells = new Array<Cell>(ENTRY_FIELDS.length);
  for (let column = 0; column < ENTRY_FIELDS.length; column++) {
    const value = entry[ENTRY_FIELDS[column]!];
    cells[column] = Array.isArray(value) ? value.join('; ') : value;
  }
  return cells;
}
