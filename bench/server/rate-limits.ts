/**
 * Rate limits under load: the server (server.ts, a process of its own) with `rateLimits: true` behind a trusted proxy
 * on loopback, and autocannon processes, each from a client IP of its own (X-Forwarded-For), all with root's
 * credentials; first the two 2.x clients together, then the two 1.4 clients together:
 *
 *   - a 2.x hammer: 20 connections as fast as they go, GET /v2.7/email-validations?limit=1 (its bucket: 6/s, 15);
 *   - a 2.x client at a normal rate: 1 connection, 3 requests per second, the same request from another IP;
 *   - a 1.4 hammer: 20 connections, GET /v1.4/email-validations/{id} of a completed 10,000-entry job (5 in flight);
 *   - a 1.4 client at a normal rate: 1 connection, 3 requests per second, from another IP.
 *
 * The figures per client: requests, answers by status, errors and timeouts, latency. The normal clients must get no
 * 429 and nothing may fail (no error, no timeout, no status but 200 and 429); the run says so and exits 1 otherwise.
 *
 *   npm run bench:rate-limits                 # 10 s of load
 *   npm run bench:rate-limits -- --seconds=3  # a check that it works (the figures are not written)
 *
 * The results are printed as markdown and written to bench/server/rate-limits-last-run.md (10 s runs only).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { autocannon } from './autocannon.js';
import { AUTHORIZATION, startServer } from './process.js';

const LAST_RUN = fileURLToPath(new URL('../server/rate-limits-last-run.md', import.meta.url));

const secondsArgument = process.argv.find((a) => a.startsWith('--seconds='));
const SECONDS = secondsArgument === undefined ? 10 : Number(secondsArgument.slice('--seconds='.length));
/**
 * The job the 1.4 clients read: large enough (about 2.5 MB of JSON) that an answer waits on its socket, so that
 * answers overlap; a small one is written in one go, and the requests of a busy server never overlap at all.
 */
const LEGACY_JOB_ENTRIES = 10_000;

interface Client {
  readonly name: string;
  readonly ip: string;
  readonly path: string;
  readonly connections: number;
  /** Requests per second over all connections; none: as fast as they go. */
  readonly rate?: number;
  /** Whether it must never be refused. */
  readonly normal: boolean;
}

interface Result {
  readonly requests: number;
  readonly statuses: Record<string, number>;
  readonly errors: number;
  readonly timeouts: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

async function load(port: number, client: Client): Promise<Result> {
  const args = ['-c', String(client.connections), '-d', String(SECONDS), '-n'];
  if (client.rate !== undefined) args.push('-R', String(client.rate));
  args.push('-H', `authorization=${AUTHORIZATION}`, '-H', `x-forwarded-for=${client.ip}`, `http://127.0.0.1:${port}${client.path}`);
  const result = await autocannon(args);
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, count]));
  return { requests: result.requests.total, statuses, errors: result.errors, timeouts: result.timeouts, p50Ms: result.latency.p50, p99Ms: result.latency.p99 };
}

async function submitJob(port: number): Promise<string> {
  const entries = Array.from({ length: LEGACY_JOB_ENTRIES }, (_, i) => ({ inputData: `someone${i}@example.com` }));
  const answer = await fetch(`http://127.0.0.1:${port}/v2.7/email-validations?waitTime=30000`, {
    method: 'POST',
    headers: { authorization: AUTHORIZATION, 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.250' },
    body: JSON.stringify({ entries }),
  });
  const body = (await answer.json()) as { overview: { id: string; status: string } };
  if (answer.status !== 200 || body.overview.status !== 'Completed') throw new Error(`the job was not completed: ${answer.status}`);
  return body.overview.id;
}

const dataDir = mkdtempSync(join(tmpdir(), 'mailverify-bench-rate-'));
const server = await startServer(dataDir, { checks: 'syntax' }, [], undefined, { rateLimits: true, trustProxy: '127.0.0.1' });
let failed = false;
try {
  const job = await submitJob(server.port);
  const clients: Client[] = [
    { name: '2.x hammer', ip: '198.51.100.1', path: '/v2.7/email-validations?limit=1', connections: 20, normal: false },
    { name: '2.x at 3/s', ip: '198.51.100.2', path: '/v2.7/email-validations?limit=1', connections: 1, rate: 3, normal: true },
    { name: '1.4 hammer', ip: '198.51.100.3', path: `/v1.4/email-validations/${job}`, connections: 20, normal: false },
    { name: '1.4 at 3/s', ip: '198.51.100.4', path: `/v1.4/email-validations/${job}`, connections: 1, rate: 3, normal: true },
  ];
  // One interface at a time: its hammer and its client at a normal rate together.
  const results: Result[] = [];
  for (const version of ['2.x', '1.4']) {
    results.push(...(await Promise.all(clients.filter((client) => client.name.startsWith(version)).map((client) => load(server.port, client)))));
  }
  const cpu = cpus();
  const lines = [
    `Rate limits under load: ${SECONDS} s, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB.`,
    '',
    '| client | connections | requests | 200 | 429 | other statuses | errors | timeouts | p50 ms | p99 ms |',
    '| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |',
  ];
  for (const [i, client] of clients.entries()) {
    const result = results[i]!;
    const others = Object.entries(result.statuses).filter(([status]) => status !== '200' && status !== '429');
    lines.push(
      `| ${client.name} | ${client.connections}${client.rate === undefined ? '' : ` (${client.rate}/s)`} | ${result.requests} | ${result.statuses['200'] ?? 0} | ${result.statuses['429'] ?? 0} | ${others.map(([s, n]) => `${s}: ${n}`).join(', ') || 'none'} | ${result.errors} | ${result.timeouts} | ${result.p50Ms} | ${result.p99Ms} |`,
    );
    if (result.errors > 0 || result.timeouts > 0 || others.length > 0 || (client.normal && (result.statuses['429'] ?? 0) > 0)) failed = true;
    if (!client.normal && (result.statuses['429'] ?? 0) === 0) failed = true;
  }
  lines.push('', failed ? 'FAILED: a normal client was refused, or a request failed otherwise.' : 'Every hammer got 429s; the clients at a normal rate none; nothing else failed.');
  const text = lines.join('\n');
  console.log(text);
  if (SECONDS === 10) writeFileSync(LAST_RUN, `${text}\n`);
} finally {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
