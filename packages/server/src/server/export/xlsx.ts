/**
 * xlsx export (ECMA-376 SpreadsheetML), written by the project: one worksheet streamed a page of rows at a time as XML
 * into a zip entry that is deflated as it comes (zip.ts), so memory stays the size of a page whatever the size of the
 * job. Numbers and booleans are typed cells; strings are inline (`inlineStr`: no shared-string table to hold).
 * exceljs's streaming writer did the same work with memory growing with the job (about 800 MB for a million entries).
 */
import type { Readable } from 'node:stream';
import type { Entry } from 'mailverify/internal';
import { HEADER, cellsOf, type Cell } from './rows.js';
import { zipStream, type ZipPart } from './zip.js';

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

/**
 * The worksheet's deflate level: zlib's fastest. The XML repeats itself so much that level 1 already makes it about
 * a twelfth of its size (557 MB of XML to 48 MB for a million entries), at a fraction of the default level's time.
 */
const SHEET_DEFLATE_LEVEL = 1;

/** The xlsx file of the pages, as a stream. */
export function xlsxStream(pages: AsyncIterable<Entry[]>): Readable {
  return zipStream(FIXED_PARTS, 'xl/worksheets/sheet1.xml', sheetChunks(pages), SHEET_DEFLATE_LEVEL);
}

const FIXED_PARTS: readonly ZipPart[] = PARTS.map(([name, xml]) => ({ name, data: Buffer.from(XML_HEAD + xml) }));

/** The worksheet's XML, one chunk per page. */
async function* sheetChunks(pages: AsyncIterable<Entry[]>): AsyncGenerator<Buffer> {
  yield Buffer.from(`${XML_HEAD}<worksheet xmlns="${MAIN}"><sheetData>${rowXml(1, HEADER)}`);
  let row = 1;
  for await (const page of pages) {
    let text = '';
    for (const entry of page) text += rowXml(++row, cellsOf(entry));
    yield Buffer.from(text);
  }
  yield Buffer.from('</sheetData></worksheet>');
}

/**
 * One `<row>`: inline strings, numbers, booleans; an absent value leaves its cell out (ECMA-376 Part 1 §18.3.1).
 * A cell's reference (`r`) is optional, a cell without one being in the column after the previous cell's
 * (§18.3.1.4): it is written on the first cell of the row and on the first after an absent one only, which is what
 * readers that count columns (exceljs) need.
 */
function rowXml(row: number, cells: readonly Cell[]): string {
  let xml = `<row r="${row}">`;
  let placed = false;
  for (let i = 0; i < cells.length; i++) {
    const value = cells[i];
    if (value === undefined) {
      placed = false;
      continue;
    }
    const ref = placed ? '' : ` r="${COLUMNS[i]}${row}"`;
    placed = true;
    if (typeof value === 'number') xml += `<c${ref}><v>${value}</v></c>`;
    else if (typeof value === 'boolean') xml += `<c${ref} t="b"><v>${value ? 1 : 0}</v></c>`;
    else xml += `<c${ref} t="inlineStr"><is>${textElement(value)}</is></c>`;
  }
  return `${xml}</row>`;
}

/**
 * What a `<t>` element needs care for: markup and quote characters, characters XML 1.0 cannot carry, a literal
 * `_xHHHH_`, white space at an edge. Most cells have none of them and are written as they are.
 */
const NEEDS_CARE = /[&<>"'\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]|_x[0-9A-Fa-f]{4}_|^\s|\s$/;

/** A `<t>` element of the text; `xml:space="preserve"` (XML 1.0 §2.10) where white space at an edge must be kept. */
function textElement(text: string): string {
  if (!NEEDS_CARE.test(text)) return `<t>${text}</t>`;
  return `<t xml:space="preserve">${xmlText(text)}</t>`;
}

/**
 * Text for an XML element: markup characters escaped, and characters XML 1.0 cannot carry (controls, lone
 * surrogates) written as OOXML's `_xHHHH_` escapes, a literal `_xHHHH_` being escaped itself (ECMA-376 Part 1
 * §22.9.2.19 ST_Xstring). Quotes are escaped too: a cell without a reference must hold no `r="` that a reader
 * scanning for the attribute could take for one (SheetJS does).
 */
export function xmlText(text: string): string {
  return text.replace(/[&<>"']|_x[0-9A-Fa-f]{4}_|[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, (match) => {
    if (match.length > 1) return `_x005F${match}`;
    const escaped = MARKUP[match];
    if (escaped !== undefined) return escaped;
    return `_x${match.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`;
  });
}

const MARKUP: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
