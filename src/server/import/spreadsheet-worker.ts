/**
 * The part of a spreadsheet import that runs in a worker thread: reading the workbook (xlsx with exceljs's streaming
 * reader, xls with SheetJS) and sending the chosen column's cells of the rows in range, in batches. A hostile
 * workbook can only cost this thread its time and memory limits, never the server's event loop.
 *
 * `spreadsheetWorker` is started from its source text (`String(spreadsheetWorker)`), the same in the bundled
 * package and in the TypeScript sources: it uses nothing but its argument, globals and the modules whose resolved
 * paths it is given (loaded with `createRequire`, built-in modules with `process.getBuiltinModule`).
 */

export interface WorkerJob {
  readonly kind: 'xlsx' | 'xls';
  readonly path: string;
  /** The upload's own folder, removed with it: where the reader's temporary files go. */
  readonly scratchDir: string;
  readonly sheet: number;
  readonly column: number;
  readonly startingRow: number;
  readonly endingRow: number;
  /** The longest cell text sent, in UTF-16 units: a longer one is cut there (the server refuses it all the same). */
  readonly maxCellUnits: number;
  /** Resolved paths of the libraries: exceljs for xlsx, @e965/xlsx (SheetJS) for xls. */
  readonly modules: { readonly exceljs: string; readonly xlsx: string };
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
  // exceljs copies a worksheet that comes before the shared strings to a temporary file (package tmp, in os.tmpdir())
  // and removes it only once it is read to its end: in the upload's folder, it goes with the upload whatever happens.
  process.getBuiltinModule('node:os').tmpdir = () => job.scratchDir;
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

  const readXlsx = async (): Promise<{ sheets: number; found: boolean }> => {
    const ExcelJS = createRequire(job.modules.exceljs)(job.modules.exceljs) as typeof import('exceljs');
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(job.path, {
      worksheets: 'emit',
      sharedStrings: 'cache',
      hyperlinks: 'ignore',
      styles: 'ignore',
      entries: 'ignore',
    });
    interface SheetReader extends AsyncIterable<{ number: number; cellCount: number; findCell(col: number): { value: unknown } | undefined }> {
      id: number | string;
      name?: string;
      iterator?: { destroy?: () => void };
    }
    interface Model {
      model?: { sheets?: { id: number | string; name: string }[] };
    }
    let found = false;
    let seen = 0;
    for await (const worksheet of reader as unknown as AsyncIterable<SheetReader>) {
      seen++;
      // The sheet's place in the workbook (workbook.xml order); a sheet the workbook does not list: by its file number.
      const listed = (reader as unknown as Model).model?.sheets ?? [];
      const at = listed.findIndex((sheet) => sheet.id === worksheet.id && sheet.name === worksheet.name);
      const position = at >= 0 ? at : Number(worksheet.id) - 1;
      if (position !== job.sheet || found) {
        worksheet.iterator?.destroy?.();
        continue;
      }
      found = true;
      for await (const row of worksheet) {
        const index = row.number - 1;
        if (index > job.endingRow) break;
        if (index < job.startingRow) continue;
        send(index, textOf(row.findCell(job.column + 1)?.value), row.cellCount);
      }
    }
    const listed = (reader as unknown as Model).model?.sheets?.length ?? 0;
    return { sheets: Math.max(listed, seen), found };
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
