// The packages as a consumer gets them: `npm pack` of both workspaces, then, on each given Node.js, each installed
// into an empty folder with `npm install --engine-strict` and the README's quick starts run from there. The engine
// (`mailverify`) alone: its weight measured (packages, bytes, install scripts, native modules: at most 15 packages and
// 10 MB, none of the others), the library (import and require), the command line (`npx mailverify check`, `doctor`)
// and `mailverify serve` saying how to get the server. The server (`mailverify-server` beside `mailverify`): its
// tree's engines and `mailverify serve`.
//
//   node .ci/consumer-install.mjs [NODE_BIN_DIR ...]     (default: the Node.js running this script)
//
// One line per test, then "N passed, N failed"; the exit code is 1 when a test failed.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import semver from 'semver';

const root = fileURLToPath(new URL('..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, 'packages', 'mailverify', 'package.json'), 'utf8'));
const serverManifest = JSON.parse(readFileSync(join(root, 'packages', 'server', 'package.json'), 'utf8'));

/** What the engine alone may weigh, installed: packages (itself included), bytes on disk. */
const ENGINE_MOST_PACKAGES = 15;
const ENGINE_MOST_BYTES = 10_000_000;
const run = promisify(execFile);
const binDirs = process.argv.length > 2 ? process.argv.slice(2) : [dirname(process.execPath)];

let passed = 0;
let failed = 0;

/** Runs one test: a thrown error is its failure. */
async function test(name, body) {
  const started = Date.now();
  try {
    await body();
    passed += 1;
    console.log(`ok    ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    return true;
  } catch (error) {
    failed += 1;
    console.log(`FAIL  ${name}\n${indent(error instanceof Error ? (error.stack ?? error.message) : String(error))}`);
    return false;
  }
}

const indent = (text) => text.replace(/^/gm, '      ');

function equal(actual, expected, what) {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== e) throw new Error(`${what}:\n  expected ${e}\n  got      ${a}`);
}

/** A command's standard output; its failure names the command and carries its output. */
async function output(command, args, options) {
  try {
    return (await run(command, args, { maxBuffer: 64 * 1024 * 1024, timeout: 300_000, ...options })).stdout;
  } catch (error) {
    throw new Error(`${[command, ...args].join(' ')} failed (${error.code ?? error.signal}):\n${error.stdout ?? ''}${error.stderr ?? ''}`);
  }
}

// --- The tarballs (`npm pack` builds first: each package's prepack script) ---
const packDir = mkdtempSync(join(tmpdir(), 'mailverify-pack-'));
let tarball;
let serverTarball;
const packed = await test('npm pack of both packages', async () => {
  await output('npm', ['pack', '--workspaces', '--pack-destination', packDir], { cwd: root });
  const files = readdirSync(packDir).filter((name) => name.endsWith('.tgz')).sort();
  const expected = [`${manifest.name}-${manifest.version}.tgz`, `${serverManifest.name}-${serverManifest.version}.tgz`];
  equal(files, expected, 'the tarballs written');
  [tarball, serverTarball] = expected.map((name) => join(packDir, name));
});

// The Node.js versions a consumer's tree must support: the lowest that `engines` admits and every one tested here.
const nodeVersions = await Promise.all(binDirs.map(async (binDir) => (await output(join(binDir, 'node'), ['--version'])).trim()));
const requiredVersions = [semver.minVersion(manifest.engines.node).version, ...nodeVersions.map((v) => v.slice(1))];

const LIBRARY_PROBE = `
  const parsed = parseAddress('(work) "Joe Q"@Bücher.DE');
  const verifier = createVerifier({ checks: 'syntax' });
  const { status, classification, suggestions } = await verifier.verify('Info@Gmial.com');
  const batch = [];
  for await (const entry of verifier.verifyMany(['jane@example.com', 'no-at-sign'])) batch[entry.index] = entry.status;
  await verifier.close();
  console.log(JSON.stringify({ node: process.version, parsed, verified: { status, classification, suggestions }, batch }));
`;
const LIBRARY_EXPECTED = (node) => ({
  node,
  parsed: {
    ok: true,
    emailAddress: '"Joe Q"@Bücher.DE',
    localPart: '"Joe Q"',
    domainPart: 'Bücher.DE',
    asciiDomainPart: 'xn--bcher-kva.de',
    hasInternationalMailboxName: false,
    hasInternationalDomainName: true,
  },
  verified: { status: 'DomainIsWellKnownDea', classification: 'Risky', suggestions: ['Info@gmail.com'] },
  batch: ['Success', 'AtSignNotFound'],
});

const ROOT_PASSWORD = 'a long secret';

for (const [i, binDir] of binDirs.entries()) {
  const node = join(binDir, 'node');
  const version = nodeVersions[i];
  const label = `Node.js ${version}:`;
  // npm, npx and the package's own `#!/usr/bin/env node` scripts all run on this Node.js.
  const env = { ...process.env, PATH: `${binDir}${delimiter}${process.env.PATH}` };
  // A space and a '#' in the path: the package must not take its own file path for a URL.
  const consumer = mkdtempSync(join(tmpdir(), 'mailverify consumer #'));
  try {
    const installed =
      packed &&
      (await test(`${label} npm install --engine-strict of mailverify alone into an empty folder`, async () => {
        await output('npm', ['install', '--engine-strict', '--no-audit', '--no-fund', tarball], { cwd: consumer, env });
      }));
    for (const [name, body] of engineQuickStarts(consumer, node, version, env)) {
      // Without the package none can run; each counts as failed.
      await test(`${label} ${name}`, installed ? body : () => Promise.reject(new Error('not run: the package is not installed')));
    }
  } finally {
    rmSync(consumer, { recursive: true, force: true });
  }
  const serverConsumer = mkdtempSync(join(tmpdir(), 'mailverify consumer #'));
  try {
    const installed =
      packed &&
      (await test(`${label} npm install --engine-strict of mailverify-server beside mailverify into an empty folder`, async () => {
        // Both tarballs: the server's dependency on mailverify is the engine's tarball, not the registry.
        await output('npm', ['install', '--engine-strict', '--no-audit', '--no-fund', tarball, serverTarball], { cwd: serverConsumer, env });
      }));
    for (const [name, body] of serverQuickStarts(serverConsumer, env)) {
      await test(`${label} ${name}`, installed ? body : () => Promise.reject(new Error('not run: the packages are not installed')));
    }
  } finally {
    rmSync(serverConsumer, { recursive: true, force: true });
  }
}

rmSync(packDir, { recursive: true, force: true });

console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;

/** The packages of the tree installed in `consumer` (the consumer's own package left out), from `npm query`. */
async function installedTree(consumer, env) {
  return JSON.parse(await output('npm', ['query', '*'], { cwd: consumer, env })).filter((pkg) => pkg.location !== '');
}

/** A test that every package of the consumer's tree admits the supported Node.js versions. */
function enginesTest(consumer, env) {
  return [
    `every package of the tree supports Node.js ${requiredVersions.join(', ')}`,
    async () => {
      const excluding = (await installedTree(consumer, env))
        .filter((pkg) => pkg.engines?.node)
        .filter((pkg) => requiredVersions.some((v) => !semver.satisfies(v, pkg.engines.node)))
        .map((pkg) => `${pkg.name}@${pkg.version} (engines.node ${pkg.engines.node})`);
      equal(excluding, [], 'packages whose engines exclude a supported Node.js');
    },
  ];
}

/** The bytes of the files under `folder`, links not followed. */
function bytesUnder(folder) {
  let total = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) total += bytesUnder(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

/** Files under `folder` that make a package native: compiled addons and node-gyp build files. */
function nativeFiles(folder) {
  const found = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...nativeFiles(path));
    else if (entry.name.endsWith('.node') || entry.name === 'binding.gyp') found.push(path);
  }
  return found;
}

/** The tests run in the consumer folder once the engine alone is installed there: [name, body]. */
function engineQuickStarts(consumer, node, version, env) {
  const runLibrary = async (file, source) => {
    writeFileSync(join(consumer, file), source);
    equal(JSON.parse(await output(node, [file], { cwd: consumer, env })), LIBRARY_EXPECTED(version), 'the results');
  };
  return [
    enginesTest(consumer, env),
    [
      `mailverify alone weighs at most ${ENGINE_MOST_PACKAGES} packages and ${ENGINE_MOST_BYTES / 1e6} MB, with no install script and no native module`,
      async () => {
        const tree = await installedTree(consumer, env);
        const modules = join(consumer, 'node_modules');
        const bytes = bytesUnder(modules);
        // npm runs these on install (a binding.gyp without them is built by node-gyp: counted as native below).
        const scripted = tree
          .filter((pkg) => ['preinstall', 'install', 'postinstall'].some((name) => pkg.scripts?.[name]))
          .map((pkg) => pkg.name);
        const native = nativeFiles(modules).map((path) => path.slice(modules.length + 1));
        console.log(
          `      ${tree.length} packages (${tree.map((pkg) => pkg.name).sort().join(', ')}), ` +
            `${(bytes / 1e6).toFixed(2)} MB, ${scripted.length} install scripts, ${native.length} native files`,
        );
        equal(scripted, [], 'packages with install scripts');
        equal(native, [], 'native modules');
        if (tree.length > ENGINE_MOST_PACKAGES) throw new Error(`${tree.length} packages installed, more than ${ENGINE_MOST_PACKAGES}`);
        if (bytes > ENGINE_MOST_BYTES) throw new Error(`${bytes} bytes installed, more than ${ENGINE_MOST_BYTES}`);
      },
    ],
    [
      'library quick start with import',
      () => runLibrary('quick-start.mjs', `import { parseAddress, createVerifier } from 'mailverify';\n${LIBRARY_PROBE}`),
    ],
    [
      'library quick start with require',
      () =>
        runLibrary('quick-start.cjs', `const { parseAddress, createVerifier } = require('mailverify');\n(async () => {${LIBRARY_PROBE}})();`),
    ],
    [
      'npx mailverify check list.txt --checks syntax',
      async () => {
        writeFileSync(join(consumer, 'list.txt'), 'jane@example.com\njohn..doe@example.com\nno-at-sign\n');
        const lines = await output('npx', ['--no', 'mailverify', 'check', 'list.txt', '--checks', 'syntax'], { cwd: consumer, env });
        const entries = lines.trim().split('\n').map((line) => JSON.parse(line));
        equal(
          entries.map((entry) => [entry.inputData, entry.status]),
          [
            ['jane@example.com', 'Success'],
            ['john..doe@example.com', 'DoubleDotSequence'],
            ['no-at-sign', 'AtSignNotFound'],
          ],
          'the entries',
        );
      },
    ],
    [
      'mailverify serve without the server package: says how to install it, exit 2',
      async () => {
        const { stderr, code } = await run(join(consumer, 'node_modules', '.bin', 'mailverify'), ['serve', '--port', '0'], { cwd: consumer, env }).then(
          (done) => ({ stderr: done.stderr, code: 0 }),
          (error) => ({ stderr: error.stderr ?? '', code: error.code }),
        );
        equal([code, stderr.includes('npm install mailverify-server')], [2, true], `the exit code and the hint (${stderr.trim()})`);
        if (existsSync(join(consumer, 'node_modules', 'fastify'))) throw new Error('fastify is installed with the engine alone');
      },
    ],
    [
      'mailverify doctor without the optional mailauth: the spf row says how to install it',
      async () => {
        // No DNS server answers on port 9 of loopback: every row but spf fails or warns at once (exit 1).
        const args = ['--no', 'mailverify', 'doctor', '--json', '--public-address', '192.0.2.1', '--allow-private-addresses', '--dns-server', '127.0.0.1:9', '--dns-timeout', '300'];
        const { stdout, code } = await run('npx', args, { cwd: consumer, env, timeout: 60_000 }).then(
          (done) => ({ stdout: done.stdout, code: 0 }),
          (error) => ({ stdout: error.stdout ?? '', code: error.code }),
        );
        equal(code, 1, 'the exit code');
        const spf = JSON.parse(stdout).find((row) => row.check === 'spf');
        equal([spf?.result, /mailauth is not installed|npm install mailauth@/.test(spf?.detail ?? '')], ['warn', true], 'the spf row');
      },
    ],
  ];
}

/** The tests run in the consumer folder once the server is installed there beside the engine: [name, body]. */
function serverQuickStarts(consumer, env) {
  return [
    enginesTest(consumer, env),
    ['mailverify serve: a job over HTTP, then SIGTERM', () => serverQuickStart(consumer, env, 'mailverify')],
    ['mailverify-server serve: the same command under its own name', () => serverQuickStart(consumer, env, 'mailverify-server')],
  ];
}

/**
 * The server's quick start with the binary the package installs (node_modules/.bin/mailverify, as a process manager
 * runs it): the root credentials from the environment, the URL read from its first line, a job submitted and the job
 * list read with Basic authentication, the console and the widget served from the package, and SIGTERM, on which it
 * must exit with 0.
 */
async function serverQuickStart(consumer, env, command) {
  const server = spawn(join(consumer, 'node_modules', '.bin', command), ['serve', '--port', '0', '--data-dir', `data-${command}`], {
    cwd: consumer,
    env: { ...env, MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  server.stderr.on('data', (chunk) => (log += chunk));
  const exited = once(server, 'exit');
  try {
    const origin = await new Promise((resolve, reject) => {
      let stdout = '';
      const timer = setTimeout(() => reject(new Error('no "listening" line within 60 s')), 60_000);
      server.stdout.on('data', (chunk) => {
        stdout += chunk;
        const match = /^mailverify listening on (http\S+)$/m.exec(stdout);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      server.on('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the server exited at start (${code ?? signal})`));
      });
    });
    const authorization = `Basic ${Buffer.from(`root:${ROOT_PASSWORD}`).toString('base64')}`;

    const submitted = await fetch(`${origin}/v2.7/email-validations?waitTime=30000`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      // An address that fails its syntax check: answered without any network access, at every checks level.
      body: JSON.stringify({ entries: [{ inputData: 'no-at-sign' }], quality: 'Standard' }),
    });
    const job = await submitted.json();
    equal([submitted.status, job.overview?.status, job.entries?.data?.map((entry) => entry.status)], [200, 'Completed', ['AtSignNotFound']], 'the job');

    const list = await fetch(`${origin}/v2.7/email-validations`, { headers: { authorization } });
    const jobs = await list.json();
    equal([list.status, jobs.data?.map((item) => item.id)], [200, [job.overview.id]], 'the job list');

    const anonymous = await fetch(`${origin}/v2.7/email-validations`);
    await anonymous.arrayBuffer();
    equal(anonymous.status, 401, 'the status without credentials');

    // The faces ship in the package: the console's page and its script, and the widget.
    const page = await fetch(`${origin}/console/`);
    const html = await page.text();
    equal([page.status, page.headers.get('content-security-policy')?.startsWith("default-src 'self'")], [200, true], 'the console page');
    const script = await fetch(new URL(/src="([^"]+\.js)"/.exec(html)?.[1] ?? 'missing.js', `${origin}/console/`));
    await script.arrayBuffer();
    equal(script.status, 200, "the console's script");
    const widget = await fetch(`${origin}/widget/v1.js`);
    await widget.arrayBuffer();
    equal(widget.status, 200, 'the widget');

    server.kill('SIGTERM');
    const timer = setTimeout(() => server.kill('SIGKILL'), 15_000);
    const [code, signal] = await exited;
    clearTimeout(timer);
    equal({ code, signal }, { code: 0, signal: null }, 'the exit after SIGTERM');
  } catch (error) {
    throw new Error(`${error.message}\nthe server's log:\n${log}`);
  } finally {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGKILL');
      await exited;
    }
  }
}
