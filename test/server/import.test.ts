// File import (POST /email-validations as multipart/form-data) through a real listening server: every file type,
// the rows/column/sheet/delimiter/line-ending settings, charsets, the 400/413/415 answers, hostile files (a zip bomb,
// a 100 MB line, a million empty rows, an unclosed quote) while the server goes on answering, and the official
// client's file upload. Jobs run offline (syntax checks only); uploads are real files; the server is the one under test
// (test/server/target.ts): embedded on a real SQLite file, or a cluster.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import * as XLSX from '@e965/xlsx';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { VerifaliaRestClient, WaitOptions } from 'verifalia';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRichTextSharedStringWorkbook } from '../lab/hostile-workbook.js';
import { serverData, startServerUnderTest, type ServerUnderTest } from './target.js';

const USER = 'root';
const PASSWORD = 'import test password';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const XLS_TYPE = 'application/vnd.ms-excel';

const data = serverData('import');
let dir: string;
let uploads: string;
let server: ServerUnderTest;
let origin: string;
/** A second server on the same data with small caps: a 1 MiB upload, 3 entries per job. */
let smallOrigin: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-import-test-'));
  uploads = join(dir, 'uploads');
  mkdirSync(uploads);
  server = await startServerUnderTest(data.fresh(), {
    rootUsername: USER,
    rootPassword: PASSWORD,
    verifier: { checks: 'syntax' },
    // Room for the 100 MB line, so that the row cap (not the upload cap) answers it.
    fileImport: { maxFileBytes: 128 * 1024 * 1024, tempDir: uploads },
  });
  origin = server.origin;
  const small = await server.withOptions({
    rootUsername: USER,
    rootPassword: PASSWORD,
    verifier: { checks: 'syntax' },
    maxEntriesPerJob: 3,
    fileImport: { maxFileBytes: 1024 * 1024, tempDir: uploads },
  });
  smallOrigin = small.origin;
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

interface Part {
  name: string;
  content: string | Uint8Array;
  type?: string;
  filename?: string;
}

/** A multipart/form-data body written by hand, so that every header of a part is the test's own. */
function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----mailverify-test-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    head += '\r\n';
    if (part.type !== undefined) head += `Content-Type: ${part.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(part.content), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function post(parts: Part[], query = '?waitTime=10000', at = origin): Promise<Answer> {
  const { body, contentType } = multipart(parts);
  const response = await fetch(`${at}/v2.7/email-validations${query}`, {
    method: 'POST',
    headers: { authorization: BASIC, 'content-type': contentType },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** Imports a file with optional settings. */
function upload(content: string | Uint8Array, type: string, settings?: unknown, at = origin): Promise<Answer> {
  const parts: Part[] = [{ name: 'inputFile', content, type, filename: 'list' }];
  if (settings !== undefined) parts.push({ name: 'settings', content: typeof settings === 'string' ? settings : JSON.stringify(settings) });
  return post(parts, '?waitTime=10000', at);
}

const inputsOf = (answer: Answer): string[] => {
  // The problem's detail in the failure message, if there is one.
  expect(answer.status, answer.body?.detail).toBe(200);
  return answer.body.entries.data.map((entry: { inputData: string }) => entry.inputData);
};

function expectProblem(answer: Answer, status: number, detail?: RegExp): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ status, type: expect.stringMatching(/^\/problems\//), title: expect.any(String) });
  if (detail !== undefined) expect(answer.body.detail).toMatch(detail);
  expect(JSON.stringify(answer.body)).not.toMatch(/at .*\.(ts|js):\d+|node_modules|\/tmp\//);
}

async function workbook(sheets: Record<string, unknown[][]>): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) {
    const sheet = book.addWorksheet(name);
    rows.forEach((row, at) => {
      sheet.getRow(at + 1).values = row as ExcelJS.CellValue[];
    });
  }
  return Buffer.from(await book.xlsx.writeBuffer());
}

/** A zip archive written entry by entry (APPNOTE 4.3): deflated data, sizes as declared (they may lie). */
function zipArchive(entries: { name: string; data: Buffer; declaredSize?: number }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const compressed = deflateRawSync(entry.data, { level: 1 });
    const name = Buffer.from(entry.name);
    const size = entry.declaredSize ?? entry.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc32(entry.data), 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc32(entry.data), 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    centrals.push(central, name);
    offset += local.length + name.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The parts of a minimal workbook around one worksheet's XML (ECMA-376 Part 1, 12.3). */
function workbookEntries(sheetXml: Buffer, declaredSize?: number) {
  return [
    {
      name: '[Content_Types].xml',
      data: Buffer.from(
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
          '<Default Extension="xml" ContentType="application/xml"/>' +
          '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
          '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
      ),
    },
    {
      name: 'xl/workbook.xml',
      data: Buffer.from(
        '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ' +
          'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>',
      ),
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: Buffer.from(
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
          '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
      ),
    },
    { name: 'xl/worksheets/sheet1.xml', data: sheetXml, ...(declaredSize !== undefined && { declaredSize }) },
  ];
}

const SHEET_OPEN = '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>';
const SHEET_CLOSE = '</sheetData></worksheet>';

/**
 * Sends the hostile upload, then, once it is on its way, a GET of the job list: the GET must be answered while the
 * upload is still being received or read. Returns the upload's answer.
 */
async function whileServing(hostile: () => Promise<Answer>, ordered = true): Promise<Answer> {
  const order: string[] = [];
  const pending = hostile().then((answer) => {
    order.push('hostile');
    return answer;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const list = await fetch(`${origin}/v2.7/email-validations?limit=1`, { headers: { authorization: BASIC } });
  expect(list.status).toBe(200);
  await list.json();
  order.push('get');
  const answer = await pending;
  if (ordered) expect(order).toEqual(['get', 'hostile']);
  else expect(order).toContain('get');
  return answer;
}

describe('text and delimited files', () => {
  it('CSV: a header skipped with startingRow 1, quotes per RFC 4180, blank lines and blank cells skipped, cells as written', async () => {
    const csv = 'email,name\r\n"a@quick.example",Ann\r\n\r\n   ,blank\r\n" b@quick.example ",Bob\r\n"c,d"@x.example,"two\nlines"\r\ne@x.example,Eve';
    const answer = await upload(csv, 'text/csv', { startingRow: 1, name: 'csv import', quality: 'high', deduplication: 'safe', priority: 9, retention: '1:00:00' });
    // A quoted part followed by more text (`"c,d"@x.example`) is kept as written: an address with a quoted local part.
    expect(inputsOf(answer)).toEqual(['a@quick.example', ' b@quick.example ', '"c,d"@x.example', 'e@x.example']);
    expect(answer.body.overview).toMatchObject({ name: 'csv import', quality: 'High', deduplication: 'Safe', priority: 9, retention: '01:00:00', noOfEntries: 4 });
  });

  it('CSV: column, endingRow (rows count blank lines and are records), delimiter and line ending', async () => {
    // Rows: 0 header, 1 blank, 2 a, 3 b (a quoted cell with a line break is one row), 4 c, 5 d.
    const csv = 'id;email\n\n1;a@x.example\n2;"b\n@x.example"\n3;c@x.example\n4;d@x.example\n';
    expect(inputsOf(await upload(csv, 'text/csv', { delimiter: ';', column: 1, startingRow: 2, endingRow: 4 }))).toEqual([
      'a@x.example',
      'b\n@x.example',
      'c@x.example',
    ]);
    // Lf only: the CR stays in the cell, as written.
    expect(inputsOf(await upload('a@x.example\r\nb@x.example\r\n', 'text/csv', { lineEnding: 'Lf' }))).toEqual(['a@x.example\r', 'b@x.example\r']);
    expect(inputsOf(await upload('a@x.example\rb@x.example\r', 'text/csv', { lineEnding: '\\r' }))).toEqual(['a@x.example', 'b@x.example']);
  });

  it('TSV: a tab by default; a CSV with the delimiter written as a tab or as \\t', async () => {
    expect(inputsOf(await upload('1\ta@x.example\n2\tb@x.example', 'text/tab-separated-values', { column: 1 }))).toEqual(['a@x.example', 'b@x.example']);
    expect(inputsOf(await upload('1\ta,b@x.example', 'text/csv', { column: 1, delimiter: '\\t' }))).toEqual(['a,b@x.example']);
    expect(inputsOf(await upload('1\ta@x.example', 'text/csv', { column: 1, delimiter: '\t' }))).toEqual(['a@x.example']);
  });

  it('plain text: one address per line, quotes and commas as written, any line ending by default', async () => {
    const text = '"john doe"@x.example\r\n\r\na,b@x.example\rc@x.example\n  \nlast@x.example';
    expect(inputsOf(await upload(text, 'text/plain'))).toEqual(['"john doe"@x.example', 'a,b@x.example', 'c@x.example', 'last@x.example']);
    // Rows count blank lines: rows 2..3 are `a,b` and `c`.
    expect(inputsOf(await upload(text, 'text/plain', { startingRow: 2, endingRow: 3 }))).toEqual(['a,b@x.example', 'c@x.example']);
    expect(inputsOf(await upload('a@x.example\r\nb@x.example\nc@x.example', 'text/plain', { lineEnding: 'CrLf' }))).toEqual([
      'a@x.example',
      'b@x.example\nc@x.example',
    ]);
  });

  it('charsets: the part\'s charset, a BOM over it, strict UTF-8, unknown charsets 415', async () => {
    const latin1 = iconv.encode('josé@x.example\n', 'windows-1252');
    expect(inputsOf(await upload(latin1, 'text/plain; charset=windows-1252'))).toEqual(['josé@x.example']);
    // The same bytes declared as UTF-8 (or not declared) are not UTF-8 text.
    expectProblem(await upload(latin1, 'text/plain'), 415, /not UTF-8/);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('müller@x.example\r\nb@x.example', 'utf-16le')]);
    expect(inputsOf(await upload(utf16, 'text/csv; charset=iso-8859-1'))).toEqual(['müller@x.example', 'b@x.example']);
    const bomUtf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('zoë@x.example')]);
    expect(inputsOf(await upload(bomUtf8, 'text/plain; charset=windows-1252'))).toEqual(['zoë@x.example']);
    expectProblem(await upload('a@x.example', 'text/plain; charset=x-no-such-charset'), 415, /charset "x-no-such-charset"/);
  });
});

describe('spreadsheets', () => {
  it('xlsx (written by exceljs): sheet and column zero-based, rows from the sheet\'s row numbers, rich text joined', async () => {
    const file = await workbook({
      first: [['email'], ['a@x.example'], [], ['   '], [{ richText: [{ text: 'rich' }, { text: '@x.example' }] }], [42]],
      second: [['id', 'email'], [1, 'b@x.example'], [2, ' c@x.example']],
    });
    expect(inputsOf(await upload(file, XLSX_TYPE, { startingRow: 1 }))).toEqual(['a@x.example', 'rich@x.example', '42']);
    expect(inputsOf(await upload(file, XLSX_TYPE, { sheet: 1, column: 1, endingRow: 2 }))).toEqual(['email', 'b@x.example', ' c@x.example']);
    expectProblem(await upload(file, XLSX_TYPE, { sheet: 2 }), 400, /^settings\.sheet: sheet 2 does not exist: the workbook has 2 sheets/);
    expectProblem(await upload(file, XLSX_TYPE, { sheet: 1, column: 5 }), 400, /^settings\.column: column 5 does not exist/);
  });

  it('xlsx whose workbook part comes last (as exceljs writes it): read whole every time, two at once', async () => {
    // A streaming pass over the archive lost that last part now and then under load; the parts are read by name.
    const file = await workbook({ one: [['a@x.example']], two: [['b@x.example'], ['c@x.example']] });
    for (let round = 0; round < 6; round++) {
      // Two at once: the server reads at most two workbooks at a time (--max-spreadsheet-readers).
      const [first, second] = await Promise.all([upload(file, XLSX_TYPE, { sheet: 0 }), upload(file, XLSX_TYPE, { sheet: 1 })]);
      expect(inputsOf(first!)).toEqual(['a@x.example']);
      expect(inputsOf(second!)).toEqual(['b@x.example', 'c@x.example']);
    }
  });

  it('xlsx whose sheet list names a part the archive lacks: 415', async () => {
    const sheet = Buffer.from(`${SHEET_OPEN}<row r="1"><c r="A1" t="inlineStr"><is><t>a@x.example</t></is></c></row>${SHEET_CLOSE}`);
    const entries = workbookEntries(sheet).map((entry) =>
      entry.name === 'xl/_rels/workbook.xml.rels' ? { ...entry, data: Buffer.from(entry.data.toString().replace('worksheets/sheet1.xml', 'worksheets/sheet9.xml')) } : entry,
    );
    expectProblem(await upload(zipArchive(entries), XLSX_TYPE), 415, /not a readable xlsx workbook \(sheet 0's part \("worksheets\/sheet9\.xml"\) is not in the workbook\)/);
    expect(inputsOf(await upload(zipArchive(workbookEntries(sheet)), XLSX_TYPE))).toEqual(['a@x.example']);
  });

  it('xls (BIFF8, written by SheetJS), read off the main thread', async () => {
    const book = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['email', 'n'], ['a@x.example', 1], [''], ['b@x.example', 2]]), 'one');
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['x', 'c@x.example']]), 'two');
    const xls = XLSX.write(book, { type: 'buffer', bookType: 'biff8' }) as Buffer;
    expect(inputsOf(await upload(xls, XLS_TYPE, { startingRow: 1 }))).toEqual(['a@x.example', 'b@x.example']);
    expect(inputsOf(await upload(xls, XLS_TYPE, { sheet: 1, column: 1 }))).toEqual(['c@x.example']);
    expectProblem(await upload(xls, XLS_TYPE, { sheet: 3 }), 400, /^settings\.sheet: .*2 sheets/);
  });

  it('a file that is not its declared spreadsheet type: 415', async () => {
    const xlsx = await workbook({ s: [['a@x.example']] });
    // An xlsx declared as xls, text declared as xlsx, and an xlsx cut short.
    expectProblem(await upload(xlsx, XLS_TYPE), 415, /not an xls workbook/);
    expectProblem(await upload('a@x.example', XLSX_TYPE), 415, /not a readable xlsx workbook/);
    expectProblem(await upload(xlsx.subarray(0, xlsx.length - 100), XLSX_TYPE), 415, /not a readable xlsx workbook/);
  });
});

describe('the request and its settings', () => {
  it('400 without an inputFile part, with a second one, or with settings that are not a JSON object', async () => {
    expectProblem(await post([{ name: 'settings', content: '{}' }]), 400, /^inputFile: required/);
    const file: Part = { name: 'inputFile', content: 'a@x.example', type: 'text/plain', filename: 'a.txt' };
    expectProblem(await post([file, file]), 400, /^inputFile: give one inputFile part/);
    for (const settings of ['[1]', '"x"', '{not json', 'null']) {
      expectProblem(await post([file, { name: 'settings', content: settings }]), 400, /^settings: must be a JSON object/);
    }
  });

  it('the job settings are checked as in the JSON body, named under settings', async () => {
    const cases: [unknown, RegExp][] = [
      [{ priority: 300 }, /^settings\.priority: must be an integer from 0 to 255/],
      [{ quality: 'Best' }, /^settings\.quality: must be one of/],
      [{ deduplication: 'maybe' }, /^settings\.deduplication:/],
      [{ retention: '0:01:00' }, /^settings\.retention:/],
      [{ name: 'n'.repeat(257) }, /^settings\.name:/],
      [{ callback: { url: 'http://127.0.0.1/hook' } }, /^settings\.callback\.url: must not name a local or private address/],
      [{ startingRow: -1 }, /^settings\.startingRow:/],
      [{ startingRow: 3, endingRow: 2 }, /^settings\.endingRow: must not be before startingRow/],
      [{ column: 1.5 }, /^settings\.column:/],
      [{ delimiter: ';;' }, /^settings\.delimiter: must be one character/],
      [{ delimiter: '"' }, /^settings\.delimiter: must not be a quote/],
      [{ lineEnding: 'Windows' }, /^settings\.lineEnding:/],
    ];
    for (const [settings, detail] of cases) expectProblem(await upload('a@x.example', 'text/csv', settings), 400, detail);
    // Fields the JSON body does not know are ignored (the official client sends contentType).
    expect(inputsOf(await upload('a@x.example', 'text/csv', { contentType: 'text/csv', whatever: 1 }))).toEqual(['a@x.example']);
  });

  it('415 for a type it does not import; 400 for a file without an entry, a column it lacks, a cell longer than an address', async () => {
    expectProblem(await upload('%PDF-1.7', 'application/pdf'), 415, /"application\/pdf" is not a type this server imports/);
    expectProblem(await upload('\r\n  \n\n', 'text/plain'), 400, /^inputFile: the file has no entry/);
    expectProblem(await upload('email\na@x.example', 'text/csv', { startingRow: 5 }), 400, /^inputFile: the file has no entry/);
    expectProblem(await upload('a,b\nc,d', 'text/csv', { column: 2 }), 400, /^settings\.column: column 2 does not exist: the rows have at most 2 columns/);
    expectProblem(await upload('a@x.example', 'text/plain', { column: 1 }), 400, /^settings\.column:/);
    expectProblem(await upload(`${'x'.repeat(1025)}@x.example`, 'text/plain'), 400, /^inputFile: row 0: the cell has more than 1024 characters/);
  });

  it('a line holding a NUL is 400 naming its row, as the same text in a JSON entry is 400 naming the entry', async () => {
    // Not the text the client meant (a NUL cuts it short in C-string tools): refused, never altered, in a file as in
    // JSON, and no job is made.
    const before = await fetch(`${origin}/v2.7/email-validations`, { headers: { authorization: BASIC } }).then((answer) => answer.json() as Promise<{ data: unknown[] }>);
    expectProblem(await upload('a@x.example\nb@x.example\u0000<script>\nc@x.example\n', 'text/plain'), 400, /^inputFile: row 1: the cell holds a NUL character \(U\+0000\) at 11$/);
    expectProblem(await upload('email\na@x.example\n"\u0000"@x.example\n', 'text/csv'), 400, /^inputFile: row 2: the cell holds a NUL character \(U\+0000\) at 1$/);
    const json = await fetch(`${origin}/v2.7/email-validations`, {
      method: 'POST',
      headers: { authorization: BASIC, 'content-type': 'application/json' },
      body: JSON.stringify({ entries: [{ inputData: 'a@x.example' }, { inputData: 'b@x.example\u0000<script>' }] }),
    });
    expect(json.status).toBe(400);
    expect(((await json.json()) as { detail: string }).detail).toBe('entries[1].inputData: holds a NUL character (U+0000) at 11');
    const after = await fetch(`${origin}/v2.7/email-validations`, { headers: { authorization: BASIC } }).then((answer) => answer.json() as Promise<{ data: unknown[] }>);
    expect(after.data.length).toBe(before.data.length);
  });

  it('entries per job and the upload size are capped (413 past the upload cap)', async () => {
    expect(inputsOf(await upload('a@x.example\nb@x.example\nc@x.example', 'text/plain', undefined, smallOrigin))).toHaveLength(3);
    expectProblem(await upload('a@x.example\nb@x.example\nc@x.example\nd@x.example', 'text/plain', undefined, smallOrigin), 400, /at most 3 entries per job/);
    const tooLarge = await upload(Buffer.alloc(2 * 1024 * 1024, 0x61), 'text/plain', undefined, smallOrigin);
    expectProblem(tooLarge, 413, /larger than 1048576 bytes/);
  });

  it('400 for a malformed multipart body', async () => {
    const response = await fetch(`${origin}/v2.7/email-validations`, {
      method: 'POST',
      headers: { authorization: BASIC, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="inputFile"\r\n\r\na@x.example',
    });
    expectProblem({ status: response.status, headers: response.headers, body: await response.json() }, 400, /malformed/);
  });

  it('the JSON body is unchanged, and a 202 for an import carries Location like it', async () => {
    const json = await fetch(`${origin}/v2.7/email-validations?waitTime=10000`, {
      method: 'POST',
      headers: { authorization: BASIC, 'content-type': 'application/json' },
      body: JSON.stringify({ entries: [{ inputData: 'a@x.example' }] }),
    });
    expect(json.status).toBe(200);
    const answer = await post([{ name: 'inputFile', content: 'a@x.example', type: 'text/plain', filename: 'a' }], '');
    expect([200, 202]).toContain(answer.status);
    if (answer.status === 202) expect(answer.headers.get('location')).toBe(`/v2.7/email-validations/${answer.body.overview.id}`);
  });
});

describe('hostile files: the server goes on answering', () => {
  it('a zip bomb xlsx (300 MiB of sheet in under 2 MiB) is 413; one whose sizes lie is 415', async () => {
    const inflated = Buffer.concat([Buffer.from(SHEET_OPEN), Buffer.alloc(300 * 1024 * 1024, 0x20), Buffer.from(SHEET_CLOSE)]);
    const bomb = zipArchive(workbookEntries(inflated));
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    // Refused from its central directory before anything is inflated: too quick for the GET to be answered first.
    expectProblem(await whileServing(() => upload(bomb, XLSX_TYPE), false), 413, /inflates to more than 268435456 bytes/);
    // The same data declared as 10 KiB: caught at the first byte past it, before any reader inflates it.
    const liar = zipArchive(workbookEntries(inflated, 10 * 1024));
    expectProblem(await upload(liar, XLSX_TYPE), 415, /not a readable xlsx workbook/);
  }, 120_000);

  it('a 100 MB single line of text is 400 after its first MiB', async () => {
    const line = Buffer.alloc(100 * 1000 * 1000, 0x61);
    expectProblem(await whileServing(() => upload(line, 'text/plain')), 400, /^inputFile: row 0 is longer than 1048576 characters/);
  }, 120_000);

  it('a spreadsheet with a million empty rows is read within the caps: 400, no entry', async () => {
    const rows: string[] = [];
    for (let r = 1; r <= 1_000_000; r++) rows.push(`<row r="${r}"/>`);
    const sheet = Buffer.from(SHEET_OPEN + rows.join('') + SHEET_CLOSE);
    const file = zipArchive(workbookEntries(sheet));
    expectProblem(await whileServing(() => upload(file, XLSX_TYPE)), 400, /^inputFile: the file has no entry/);
  }, 120_000);

  it('no part the reader parses holds a text, tag or shared string it would build as one huge string: 413 naming it', async () => {
    const cell = (xml: string) => zipArchive(workbookEntries(Buffer.from(`${SHEET_OPEN}<row r="1">${xml}</row>${SHEET_CLOSE}`)));
    const overlong = /^inputFile: xl\/worksheets\/sheet1\.xml holds a text or tag longer than 1048576 bytes, more than a cell of a workbook may\.$/;
    const piece = 'a'.repeat(256 * 1024);
    // Text cut by comments, PIs or CDATA sections is one string to the parser all the same.
    expectProblem(await upload(cell(`<c r="A1" t="inlineStr"><is><t>${`${piece}<!-- < -->`.repeat(8)}</t></is></c>`), XLSX_TYPE), 413, overlong);
    expectProblem(await upload(cell(`<c r="A1" t="inlineStr"><is><t>${`${piece}<?pi <?>`.repeat(8)}</t></is></c>`), XLSX_TYPE), 413, overlong);
    expectProblem(await upload(cell(`<c r="A1" t="inlineStr"><is><t>${`${piece}<![CDATA[<]]>`.repeat(8)}</t></is></c>`), XLSX_TYPE), 413, overlong);
    // An attribute value (it may hold `>`, never `<`).
    expectProblem(await upload(cell(`<c r="A1" x="${'>'.repeat(2 * 1024 * 1024)}"><v>1</v></c>`), XLSX_TYPE), 413, overlong);
    // A shared string of 9 MiB in rich-text runs of 256 KiB, each within the cap: joined, it is one string.
    const path = join(dir, 'rich.xlsx');
    await writeRichTextSharedStringWorkbook(path, 9 * 1024 * 1024, 256 * 1024);
    expectProblem(await upload(readFileSync(path), XLSX_TYPE), 413, /^inputFile: xl\/sharedStrings\.xml holds a shared string longer than 8388608 bytes \(text and formatting\)/);
  }, 120_000);

  it('within those caps, comments and long cells are read as before: a cell of 1,000,000 characters is 400 naming its row', async () => {
    const file = zipArchive(
      workbookEntries(
        Buffer.from(
          `${SHEET_OPEN}<!-- a < comment --><row r="1"><c r="A1" t="inlineStr"><is><t>a@x<!-- cut -->.example</t></is></c></row>` +
            `<row r="2"><c r="A2" t="inlineStr"><is><t>${'b'.repeat(1_000_000)}</t></is></c></row>${SHEET_CLOSE}`,
        ),
      ),
    );
    expect(inputsOf(await upload(file, XLSX_TYPE, { endingRow: 0 }))).toEqual(['a@x.example']);
    expectProblem(await upload(file, XLSX_TYPE), 400, /^inputFile: row 1: the cell has more than 1024 characters/);
  });

  it('a CSV with a quote left open is 415 (not readable as CSV); past a MiB of open quote, 400 naming the row', async () => {
    expectProblem(await upload('a@x.example\n"b@x.example\nc@x.example\n', 'text/csv'), 415, /row 1 opens a quoted cell that is not closed/);
    const long = `a@x.example\n"${'b'.repeat(2 * 1024 * 1024)}`;
    expectProblem(await upload(long, 'text/csv'), 400, /row 1 is longer than 1048576 characters \(is a quote left open\?\)/);
  });

  it('leaves no upload behind', () => {
    expect(readdirSync(uploads)).toEqual([]);
  });
});

describe('the official client (npm verifalia), unmodified: file import', () => {
  const wait = () => Object.assign(new WaitOptions(), { pollWaitTime: 1_000 });

  it('uploads a CSV (Buffer) with startingRow and column', async () => {
    const client = new VerifaliaRestClient({ username: USER, password: PASSWORD, baseUris: [origin] });
    const csv = Buffer.from('id,email\n1,alice@quick-mail.com\n2,"bob"@quick-mail.com\n3,not an address\n');
    const job = await client.emailValidations.submit({ file: csv, contentType: 'text/csv', startingRow: 1, column: 1, name: 'client csv' } as any, wait());
    expect(job?.overview.name).toBe('client csv');
    expect(job?.entries.map((entry) => [entry.inputData, entry.classification])).toEqual([
      ['alice@quick-mail.com', 'Deliverable'],
      ['"bob"@quick-mail.com', 'Deliverable'],
      ['not an address', 'Undeliverable'],
    ]);
  });

  it('uploads an xlsx workbook written by exceljs', async () => {
    const client = new VerifaliaRestClient({ username: USER, password: PASSWORD, baseUris: [origin] });
    const file = await workbook({ ignored: [['x@x.example']], list: [['email'], ['carol@x.example'], ['dave@x.example']] });
    const job = await client.emailValidations.submit({ file, contentType: XLSX_TYPE, sheet: 1, startingRow: 1, quality: 'High' } as any, wait());
    expect(job?.overview.quality).toBe('High');
    expect(job?.entries.map((entry) => entry.inputData)).toEqual(['carol@x.example', 'dave@x.example']);
  });
});
