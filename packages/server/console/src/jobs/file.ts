/**
 * A file to import: its kind and the media type the server reads it as, by its extension first (browsers report .csv
 * as application/vnd.ms-excel on some systems), and the layout part of the import's `settings`.
 */

export type FileKind = 'text' | 'delimited' | 'spreadsheet' | 'other';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const BY_EXTENSION: Readonly<Record<string, readonly [FileKind, string]>> = {
  txt: ['text', 'text/plain'],
  csv: ['delimited', 'text/csv'],
  tsv: ['delimited', 'text/tab-separated-values'],
  tab: ['delimited', 'text/tab-separated-values'],
  xlsx: ['spreadsheet', XLSX],
  xls: ['spreadsheet', 'application/vnd.ms-excel'],
};

const BY_TYPE: Readonly<Record<string, FileKind>> = {
  'text/plain': 'text',
  'text/csv': 'delimited',
  'text/tab-separated-values': 'delimited',
  [XLSX]: 'spreadsheet',
  'application/vnd.ms-excel': 'spreadsheet',
};

function known(file: File): readonly [FileKind, string] | undefined {
  return BY_EXTENSION[/\.([^.]+)$/.exec(file.name)?.[1]?.toLowerCase() ?? ''];
}

export function fileKindOf(file: File): FileKind {
  return known(file)?.[0] ?? BY_TYPE[file.type.split(';')[0]!.trim().toLowerCase()] ?? 'other';
}

/** The file with the media type of its extension (the part's Content-Type tells the server how to read it). */
export function uploadable(file: File): File {
  const type = known(file)?.[1];
  return type === undefined || type === file.type ? file : new File([file], file.name, { type });
}

export interface LayoutChoices {
  /** 1-based, as people count; the server counts from 0. */
  readonly column: number | undefined;
  readonly sheet: number | undefined;
  readonly header: boolean;
  readonly delimiter: string;
}

export function fileSettings(kind: FileKind, choices: LayoutChoices): Record<string, unknown> {
  return {
    ...(kind !== 'text' && choices.column !== undefined && { column: choices.column - 1 }),
    ...(kind === 'spreadsheet' && choices.sheet !== undefined && { sheet: choices.sheet - 1 }),
    ...(kind === 'delimited' && choices.delimiter !== '' && { delimiter: choices.delimiter }),
    ...(choices.header && { startingRow: 1 }),
  };
}
