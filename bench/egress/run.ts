/**
 * Egress benchmark: a lab "provider" of five exchangers (mx1 … mx5.example-provider.com) that allows each source
 * address R RCPT commands in any 60 s over all five together and answers `421 4.7.28 … rate limited` past it, as
 * Gmail does. The verifier probes the provider's many domains through 1, 2 or 3 egresses (source addresses 127.0.0.11,
 * .12, .13), with a provider profile whose recipientsPerMinute is R, and without any profile (each exchanger is then
 * a provider of its own to the engine, and only back-off after a 421 protects the verdicts).
 *
 * N, the RCPT commands the job needs at the least (every address once, and one catch-all probe per domain), is the
 * same in every configuration; R is N / (2 × egresses), so the requirement's bound N / (egresses × R) is 2 minutes,
 * and the floor of a sliding window (R at once, the next R when the first ones are 60 s old) is 1 minute
 * (`--windows=K`: R = N / (K × egresses), a bound of K minutes and a floor of K - 1).
 *
 * Per run: wall time of verifyMany, the limit replies the lab sent (its per-source counts), the coolings the engine
 * reported, and every verdict against the lab's truth: right, left unknown (a transient status, e.g. the 421's
 * ServerTemporaryUnavailable), or wrong (a verdict other than the truth: one taken from a 421 would be that).
 *
 *   npm run bench:egress                       # 6 configurations, one run each (about 10 minutes)
 *   npm run bench:egress -- --quick            # N = 120, 2 egresses only, with and without the profile (about 2-3 minutes)
 *   npm run bench:egress -- --runs=2 --configs=2p,2n  # a subset (egresses, p: profile, n: none), interleaved rounds
 *   npm run bench:egress -- --passes=2 --pass-delay-ms=1000   # a custom quality level instead of Standard's 1 pass
 *   npm run bench:egress -- --max-cooling-wait-ms=600000
 *   npm run bench:egress -- --windows=4 --configs=2p,2n  # R a quarter of N per egress: 3 windows after the first
 *
 * The results are printed as markdown and written to bench/egress/last-run.md (other settings: last-run-passes2.md,
 * last-run-windows4.md ...; not with --quick).
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createVerifier, type EgressCoolingEvent, type SmtpEgress, type VerifierOptions } from '../../packages/mailverify/src/index.js';
import { startMailLab, type DomainSpec, type MailLab, type ServerSpec } from '../../test/lab/mail-lab.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url)); // this bundle is in bench/.out/

const argument = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = process.argv.includes('--quick');
const DOMAINS = Number(argument('domains') ?? (quick ? 6 : 20));
/** RCPT commands the job needs at the least: its addresses and one catch-all probe per domain. */
const N = Number(argument('rcpts') ?? (quick ? 120 : 600));
const ADDRESSES = N - DOMAINS;
const RUNS = Number(argument('runs') ?? 1);
const PASSES = argument('passes') === undefined ? undefined : Number(argument('passes'));
const PASS_DELAY_MS = Number(argument('pass-delay-ms') ?? 1_000);
const MAX_COOLING_WAIT_MS = argument('max-cooling-wait-ms') === undefined ? undefined : Number(argument('max-cooling-wait-ms'));
/** N / (egresses × R): how many windows' worth of RCPTs the job needs. */
const WINDOWS = Number(argument('windows') ?? 2);
// A run with other settings keeps its own file: the main table stays the defaults'.
const VARIANT = [PASSES !== undefined && `passes${PASSES}`, WINDOWS !== 2 && `windows${WINDOWS}`, MAX_COOLING_WAIT_MS !== undefined && `wait${MAX_COOLING_WAIT_MS}`].filter(Boolean).join('-');
const LAST_RUN = join(ROOT, `bench/egress/last-run${VARIANT === '' ? '' : `-${VARIANT}`}.md`);
const WINDOW_MS = 60_000;
const EXCHANGERS = ['mx1', 'mx2', 'mx3', 'mx4', 'mx5'];
const PROVIDER_HOST = 'example-provider.com';
const LIMIT_REPLY = '421 4.7.28 Our system has detected an unusual rate of mail originating from your IP address; rate limited';

interface Config {
  readonly key: string;
  readonly egresses: number;
  readonly profile: boolean;
}

const ALL_CONFIGS: Config[] = [1, 2, 3].flatMap((egresses) => [
  { key: `${egresses}p`, egresses, profile: true },
  { key: `${egresses}n`, egresses, profile: false },
]);
const CONFIGS = ((): Config[] => {
  const wanted = argument('configs')?.split(',') ?? (quick ? ['2p', '2n'] : undefined);
  if (wanted === undefined) return ALL_CONFIGS;
  return wanted.map((key) => {
    const config = ALL_CONFIGS.find((c) => c.key === key);
    if (config === undefined) throw new Error(`--configs: unknown configuration ${key} (${ALL_CONFIGS.map((c) => c.key).join(', ')})`);
    return config;
  });
})();

/** The job: ADDRESSES over DOMAINS, 60% of them existing mailboxes, the first of each domain always one. */
function job(): { inputs: string[]; truth: Map<string, 'Success' | 'MailboxDoesNotExist'>; domains: string[] } {
  const domains = Array.from({ length: DOMAINS }, (_, d) => `client${String(d + 1).padStart(2, '0')}-mail.com`);
  const inputs: string[] = [];
  const truth = new Map<string, 'Success' | 'MailboxDoesNotExist'>();
  for (let i = 0; i < ADDRESSES; i++) {
    const d = i % DOMAINS;
    const n = Math.floor(i / DOMAINS);
    const exists = n === 0 || (i * 7919) % 10 < 6;
    const address = `${exists ? 'staff' : 'former'}${String(n).padStart(3, '0')}@${domains[d]}`;
    inputs.push(address);
    truth.set(address, exists ? 'Success' : 'MailboxDoesNotExist');
  }
  return { inputs, truth, domains };
}

/** Each domain has the five exchangers, rotated so that every exchanger is some domains' first. */
function zones(lab: MailLab, domains: string[]): Record<string, DomainSpec> {
  const result: Record<string, DomainSpec> = {};
  for (const name of EXCHANGERS) result[`${name}.${PROVIDER_HOST}`] = { a: [lab.addressOf(name)] };
  domains.forEach((domain, d) => {
    result[domain] = {
      mx: EXCHANGERS.map((_, k) => ({ priority: (k + 1) * 10, exchange: `${EXCHANGERS[(d + k) % EXCHANGERS.length]}.${PROVIDER_HOST}` })),
    };
  });
  return result;
}

interface Result {
  readonly config: Config;
  readonly round: number;
  readonly r: number;
  readonly wallMs: number;
  /** RCPTs the lab received from each source, and how many got the limit's reply. */
  readonly asked: number;
  readonly limited: number;
  readonly coolings: EgressCoolingEvent[];
  readonly right: number;
  readonly unknown: number;
  readonly wrong: number;
  readonly statuses: Map<string, number>;
  /** The most RCPTs one egress had answered (limit replies excepted) within any 60 s. */
  readonly peakPerWindow: number;
  /** Per egress, the RCPTs answered (limit replies excepted) in each minute from the start. */
  readonly perMinute: Map<string, number[]>;
  readonly connections: number;
}

async function runOnce(config: Config, round: number): Promise<Result> {
  const { inputs, truth, domains } = job();
  const r = Math.ceil(N / (WINDOWS * config.egresses));
  const mailboxes = [...truth].filter(([, verdict]) => verdict === 'Success').map(([address]) => address);
  // Without PIPELINING every reply is read before the next command: a 421 that closes the connection leaves no
  // pipelined reply unread (nodemailer would lose those).
  const spec: ServerSpec = { engine: 'raw', pipelining: false, mailboxes, sourceLimit: { rcpts: r, windowMs: WINDOW_MS, reply: LIMIT_REPLY, group: 'provider' } };
  const lab = await startMailLab({ servers: Object.fromEntries(EXCHANGERS.map((name) => [name, spec])) });
  lab.setDomains(zones(lab, domains));
  const egress: SmtpEgress[] = Array.from({ length: config.egresses }, (_, i) => ({ id: `egress-${i + 1}`, localAddress: `127.0.0.${11 + i}` }));
  const coolings: EgressCoolingEvent[] = [];
  const accepted = new Map<string, number[]>(egress.map((e) => [e.id, []]));
  const options: VerifierOptions = {
    heloName: 'probe.mailverify-bench.com',
    mailFrom: 'bounce@mailverify-bench.com',
    allowPrivateAddresses: true,
    dns: { servers: [lab.dnsAddress] },
    ...(PASSES !== undefined && { quality: { id: 'bench', passes: PASSES, passDelay: PASS_DELAY_MS } }),
    smtp: {
      port: lab.port,
      egress,
      ...(config.profile && { providers: [{ id: 'example-provider', match: [`*.${PROVIDER_HOST}`], recipientsPerMinute: r }] }),
      ...(MAX_COOLING_WAIT_MS !== undefined && { maxCoolingWaitMs: MAX_COOLING_WAIT_MS }),
    },
    observer: {
      egressCooling: (event) => coolings.push(event),
      smtpReply: (event) => {
        if (event.phase === 'rcpt' && event.code !== 421) accepted.get(event.egress)?.push(performance.now());
      },
    },
  };
  const verifier = createVerifier(options);
  const statuses = new Map<string, number>();
  let right = 0;
  let unknown = 0;
  let wrong = 0;
  const started = performance.now();
  try {
    for await (const entry of verifier.verifyMany(inputs)) {
      statuses.set(entry.status, (statuses.get(entry.status) ?? 0) + 1);
      if (entry.status === truth.get(entry.inputData)) right++;
      else if (entry.classification === 'Unknown') unknown++;
      else wrong++;
    }
  } finally {
    await verifier.close();
  }
  const wallMs = performance.now() - started;
  const sources = lab.sourceStats('provider');
  const connections = lab.stats().connections;
  await lab.close();
  return {
    config,
    round,
    r,
    wallMs,
    asked: Object.values(sources.asked).reduce((a, b) => a + b, 0),
    limited: Object.values(sources.limited).reduce((a, b) => a + b, 0),
    coolings,
    right,
    unknown,
    wrong,
    statuses,
    peakPerWindow: Math.max(...[...accepted.values()].map(peakInWindow)),
    perMinute: new Map([...accepted].map(([id, times]) => [id, byMinute(times, started)])),
    connections,
  };
}

function byMinute(times: number[], from: number): number[] {
  const minutes: number[] = [];
  for (const time of times) {
    const minute = Math.floor((time - from) / 60_000);
    while (minutes.length <= minute) minutes.push(0);
    minutes[minute]!++;
  }
  return minutes;
}

/** The most times within any WINDOW_MS (times in order). */
function peakInWindow(times: number[]): number {
  let peak = 0;
  let first = 0;
  for (let last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= WINDOW_MS) first++;
    peak = Math.max(peak, last - first + 1);
  }
  return peak;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const seconds = (ms: number): string => (ms / 1000).toFixed(1);
const share = (count: number, of: number): string => `${((100 * count) / of).toFixed(1)}%`;
const spread = (values: number[], show: (v: number) => string): string =>
  values.length === 1 ? show(values[0]!) : `${show(median(values))} (${show(Math.min(...values))}–${show(Math.max(...values))})`;

function report(results: Result[], header: string[]): string {
  const lines = [...header, ''];
  lines.push('| egresses | profile | N (RCPTs) | R per source per 60 s | bound N/(egresses×R) | floor of the window | wall time | wall / bound | wall / floor | 421 replies | coolings (longest) | RCPTs sent | most RCPTs of one egress in 60 s | verdicts right | left unknown | wrong | connections |');
  lines.push('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const config of CONFIGS) {
    const runs = results.filter((r) => r.config === config);
    if (runs.length === 0) continue;
    const r = runs[0]!.r;
    const boundMs = (N / (config.egresses * r)) * 60_000;
    const floorMs = (Math.ceil(N / (config.egresses * r)) - 1) * 60_000;
    const walls = runs.map((x) => x.wallMs);
    const fmt = (values: number[]) => spread(values, (v) => String(Math.round(v)));
    const longest = Math.max(0, ...runs.flatMap((x) => x.coolings.map((c) => c.cooldownMs)));
    lines.push(
      [
        '',
        config.egresses,
        config.profile ? `recipientsPerMinute ${r}` : 'none',
        N,
        r,
        `${seconds(boundMs)} s`,
        `${seconds(floorMs)} s`,
        `${spread(walls, seconds)} s`,
        `${spread(walls.map((w) => w / boundMs), (v) => v.toFixed(2))}×`,
        floorMs === 0 ? '–' : `${spread(walls.map((w) => w / floorMs), (v) => v.toFixed(2))}×`,
        fmt(runs.map((x) => x.limited)),
        `${fmt(runs.map((x) => x.coolings.length))}${longest > 0 ? ` (${longest / 1000} s)` : ''}`,
        fmt(runs.map((x) => x.asked)),
        fmt(runs.map((x) => x.peakPerWindow)),
        `${fmt(runs.map((x) => x.right))} of ${ADDRESSES} (${spread(runs.map((x) => (100 * x.right) / ADDRESSES), (v) => `${v.toFixed(1)}%`)})`,
        fmt(runs.map((x) => x.unknown)),
        fmt(runs.map((x) => x.wrong)),
        fmt(runs.map((x) => x.connections)),
        '',
      ].join(' | ').trim(),
    );
  }
  lines.push('', 'Statuses and coolings, per run:', '');
  for (const result of results) {
    const off = [...result.statuses].map(([status, count]) => `${status} ${count}`).join(', ');
    const cooled = result.coolings.map((c) => `${c.egress}×${c.provider} ${c.cooldownMs / 1000} s`).join('; ');
    const minutes = [...result.perMinute].map(([id, counts]) => `${id} ${counts.join('/')}`).join(', ');
    lines.push(
      `- ${result.config.key} (round ${result.round + 1}): ${off}; ${share(result.right, ADDRESSES)} right; RCPTs answered per minute: ${minutes}; coolings: ${cooled === '' ? 'none' : cooled}`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const truth = job().truth;
  const existing = [...truth.values()].filter((v) => v === 'Success').length;
  const header = [
    `Egress benchmark, ${new Date().toISOString()}: ${cpus().length} cores (${cpus()[0]?.model}), Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(', ')} at the start.`,
    `${ADDRESSES} addresses (${existing} existing, ${ADDRESSES - existing} not) over ${DOMAINS} domains of one provider (5 exchangers, one limit per source address), N = ${N} RCPTs (addresses + one catch-all probe per domain), R = N / (${WINDOWS} × egresses); ` +
      `quality ${PASSES === undefined ? 'Standard (1 pass)' : `custom: ${PASSES} passes, ${PASS_DELAY_MS} ms apart`}, maxCoolingWaitMs ${MAX_COOLING_WAIT_MS ?? 'default (300000)'}; ${RUNS} run(s) per configuration, rounds interleaved.`,
  ];
  console.log(header.join('\n'));
  const results: Result[] = [];
  for (let round = 0; round < RUNS; round++) {
    for (let i = 0; i < CONFIGS.length; i++) {
      const config = CONFIGS[(i + round) % CONFIGS.length]!;
      const result = await runOnce(config, round);
      results.push(result);
      console.log(
        `${config.key} round ${round + 1}: ${seconds(result.wallMs)} s, ${result.limited} limit replies, ${result.coolings.length} coolings, ${result.right}/${ADDRESSES} right, ${result.unknown} unknown, ${result.wrong} wrong`,
      );
      if (!quick) writeFileSync(LAST_RUN, `${report(results, [...header, `(after ${results.length} runs)`])}\n`);
    }
  }
  header.push(`Load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(', ')}.`);
  const text = report(results, header);
  console.log(`\n${text}`);
  if (!quick) writeFileSync(LAST_RUN, `${text}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
