/**
 * The `settings` part of a file import: the job's settings, read exactly as the JSON body's fields are (a bad one is
 * a 400 naming `settings.<field>`), and where the addresses are in the file (rows, column, sheet, delimiter, line
 * ending). Unknown fields are ignored, as in the JSON body (the official client also sends `contentType`).
 */
import { ProblemError, invalidField } from '../problems.js';
import { readJobSettings, type Submission, type SubmissionLimits } from '../submission.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';

/** How lines end: any of CRLF, LF and CR (`Auto`), or only the one named. */
export type LineEnding = 'Auto' | 'CrLf' | 'Cr' | 'Lf';

export interface FileLayout {
  /** The first and last rows read, zero-based and inclusive; rows count blank lines too. */
  readonly startingRow: number;
  readonly endingRow: number;
  /** The zero-based column of delimited files and spreadsheets. */
  readonly column: number;
  /** The zero-based worksheet of a spreadsheet. */
  readonly sheet: number;
  /** The delimiter of CSV and TSV; absent: `,` for CSV, a tab for TSV. */
  readonly delimiter?: string;
  readonly lineEnding: LineEnding;
}

export interface ImportSettings {
  readonly job: Omit<Submission, 'inputs'>;
  readonly layout: FileLayout;
}

/** The last column of a worksheet (XFD, 16,384 columns) bounds `column` for every format. */
export const MAX_COLUMN = 16_383;
/** Worksheets per workbook: Excel has no fixed limit; this one only keeps the number sane. */
export const MAX_SHEET = 65_535;

/** The spellings of each line ending: its name (any case), its characters, or them escaped (\r\n). */
const LINE_ENDINGS: ReadonlyArray<readonly [LineEnding, readonly string[]]> = [
  ['Auto', ['auto']],
  ['CrLf', ['crlf', '\\r\\n', '\r\n']],
  ['Cr', ['cr', '\\r', '\r']],
  ['Lf', ['lf', '\\n', '\n']],
];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The settings of a file import, from the text of its `settings` part (absent: every default). */
export function readImportSettings(text: string | undefined, limits: SubmissionLimits): ImportSettings {
  let settings: unknown = {};
  if (text !== undefined && text.trim() !== '') {
    if (nestsDeeperThan(text)) throw invalidField('settings', `must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
    try {
      settings = JSON.parse(text);
    } catch {
      throw invalidField('settings', 'must be a JSON object');
    }
  }
  if (!isObject(settings)) throw invalidField('settings', 'must be a JSON object');
  return { job: prefixed(() => readJobSettings(settings, limits)), layout: readLayout(settings) };
}

/** The JSON body's problems, named by their path under `settings`. */
function prefixed<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ProblemError && error.type === '/problems/invalid-field') {
      throw new ProblemError(error.status, `settings.${error.detail}`, error.type, error.headers);
    }
    throw error;
  }
}

function readLayout(settings: Record<string, unknown>): FileLayout {
  const startingRow = readIndex(settings, 'startingRow', Number.MAX_SAFE_INTEGER) ?? 0;
  const endingRow = readIndex(settings, 'endingRow', Number.MAX_SAFE_INTEGER) ?? Number.MAX_SAFE_INTEGER;
  if (endingRow < startingRow) throw invalidField('settings.endingRow', 'must not be before startingRow');
  const delimiter = readDelimiter(settings['delimiter']);
  return {
    startingRow,
    endingRow,
    column: readIndex(settings, 'column', MAX_COLUMN) ?? 0,
    sheet: readIndex(settings, 'sheet', MAX_SHEET) ?? 0,
    ...(delimiter !== undefined && { delimiter }),
    lineEnding: readLineEnding(settings['lineEnding']),
  };
}

/** A zero-based index: an integer from 0 to `max`; absent when null or missing. */
function readIndex(settings: Record<string, unknown>, field: string, max: number): number | undefined {
  const value = settings[field];
  if (value == null) return undefined;
  if (!Number.isInteger(value) || (value as number) < 0) throw invalidField(`settings.${field}`, 'must be a zero-based integer');
  if ((value as number) > max) throw invalidField(`settings.${field}`, `does not exist (at most ${max})`);
  return value as number;
}

/** One character; `\t` may be written as the two characters backslash and t. Not a quote or a line break. */
function readDelimiter(value: unknown): string | undefined {
  if (value == null) return undefined;
  const delimiter = value === '\\t' ? '\t' : value;
  if (typeof delimiter !== 'string' || [...delimiter].length !== 1) {
    throw invalidField('settings.delimiter', 'must be one character (\\t for a tab)');
  }
  if (delimiter === '"' || delimiter === '\r' || delimiter === '\n') {
    throw invalidField('settings.delimiter', 'must not be a quote or a line break');
  }
  return delimiter;
}

function readLineEnding(value: unknown): LineEnding {
  if (value == null) return 'Auto';
  const spelled = typeof value === 'string' ? value.toLowerCase() : undefined;
  const found = LINE_ENDINGS.find(([, spellings]) => spelled !== undefined && spellings.includes(spelled));
  if (found === undefined) throw invalidField('settings.lineEnding', 'must be CrLf (\\r\\n), Cr (\\r), Lf (\\n) or Auto');
  return found[0];
}
