/**
 * xlsx export with exceljs's streaming writer: rows are committed as they are read, the zip is written as it goes.
 * Numbers and booleans are typed cells; strings are inline (no shared-string table to hold in memory).
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import type { Entry } from '../../engine/entry.js';
import { HEADER, cellsOf } from './rows.js';

/** The xlsx file of the pages, as a stream. */
export function xlsxStream(pages: AsyncIterable<Entry[]>): Readable {
  const output = new PassThrough({ highWaterMark: 256 * 1024 });
  void write(pages, output).catch((error: unknown) => output.destroy(error as Error));
  return output;
}

async function write(pages: AsyncIterable<Entry[]>, output: PassThrough): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: output, useStyles: false, useSharedStrings: false });
  // The zip writer's own failures end the download rather than the process.
  (workbook as unknown as { zip: NodeJS.EventEmitter }).zip.on('error', (error: Error) => output.destroy(error));
  const sheet = workbook.addWorksheet('entries');
  sheet.addRow([...HEADER]).commit();
  for await (const page of pages) {
    if (output.destroyed) return; // the client went away
    for (const entry of page) sheet.addRow(cellsOf(entry).map((cell) => cell ?? null)).commit();
    // exceljs's sheet stream hands its XML to the zip's compressor without waiting for it, so the compressor's input
    // would grow with the job: hold the next page back until it has room (it has none while the client does not
    // read, the whole chain being piped). `_stream.pipes` is exceljs 4.4.0's; the version is pinned.
    const compressors = (sheet as unknown as { _stream?: { pipes?: Writable[] } })._stream?.pipes ?? [];
    for (const compressor of compressors) {
      if (compressor.writableNeedDrain && !output.destroyed) await drained(compressor, output);
    }
    if (output.writableNeedDrain && !output.destroyed) await drained(output, output);
  }
  sheet.commit();
  await workbook.commit();
}

/** Resolves when `stream` has room again, or `output` has closed (the client went away). */
function drained(stream: Writable, output: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      output.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    output.on('close', done);
  });
}
