/**
 * Server benchmark: the REST server (packages/server/src/server/) in a process of its own (server.ts), driven over
 * loopback HTTP.
 *
 *   1. Submission: POST of a 100,000-entry JSON body (offline verifier), timed from the first byte sent to the end
 *      of the 202; the server's peak RSS and event-loop stalls; the time until the job completes. A fresh server
 *      process and data folder per run.
 *   2. A million entries: submitted over HTTP the same way and run to completion; then a fresh server process on the
 *      same data folder reads every entry page by page (limit 1000, following meta.cursor).
 *   3. Polling under load: autocannon, in a process of its own, 10 connections for 10 s against GET /{id}/overview
 *      and GET /{id}/entries?limit=100 (of the completed million-entry job): with no job running; while a job
 *      verifies over a loopback mail lab whose SMTP replies are slow (it stays InProgress throughout); and while an
 *      offline job of 200,000 entries, submitted just before, runs.
 *
 * Inputs are the realistic generator's (bench/syntax/corpus.mjs, fixed seed), as bench/offline uses them.
 *
 *   npm run bench:server                     # the full run (about 2.5 minutes)
 *   npm run bench:server -- --quick          # smaller jobs, 3 s of load: a check that it works
 *   npm run bench:server -- --runs=5 --passes=5   # more submission runs, more reading passes
 *
 * The results are printed as markdown and written to bench/server/last-run.md (not with --quick); bench/README.md
 * ("Server benchmark") explains them.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { VerifierOptions } from '../../packages/mailverify/src/engine/verifier.js';
import { startMailLab, type MailLab } from '../../test/lab/mail-lab.js';
import { labVerifierOptions } from '../../test/lab/lab-verifier.js';
import { buildBench, labScenario } from '../batch/scenario.js';
// @ts-expect-error plain JavaScript module
import { LARGE_MIX, SEED, realisticCorpus } from '../syntax/corpus.mjs';
import type { ServerStats, Stall } from './server.js';
import { AUTHORIZATION, startServer, type ServerProcess } from './process.js';
import { autocannon } from './autocannon.js';

const LAST_RUN = fileURLToPath(new URL('../server/last-run.md', import.meta.url));

const API = '/v2.7/email-validations';
const OFFLINE: VerifierOptions = { checks: 'syntax' };

function argument(name: string): string | undefined {
  const prefix = `--${name}=`;
  const found = process.argv.find((a) => a === `--${name}` || a.startsWith(prefix));
  if (found === undefined) return undefined;
  return found.startsWith(prefix) ? found.slice(prefix.length) : '';
}

const quick = argument('quick') !== undefined;
const RUNS = Number(argument('runs') ?? (quick ? 1 : 3));
const READ_PASSES = Number(argument('passes') ?? (quick ? 1 : 3));
const SUBMIT_ENTRIES = quick ? 10_000 : 100_000;
const MILLION = quick ? 100_000 : 1_000_000;
const PAGE_LIMIT = 1000;
const LOAD_SECONDS = quick ? 3 : 10;
const LOAD_CONNECTIONS = 10;
/** The offline job that runs under load. */
const LOAD_OFFLINE_ENTRIES = quick ? 20_000 : 200_000;
/**
 * The network job that runs under load: 60,000 addresses over 10 lab domains whose every SMTP reply takes 1 s. With
 * the engine's defaults (3 connections per exchanger, 10 recipients per transaction) it takes far longer than a
 * load run, and spends its time waiting on sockets, as a real job does.
 */
const LAB_SHAPE = {
  addresses: 60_000,
  domains: 10,
  catchAllDomains: 1,
  greylistingDomains: 0,
  existingShare: 0.6,
  greylistMs: 0,
  seed: 20_251_124,
};
const LAB_REPLY_DELAY_MS = 1_000;
const HEAP_CAP = '--max-old-space-size=256';

if (!Number.isInteger(RUNS) || RUNS < 1 || !Number.isInteger(READ_PASSES) || READ_PASSES < 1) {
  console.error('run.ts: --runs and --passes must be positive integers');
  process.exit(2);
}

/** The clock the server process uses for its stalls (performance.timeOrigin is wall-clock based). */
const clock = (): number => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------------------------
// The server process


// ---------------------------------------------------------------------------------------------------------------
// HTTP

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

interface Response {
  status: number;
  /** Decompressed. */
  body: Buffer;
  wireBytes: number;
  /** Shared clock: the first byte written, the last byte read. */
  sent: number;
  done: number;
}

function send(port: number, method: string, path: string, body?: Buffer, gzip = false, authorization = AUTHORIZATION): Promise<Response> {
  return new Promise((resolve, reject) => {
    const sent = clock();
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: {
          authorization,
          ...(gzip && { 'accept-encoding': 'gzip' }),
          ...(body !== undefined && { 'content-type': 'application/json', 'content-length': body.length }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('error', reject);
        response.once('end', () => {
          const done = clock();
          const wire = Buffer.concat(chunks);
          const body = response.headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire;
          resolve({ status: response.statusCode!, body, wireBytes: wire.length, sent, done });
        });
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

function json<T>(response: Response): T {
  return JSON.parse(response.body.toString('utf8')) as T;
}

function expectStatus(response: Response, status: number, what: string): void {
  if (response.status !== status) throw new Error(`${what}: ${response.status} ${response.body.toString('utf8').slice(0, 300)}`);
}

interface Overview {
  id: string;
  status: string;
  noOfEntries: number;
  progress?: { percentage: number };
}

/** `{ entries: [{ inputData }] }` over the realistic generator's addresses. */
function realisticBody(size: number): Buffer {
  const addresses = realisticCorpus(size, SEED + 3, { companies: 40_000, mix: LARGE_MIX }) as string[];
  return Buffer.from(JSON.stringify({ entries: addresses.map((inputData) => ({ inputData })) }));
}

async function submit(port: number, body: Buffer): Promise<{ id: string; response: Response }> {
  const response = await send(port, 'POST', API, body);
  expectStatus(response, 202, 'POST');
  return { id: json<{ overview: Overview }>(response).overview.id, response };
}

/** Waits for the job to complete (long polls of 30 s); the shared-clock time the completed overview arrived. */
async function completion(port: number, id: string): Promise<number> {
  for (;;) {
    const response = await send(port, 'GET', `${API}/${id}/overview?waitTime=30000`);
    if (response.status === 200 && json<Overview>(response).status === 'Completed') return response.done;
    expectStatus(response, 202, 'overview');
  }
}

/** The job's overview (202 while InProgress, 200 after). */
async function overviewOf(port: number, id: string): Promise<Overview> {
  const response = await send(port, 'GET', `${API}/${id}/overview`);
  if (response.status !== 202) expectStatus(response, 200, 'overview');
  return json<Overview>(response);
}

// ---------------------------------------------------------------------------------------------------------------
// Measurements

interface Submission {
  entries: number;
  /** POST sent to 202 read. */
  toAcceptedMs: number;
  /** 202 read to the completed overview read. */
  afterAcceptedMs: number;
  /** VmHWM when the 202 was handed to the socket. */
  peakToAcceptedMb: number | null;
  /** VmHWM through submission and job. */
  peakThroughJobMb: number;
  /** The longest stall of the server's event loop, and how it splits at the moment the 202 was handed over. */
  longestStallMs: number;
  stallBeforeReplyMs: number;
  stallAfterReplyMs: number;
  loopDelayMaxMs: number;
  idleRssMb: number;
}

/** Submits `body` to a server on `dataDir` and waits for the job to complete; the job's id and the figures. */
async function measureSubmission(
  dataDir: string,
  body: Buffer,
  entries: number,
  execArgv: string[] = [],
): Promise<{ id: string; figures: Submission }> {
  const server = await startServer(dataDir, OFFLINE, execArgv);
  try {
    await server.mark();
    const { id, response } = await submit(server.port, body);
    const completedAt = await completion(server.port, id);
    const stats = await server.stats();
    const job = await overviewOf(server.port, id);
    if (job.noOfEntries !== entries) throw new Error(`the job has ${job.noOfEntries} entries, not ${entries}`);
    const longest: Stall | undefined = stats.stalls[0];
    const replyAt = stats.postReply?.at;
    const split = longest !== undefined && replyAt !== undefined && replyAt >= longest.start && replyAt <= longest.end;
    return {
      id,
      figures: {
        entries,
        toAcceptedMs: response.done - response.sent,
        afterAcceptedMs: completedAt - response.done,
        peakToAcceptedMb: stats.postReply?.peakRssMb ?? null,
        peakThroughJobMb: peak(stats),
        longestStallMs: longest === undefined ? 0 : longest.end - longest.start,
        stallBeforeReplyMs: split ? replyAt - longest.start : NaN,
        stallAfterReplyMs: split ? longest.end - replyAt : NaN,
        loopDelayMaxMs: stats.loopDelayMaxMs,
        idleRssMb: server.idle.rssMb,
      },
    };
  } finally {
    await server.close();
  }
}

interface ReadPass {
  gzip: boolean;
  ms: number;
  pages: number;
  entries: number;
  bytes: number;
  slowestPageMs: number;
  server: ServerStats;
}

/** Every entry of the job, page by page; checks that each index comes once, in order. */
async function readAll(server: ServerProcess, id: string, expected: number, gzip: boolean): Promise<ReadPass> {
  await server.mark();
  const started = performance.now();
  let cursor: string | undefined;
  let pages = 0;
  let next = 0;
  let bytes = 0;
  let slowestPageMs = 0;
  for (;;) {
    const query = new URLSearchParams({ limit: String(PAGE_LIMIT), ...(cursor !== undefined && { cursor }) });
    const response = await send(server.port, 'GET', `${API}/${id}/entries?${query}`, undefined, gzip);
    expectStatus(response, 200, 'entries');
    const page = json<{ meta: { cursor?: string; isTruncated: boolean }; data: { index: number }[] }>(response);
    pages++;
    bytes += response.wireBytes;
    slowestPageMs = Math.max(slowestPageMs, response.done - response.sent);
    for (const entry of page.data) {
      if (entry.index !== next) throw new Error(`page ${pages}: entry ${entry.index} where ${next} was expected`);
      next++;
    }
    if (!page.meta.isTruncated) break;
    cursor = page.meta.cursor;
    if (cursor === undefined) throw new Error(`page ${pages}: truncated without a cursor`);
  }
  const ms = performance.now() - started;
  if (next !== expected) throw new Error(`read ${next} entries, not ${expected}`);
  return { gzip, ms, pages, entries: next, bytes, slowestPageMs, server: await server.stats() };
}

interface Cannon {
  requestsPerSecond: number;
  total: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}

/** autocannon in a process of its own against `path`, with root's Basic credentials unless others are given. */
async function cannon(port: number, path: string, authorization = AUTHORIZATION): Promise<Cannon> {
  const result = await autocannon(['-c', String(LOAD_CONNECTIONS), '-d', String(LOAD_SECONDS), '-n', '-H', `authorization=${authorization}`, `http://127.0.0.1:${port}${path}`]);
  return {
    requestsPerSecond: result.requests.average,
    total: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
  };
}

interface LoadRow extends Cannon {
  request: string;
  job: string;
  jobAtEnd: string;
  server: ServerStats;
}

/**
 * One load run: `submitJob` (if any) just before autocannon starts, autocannon against the path, then the job's state
 * and its deletion (the next run starts from a quiet server).
 */
async function loadRun(
  server: ServerProcess,
  request: string,
  job: string,
  path: (runningId: string | undefined) => string,
  body?: Buffer,
): Promise<LoadRow> {
  await server.mark(); // before the submission: a blocked event loop would answer a mark only afterwards
  const running = body === undefined ? undefined : (await submit(server.port, body)).id;
  const measured = await cannon(server.port, path(running));
  const stats = await server.stats();
  let jobAtEnd = '—';
  if (running !== undefined) {
    const overview = await overviewOf(server.port, running);
    jobAtEnd =
      overview.status === 'InProgress' ? `InProgress, ${((overview.progress?.percentage ?? 0) * 100).toFixed(0)}%` : overview.status;
    expectStatus(await send(server.port, 'DELETE', `${API}/${running}`), 200, 'DELETE');
  }
  return { request, job, jobAtEnd, server: stats, ...measured };
}

const SIGN_IN_METHODS = ['root, Basic', 'Standard user, Basic', 'Standard user, bearer token'] as const;
const SIGN_IN_ROUNDS = quick ? 1 : 3;

interface SignInRow extends Cannon {
  method: (typeof SIGN_IN_METHODS)[number];
}

/**
 * The polling load of `path` by root (Basic), by a Standard user (Basic) and by the same user with a bearer token,
 * interleaved round by round. The user is made here, with account-wide read (the job is root's).
 */
async function signInLoad(server: ServerProcess, path: string): Promise<SignInRow[]> {
  const username = 'bench-user';
  const password = 'bench-user-password';
  const user = { type: 'Standard', displayName: 'Bench', authentication: { password: { username, password } }, authorization: { rules: ['email-validations:read'] } };
  expectStatus(await send(server.port, 'POST', '/v2.7/users', Buffer.from(JSON.stringify(user))), 200, 'POST /users');
  const basic = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const token = await send(server.port, 'POST', '/v2.7/auth/tokens', Buffer.from(JSON.stringify({ username, password })));
  expectStatus(token, 200, 'POST /auth/tokens');
  const bearer = `Bearer ${(JSON.parse(token.body.toString('utf8')) as { accessToken: string }).accessToken}`;
  const credentials = { 'root, Basic': AUTHORIZATION, 'Standard user, Basic': basic, 'Standard user, bearer token': bearer };
  for (const authorization of Object.values(credentials)) expectStatus(await send(server.port, 'GET', path, undefined, false, authorization), 200, 'GET overview');
  const rows: SignInRow[] = [];
  for (let round = 0; round < SIGN_IN_ROUNDS; round++) {
    for (const method of SIGN_IN_METHODS) {
      process.stderr.write(`load by sign-in: ${method}, round ${round + 1} of ${SIGN_IN_ROUNDS}\n`);
      rows.push({ method, ...(await cannon(server.port, path, credentials[method])) });
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------------------------
// Formatting

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const seconds = (ms: number): string => (Number.isNaN(ms) ? 'n/a' : (ms / 1000).toFixed(2));
const mb = (value: number | null): string => (value === null ? 'n/a' : value.toFixed(0));
const int = (value: number): string => (Number.isNaN(value) ? 'n/a' : Math.round(value).toLocaleString('en'));
const peak = (stats: ServerStats): number => stats.peakRssMb ?? stats.sampledPeakRssMb;
const range = (values: number[], format: (v: number) => string): string => `${format(Math.min(...values))}–${format(Math.max(...values))}`;

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const lines: string[] = [];
  const out = (line = ''): void => {
    lines.push(line);
    console.log(line);
  };
  const log = (text: string): void => void process.stderr.write(`${text}\n`);
  const startedAt = performance.now();

  out(`Machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version} (${process.platform}-${process.arch})  `);
  out(`Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC  `);
  out('Server: createServer (compression and CORS on) on an SQLite data folder in the temporary directory, in its own process  ');
  out();

  // 1. Submission -------------------------------------------------------------------------------------------------
  log(`generating ${int(SUBMIT_ENTRIES)} entries...`);
  const smallBody = realisticBody(SUBMIT_ENTRIES);
  const runs: Submission[] = [];
  for (let run = 0; run < RUNS; run++) {
    log(`submission run ${run + 1} of ${RUNS}`);
    const dataDir = mkdtempSync(join(tmpdir(), 'mailverify-bench-server-'));
    try {
      runs.push((await measureSubmission(dataDir, smallBody, SUBMIT_ENTRIES)).figures);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  // 2. A million entries, submitted, then read --------------------------------------------------------------------
  const dataDir = mkdtempSync(join(tmpdir(), 'mailverify-bench-server-'));
  try {
    log(`generating ${int(MILLION)} entries...`);
    const bigBody = realisticBody(MILLION);
    log(`submitting ${int(MILLION)} entries`);
    const big = await measureSubmission(dataDir, bigBody, MILLION);
    const databaseMb = statSync(join(dataDir, 'mailverify.db')).size / 1e6;
    // The same with V8's old generation capped: what the server holds, rather than garbage not yet collected.
    log(`submitting ${int(MILLION)} entries to a server with ${HEAP_CAP}`);
    const cappedDir = mkdtempSync(join(tmpdir(), 'mailverify-bench-server-'));
    let capped: Submission;
    try {
      capped = (await measureSubmission(cappedDir, bigBody, MILLION, [HEAP_CAP])).figures;
    } finally {
      rmSync(cappedDir, { recursive: true, force: true });
    }

    out(`### Submitting a job (checks 'syntax', offline)`);
    out();
    out(
      `${int(SUBMIT_ENTRIES)} entries (${(smallBody.length / 1e6).toFixed(1)} MB of JSON): ${RUNS} runs, a fresh server process ` +
        `and data folder each, median (min–max). ${int(MILLION)} entries (${(bigBody.length / 1e6).toFixed(1)} MB): one run, ` +
        `and one more with the server's old generation capped (\`node ${HEAP_CAP}\`). ` +
        'Times are the client\'s; "stall" is the longest gap of the server\'s event loop, split at the moment the 202 was handed ' +
        'to the socket.',
    );
    out();
    const format = (values: number[], f: (v: number) => string): string =>
      values.length === 1 ? f(values[0]!) : `${f(median(values))} (${range(values, f)})`;
    const rows: [string, (s: Submission) => number, (v: number) => string][] = [
      ['POST sent to 202 read, s', (s) => s.toAcceptedMs, seconds],
      ['202 read to job completed, s', (s) => s.afterAcceptedMs, seconds],
      ['POST sent to job completed, s', (s) => s.toAcceptedMs + s.afterAcceptedMs, seconds],
      ['entries per second, POST to completed', (s) => s.entries / ((s.toAcceptedMs + s.afterAcceptedMs) / 1000), int],
      ['peak RSS up to the 202, MB', (s) => s.peakToAcceptedMb ?? NaN, mb],
      ['peak RSS, submission and job, MB', (s) => s.peakThroughJobMb, mb],
      ['longest event-loop stall, s', (s) => s.longestStallMs, seconds],
      ['  of which before the 202 was handed over, s', (s) => s.stallBeforeReplyMs, seconds],
      ['  of which after it (the job), s', (s) => s.stallAfterReplyMs, seconds],
      ['event-loop delay max (monitorEventLoopDelay), ms', (s) => s.loopDelayMaxMs, int],
      ['RSS of the idle server after start, MB', (s) => s.idleRssMb, mb],
    ];
    out(`| measure | ${int(SUBMIT_ENTRIES)} entries | ${int(MILLION)} entries | ${int(MILLION)}, ${HEAP_CAP} |`);
    out('| --- | ---: | ---: | ---: |');
    for (const [name, pick, f] of rows) {
      out(`| ${name} | ${format(runs.map(pick), f)} | ${format([pick(big.figures)], f)} | ${format([pick(capped)], f)} |`);
    }
    out();

    // A fresh process on the same data: its RSS is the reading's alone.
    const reader = await startServer(dataDir, OFFLINE);
    let offlineRows: LoadRow[];
    let signInRows: SignInRow[];
    try {
      const passes: ReadPass[] = [];
      for (let pass = 0; pass < READ_PASSES; pass++) {
        log(`reading pass ${pass + 1} of ${READ_PASSES}`);
        passes.push(await readAll(reader, big.id, MILLION, false));
      }
      log('reading pass with gzip');
      const gzipPass = await readAll(reader, big.id, MILLION, true);
      out(`### Reading all ${int(MILLION)} entries, ${PAGE_LIMIT} per page`);
      out();
      out(
        `A fresh server process on the data folder of the job above (database ${databaseMb.toFixed(0)} MB; RSS of the idle ` +
          `server ${mb(reader.idle.rssMb)} MB). ${READ_PASSES} passes one after the other, each from the first page ` +
          'following meta.cursor, one request at a time over a keep-alive connection, no compression asked for; then ' +
          'one pass with `Accept-Encoding: gzip` (MB as sent).',
      );
      out();
      out('| pass | pages | time | pages/s | entries/s | MB of JSON | slowest page | server peak RSS | server loop delay max |');
      out('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
      [...passes, gzipPass].forEach((pass, i) =>
        out(
          `| ${pass.gzip ? 'gzip' : i + 1} | ${int(pass.pages)} | ${seconds(pass.ms)} s | ${int(pass.pages / (pass.ms / 1000))} | ` +
            `${int(pass.entries / (pass.ms / 1000))} | ${(pass.bytes / 1e6).toFixed(0)} | ${int(pass.slowestPageMs)} ms | ` +
            `${mb(peak(pass.server))} MB | ${int(pass.server.loopDelayMaxMs)} ms |`,
        ),
      );
      if (passes.length > 1) {
        out(
          `| median of ${passes.length} | | ${seconds(median(passes.map((p) => p.ms)))} s | ${int(median(passes.map((p) => p.pages / (p.ms / 1000))))} | ` +
            `| | | ${mb(median(passes.map((p) => peak(p.server))))} MB | |`,
        );
      }
      out();

      // 3. Polling under load: no job, then an offline job, on this offline server ---------------------------------
      log(`generating ${int(LOAD_OFFLINE_ENTRIES)} entries for the offline job under load...`);
      const offlineBody = realisticBody(LOAD_OFFLINE_ENTRIES);
      const overviewPath = (running: string | undefined): string => `${API}/${running ?? big.id}/overview`;
      const entriesPath = (): string => `${API}/${big.id}/entries?limit=100`;
      const offlineJob = `offline, ${int(LOAD_OFFLINE_ENTRIES)} entries`;
      offlineRows = [];
      for (const [request, job, path, body] of [
        ['overview', 'none', overviewPath, undefined],
        ['entries?limit=100', 'none', entriesPath, undefined],
        ['overview', offlineJob, overviewPath, offlineBody],
        ['entries?limit=100', offlineJob, entriesPath, offlineBody],
      ] as const) {
        log(`load: ${request}, job: ${job}`);
        offlineRows.push(await loadRun(reader, request, job, path, body));
      }
      signInRows = await signInLoad(reader, overviewPath(undefined));
    } finally {
      await reader.close();
    }

    // 3. Polling under load while a job waits on slow SMTP servers --------------------------------------------------
    const bench = buildBench(LAB_SHAPE);
    const lab: MailLab = await startMailLab(labScenario(bench, { replyDelayMs: LAB_REPLY_DELAY_MS, dnsDelayMs: 0, port: 0 }));
    const networkRows: LoadRow[] = [];
    try {
      const networked = await startServer(dataDir, labVerifierOptions(lab, {}, { connectTimeoutMs: 5000, commandTimeoutMs: 5000 }));
      try {
        const labBody = Buffer.from(JSON.stringify({ entries: bench.addresses.map((a) => ({ inputData: a.address })) }));
        const labJob = `SMTP over the lab, ${int(LAB_SHAPE.addresses)} entries`;
        for (const [request, path] of [
          ['overview', (running: string | undefined) => `${API}/${running ?? big.id}/overview`],
          ['entries?limit=100', () => `${API}/${big.id}/entries?limit=100`],
        ] as const) {
          log(`load: ${request}, job: ${labJob}`);
          networkRows.push(await loadRun(networked, request, labJob, path, labBody));
        }
      } finally {
        await networked.close();
      }
    } finally {
      await lab.close();
    }

    const loadRows = [...offlineRows.slice(0, 2), ...networkRows, ...offlineRows.slice(2)];
    out(`### Polling under load: autocannon, ${LOAD_CONNECTIONS} connections, ${LOAD_SECONDS} s, in its own process`);
    out();
    out(
      'GET /v2.7/email-validations/{id}/overview (of the running job, else of the completed one) and ' +
        'GET .../{id}/entries?limit=100 (the first page of the completed million-entry job), HTTP Basic. The job, when ' +
        'there is one, is submitted just before autocannon starts (its 202 awaited), one per row, and deleted after. ' +
        `"SMTP over the lab": ${int(LAB_SHAPE.addresses)} addresses over ${LAB_SHAPE.domains} loopback lab domains, every ` +
        `SMTP reply delayed ${LAB_REPLY_DELAY_MS} ms (the lab runs in the benchmark's process).`,
    );
    out();
    out('| request | job running | requests/s | total | p50 | p99 | max | errors | timeouts | non-2xx | server: longest stall | server: stalled in all | job at the end |');
    out('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
    for (const r of loadRows) {
      const stall = r.server.stalls[0];
      const stalled = r.server.stalls.reduce((sum, s) => sum + (s.end - s.start), 0);
      out(
        `| ${r.request} | ${r.job} | ${int(r.requestsPerSecond)} | ${int(r.total)} | ${r.p50Ms} ms | ${r.p99Ms} ms | ` +
          `${r.maxMs} ms | ${r.errors} | ${r.timeouts} | ${r.non2xx} | ${stall === undefined ? '—' : `${int(stall.end - stall.start)} ms`} | ` +
          `${int(stalled)} ms | ${r.jobAtEnd} |`,
      );
    }
    out();
    out(`### Polling under load by sign-in method: autocannon, ${LOAD_CONNECTIONS} connections, ${LOAD_SECONDS} s`);
    out();
    out(
      'GET /v2.7/email-validations/{id}/overview of the completed million-entry job (no job running), by root with HTTP ' +
        'Basic, by a Standard user with HTTP Basic (argon2id password; a verified credential is remembered for 60 s, and ' +
        'every request reads the user\'s record and checks its rules: account-wide read, the job being root\'s) and by ' +
        `the same user with a bearer token. ${SIGN_IN_ROUNDS} rounds, the three methods interleaved in each; medians, ` +
        'and the ratio to root\'s median.',
    );
    out();
    out('| sign-in | requests/s (median) | vs root | p99 (median) | vs root | runs: requests/s | errors | non-2xx |');
    out('| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |');
    const rootRuns = signInRows.filter((r) => r.method === SIGN_IN_METHODS[0]);
    for (const method of SIGN_IN_METHODS) {
      const runs = signInRows.filter((r) => r.method === method);
      const rps = median(runs.map((r) => r.requestsPerSecond));
      const p99 = median(runs.map((r) => r.p99Ms));
      const rootRps = median(rootRuns.map((r) => r.requestsPerSecond));
      const rootP99 = median(rootRuns.map((r) => r.p99Ms));
      out(
        `| ${method} | ${int(rps)} | ${(rps / rootRps).toFixed(2)}× | ${p99} ms | ${rootP99 === 0 ? '—' : `${(p99 / rootP99).toFixed(2)}×`} | ` +
          `${runs.map((r) => int(r.requestsPerSecond)).join(', ')} | ${runs.reduce((n, r) => n + r.errors, 0)} | ${runs.reduce((n, r) => n + r.non2xx, 0)} |`,
      );
    }
    out();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    agent.destroy();
  }
  out(`Whole run: ${seconds(performance.now() - startedAt)} s.`);
  if (!quick) writeFileSync(LAST_RUN, `${lines.join('\n')}\n`);
}

await main();
