// A PostgreSQL server and a Redis server of a test's own, on free loopback ports, for the recovery tests that restart
// PostgreSQL or flush Redis: the shared servers of the machine stay untouched for the other tests running meanwhile.
// Both are the machine's real binaries (the Debian packages .ci/run installs), started and stopped as child processes.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A free TCP port on 127.0.0.1 (closed again before it is returned). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface PrivateRedis {
  readonly url: string;
  stop(): Promise<void>;
}

/** A Redis without persistence on `port` (default: a free one). */
export async function startPrivateRedis(port?: number): Promise<PrivateRedis> {
  port ??= await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitForOutput(child, /Ready to accept connections/, 'redis-server');
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => stopChild(child),
  };
}

export interface PrivatePostgres {
  readonly url: string;
  /** A fast restart: every connection is dropped, the data stays. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The binaries of the newest PostgreSQL installed (Debian: /usr/lib/postgresql/<version>/bin). */
function postgresBin(name: string): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return join('/usr/lib/postgresql', versions[0]!, 'bin', name);
}

/** PostgreSQL refuses to run as root: as root, its commands run as the `postgres` user of the package. */
function asOwner(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-pg-'));
  if (process.getuid?.() === 0) {
    chmodSync(dir, 0o700);
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(group.trim()));
  }
  const data = join(dir, 'data');
  await run(...asOwner(postgresBin('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']));
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const ctl = (...args: string[]) => run(...asOwner(postgresBin('pg_ctl'), ['-D', data, '-w', '-o', options, '-l', join(dir, 'log'), ...args]));
  await ctl('start');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: async () => {
      await ctl('-m', 'fast', 'restart');
    },
    stop: async () => {
      await ctl('-m', 'fast', 'stop').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function waitForOutput(child: ChildProcess, pattern: RegExp, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const look = (chunk: Buffer): void => {
      output += String(chunk);
      if (pattern.test(output)) resolve();
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${output}`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
