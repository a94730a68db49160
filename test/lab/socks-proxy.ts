/**
 * A real SOCKS5 proxy for the egress tests: Debian's `microsocks` in a process of its own on a loopback address,
 * with user/password (RFC 1929) when given and its outgoing connections bound to `bindAddress` (`-b`), so that a lab
 * exchanger can tell by the peer address that a connection came through it. `.ci/run` installs microsocks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo } from 'node:net';

export interface SocksProxyProcess {
  readonly host: string;
  readonly port: number;
  /** socks5://user:password@host:port (or without credentials). */
  readonly url: string;
  stop(): Promise<void>;
}

export interface SocksProxyOptions {
  readonly host?: string;
  readonly username?: string;
  readonly password?: string;
  /** The source address of the proxy's connections to exchangers. */
  readonly bindAddress?: string;
}

/** A free TCP port on `host` (bound and released: microsocks takes a port number, not 0). */
async function freePort(host: string): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function listening(host: string, port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`microsocks exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, host);
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`microsocks did not listen on ${host}:${port} within 5 s`);
}

export async function startSocksProxy(options: SocksProxyOptions = {}): Promise<SocksProxyProcess> {
  const host = options.host ?? '127.0.0.1';
  const port = await freePort(host);
  const args = ['-i', host, '-p', String(port)];
  if (options.username !== undefined) args.push('-u', options.username, '-P', options.password ?? '');
  if (options.bindAddress !== undefined) args.push('-b', options.bindAddress);
  const child = spawn('microsocks', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => reject(new Error(`microsocks could not be started (is it installed? .ci/run installs it): ${error.message}`)));
  });
  await spawned;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await listening(host, port, child);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
  const credentials =
    options.username === undefined ? '' : `${encodeURIComponent(options.username)}:${encodeURIComponent(options.password ?? '')}@`;
  return {
    host,
    port,
    url: `socks5://${credentials}${host}:${port}`,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
