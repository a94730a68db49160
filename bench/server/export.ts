/**
 * Export benchmark: GET /email-validations/{id}/entries with Accept text/csv and xlsx on a job of 1,000,000 entries,
 * and with Accept application/vnd.ms-excel on a job of 65,535 (the most an .xls sheet holds besides its header).
 * The server runs in a process of its own (server.ts, as `npm run bench:server` runs it), on an SQLite data folder;
 * the jobs are submitted over HTTP (offline verifier, the realistic generator's addresses), then the server is
 * restarted so that the export's peak RSS is not the submission's. Each export is read to its end as fast as the
 * client can, counting bytes; its time is from the request to the last byte, its peak RSS the server's VmHWM since a
 * mark set just before the request (server.ts explains both). Passes of CSV and xlsx are interleaved.
 *
 * Then the components, in this process on the same database (no HTTP, as the profiles): the floor (the
 * store's pages read through, and one text per page written: the cells joined, nothing escaped), the CSV and the
 * xlsx export streams, each read into a sink that counts bytes. The three run in turn in every round, the order
 * rotated from round to round, so that a machine shared with other work slows them alike; medians and ratios.
 *
 *   npm run bench:export                  # 1,000,000 entries, 2 passes per format, 5 component rounds
 *   npm run bench:export -- --quick       # 100,000 entries, 1 pass, 3 rounds: a check that it works
 *   npm run bench:export -- --passes=3 --rounds=7
 *   npm run bench:export -- --data=DIR    # keep the jobs in DIR and reuse them in the next run
 *   npm run bench:export -- --components  # the component rounds only
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { entryPages } from '../../packages/server/src/jobs/pages.js';
import { SqliteJobStore } from '../../packages/server/src/jobs/sqlite-store.js';
import type { Entry } from '../../packages/mailverify/src/engine/entry.js';
import { csvStream } from '../../packages/server/src/server/export/csv.js';
import { EXPORT_PAGE, cellsOf } from '../../packages/server/src/server/export/rows.js';
import { xlsxStream } from '../../packages/server/src/server/export/xlsx.js';
// @ts-expect-error plain JavaScript module
import { LARGE_MIX, SEED, realisticCorpus } from '../syntax/corpus.mjs';
import type { ServerStats } from './server.js';
import { AUTHORIZATION, startServer, type ServerProcess } from './process.js';

const API = '/v2.7/email-validations';
const TYPES = {
  csv: 'text/csv',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  xls: 'application/vnd.ms-excel',
} as const;

function argument(name: string): string | undefined {
  const found = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  return found?.includes('=') ? found.slice(found.indexOf('=') + 1) : found === undefined ? undefined : '';
}
const quick = argument('quick') !== undefined;
const PASSES = Number(argument('passes') ?? (quick ? 1 : 2));
const ROUNDS = Number(argument('rounds') ?? (quick ? 3 : 5));
const LARGE = Number(argument('entries') ?? (quick ? 100_000 : 1_000_000));
const KEPT = argument('data');
const COMPONENTS_ONLY = argument('components') !== undefined;
const XLS_ROWS = 65_535;


/** A request read to its end: status, bytes (the body kept only when `keep`), time to the last byte. */
function send(port: number, method: string, path: string, options: { body?: Buffer; accept?: string; keep?: boolean } = {}) {
  return new Promise<{ status: number; bytes: number; body: Buffer; ms: number }>((resolve, reject) => {
    const started = performance.now();
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          authorization: AUTHORIZATION,
          ...(options.accept !== undefined && { accept: options.accept }),
          ...(options.body !== undefined && { 'content-type': 'application/json', 'content-length': options.body.length }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (options.keep === true) chunks.push(chunk);
        });
        response.once('error', reject);
        response.once('end', () => resolve({ status: response.statusCode!, bytes, body: Buffer.concat(chunks), ms: performance.now() - started }));
      },
    );
    request.once('error', reject);
    request.end(options.body);
  });
}

/** Submits a job of `size` realistic addresses and waits for it to complete; its id. */
async function completedJob(port: number, size: number): Promise<string> {
  const addresses = realisticCorpus(size, SEED + 3, { companies: 40_000, mix: LARGE_MIX }) as string[];
  const body = Buffer.from(JSON.stringify({ entries: addresses.map((inputData) => ({ inputData })) }));
  const posted = await send(port, 'POST', API, { body, keep: true });
  if (posted.status !== 202 && posted.status !== 200) throw new Error(`POST: ${posted.status} ${posted.body.toString().slice(0, 200)}`);
  const id = (JSON.parse(posted.body.toString()) as { overview: { id: string } }).overview.id;
  for (;;) {
    const overview = await send(port, 'GET', `${API}/${id}/overview?waitTime=30000`, { keep: true });
    if (overview.status === 200) return id;
    if (overview.status !== 202) throw new Error(`overview: ${overview.status}`);
  }
}

interface Pass {
  format: keyof typeof TYPES;
  entries: number;
  ms: number;
  mb: number;
  peakRssMb: number;
  loopDelayMaxMs: number;
}

async function measure(server: ServerProcess, id: string, format: keyof typeof TYPES, entries: number): Promise<Pass> {
  await server.mark();
  const answer = await send(server.port, 'GET', `${API}/${id}/entries`, { accept: TYPES[format] });
  if (answer.status !== 200) throw new Error(`${format} export: ${answer.status}`);
  const stats = await server.stats();
  return {
    format,
    entries,
    ms: answer.ms,
    mb: answer.bytes / 1024 / 1024,
    peakRssMb: stats.peakRssMb ?? stats.sampledPeakRssMb,
    loopDelayMaxMs: stats.loopDelayMaxMs,
  };
}

/** A sink that takes every chunk at once and counts its bytes. */
function countingSink(): Writable & { bytes: number } {
  const sink = new Writable({
    highWaterMark: 1024 * 1024,
    write(chunk: Buffer | string, _encoding, done) {
      sink.bytes += chunk.length;
      done();
    },
  }) as Writable & { bytes: number };
  sink.bytes = 0;
  return sink;
}

/** The floor: the pages read through and one text written per page, the cells joined with nothing escaped. */
async function floorExport(pages: AsyncIterable<Entry[]>, sink: Writable): Promise<void> {
  for await (const page of pages) {
    let text = '';
    for (const entry of page) {
      const cells = cellsOf(entry);
      for (let i = 0; i < cells.length; i++) text += i === 0 ? String(cells[i] ?? '') : `,${cells[i] ?? ''}`;
      text += '\r\n';
    }
    if (!sink.write(text)) await new Promise((resolve) => sink.once('drain', resolve));
  }
  await new Promise<void>((resolve, reject) => sink.end((error?: Error | null) => (error ? reject(error) : resolve())));
}

const COMPONENTS = {
  'store pages only': async (pages: AsyncIterable<Entry[]>, sink: Writable) => {
    for await (const page of pages) sink.write(String(page.length));
    sink.end();
  },
  'floor: one text per page': floorExport,
  'CSV export': (pages: AsyncIterable<Entry[]>, sink: Writable) => pipeline(csvStream(pages), sink),
  'xlsx export': (pages: AsyncIterable<Entry[]>, sink: Writable) => pipeline(xlsxStream(pages), sink),
} as const;
type Component = keyof typeof COMPONENTS;

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** The components, ROUNDS rounds, each running all of them in an order rotated from the previous round's. */
async function components(databaseFile: string, id: string): Promise<void> {
  const store = new SqliteJobStore(databaseFile);
  const names = Object.keys(COMPONENTS) as Component[];
  const times = new Map<Component, number[]>(names.map((name) => [name, []]));
  // CPU time (this process's threads: the main one and zlib's) is less moved by other work on the machine than time.
  const cpu = new Map<Component, number[]>(names.map((name) => [name, []]));
  const bytes = new Map<Component, number>();
  const loadBefore = loadavg();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length]!;
        const sink = countingSink();
        const started = performance.now();
        const cpuStarted = process.cpuUsage();
        await COMPONENTS[name](entryPages(store, id, EXPORT_PAGE, {}, { whole: true }), sink);
        times.get(name)!.push(performance.now() - started);
        const used = process.cpuUsage(cpuStarted);
        cpu.get(name)!.push((used.user + used.system) / 1000);
        bytes.set(name, sink.bytes);
      }
    }
  } finally {
    await store.close();
  }
  const loadAfter = loadavg();
  const ms = (name: Component) => median(times.get(name)!);
  const cpuMs = (name: Component) => median(cpu.get(name)!);
  console.log(
    `\nComponents, in process, no HTTP (${LARGE.toLocaleString('en-US')} entries, ${ROUNDS} rounds, order rotated each round; ` +
      `load average ${loadBefore[0]!.toFixed(1)} before, ${loadAfter[0]!.toFixed(1)} after, on ${availableParallelism()} cores)\n`,
  );
  const floor = 'floor: one text per page';
  console.log('| component | time, median | min–max | vs floor | CPU time, median | vs floor | output |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const name of names) {
    const all = times.get(name)!;
    console.log(
      `| ${name} | ${(ms(name) / 1000).toFixed(2)} s | ${(Math.min(...all) / 1000).toFixed(2)}–${(Math.max(...all) / 1000).toFixed(2)} s | ` +
        `${(ms(name) / ms(floor)).toFixed(2)}× | ${(cpuMs(name) / 1000).toFixed(2)} s | ${(cpuMs(name) / cpuMs(floor)).toFixed(2)}× | ` +
        `${(bytes.get(name)! / 1024 / 1024).toFixed(1)} MB |`,
    );
  }
  const ratios = (of: (name: Component) => number) =>
    `CSV / floor ${(of('CSV export') / of(floor)).toFixed(2)}× (target ≤ 1.5×), xlsx / CSV ${(of('xlsx export') / of('CSV export')).toFixed(2)}× (target ≤ 2×)`;
  console.log(`\nBy time: ${ratios(ms)}. By CPU time: ${ratios(cpuMs)}.`);
}

/** The two jobs, submitted once into a kept data folder and found there again in later runs. */
async function jobsIn(dataDir: string): Promise<{ large: string; small: string }> {
  const file = join(dataDir, 'bench-jobs.json');
  const known = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { entries: number; large: string; small: string }) : undefined;
  if (known?.entries === LARGE) return known;
  const server = await startServer(dataDir);
  try {
    console.error(`submitting ${LARGE} and ${XLS_ROWS} entries...`);
    const jobs = { entries: LARGE, large: await completedJob(server.port, LARGE), small: await completedJob(server.port, XLS_ROWS) };
    writeFileSync(file, JSON.stringify(jobs));
    return jobs;
  } finally {
    await server.close();
  }
}

const dataDir = KEPT ?? mkdtempSync(join(tmpdir(), 'mailverify-export-bench-'));
if (KEPT !== undefined) mkdirSync(KEPT, { recursive: true });
try {
  const { large, small } = await jobsIn(dataDir);
  if (!COMPONENTS_ONLY) await httpPasses(large, small);
  await components(join(dataDir, 'mailverify.db'), large);
} finally {
  if (KEPT === undefined) rmSync(dataDir, { recursive: true, force: true });
}

async function httpPasses(large: string, small: string): Promise<void> {
  // A fresh process: what the export costs, not what the submissions left behind.
  const server = await startServer(dataDir);
  const idle = server.idle.rssMb;
  const passes: Pass[] = [];
  for (let pass = 0; pass < PASSES; pass++) {
    passes.push(await measure(server, large, 'csv', LARGE));
    passes.push(await measure(server, large, 'xlsx', LARGE));
    passes.push(await measure(server, small, 'xls', XLS_ROWS));
    passes.push(await measure(server, small, 'csv', XLS_ROWS));
  }
  await server.close();
  console.log(`Export benchmark (${new Date().toISOString().slice(0, 10)}; server idle RSS ${idle.toFixed(0)} MB; load average ${loadavg()[0]!.toFixed(1)})\n`);
  console.log('| format | entries | time | size | server peak RSS | longest event-loop delay |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const p of passes) {
    console.log(
      `| ${p.format} | ${p.entries.toLocaleString('en-US')} | ${(p.ms / 1000).toFixed(2)} s | ${p.mb.toFixed(1)} MB | ${p.peakRssMb.toFixed(0)} MB | ${p.loopDelayMaxMs.toFixed(0)} ms |`,
    );
  }
}
