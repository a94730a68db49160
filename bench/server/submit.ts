/**
 * Submission benchmark: how long another client's GET waits while the server takes a large JSON submission, and the
 * server's peak RSS for it, for this build and a baseline (another git revision's sources, main by default).
 *
 * Scenarios: a floor (the same probing of an idle server for 10 s: what the machine's load alone costs a GET); one
 * 1,000,000-entry JSON body; with --concurrent, 50 bodies of 10,000 entries at once, their jobs waiting on DNS, and
 * the same 50 with their jobs running (syntax checks), the GETs going on until every job is Completed. For each, a fresh server process
 * (bench/server/server.ts, offline verifier, fresh data folder) and a prober in a process of its own that sends
 * `GET /v2.7/email-validations?limit=1` every 20 ms (keep-alive, never waiting for the one before) from 200 ms before
 * the upload to its answer. The stall is the longest time of a GET sent while the body was being sent (and, apart,
 * of any sent up to the answer, which also waits for the job's first steps); beside it, the server's own longest
 * event-loop stall during the upload (bench/server/server.ts's stall log, gaps over 50 ms). The peak RSS is the server's VmHWM from
 * just before the upload to the moment the (last) 202 is handed to the socket, against its idle RSS. The builds are
 * interleaved, run after run, the order turned round every run.
 *
 *   npm run bench:submit                       # 3 runs of each build and scenario, baseline main
 *   npm run bench:submit -- --runs=5 --baseline=<git revision> --concurrent
 *
 * The results are printed as markdown and written to bench/server/submit-last-run.md.
 */
import { execFileSync, execSync, fork } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { AUTHORIZATION, startServer } from './process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url)); // this bundle is in bench/.out/
const OUT = join(ROOT, 'bench/.out');
const LAST_RUN = join(ROOT, 'bench/server/submit-last-run.md');
const PROBE_INTERVAL_MS = 20;
/** How long the floor is probed: an idle server, no upload (about as long as the big upload). */
const IDLE_MS = 10_000;
const MB = 1024 * 1024;

interface ProbeResult {
  /** Each GET: when it was sent (shared clock: performance.timeOrigin + performance.now()) and how long it took. */
  readonly gets: [sentAt: number, ms: number][];
  readonly failures: number;
}

const sharedClock = (): number => performance.timeOrigin + performance.now();


/** The prober process: GETs at a fixed interval between `start` and `stop`, then their times. */
async function probe(port: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const gets: [number, number][] = [];
  const outstanding = new Set<Promise<void>>();
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  const get = (): void => {
    const start = performance.now();
    const sentAt = sharedClock();
    const done = new Promise<void>((resolve) => {
      const request = httpRequest({ host: '127.0.0.1', port, path: '/v2.7/email-validations?limit=1', agent, headers: { authorization: AUTHORIZATION } }, (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode !== 200) failures++;
          gets.push([sentAt, performance.now() - start]);
          resolve();
        });
      });
      request.on('error', () => {
        failures++;
        resolve();
      });
      request.end();
    });
    outstanding.add(done);
    void done.then(() => outstanding.delete(done));
  };
  process.on('message', (message: string) => {
    if (message === 'start') {
      timer = setInterval(get, PROBE_INTERVAL_MS);
    } else if (message === 'stop') {
      clearInterval(timer);
      void Promise.all(outstanding).then(() => {
        const result: ProbeResult = { gets, failures };
        agent.destroy();
        process.send!(result, () => process.disconnect());
      });
    }
  });
  process.send!('ready');
}

/** The body of a job of `count` entries, as one Buffer. */
function jobBody(count: number, offset = 0): Buffer {
  const parts: string[] = ['{"quality":"Standard","entries":['];
  for (let i = 0; i < count; i++) {
    const n = offset + i;
    parts.push(`${i === 0 ? '' : ','}{"inputData":"user${n}@example${n % 1000}.com","custom":"c${n}"}`);
  }
  parts.push(']}');
  return Buffer.from(parts.join(''));
}

/** A POST of `body`: the entries of the job made, and when its last byte was handed to the socket (shared clock). */
function post(port: number, body: Buffer): Promise<{ id: string; entries: number; sentAt: number }> {
  return new Promise((resolve, reject) => {
    let sentAt = 0;
    const request = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path: '/v2.7/email-validations', headers: { authorization: AUTHORIZATION, 'content-type': 'application/json', 'content-length': body.length } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { overview?: { id: string; noOfEntries: number }; detail?: string };
          if (response.statusCode !== 202 && response.statusCode !== 200) reject(new Error(`${response.statusCode}: ${answer.detail}`));
          else resolve({ id: answer.overview!.id, entries: answer.overview!.noOfEntries, sentAt });
        });
      },
    );
    request.on('error', reject);
    request.end(body, () => {
      sentAt = sharedClock();
    });
  });
}

/** Waits until every job is Completed, looking every 250 ms; when the last one was seen completed (shared clock). */
async function jobsCompleted(port: number, ids: readonly string[]): Promise<number> {
  const left = new Set(ids);
  for (;;) {
    for (const id of [...left]) {
      const answer = await fetch(`http://127.0.0.1:${port}/v2.7/email-validations/${id}`, { headers: { authorization: AUTHORIZATION } });
      const job = (await answer.json()) as { overview?: { status: string } };
      if (job.overview?.status === 'Completed') left.delete(id);
    }
    if (left.size === 0) return sharedClock();
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The baseline's server.ts bundled from its revision's sources (src/ before the split into packages/, with the
 * tsconfig that maps the packages' names to their sources after it); the npm packages are this checkout's.
 */
function buildBaseline(revision: string): string {
  const dir = join(OUT, 'baseline-src');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tree = execSync(`git ls-tree --name-only ${JSON.stringify(revision)}`, { cwd: ROOT, encoding: 'utf8' }).split('\n');
  const paths = ['src', 'packages', 'tsconfig.json', 'tsconfig.base.json'].filter((path) => tree.includes(path));
  execSync(`git archive --format=tar ${JSON.stringify(revision)} ${paths.join(' ')} bench/server | tar -x -C ${JSON.stringify(dir)}`, { cwd: ROOT });
  const script = join(OUT, 'server-bench-baseline.mjs');
  execFileSync(join(ROOT, 'node_modules/.bin/esbuild'), [
    join(dir, 'bench/server/server.ts'),
    '--bundle',
    '--platform=node',
    '--format=esm',
    '--packages=external',
    `--outfile=${script}`,
    '--log-level=warning',
  ]);
  return script;
}

interface Measure {
  readonly build: string;
  readonly scenario: string;
  /** The longest GET sent while the body (the last of the bodies) was being sent. */
  readonly uploadStallMs: number;
  /** The server's longest event-loop stall (over 50 ms) from the first byte of the upload to its last. */
  readonly loopStallMs: number;
  /** The longest GET sent up to the (last) answer: also the job's first steps, which come before the answer. */
  readonly stallMs: number;
  readonly p99Ms: number;
  /** GETs sent from the last answer to the jobs' end (scenarios whose jobs run): their median and p99. */
  readonly runMedianMs: number | null;
  readonly runP99Ms: number | null;
  /** From the last answer to the jobs' end. */
  readonly runSeconds: number | null;
  readonly gets: number;
  readonly peakRssMb: number;
  readonly idleRssMb: number;
  readonly seconds: number;
}

async function measure(build: string, script: string | undefined, scenario: Scenario, dnsPort: number): Promise<Measure> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-bench-submit-'));
  // The jobs' DNS queries go to a server that never answers: once submitted, a job waits instead of taking the CPU,
  // and the GETs measure the submissions alone.
  // A scenario whose jobs run checks syntax only: its jobs take the CPU, as many offline jobs would.
  const verifier = scenario.run
    ? { checks: 'syntax' as const }
    : { checks: 'dns' as const, allowPrivateAddresses: true, dns: { servers: [`127.0.0.1:${dnsPort}`], timeoutMs: 60_000 } };
  const flags = process.argv.find((a) => a.startsWith('--server-flags='))?.slice(15).split(' ') ?? [];
  // The prober opens a connection for every GET that waits (one each 20 ms): no cap on one address's connections.
  const server = await startServer(dir, verifier, flags, script, { maxConnectionsPerAddress: 0 });
  const prober = fork(fileURLToPath(import.meta.url), ['--prober', String(server.port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    await new Promise<void>((resolve) => prober.once('message', () => resolve()));
    await server.mark();
    prober.send('start');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const start = performance.now();
    const uploadStart = sharedClock();
    if (scenario.bodies.length === 0) await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const answers = await Promise.all(scenario.bodies.map((body) => post(server.port, body)));
    const entries = answers.reduce((sum, answer) => sum + answer.entries, 0);
    const uploadEnd = answers.length === 0 ? sharedClock() : Math.max(...answers.map((answer) => answer.sentAt));
    const seconds = (performance.now() - start) / 1000;
    const lastAnswer = sharedClock();
    const runEnd = scenario.run ? await jobsCompleted(server.port, answers.map((answer) => answer.id)) : null;
    const result = await new Promise<ProbeResult>((resolve) => {
      prober.once('message', (message: ProbeResult) => resolve(message));
      prober.send('stop');
    });
    if (entries !== scenario.entries) throw new Error(`${build}: ${entries} entries stored, not ${scenario.entries}`);
    if (result.failures > 0) throw new Error(`${build}: ${result.failures} GETs failed`);
    const stats = await server.stats();
    const peak = stats.postReply?.peakRssMb ?? stats.peakRssMb ?? stats.sampledPeakRssMb;
    if (process.argv.includes('--stalls')) console.log(stats.stalls.slice(0, 5).map((s) => `${(s.end - s.start).toFixed(0)} ms at ${(s.start - performance.timeOrigin - start).toFixed(0)}`).join(', '), `idle ${server.idle.rssMb.toFixed(0)} MB, heap ${stats.heapUsedMb.toFixed(0)} MB`);
    const times = result.gets.map(([, ms]) => ms).sort((a, b) => a - b);
    const uploadTimes = result.gets.filter(([sentAt]) => sentAt <= uploadEnd).map(([, ms]) => ms);
    const toAnswer = result.gets.filter(([sentAt]) => sentAt <= lastAnswer).map(([, ms]) => ms).sort((a, b) => a - b);
    const running = result.gets.filter(([sentAt]) => sentAt > lastAnswer).map(([, ms]) => ms).sort((a, b) => a - b);
    return {
      build,
      scenario: scenario.name,
      uploadStallMs: Math.max(0, ...uploadTimes),
      loopStallMs: Math.max(0, ...stats.stalls.filter((stall) => stall.end > uploadStart && stall.start < uploadEnd).map((stall) => stall.end - stall.start)),
      stallMs: toAnswer.at(-1) ?? 0,
      p99Ms: toAnswer[Math.floor(toAnswer.length * 0.99)] ?? 0,
      runMedianMs: runEnd === null ? null : (running[Math.floor(running.length / 2)] ?? 0),
      runP99Ms: runEnd === null ? null : (running[Math.floor(running.length * 0.99)] ?? 0),
      runSeconds: runEnd === null ? null : (runEnd - lastAnswer) / 1000,
      gets: times.length, peakRssMb: peak, idleRssMb: server.idle.rssMb, seconds };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Scenario {
  readonly name: string;
  readonly bodies: Buffer[];
  readonly entries: number;
  /** The jobs run (offline) and the GETs go on to their end. */
  readonly run?: boolean;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** The median and p99 of the GETs while the jobs ran (medians over the runs, the worst p99 in brackets). */
function runFigures(own: readonly Measure[]): string {
  if (own.length === 0 || own[0]!.runP99Ms === null) return '—';
  const p99 = own.map((r) => r.runP99Ms!);
  return `${median(own.map((r) => r.runMedianMs!)).toFixed(0)} ms, ${median(p99).toFixed(0)} ms (${Math.max(...p99).toFixed(0)})`;
}

async function main(): Promise<void> {
  const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 3);
  const revision = process.argv.find((a) => a.startsWith('--baseline='))?.slice(11) ?? 'main';
  const baseline = buildBaseline(revision);
  const builds: { name: string; script: string | undefined }[] = [
    { name: `baseline (${revision})`, script: baseline },
    { name: 'this build', script: undefined },
  ];
  const scenarios: Scenario[] = [
    { name: 'floor: no upload, 10 s', bodies: [], entries: 0 },
    { name: 'one body of 1,000,000 entries', bodies: [jobBody(1_000_000)], entries: 1_000_000 },
  ];
  // Opt-in: the jobs of the first answered bodies run while the others upload, and their work (DNS queries by the
  // hundred thousand) outweighs the submissions'.
  if (process.argv.includes('--concurrent')) {
    const bodies = Array.from({ length: 50 }, (_, i) => jobBody(10_000, i * 10_000));
    scenarios.push({ name: '50 bodies of 10,000 entries at once', bodies, entries: 500_000 });
    scenarios.push({ name: '50 bodies of 10,000 entries at once, jobs run (syntax)', bodies, entries: 500_000, run: true });
  }
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
  // For a quick look while working: --only=this (no baseline), --only=1m (the big body only), or both.
  if (only?.includes('this') === true) builds.shift();
  if (only?.includes('1m') === true) scenarios.splice(0, scenarios.length, scenarios[1]!);
  // --only=50: the 50 bodies, jobs waiting and jobs running (with --concurrent).
  if (only?.includes('50') === true) scenarios.splice(0, scenarios.length, ...scenarios.filter((scenario) => scenario.bodies.length === 50));
  const silentDns = createSocket('udp4');
  await new Promise<void>((resolve) => silentDns.bind(0, '127.0.0.1', resolve));
  const dnsPort = silentDns.address().port;
  const load = loadavg()[0]!.toFixed(2);
  console.log(`${cpus().length} cores, load ${load}; ${runs} runs; bodies ${scenarios.map((s) => `${(s.bodies.reduce((sum, body) => sum + body.length, 0) / MB).toFixed(1)} MiB`).join(', ')}`);
  const results: Measure[] = [];
  for (let run = 0; run < runs; run++) {
    for (const scenario of scenarios) {
      for (const build of run % 2 === 0 ? builds : [...builds].reverse()) {
        const result = await measure(build.name, build.script, scenario, dnsPort);
        results.push(result);
        console.log(`run ${run + 1} ${scenario.name}, ${build.name}: longest GET ${result.uploadStallMs.toFixed(0)} ms during the upload (loop ${result.loopStallMs.toFixed(0)} ms), ${result.stallMs.toFixed(0)} ms to the 202, peak RSS ${result.peakRssMb.toFixed(0)} MB, ${result.seconds.toFixed(1)} s${result.runP99Ms === null ? '' : `; jobs running: GET median ${result.runMedianMs!.toFixed(0)} ms, p99 ${result.runP99Ms.toFixed(0)} ms, ${result.runSeconds!.toFixed(1)} s`}`);
      }
    }
  }
  const lines = [
    `Submission benchmark, ${new Date().toISOString()}: ${cpus().length} cores, load ${load} at the start, ${runs} runs per build and scenario (interleaved). Medians, worst in brackets.`,
    '',
    '| scenario | build | longest GET wait during the upload | server loop stall during the upload | longest GET wait to the 202 | p99 GET wait to the 202 | GET wait while the jobs run: median, p99 | GETs | server peak RSS (idle) | upload to 202 | 202 to the jobs\' end |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const scenario of scenarios) {
    for (const build of builds) {
      const own = results.filter((r) => r.scenario === scenario.name && r.build === build.name);
      const stall = own.map((r) => r.stallMs);
      const uploadStall = own.map((r) => r.uploadStallMs);
      const loopStall = own.map((r) => r.loopStallMs);
      const peak = own.map((r) => r.peakRssMb);
      lines.push(
        `| ${scenario.name} | ${build.name} | ${median(uploadStall).toFixed(0)} ms (${Math.max(...uploadStall).toFixed(0)}) | ${median(loopStall).toFixed(0)} ms (${Math.max(...loopStall).toFixed(0)}) | ${median(stall).toFixed(0)} ms (${Math.max(...stall).toFixed(0)}) | ${median(own.map((r) => r.p99Ms)).toFixed(0)} ms | ${runFigures(own)} | ${median(own.map((r) => r.gets)).toFixed(0)} | ${median(peak).toFixed(0)} MB (${Math.max(...peak).toFixed(0)}; idle ${median(own.map((r) => r.idleRssMb)).toFixed(0)}) | ${median(own.map((r) => r.seconds)).toFixed(1)} s | ${own[0]?.runSeconds === null ? '—' : `${median(own.map((r) => r.runSeconds!)).toFixed(1)} s`} |`,
      );
    }
  }
  const text = lines.join('\n');
  console.log(`\n${text}`);
  writeFileSync(LAST_RUN, `${text}\n`);
  silentDns.close();
}

if (process.argv[2] === '--prober') await probe(Number(process.argv[3]));
else await main();
