/**
 * xlsx export (ECMA-376 SpreadsheetML), written by the project: one worksheet streamed row by row as XML into a zip
 * entry (yazl compresses it as it comes), so memory stays the size of a page whatever the size of the job. Numbers
 * and booleans are typed cells; strings are inline (`inlineStr`: no shared-string table to hold). exceljs's streaming
 * writer did the same work with memory growing with the job (about 800 MB for a million entries).
 */
import { PassThrough, type Readable } from 'node:stream';
import yazl from 'yazl';
import type { Entry } from '../../engine/entry.js';
import { HEADER, cellsOf, type Cell } from './rows.js';

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELATIONSHIPS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const OFFICE_RELATIONSHIPS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

/** The package's fixed parts (ECMA-376 Part 2 §10: content types and relationships; Part 1 §18.2 workbook). */
const PARTS: ReadonlyArray<readonly [name: string, xml: string]> = [
  [
    '[Content_Types].xml',
    `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
      `<Default Extension="xml" ContentType="application/xml"/>` +
      `<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
      `<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>` +
      `<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>` +
      `</Types>`,
  ],
  [
    '_rels/.rels',
    `<Relationships xmlns="${RELATIONSHIPS}">` +
      `<Relationship Id="rId1" Type="${OFFICE_RELATIONSHIPS}/officeDocument" Target="xl/workbook.xml"/>` +
      `</Relationships>`,
  ],
  [
    'xl/workbook.xml',
    `<workbook xmlns="${MAIN}" xmlns:r="${OFFICE_RELATIONSHIPS}"><sheets>` +
      `<sheet name="entries" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  ],
  [
    'xl/_rels/workbook.xml.rels',
    `<Relationships xmlns="${RELATIONSHIPS}">` +
      `<Relationship Id="rId1" Type="${OFFICE_RELATIONSHIPS}/worksheet" Target="worksheets/sheet1.xml"/>` +
      `<Relationship Id="rId2" Type="${OFFICE_RELATIONSHIPS}/styles" Target="styles.xml"/>` +
      `</Relationships>`,
  ],
  [
    // The smallest style sheet spreadsheet programs accept: one font, the two required fills, one border, one format.
    'xl/styles.xml',
    `<styleSheet xmlns="${MAIN}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>` +
      `<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>` +
      `<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>` +
      `<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>` +
      `<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>` +
      `<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`,
  ],
];

/** Column letters of the header's columns (A, B, ...; the entry has fewer than 27 fields). */
const COLUMNS = HEADER.map((_, i) => String.fromCharCode(0x41 + i));

/** The xlsx file of the pages, as a stream. */
export function xlsxStream(pages: AsyncIterable<Entry[]>): Readable {
  const zip = new yazl.ZipFile();
  for (const [name, xml] of PARTS) zip.addBuffer(Buffer.from(XML_HEAD + xml), name);
  const sheet = new PassThrough({ highWaterMark: 256 * 1024 });
  zip.addReadStream(sheet, 'xl/worksheets/sheet1.xml');
  zip.end();
  const output = zip.outputStream as PassThrough;
  void writeSheet(pages, sheet, output).catch((error: unknown) => {
    // The answer fails (its reader sees it cut short); the sheet, which only the zip writer reads, just stops: an
    // error on it would have no listener.
    output.destroy(error as Error);
    sheet.destroy();
  });
  return output;
}

async function writeSheet(pages: AsyncIterable<Entry[]>, sheet: PassThrough, output: Readable): Promise<void> {
  sheet.write(`${XML_HEAD}<worksheet xmlns="${MAIN}"><sheetData>`);
  let row = 1;
  sheet.write(rowXml(row, HEADER));
  for await (const page of pages) {
    if (output.destroyed) return; // the client went away
    let text = '';
    for (const entry of page) text += rowXml(++row, cellsOf(entry));
    // Backpressure from the client through the compressor: wait while the sheet's buffer is full.
    if (!sheet.write(text) && !output.destroyed) await drained(sheet, output);
  }
  sheet.end('</sheetData></worksheet>');
}

/** One `<row>`: inline strings, numbers, booleans; an absent value leaves its cell out (ECMA-376 Part 1 §18.3.1). */
function rowXml(row: number, cells: readonly Cell[]): string {
  let xml = `<row r="${row}">`;
  for (let i = 0; i < cells.length; i++) {
    const value = cells[i];
    const ref = `${COLUMNS[i]}${row}`;
    if (value === undefined) continue;
    if (typeof value === 'number') xml += `<c r="${ref}"><v>${value}</v></c>`;
    else if (typeof value === 'boolean') xml += `<c r="${ref}" t="b"><v>${value ? 1 : 0}</v></c>`;
    else xml += `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${xmlText(value)}</t></is></c>`;
  }
  return `${xml}</row>`;
}

/**
 * Text for an XML element: markup characters escaped, and characters XML 1.0 cannot carry (controls, lone
 * surrogates) written as OOXML's `_xHHHH_` escapes, a literal `_xHHHH_` being escaped itself (ECMA-376 Part 1
 * §22.9.2.19 ST_Xstring).
 */
export function xmlText(text: string): string {
  return text.replace(/[&<>]|_x[0-9A-Fa-f]{4}_|[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, (match) => {
    if (match === '&') return '&amp;';
    if (match === '<') return '&lt;';
    if (match === '>') return '&gt;';
    if (match.length > 1) return `_x005F${match}`;
    return `_x${match.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`;
  });
}

/** Resolves when `stream` has room again, or `output` has closed (the client went away). */
function drained(stream: PassThrough, output: Readable): Promise<void> {
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
