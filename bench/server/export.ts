/**
 * Export benchmark: GET /email-validations/{id}/entries with Accept text/csv and xlsx on a job of 1,000,000 entries,
 * and with Accept application/vnd.ms-excel on a job of 65,535 (the most an .xls sheet holds besides its header).
 * The server runs in a process of its own (server.ts, as `npm run bench:server` runs it), on an SQLite data folder;
 * the jobs are submitted over HTTP (offline verifier, the realistic generator's addresses), then the server is
 * restarted so that the export's peak RSS is not the submission's. Each export is read to its end as fast as the
 * client can, counting bytes; its time is from the request to the last byte, its peak RSS the server's VmHWM since a
 * mark set just before the request (server.ts explains both). Passes of CSV and xlsx are interleaved.
 *
 *   npm run bench:export                  # 1,000,000 entries, 2 passes per format
 *   npm run bench:export -- --quick       # 100,000 entries, 1 pass: a check that it works
 *   npm run bench:export -- --passes=3
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
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
const LARGE = Number(argument("entries") ?? (quick ? 100_000 : 1_000_000));
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

const dataDir = mkdtempSync(join(tmpdir(), 'mailverify-export-bench-'));
try {
  let server = await startServer(dataDir);
  console.error(`submitting ${LARGE} and ${XLS_ROWS} entries...`);
  const large = await completedJob(server.port, LARGE);
  const small = await completedJob(server.port, XLS_ROWS);
  await server.close();
  // A fresh process: what the export costs, not what the submissions left behind.
  server = await startServer(dataDir);
  const idle = server.idle.rssMb;
  const passes: Pass[] = [];
  for (let pass = 0; pass < PASSES; pass++) {
    passes.push(await measure(server, large, 'csv', LARGE));
    passes.push(await measure(server, large, 'xlsx', LARGE));
    passes.push(await measure(server, small, 'xls', XLS_ROWS));
    passes.push(await measure(server, small, 'csv', XLS_ROWS));
  }
  await server.close();
  console.log(`Export benchmark (${new Date().toISOString().slice(0, 10)}; server idle RSS ${idle.toFixed(0)} MB)\n`);
  console.log('| format | entries | time | size | server peak RSS | longest event-loop delay |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const p of passes) {
    console.log(
      `| ${p.format} | ${p.entries.toLocaleString('en-US')} | ${(p.ms / 1000).toFixed(2)} s | ${p.mb.toFixed(1)} MB | ${p.peakRssMb.toFixed(0)} MB | ${p.loopDelayMaxMs.toFixed(0)} ms |`,
    );
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
