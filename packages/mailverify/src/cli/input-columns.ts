/**
 * The input's own columns, kept for CSV and TSV output of CSV and TSV input: each result record is the result's
 * fields followed by the fields of the input record it came from, so that a list's other columns (name, company, ...)
 * come back beside their verdict, with no join on `index`. The result's fields come first, so that they line up in
 * every record even when the input's records differ in length, and so that output read by position reads as before.
 *
 * The records are read ahead of the results (the reader runs ahead of the verifier and of the worker threads) and kept
 * here in input order until their results are written: one result per input, in input order, takes them in turn.
 */
import { ENTRY_FIELDS } from '../engine/entry.js';

/** The prefix of an input column named like a result field (`status` becomes `input.status`). */
const COLLISION_PREFIX = 'input.';

export class InputColumns {
  private records: string[][] = [];
  private head = 0;
  private header: string[] | undefined;
  private firstWidth: number | undefined;

  /** For csvAddresses: the input's header record. */
  readonly onHeader = (header: string[]): void => {
    this.header = header;
  };

  /** For csvAddresses: the records of a batch, in input order. */
  readonly onRecords = (records: string[][]): void => {
    this.firstWidth ??= records[0]?.length;
    for (const record of records) this.records.push(record);
  };

  /**
   * The names of the input's columns for the output's header: those of the input's header (one named like a result
   * field gets the prefix `input.`), else `column0`, `column1`, ... as many as the first record has (zero-based, as
   * `--column` counts). Known once the header or the first record has been read; none for an empty input.
   */
  names(): string[] {
    if (this.header !== undefined) {
      const taken = new Set<string>(ENTRY_FIELDS);
      return this.header.map((name) => (taken.has(name) ? COLLISION_PREFIX + name : name));
    }
    return Array.from({ length: this.firstWidth ?? 0 }, (_, i) => `column${i}`);
  }

  /** The fields of the next input record, the one of the next result written. */
  next(): string[] {
    const record = this.records[this.head++] ?? [];
    this.compact();
    return record;
  }

  /** The fields of the next `count` input records, for a chunk of results encoded elsewhere. */
  take(count: number): string[][] {
    const records = this.records.slice(this.head, this.head + count);
    this.head += count;
    this.compact();
    return records;
  }

  /** Drops the records already taken once they are most of the array, so that memory follows what is pending. */
  private compact(): void {
    if (this.head < 4096 || this.head * 2 < this.records.length) return;
    this.records = this.records.slice(this.head);
    this.head = 0;
  }
}
