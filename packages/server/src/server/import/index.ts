/**
 * File import (POST /email-validations as multipart/form-data): the `inputFile` part is written to a temporary
 * folder as it arrives, then read by its type (plain text, CSV, TSV, xlsx, xls) into the entries of a job, with the
 * job's settings from the `settings` part. Everything the file could make costly is capped: its size, a workbook's
 * inflated size, a row's length, the entries per job, and a workbook's reading time and memory (in a worker thread),
 * and the workbooks read at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import {
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_INFLATED_BYTES,
  DEFAULT_MAX_SPREADSHEET_READERS,
  DEFAULT_MAX_XLS_BYTES,
  DEFAULT_SPREADSHEET_HEAP_MB,
  DEFAULT_SPREADSHEET_TIMEOUT_MS,
} from '../defaults.js';
import { ProblemError, invalidField } from '../problems.js';
import type { Submission, SubmissionLimits } from '../submission.js';
import { EntryCollector } from './entries.js';
import { receiveUpload } from './multipart.js';
import { readImportSettings } from './settings.js';
import { ReaderSlots, readSpreadsheet } from './spreadsheet.js';
import { decodedText, readDelimited, readPlainText } from './text.js';

export interface ImportOptions {
  /** The largest file (default 64 MiB, as the JSON body). A larger one is 413. */
  readonly maxFileBytes?: number;
  /** The most an xlsx workbook may inflate to (default 256 MiB): a zip bomb is 413. */
  readonly maxInflatedBytes?: number;
  /** The largest xls file, which is read whole (default 32 MiB). */
  readonly maxXlsBytes?: number;
  /** The time a workbook may take to read (default 120 s). */
  readonly spreadsheetTimeoutMs?: number;
  /** The heap of the thread that reads a workbook, in MiB (default 512). */
  readonly spreadsheetHeapMb?: number;
  /** The workbooks read at once (default 2); one more is 503 with Retry-After. */
  readonly maxSpreadsheetReaders?: number;
  /** Where uploads are kept while they are read (default the system's temporary folder). */
  readonly tempDir?: string;
}

export type ResolvedImportOptions = Required<ImportOptions> & {
  /** The server's workbook readers at work. */
  readonly readers: ReaderSlots;
};

export function resolveImportOptions(options: ImportOptions = {}): ResolvedImportOptions {
  const maxSpreadsheetReaders = options.maxSpreadsheetReaders ?? DEFAULT_MAX_SPREADSHEET_READERS;
  return {
    maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    maxInflatedBytes: options.maxInflatedBytes ?? DEFAULT_MAX_INFLATED_BYTES,
    maxXlsBytes: options.maxXlsBytes ?? DEFAULT_MAX_XLS_BYTES,
    spreadsheetTimeoutMs: options.spreadsheetTimeoutMs ?? DEFAULT_SPREADSHEET_TIMEOUT_MS,
    spreadsheetHeapMb: options.spreadsheetHeapMb ?? DEFAULT_SPREADSHEET_HEAP_MB,
    maxSpreadsheetReaders,
    readers: new ReaderSlots(maxSpreadsheetReaders),
    tempDir: options.tempDir ?? tmpdir(),
  };
}

/** The media types of `inputFile` and how each is read. */
const FORMATS: Record<string, 'text' | 'csv' | 'tsv' | 'xls' | 'xlsx'> = {
  'text/plain': 'text',
  'text/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

/** Whether a request's Content-Type is multipart/form-data. */
export function isMultipart(contentType: string | undefined): contentType is string {
  return contentType !== undefined && /^\s*multipart\/form-data\s*(;|$)/i.test(contentType);
}

/** The submission a file import makes: its entries and the job's settings. */
export async function readFileImport(
  raw: Readable,
  contentType: string,
  limits: SubmissionLimits,
  options: ResolvedImportOptions,
  log: FastifyBaseLogger,
): Promise<Submission> {
  const dir = await mkdtemp(join(options.tempDir, 'mailverify-import-'));
  try {
    const upload = await receiveUpload(raw, contentType, join(dir, 'input'), options.maxFileBytes);
    const file = upload.file;
    if (file === undefined) throw invalidField('inputFile', 'required: a file part named inputFile');
    const settings = readImportSettings(upload.settings, limits);
    const format = FORMATS[file.mediaType];
    if (format === undefined) {
      throw new ProblemError(415, `inputFile: ${JSON.stringify(file.mediaType)} is not a type this server imports (${Object.keys(FORMATS).join(', ')}).`);
    }
    const collector = new EntryCollector(settings.layout, limits.maxEntriesPerJob);
    if (format === 'xls' || format === 'xlsx') {
      await readSpreadsheet(format, file.path, file.size, collector, {
        maxInflatedBytes: options.maxInflatedBytes,
        maxXlsBytes: options.maxXlsBytes,
        timeoutMs: options.spreadsheetTimeoutMs,
        workerHeapMb: options.spreadsheetHeapMb,
        readers: options.readers,
      }, log);
    } else {
      const text = decodedText(file.path, file.charset);
      if (format === 'text') await readPlainText(text, collector);
      else await readDelimited(text, format === 'csv' ? ',' : '\t', collector);
    }
    return { inputs: collector.finish(), ...settings.job };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
