// Export of a job's entries (GET /entries with Accept: CSV, xlsx, xls) through a real listening server: each file
// read back with an independent reader (csv-parse, exceljs, SheetJS) and compared cell by cell with the job's JSON
// entries; filters, Accept negotiation, the row maximum, and the official client's export. Jobs run offline
// (syntax checks), except the one that must stay in progress, which runs against the mail lab. The servers are the
// ones under test (test/server/target.ts): embedded on SQLite files, or clusters.
import type { Readable } from 'node:stream';
import * as XLSX from '@e965/xlsx';
import { parse as parseCsv } from 'csv-parse/sync';
import { stringify as stringifyCsv } from 'csv-stringify/sync';
import ExcelJS from 'exceljs';
import {
  MimeContentType_ExcelXls,
  MimeContentType_ExcelXlsx,
  MimeContentType_TextCsv,
  VerifaliaRestClient,
  WaitOptions,
} from 'verifalia';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTRY_FIELDS, type Entry } from '../../packages/mailverify/src/engine/entry.js';
import { XLS_MAX_ROWS } from '../../packages/server/src/server/export/biff8.js';
import { MAX_DATA_ROWS, XLSX_MAX_ROWS } from '../../packages/server/src/server/export/index.js';
import { cellsOf } from '../../packages/server/src/server/export/rows.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { libreOfficeForTests, openCsvInLibreOffice, openInLibreOffice } from '../lab/libreoffice.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { serverData, startServerUnderTest, type ServerUnderTest } from './target.js';

const USER = 'root';
const PASSWORD = 'correct horse battery staple';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const XLS_TYPE = 'application/vnd.ms-excel';

const data = serverData('export');
let server: ServerUnderTest;
let origin: string;
let lab: MailLab;
let labServer: ServerUnderTest;
let labOrigin: string;

beforeAll(async () => {
  server = await startServerUnderTest(data.fresh(), { rootUsername: USER, rootPassword: PASSWORD, verifier: { checks: 'syntax' } });
  origin = server.origin;
  lab = await startMailLab({
    engine: 'raw',
    servers: { slow: { mailboxes: ['alice'], delayMs: { rcpt: 700 } } },
    domains: { 'slow-srv.com': ['slow'] },
  });
  labServer = await startServerUnderTest(data.fresh(), { rootUsername: USER, rootPassword: PASSWORD, verifier: labVerifierOptions(lab) });
  labOrigin = labServer.origin;
});

afterAll(async () => {
  await server?.close();
  await labServer?.close();
  await lab?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  json: any;
}

async function call(method: string, path: string, options: { body?: unknown; accept?: string; at?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { authorization: BASIC };
  if (options.accept !== undefined) headers['accept'] = options.accept;
  const init: RequestInit = { method, headers };
  if (options.body !== undefined) {
    init.body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(`${options.at ?? origin}${path}`, init);
  const bytes = Buffer.from(await response.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, bytes, text, json };
}

function expectProblem(answer: Answer, status: number, detail?: RegExp): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.json).toMatchObject({ status, type: expect.stringMatching(/^\/problems\//) });
  if (detail !== undefined) expect(answer.json.detail).toMatch(detail);
}

/** A completed offline job of these entries; its id. */
async function completedJob(entries: Array<{ inputData: string; custom?: string }>, deduplication = 'Off'): Promise<string> {
  const answer = await call('POST', '/v2.7/email-validations?waitTime=30000', { body: { entries, deduplication } });
  if (answer.status !== 200) throw new Error(`job not completed: ${answer.status} ${answer.text.slice(0, 200)}`);
  return answer.json.overview.id;
}

/** Every entry of the job as the JSON listing gives them (following the cursors). */
async function jsonEntries(id: string, query = ''): Promise<Entry[]> {
  const all: Entry[] = [];
  let cursor: string | undefined;
  for (;;) {
    const params = new URLSearchParams(query);
    params.set('limit', '1000');
    if (cursor !== undefined) params.set('cursor', cursor);
    const page = await call('GET', `/v2.7/email-validations/${id}/entries?${params}`);
    expect(page.status).toBe(200);
    all.push(...page.json.data);
    if (!page.json.meta.isTruncated) return all;
    cursor = page.json.meta.cursor;
  }
}

/** The cells an entry should have in a spreadsheet: typed values, suggestions joined, absent fields empty. */
function expectedCells(entry: Entry): Array<string | number | boolean | null> {
  return ENTRY_FIELDS.map((field) => {
    const value = entry[field];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join('; ') : value;
  });
}

/**
 * The same as CSV text: text that starts with =, +, -, @, a tab or a CR (a formula to a spreadsheet) after a single
 * quote (OWASP, CSV Injection); numbers and booleans as they are.
 */
function expectedCsvRow(entry: Entry): string[] {
  return expectedCells(entry).map((cell) => (cell === null ? '' : typeof cell === 'string' && /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : String(cell)));
}

async function readXlsx(bytes: Buffer<ArrayBufferLike>): Promise<Array<Array<string | number | boolean | null>>> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(bytes as unknown as ExcelJS.Buffer);
  expect(workbook.worksheets).toHaveLength(1);
  const rows: Array<Array<string | number | boolean | null>> = [];
  workbook.worksheets[0]!.eachRow({ includeEmpty: true }, (row) => {
    const cells: Array<string | number | boolean | null> = [];
    for (let column = 1; column <= ENTRY_FIELDS.length; column++) {
      const value = row.getCell(column).value;
      cells.push(value === undefined ? null : (value as string | number | boolean | null));
    }
    rows.push(cells);
  });
  return rows;
}

function readXls(bytes: Buffer): { rows: Array<Array<string | number | boolean | null>>; types: string[][] } {
  const workbook = XLSX.read(bytes, { type: 'buffer' });
  expect(workbook.SheetNames).toEqual(['entries']);
  const sheet = workbook.Sheets['entries']!;
  const range = XLSX.utils.decode_range(sheet['!ref']!);
  const rows: Array<Array<string | number | boolean | null>> = [];
  const types: string[][] = [];
  for (let r = range.s.r; r <= range.e.r; r++) {
    const cells: Array<string | number | boolean | null> = [];
    const kinds: string[] = [];
    for (let c = 0; c < ENTRY_FIELDS.length; c++) {
      const cell = sheet[XLSX.utils.encode_cell({ r, c })];
      cells.push(cell === undefined ? null : (cell.v as string | number | boolean));
      kinds.push(cell === undefined ? '' : cell.t);
    }
    rows.push(cells);
    types.push(kinds);
  }
  return { rows, types };
}

/** A job whose entries use every column: flags, syntax failures, duplicates, suggestions, quoting, Unicode. */
const VARIED = [
  { inputData: 'alice@example.com', custom: 'plain' },
  { inputData: 'john.smith@gmial.com', custom: 'comma, and "quotes"' },
  { inputData: 'admin@example.org', custom: 'line\nbreak' },
  { inputData: 'someone@gmail.com' },
  { inputData: 'nobody@mailinator.com', custom: '  edge spaces  ' },
  { inputData: 'no-at-sign.example.com' },
  { inputData: 'double..dot@example.com' },
  { inputData: 'alice@example.com', custom: 'again' },
  { inputData: 'jörg@bücher.de', custom: 'ünïcødé ✓ 日本' },
  { inputData: 'user@hotmial.com' },
  { inputData: '=HYPERLINK("x")@example.com' },
];

describe('export formats', () => {
  let id: string;
  let entries: Entry[];

  beforeAll(async () => {
    id = await completedJob(VARIED, 'Safe');
    entries = await jsonEntries(id);
    expect(entries).toHaveLength(VARIED.length);
  });

  it('the job uses every kind of cell the formats must carry', () => {
    expect(entries.some((e) => (e.suggestions?.length ?? 0) > 0)).toBe(true);
    expect(entries.some((e) => e.syntaxFailureIndex !== undefined)).toBe(true);
    expect(entries.some((e) => e.duplicateOf !== undefined)).toBe(true);
    expect(entries.some((e) => e.isRoleAccount === true)).toBe(true);
    expect(entries.some((e) => e.hasInternationalDomainName === true)).toBe(true);
    expect(entries.some((e) => e.emailAddress === undefined)).toBe(true); // absent fields
  });

  it('CSV: RFC 4180, UTF-8 without BOM, a header of the field names, every entry as the JSON listing has it', async () => {
    const answer = await call('GET', `/v2.7/email-validations/${id}/entries`, { accept: 'text/csv' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/csv; charset=utf-8/);
    expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="${id}.csv"`);
    expect([...answer.bytes.subarray(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf]);
    expect(answer.text.startsWith(`${ENTRY_FIELDS.join(',')}\r\n`)).toBe(true);
    // Quoting: a cell with a comma, a quote or a line break is quoted, quotes doubled.
    expect(answer.text).toContain('"comma, and ""quotes"""');
    expect(answer.text).toContain('"line\nbreak"');
    expect(answer.text).toContain('"  edge spaces  "');
    const records = parseCsv(answer.text, { record_delimiter: '\r\n' }) as string[][];
    expect(records[0]).toEqual([...ENTRY_FIELDS]);
    expect(records.slice(1)).toEqual(entries.map(expectedCsvRow));
    // Typed values in their text form.
    const column = (field: string) => ENTRY_FIELDS.indexOf(field as (typeof ENTRY_FIELDS)[number]);
    const role = records.slice(1).find((r) => r[column('inputData')] === 'admin@example.org')!;
    expect(role[column('isRoleAccount')]).toBe('true');
    expect(role[column('isDisposableEmailAddress')]).toBe('false');
    expect(role[column('index')]).toBe('2');
    const suggested = entries.find((e) => (e.suggestions?.length ?? 0) > 0)!;
    expect(records[suggested.index + 1]![column('suggestions')]).toBe(suggested.suggestions!.join('; '));
    // Several suggestions are joined with '; ' (a job seldom has more than one: the row builder directly).
    const several = cellsOf({ ...suggested, suggestions: ['a@gmail.com', 'a@hotmail.com'] });
    expect(several[column('suggestions')]).toBe('a@gmail.com; a@hotmail.com');
    expect(records[6]![column('emailAddress')]).toBe(''); // no address recognised: empty
  });

  it('xlsx: typed cells (numbers, booleans, text), empty where a field is absent', async () => {
    const answer = await call('GET', `/v2.6/email-validations/${id}/entries`, { accept: XLSX_TYPE });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe(XLSX_TYPE);
    expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="${id}.xlsx"`);
    const rows = await readXlsx(answer.bytes);
    expect(rows[0]).toEqual([...ENTRY_FIELDS]);
    expect(rows.slice(1)).toEqual(entries.map(expectedCells));
    expect(typeof rows[3]![0]).toBe('number');
    expect(rows.slice(1).flat().some((cell) => typeof cell === 'boolean')).toBe(true);
  });

  it('xlsx: SheetJS reads every cell with its value and type, absent fields left empty', async () => {
    const answer = await call('GET', `/v2.7/email-validations/${id}/entries`, { accept: XLSX_TYPE });
    const workbook = XLSX.read(answer.bytes, { type: 'buffer' });
    expect(workbook.SheetNames).toEqual(['entries']);
    const sheet = workbook.Sheets['entries']!;
    expect(sheet['!ref']).toBe(`A1:${String.fromCharCode(0x40 + ENTRY_FIELDS.length)}${entries.length + 1}`);
    const expected = [[...ENTRY_FIELDS], ...entries.map(expectedCells)];
    const types = (row: ReadonlyArray<unknown>) => row.map((cell) => (cell === null ? '' : typeof cell === 'number' ? 'n' : typeof cell === 'boolean' ? 'b' : 's'));
    const read = expected.map((row, r) => row.map((_, c) => sheet[XLSX.utils.encode_cell({ r, c })] as XLSX.CellObject | undefined));
    expect(read.map((row) => row.map((cell) => (cell === undefined ? null : cell.v)))).toEqual(expected);
    expect(read.map((row) => row.map((cell) => cell?.t ?? ''))).toEqual(expected.map(types));
  });

  // Lone surrogates never reach a job: a submission holding one is refused (test/server/hostile.test.ts).
  it('xlsx: text that XML cannot carry as it is (markup, controls, edge spaces) comes back as written, in two readers', async () => {
    // A cell written without its reference must not hold an `r="..."` that SheetJS would take for one.
    const tricky = ['<a&b>@example.org', 'ctl\u0001\u001f@example.org', '  spaced@example.org ', '_x0041_@example.org', `r="Z9" r='B2'@example.org`, 'ok@example.org'];
    const jobId = await completedJob(tricky.map((inputData, i) => ({ inputData, custom: `${tricky[i]!.slice(0, 40)}` })));
    const answer = await call('GET', `/v2.7/email-validations/${jobId}/entries`, { accept: XLSX_TYPE });
    expect(answer.status).toBe(200);
    const json = await jsonEntries(jobId);
    // exceljs reads markup and edge spaces back, but leaves OOXML's _xHHHH_ escapes undecoded; SheetJS, like Excel,
    // decodes them.
    const byExcelJs = await readXlsx(answer.bytes);
    const plain = (text: string | undefined) => !/[\u0000-\u001f\ud800-\udfff]|_x[0-9a-f]{4}_/i.test(text ?? '');
    const columns = (rows: unknown[][], column: number) => rows.slice(1).map((row) => row[column]);
    expect(columns(byExcelJs, 1).filter((_, i) => plain(json[i]!.inputData))).toEqual(json.map((e) => e.inputData).filter(plain));
    expect(columns(byExcelJs, 15).filter((_, i) => plain(json[i]!.custom))).toEqual(json.map((e) => e.custom).filter(plain));
    const sheetJs = XLSX.read(answer.bytes, { type: 'buffer' });
    const rows = XLSX.utils.sheet_to_json<unknown[]>(sheetJs.Sheets[sheetJs.SheetNames[0]!]!, { header: 1, defval: null });
    expect(columns(rows, 1)).toEqual(json.map((e) => e.inputData));
    expect(columns(rows, 15)).toEqual(json.map((e) => e.custom));
    expect(columns(rows, 0)).toEqual(json.map((e) => e.index));
  });

  it('xls: a BIFF8 workbook read back by SheetJS, with typed cells', async () => {
    const answer = await call('GET', `/v2.7/email-validations/${id}/entries`, { accept: XLS_TYPE });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe(XLS_TYPE);
    expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="${id}.xls"`);
    expect(answer.bytes.subarray(0, 8).toString('hex')).toBe('d0cf11e0a1b11ae1'); // a compound file
    const { rows, types } = readXls(answer.bytes);
    expect(rows[0]).toEqual([...ENTRY_FIELDS]);
    expect(rows.slice(1)).toEqual(entries.map(expectedCells));
    const expectedTypes = entries.map((entry) =>
      expectedCells(entry).map((cell) => (cell === null ? '' : typeof cell === 'number' ? 'n' : typeof cell === 'boolean' ? 'b' : 's')),
    );
    expect(types.slice(1)).toEqual(expectedTypes);
  });

  it('xls: long and non-Latin text across record boundaries, large and fractional numbers', async () => {
    // A string longer than one BIFF record (8,224 bytes) goes on in CONTINUE records; the shared-string table of
    // many distinct strings spans several.
    const { Biff8Sheet } = await import('../../packages/server/src/server/export/biff8.js');
    const sheet = new Biff8Sheet('entries');
    const long = 'x'.repeat(20_000);
    const wide = '日本語'.repeat(3_000);
    sheet.addRow(['text', 'number', 'flag']);
    sheet.addRow([long, 2 ** 29, true]);
    sheet.addRow([wide, -1.5, false]);
    for (let i = 0; i < 3000; i++) sheet.addRow([`distinct string ${i} ✓`, i, undefined]);
    sheet.addRow(['é'.repeat(40_000), 12_345_678_901, undefined]);
    const { rows, types } = readXlsBare(sheet.toFile());
    expect(rows[1]).toEqual([long, 2 ** 29, true]);
    expect(rows[2]).toEqual([wide, -1.5, false]);
    expect(rows[3002]).toEqual(['distinct string 2999 ✓', 2999, null]);
    expect(types[3002]).toEqual(['s', 'n', '']);
    expect(rows[3003]).toEqual(['é'.repeat(32_767), 12_345_678_901, null]); // a cell holds at most 32,767 characters
    expect(() => {
      const full = new Biff8Sheet('full');
      for (let i = 0; i <= XLS_MAX_ROWS; i++) full.addRow([i]);
    }).toThrow(RangeError);
  });
});

describe('CSV: text a spreadsheet would take for a formula', () => {
  // Every character that starts a formula, at the start of user text: the input, the custom value, and addresses
  // that are valid and start like a formula (so that the address and its local part carry it too).
  const FORMULAS = [
    { inputData: '=1+1', custom: '=HYPERLINK("http://x","y")' },
    { inputData: '=HYPERLINK("http://x","y")', custom: '+1+1' },
    { inputData: '-john@example.com', custom: '-1' },
    { inputData: '+1@example.com', custom: '@SUM(1+1)' },
    { inputData: '=1+1@example.com', custom: '\t=1+1' },
    { inputData: '@example.com', custom: '\r=1+1' },
    { inputData: '\t=1+1@example.com', custom: 'a=b, -c, +d' },
    { inputData: 'john@example.com', custom: "'=already quoted" },
  ];
  let id: string;
  let entries: Entry[];
  let csv: string;
  const column = (field: (typeof ENTRY_FIELDS)[number]) => ENTRY_FIELDS.indexOf(field);

  beforeAll(async () => {
    id = await completedJob(FORMULAS);
    entries = await jsonEntries(id);
    const answer = await call('GET', `/v2.7/email-validations/${id}/entries`, { accept: 'text/csv' });
    expect(answer.status).toBe(200);
    csv = answer.text;
  });

  it('CSV: a single quote before each text cell that starts with =, +, -, @, a tab or a CR; the JSON listing unchanged', () => {
    expect(entries.map((e) => [e.inputData, e.custom])).toEqual(FORMULAS.map((f) => [f.inputData, f.custom]));
    const records = (parseCsv(csv, { record_delimiter: '\r\n' }) as string[][]).slice(1);
    expect(records).toEqual(entries.map(expectedCsvRow));
    expect(records.map((r) => r[column('inputData')])).toEqual([
      "'=1+1",
      `'=HYPERLINK("http://x","y")`,
      "'-john@example.com",
      "'+1@example.com",
      "'=1+1@example.com",
      "'@example.com",
      "'\t=1+1@example.com",
      'john@example.com',
    ]);
    expect(records.map((r) => r[column('custom')])).toEqual([
      `'=HYPERLINK("http://x","y")`,
      "'+1+1",
      "'-1",
      "'@SUM(1+1)",
      "'\t=1+1",
      "'\r=1+1",
      'a=b, -c, +d',
      "'=already quoted",
    ]);
    // An address that starts with - parses: its verdict and its fields are the address's; only the CSV cells of
    // its text get the quote.
    const dash = entries[2]!;
    expect(dash).toMatchObject({ status: 'Success', emailAddress: '-john@example.com', emailAddressLocalPart: '-john' });
    expect(records[2]![column('emailAddress')]).toBe("'-john@example.com");
    expect(records[2]![column('emailAddressLocalPart')]).toBe("'-john");
    expect(records[2]![column('emailAddressDomainPart')]).toBe('example.com');
    // Typed fields are not text: the index and the failure index are numbers as they are, the flags words.
    const notAnAddress = entries.findIndex((e) => e.syntaxFailureIndex !== undefined);
    expect(records[notAnAddress]![column('syntaxFailureIndex')]).toBe(String(entries[notAnAddress]!.syntaxFailureIndex));
    expect(records.map((r) => r[column('index')])).toEqual(entries.map((e) => String(e.index)));
    expect(records[2]![column('isRoleAccount')]).toBe('false');
  });

  it('xlsx and xls: the same text in typed string cells, as it is, never a formula', async () => {
    for (const accept of [XLSX_TYPE, XLS_TYPE]) {
      const answer = await call('GET', `/v2.7/email-validations/${id}/entries`, { accept });
      const workbook = XLSX.read(answer.bytes, { type: 'buffer', cellFormula: true });
      const sheet = workbook.Sheets[workbook.SheetNames[0]!]!;
      for (const [row, entry] of entries.entries()) {
        for (const field of ['inputData', 'custom', 'emailAddress'] as const) {
          const cell = sheet[XLSX.utils.encode_cell({ r: row + 1, c: column(field) })] as XLSX.CellObject | undefined;
          if (entry[field] === undefined) continue;
          expect([accept, field, cell?.t, cell?.v, cell?.f]).toEqual([accept, field, 's', entry[field], undefined]);
        }
      }
    }
  });

  const soffice = libreOfficeForTests('the CSV export');
  if (soffice !== null) {
    it('LibreOffice, evaluating formulas, opens every cell of the export as text: no formula, the quote shown', async () => {
      const cells = await openCsvInLibreOffice(soffice, csv);
      expect(cells.flat().filter((cell) => cell.formula !== undefined)).toEqual([]);
      const texts = (field: (typeof ENTRY_FIELDS)[number]) => cells.slice(1).map((row) => row[column(field)]!.value);
      const records = (parseCsv(csv, { record_delimiter: '\r\n' }) as string[][]).slice(1);
      // LibreOffice keeps a line break in a cell as LF: a lone CR comes back as one.
      const asRead = (text: string) => (text === '' ? null : text.replace(/\r(?!\n)/g, '\n'));
      for (const field of ['inputData', 'custom', 'emailAddress', 'emailAddressLocalPart'] as const) {
        expect(texts(field)).toEqual(records.map((r) => asRead(r[column(field)]!)));
      }
      // The same cells without the quotes: LibreOffice makes formulas of them, so the setup above would have seen them.
      const unescaped = stringifyCsv([[...ENTRY_FIELDS], ...entries.map((e) => expectedCells(e).map((cell) => (cell === null ? '' : String(cell))))]);
      const opened = await openCsvInLibreOffice(soffice, unescaped);
      const formulas = opened.flat().flatMap((cell) => (cell.formula === undefined ? [] : [cell.formula]));
      expect(formulas).toEqual(expect.arrayContaining(['1+1', 'HYPERLINK("http://x","y")']));
    });

    it('LibreOffice opens the xlsx and xls exports with the text as it is, in text cells, no formula', async () => {
      for (const [format, accept] of [['xlsx', XLSX_TYPE], ['xls', XLS_TYPE]] as const) {
        const answer = await call('GET', `/v2.7/email-validations/${id}/entries`, { accept });
        const cells = await openInLibreOffice(soffice, format, answer.bytes);
        // (LibreOffice saves a boolean cell as the formula TRUE() or FALSE(): the text columns are the ones to look at.)
        for (const field of ['inputData', 'custom', 'emailAddress', 'emailAddressLocalPart'] as const) {
          const read = cells.slice(1).map((row) => row[column(field)]!);
          const expected = entries.map((e) => ({ value: e[field]?.replace(/\r(?!\n)/g, '\n') ?? null, formula: undefined }));
          expect([format, field, read]).toEqual([format, field, expected]);
        }
      }
    });
  }
});

function readXlsBare(bytes: Buffer): { rows: unknown[][]; types: string[][] } {
  const workbook = XLSX.read(bytes, { type: 'buffer' });
  const sheet = workbook.Sheets[workbook.SheetNames[0]!]!;
  const range = XLSX.utils.decode_range(sheet['!ref']!);
  const rows: unknown[][] = [];
  const types: string[][] = [];
  for (let r = 0; r <= range.e.r; r++) {
    const cells = [0, 1, 2].map((c) => sheet[XLSX.utils.encode_cell({ r, c })]);
    rows.push(cells.map((cell) => (cell === undefined ? null : cell.v)));
    types.push(cells.map((cell) => (cell === undefined ? '' : cell.t)));
  }
  return { rows, types };
}

describe('filters', () => {
  let id: string;

  beforeAll(async () => {
    id = await completedJob(VARIED, 'Safe');
  });

  it('status, status:include and status:exclude select the rows of every format, as they select a JSON listing', async () => {
    const queries = ['status=Success', 'status:include=AtSignNotFound,Duplicate', 'status:exclude=Success', 'status=Success&status:exclude=Success'];
    for (const query of queries) {
      const expected = await jsonEntries(id, query);
      const csv = await call('GET', `/v2.7/email-validations/${id}/entries?${query}`, { accept: 'text/csv' });
      expect(csv.status).toBe(200);
      expect((parseCsv(csv.text) as string[][]).slice(1)).toEqual(expected.map(expectedCsvRow));
      const xlsx = await call('GET', `/v2.7/email-validations/${id}/entries?${query}`, { accept: XLSX_TYPE });
      expect((await readXlsx(xlsx.bytes)).slice(1)).toEqual(expected.map(expectedCells));
      const xls = await call('GET', `/v2.7/email-validations/${id}/entries?${query}`, { accept: XLS_TYPE });
      expect(readXls(xls.bytes).rows.slice(1)).toEqual(expected.map(expectedCells));
      expect(await server.store.countEntries(id, filterOf(query))).toBe(expected.length);
    }
    // The filter matched something each time but not everything.
    expect((await jsonEntries(id, 'status=Success')).length).toBeGreaterThan(0);
    expect((await jsonEntries(id, 'status=Success')).length).toBeLessThan(VARIED.length);
  });

  it('an unknown status is 400; cursor and limit do not apply to an export (it is the whole filtered listing)', async () => {
    expectProblem(await call('GET', `/v2.7/email-validations/${id}/entries?status=Nope`, { accept: 'text/csv' }), 400, /status/);
    const csv = await call('GET', `/v2.7/email-validations/${id}/entries?limit=2`, { accept: 'text/csv' });
    expect((parseCsv(csv.text) as string[][]).length).toBe(VARIED.length + 1);
  });
});

function filterOf(query: string) {
  const params = new URLSearchParams(query);
  const list = (name: string) => params.get(name)?.split(',');
  const include = [...(list('status') ?? []), ...(list('status:include') ?? [])];
  const exclude = list('status:exclude');
  return {
    ...((params.has('status') || params.has('status:include')) && { include: include as never[] }),
    ...(exclude !== undefined && { exclude: exclude as never[] }),
  };
}

describe('Accept', () => {
  let id: string;

  beforeAll(async () => {
    id = await completedJob([{ inputData: 'alice@example.com' }, { inputData: 'bob@example.com' }]);
  });

  const kindOf = (answer: Answer): string => {
    const type = answer.headers.get('content-type') ?? '';
    if (type.startsWith('application/json')) return 'json';
    if (type.startsWith('text/csv')) return 'csv';
    if (type === XLSX_TYPE) return 'xlsx';
    if (type === XLS_TYPE) return 'xls';
    return type;
  };

  it('JSON when Accept allows it; else the first type the server can give, q-values honoured', async () => {
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'json'],
      ['*/*', 'json'],
      ['application/json', 'json'],
      ['application/*', 'json'],
      ['application/json, application/problem+json', 'json'],
      ['text/csv', 'csv'],
      ['TEXT/CSV; charset=UTF-8', 'csv'],
      ['text/*', 'csv'],
      [XLSX_TYPE, 'xlsx'],
      [XLS_TYPE, 'xls'],
      [`${XLS_TYPE}, text/csv`, 'xls'],
      [`text/csv, ${XLS_TYPE}`, 'csv'],
      [`text/csv;q=0.5, ${XLS_TYPE};q=0.9`, 'xls'],
      [`text/csv, application/json`, 'csv'],
      ['application/json;q=0.1, text/csv', 'csv'],
      ['application/json;q=0, */*', 'csv'],
      ['image/png, application/json;q=0.2', 'json'],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'json'],
    ];
    for (const [accept, kind] of cases) {
      const answer = await call('GET', `/v2.7/email-validations/${id}/entries`, accept === undefined ? {} : { accept });
      expect([accept, answer.status, kindOf(answer)]).toEqual([accept, 200, kind]);
      if (kind === 'json') expect(answer.json.data).toHaveLength(2);
    }
  });

  it('406 with a problem when Accept allows none of them', async () => {
    for (const accept of ['text/plain', 'image/png', 'text/csv;charset=iso-8859-1', `${XLS_TYPE};q=0, text/plain`, 'application/xml']) {
      expectProblem(await call('GET', `/v2.7/email-validations/${id}/entries`, { accept }), 406, /text\/csv/);
    }
  });

  it('404 for an unknown job, 410 for a deleted one, 202 with the overview for one in progress', async () => {
    expectProblem(await call('GET', `/v2.7/email-validations/${crypto.randomUUID()}/entries`, { accept: 'text/csv' }), 404);
    const gone = await completedJob([{ inputData: 'alice@example.com' }]);
    expect((await call('DELETE', `/v2.7/email-validations/${gone}`)).status).toBe(200);
    expectProblem(await call('GET', `/v2.7/email-validations/${gone}/entries`, { accept: XLS_TYPE }), 410);
    const running = await call('POST', '/v2.7/email-validations', { body: { entries: [{ inputData: 'alice@slow-srv.com' }] }, at: labOrigin });
    expect(running.status).toBe(202);
    const runningId = running.json.overview.id;
    for (const accept of ['text/csv', XLSX_TYPE, XLS_TYPE]) {
      const answer = await call('GET', `/v2.7/email-validations/${runningId}/entries`, { accept, at: labOrigin });
      expect(answer.status).toBe(202);
      expect(answer.json).toMatchObject({ overview: { id: runningId, status: 'InProgress' } });
    }
    // Once it completes, the export follows (waitTime applies).
    const done = await call('GET', `/v2.7/email-validations/${runningId}/entries?waitTime=20000`, { accept: 'text/csv', at: labOrigin });
    expect(done.status).toBe(200);
    const rows = parseCsv(done.text) as string[][];
    expect(rows).toHaveLength(2);
    expect(rows[1]![1]).toBe('alice@slow-srv.com');
  });
});

describe('row maximum', () => {
  it('the limits are the formats\': xlsx 1,048,576 rows and xls 65,536, each a header and the data rows', () => {
    expect(XLSX_MAX_ROWS).toBe(1_048_576);
    expect(XLS_MAX_ROWS).toBe(65_536);
    expect(MAX_DATA_ROWS).toEqual({ csv: Infinity, xlsx: 1_048_575, xls: 65_535 });
  });

  it('415 past the maximum, counted with the filter; at the maximum, every row is there', async () => {
    // 65,535 addresses and one without an at sign: 65,536 entries, one more than an xls sheet holds.
    const entries = Array.from({ length: 65_536 }, (_, i) => ({ inputData: i === 40_000 ? 'no-at-sign' : `user${i}@example.com` }));
    const id = await completedJob(entries);
    expectProblem(await call('GET', `/v2.7/email-validations/${id}/entries`, { accept: XLS_TYPE }), 415, /65535/);
    // The same check, with xlsx's maximum, lets it through; so does CSV, which has none.
    const xlsx = await call('GET', `/v2.7/email-validations/${id}/entries?status=AtSignNotFound`, { accept: XLSX_TYPE });
    expect((await readXlsx(xlsx.bytes)).length).toBe(2);
    const csv = await call('GET', `/v2.7/email-validations/${id}/entries`, { accept: 'text/csv' });
    expect(csv.text.split('\r\n').length).toBe(65_536 + 2); // header, entries, and the final line end
    // Filtered to 65,535 entries, it fits exactly.
    const xls = await call('GET', `/v2.7/email-validations/${id}/entries?status:exclude=AtSignNotFound`, { accept: XLS_TYPE });
    expect(xls.status).toBe(200);
    const workbook = XLSX.read(xls.bytes, { type: 'buffer', dense: true });
    const sheet = workbook.Sheets['entries']!;
    expect(sheet['!ref']).toBe(`A1:R${XLS_MAX_ROWS}`);
    const last = XLSX.utils.sheet_to_json<unknown[]>(sheet, { header: 1, range: XLS_MAX_ROWS - 1 })[0]!;
    expect(last.slice(0, 2)).toEqual([65_535, 'user65535@example.com']);
  }, 120_000);
});

describe('the official client', () => {
  it('downloads every format with emailValidations.export', async () => {
    const client = new VerifaliaRestClient({ username: USER, password: PASSWORD, baseUris: [origin] });
    const wait = Object.assign(new WaitOptions(), { pollWaitTime: 5_000 });
    const job = await client.emailValidations.submit({ entries: VARIED.slice(0, 5), deduplication: 'Off' }, wait);
    const id = job!.overview.id;
    const entries = await jsonEntries(id);
    const download = async (type: string): Promise<Buffer> => {
      const stream = (await client.emailValidations.export(id, type)) as unknown as Readable;
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
      return Buffer.concat(chunks);
    };
    const csv = await download(MimeContentType_TextCsv);
    expect((parseCsv(csv.toString('utf8')) as string[][]).slice(1)).toEqual(entries.map(expectedCsvRow));
    expect((await readXlsx(await download(MimeContentType_ExcelXlsx))).slice(1)).toEqual(entries.map(expectedCells));
    expect(readXls(await download(MimeContentType_ExcelXls)).rows.slice(1)).toEqual(entries.map(expectedCells));
  });
});
