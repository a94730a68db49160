/**
 * The SOCKS5 handshake (RFC 1928, RFC 1929 user/password) over a TCP connection already open to the proxy, by the
 * `socks` package. The destination is always an IP address the engine resolved and vetted (never a private one
 * unless allowed): the proxy never resolves an exchanger's name.
 *
 * The package's errors carry the options they were given, the proxy's password included: none of them is passed
 * on, only a message of ours built from its reason.
 */
import type { Socket } from 'node:net';
import { SocksClient } from 'socks';
import type { SocksProxy } from './egresses.js';

/**
 * The package's own handshake timer is a backstop just past the caller's, which decides (timers due together run in
 * the order they are due). The package never clears it: unreferenced, and a no-op once the handshake is done, it
 * stays until then, so it is kept short.
 */
const SOCKS_TIMER_SLACK_MS = 1000;

/** Why a SOCKS5 handshake failed, in words that hold no secret. */
export class SocksHandshakeError extends Error {
  constructor(
    message: string,
    /** `credentials`: user/password refused or none accepted; `target`: the proxy could not reach the exchanger. */
    readonly reason: 'credentials' | 'target' | 'protocol' | 'closed',
  ) {
    super(message);
    this.name = 'SocksHandshakeError';
  }
}

/**
 * Asks the proxy at the other end of `socket` (connected) for a connection to `host`:`port`; resolves once the proxy
 * has made it, the socket then carrying the exchanger's bytes. Rejects with a `SocksHandshakeError`.
 */
export async function socksHandshake(socket: Socket, proxy: SocksProxy, host: string, port: number, timeoutMs: number): Promise<void> {
  try {
    await SocksClient.createConnection({
      command: 'connect',
      proxy: {
        host: proxy.host,
        port: proxy.port,
        type: 5,
        ...(proxy.username !== undefined && { userId: proxy.username, password: proxy.password ?? '' }),
      },
      destination: { host, port },
      existing_socket: socket,
      timeout: timeoutMs + SOCKS_TIMER_SLACK_MS,
    });
  } catch (error) {
    throw handshakeError(error instanceof Error ? error.message : '');
  }
}

function handshakeError(reason: string): SocksHandshakeError {
  if (/Authentication failed|no accepted authentication/iu.test(reason)) {
    return new SocksHandshakeError('the proxy refused the credentials (or accepts none of those offered)', 'credentials');
  }
  const rejected = /rejected connection - (\w+)/u.exec(reason);
  if (rejected !== null) return new SocksHandshakeError(`the proxy could not connect to the exchanger (${rejected[1]})`, 'target');
  if (/Socket closed/iu.test(reason)) return new SocksHandshakeError('the proxy closed the connection during the SOCKS5 handshake', 'closed');
  return new SocksHandshakeError('the proxy did not complete the SOCKS5 handshake (not a SOCKS5 proxy?)', 'protocol');
}
