/**
 * Connections counted per client address and in total, at the TCP level: a connection past a cap is closed as it is
 * accepted, before any byte of it is read, so that idle or slow clients cannot take every file descriptor of the
 * process and leave none for its store, DNS and SMTP connections, or for other clients. A trusted proxy's address is
 * not capped: it carries many clients over its own connections.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type Server, type Socket } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyServerOptions } from 'fastify';

export interface ConnectionLimits {
  /** The most open connections from one address (0: no cap). */
  readonly perAddress: number;
  /** The most open connections in all (0: no cap). */
  readonly total: number;
  /** Addresses the per-address cap does not apply to. */
  readonly exempt: (address: string) => boolean;
}

/** Applies `limits` to the connections `server` accepts. */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  // Node closes a connection past maxConnections as soon as it is accepted, without emitting it.
  if (limits.total > 0) server.maxConnections = limits.total;
  if (limits.perAddress <= 0) return;
  const open = new Map<string, number>();
  // Added after the HTTP (and TLS) server's own listener, in the same turn: nothing of the connection is read yet.
  server.on('connection', (socket: Socket) => {
    const address = plainAddress(socket.remoteAddress);
    if (address === undefined || limits.exempt(address)) return;
    const count = open.get(address) ?? 0;
    if (count >= limits.perAddress) {
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/** An IPv4 address mapped into IPv6 (`::ffff:192.0.2.1`, from a dual-stack listener) as the IPv4 address it is. */
export function plainAddress(address: string | undefined): string | undefined {
  return address?.startsWith('::ffff:') === true && address.includes('.') ? address.slice(7) : address;
}

/**
 * Whether an address is a proxy that `trustProxy` trusts, as Fastify reads it: every address for `true`, and for a hop
 * count (the nearest hops are proxies, the connection's peer first); for a list (or a comma-separated string) the
 * addresses, ranges and names proxy-addr knows, compiled by the same library Fastify compiles them with; a function's
 * answer for the peer. None for false or undefined.
 */
export function trustedProxies(trustProxy: FastifyServerOptions['trustProxy'] | number): (address: string) => boolean {
  if (trustProxy === undefined || trustProxy === false) return () => false;
  if (trustProxy === true || typeof trustProxy === 'number') return () => trustProxy === true || trustProxy > 0;
  if (typeof trustProxy === 'function') return (address) => trustProxy(address, 0);
  const trusts = proxyAddr.compile(typeof trustProxy === 'string' ? trustProxy.split(',').map((name) => name.trim()) : [...trustProxy]);
  return (address) => trusts(address, 0);
}

/**
 * The process's open-file limit (its soft limit, which Node raises to the hard one at start), or null when it cannot
 * be read or there is none.
 */
export function openFileLimit(): number | null {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (line !== null) return line[1] === 'unlimited' ? null : Number(line[1]);
  } catch {
    // Not Linux: the shell tells.
  }
  if (process.platform === 'win32') return null;
  try {
    const answer = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 2000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return /^\d+$/.test(answer) ? Number(answer) : null;
  } catch {
    return null;
  }
}

/**
 * The default cap on client connections: the open-file limit less what the server keeps for its own work (the store,
 * DNS and SMTP connections, imported files, its modules): a tenth of the limit, at least 256, at most half of it.
 * None (0) when the limit is unknown.
 */
export function defaultMaxClientConnections(limit = openFileLimit()): number {
  if (limit === null) return 0;
  return Math.max(Math.floor(limit / 2), limit - Math.max(256, Math.ceil(limit / 10)));
}
