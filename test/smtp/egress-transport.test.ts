// The nodemailer transport's egresses against real parts on loopback: a microsocks SOCKS5 proxy (user/password, its
// outgoing connections bound to another 127.0.0.x address), a raw TCP exchanger that records who connected, and
// sources bound by the transport itself. Every failure is an SmtpTransportError whose message names the egress and
// never holds the proxy's password; nothing is left open.
import net, { type AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectNoLeak } from '../lab/leaks.js';
import { rejection } from '../lab/transport-rejection.js';
import { startSocksProxy, type SocksProxyProcess } from '../lab/socks-proxy.js';
import { MICROSOCKS, needing } from '../lab/system-programs.js';
import { parseSocksUrl } from '../../packages/mailverify/src/smtp/egress/egresses.js';
import { createNodemailerTransport } from '../../packages/mailverify/src/smtp/nodemailer-transport.js';
import type { EgressRoute, SmtpOpenOptions } from '../../packages/mailverify/src/smtp/transport.js';

const PASSWORD = 'pr0xy-Secret';
const transport = createNodemailerTransport();

interface Exchanger {
  readonly port: number;
  /** The peer address of each connection, in order. */
  readonly peers: string[];
  close(): Promise<void>;
}

/** A minimal exchanger: a 220 greeting, 250 to EHLO and anything else, 221 to QUIT. */
async function startExchanger(): Promise<Exchanger> {
  const peers: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    peers.push(socket.remoteAddress ?? '');
    socket.write('220 mx.example.org ESMTP\r\n');
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += String(chunk);
      for (let end = buffer.indexOf('\r\n'); end !== -1; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (/^QUIT/iu.test(line)) socket.end('221 bye\r\n');
        else if (/^EHLO/iu.test(line)) socket.write('250-mx.example.org\r\n250 PIPELINING\r\n');
        else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    peers,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A TCP server that accepts and then says nothing (a proxy that hangs), or closes at once after `closeAfter` bytes. */
async function startSilent(closeAfterBytes?: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let seen = 0;
    socket.on('data', (chunk) => {
      seen += chunk.length;
      // A SOCKS5 server that picks no-authentication, then drops the connection mid-dialog.
      if (closeAfterBytes !== undefined && seen >= closeAfterBytes) {
        socket.write(Buffer.from([5, 0]));
        socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

let proxy: SocksProxyProcess;
const proxyIt = needing(MICROSOCKS, 'the transport tests through a SOCKS5 proxy (microsocks)').it;
beforeAll(async () => {
  if (proxyIt === it) proxy = await startSocksProxy({ username: 'prober', password: PASSWORD, bindAddress: '127.0.0.7' });
  return () => proxy?.stop();
});

/**
 * The socks package leaves its handshake timer (unreferenced, inert once the handshake is done) until the connect
 * timeout and a second have passed: the leak checks below use a short connect timeout and wait that long.
 */
const CONNECT_MS = 1000;
const SETTLE_MS = CONNECT_MS + 2000;

function options(port: number, egress: EgressRoute | undefined, connectTimeoutMs = CONNECT_MS): SmtpOpenOptions {
  return {
    host: '127.0.0.1',
    port,
    servername: 'mx.example.org',
    heloName: 'probe.example.net',
    tls: { starttls: false, rejectUnauthorized: false },
    connectTimeoutMs,
    commandTimeoutMs: 3000,
    ...(egress !== undefined && { egress }),
  };
}

describe('egresses of the nodemailer transport', () => {
  proxyIt('reaches the exchanger through a SOCKS5 proxy with user and password: the exchanger sees the proxy\'s address', async () => {
    const exchanger = await startExchanger();
    cleanups.push(() => exchanger.close());
    await expectNoLeak(async () => {
      const session = await transport.open(options(exchanger.port, { id: 'socks-1', proxy: parseSocksUrl(proxy.url) }));
      expect(session.greeting.code).toBe(220);
      expect((await session.mail('verify@probe.example.net')).code).toBe(250);
      expect((await session.rcpt('someone@example.org')).code).toBe(250);
      await session.quit();
    }, SETTLE_MS);
    expect(exchanger.peers).toEqual(['127.0.0.7']);
  });

  it('binds the source address of an egress with a local address', async () => {
    const exchanger = await startExchanger();
    cleanups.push(() => exchanger.close());
    const session = await transport.open(options(exchanger.port, { id: 'addr-5', localAddress: '127.0.0.5' }));
    await session.quit();
    const other = await transport.open(options(exchanger.port, { id: 'addr-6', localAddress: '127.0.0.6' }));
    await other.quit();
    expect(exchanger.peers).toEqual(['127.0.0.5', '127.0.0.6']);
  });

  proxyIt('refused credentials: a connection failure of the egress, its message without the password', async () => {
    const exchanger = await startExchanger();
    cleanups.push(() => exchanger.close());
    await expectNoLeak(async () => {
      const wrong = parseSocksUrl(`socks5://prober:not-${PASSWORD}@${proxy.host}:${proxy.port}`);
      const error = await rejection(transport.open(options(exchanger.port, { id: 'socks-1', proxy: wrong })));
      expect({ code: error.code, phase: error.phase, egress: error.egress }).toEqual({ code: 'ECONNECTION', phase: 'connect', egress: 'socks-1' });
      expect(error.message).toContain(`egress socks-1 (socks5://prober@${proxy.host}:${proxy.port})`);
      expect(error.message).toContain('refused the credentials');
      expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain(PASSWORD);
    }, SETTLE_MS);
    expect(exchanger.peers).toEqual([]);
  });

  proxyIt('the proxy cannot reach the exchanger: a connection failure of the exchanger, not of the egress', async () => {
    const closed = await startExchanger();
    const port = closed.port;
    await closed.close();
    const error = await rejection(transport.open(options(port, { id: 'socks-1', proxy: parseSocksUrl(proxy.url) })));
    expect({ code: error.code, egress: error.egress }).toEqual({ code: 'ECONNECTION', egress: undefined });
    expect(error.message).toContain('could not connect to the exchanger');
    expect(error.message).not.toContain(PASSWORD);
  });

  it('a proxy that is not listening, one that hangs, one that closes mid-dialog: each named, nothing left open', async () => {
    const exchanger = await startExchanger();
    cleanups.push(() => exchanger.close());
    const hanging = await startSilent();
    const dropping = await startSilent(3);
    cleanups.push(() => hanging.close(), () => dropping.close());
    const gone = await startSilent();
    const gonePort = gone.port;
    await gone.close();
    await expectNoLeak(async () => {
      const refused = await rejection(
        transport.open(options(exchanger.port, { id: 'p-gone', proxy: parseSocksUrl(`socks5://u:${PASSWORD}@127.0.0.1:${gonePort}`) })),
      );
      expect({ code: refused.code, egress: refused.egress }).toEqual({ code: 'ECONNECTION', egress: 'p-gone' });
      expect(refused.message).toContain(`cannot connect to the proxy of egress p-gone (socks5://u@127.0.0.1:${gonePort})`);

      const silent = await rejection(
        transport.open(options(exchanger.port, { id: 'p-hang', proxy: parseSocksUrl(`socks5://u:${PASSWORD}@127.0.0.1:${hanging.port}`) }, 300)),
      );
      expect({ code: silent.code, phase: silent.phase, egress: silent.egress }).toEqual({ code: 'ETIMEDOUT', phase: 'connect', egress: 'p-hang' });
      expect(silent.message).toContain('no SOCKS5 answer from the proxy');

      const dropped = await rejection(
        transport.open(options(exchanger.port, { id: 'p-drop', proxy: parseSocksUrl(`socks5://127.0.0.1:${dropping.port}`) })),
      );
      expect({ code: dropped.code, egress: dropped.egress }).toEqual({ code: 'ECONNECTION', egress: 'p-drop' });
      for (const error of [refused, silent, dropped]) expect(`${error.message} ${error.stack}`).not.toContain(PASSWORD);
    }, SETTLE_MS);
    expect(exchanger.peers).toEqual([]);
  });

  it('a source address the host cannot bind: a connection failure naming the egress', async () => {
    const exchanger = await startExchanger();
    cleanups.push(() => exchanger.close());
    // TEST-NET-1 (RFC 5737): no interface of this host has it.
    const error = await rejection(transport.open(options(exchanger.port, { id: 'addr-x', localAddress: '192.0.2.1' })));
    expect({ code: error.code, phase: error.phase, egress: error.egress }).toEqual({ code: 'ECONNECTION', phase: 'connect', egress: 'addr-x' });
    expect(error.message).toContain('egress addr-x cannot connect from 192.0.2.1');
    expect(exchanger.peers).toEqual([]);
  });
});
