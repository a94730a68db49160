/**
 * The part of a spreadsheet import that runs in a worker thread: reading the workbook (xlsx with exceljs's part
 * parsers over yauzl, xls with SheetJS) and sending the chosen column's cells of the rows in range, in batches. A hostile
 * workbook can only cost this thread its time and memory limits, never the server's event loop.
 *
 * `spreadsheetWorker` is started from its source text (`String(spreadsheetWorker)`), the same in the bundled
 * package and in the TypeScript sources: it uses nothing but its argument, globals and the modules whose resolved
 * paths it is given (loaded with `createRequire`, built-in modules with `process.getBuiltinModule`).
 */

export interface WorkerJob {
  readonly kind: 'xlsx' | 'xls';
  readonly path: string;
  readonly sheet: number;
  readonly column: number;
  readonly startingRow: number;
  readonly endingRow: number;
  /** The longest cell text sent, in UTF-16 units: a longer one is cut there (the server refuses it all the same). */
  readonly maxCellUnits: number;
  /** Resolved paths of the libraries: exceljs and yauzl for xlsx, @e965/xlsx (SheetJS) for xls. */
  readonly modules: { readonly exceljs: string; readonly yauzl: string; readonly xlsx: string };
}

/** Worker to server: cells of rows in range (row numbers zero-based), then one `end` or one `failure`. */
export type WorkerMessage =
  | { readonly type: 'cells'; readonly rows: number[]; readonly cells: (string | null)[]; readonly widths: number[] }
  | { readonly type: 'end'; readonly sheets: number; readonly found: boolean }
  | { readonly type: 'failure'; readonly status: number; readonly detail: string };

export async function spreadsheetWorker(): Promise<void> {
  // No `require` or `import` here: a bundler would rewrite them, and the worker runs this function's text alone.
  const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const { createRequire } = process.getBuiltinModule('node:module');
  const fs = process.getBuiltinModule('node:fs');
  const job = workerData as WorkerJob;
  const port = parentPort!;
  const BATCH = 4096;
  let rows: number[] = [];
  let cells: (string | null)[] = [];
  let widths: number[] = [];
  const send = (row: number, cell: string | null, width: number): void => {
    rows.push(row);
    // Not a copy of a huge cell into the server's heap.
    cells.push(cell !== null && cell.length > job.maxCellUnits ? cell.slice(0, job.maxCellUnits) : cell);
    widths.push(width);
    if (rows.length >= BATCH) flush();
  };
  const flush = (): void => {
    if (rows.length === 0) return;
    port.postMessage({ type: 'cells', rows, cells, widths });
    rows = [];
    cells = [];
    widths = [];
  };

  /** A cell's value as text: strings as written, numbers and booleans as shown, rich text joined; else null. */
  const textOf = (value: unknown): string | null => {
    if (value === null || value === undefined) return null;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
    if (typeof value === 'object') {
      const record = value as { richText?: { text?: unknown }[]; result?: unknown; text?: unknown };
      if (Array.isArray(record.richText)) return record.richText.map((run) => (typeof run.text === 'string' ? run.text : '')).join('');
      if ('result' in record) return textOf(record.result);
      if ('text' in record) return textOf(record.text);
    }
    return null;
  };

  /**
   * exceljs's parsers for the parts of a workbook, driven part by part from the archive's central directory (yauzl):
   * the relationships, the workbook (its sheet list), the shared string table, then the one sheet asked for. exceljs's
   * own streaming pass (unzipper's `Parse` walked with an async iterator) drops entries when the consumer is slow (a
   * race seen under load: the workbook part, written last by exceljs, was lost and the read failed), so it is not used.
   * The private methods called here are those of the pinned exceljs 4.4.0 (lib/stream/xlsx/workbook-reader.js).
   */
  const readXlsx = async (): Promise<{ sheets: number; found: boolean }> => {
    const ExcelJS = createRequire(job.modules.exceljs)(job.modules.exceljs) as typeof import('exceljs');
    const yauzl = createRequire(job.modules.yauzl)(job.modules.yauzl) as typeof import('yauzl');
    interface Relationship {
      Id: string;
      Target: string;
    }
    interface PartReader {
      model?: { sheets?: { id: number | string; name: string; rId: string }[] };
      workbookRels?: Relationship[];
      _parseRels(stream: NodeJS.ReadableStream): Promise<void>;
      _parseWorkbook(stream: NodeJS.ReadableStream): Promise<void>;
      _parseSharedStrings(stream: NodeJS.ReadableStream): AsyncIterable<unknown>;
      _parseWorksheet(stream: NodeJS.ReadableStream, sheetNo: string): Iterable<{ value: AsyncIterable<{ number: number; cellCount: number; findCell(col: number): { value: unknown } | undefined }> }>;
    }
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(job.path, {
      worksheets: 'emit',
      sharedStrings: 'cache',
      hyperlinks: 'ignore',
      styles: 'ignore',
      entries: 'ignore',
    }) as unknown as PartReader;
    const zip = await yauzl.openPromise(job.path, { lazyEntries: true, autoClose: false, strictFileNames: false });
    try {
      const entries = new Map<string, import('yauzl').Entry>();
      for await (const entry of zip.eachEntry()) entries.set(entry.fileName, entry);
      const part = async (name: string): Promise<NodeJS.ReadableStream | undefined> => {
        const entry = entries.get(name);
        return entry === undefined ? undefined : zip.openReadStreamPromise(entry);
      };
      const rels = await part('xl/_rels/workbook.xml.rels');
      if (rels !== undefined) await reader._parseRels(rels);
      const book = await part('xl/workbook.xml');
      if (book === undefined) throw new Error('it has no xl/workbook.xml');
      await reader._parseWorkbook(book);
      // The sheets in workbook order (ECMA-376 Part 1, 18.2.20), each found through its relationship (Part 2, 9.3).
      const sheets = reader.model?.sheets ?? [];
      const sheet = sheets[job.sheet];
      if (sheet === undefined) return { sheets: sheets.length, found: false };
      const target = (reader.workbookRels ?? []).find((rel) => rel.Id === sheet.rId)?.Target ?? '';
      // A target is relative to the workbook's folder, or absolute from the package's root (Part 2, 9.3.2).
      const path = target.startsWith('/') ? target.slice(1) : `xl/${target.replace(/^\.\//, '')}`;
      const sheetNo = /^xl\/worksheets\/sheet(\d+)\.xml$/.exec(path)?.[1];
      if (sheetNo === undefined || !entries.has(path)) throw new Error(`sheet ${job.sheet}'s part (${JSON.stringify(target.slice(0, 100))}) is not in the workbook`);
      const strings = await part('xl/sharedStrings.xml');
      if (strings !== undefined) for await (const _ of reader._parseSharedStrings(strings));
      for (const { value: worksheet } of reader._parseWorksheet((await part(path))!, sheetNo)) {
        for await (const row of worksheet) {
          const index = row.number - 1;
          if (index > job.endingRow) break;
          if (index < job.startingRow) continue;
          send(index, textOf(row.findCell(job.column + 1)?.value), row.cellCount);
        }
      }
      return { sheets: sheets.length, found: true };
    } finally {
      zip.close();
    }
  };

  const readXls = (): { sheets: number; found: boolean } => {
    const XLSX = createRequire(job.modules.xlsx)(job.modules.xlsx) as typeof import('@e965/xlsx');
    const workbook = XLSX.read(fs.readFileSync(job.path), {
      type: 'buffer',
      dense: true,
      sheets: job.sheet,
      sheetRows: Math.min(job.endingRow, 1 << 20) + 1,
      cellFormula: false,
      cellHTML: false,
      cellStyles: false,
      bookVBA: false,
    });
    const name = workbook.SheetNames[job.sheet];
    const sheet = name === undefined ? undefined : workbook.Sheets[name];
    if (sheet === undefined) return { sheets: workbook.SheetNames.length, found: false };
    const data = ((sheet as { '!data'?: ({ t: string; v?: unknown; w?: string } | undefined)[][] })['!data'] ?? []);
    for (let index = job.startingRow; index < data.length && index <= job.endingRow; index++) {
      const row = data[index];
      if (row === undefined) continue;
      const cell = row[job.column];
      let text: string | null = null;
      if (cell !== undefined) {
        if (cell.t === 's' || cell.t === 'str') text = textOf(cell.v);
        else if (cell.t === 'n' || cell.t === 'd') text = cell.w ?? textOf(cell.v);
        else if (cell.t === 'b') text = cell.v ? 'TRUE' : 'FALSE';
      }
      send(index, text, row.length);
    }
    return { sheets: workbook.SheetNames.length, found: true };
  };

  try {
    const result = job.kind === 'xlsx' ? await readXlsx() : readXls();
    flush();
    port.postMessage({ type: 'end', ...result });
  } catch (error) {
    port.postMessage({ type: 'failure', status: 415, detail: String((error as Error)?.message ?? error).slice(0, 300) });
  }
}
