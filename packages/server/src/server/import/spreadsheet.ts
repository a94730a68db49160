/**
 * Spreadsheets: xlsx (checked against zip bombs and overlong XML tokens first) and xls, read in a worker thread with a
 * memory limit and a time limit, so that a hostile workbook costs at most that thread's limits while the server goes
 * on answering; at most `maxReaders` of them at once (one more is 503 with Retry-After), so that the limits add up to
 * a known total.
 */
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import { ProblemError, invalidField } from '../problems.js';
import { MAX_INPUT_LENGTH } from '../submission.js';
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
  /** The readers at work now, and their limit. */
  readonly readers: ReaderSlots;
}

/** How many workbook readers are at work, up to a limit: each holds a slot from its archive check to its end. */
export class ReaderSlots {
  private busy = 0;

  constructor(readonly max: number) {}

  /** A slot and its release, or a 503 problem (with Retry-After) when every slot is taken. */
  take(): () => void {
    if (this.busy >= this.max) {
      throw new ProblemError(503, `inputFile: the server is reading ${this.max} workbook${this.max === 1 ? '' : 's'} already, its limit; retry after ${READERS_RETRY_AFTER_S} s.`, undefined, {
        'Retry-After': String(READERS_RETRY_AFTER_S),
      });
    }
    this.busy++;
    let released = false;
    return () => {
      if (!released) this.busy--;
      released = true;
    };
  }
}

/** The wait a client that found every reader busy is asked for (RFC 9110, 10.2.3): a small workbook's reading time. */
const READERS_RETRY_AFTER_S = 5;

/**
 * The longest tag or text (with the comments, CDATA sections and PIs in it) in a workbook's parsed XML: the most the
 * XML parser builds as one string. A cell holds at most 32,767 characters (Excel's specifications and limits), each
 * at most 10 bytes as XML (`&#1114111;`): 1 MiB leaves room.
 */
const MAX_XML_TOKEN_BYTES = 1024 * 1024;
/**
 * The longest shared string item, its runs of rich text and their formatting included: a cell's 32,767 characters as
 * that many runs of about 130 bytes each (a font per character) are 4.3 MB.
 */
const MAX_SHARED_STRING_BYTES = 8 * 1024 * 1024;

/**
 * The longest cell text the reader sends: a cell longer than an address may be (1,024 characters, at most 2 UTF-16
 * units each) is refused by the collector all the same, which needs no more of it than this to say so.
 */
const MAX_CELL_UNITS = 2 * MAX_INPUT_LENGTH + 1;

/** The magic number of an OLE2 compound file (MS-CFB 2.2), the container of BIFF8 xls workbooks. */
const CFB_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** The source the worker runs: the function's own text, called. */
const WORKER_SOURCE = `(${String(spreadsheetWorker)})()`;

// Resolves the readers' modules from this file (the CommonJS build gets `import.meta.url` from a shim of tsup.config.ts).
const requireHere = createRequire(import.meta.url);

/** Reads the workbook at `path` into `collector`. */
export async function readSpreadsheet(
  kind: 'xlsx' | 'xls',
  path: string,
  size: number,
  collector: EntryCollector,
  limits: SpreadsheetLimits,
  log: FastifyBaseLogger,
): Promise<void> {
  const release = limits.readers.take();
  try {
    await checkAndRead(kind, path, size, collector, limits, log);
  } finally {
    release();
  }
}

async function checkAndRead(
  kind: 'xlsx' | 'xls',
  path: string,
  size: number,
  collector: EntryCollector,
  limits: SpreadsheetLimits,
  log: FastifyBaseLogger,
): Promise<void> {
  if (kind === 'xls') {
    if (size > limits.maxXlsBytes) throw new ProblemError(413, `inputFile: an xls file may have at most ${limits.maxXlsBytes} bytes.`);
    // SheetJS reads many formats; an xls import takes only what Excel writes as .xls (BIFF8 in a compound file).
    if (!(await startsWith(path, CFB_SIGNATURE))) throw new ProblemError(415, 'inputFile: not an xls workbook (no OLE2 compound file).');
  } else {
    await checkXlsxArchive(path, {
      maxInflatedBytes: limits.maxInflatedBytes,
      // The reader keeps the table whole, and short strings take about twice their XML in the heap: a quarter of it.
      maxSharedStringsBytes: limits.workerHeapMb * 1024 * 256,
      maxXmlTokenBytes: MAX_XML_TOKEN_BYTES,
      maxSharedStringBytes: MAX_SHARED_STRING_BYTES,
    });
  }
  const { layout } = collector;
  const job: WorkerJob = {
    kind,
    path,
    sheet: layout.sheet,
    column: layout.column,
    startingRow: layout.startingRow,
    endingRow: layout.endingRow,
    maxCellUnits: MAX_CELL_UNITS,
    modules: { exceljs: requireHere.resolve('exceljs'), yauzl: requireHere.resolve('yauzl'), xlsx: requireHere.resolve('@e965/xlsx') },
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
    const started = performance.now();
    // Why a reader failed, for the operator (never the file's content): the client is told less.
    const warn = (cause: string, error?: { code?: string; message?: string }) =>
      log.warn({ kind, size, elapsedMs: Math.round(performance.now() - started), cause, ...(error && { code: error.code, error: error.message?.slice(0, 200) }) }, 'a workbook reader failed');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        warn('timeout');
        settle(new ProblemError(415, `inputFile: the ${kind} workbook was not read within ${limits.timeoutMs / 1000} s.`));
      }, limits.timeoutMs);
      let settled = false;
      const settle = (error?: unknown): void => {
        if (settled) return;
        settled = true;
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
            log.info({ kind, size, detail: message.detail }, 'a workbook is not readable');
            throw new ProblemError(message.status, `inputFile: not a readable ${kind} workbook (${message.detail}).`);
          }
        } catch (error) {
          settle(error);
        }
      });
      worker.on('error', (error: Error & { code?: string }) => {
        warn('error', error);
        const detail = error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'it needs more memory than the server allows' : 'the reader failed';
        settle(new ProblemError(415, `inputFile: the ${kind} workbook could not be read (${detail}).`));
      });
      worker.on('exit', (code) => {
        if (!settled) warn(`exit ${code}`);
        settle(new ProblemError(415, `inputFile: the ${kind} workbook could not be read.`));
      });
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
