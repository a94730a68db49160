/**
 * Bodies of nested brackets against a real `mailverify serve`: for each depth and kind (arrays `[[…]]`, objects
 * `{"a":{"a":…}}`) in a submission's unknown field, the time to the answer and the latency of `/health`, polled every
 * 50 ms while the body is handled. With `--base=PATH/cli.js` a second build (an older one) is measured too, the two
 * interleaved, each on a server of its own. An answer that does not come within `--give-up` seconds (default 60) is
 * written as such, and its server is stopped.
 *
 *   npm run bench:deep-json                                   # this build
 *   npm run bench:deep-json -- --base=/path/to/dist/cli.js    # and another one, interleaved
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../packages/mailverify/bin/mailverify.js', import.meta.url));
const PASSWORD = 'deep json bench password';
const AUTH = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
const DEPTHS = [10_000, 100_000, 1_000_000];

const args = new Map(process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split('=') as [string, string]));
const base = args.get('base');
const giveUpMs = Number(args.get('give-up') ?? 60) * 1000;

interface Server {
  readonly origin: string;
  stop(): Promise<void>;
}

async function startServer(cli: string): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-deep-bench-'));
  const child: ChildProcess = spawn(process.execPath, [cli, 'serve', '--port', '0', '--data-dir', dir, '--log-level', 'silent', '--checks', 'syntax'], {
    env: { ...process.env, MAILVERIFY_ROOT_PASSWORD: PASSWORD },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const origin = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += String(chunk);
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match !== null) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
  return {
    origin,
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const nested = (depth: number, kind: string): string =>
  kind === 'array' ? '['.repeat(depth) + '0' + ']'.repeat(depth) : '{"a":'.repeat(depth) + '0' + '}'.repeat(depth);

interface Figures {
  readonly answerMs: number | null;
  readonly status: number | null;
  readonly healthMedianMs: number;
  readonly healthMaxMs: number;
  readonly healthPolls: number;
}

async function measure(server: Server, depth: number, kind: string): Promise<Figures> {
  const body = `{"entries":[{"inputData":"jane@example.org"}],"unknown":${nested(depth, kind)}}`;
  const started = performance.now();
  let done = false;
  const attack = fetch(`${server.origin}/v2.7/email-validations`, {
    method: 'POST',
    headers: { authorization: AUTH, 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(giveUpMs),
  }).then(
    async (answer) => {
      await answer.arrayBuffer();
      return { status: answer.status, ms: performance.now() - started };
    },
    () => ({ status: null, ms: null }),
  );
  void attack.then(() => (done = true));
  const latencies: number[] = [];
  while (!done) {
    const sent = performance.now();
    const answered = await fetch(`${server.origin}/health`, { signal: AbortSignal.timeout(giveUpMs) }).then(
      () => true,
      () => false,
    );
    latencies.push(performance.now() - sent);
    if (!answered) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const outcome = await attack;
  latencies.sort((a, b) => a - b);
  return {
    answerMs: outcome.ms,
    status: outcome.status,
    healthMedianMs: latencies[Math.floor(latencies.length / 2)] ?? 0,
    healthMaxMs: latencies[latencies.length - 1] ?? 0,
    healthPolls: latencies.length,
  };
}

const builds: [string, string][] = [['this build', CLI], ...(base === undefined ? [] : [['base', base] as [string, string]])];
const rows: string[] = [];
console.log(`deep JSON bodies, ${cpus().length} cores, Node ${process.version}; give up after ${giveUpMs / 1000} s`);
for (const depth of DEPTHS) {
  for (const kind of ['array', 'object']) {
    // Interleaved: each build in turn, a fresh server each (a frozen one would hold the next measurement).
    for (const [name, cli] of builds) {
      const server = await startServer(cli);
      const figures = await measure(server, depth, kind);
      await server.stop();
      const answer = figures.answerMs === null ? `no answer in ${giveUpMs / 1000} s` : `${figures.status} in ${figures.answerMs.toFixed(0)} ms`;
      const row = `| ${depth.toLocaleString('en')} | ${kind} | ${name} | ${answer} | ${figures.healthMedianMs.toFixed(1)} ms | ${figures.healthMaxMs.toFixed(0)} ms | ${figures.healthPolls} |`;
      rows.push(row);
      console.log(row);
    }
  }
}
console.log('\n| depth | kind | build | answer | /health median | /health max | polls |\n|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
