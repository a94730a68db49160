/**
 * Cluster benchmark: one job of 100,000 addresses over 2,000 domains, submitted to `mailverify serve` and verified
 * against the mail lab, by the embedded service (SQLite, jobs in process) and by a cluster of real processes (an
 * API-only `serve --store --queue --workers 0` and 1, 2 or 4 `mailverify worker` processes of one worker each), on
 * two labs: every SMTP write 30 ms late (DNS 5 ms), and no delay at all (the CPU decides).
 *
 * Per run: wall time from the POST to the overview saying Completed; CPU time (utime + stime from /proc/<pid>/stat,
 * all threads) of every mailverify process, of the PostgreSQL backends of the run's database and of the run's
 * redis-server, from when every process is ready to Completed; the most connections one exchanger had open at once
 * (the lab's counters); PostgreSQL transactions and rows (pg_stat_database of the run's own database); Redis commands
 * (INFO of a redis-server of the run's own); and every entry read back through the API and checked against the lab's
 * truth. Each cluster run gets a fresh database on the shared PostgreSQL (dropped after) and a private redis-server
 * (stopped after). The configurations are interleaved, each round starting one place later.
 *
 *   npm run bench:cluster                      # 100,000 addresses, 2,000 domains, 2 rounds
 *   npm run bench:cluster -- --quick           # 10,000 addresses over 200 domains, one round
 *   npm run bench:cluster -- --rounds=3 --labs=cpu --configs=embedded,cluster-1
 *   npm run bench:cluster -- --analyze         # ANALYZE the entries table right after the 202 (cluster runs)
 *   npm run bench:cluster -- --worker-cpu-prof=DIR   # each worker process writes a V8 CPU profile into DIR
 *
 * The results are printed as markdown and written to bench/cluster/last-run.md (not with --quick).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildBench, labScenario, type Bench, type Category } from '../batch/scenario.js';
import { startMailLab, type MailLab } from '../../test/lab/mail-lab.js';
import { startServe, type ServeProcess } from '../../test/lab/serve-process.js';
import { startWorker, type WorkerProcess } from '../../test/cluster/cluster-processes.js';
import { startPrivateRedis, type PrivateRedis } from '../../test/cluster/private-services.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url)); // this bundle is in bench/.out/
const LAST_RUN = join(ROOT, 'bench/cluster/last-run.md');
const POSTGRES = 'postgres://postgres@127.0.0.1:5432';
const ROOT_PASSWORD = 'cluster bench root password';
const AUTHORIZATION = `Basic ${Buffer.from(`root:${ROOT_PASSWORD}`).toString('base64')}`;
const API = '/v2.7/email-validations';
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
/** PostgreSQL 15 flushes a backend's counters to pg_stat_database at most once a second, when it is idle. */
const STATS_FLUSH_MS = 1_500;
/** The verifier's default cap per exchanger (packages/mailverify/src/engine/smtp pool); there is no flag for it. */
const PER_EXCHANGER_CAP = 3;
const RUN_TIMEOUT_MS = 20 * 60_000;

const argument = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = process.argv.includes('--quick');
const ADDRESSES = Number(argument('addresses') ?? (quick ? 10_000 : 100_000));
const DOMAINS = Number(argument('domains') ?? (quick ? 200 : 2_000));
const ROUNDS = Number(argument('rounds') ?? (quick ? 1 : 2));

interface LabKind {
  readonly name: 'delay' | 'cpu';
  readonly title: string;
  readonly replyDelayMs: number;
  readonly dnsDelayMs: number;
}
const LABS: LabKind[] = [
  { name: 'delay', title: 'SMTP replies 30 ms late, DNS 5 ms', replyDelayMs: 30, dnsDelayMs: 5 },
  { name: 'cpu', title: 'no delay (CPU-bound)', replyDelayMs: 0, dnsDelayMs: 0 },
];

interface Config {
  readonly name: string;
  /** 0: embedded. */
  readonly workers: number;
}
const CONFIGS: Config[] = [
  { name: 'embedded', workers: 0 },
  { name: 'cluster-1', workers: 1 },
  { name: 'cluster-2', workers: 2 },
  { name: 'cluster-4', workers: 4 },
];

/** The answer each category must get at quality Standard (one pass: greylisting stays unanswered). */
const EXPECTED: Record<Category, string> = {
  existing: 'Success',
  missing: 'MailboxDoesNotExist',
  'catch-all': 'ServerIsCatchAll',
  greylisting: 'MailboxTemporarilyUnavailable',
};

interface Measure {
  readonly lab: LabKind['name'];
  readonly config: string;
  readonly round: number;
  readonly wallS: number;
  /** CPU seconds, ready to Completed. */
  readonly cpuApiS: number;
  readonly cpuWorkersS: number;
  readonly cpuPostgresS: number;
  readonly cpuRedisS: number;
  readonly cpuLabS: number;
  readonly maxPerExchanger: number;
  readonly maxTotal: number;
  readonly connections: number;
  readonly rcpts: number;
  readonly pgCommits: number;
  readonly pgInserted: number;
  readonly pgUpdated: number;
  readonly pgFetched: number;
  readonly pgReturned: number;
  readonly redisCommands: number;
  readonly redisTop: [string, number][];
  /** Bytes of the entries table (with its indexes and TOAST) at the end: cluster runs only. */
  readonly entriesTableBytes: number;
  readonly databaseBytes: number;
  /** "category → status: count" lines, and the number of wrong answers. */
  readonly answers: Map<string, number>;
  readonly wrong: number;
}

/** utime + stime of a process (all its threads), in seconds; 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

const sumCpu = (pids: readonly number[]): number => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);

async function call<T>(origin: string, method: string, path: string, body?: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: { authorization: AUTHORIZATION, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body }),
  });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? {} : JSON.parse(text)) as T };
}

/** Submits the addresses as one job; resolves with its id and the time from the POST to Completed. */
async function runJob(origin: string, bench: Bench, afterSubmit?: () => Promise<void>): Promise<{ id: string; wallMs: number }> {
  const body = JSON.stringify({ entries: bench.addresses.map((entry) => ({ inputData: entry.address })) });
  const started = performance.now();
  const answer = await call<{ overview: { id: string }; detail?: string }>(origin, 'POST', API, body);
  if (answer.status !== 202) throw new Error(`POST: ${answer.status} ${answer.body.detail}`);
  const id = answer.body.overview.id;
  await afterSubmit?.();
  for (;;) {
    const overview = await call<{ status: string }>(origin, 'GET', `${API}/${id}/overview?waitTime=30000`);
    if (overview.body.status === 'Completed') break;
    if ((overview.status !== 200 && overview.status !== 202) || overview.body.status !== 'InProgress') {
      throw new Error(`job ${id}: ${overview.status} ${JSON.stringify(overview.body)}`);
    }
    if (performance.now() - started > RUN_TIMEOUT_MS) throw new Error(`job ${id} not completed in ${RUN_TIMEOUT_MS / 60_000} min`);
  }
  return { id, wallMs: performance.now() - started };
}

/** Every entry, page by page, checked against the truth: each index once, every answer the expected one. */
async function checkEntries(origin: string, id: string, bench: Bench): Promise<{ answers: Map<string, number>; wrong: number }> {
  const answers = new Map<string, number>();
  let wrong = 0;
  let next = 0;
  let cursor: string | undefined;
  for (;;) {
    const query = new URLSearchParams({ limit: '1000', ...(cursor !== undefined && { cursor }) });
    const page = await call<{ meta: { cursor?: string; isTruncated: boolean }; data: { index: number; inputData: string; status: string }[] }>(origin, 'GET', `${API}/${id}/entries?${query}`);
    if (page.status !== 200) throw new Error(`entries: ${page.status}`);
    for (const entry of page.body.data) {
      const truth = bench.addresses[entry.index];
      if (entry.index !== next || truth === undefined || truth.address !== entry.inputData) throw new Error(`entry ${entry.index} (${entry.inputData}) where ${next} was expected`);
      next++;
      const key = `${truth.category} → ${entry.status}`;
      answers.set(key, (answers.get(key) ?? 0) + 1);
      if (entry.status !== EXPECTED[truth.category]) wrong++;
    }
    if (!page.body.meta.isTruncated) break;
    cursor = page.body.meta.cursor;
  }
  if (next !== bench.addresses.length) throw new Error(`${next} entries read, not ${bench.addresses.length}`);
  return { answers, wrong };
}

/** The lab's per-server peak of open connections, the lab-wide peak, connections and RCPTs. */
function labFigures(lab: MailLab): { maxPerExchanger: number; maxTotal: number; connections: number; rcpts: number } {
  let maxPerExchanger = 0;
  for (const name of lab.servers) maxPerExchanger = Math.max(maxPerExchanger, lab.stats(name).maxConcurrent);
  const total = lab.stats();
  return { maxPerExchanger, maxTotal: total.maxConcurrent, connections: total.connections, rcpts: total.rcpts };
}

function verifierArgs(lab: MailLab): string[] {
  return [
    '--dns-server', lab.dnsAddress,
    '--smtp-port', String(lab.port),
    '--allow-private-addresses',
    '--helo-name', 'probe.mailverify-lab.com',
    '--mail-from', 'bounce@mailverify-lab.com',
  ];
}

const ENV = { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD, MAILVERIFY_LOG_LEVEL: 'warn' };

interface PgCounters {
  commits: number;
  inserted: number;
  updated: number;
  fetched: number;
  returned: number;
}

async function pgCounters(admin: pg.Client, database: string): Promise<PgCounters> {
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await admin.query<{ c: string; i: string; u: string; f: string; r: string }>(
    'SELECT xact_commit AS c, tup_inserted AS i, tup_updated AS u, tup_fetched AS f, tup_returned AS r FROM pg_stat_database WHERE datname = $1',
    [database],
  );
  const row = rows[0]!;
  return { commits: Number(row.c), inserted: Number(row.i), updated: Number(row.u), fetched: Number(row.f), returned: Number(row.r) };
}

async function backendPids(admin: pg.Client, database: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
  return rows.map((row) => row.pid);
}

/** INFO stats' total_commands_processed and commandstats' calls per command, of the private Redis. */
function redisInfo(url: string): { total: number; byCommand: Map<string, number> } {
  const port = new URL(url).port;
  const text = execFileSync('redis-cli', ['-p', port, 'INFO', 'all']).toString();
  const total = Number(/total_commands_processed:(\d+)/.exec(text)?.[1] ?? NaN);
  const byCommand = new Map<string, number>();
  for (const match of text.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) byCommand.set(match[1]!, Number(match[2]));
  return { total, byCommand };
}

function redisPid(url: string): number {
  const port = new URL(url).port;
  const text = execFileSync('redis-cli', ['-p', port, 'INFO', 'server']).toString();
  return Number(/process_id:(\d+)/.exec(text)?.[1]);
}

async function measureEmbedded(lab: MailLab, kind: LabKind, bench: Bench, round: number): Promise<Measure> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-bench-cluster-'));
  let serve: ServeProcess | undefined;
  try {
    serve = await startServe(['--data-dir', dir, ...verifierArgs(lab)], ENV);
    lab.reset();
    const pid = serve.child.pid!;
    const cpuBefore = cpuSeconds(pid);
    const labBefore = process.cpuUsage();
    const { id, wallMs } = await runJob(serve.origin, bench);
    const cpuApiS = cpuSeconds(pid) - cpuBefore;
    const labCpu = process.cpuUsage(labBefore);
    const figures = labFigures(lab);
    const { answers, wrong } = await checkEntries(serve.origin, id, bench);
    return {
      lab: kind.name, config: 'embedded', round, wallS: wallMs / 1000, cpuApiS, cpuWorkersS: 0, cpuPostgresS: 0, cpuRedisS: 0,
      cpuLabS: (labCpu.user + labCpu.system) / 1e6, ...figures,
      pgCommits: 0, pgInserted: 0, pgUpdated: 0, pgFetched: 0, pgReturned: 0, redisCommands: 0, redisTop: [], entriesTableBytes: 0, databaseBytes: 0,
      answers, wrong,
    };
  } finally {
    await serve?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureCluster(lab: MailLab, kind: LabKind, bench: Bench, round: number, config: Config, admin: pg.Client): Promise<Measure> {
  const database = `mailverify_bench_${process.pid}_${kind.name}_${config.workers}_${round}`;
  await admin.query(`CREATE DATABASE ${database}`);
  let redis: PrivateRedis | undefined;
  let api: ServeProcess | undefined;
  const workers: WorkerProcess[] = [];
  try {
    redis = await startPrivateRedis();
    const args = ['--store', `${POSTGRES}/${database}`, '--queue', redis.url, '--cluster-prefix', `bench${process.pid}`, ...verifierArgs(lab)];
    api = await startServe(['--workers', '0', ...args], ENV);
    const profile = argument('worker-cpu-prof');
    for (let n = 0; n < config.workers; n++) workers.push(await startWorker(args, profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profile]));
    lab.reset();
    await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS));
    const workerPids = workers.map((worker) => worker.child.pid!);
    const apiPid = api.child.pid!;
    const redisProcess = redisPid(redis.url);
    const backends = await backendPids(admin, database);
    const backendCpu = new Map(backends.map((pid) => [pid, cpuSeconds(pid)]));
    const before = {
      api: cpuSeconds(apiPid), workers: sumCpu(workerPids), redis: cpuSeconds(redisProcess),
      pg: await pgCounters(admin, database), redis_: redisInfo(redis.url), lab: process.cpuUsage(),
    };
    // --analyze: statistics for the new job's entries at once, instead of whenever autovacuum gets to them.
    const analyze = async (): Promise<void> => {
      if (!process.argv.includes('--analyze')) return;
      const client = new pg.Client({ connectionString: `${POSTGRES}/${database}` });
      await client.connect();
      await client.query('ANALYZE entries');
      await client.end();
    };
    const { id, wallMs } = await runJob(api.origin, bench, analyze);
    const redisAfter = redisInfo(redis.url);
    const cpuApiS = cpuSeconds(apiPid) - before.api;
    const cpuWorkersS = sumCpu(workerPids) - before.workers;
    // Backends opened during the run count from their start; backends closed during it are missed (said below).
    const backendsAfter = await backendPids(admin, database);
    const lost = backends.filter((pid) => !backendsAfter.includes(pid)).length;
    const cpuPostgresS = backendsAfter.reduce((sum, pid) => sum + cpuSeconds(pid) - (backendCpu.get(pid) ?? 0), 0);
    const cpuRedisS = cpuSeconds(redisProcess) - before.redis;
    const labCpu = process.cpuUsage(before.lab);
    const figures = labFigures(lab);
    await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS));
    const pgAfter = await pgCounters(admin, database);
    if (lost > 0) console.log(`  (${lost} PostgreSQL backends closed during the run: their CPU is not counted)`);
    const top = [...redisAfter.byCommand].map(([command, calls]) => [command, calls - (before.redis_.byCommand.get(command) ?? 0)] as [string, number]).sort((a, b) => b[1] - a[1]).slice(0, 6);
    const client = new pg.Client({ connectionString: `${POSTGRES}/${database}` });
    await client.connect();
    const sizes = await client.query<{ entries: string; db: string }>("SELECT pg_total_relation_size(to_regclass('entries')) AS entries, pg_database_size(current_database()) AS db");
    await client.end();
    const { answers, wrong } = await checkEntries(api.origin, id, bench);
    return {
      lab: kind.name, config: config.name, round, wallS: wallMs / 1000, cpuApiS, cpuWorkersS, cpuPostgresS, cpuRedisS,
      cpuLabS: (labCpu.user + labCpu.system) / 1e6, ...figures,
      pgCommits: pgAfter.commits - before.pg.commits,
      pgInserted: pgAfter.inserted - before.pg.inserted,
      pgUpdated: pgAfter.updated - before.pg.updated,
      pgFetched: pgAfter.fetched - before.pg.fetched,
      pgReturned: pgAfter.returned - before.pg.returned,
      redisCommands: redisAfter.total - before.redis_.total,
      redisTop: top,
      entriesTableBytes: Number(sizes.rows[0]!.entries),
      databaseBytes: Number(sizes.rows[0]!.db),
      answers, wrong,
    };
  } finally {
    await Promise.all(workers.map((worker) => (worker.child.kill('SIGTERM'), worker.exited)));
    await api?.stop();
    await redis?.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const range = (values: number[], digits: number): string => (values.length > 1 ? ` (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})` : '');
const µs = (seconds: number): number => (seconds / ADDRESSES) * 1e6;
const cpuService = (m: Measure): number => m.cpuApiS + m.cpuWorkersS;
const cpuAll = (m: Measure): number => cpuService(m) + m.cpuPostgresS + m.cpuRedisS;

function report(results: Measure[], header: string[]): string {
  const lines = [...header, ''];
  for (const kind of LABS) {
    const own = results.filter((m) => m.lab === kind.name);
    if (own.length === 0) continue;
    lines.push(`### Lab: ${kind.title}`, '');
    lines.push(
      '| configuration | wall time s | × embedded | CPU µs/address: mailverify processes | of which API | PostgreSQL backends | redis-server | all | × embedded (all) | most connections to one exchanger (cap) | most connections in all | PG commits /address | PG rows ins+upd+fetched /address | Redis commands /address | wrong answers |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    const embedded = own.filter((m) => m.config === 'embedded');
    const embeddedWall = median(embedded.map((m) => m.wallS));
    const embeddedCpu = median(embedded.map(cpuAll));
    for (const config of CONFIGS) {
      const runs = own.filter((m) => m.config === config.name);
      if (runs.length === 0) continue;
      const wall = runs.map((m) => m.wallS);
      const all = runs.map(cpuAll);
      const cluster = config.workers > 0;
      lines.push(
        `| ${config.name} | ${median(wall).toFixed(2)}${range(wall, 2)} | ${embedded.length > 0 ? (median(wall) / embeddedWall).toFixed(2) + '×' : '–'} | ${µs(median(runs.map(cpuService))).toFixed(0)}${range(runs.map((m) => µs(cpuService(m))), 0)} | ${µs(median(runs.map((m) => m.cpuApiS))).toFixed(0)} | ${cluster ? µs(median(runs.map((m) => m.cpuPostgresS))).toFixed(0) : '–'} | ${cluster ? µs(median(runs.map((m) => m.cpuRedisS))).toFixed(0) : '–'} | ${µs(median(all)).toFixed(0)} | ${embedded.length > 0 ? (median(all) / embeddedCpu).toFixed(2) + '×' : '–'} | ${Math.max(...runs.map((m) => m.maxPerExchanger))} (${PER_EXCHANGER_CAP}) | ${Math.max(...runs.map((m) => m.maxTotal))} | ${cluster ? (median(runs.map((m) => m.pgCommits)) / ADDRESSES).toFixed(3) : '–'} | ${cluster ? (median(runs.map((m) => m.pgInserted + m.pgUpdated + m.pgFetched)) / ADDRESSES).toFixed(2) : '–'} | ${cluster ? (median(runs.map((m) => m.redisCommands)) / ADDRESSES).toFixed(2) : '–'} | ${Math.max(...runs.map((m) => m.wrong))} |`,
      );
    }
    lines.push('');
    lines.push('Runs one by one (CPU in seconds: mailverify processes / PostgreSQL backends / redis-server / the lab, in the benchmark process):', '');
    lines.push('| round | configuration | wall s | CPU s | connections | RCPTs | PG commits | PG inserted / updated / fetched / returned | Redis commands (top) | entries table | database |', '|---:|---|---:|---|---:|---:|---:|---|---|---:|---:|');
    for (const m of own) {
      lines.push(
        `| ${m.round} | ${m.config} | ${m.wallS.toFixed(2)} | ${cpuService(m).toFixed(2)} / ${m.cpuPostgresS.toFixed(2)} / ${m.cpuRedisS.toFixed(2)} / ${m.cpuLabS.toFixed(2)} | ${m.connections} | ${m.rcpts} | ${m.pgCommits} | ${m.pgInserted} / ${m.pgUpdated} / ${m.pgFetched} / ${m.pgReturned} | ${m.redisCommands}${m.redisTop.length > 0 ? ` (${m.redisTop.map(([c, n]) => `${c} ${n}`).join(', ')})` : ''} | ${m.entriesTableBytes > 0 ? `${(m.entriesTableBytes / 1024 / 1024).toFixed(1)} MiB` : '–'} | ${m.databaseBytes > 0 ? `${(m.databaseBytes / 1024 / 1024).toFixed(1)} MiB` : '–'} |`,
      );
    }
    lines.push('');
    const first = own[0]!;
    lines.push(`Answers (${first.config}, round ${first.round}; every run's counts ${own.every((m) => sameAnswers(m.answers, first.answers)) ? 'are the same' : 'are NOT all the same'}):`, '');
    for (const [key, count] of [...first.answers].sort()) lines.push(`- ${key}: ${count}`);
    lines.push('');
  }
  return lines.join('\n');
}

function sameAnswers(a: Map<string, number>, b: Map<string, number>): boolean {
  return a.size === b.size && [...a].every(([key, count]) => b.get(key) === count);
}

async function main(): Promise<void> {
  const labs = LABS.filter((kind) => argument('labs')?.split(',').includes(kind.name) ?? true);
  const configs = CONFIGS.filter((config) => argument('configs')?.split(',').includes(config.name) ?? true);
  const shape = { addresses: ADDRESSES, domains: DOMAINS, catchAllDomains: DOMAINS / 20, greylistingDomains: DOMAINS / 50, existingShare: 0.6, greylistMs: 3_600_000, seed: 20261127 };
  const bench = buildBench(shape);
  const counts = new Map<Category, number>();
  for (const entry of bench.addresses) counts.set(entry.category, (counts.get(entry.category) ?? 0) + 1);
  const header = [
    `Cluster benchmark, ${new Date().toISOString()}: ${cpus().length} cores (${cpus()[0]?.model}), Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(', ')} at the start.`,
    `${ADDRESSES.toLocaleString('en')} addresses over ${DOMAINS.toLocaleString('en')} domains, one exchanger (lab server) per domain, as one job (JSON POST); ${ROUNDS} round(s), configurations interleaved; medians, min–max in brackets.`,
    `Truth: ${[...counts].map(([category, count]) => `${count} ${category}`).join(', ')}.`,
  ];
  console.log(header.join('\n'));
  const admin = new pg.Client({ connectionString: `${POSTGRES}/postgres` });
  await admin.connect();
  const results: Measure[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const kind of round % 2 === 1 ? labs : [...labs].reverse()) {
        const lab = await startMailLab(labScenario(bench, { replyDelayMs: kind.replyDelayMs, dnsDelayMs: kind.dnsDelayMs, port: 0 }));
        try {
          const shift = (round - 1) % configs.length;
          for (const config of [...configs.slice(shift), ...configs.slice(0, shift)]) {
            const m = config.workers === 0 ? await measureEmbedded(lab, kind, bench, round) : await measureCluster(lab, kind, bench, round, config, admin);
            results.push(m);
            // The table so far, so that a run stopped early still leaves what it measured.
            if (!quick) writeFileSync(LAST_RUN, `${report(results, [...header, `(after ${results.length} runs)`])}\n`);
            console.log(
              `round ${round}, ${kind.name}, ${config.name}: ${m.wallS.toFixed(2)} s, CPU ${µs(cpuService(m)).toFixed(0)} µs/address (+ PG ${µs(m.cpuPostgresS).toFixed(0)}, Redis ${µs(m.cpuRedisS).toFixed(0)}; lab ${µs(m.cpuLabS).toFixed(0)}), most per exchanger ${m.maxPerExchanger}, in all ${m.maxTotal}, PG commits ${m.pgCommits}, rows ${m.pgInserted}/${m.pgUpdated}/${m.pgFetched}, Redis ${m.redisCommands}${m.redisTop.length > 0 ? ` (${m.redisTop.map(([c, n]) => `${c} ${n}`).join(', ')})` : ''}, entries table ${(m.entriesTableBytes / 1048576).toFixed(1)} MiB, wrong ${m.wrong}`,
            );
          }
        } finally {
          await lab.close();
        }
      }
    }
  } finally {
    await admin.end();
  }
  header.push(`Load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(', ')}.`);
  const text = report(results, header);
  console.log(`\n${text}`);
  if (!quick) writeFileSync(LAST_RUN, `${text}\n`);
  const wrong = results.filter((m) => m.wrong > 0);
  if (wrong.length > 0) {
    console.error(`wrong answers in ${wrong.length} run(s)`);
    process.exitCode = 1;
  }
}

await main();
