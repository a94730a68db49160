// LibreOffice Calc, run headless, to open a file as a user's spreadsheet program does and say which cells became
// formulas: a CSV file is imported with "Evaluate formulas" on (the setting that turns `=HYPERLINK(...)` into a live
// link); the file is saved as xlsx, which SheetJS reads back with each cell's formula, if any. Each run has its own
// throw-away profile (-env:UserInstallation), so runs do not share or wait on a running instance, and a time limit;
// its folder is removed afterwards.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as XLSX from '@e965/xlsx';
import { findProgram, programForTests, type SystemProgram } from './system-programs.js';

/** LibreOffice: optional even in CI (a large package that may fail to install); its tests then check the rule only. */
const LIBREOFFICE: SystemProgram = { names: ['soffice', 'libreoffice'], debianPackage: 'libreoffice-calc-nogui' };

/**
 * LibreOffice for the tests that open files in it, or null when it is not installed: then those tests are not
 * defined (the rule's own tests still run), and a note on standard error says what was not checked. With
 * MAILVERIFY_REQUIRE_LIBREOFFICE=1 (a CI image that installs it) its absence is an error instead.
 */
export function libreOfficeForTests(what: string): string | null {
  const required = process.env['MAILVERIFY_REQUIRE_LIBREOFFICE'] === '1';
  if (required && findProgram(LIBREOFFICE.names) === null) throw new Error('MAILVERIFY_REQUIRE_LIBREOFFICE=1, but LibreOffice (soffice) is not on the PATH');
  return programForTests(LIBREOFFICE, `the tests that open ${what} in LibreOffice`);
}

/** A cell as LibreOffice read it: its value, and its formula when it became one. */
export interface OpenedCell {
  value: string | number | boolean | null;
  formula: string | undefined;
}

/**
 * CSV import options (LibreOffice's CSV filter tokens): comma, double quote, UTF-8, from line 1, default column
 * types and language, quoted fields not forced to text, special numbers detected, then token 13, "Evaluate formulas",
 * on.
 */
const CSV_IMPORT = 'CSV:44,34,76,1,,,false,true,false,false,false,,true';
/** LibreOffice starts in a second or two; a first start with a new profile can take longer on a busy machine. */
const TIME_LIMIT_MS = 120_000;

/** The cells of the CSV text as LibreOffice opens it, evaluating formulas: rows of cells, of its first sheet. */
export function openCsvInLibreOffice(soffice: string, csv: string): Promise<OpenedCell[][]> {
  return openInLibreOffice(soffice, 'csv', csv);
}

/** The cells of a file (CSV, xlsx, xls) as LibreOffice opens it: rows of cells, of its first sheet. */
export async function openInLibreOffice(soffice: string, format: 'csv' | 'xlsx' | 'xls', content: string | Buffer): Promise<OpenedCell[][]> {
  const work = mkdtempSync(join(tmpdir(), 'mailverify-libreoffice-'));
  try {
    const input = join(work, `opened.${format}`);
    writeFileSync(input, content);
    const profile = pathToFileURL(join(work, 'profile')).href;
    const outdir = join(work, 'out');
    const filter = format === 'csv' ? [`--infilter=${CSV_IMPORT}`] : [];
    const args = [`-env:UserInstallation=${profile}`, '--headless', '--norestore', ...filter, '--convert-to', 'xlsx', '--outdir', outdir, input];
    const output = await run(soffice, args);
    const converted = join(outdir, 'opened.xlsx');
    if (!existsSync(converted)) throw new Error(`${soffice} wrote no ${converted}: ${output}`);
    const workbook = XLSX.read(readFileSync(converted), { type: 'buffer', cellFormula: true });
    const sheet = workbook.Sheets[workbook.SheetNames[0]!]!;
    const range = XLSX.utils.decode_range(sheet['!ref']!);
    const rows: OpenedCell[][] = [];
    for (let r = range.s.r; r <= range.e.r; r++) {
      const row: OpenedCell[] = [];
      for (let c = range.s.c; c <= range.e.c; c++) {
        const cell = sheet[XLSX.utils.encode_cell({ r, c })] as XLSX.CellObject | undefined;
        row.push({ value: (cell?.v as string | number | boolean | undefined) ?? null, formula: cell?.f });
      }
      rows.push(row);
    }
    return rows;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Runs the program in a process group of its own, killed whole (soffice starts soffice.bin) past the time limit;
 * resolves with what it printed.
 */
function run(program: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, TIME_LIMIT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output.trim());
      else reject(new Error(`${program} ended with ${signal ?? `exit code ${code}`}: ${output.trim()}`));
    });
  });
}
