/**
 * Spreadsheets: xlsx (checked against zip bombs first) and xls, read in a worker thread with a memory limit and a
 * time limit, so that a hostile workbook costs at most that thread's limits while the server goes on answering.
 */
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { ProblemError, invalidField } from '../problems.js';
import type { EntryCollector } from './entries.js';
import { spreadsheetWorker, type WorkerJob, type WorkerMessage } from './spreadsheet-worker.js';
import { checkXlsxArchive } from './zip-check.js';

export interface SpreadsheetLimits {
  /** The most bytes an xlsx workbook may inflate to. */
  readonly maxInflatedBytes: number;
  /** The largest xls file (SheetJS reads it whole). */
  readonly maxXlsBytes: number;
  /** The time a workbook may take to read. */
  readonly timeoutMs: number;
  /** The heap of the worker that reads it. */
  readonly workerHeapMb: number;
}

/** The magic number of an OLE2 compound file (MS-CFB 2.2), the container of BIFF8 xls workbooks. */
const CFB_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** The source the worker runs: the function's own text, called. */
const WORKER_SOURCE = `(${String(spreadsheetWorker)})()`;

// Resolves the readers' modules from this file (the CommonJS build gets `import.meta.url` from a shim of tsup.config.ts).
const requireHere = createRequire(import.meta.url);

export async function readSpreadsheet(
  kind: 'xlsx' | 'xls',
  path: string,
  size: number,
  collector: EntryCollector,
  limits: SpreadsheetLimits,
): Promise<void> {
  if (kind === 'xls') {
    if (size > limits.maxXlsBytes) throw new ProblemError(413, `inputFile: an xls file may have at most ${limits.maxXlsBytes} bytes.`);
    // SheetJS reads many formats; an xls import takes only what Excel writes as .xls (BIFF8 in a compound file).
    if (!(await startsWith(path, CFB_SIGNATURE))) throw new ProblemError(415, 'inputFile: not an xls workbook (no OLE2 compound file).');
  } else {
    await checkXlsxArchive(path, { maxInflatedBytes: limits.maxInflatedBytes });
  }
  const { layout } = collector;
  const job: WorkerJob = {
    kind,
    path,
    sheet: layout.sheet,
    column: layout.column,
    startingRow: layout.startingRow,
    endingRow: layout.endingRow,
    modules: { exceljs: requireHere.resolve('exceljs'), xlsx: requireHere.resolve('@e965/xlsx') },
  };
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: job,
    resourceLimits: { maxOldGenerationSizeMb: limits.workerHeapMb },
    stdout: true,
    stderr: true,
  });
  // The worker's own output is not the server's.
  worker.stdout.resume();
  worker.stderr.resume();
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new ProblemError(415, `inputFile: the ${kind} workbook was not read within ${limits.timeoutMs / 1000} s.`));
      }, limits.timeoutMs);
      const settle = (error?: unknown): void => {
        clearTimeout(timer);
        if (error === undefined) resolve();
        else reject(error);
      };
      worker.on('message', (message: WorkerMessage) => {
        try {
          if (message.type === 'cells') {
            for (let i = 0; i < message.rows.length; i++) {
              collector.add(message.rows[i]!, message.cells[i] ?? undefined, message.widths[i]!);
            }
          } else if (message.type === 'end') {
            if (!message.found) {
              const count = `${message.sheets} sheet${message.sheets === 1 ? '' : 's'}`;
              throw invalidField('settings.sheet', `sheet ${layout.sheet} does not exist: the workbook has ${count}`);
            }
            settle();
          } else {
            throw new ProblemError(message.status, `inputFile: not a readable ${kind} workbook (${message.detail}).`);
          }
        } catch (error) {
          settle(error);
        }
      });
      worker.on('error', (error: Error & { code?: string }) => {
        const detail = error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'it needs more memory than the server allows' : 'the reader failed';
        settle(new ProblemError(415, `inputFile: the ${kind} workbook could not be read (${detail}).`));
      });
      worker.on('exit', () => settle(new ProblemError(415, `inputFile: the ${kind} workbook could not be read.`)));
    });
  } finally {
    await worker.terminate();
  }
}

async function startsWith(path: string, signature: Buffer): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(signature.length);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    return bytesRead === head.length && head.equals(signature);
  } finally {
    await file.close();
  }
}
