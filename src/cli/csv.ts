/** RFC 4180 CSV: a streaming record reader (quoted fields may hold delimiters, quotes and line breaks) and a writer. */

/** Splits text chunks into records; call `push` per chunk and `end` once. */
export class CsvRecordReader {
  private field = '';
  private record: string[] = [];
  private inQuotes = false;
  private quoteSeen = false; // a quote inside a quoted field: either an escaped quote or the closing one
  private lastWasCr = false;
  private records: string[][] = [];

  constructor(private readonly delimiter: string) {
    if (delimiter.length !== 1 || delimiter === '"' || delimiter === '\n' || delimiter === '\r') {
      throw new RangeError(`the CSV delimiter must be one character other than a quote or a line break, got ${JSON.stringify(delimiter)}`);
    }
  }

  /** Feeds a chunk; returns the records it completed. */
  push(chunk: string): string[][] {
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i]!;
      if (this.lastWasCr) {
        this.lastWasCr = false;
        if (ch === '\n') continue; // CRLF ends one record
      }
      if (this.inQuotes) {
        if (this.quoteSeen) {
          this.quoteSeen = false;
          if (ch === '"') {
            this.field += '"';
            continue;
          }
          this.inQuotes = false; // the quote closed the field; fall through to read `ch` outside quotes
        } else if (ch === '"') {
          this.quoteSeen = true;
          continue;
        } else {
          this.field += ch;
          continue;
        }
      }
      if (ch === '"' && this.field === '') {
        this.inQuotes = true;
      } else if (ch === this.delimiter) {
        this.record.push(this.field);
        this.field = '';
      } else if (ch === '\n' || ch === '\r') {
        this.lastWasCr = ch === '\r';
        this.endRecord();
      } else {
        this.field += ch;
      }
    }
    return this.take();
  }

  /** Ends the input; returns the last record if the input did not end with a line break. */
  end(): string[][] {
    if (this.quoteSeen) this.inQuotes = false;
    if (this.field !== '' || this.record.length > 0 || this.inQuotes) this.endRecord();
    return this.take();
  }

  private endRecord(): void {
    this.record.push(this.field);
    this.records.push(this.record);
    this.field = '';
    this.record = [];
    this.inQuotes = false;
    this.quoteSeen = false;
  }

  private take(): string[][] {
    const done = this.records;
    this.records = [];
    return done;
  }
}

/** One CSV field, quoted when it holds the delimiter, a quote, a line break or edge white space. */
export function csvField(value: unknown, delimiter = ','): string {
  if (value === undefined || value === null) return '';
  const text = Array.isArray(value) ? value.join(' ') : String(value);
  const needsQuotes =
    text.includes(delimiter) || /["\r\n]/.test(text) || (text.length > 0 && (text.trim() !== text));
  return needsQuotes ? '"' + text.replace(/"/g, '""') + '"' : text;
}
