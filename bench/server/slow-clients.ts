/**
 * Slow clients against a real `mailverify serve`: CLIENTS connections (default 2,000) each POST a chunked submission
 * and then trickle its body, one byte every `--every` seconds (default 10), never ending it. Counted at each checkpoint
 * (default 10, 30 and 150 s): the connections the server still holds open, the file descriptors the server process
 * has, and whether a new client (another address) is served meanwhile: GET /health and an authenticated GET of the
 * jobs, each given 5 s. Scenarios, run at once on a server each: no credentials from 8 addresses; a bearer token from 8
 * addresses; a bearer token from one address. The servers run with an open-file limit of `--server-nofile` (default
 * 2048, as on a host with a small limit; 0 leaves the limit as it is). With `--base=PATH/cli.js` an older build is
 * measured too, after this one. Writes bench/server/slow-clients-last-run.md.
 *
 *   npm run bench:slow-clients
 *   npm run bench:slow-clients -- --base=/path/to/dist/cli.js
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../packages/mailverify/bin/mailverify.js', import.meta.url));
// From the package's folder, where npm runs the script (the bundle lives in bench/.out).
const RESULTS = join(process.cwd(), 'bench/server/slow-clients-last-run.md');
const PASSWORD = 'slow clients bench password';
const BASIC = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
/** The new client's address: none of the slow clients use it. */
const NEW_CLIENT = '127.0.0.250';

const args = new Map(process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split('=') as [string, string]));
const base = args.get('base');
const clients = Number(args.get('clients') ?? 2000);
const everyMs = Number(args.get('every') ?? 10) * 1000;
const serverNofile = Number(args.get('server-nofile') ?? 2048);
const checkpoints = (args.get('checkpoints') ?? '10,30,150').split(',').map(Number);

interface Server {
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

async function startServer(cli: string): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-slow-bench-'));
  const serve = [cli, 'serve', '--port', '0', '--data-dir', dir, '--log-level', 'silent', '--checks', 'syntax'];
  // exec: the shell becomes the server, with the lower limit (soft and hard, so that Node cannot raise it).
  const child: ChildProcess =
    serverNofile > 0
      ? spawn('/bin/sh', ['-c', `ulimit -n ${serverNofile} && exec "$0" "$@"`, process.execPath, ...serve], { env: { ...process.env, MAILVERIFY_ROOT_PASSWORD: PASSWORD }, stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(process.execPath, serve, { env: { ...process.env, MAILVERIFY_ROOT_PASSWORD: PASSWORD }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += String(chunk);
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
  return {
    port,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A request on a connection of its own from NEW_CLIENT: its status and time, or what went wrong. */
function probe(port: number, path: string, authorization?: string): Promise<string> {
  return new Promise((resolve) => {
    const sent = performance.now();
    const request = httpRequest({ host: '127.0.0.1', port, path, localAddress: NEW_CLIENT, agent: false, headers: authorization === undefined ? {} : { authorization } }, (response) => {
      response.resume();
      response.on('end', () => resolve(`${response.statusCode} in ${(performance.now() - sent).toFixed(0)} ms`));
    });
    request.setTimeout(5000, () => request.destroy(Object.assign(new Error('no answer in 5 s'), { code: 'no answer in 5 s' })));
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    request.end();
  });
}

async function bearerToken(port: number): Promise<string> {
  const answer = await fetch(`http://127.0.0.1:${port}/v2.7/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'root', password: PASSWORD }),
  });
  return `Bearer ${((await answer.json()) as { accessToken: string }).accessToken}`;
}

interface Slow {
  readonly socket: Socket;
  /** Its header fields are written: the trickle may begin. */
  started: boolean;
  open: boolean;
  answer: string;
}

/** The server's open file descriptors (Linux), or null. */
function descriptors(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

interface Scenario {
  readonly name: string;
  readonly credentials: boolean;
  readonly addresses: number;
}

const SCENARIOS: readonly Scenario[] = [
  { name: 'no credentials, 8 addresses', credentials: false, addresses: 8 },
  { name: 'bearer token, 8 addresses', credentials: true, addresses: 8 },
  { name: 'bearer token, 1 address', credentials: true, addresses: 1 },
];

interface Row {
  readonly build: string;
  readonly scenario: string;
  readonly at: number;
  readonly held: number;
  readonly fds: number | null;
  readonly health: string;
  readonly jobs: string;
  readonly outcomes: string;
}

async function attack(build: string, cli: string, scenario: Scenario): Promise<Row[]> {
  const server = await startServer(cli);
  const token = await bearerToken(server.port);
  const head =
    'POST /v2.7/email-validations HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    (scenario.credentials ? `Authorization: ${token}\r\n` : '') +
    'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n';
  const slow: Slow[] = [];
  const started = performance.now();
  // Opened a hundred at a time, from 127.0.0.2 on.
  for (let index = 0; index < clients; index += 1) {
    const localAddress = `127.0.0.${2 + (index % scenario.addresses)}`;
    const client: Slow = { socket: connect({ port: server.port, host: '127.0.0.1', localAddress }), started: false, open: true, answer: '' };
    client.socket.once('connect', () => {
      client.socket.write(head);
      client.started = true;
    });
    client.socket.on('data', (chunk) => (client.answer += String(chunk)));
    client.socket.on('error', () => {});
    client.socket.once('close', () => (client.open = false));
    slow.push(client);
    if (index % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Each client sends a byte every `everyMs`, the clients spread over that time.
  let turn = 0;
  const ticks = 100;
  const drip = setInterval(() => {
    for (let index = turn; index < slow.length; index += ticks) {
      const client = slow[index]!;
      if (client.started && client.open && client.socket.writable) client.socket.write('1\r\n \r\n');
    }
    turn = (turn + 1) % ticks;
  }, everyMs / ticks);
  const rows: Row[] = [];
  for (const at of checkpoints) {
    const wait = started + at * 1000 - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const [health, jobs] = await Promise.all([probe(server.port, '/health'), probe(server.port, '/v2.7/email-validations?limit=1', BASIC)]);
    const outcomes = new Map<string, number>();
    for (const client of slow) {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(client.answer)?.[1];
      const outcome = client.open ? (status === undefined ? 'open' : `open after ${status}`) : status === undefined ? 'closed unanswered' : `closed after ${status}`;
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    const row: Row = {
      build,
      scenario: scenario.name,
      at,
      held: slow.filter((client) => client.open).length,
      fds: descriptors(server.pid),
      health,
      jobs,
      outcomes: [...outcomes].sort((a, b) => b[1] - a[1]).map(([name, count]) => `${count} ${name}`).join(', '),
    };
    console.log(`| ${row.build} | ${row.scenario} | ${row.at} s | ${row.held} | ${row.fds ?? '?'} | ${row.health} | ${row.jobs} | ${row.outcomes} |`);
    rows.push(row);
  }
  clearInterval(drip);
  for (const client of slow) client.socket.destroy();
  await server.stop();
  return rows;
}

const builds: [string, string][] = [['this build', CLI], ...(base === undefined ? [] : [['base', base] as [string, string]])];
const title = `${clients.toLocaleString('en')} slow clients, a byte every ${everyMs / 1000} s; servers' open-file limit ${serverNofile > 0 ? serverNofile : 'as inherited'}; ${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}`;
console.log(title);
const header = '| build | scenario | at | connections held | server fds | new client: /health | new client: GET jobs | the slow clients |\n|---|---|---|---|---|---|---|---|';
console.log(header);
const rows: Row[] = [];
for (const [name, cli] of builds) {
  // The scenarios of one build at once, on a server each; the builds one after the other.
  for (const found of await Promise.all(SCENARIOS.map((scenario) => attack(name, cli, scenario)))) rows.push(...found);
}
const table = rows.map((row) => `| ${row.build} | ${row.scenario} | ${row.at} s | ${row.held} | ${row.fds ?? '?'} | ${row.health} | ${row.jobs} | ${row.outcomes} |`);
writeFileSync(
  RESULTS,
  `# npm run bench:slow-clients${base === undefined ? '' : ' -- --base=<older build>/dist/cli.js'}\n\n${title}. One run; the scenarios of a build at once, on a server each. ` +
    '"connections held": the slow clients whose connection the server has not closed; "server fds": the server process\'s open file descriptors; ' +
    'the new client comes from another address, on a connection of its own, and is given 5 s.\n\n' +
    `${header}\n${table.join('\n')}\n`,
);
console.log(`\nwritten: ${RESULTS}`);
