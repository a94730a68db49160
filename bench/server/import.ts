/**
 * File import benchmark: the REST server (bench/server/server.ts, a process of its own, offline verifier) takes a
 * multipart upload of
 *
 *   - a 1,000,000-row CSV (a header, then `id,address`), column 1 from row 1;
 *   - a 100,000-row xlsx written by exceljs (the same two columns);
 *   - for comparison, the same million addresses as one JSON body (the path the JSON submission takes).
 *
 * Each run is a fresh server process and data folder: the time from the first byte sent to the end of the 202
 * (waitTime 0), and the server's peak RSS (VmHWM, the worker thread of a workbook included) from just before the
 * upload to the 202, against its idle RSS. The kinds are interleaved, run after run.
 *
 *   npm run bench:import                  # 3 runs of each
 *   npm run bench:import -- --runs=5
 *
 * The results are printed as markdown and written to bench/server/import-last-run.md; bench/README.md ("File
 * import") explains them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import type { ServerStats } from './server.js';
import { AUTHORIZATION, startServer } from './process.js';

const LAST_RUN = fileURLToPath(new URL('../server/import-last-run.md', import.meta.url));
const MB = 1024 * 1024;
const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 3);


/** POST of a prepared body; the time from the first byte sent to the end of the answer. */
function post(port: number, body: Buffer, contentType: string): Promise<{ status: number; ms: number; noOfEntries: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const request = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path: '/v2.7/email-validations', headers: { authorization: AUTHORIZATION, 'content-type': contentType, 'content-length': body.length } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const ms = performance.now() - start;
          const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { overview?: { noOfEntries: number }; detail?: string };
          if (response.statusCode !== 202 && response.statusCode !== 200) reject(new Error(`${response.statusCode}: ${answer.detail}`));
          else resolve({ status: response.statusCode, ms, noOfEntries: answer.overview!.noOfEntries });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

function multipart(file: Buffer, type: string, settings: unknown): { body: Buffer; contentType: string } {
  const boundary = '----mailverify-bench-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="inputFile"; filename="list"\r\nContent-Type: ${type}\r\n\r\n`;
  const tail = `\r\n--${boundary}\r\nContent-Disposition: form-data; name="settings"\r\n\r\n${JSON.stringify(settings)}\r\n--${boundary}--\r\n`;
  return { body: Buffer.concat([Buffer.from(head), file, Buffer.from(tail)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

const address = (i: number): string => `user.${i}@domain${i % 997}.example.com`;

async function xlsxOf(rows: number): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet('list');
  sheet.addRow(['id', 'email']);
  for (let i = 0; i < rows; i++) sheet.addRow([i, address(i)]);
  return Buffer.from(await book.xlsx.writeBuffer());
}

interface Kind {
  readonly name: string;
  readonly rows: number;
  readonly fileMb: number;
  readonly body: Buffer;
  readonly contentType: string;
}

interface Result {
  readonly ms: number;
  readonly peakMb: number;
  readonly idleMb: number;
}

async function measure(kind: Kind): Promise<Result> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailverify-bench-import-'));
  const server = await startServer(dataDir);
  try {
    await server.mark();
    const answer = await post(server.port, kind.body, kind.contentType);
    if (answer.noOfEntries !== kind.rows) throw new Error(`${kind.name}: ${answer.noOfEntries} entries, expected ${kind.rows}`);
    const stats = await server.stats();
    return { ms: answer.ms, peakMb: stats.postReply?.peakRssMb ?? stats.peakRssMb ?? stats.sampledPeakRssMb, idleMb: server.idle.rssMb };
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

const CSV_ROWS = 1_000_000;
const XLSX_ROWS = 100_000;
const csvLines = ['id,email'];
for (let i = 0; i < CSV_ROWS; i++) csvLines.push(`${i},${address(i)}`);
const csv = Buffer.from(`${csvLines.join('\n')}\n`);
csvLines.length = 0;
const xlsx = await xlsxOf(XLSX_ROWS);
const json = Buffer.from(JSON.stringify({ entries: Array.from({ length: CSV_ROWS }, (_, i) => ({ inputData: address(i) })) }));

const kinds: Kind[] = [
  { name: 'CSV, 1,000,000 rows', rows: CSV_ROWS, fileMb: csv.length / MB, ...multipart(csv, 'text/csv', { startingRow: 1, column: 1 }) },
  { name: 'xlsx, 100,000 rows', rows: XLSX_ROWS, fileMb: xlsx.length / MB, ...multipart(xlsx, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', { startingRow: 1, column: 1 }) },
  { name: 'JSON body, 1,000,000 entries (comparison)', rows: CSV_ROWS, fileMb: json.length / MB, body: json, contentType: 'application/json' },
];

const results = new Map<string, Result[]>(kinds.map((kind) => [kind.name, []]));
for (let run = 0; run < runs; run++) {
  for (const kind of kinds) {
    const result = await measure(kind);
    results.get(kind.name)!.push(result);
    console.error(`run ${run + 1}/${runs} ${kind.name}: ${result.ms.toFixed(0)} ms to the 202, peak RSS ${result.peakMb.toFixed(0)} MB`);
  }
}

const lines = [
  `File import, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} cores, ${runs} runs of each (interleaved), a fresh server per run.`,
  '',
  '| upload | file | time to the 202 (median, best) | server peak RSS to the 202 (median, lowest) | idle RSS |',
  '| --- | ---: | ---: | ---: | ---: |',
  ...kinds.map((kind) => {
    const r = results.get(kind.name)!;
    const ms = r.map((x) => x.ms);
    const peak = r.map((x) => x.peakMb);
    return `| ${kind.name} | ${kind.fileMb.toFixed(1)} MB | ${(median(ms) / 1000).toFixed(2)} s, ${(Math.min(...ms) / 1000).toFixed(2)} s | ${median(peak).toFixed(0)} MB, ${Math.min(...peak).toFixed(0)} MB | ${median(r.map((x) => x.idleMb)).toFixed(0)} MB |`;
  }),
];
console.log(lines.join('\n'));
writeFileSync(LAST_RUN, `${lines.join('\n')}\n`);

