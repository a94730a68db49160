// Hostile xlsx workbooks written to a file as a stream (yazl deflates each entry as it comes), so that a workbook that
// inflates to hundreds of MiB costs the test a few chunks of memory. ECMA-376 Part 1, 12.3: a workbook, its
// relationships, a worksheet, and optionally a shared string table.
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELATIONSHIPS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** Text made of `head`, `length` bytes of `fill` in chunks, then `tail`. */
function repeated(head: string, fill: string, length: number, tail: string): Readable {
  const chunk = Buffer.from(fill.repeat(Math.ceil((64 * 1024) / fill.length)));
  return Readable.from(
    (function* () {
      yield Buffer.from(head);
      for (let left = length; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
      yield Buffer.from(tail);
    })(),
  );
}

/** Writes a workbook of one sheet whose XML is `sheet`, with `sharedStrings` as its shared string table if given. */
async function writeWorkbook(path: string, sheet: Readable, sharedStrings?: Readable): Promise<void> {
  const zip = new yazl.ZipFile();
  const types =
    `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="xml" ContentType="application/xml"/>' +
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>';
  zip.addBuffer(Buffer.from(types), '[Content_Types].xml');
  zip.addBuffer(
    Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${MAIN}" xmlns:r="${RELATIONSHIPS}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`),
    'xl/workbook.xml',
  );
  zip.addBuffer(
    Buffer.from(
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        `<Relationship Id="rId1" Type="${RELATIONSHIPS}/worksheet" Target="worksheets/sheet1.xml"/>` +
        `<Relationship Id="rId2" Type="${RELATIONSHIPS}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ),
    'xl/_rels/workbook.xml.rels',
  );
  if (sharedStrings !== undefined) zip.addReadStream(sharedStrings, 'xl/sharedStrings.xml');
  zip.addReadStream(sheet, 'xl/worksheets/sheet1.xml');
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(path));
}

const SHEET_OPEN = `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}"><sheetData>`;
const SHEET_CLOSE = '</sheetData></worksheet>';

/** A workbook whose shared string table holds one string of `bytes` bytes, used by cell A1 (the attack of issue 16). */
export function writeHugeSharedStringWorkbook(path: string, bytes: number): Promise<void> {
  const sheet = Readable.from([Buffer.from(`${SHEET_OPEN}<row r="1"><c r="A1" t="s"><v>0</v></c></row>${SHEET_CLOSE}`)]);
  const strings = repeated(`<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${MAIN}" count="1" uniqueCount="1"><si><t>`, 'a', bytes, '</t></si></sst>');
  return writeWorkbook(path, sheet, strings);
}

/**
 * A workbook whose shared string table holds one string of `bytes` bytes in rich-text runs of `run` bytes each: no
 * XML token is long, the string is (ECMA-376 Part 1, 18.4.4 `r`).
 */
export function writeRichTextSharedStringWorkbook(path: string, bytes: number, run: number): Promise<void> {
  const sheet = Readable.from([Buffer.from(`${SHEET_OPEN}<row r="1"><c r="A1" t="s"><v>0</v></c></row>${SHEET_CLOSE}`)]);
  const head = `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${MAIN}" count="1" uniqueCount="1"><si>`;
  const element = `<r><t>${'a'.repeat(run)}</t></r>`;
  return writeWorkbook(path, sheet, repeated(head, element, Math.floor(bytes / run) * element.length, '</si></sst>'));
}

/** A workbook whose shared string table holds `count` strings of `bytes` bytes each, cell A1 using the last one. */
export function writeManySharedStringsWorkbook(path: string, count: number, bytes: number): Promise<void> {
  const sheet = Readable.from([Buffer.from(`${SHEET_OPEN}<row r="1"><c r="A1" t="s"><v>${count - 1}</v></c></row>${SHEET_CLOSE}`)]);
  const head = `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${MAIN}" count="${count}" uniqueCount="${count}">`;
  const item = `<si><t>${'a'.repeat(bytes)}</t></si>`;
  return writeWorkbook(path, sheet, repeated(head, item, count * item.length, '</sst>'));
}

/** A workbook whose cell A1 holds one inline string of `bytes` bytes cut by an empty comment every `run` bytes. */
export function writeCommentCutCellWorkbook(path: string, bytes: number, run: number): Promise<void> {
  const piece = `${'a'.repeat(run)}<!---->`;
  return writeWorkbook(path, repeated(`${SHEET_OPEN}<row r="1"><c r="A1" t="inlineStr"><is><t>`, piece, Math.floor(bytes / run) * piece.length, `</t></is></c></row>${SHEET_CLOSE}`));
}

/** A workbook whose cell A1 holds one inline string of `bytes` bytes (no shared string table). */
export function writeHugeInlineCellWorkbook(path: string, bytes: number): Promise<void> {
  return writeWorkbook(path, repeated(`${SHEET_OPEN}<row r="1"><c r="A1" t="inlineStr"><is><t>`, 'a', bytes, `</t></is></c></row>${SHEET_CLOSE}`));
}

/**
 * A workbook that takes its reader a while: `rows` rows of one short inline string each in column B, none in column A
 * (the column read), so that it makes no entry and fits any entry cap.
 */
export function writeSlowWorkbook(path: string, rows: number): Promise<void> {
  const sheet = Readable.from(
    (function* () {
      yield Buffer.from(SHEET_OPEN);
      for (let first = 1; first <= rows; first += 1000) {
        let batch = '';
        for (let r = first; r < first + 1000 && r <= rows; r++) batch += `<row r="${r}"><c r="B${r}" t="inlineStr"><is><t>x</t></is></c></row>`;
        yield Buffer.from(batch);
      }
      yield Buffer.from(SHEET_CLOSE);
    })(),
  );
  return writeWorkbook(path, sheet);
}
