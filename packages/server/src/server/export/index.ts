/**
 * Export of a job's entries (`GET /email-validations/{id}/entries` with an `Accept` of CSV, xlsx or xls): every
 * entry the status filter selects, one row each, under a header of the entry's field names. `cursor`, `cursor:prev`
 * and `limit` do not apply: an export is the whole filtered listing. CSV and xlsx are streamed as the store is read
 * page by page; xls, at most 65,536 rows, is built in memory and sent whole (a failure to read it is answered by the
 * error handler, as for any request).
 */
import type { FastifyReply } from 'fastify';
import type { Entry } from 'mailverify/internal';
import type { EntryFilter, JobRecord, JobStore } from '../../jobs/types.js';
import { ProblemError } from '../problems.js';
import { XLS_MAX_ROWS } from './biff8.js';
import { csvStream } from './csv.js';
import { EXPORT_TYPES } from './negotiate.js';
import { JobGoneError, entryPages } from '../../jobs/pages.js';
import { EXPORT_PAGE } from './rows.js';
import { xlsFile } from './xls.js';
import { xlsxStream } from './xlsx.js';

export { entriesFormat, type EntriesFormat } from './negotiate.js';

/** Rows of an xlsx sheet (ECMA-376 / Excel's limit: 1,048,576), the header row included. */
export const XLSX_MAX_ROWS = 1_048_576;

type ExportFormat = 'csv' | 'xlsx' | 'xls';

/** The data rows each format holds besides its header row; CSV has no limit. */
export const MAX_DATA_ROWS: Readonly<Record<ExportFormat, number>> = {
  csv: Infinity,
  xlsx: XLSX_MAX_ROWS - 1,
  xls: XLS_MAX_ROWS - 1,
};

/** Answers the request with the export of the completed job's entries that `filter` selects. */
export async function sendExport(
  reply: FastifyReply,
  store: JobStore,
  job: JobRecord,
  filter: EntryFilter,
  format: ExportFormat,
): Promise<FastifyReply> {
  if (format !== 'csv') {
    const rows = await store.countEntries(job.id, filter);
    if (rows > MAX_DATA_ROWS[format]) {
      throw new ProblemError(
        415,
        `The export has ${rows} entries; a ${format} sheet holds at most ${MAX_DATA_ROWS[format]} besides its header. Export it as ${EXPORT_TYPES.csv}, or filter it by status.`,
      );
    }
  }
  const pages = entryPages(store, job.id, EXPORT_PAGE, filter, { whole: true });
  reply
    .code(200)
    .header('Content-Disposition', `attachment; filename="${job.id}.${format}"`)
    .header('Content-Type', format === 'csv' ? `${EXPORT_TYPES.csv}; charset=utf-8; header=present` : EXPORT_TYPES[format]);
  if (format === 'csv') return reply.send(csvStream(pagesOrCutOff(pages, reply, job.id)));
  if (format === 'xlsx') return reply.send(xlsxStream(pagesOrCutOff(pages, reply, job.id)));
  return reply.send(await xlsFile(pages));
}

/**
 * The pages of a streamed export. Once the status line has gone out, a failure to read them can only cut the answer
 * off: it is logged here with the job's id (an error of the store, such as SQLITE_CORRUPT, at error level; a job
 * deleted meanwhile at info), and the connection is destroyed, so that the client sees a broken download (no final
 * chunk), never a complete-looking file. The export's streams then end quietly: an error through them would be
 * logged again by each of them without the job's id.
 */
async function* pagesOrCutOff(pages: AsyncIterable<Entry[]>, reply: FastifyReply, jobId: string): AsyncGenerator<Entry[]> {
  try {
    yield* pages;
  } catch (error) {
    if (error instanceof JobGoneError) reply.log.info({ jobId }, 'export cut off: the job was deleted or has expired while it was read');
    else reply.log.error({ err: error, jobId }, 'export cut off: the job store failed while the entries were read');
    reply.raw.destroy();
  }
}
