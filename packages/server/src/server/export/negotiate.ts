/**
 * Which representation of a job's entries a request gets, by its `Accept` header (RFC 9110 section 12.5.1): the
 * JSON page, or an export as CSV, xlsx or xls. Each type gets the q-value of the most specific media range that
 * matches it (q=0: refused); the highest wins; among equal ones, a type the client named beats one a wildcard
 * matched, then the one named first wins, then JSON. Parameters other than q must match (`text/csv;charset=utf-8`
 * is served, `text/csv;charset=latin1` is not).
 */
import Negotiator from 'negotiator';
import { ProblemError } from '../problems.js';

export type EntriesFormat = 'json' | 'csv' | 'xlsx' | 'xls';

export const EXPORT_TYPES = {
  csv: 'text/csv',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  xls: 'application/vnd.ms-excel',
} as const;

/** What the server can give, in its own order of preference; the CSV is UTF-8. */
const AVAILABLE: ReadonlyArray<[string, EntriesFormat]> = [
  ['application/json', 'json'],
  [`${EXPORT_TYPES.csv};charset=utf-8`, 'csv'],
  [EXPORT_TYPES.xlsx, 'xlsx'],
  [EXPORT_TYPES.xls, 'xls'],
];

/** The format for an `Accept` header (absent: JSON); 406 when it allows none of them. */
export function entriesFormat(accept: string | undefined): EntriesFormat {
  if (accept === undefined || accept.trim() === '') return 'json';
  const chosen = new Negotiator({ headers: { accept } }).mediaType(AVAILABLE.map(([type]) => type));
  const format = AVAILABLE.find(([type]) => type === chosen)?.[1];
  if (format === undefined) {
    throw new ProblemError(
      406,
      `The entries are available as application/json, ${EXPORT_TYPES.csv}, ${EXPORT_TYPES.xlsx} and ${EXPORT_TYPES.xls}; Accept allows none of them.`,
    );
  }
  return format;
}
