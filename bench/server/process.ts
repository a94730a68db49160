/**
 * The server benchmarks' server: `server.ts` (bundled beside the benchmark as server-bench-server.mjs) in a child
 * process of its own, so that its memory is its own, driven over IPC for its figures (mark, stats, close).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { VerifierOptions } from '../../packages/mailverify/src/engine/verifier.js';
import type { ServerStats } from './server.js';

const SERVER = fileURLToPath(new URL('server-bench-server.mjs', import.meta.url)); // beside this bundle in bench/.out/
export const USERNAME = 'bench';
export const PASSWORD = 'bench-password';
export const AUTHORIZATION = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64')}`;

export interface ServerProcess {
  readonly port: number;
  /** Stats at start, once listening. */
  readonly idle: ServerStats;
  mark(): Promise<void>;
  stats(): Promise<ServerStats>;
  close(): Promise<void>;
}

export async function startServer(
  dataDir: string,
  verifier: VerifierOptions = { checks: 'syntax' },
  execArgv: string[] = [],
  /** Another build of server.ts (a baseline's), default the one beside this bundle. */
  script: string = SERVER,
  /** More options of the server (rate limits, trusted proxies...). */
  server: { rateLimits?: boolean; trustProxy?: string; maxConnectionsPerAddress?: number } = {},
): Promise<ServerProcess> {
  const child: ChildProcess = fork(script, [JSON.stringify({ dataDir, username: USERNAME, password: PASSWORD, verifier, server })], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv,
  });
  let nextId = 0;
  const pending = new Map<number, (message: { stats?: ServerStats }) => void>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<{ port: number; idle: ServerStats }>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening`)));
    child.on('message', (message: { ready?: boolean; id?: number; port: number; idle: ServerStats; stats?: ServerStats }) => {
      if (message.ready === true) resolve(message);
      else if (message.id !== undefined) {
        pending.get(message.id)?.(message);
        pending.delete(message.id);
      }
    });
  });
  const call = (command: string) =>
    new Promise<{ stats?: ServerStats }>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      child.send({ id, command });
    });
  return {
    port: ready.port,
    idle: ready.idle,
    mark: async () => void (await call('mark')),
    stats: async () => (await call('stats')).stats!,
    close: async () => {
      await call('close');
      await exited;
    },
  };
}
