/**
 * The rows of an export: the job's entries, read from the store a page at a time in index order, and each entry as
 * one row of cells in the order of the service's Job entry table (ENTRY_FIELDS).
 */
import { ENTRY_FIELDS, type Entry } from '../../engine/entry.js';
import type { EntryFilter, JobStore } from '../../jobs/types.js';

/** The header row: the entry's JSON field names. */
export const HEADER: readonly string[] = ENTRY_FIELDS;

/** A cell: text, a number, a boolean, or empty (the entry lacks the field). */
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

/** The filtered entries of a job, a page at a time, in index order. */
export async function* entryPages(store: JobStore, jobId: string, filter: EntryFilter): AsyncGenerator<Entry[]> {
  let after: number | undefined;
  for (;;) {
    const page = await store.entries(jobId, { ...filter, ...(after !== undefined && { after }), limit: EXPORT_PAGE });
    if (page.data.length > 0) yield page.data;
    if (!page.more || page.data.length === 0) return;
    after = page.data[page.data.length - 1]!.index;
    // The store answers at once and a loopback client takes every byte at once: without a turn of the event loop
    // per page, an export of a million entries would hold the server (timers, other requests) until it ends.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
