/** xls export: the pages gathered into a BIFF8 sheet (biff8.ts) in memory, then sent as one file. */
import type { Entry } from 'mailverify/internal';
import { Biff8Sheet } from './biff8.js';
import { HEADER, cellsOf } from './rows.js';

export async function xlsFile(pages: AsyncIterable<Entry[]>): Promise<Buffer> {
  const sheet = new Biff8Sheet('entries');
  sheet.addRow(HEADER);
  for await (const page of pages) {
    for (const entry of page) sheet.addRow(cellsOf(entry));
  }
  return sheet.toFile();
}
