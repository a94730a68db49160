// The real `mailverify serve` from the build (dist/), in child processes: configured by a config file, variables and
// flags together; refused with a message naming a bad key; stopped by SIGHUP; and stopped when it was started through
// npx and npx is stopped (npm does not pass SIGTERM on).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTlsLab } from '../lab/tls-ca.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'packages', 'mailverify', 'bin', 'mailverify.js');
const PASSWORD = 'a serve test password';
const dir = mkdtempSync(join(tmpdir(), 'mailverify-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const baseEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('MAILVERIFY_') || name.startsWith('npm_')) delete env[name];
  return env;
};

interface Running {
  child: ChildProcess;
  origin: string;
  stderr: () => string;
  closed: Promise<number | null>;
}

/** Spawns `command args` and resolves once the server prints the origin it listens on. */
async function launch(command: string, args: string[], env: NodeJS.ProcessEnv, cwd = dir): Promise<Running> {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  // 'close': every holder of the pipes is gone, the server too when npm started it.
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const origin = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk) => {
      stdout += String(chunk);
      const match = /listening on (https?:\/\/[^\s]+)/.exec(stdout);
      if (match !== null) resolve(match[1]!);
    });
    void closed.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return { child, origin, stderr: () => stderr, closed };
}

const basic = { authorization: `Basic ${Buffer.from(`operator:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' };

describe('mailverify serve: configuration', () => {
  it('takes its options from a config file, variables and flags, in that order of strength', async () => {
    const passwordFile = join(dir, 'root-password');
    writeFileSync(passwordFile, `${PASSWORD}\n`);
    const config = join(dir, 'mailverify.json');
    writeFileSync(
      config,
      JSON.stringify({
        port: 0,
        dataDir: 'data-config',
        rootUsername: 'from-the-file',
        rootPasswordFile: 'root-password',
        checks: 'syntax',
        retention: '1.02:03:04',
        maxEntriesPerJob: 2,
        trustProxy: '127.0.0.1',
        logLevel: 'info',
        maxBodySize: '64MiB',
      }),
    );
    const env = { ...baseEnv(), MAILVERIFY_CONFIG: config, MAILVERIFY_ROOT_USERNAME: 'operator', MAILVERIFY_LOG_LEVEL: 'silent' };
    const server = await launch(process.execPath, [CLI, 'serve', '--max-body-size', '1KiB'], env);
    try {
      const submit = (entries: string[]) =>
        fetch(`${server.origin}/v2.7/email-validations?waitTime=10000`, {
          method: 'POST',
          headers: { ...basic, 'x-forwarded-for': '203.0.113.9' },
          body: JSON.stringify({ entries: entries.map((inputData) => ({ inputData })) }),
        });
      const done = await submit(['jo@example.org']);
      expect(done.status).toBe(200);
      const job = (await done.json()) as any;
      // --checks syntax: offline, no DNS asked; the retention and the proxy's client address from the file.
      expect(job.entries.data[0].status).toBe('Success');
      expect(job.overview).toMatchObject({ retention: '1.02:03:04', clientIP: '203.0.113.9' });
      expect((await submit(['a@example.org', 'b@example.org', 'c@example.org'])).status).toBe(400);
      // The flag's 1 KiB wins over the file's 64 MiB.
      expect((await submit(Array.from({ length: 2 }, () => `${'x'.repeat(600)}@example.org`))).status).toBe(413);
      // MAILVERIFY_LOG_LEVEL=silent wins over the file's info.
      expect(server.stderr()).toBe('');
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.closed).toBe(0);
    }
  });

  it('serves HTTPS with --tls-cert and --tls-key, and with --tls-client-ca asks clients for a certificate of those CAs', async () => {
    const tls = makeTlsLab();
    const env = { ...baseEnv(), MAILVERIFY_ROOT_PASSWORD: PASSWORD, MAILVERIFY_ROOT_USERNAME: 'operator' };
    const flags = ['--port', '0', '--data-dir', join(dir, 'tls'), '--log-level', 'silent', '--tls-cert', tls.server.cert.path, '--tls-key', tls.server.key.path];
    const server = await launch(process.execPath, [CLI, 'serve', ...flags, '--tls-client-ca', tls.clientCa.cert.path], env);
    try {
      expect(server.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const { port } = new URL(server.origin);
      // The handshake as openssl sees it: the server's certificate verifies, and the CAs it asks a client certificate of.
      const handshake = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', tls.serverCa.cert.path], { input: '', encoding: 'utf8' });
      expect(handshake.stdout).toContain('Verify return code: 0 (ok)');
      expect(handshake.stdout).toMatch(/Acceptable client certificate CA names\n.*CN = mailverify lab client CA\n/);
      // Asked for, not required: a client without one is answered.
      const health = await new Promise<number>((resolve, reject) =>
        httpsGet(`${server.origin}/health`, { ca: tls.serverCa.cert.pem }, (response) => resolve(response.resume().statusCode!)).on('error', reject),
      );
      expect(health).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.closed).toBe(0);
      tls.close();
    }
  });

  it('refuses to start on a bad key, value or flag, naming it (exit 2)', () => {
    const config = join(dir, 'bad.json');
    writeFileSync(config, JSON.stringify({ prot: 8080 }));
    const run = spawnSync(process.execPath, [CLI, 'serve', '--config', config], { env: { ...baseEnv(), MAILVERIFY_ROOT_PASSWORD: 'x' }, encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('bad.json: unknown key "prot" (did you mean "port"?)');
    const badValue = spawnSync(process.execPath, [CLI, 'serve'], { env: { ...baseEnv(), MAILVERIFY_ROOT_PASSWORD: 'x', MAILVERIFY_CHECKS: 'mx' }, encoding: 'utf8' });
    expect(badValue.status).toBe(2);
    expect(badValue.stderr).toContain('MAILVERIFY_CHECKS must be one of syntax, dns, smtp, got mx');
    const misspelt = spawnSync(process.execPath, [CLI, 'serve', '--allow-private-adresses'], { env: { ...baseEnv(), MAILVERIFY_ROOT_PASSWORD: 'x' }, encoding: 'utf8' });
    expect(misspelt.status).toBe(2);
    expect(misspelt.stderr).toContain('unknown option --allow-private-adresses (did you mean --allow-private-addresses?)');
  });
});

describe('mailverify serve: stopping', () => {
  it('SIGHUP, also sent as soon as the origin is printed, stops it gracefully (exit 0)', async () => {
    const env = { ...baseEnv(), MAILVERIFY_ROOT_PASSWORD: PASSWORD };
    const server = await launch(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', join(dir, 'hup'), '--log-level', 'silent'], env);
    server.child.kill('SIGHUP');
    // At once: the server listens for signals before it prints its origin.
    expect(await server.closed).toBe(0);
    expect(server.stderr()).toContain('mailverify: SIGHUP: stopping');
  });

  it('started through npx, it stops when npx is stopped with SIGTERM', async () => {
    // A consumer package whose node_modules holds this one, as an install would link it.
    const consumer = join(dir, 'consumer');
    mkdirSync(join(consumer, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    symlinkSync(join(ROOT, 'packages', 'mailverify'), join(consumer, 'node_modules', 'mailverify'));
    symlinkSync(join(ROOT, 'packages', 'server'), join(consumer, 'node_modules', 'mailverify-server'));
    symlinkSync('../mailverify/bin/mailverify.js', join(consumer, 'node_modules', '.bin', 'mailverify'));
    // Offline: npx finds the local binary and never asks the registry.
    const env = { ...baseEnv(), MAILVERIFY_ROOT_PASSWORD: PASSWORD, npm_config_offline: 'true', npm_config_update_notifier: 'false' };
    const server = await launch('npx', ['mailverify', 'serve', '--port', '0', '--data-dir', join(dir, 'npx'), '--log-level', 'silent'], env, consumer);
    try {
      expect((await fetch(`${server.origin}/health`)).status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
    }
    // The pipes close once the server, npm's grandchild, has exited too.
    await server.closed;
    expect(server.stderr()).toMatch(/mailverify: npm \(process \d+\) is gone: stopping/);
    await expect(fetch(`${server.origin}/health`)).rejects.toThrow();
  });
});
