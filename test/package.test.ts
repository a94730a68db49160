// The built packages as a consumer sees them: `npm test` builds their dist/ first; a temporary consumer package links
// to both (packages/mailverify and packages/server) and loads them through their exports maps, once with import and
// once with require.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repository = fileURLToPath(new URL('..', import.meta.url));
/** The engine's package folder. */
const root = join(repository, 'packages', 'mailverify');
/** The server's package folder. */
const serverRoot = join(repository, 'packages', 'server');
let consumer: string;

beforeAll(() => {
  consumer = mkdtempSync(join(tmpdir(), 'mailverify-consumer-'));
  mkdirSync(join(consumer, 'node_modules'));
  symlinkSync(root, join(consumer, 'node_modules', 'mailverify'), 'dir');
  symlinkSync(serverRoot, join(consumer, 'node_modules', 'mailverify-server'), 'dir');
  // What each package's prepack adds: the README, the changelog and the licence.
  for (const folder of [root, serverRoot]) execFileSync(process.execPath, [join(repository, 'scripts', 'package-files.mjs')], { cwd: folder });
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
});

afterAll(() => {
  rmSync(consumer, { recursive: true, force: true });
});

function run(file: string, source: string): unknown {
  writeFileSync(join(consumer, file), source);
  return JSON.parse(execFileSync(process.execPath, [file], { cwd: consumer, encoding: 'utf8' }));
}

const PROBE = `
  const r = parseAddress('(c) Joe@Bücher.DE');
  const bad = parseAddress('test@iana.org.');
  console.log(JSON.stringify({ r, bad, classification: classificationOf('Success'), n: STATUS_CODES.length }));
`;
const EXPECTED = {
  r: {
    ok: true,
    emailAddress: 'Joe@Bücher.DE',
    localPart: 'Joe',
    domainPart: 'Bücher.DE',
    asciiDomainPart: 'xn--bcher-kva.de',
    hasInternationalMailboxName: false,
    hasInternationalDomainName: true,
  },
  bad: { ok: false, status: 'DomainPartCompliancyFailure', syntaxFailureIndex: 14 },
  classification: 'Deliverable',
  n: 44,
};

describe('the published package', () => {
  it('loads with import from an ES module consumer', () => {
    expect(run('esm.mjs', `import { parseAddress, classificationOf, STATUS_CODES } from 'mailverify';\n${PROBE}`)).toEqual(EXPECTED);
  });

  it('loads with require from a CommonJS consumer', () => {
    expect(run('cjs.cjs', `const { parseAddress, classificationOf, STATUS_CODES } = require('mailverify');\n${PROBE}`)).toEqual(EXPECTED);
  });

  it("loads the doctor's SPF library (mailauth) only when diagnoseEgress checks SPF, with import and with require", () => {
    // A DNS server that refuses at once (nothing listens on port 1): every check answers fast, the spf one included.
    const diagnose = `diagnoseEgress({ allowPrivateAddresses: true, heloName: 'probe.example.com', dns: { servers: ['127.0.0.1:1'], timeoutMs: 500 }, smtp: { egress: [{ id: 'x', publicAddress: '192.0.2.1' }] } })`;
    const loaded = `Object.keys(require.cache).some((path) => path.includes('/node_modules/mailauth/'))`;
    const cjs = `const { diagnoseEgress } = require('mailverify');\nconst before = ${loaded};\n${diagnose}.then((rows) => console.log(JSON.stringify([before, ${loaded}, rows.map((row) => row.check + ' ' + row.result)])));`;
    const expected = ['public-address ok', 'ptr warn', 'helo warn', 'spf warn', 'dnsbl warn', 'port25 fail'];
    expect(run('doctor-cjs.cjs', cjs)).toEqual([false, true, expected]);
    const esm = `import { diagnoseEgress } from 'mailverify';\nconst rows = await ${diagnose};\nconsole.log(JSON.stringify(rows.map((row) => row.check + ' ' + row.result)));`;
    expect(run('doctor-esm.mjs', esm)).toEqual(expected);
  });

  it('ships type declarations for both module systems and the CLI', () => {
    const files = packedFiles(root);
    for (const file of [
      'dist/index.js',
      'dist/index.cjs',
      'dist/index.d.ts',
      'dist/index.d.cts',
      'dist/internal.js',
      'dist/internal.cjs',
      'dist/internal.d.ts',
      'dist/internal.d.cts',
      'dist/cli.js',
      'dist/offline-worker.js',
      'dist/offline-worker.cjs',
      'bin/mailverify.js',
      'package.json',
      'README.md',
    ]) {
      expect(files).toContain(file);
    }
    const serverFiles = packedFiles(serverRoot);
    for (const file of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/cli.js', 'dist/cli.d.ts', 'bin/mailverify-server.js', 'package.json', 'README.md']) {
      expect(serverFiles).toContain(file);
    }
  });

  it('ships the licence, the changelog and a README whose links to the guides lead to the repository, in both packages', () => {
    const readme = readFileSync(join(repository, 'README.md'), 'utf8');
    const documents = [...readme.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((match) => match[1]!);
    expect(documents).toContain('docs/verification.md');
    const { url } = (JSON.parse(readFileSync(join(repository, 'package.json'), 'utf8')) as { repository: { url: string } }).repository;
    const base = url.replace(/^git\+/, '').replace(/\.git$/, '');
    for (const folder of [root, serverRoot]) {
      const files = packedFiles(folder);
      for (const file of ['LICENSE', 'THIRD-PARTY-NOTICES.md', 'CHANGELOG.md', 'README.md']) expect(files).toContain(file);
      expect(files.filter((file) => /^(src|test|bench|docs)\//.test(file))).toEqual([]);
      const packedReadme = readFileSync(join(folder, 'README.md'), 'utf8');
      expect(packedReadme).not.toMatch(/\]\(docs\//);
      for (const document of documents) expect(packedReadme).toContain(`](${base}/blob/main/${document}`);
    }
  });

  it("gives the CommonJS build a real import.meta.url, not esbuild's empty stand-in", () => {
    for (const file of ['index.cjs', 'internal.cjs', 'offline-worker.cjs']) {
      expect(readFileSync(join(root, 'dist', file), 'utf8')).not.toMatch(/\bimport_meta\d* = \{\}/);
    }
    expect(readFileSync(join(serverRoot, 'dist', 'index.cjs'), 'utf8')).not.toMatch(/\bimport_meta\d* = \{\}/);
  });
});

/** The paths `npm pack` puts into the tarball of the package in `folder`. */
function packedFiles(folder: string): string[] {
  const listing = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: folder, encoding: 'utf8' });
  return (JSON.parse(listing) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
}

/** Packages of the server: HTTP, database, tokens, and later spreadsheets. */
const SERVER_PACKAGES = /node_modules\/(fastify|@fastify|libsql|@libsql|pg|pg-[a-z-]+|jose|exceljs|xlsx|@e965|ioredis|@ioredis)\//;
/** The PostgreSQL driver, loaded only when a PostgreSQL store is opened. */
const POSTGRES_PACKAGES = /node_modules\/(pg|pg-[a-z-]+)\//;

describe("the CLI's offline worker thread", () => {
  it('checks and encodes a chunk from the built files, ES module and CommonJS alike', () => {
    const probe = (file: string) => `
      const { Worker } = require('node:worker_threads');
      const { join } = require('node:path');
      const worker = new Worker(join(__dirname, 'node_modules', 'mailverify', 'dist', ${JSON.stringify(file)}), {
        workerData: { engine: {}, output: 'jsonl', csvFormulas: 'escape' },
      });
      worker.once('message', (result) => {
        const lines = Buffer.from(result.bytes).toString('utf8').trim().split('\\n').map((line) => JSON.parse(line));
        console.log(JSON.stringify([result.seq, result.count, lines.map((e) => [e.index, e.inputData, e.status])]));
        void worker.terminate();
      });
      worker.postMessage({ seq: 3, start: 10, block: new TextEncoder().encode('jane@example.org\\r\\nno-at-sign\\n') });`;
    const expected = [3, 2, [[10, 'jane@example.org', 'Success'], [11, 'no-at-sign', 'AtSignNotFound']]];
    expect(run('offline-worker-esm.cjs', probe('offline-worker.js'))).toEqual(expected);
    expect(run('offline-worker-cjs.cjs', probe('offline-worker.cjs'))).toEqual(expected);
  });
});

describe('mailverify-server', () => {
  it('loads through the exports map with import and with require', () => {
    const probe = `console.log(JSON.stringify(['mailverify', 'createServer', 'createRequestHandler', 'openSqliteStore', 'openPostgresStore'].map((n) => typeof server[n])));`;
    const expected = ['function', 'function', 'function', 'function', 'function'];
    expect(run('server-esm.mjs', `import * as server from 'mailverify-server';\n${probe}`)).toEqual(expected);
    expect(run('server-cjs.cjs', `const server = require('mailverify-server');\n${probe}`)).toEqual(expected);
  });

  it('reads an uploaded workbook (in its worker thread) from the built files, ES module and CommonJS alike', async () => {
    const { default: ExcelJS } = await import('exceljs');
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('list');
    sheet.addRow(['email']);
    sheet.addRow(['jane@example.org']);
    sheet.addRow(['no-at-sign']);
    writeFileSync(join(consumer, 'list.xlsx'), Buffer.from(await workbook.xlsx.writeBuffer()));
    const probe = (load: string) => `
      ${load}
      const { mkdtempSync } = require('node:fs');
      const { tmpdir } = require('node:os');
      const { join } = require('node:path');
      (async () => {
        const app = await server.createServer({ dataDir: mkdtempSync(join(tmpdir(), 'mv-pkg-')), rootUsername: 'u', rootPassword: 'p', verifier: { checks: 'syntax' } });
        const origin = await app.listen({ host: '127.0.0.1', port: 0 });
        const form = new FormData();
        form.append('inputFile', new Blob([require('node:fs').readFileSync('list.xlsx')], { type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }), 'list.xlsx');
        form.append('settings', JSON.stringify({ startingRow: 1 }));
        const answer = await fetch(origin + '/v2.7/email-validations?waitTime=10000', { method: 'POST', body: form, headers: { authorization: 'Basic ' + Buffer.from('u:p').toString('base64') } });
        const job = await answer.json();
        await app.close();
        console.log(JSON.stringify([answer.status, job.entries.data.map((e) => e.status)]));
      })();`;
    const expected = [200, ['Success', 'AtSignNotFound']];
    expect(run('workbook-cjs.cjs', probe(`const server = require('mailverify-server');`))).toEqual(expected);
    expect(
      run('workbook-esm.mjs', probe(`import * as server from 'mailverify-server';\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);`)),
    ).toEqual(expected);
  });

  it("is not loaded by 'mailverify': the engine alone loads no HTTP, database or token code", () => {
    const loaded = (entry: string): string[] =>
      run(
        `loaded-${entry.replace(/\W/g, '-')}.cjs`,
        `require(${JSON.stringify(entry)});\nconsole.log(JSON.stringify(Object.keys(require.cache)));`,
      ) as string[];
    expect(loaded('mailverify').filter((path) => SERVER_PACKAGES.test(path))).toEqual([]);
    expect(loaded('mailverify-server').filter((path) => SERVER_PACKAGES.test(path)).length).toBeGreaterThan(0);
    // The Redis client of a cluster is loaded only when a cluster opens a connection.
    expect(loaded('mailverify-server').filter((path) => /node_modules\/(ioredis|@ioredis)\//.test(path))).toEqual([]);
    expect(loaded('mailverify-server').filter((path) => POSTGRES_PACKAGES.test(path))).toEqual([]);
    // The ES module build: the files dist/index.js imports, followed through the shared chunks.
    const seen = new Set<string>();
    const bare = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = readFileSync(join(root, 'dist', file), 'utf8');
      for (const match of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
        const specifier = match[1] ?? match[2]!;
        if (specifier.startsWith('./')) visit(specifier.slice(2));
        else bare.add(specifier);
      }
    };
    visit('index.js');
    expect([...bare].filter((name) => /^(fastify|@fastify\/|libsql|jose|exceljs|xlsx|ioredis)/.test(name) || /^pg(-|\/|$)/.test(name))).toEqual([]);
    expect([...bare].some((name) => name.startsWith('nodemailer/'))).toBe(true); // the walk does reach the engine's imports
  });
});

describe('the optional mailauth', () => {
  it("is the version the doctor names when it is missing, and the one tested (dev dependency)", async () => {
    const { MAILAUTH_VERSION } = await import('../packages/mailverify/src/doctor/spf.js');
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(manifest['peerDependencies']).toEqual({ mailauth: MAILAUTH_VERSION });
    expect(manifest['peerDependenciesMeta']).toEqual({ mailauth: { optional: true } });
    expect(manifest['dependencies']!['mailauth']).toBeUndefined();
    const repositoryManifest = JSON.parse(readFileSync(join(repository, 'package.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(repositoryManifest['devDependencies']!['mailauth']).toBe(MAILAUTH_VERSION);
  });
});

describe('the version', () => {
  it('in the code is the one in package.json', async () => {
    const { VERSION } = await import('../packages/mailverify/src/version.js');
    expect(VERSION).toBe((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version);
  });

  it('is the same in both packages, and the server depends on exactly its engine', () => {
    const engine = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const server = JSON.parse(readFileSync(join(serverRoot, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
    expect(server.version).toBe(engine.version);
    expect(server.dependencies['mailverify']).toBe(engine.version);
  });
});
