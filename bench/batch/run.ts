/**
 * Batch benchmark: mailverify's verifyMany against the npm verifiers that probe SMTP, on one loopback mail lab with
 * a reply delay per SMTP write (a delay line: pipelined replies share one round trip) and its own authoritative DNS.
 * The lab runs here; each verifier runs in its own child process (worker.mjs), the peers with preload.mjs pointing
 * their system resolver at the lab. The peers hard-code port 25, so the lab binds port 25 on 127.0.x.y; when that
 * is refused, the benchmark runs itself again inside `unshare -rn` (a network namespace of its own, lo up).
 *
 *   npm run bench:batch                      # build, then 3 interleaved runs of every verifier (about 1 minute)
 *   npm run bench:batch -- --quick           # 400 addresses over 20 domains, one run each
 *   npm run bench:batch -- --runs=5 --only=mailverify,deep-email-validator   # ids: mailverify, mailverify-high,
 *                                                                            # deep-email-validator, devmehq
 *   npm run bench:batch -- --million         # one million addresses through verifyMany, zero delay (million.ts)
 *   npm run bench:batch -- --repeat=4        # 4 lists of distinct addresses per process: CPU of the first and the others
 *   npm run bench:batch -- --base=/path/to/other/dist   # also "mailverify (base)": another build, same lab, interleaved
 *   npm run bench:batch -- --worker-flags='--cpu-prof --cpu-prof-dir=/tmp/prof'   # node flags of each worker
 *   npm run bench:batch -- --worker-wrapper='valgrind --tool=callgrind'       # each worker runs under this command
 *
 * See bench/README.md ("Batch benchmark") for the setup, the verdict mapping and the results.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMailLab, type MailLab } from '../../test/lab/mail-lab.js';
import { runMillion } from './million.js';
import { buildBench, CATEGORIES, isRight, labScenario, type Bench, type Category, type Shape, type Verdict } from './scenario.js';

const HERE = new URL('../batch/', import.meta.url); // bundled into bench/.out/: resolve from the source folder
const WORKER = fileURLToPath(new URL('worker.mjs', HERE));
const PRELOAD = fileURLToPath(new URL('preload.mjs', HERE));

export const SMTP_PORT = 25;
const REPLY_DELAY_MS = 30;
const DNS_DELAY_MS = 5;
const CONNECTION_CAP = 50;
const GREYLIST_MS = 1_000;
const PASS_DELAY_MS = 1_500;

const FULL: Shape = {
  addresses: 2_000,
  domains: 100,
  catchAllDomains: 10,
  greylistingDomains: 5,
  existingShare: 0.6,
  greylistMs: GREYLIST_MS,
  seed: 20_251_124,
};
const QUICK: Shape = { ...FULL, addresses: 400, domains: 20, catchAllDomains: 2, greylistingDomains: 1 };

interface Variant {
  /** For `--only`. */
  id: string;
  name: string;
  /** The worker's verifier. */
  verifier: string;
  peer: boolean;
  /** mailverify's createVerifier options beyond the common ones. */
  options?: Record<string, unknown>;
  /** Another build of mailverify (its dist folder). */
  dist?: string;
}

const VARIANTS: Variant[] = [
  { id: 'mailverify', name: 'mailverify (defaults)', verifier: 'mailverify', peer: false },
  {
    id: 'mailverify-high',
    name: `mailverify (quality High, passDelayMs ${PASS_DELAY_MS})`,
    verifier: 'mailverify',
    peer: false,
    options: { quality: 'High', passDelayMs: PASS_DELAY_MS },
  },
  { id: 'deep-email-validator', name: 'deep-email-validator 0.1.27', verifier: 'deep-email-validator', peer: true },
  {
    id: 'devmehq',
    name: '@devmehq/email-validator-js 2.10.2',
    verifier: '@devmehq/email-validator-js',
    peer: true,
  },
];

interface Measurement {
  wallMs: number;
  cpuMs: number;
  /** CPU time of each pass over the list (`--repeat`), the first included. */
  passCpuMs: number[];
  maxRssKb: number;
  connections: number;
  maxConcurrent: number;
  rcpts: number;
  dnsQueries: number;
  right: Record<Category, number>;
  /** How often each detail (mailverify status, peer reason) came back, for the notes. */
  details: Map<string, number>;
}

function argument(name: string): string | undefined {
  const prefix = `--${name}=`;
  const found = process.argv.find((a) => a === `--${name}` || a.startsWith(prefix));
  if (found === undefined) return undefined;
  return found.startsWith(prefix) ? found.slice(prefix.length) : '';
}

/** Binds port 25 or, if the system refuses, runs this same command again in a network namespace of its own. */
export async function startLabOrReexec(scenario: Parameters<typeof startMailLab>[0]): Promise<MailLab | undefined> {
  try {
    if (argument('netns') !== undefined && process.env.BENCH_IN_NETNS === undefined) throw codeError('--netns');
    return await startMailLab(scenario);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (!['EACCES', 'EADDRINUSE', '--netns'].includes(code ?? '') || process.env.BENCH_IN_NETNS !== undefined) {
      throw error;
    }
    const why = code === '--netns' ? '--netns' : `binding port ${SMTP_PORT} failed (${code})`;
    console.error(`${why}: running again inside unshare -rn`);
    const result = spawnSync(
      'unshare',
      ['-rn', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...process.argv.slice(1)],
      { stdio: 'inherit', env: { ...process.env, BENCH_IN_NETNS: '1' } },
    );
    process.exitCode = result.status ?? 1;
    return undefined;
  }
}

function codeError(code: string): Error {
  return Object.assign(new Error(code), { code });
}

async function runChild(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const [command, ...wrapperArgs] = [...(argument('worker-wrapper')?.split(' ').filter((word) => word !== '') ?? []), process.execPath];
    const child = spawn(command!, [...wrapperArgs, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')}: exit ${code}`))));
  });
}

/** The worker's JSON line: its last; what node printed before it (e.g. `--worker-flags=--trace-gc`) goes to stderr. */
function lastLine(out: string): string {
  const lines = out.trimEnd().split('\n');
  const last = lines.pop() ?? '';
  if (lines.length > 0) process.stderr.write(`${lines.join('\n')}\n`);
  return last;
}

async function settle(lab: MailLab): Promise<void> {
  for (let i = 0; i < 200 && lab.stats().open > 0; i++) await new Promise((r) => setTimeout(r, 10));
}

async function measure(lab: MailLab, bench: Bench, variant: Variant, dir: string, repeat: number): Promise<Measurement> {
  await settle(lab);
  lab.reset(); // counters, greylist memory and the DNS query log start over
  const inputsFile = join(dir, 'inputs.json');
  const optionsFile = join(dir, `options-${variant.id.replace(/\W/g, '_')}.json`);
  writeFileSync(
    optionsFile,
    JSON.stringify({ dns: lab.dnsAddress, port: lab.port, cap: CONNECTION_CAP, verifier: variant.options ?? {}, repeat, dist: variant.dist }),
  );
  const args = [
    ...(argument('worker-flags')?.split(' ').filter((flag) => flag !== '') ?? []),
    ...(variant.peer ? ['--import', PRELOAD] : []),
    WORKER,
    variant.verifier,
    inputsFile,
    optionsFile,
  ];
  const out = JSON.parse(lastLine(await runChild(args, { BENCH_DNS: lab.dnsAddress }))) as {
    wallMs: number;
    cpuMs: number;
    passCpuMs: number[];
    maxRssKb: number;
    verdicts: Verdict[];
    details: string[];
  };
  await settle(lab);
  const stats = lab.stats();
  const right = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
  const details = new Map<string, number>();
  bench.addresses.slice(0, out.verdicts.length).forEach((entry, i) => {
    if (isRight(entry, out.verdicts[i] as Verdict)) right[entry.category]++;
    const key = `${entry.category} → ${out.details[i]}`;
    details.set(key, (details.get(key) ?? 0) + 1);
  });
  return {
    wallMs: out.wallMs,
    cpuMs: out.cpuMs,
    passCpuMs: out.passCpuMs,
    maxRssKb: out.maxRssKb,
    connections: stats.connections,
    maxConcurrent: stats.maxConcurrent,
    rcpts: stats.rcpts,
    dnsQueries: lab.dns.queries.length,
    right,
    details,
  };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

function format(n: number, digits = 0): string {
  return n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function report(bench: Bench, results: Map<Variant, Measurement[]>, runs: number, repeat: number): string {
  // With --repeat, the figures are the first pass's (the first of the `repeat` lists), but for the marginal table.
  const shape = { ...bench.shape, addresses: bench.shape.addresses / repeat };
  const totals = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
  for (const entry of bench.addresses.slice(0, shape.addresses)) totals[entry.category]++;
  const lowerBoundMs = Math.ceil(shape.domains / CONNECTION_CAP) * (5 * REPLY_DELAY_MS + 2 * DNS_DELAY_MS);
  const lines: string[] = [];
  lines.push(
    `${format(shape.addresses)} addresses over ${shape.domains} domains (${shape.catchAllDomains} catch-all, ` +
      `${shape.greylistingDomains} greylisting for ${shape.greylistMs} ms after the first attempt), one exchanger per ` +
      `domain; ${REPLY_DELAY_MS} ms per SMTP write (delay line), ${DNS_DELAY_MS} ms per DNS answer; at most ` +
      `${CONNECTION_CAP} connections. Median of ${runs} interleaved run${runs === 1 ? '' : 's'}; Node ${process.version}, ` +
      `${cpus().length} cores.`,
  );
  lines.push('');
  lines.push(
    `Protocol lower bound: ceil(${shape.domains} / ${CONNECTION_CAP}) × (5 × ${REPLY_DELAY_MS} + 2 × ${DNS_DELAY_MS}) ms = ` +
      `**${format(lowerBoundMs / 1000, 2)} s**.`,
  );
  lines.push('');
  lines.push(
    '| verifier | wall time | × lower bound | connections (peak open) | RCPT commands | DNS queries | CPU per address | ' +
      CATEGORIES.map((c) => `${c} right (of ${totals[c]})`).join(' | ') +
      ' |',
  );
  lines.push(`|---|---:|---:|---:|---:|---:|---:|${CATEGORIES.map(() => '---:').join('|')}|`);
  for (const [variant, runsOf] of results) {
    if (runsOf.length === 0) continue;
    const m = (pick: (x: Measurement) => number): number => median(runsOf.map(pick));
    const wall = m((x) => x.wallMs);
    const cells = [
      variant.name,
      `${format(wall / 1000, 2)} s`,
      `${format(wall / lowerBoundMs, 1)}×`,
      `${format(m((x) => x.connections))} (${format(m((x) => x.maxConcurrent))})`,
      format(m((x) => x.rcpts)),
      format(m((x) => x.dnsQueries)),
      `${format((m((x) => x.cpuMs) * 1000) / shape.addresses)} µs`,
      ...CATEGORIES.map((c) => format(m((x) => x.right[c]))),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  if (repeat > 1) {
    // The marginal cost: the passes after the first, when code is compiled and caches are warm (a longer list).
    lines.push('');
    lines.push(`CPU per address over ${repeat} lists of ${format(shape.addresses)} distinct addresses on the same domains, one after the other in one process (median of the runs):`);
    lines.push('');
    lines.push('| verifier | first pass (cold) | later passes (marginal) | marginal × fastest peer |');
    lines.push('|---|---:|---:|---:|');
    const marginalOf = (runsOf: Measurement[]): number => median(runsOf.map((x) => median(x.passCpuMs.slice(1)))) * 1000 / shape.addresses;
    const peerMarginals = [...results].filter(([v, r]) => v.peer && r.length > 0).map(([, r]) => marginalOf(r));
    const fastestPeer = peerMarginals.length > 0 ? Math.min(...peerMarginals) : NaN;
    for (const [variant, runsOf] of results) {
      if (runsOf.length === 0) continue;
      const first = median(runsOf.map((x) => x.passCpuMs[0] ?? x.cpuMs)) * 1000 / shape.addresses;
      const marginal = marginalOf(runsOf);
      lines.push(`| ${variant.name} | ${format(first)} µs | ${format(marginal)} µs | ${format(marginal / fastestPeer, 2)}× |`);
    }
  }
  lines.push('');
  lines.push('What each verifier answered, per category (last run; the detail is its status or reason):');
  lines.push('');
  for (const [variant, runsOf] of results) {
    const last = runsOf.at(-1);
    if (last === undefined) continue;
    lines.push(`- ${variant.name}:`);
    for (const [key, count] of [...last.details].sort((a, b) => a[0].localeCompare(b[0]))) {
      lines.push(`  - ${key}: ${count}`);
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  if (argument('million') !== undefined) return runMillion(argument('million') || undefined, startLabOrReexec);
  const quick = argument('quick') !== undefined;
  const runs = Number(argument('runs') ?? (quick ? 1 : 3));
  const only = argument('only')?.split(',');
  const repeat = Number(argument('repeat') ?? 1);
  const base = argument('base');
  if (base !== undefined) VARIANTS.splice(1, 0, { id: 'mailverify-base', name: 'mailverify (base build)', verifier: 'mailverify', peer: false, dist: base });
  const shape = quick ? QUICK : FULL;
  const bench = buildBench(repeat > 1 ? { ...shape, addresses: shape.addresses * repeat } : shape);
  const variants = VARIANTS.filter((v) => only === undefined || only.includes(v.id));
  if (variants.length === 0) throw new Error(`--only: pick from ${VARIANTS.map((v) => v.id).join(', ')}`);
  const lab = await startLabOrReexec(
    labScenario(bench, { replyDelayMs: REPLY_DELAY_MS, dnsDelayMs: DNS_DELAY_MS, port: SMTP_PORT }),
  );
  if (lab === undefined) return;
  const dir = mkdtempSync(join(tmpdir(), 'bench-batch-'));
  try {
    writeFileSync(join(dir, 'inputs.json'), JSON.stringify(bench.addresses.map((a) => a.address)));
    const results = new Map<Variant, Measurement[]>(variants.map((v) => [v, []]));
    for (let run = 0; run < runs; run++) {
      // Interleaved, each run starting with another verifier.
      for (let k = 0; k < variants.length; k++) {
        const variant = variants[(run + k) % variants.length] as Variant;
        try {
          const measurement = await measure(lab, bench, variant, dir, repeat);
          results.get(variant)?.push(measurement);
          console.error(
            `run ${run + 1}/${runs} ${variant.name}: ${format(measurement.wallMs)} ms, ` +
              `${measurement.connections} connections, ${measurement.rcpts} RCPT, ${measurement.dnsQueries} DNS, ` +
              `CPU ${measurement.passCpuMs.map((ms) => format(ms)).join(' / ')} ms`,
          );
        } catch (error) {
          console.error(`run ${run + 1}/${runs} ${variant.name} failed: ${String(error)}`);
        }
      }
    }
    const text = report(bench, results, runs, repeat);
    console.log(text);
    // The CPU runs (--repeat, --base) have a file of their own: last-run.md stays the standard comparison.
    const file = repeat > 1 || base !== undefined ? 'last-cpu.md' : 'last-run.md';
    if (!quick) writeFileSync(fileURLToPath(new URL(file, HERE)), `${text}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await lab.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
