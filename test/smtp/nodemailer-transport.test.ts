// The nodemailer transport against real servers on loopback: smtp-server (exact replies, STARTTLS) and a small raw
// `node:net` server for what smtp-server cannot do (multi-line and garbage replies, silent or negative greetings,
// drops, split chunks, bare LF, replies withheld). No mocks: every byte goes through real sockets.
import { createHook } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoLeak } from '../lab/leaks.js';
import { rejection } from '../lab/transport-rejection.js';
import { createNodemailerTransport } from '../../packages/mailverify/src/smtp/nodemailer-transport.js';
import {
  SmtpTransportError,
  type SmtpOpenOptions,
  type SmtpPhase,
  type SmtpSession,
  type SmtpTransportErrorCode,
} from '../../packages/mailverify/src/smtp/transport.js';
import type { SmtpReply } from '../../packages/mailverify/src/smtp/reply.js';

const KEY = readFileSync(new URL('../lab/tls/localhost-key.pem', import.meta.url));
const CERT = readFileSync(new URL('../lab/tls/localhost-cert.pem', import.meta.url));

const transport = createNodemailerTransport();

function openOptions(port: number, overrides: Partial<SmtpOpenOptions> = {}): SmtpOpenOptions {
  return {
    host: '127.0.0.1',
    port,
    servername: '',
    heloName: 'probe.example.net',
    tls: { starttls: true, rejectUnauthorized: false },
    connectTimeoutMs: 3000,
    commandTimeoutMs: 3000,
    ...overrides,
  };
}

function expectError(error: SmtpTransportError, code: SmtpTransportErrorCode, phase: SmtpPhase): void {
  expect({ code: error.code, phase: error.phase }).toEqual({ code, phase });
}

function pick(reply: SmtpReply): { code: number; enhancedCode: string | null; text: string } {
  return { code: reply.code, enhancedCode: reply.enhancedCode, text: reply.text };
}

/** The reply code of each fulfilled command, the error code of each rejected one. */
function outcomes(results: Array<PromiseSettledResult<SmtpReply>>): Array<number | string> {
  return results.map((r) => (r.status === 'fulfilled' ? r.value.code : (r.reason as SmtpTransportError).code));
}

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------------------
// A raw SMTP server: a scripted line handler, a record of every byte and of how lines arrived per read.

interface RawConnection {
  readonly socket: net.Socket;
  /** Every byte received, as received. */
  bytes: Buffer;
  /** The complete lines received, decoded as UTF-8, without their line end. */
  readonly lines: string[];
  /** For each read that completed at least one line: how many lines it completed. */
  readonly linesPerRead: number[];
  write(text: string): void;
}

interface RawServer {
  readonly port: number;
  readonly connections: RawConnection[];
  openSockets(): number;
  close(): Promise<void>;
}

interface RawScript {
  /** The greeting; null for none (a silent server). Default: a 220 banner. */
  banner?: string | null;
  /** Called for each complete line; the default answers a plain ESMTP dialog (see `standardReply`). */
  onLine?: (line: string, connection: RawConnection) => void;
  onConnection?: (connection: RawConnection) => void;
}

/** Every server a test started; closed after each test (closing twice is harmless). */
const servers: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function closeOnce(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}

/** Answers everything but RCPT, which it never answers. */
function answerAllButRcpt(line: string, connection: RawConnection): void {
  if (!line.startsWith('RCPT')) standardReply(line, connection);
}

/** The answer of an ordinary server advertising the given extensions. */
function standardReply(line: string, connection: RawConnection, extensions: readonly string[] = ['PIPELINING']): void {
  const verb = line.split(' ')[0]!.toUpperCase();
  switch (verb) {
    case 'EHLO':
      connection.write(
        ['raw.test greets you', ...extensions]
          .map((text, i, all) => `250${i === all.length - 1 ? ' ' : '-'}${text}\r\n`)
          .join(''),
      );
      return;
    case 'HELO':
      return connection.write('250 raw.test\r\n');
    case 'MAIL':
      return connection.write('250 2.1.0 Sender OK\r\n');
    case 'RCPT':
      return connection.write('250 2.1.5 Recipient OK\r\n');
    case 'RSET':
      return connection.write('250 2.0.0 Reset\r\n');
    case 'QUIT':
      connection.write('221 2.0.0 Bye\r\n');
      connection.socket.end();
      return;
    default:
      connection.write('502 5.5.1 Not implemented\r\n');
  }
}

async function startRawServer(script: RawScript = {}): Promise<RawServer> {
  const connections: RawConnection[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = '';
    const connection: RawConnection = {
      socket,
      bytes: Buffer.alloc(0),
      lines: [],
      linesPerRead: [],
      write: (text) => {
        if (!socket.destroyed && socket.writable) socket.write(text);
      },
    };
    connections.push(connection);
    socket.on('data', (chunk: Buffer) => {
      connection.bytes = Buffer.concat([connection.bytes, chunk]);
      pending += chunk.toString('utf8');
      const parts = pending.split('\n');
      pending = parts.pop()!;
      if (parts.length > 0) connection.linesPerRead.push(parts.length);
      for (const part of parts) {
        const line = part.endsWith('\r') ? part.slice(0, -1) : part;
        connection.lines.push(line);
        if (script.onLine) script.onLine(line, connection);
        else standardReply(line, connection);
      }
    });
    script.onConnection?.(connection);
    const banner = script.banner === undefined ? '220 raw.test ESMTP ready\r\n' : script.banner;
    if (banner !== null) connection.write(banner);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const raw: RawServer = {
    port: (server.address() as net.AddressInfo).port,
    connections,
    openSockets: () => sockets.size,
    close: closeOnce(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }),
  };
  servers.push(raw);
  return raw;
}

// ---------------------------------------------------------------------------------------------------------------
// smtp-server: exact replies through onRcptTo errors with responseCode (the enhanced code written in the message).

interface LabSmtpServer {
  readonly server: SMTPServer;
  readonly port: number;
  /** Every command line smtp-server received, in order (from its transaction log). */
  readonly commands: string[];
  /** What onMailFrom saw of the session (TLS and SNI). */
  readonly mailSessions: Array<{ secure: boolean; servername: string | false | null | undefined }>;
  readonly recipients: string[];
  openConnections(): number;
  close(): Promise<void>;
}

function rejectWith(responseCode: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode });
}

async function startSmtpServer(options: SMTPServerOptions = {}): Promise<LabSmtpServer> {
  const commands: string[] = [];
  const mailSessions: LabSmtpServer['mailSessions'] = [];
  const recipients: string[] = [];
  const ignore = () => {};
  const server = new SMTPServer({
    disableReverseLookup: true,
    closeTimeout: 200, // a test that fails with a session open must not hang the server's close
    authOptional: true,
    hideSTARTTLS: true,
    logger: {
      trace: ignore,
      info: ignore,
      warn: ignore,
      error: ignore,
      fatal: ignore,
      debug: (entry: { tnx?: string }, _prefix: string, line: unknown) => {
        if (entry?.tnx === 'command' && typeof line === 'string') commands.push(line);
      },
    },
    onMailFrom(_address, session, callback) {
      mailSessions.push({ secure: session.secure, servername: session.servername });
      callback();
    },
    onRcptTo(address, _session, callback) {
      recipients.push(address.address);
      const local = address.address.split('@')[0];
      if (local === 'unknown') return callback(rejectWith(550, `5.1.1 <${address.address}>: User unknown`));
      if (local === 'full') return callback(rejectWith(452, '4.2.2 Mailbox full'));
      if (local === 'grey') return callback(rejectWith(450, '4.7.1 Greylisted, try again in 300 seconds'));
      callback();
    },
    onData(stream, _session, callback) {
      // Never expected: the transport must not send DATA. Fail loudly if it ever does.
      stream.resume();
      stream.on('end', () => callback(new Error('DATA received')));
    },
    ...options,
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const lab: LabSmtpServer = {
    server,
    port: (server.server.address() as net.AddressInfo).port,
    commands,
    mailSessions,
    recipients,
    openConnections: () => server.connections.size,
    close: closeOnce(() => new Promise<void>((resolve) => server.close(() => resolve()))),
  };
  servers.push(lab);
  return lab;
}

/** A port with nothing listening (bound then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---------------------------------------------------------------------------------------------------------------

describe('opening a session', () => {
  it('reads the greeting and the EHLO keywords, and probes with the exact replies of smtp-server', async () => {
    const lab = await startSmtpServer({ size: 10_000_000 });
    const session = await transport.open(openOptions(lab.port));
    expect(session.greeting.code).toBe(220);
    expect(session.secure).toBe(false);
    expect(session.closed).toBe(false);
    // smtp-server 3.21 hides ENHANCEDSTATUSCODES and DSN by default (the enhanced codes below are in the texts).
    expect([...session.extensions].sort()).toEqual(['8BITMIME', 'AUTH', 'PIPELINING', 'SIZE', 'SMTPUTF8']);
    // The EHLO reply as it came: its first line names the client's address in brackets.
    expect(session.hello?.code).toBe(250);
    expect(session.hello?.lines[0]).toMatch(/\[127\.0\.0\.1\]$/);

    expect((await session.mail('sender@example.net')).code).toBe(250);
    expect((await session.rcpt('ok@example.org')).code).toBe(250);
    expect(pick(await session.rcpt('unknown@example.org'))).toEqual({
      code: 550,
      enhancedCode: '5.1.1',
      text: '5.1.1 <unknown@example.org>: User unknown',
    });
    expect(pick(await session.rcpt('full@example.org'))).toMatchObject({ code: 452, enhancedCode: '4.2.2' });
    expect(pick(await session.rcpt('grey@example.org'))).toMatchObject({ code: 450, enhancedCode: '4.7.1' });
    expect((await session.rset()).code).toBe(250);
    await session.quit();
    expect(session.closed).toBe(true);
    expect(lab.commands.map((line) => line.split(' ')[0])).toEqual([
      'EHLO',
      'MAIL',
      'RCPT',
      'RCPT',
      'RCPT',
      'RCPT',
      'RSET',
      'QUIT',
    ]);
    expect(lab.commands[0]).toBe('EHLO probe.example.net');
  });

  it('upper-cases the EHLO keywords (first word of each line after the first), multi-line greeting', async () => {
    const raw = await startRawServer({
      banner: '220-raw.test ESMTP\r\n220-no UCE\r\n220 ready\r\n',
      onLine: (line, c) =>
        standardReply(line, c, ['pipelining', 'Size 1000000', 'enhancedstatuscodes', 'X-Custom a b']),
    });
    const session = await transport.open(openOptions(raw.port));
    expect(session.greeting).toEqual({
      code: 220,
      enhancedCode: null,
      lines: ['raw.test ESMTP', 'no UCE', 'ready'],
      text: 'raw.test ESMTP\nno UCE\nready',
    });
    expect([...session.extensions].sort()).toEqual(['ENHANCEDSTATUSCODES', 'PIPELINING', 'SIZE', 'X-CUSTOM']);
    await session.quit();
  });

  it('binds the local address it is given', async () => {
    let remote: string | undefined;
    const lab = await startSmtpServer({
      onConnect(session, callback) {
        remote = session.remoteAddress;
        callback();
      },
    });
    // Linux routes all of 127/8 to loopback, so a second source address is there to pick; elsewhere only .1 is.
    const localAddress = process.platform === 'linux' ? '127.0.0.2' : '127.0.0.1';
    const session = await createNodemailerTransport({ localAddress }).open(openOptions(lab.port));
    expect(remote).toBe(localAddress);
    await session.quit();
  });

  it('a refused connection: ECONNECTION, phase connect', async () => {
    const error = await rejection(transport.open(openOptions(await closedPort())));
    expectError(error, 'ECONNECTION', 'connect');
  });

  it('an impossible port or local address: ECONNECTION, phase connect (not a synchronous throw)', async () => {
    expectError(await rejection(transport.open(openOptions(70_000))), 'ECONNECTION', 'connect');
    const badLocal = createNodemailerTransport({ localAddress: 'not-an-ip' });
    expectError(await rejection(badLocal.open(openOptions(await closedPort()))), 'ECONNECTION', 'connect');
  });

  it('a connection closed before the greeting: ECONNECTION, phase connect', async () => {
    const raw = await startRawServer({ banner: null, onConnection: (c) => c.socket.destroy() });
    expectError(await rejection(transport.open(openOptions(raw.port))), 'ECONNECTION', 'connect');
  });

  it('a connection reset before the greeting: ECONNECTION, phase connect', async () => {
    const raw = await startRawServer({ banner: null, onConnection: (c) => c.socket.resetAndDestroy() });
    expectError(await rejection(transport.open(openOptions(raw.port))), 'ECONNECTION', 'connect');
  });

  it('a silent greeting: ETIMEDOUT, phase greeting, when connectTimeoutMs expires', async () => {
    const raw = await startRawServer({ banner: null });
    const started = Date.now();
    const error = await rejection(transport.open(openOptions(raw.port, { connectTimeoutMs: 300 })));
    expectError(error, 'ETIMEDOUT', 'greeting');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(1500);
    await waitFor(() => raw.openSockets() === 0);
  });

  it('an EHLO never answered: ETIMEDOUT, phase ehlo', async () => {
    const raw = await startRawServer({ onLine: () => {} });
    const error = await rejection(transport.open(openOptions(raw.port, { connectTimeoutMs: 300 })));
    expectError(error, 'ETIMEDOUT', 'ehlo');
    expect(raw.connections[0]!.lines).toEqual(['EHLO probe.example.net']);
  });

  it('a 554 banner: EREPLY, phase greeting, with the parsed reply', async () => {
    const raw = await startRawServer({ banner: '554 5.7.1 No SMTP service here\r\n' });
    const error = await rejection(transport.open(openOptions(raw.port)));
    expectError(error, 'EREPLY', 'greeting');
    expect(pick(error.reply!)).toEqual({ code: 554, enhancedCode: '5.7.1', text: '5.7.1 No SMTP service here' });
    expect(raw.connections[0]!.lines).toEqual([]);
  });

  it('a multi-line 421 banner followed by a close: EREPLY, phase greeting', async () => {
    const raw = await startRawServer({
      banner: null,
      onConnection: (c) => c.socket.end('421-4.7.0 Too many connections\r\n421 4.7.0 Try later\r\n'),
    });
    const error = await rejection(transport.open(openOptions(raw.port)));
    expectError(error, 'EREPLY', 'greeting');
    expect(error.reply).toEqual({
      code: 421,
      enhancedCode: '4.7.0',
      lines: ['4.7.0 Too many connections', '4.7.0 Try later'],
      text: '4.7.0 Too many connections\n4.7.0 Try later',
    });
  });

  it('a garbage greeting: EPROTOCOL, phase greeting, reply code 0', async () => {
    const raw = await startRawServer({ banner: 'SSH-2.0-OpenSSH_9.6\r\n' });
    const error = await rejection(transport.open(openOptions(raw.port)));
    expectError(error, 'EPROTOCOL', 'greeting');
    expect(error.reply).toMatchObject({ code: 0, text: 'SSH-2.0-OpenSSH_9.6' });
  });

  it('a greeting starting with 220 but mixing codes: EPROTOCOL (nodemailer only checks 3 bytes)', async () => {
    const raw = await startRawServer({ banner: '220-raw.test\r\n250 mixed\r\n' });
    const error = await rejection(transport.open(openOptions(raw.port)));
    expectError(error, 'EPROTOCOL', 'greeting');
    expect(error.reply?.code).toBe(0);
  });

  it('falls back to HELO when EHLO is refused; the extensions are then empty', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (line.startsWith('EHLO')) return c.write('502 5.5.2 Command not recognized\r\n');
        standardReply(line, c);
      },
    });
    const session = await transport.open(openOptions(raw.port));
    expect(session.extensions.size).toBe(0);
    expect((await session.mail('a@example.net')).code).toBe(250);
    expect((await session.rcpt('b@example.org')).code).toBe(250);
    await session.quit();
    expect(raw.connections[0]!.lines).toEqual([
      'EHLO probe.example.net',
      'HELO probe.example.net',
      'MAIL FROM:<a@example.net>',
      'RCPT TO:<b@example.org>',
      'QUIT',
    ]);
  });

  it('EHLO and HELO refused: EREPLY, phase ehlo, with the HELO reply', async () => {
    const raw = await startRawServer({
      onLine: (line, c) =>
        c.write(line.startsWith('EHLO') ? '500 5.5.1 What?\r\n' : '550 5.7.1 Go away\r\n'),
    });
    const error = await rejection(transport.open(openOptions(raw.port)));
    expectError(error, 'EREPLY', 'ehlo');
    expect(pick(error.reply!)).toEqual({ code: 550, enhancedCode: '5.7.1', text: '5.7.1 Go away' });
  });

  it('a 421 to EHLO: EREPLY, phase ehlo', async () => {
    const raw = await startRawServer({ onLine: (_line, c) => c.socket.end('421 4.3.2 Shutting down\r\n') });
    const error = await rejection(transport.open(openOptions(raw.port)));
    expectError(error, 'EREPLY', 'ehlo');
    expect(error.reply?.code).toBe(421);
  });

  it('a malformed EHLO reply: EPROTOCOL, phase ehlo', async () => {
    const raw = await startRawServer({ onLine: (_line, c) => c.write('250-raw.test\r\n251 PIPELINING\r\n') });
    const error = await rejection(transport.open(openOptions(raw.port)));
    expectError(error, 'EPROTOCOL', 'ehlo');
  });

  it('an EHLO name with a line break: EINVALID, no connection made', async () => {
    const raw = await startRawServer();
    const error = await rejection(transport.open(openOptions(raw.port, { heloName: 'evil\r\nMAIL FROM:<x>' })));
    expectError(error, 'EINVALID', 'connect');
    await delay(20);
    expect(raw.connections).toHaveLength(0);
  });
});

describe('STARTTLS (RFC 3207)', () => {
  const tlsServer = (options: SMTPServerOptions = {}) =>
    startSmtpServer({ hideSTARTTLS: false, key: KEY, cert: CERT, ...options });

  it('upgrades when offered, re-sends EHLO, and reports secure with the post-TLS keywords', async () => {
    const lab = await tlsServer();
    const session = await transport.open(openOptions(lab.port));
    expect(session.secure).toBe(true);
    // The keywords come from the EHLO sent over TLS: smtp-server no longer offers STARTTLS there.
    expect(session.extensions.has('STARTTLS')).toBe(false);
    expect(session.extensions.has('PIPELINING')).toBe(true);
    expect((await session.mail('a@example.net')).code).toBe(250);
    await session.quit();
    expect(lab.commands.map((line) => line.split(' ')[0])).toEqual(['EHLO', 'STARTTLS', 'EHLO', 'MAIL', 'QUIT']);
    expect(lab.mailSessions).toEqual([{ secure: true, servername: false }]); // no SNI for an address literal
  });

  it('stays in plaintext when tls.starttls is false', async () => {
    const lab = await tlsServer();
    const plain = { starttls: false, rejectUnauthorized: false };
    const session = await transport.open(openOptions(lab.port, { tls: plain }));
    expect(session.secure).toBe(false);
    expect(session.extensions.has('STARTTLS')).toBe(true);
    await session.quit();
    expect(lab.commands.map((line) => line.split(' ')[0])).toEqual(['EHLO', 'QUIT']);
  });

  it('a self-signed certificate under rejectUnauthorized: ECONNECTION, phase starttls, no fallback', async () => {
    const lab = await tlsServer();
    const error = await rejection(
      transport.open(openOptions(lab.port, { tls: { starttls: true, rejectUnauthorized: true } })),
    );
    expectError(error, 'ECONNECTION', 'starttls');
    expect(error.message).toMatch(/self[- ]signed/i);
    await waitFor(() => lab.openConnections() === 0);
    expect(lab.commands.map((line) => line.split(' ')[0])).toEqual(['EHLO', 'STARTTLS']);
  });

  it('verifies the certificate against the SNI name when the certificate is trusted', async () => {
    const lab = await tlsServer();
    const trusting = createNodemailerTransport({ ca: CERT });
    const verified = { starttls: true, rejectUnauthorized: true };
    const session = await trusting.open(openOptions(lab.port, { servername: 'localhost.', tls: verified }));
    expect(session.secure).toBe(true);
    expect((await session.mail('a@example.net')).code).toBe(250);
    await session.quit();
    expect(lab.mailSessions).toEqual([{ secure: true, servername: 'localhost' }]);

    // An address literal (no servername): no SNI, the certificate is checked against the IP address (SAN 127.0.0.1).
    const literal = await trusting.open(openOptions(lab.port, { servername: '', tls: verified }));
    expect(literal.secure).toBe(true);
    await literal.quit();

    const wrong = await rejection(trusting.open(openOptions(lab.port, { servername: 'mx.wrong.test', tls: verified })));
    expectError(wrong, 'ECONNECTION', 'starttls');
  });

  it('a refused STARTTLS (454) goes on in plaintext with the first EHLO keywords', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (line === 'STARTTLS') return c.write('454 4.7.0 TLS not available\r\n');
        standardReply(line, c, ['PIPELINING', 'STARTTLS']);
      },
    });
    const session = await transport.open(openOptions(raw.port));
    expect(session.secure).toBe(false);
    expect(session.extensions.has('STARTTLS')).toBe(true);
    expect((await session.rcpt('b@example.org')).code).toBe(250);
    await session.quit();
    expect(raw.connections[0]!.lines.slice(0, 2)).toEqual(['EHLO probe.example.net', 'STARTTLS']);
  });

  it('a STARTTLS never answered: ETIMEDOUT, phase starttls', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (line !== 'STARTTLS') standardReply(line, c, ['STARTTLS']);
      },
    });
    const error = await rejection(transport.open(openOptions(raw.port, { connectTimeoutMs: 300 })));
    expectError(error, 'ETIMEDOUT', 'starttls');
  });

  it('a 421 to STARTTLS: EREPLY, phase starttls', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (line === 'STARTTLS') return c.socket.end('421 4.7.0 Closing\r\n');
        standardReply(line, c, ['STARTTLS']);
      },
    });
    const error = await rejection(transport.open(openOptions(raw.port)));
    expectError(error, 'EREPLY', 'starttls');
    expect(error.reply?.code).toBe(421);
  });
});

describe('commands', () => {
  it('with PIPELINING, writes MAIL and the RCPTs before any reply (RFC 2920)', async () => {
    // The server answers nothing until it holds MAIL and both RCPTs: a client waiting for replies would hang.
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (/^(MAIL|RCPT)/.test(line)) {
          if (c.lines.filter((l) => /^(MAIL|RCPT)/.test(l)).length < 3) return;
          c.write('250 2.1.0 OK\r\n250 2.1.5 OK\r\n550 5.1.1 No such user\r\n');
          return;
        }
        standardReply(line, c, ['PIPELINING', 'ENHANCEDSTATUSCODES']);
      },
    });
    const session = await transport.open(openOptions(raw.port));
    const replies = await Promise.all([
      session.mail('a@example.net'),
      session.rcpt('b@example.org'),
      session.rcpt('c@example.org'),
    ]);
    expect(replies.map((reply) => [reply.code, reply.enhancedCode])).toEqual([
      [250, '2.1.0'],
      [250, '2.1.5'],
      [550, '5.1.1'],
    ]);
    await session.quit();
  });

  it('without PIPELINING, writes each command only after the previous reply', async () => {
    let outstanding = 0;
    let maxOutstanding = 0;
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (/^(MAIL|RCPT|RSET)/.test(line)) {
          outstanding += 1;
          maxOutstanding = Math.max(maxOutstanding, outstanding);
          // Answer late, so that a pipelining client would have written the next commands meanwhile.
          setTimeout(() => {
            outstanding -= 1;
            standardReply(line, c, []);
          }, 15);
          return;
        }
        standardReply(line, c, ['SIZE 1000']);
      },
    });
    const session = await transport.open(openOptions(raw.port));
    expect(session.extensions.has('PIPELINING')).toBe(false);
    const replies = await Promise.all([
      session.mail('a@example.net'),
      session.rcpt('b@example.org'),
      session.rcpt('c@example.org'),
      session.rset(),
    ]);
    expect(replies.map((reply) => reply.code)).toEqual([250, 250, 250, 250]);
    expect(maxOutstanding).toBe(1);
    expect(raw.connections[0]!.linesPerRead.every((count) => count === 1)).toBe(true);
    await session.quit();
  });

  it('parses multi-line replies with their enhanced code', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (line.startsWith('RCPT')) {
          return c.write(
            '550-5.1.1 The email account that you tried to reach does not exist.\r\n' +
              '550-5.1.1 Please try double-checking the recipient address.\r\n' +
              '550 5.1.1 https://support.example/answer 12345\r\n',
          );
        }
        standardReply(line, c);
      },
    });
    const session = await transport.open(openOptions(raw.port));
    await session.mail('a@example.net');
    const reply = await session.rcpt('nobody@example.org');
    expect(reply.code).toBe(550);
    expect(reply.enhancedCode).toBe('5.1.1');
    expect(reply.lines).toHaveLength(3);
    expect(reply.lines[2]).toBe('5.1.1 https://support.example/answer 12345');
    await session.quit();
  });

  it('reassembles replies split across TCP chunks and accepts bare LF line ends', async () => {
    const raw = await startRawServer({
      banner: '220 raw.test bare LF\n',
      onLine: (line, c) => {
        if (line.startsWith('EHLO')) return c.write('250-raw.test\n250 PIPELINING\n');
        if (line.startsWith('RCPT')) {
          c.write('45');
          setTimeout(() => c.write('0-4.2.1 first'), 20);
          setTimeout(() => c.write(' line\r\n450 4.2.1 sec'), 40);
          setTimeout(() => c.write('ond line\r\n'), 60);
          return;
        }
        if (line.startsWith('MAIL')) return c.write('250 2.1.0 OK\n');
        standardReply(line, c);
      },
    });
    const session = await transport.open(openOptions(raw.port));
    expect(session.extensions).toEqual(new Set(['PIPELINING']));
    expect((await session.mail('a@example.net')).code).toBe(250);
    expect(pick(await session.rcpt('b@example.org'))).toEqual({
      code: 450,
      enhancedCode: '4.2.1',
      text: '4.2.1 first line\n4.2.1 second line',
    });
    await session.quit();
  });

  it('a command that gets no reply times out alone: ETIMEDOUT for it, ECLOSED for those behind it', async () => {
    // Like a real server, it answers in order: stuck on slow@, it answers nothing after it.
    let stuck = false;
    const raw = await startRawServer({
      onLine: (line, c) => {
        stuck ||= line.includes('slow@');
        if (!stuck) standardReply(line, c);
      },
    });
    const session = await transport.open(openOptions(raw.port, { commandTimeoutMs: 5000 }));
    const started = Date.now();
    const results = await Promise.allSettled([
      session.mail('a@example.net'),
      session.rcpt('ok@example.org'),
      session.rcpt('slow@example.org', { timeoutMs: 200 }),
      session.rcpt('after@example.org'),
    ]);
    const elapsed = Date.now() - started;
    expect(outcomes(results)).toEqual([250, 250, 'ETIMEDOUT', 'ECLOSED']);
    expect((results[2] as PromiseRejectedResult).reason.phase).toBe('command');
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(2000);
    expect(session.closed).toBe(true);
    await waitFor(() => raw.openSockets() === 0);
    // Pipelined: all four were written before the timeout.
    expect(raw.connections[0]!.lines.slice(-2)).toEqual(['RCPT TO:<slow@example.org>', 'RCPT TO:<after@example.org>']);
  });

  it('without PIPELINING, a command queued behind a timed-out one is never written (default timeout)', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (line.includes('slow@')) return;
        standardReply(line, c, []);
      },
    });
    const session = await transport.open(openOptions(raw.port, { commandTimeoutMs: 250 }));
    const started = Date.now();
    const results = await Promise.allSettled([
      session.mail('a@example.net'),
      session.rcpt('slow@example.org'),
      session.rcpt('never@example.org'),
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect(outcomes(results)).toEqual([250, 'ETIMEDOUT', 'ECLOSED']);
    await waitFor(() => raw.openSockets() === 0);
    expect(raw.connections[0]!.lines.some((line) => line.includes('never@'))).toBe(false);
  });

  it('a slow reply does not time out the pipelined commands behind it (timers run from the reply before)', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        // Both RCPTs arrive together and are answered together, 300 ms later.
        if (line.startsWith('RCPT')) return void setTimeout(() => standardReply(line, c), 300);
        standardReply(line, c);
      },
    });
    const session = await transport.open(openOptions(raw.port, { commandTimeoutMs: 5000 }));
    const replies = await Promise.all([
      session.mail('a@example.net'),
      session.rcpt('tarpit@example.org', { timeoutMs: 1000 }),
      session.rcpt('b@example.org', { timeoutMs: 200 }),
    ]);
    expect(replies.map((reply) => reply.code)).toEqual([250, 250, 250]);
    await session.quit();
  });

  it('a pipelined group of commands runs on one reply timer, restarted per reply, not one timer per command', async () => {
    const raw = await startRawServer({ onLine: (line, c) => standardReply(line, c, ['PIPELINING', 'ENHANCEDSTATUSCODES']) });
    const session = await transport.open(openOptions(raw.port));
    let timers = 0;
    const hook = createHook({
      init(_id, type) {
        if (type === 'Timeout') timers++;
      },
    }).enable();
    let replies: SmtpReply[];
    try {
      replies = await Promise.all([
        session.mail('a@example.net'),
        ...Array.from({ length: 20 }, (_, i) => session.rcpt(`r${i}@example.org`)),
        session.rset(),
      ]);
    } finally {
      hook.disable();
    }
    expect(replies.map((reply) => reply.code)).toEqual(Array.from({ length: 22 }, () => 250));
    expect(timers).toBeLessThanOrEqual(2);
    await session.quit();
  });

  it('a dropped connection fails every pending command with ECLOSED', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (line.includes('drop@')) return c.socket.destroy();
        if (line.startsWith('RCPT')) return; // answered never: the drop comes first
        standardReply(line, c);
      },
    });
    const session = await transport.open(openOptions(raw.port));
    const results = await Promise.allSettled([
      session.mail('a@example.net'),
      session.rcpt('b@example.org'),
      session.rcpt('drop@example.org'),
      session.rset(),
    ]);
    expect(outcomes(results)).toEqual([250, 'ECLOSED', 'ECLOSED', 'ECLOSED']);
    expect(session.closed).toBe(true);
    expectError(await rejection(session.rcpt('late@example.org')), 'ECLOSED', 'command');
  });

  it('a 421 reply is returned, then the session closes and the commands behind it fail with ECLOSED', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (line.includes('closing@')) return c.write('421 4.4.2 Closing connection\r\n');
        if (line.startsWith('RCPT') && line.includes('behind@')) return; // would have been answered after the 421
        standardReply(line, c);
      },
    });
    const session = await transport.open(openOptions(raw.port));
    const results = await Promise.allSettled([
      session.mail('a@example.net'),
      session.rcpt('closing@example.org'),
      session.rcpt('behind@example.org'),
    ]);
    expect(results[0]).toMatchObject({ status: 'fulfilled', value: { code: 250 } });
    expect(results[1]).toMatchObject({ status: 'fulfilled', value: { code: 421, enhancedCode: '4.4.2' } });
    expect(results[2]).toMatchObject({ status: 'rejected', reason: { code: 'ECLOSED' } });
    expect(session.closed).toBe(true);
    await waitFor(() => raw.openSockets() === 0);
  });

  it('an unparseable reply: EPROTOCOL with the raw text, then the session closes', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (line.includes('garbage@')) return c.write('hello there\r\n');
        if (line.includes('mixed@')) return c.write('250-ok\r\n550 mixed\r\n');
        standardReply(line, c);
      },
    });
    for (const [recipient, text] of [
      ['garbage@example.org', 'hello there'],
      ['mixed@example.org', '250-ok\n550 mixed'],
    ] as const) {
      const session = await transport.open(openOptions(raw.port));
      const results = await Promise.allSettled([session.rcpt(recipient), session.rcpt('next@example.org')]);
      const error = (results[0] as PromiseRejectedResult).reason as SmtpTransportError;
      expectError(error, 'EPROTOCOL', 'command');
      expect(error.reply).toMatchObject({ code: 0, text });
      expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: 'ECLOSED' } });
      expect(session.closed).toBe(true);
    }
    await waitFor(() => raw.openSockets() === 0);
  });

  it('refuses CR, LF and NUL in arguments before writing anything; the session goes on', async () => {
    const raw = await startRawServer();
    const session = await transport.open(openOptions(raw.port));
    const refused = await Promise.all([
      rejection(session.mail('a@example.net\r\nRCPT TO:<injected@example.org>')),
      rejection(session.mail('a@example.net', ['SIZE=10', 'BODY=8BITMIME\nDATA'])),
      rejection(session.rcpt('b@example.org\rDATA')),
      rejection(session.rcpt('b\u0000@example.org')),
    ]);
    for (const error of refused) expectError(error, 'EINVALID', 'command');
    expect(session.closed).toBe(false);
    expect((await session.mail('a@example.net', ['SIZE=10'])).code).toBe(250);
    expect((await session.rcpt('b@example.org')).code).toBe(250);
    await session.quit();
    await waitFor(() => raw.openSockets() === 0);
    expect(raw.connections[0]!.lines).toEqual([
      'EHLO probe.example.net',
      'MAIL FROM:<a@example.net> SIZE=10',
      'RCPT TO:<b@example.org>',
      'QUIT',
    ]);
    expect(raw.connections[0]!.bytes.includes(0)).toBe(false);
  });

  it('writes non-ASCII addresses as UTF-8 bytes', async () => {
    const raw = await startRawServer({ onLine: (line, c) => standardReply(line, c, ['PIPELINING', 'SMTPUTF8']) });
    const session = await transport.open(openOptions(raw.port));
    await session.mail('jörg@exämple.net', ['SMTPUTF8']);
    await session.rcpt('用户@例子.测试');
    await session.quit();
    const bytes = raw.connections[0]!.bytes;
    expect(bytes.includes(Buffer.from('MAIL FROM:<jörg@exämple.net> SMTPUTF8\r\n', 'utf8'))).toBe(true);
    expect(bytes.includes(Buffer.from('RCPT TO:<用户@例子.测试>\r\n', 'utf8'))).toBe(true);

    // And end to end: smtp-server reads the same address back.
    const lab = await startSmtpServer();
    const utf8 = await transport.open(openOptions(lab.port));
    expect((await utf8.mail('jörg@example.net', ['SMTPUTF8'])).code).toBe(250);
    expect((await utf8.rcpt('josé@example.org')).code).toBe(250);
    await utf8.quit();
    expect(lab.recipients).toEqual(['josé@example.org']);
  });

  it('quit sends QUIT and closes; commands after quit or close fail with ECLOSED', async () => {
    const raw = await startRawServer();
    const session = await transport.open(openOptions(raw.port));
    const quitting = session.quit();
    expectError(await rejection(session.rset()), 'ECLOSED', 'command');
    await quitting;
    expect(session.closed).toBe(true);
    expect(raw.connections[0]!.lines.at(-1)).toBe('QUIT');
    await session.quit(); // a second quit does nothing, and does not reject
    session.close();

    const other = await transport.open(openOptions(raw.port));
    other.close();
    expect(other.closed).toBe(true);
    expectError(await rejection(other.mail('a@example.net')), 'ECLOSED', 'command');
    await other.quit();
    await waitFor(() => raw.openSockets() === 0);
    expect(raw.connections[1]!.lines).toEqual(['EHLO probe.example.net']);
  });

  it('quit waits at most the command timeout (and at most ~1 s) for a QUIT reply that never comes', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        if (line !== 'QUIT') standardReply(line, c);
      },
    });
    const session = await transport.open(openOptions(raw.port, { commandTimeoutMs: 200 }));
    let started = Date.now();
    await session.quit();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(session.closed).toBe(true);

    const patient = await transport.open(openOptions(raw.port, { commandTimeoutMs: 10_000 }));
    started = Date.now();
    await patient.quit();
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeLessThan(2000);
    await waitFor(() => raw.openSockets() === 0);
  });

  it('close fails the pending commands with ECLOSED at once', async () => {
    const raw = await startRawServer({ onLine: answerAllButRcpt });
    const session = await transport.open(openOptions(raw.port));
    await session.mail('a@example.net');
    const pending = [session.rcpt('b@example.org'), session.rcpt('c@example.org')].map((p) => rejection(p));
    session.close();
    for (const error of await Promise.all(pending)) expectError(error, 'ECLOSED', 'command');
    await waitFor(() => raw.openSockets() === 0);
  });

  it('notices a server closing an idle session', async () => {
    const raw = await startRawServer({
      onLine: (line, c) => {
        standardReply(line, c);
        if (line.startsWith('MAIL')) setTimeout(() => c.socket.end('421 4.4.2 Idle timeout\r\n'), 20);
      },
    });
    const session = await transport.open(openOptions(raw.port));
    await session.mail('a@example.net');
    await waitFor(() => session.closed);
    expectError(await rejection(session.rcpt('b@example.org')), 'ECLOSED', 'command');
  });
});

describe('nothing leaks: no socket, no timer, on either side', () => {
  const scenarios: Array<[string, () => Promise<void>]> = [
    [
      'quit after a probe',
      async () => {
        const lab = await startSmtpServer();
        const session = await transport.open(openOptions(lab.port));
        await session.mail('a@example.net');
        await session.rcpt('unknown@example.org');
        await session.quit();
        await waitFor(() => lab.openConnections() === 0);
        await lab.close();
      },
    ],
    [
      'STARTTLS, then close',
      async () => {
        const lab = await startSmtpServer({ hideSTARTTLS: false, key: KEY, cert: CERT });
        const session = await transport.open(openOptions(lab.port));
        expect(session.secure).toBe(true);
        session.close();
        await waitFor(() => lab.openConnections() === 0);
        await lab.close();
      },
    ],
    [
      'a refused certificate',
      async () => {
        const lab = await startSmtpServer({ hideSTARTTLS: false, key: KEY, cert: CERT });
        await rejection(transport.open(openOptions(lab.port, { tls: { starttls: true, rejectUnauthorized: true } })));
        await waitFor(() => lab.openConnections() === 0);
        await lab.close();
      },
    ],
    [
      'a refused connection',
      async () => {
        await rejection(transport.open(openOptions(await closedPort())));
      },
    ],
    [
      'a silent greeting',
      async () => {
        const raw = await startRawServer({ banner: null });
        await rejection(transport.open(openOptions(raw.port, { connectTimeoutMs: 100 })));
        await waitFor(() => raw.openSockets() === 0);
        await raw.close();
      },
    ],
    [
      'a command timeout and a queued command',
      async () => {
        const raw = await startRawServer({ onLine: answerAllButRcpt });
        const session = await transport.open(openOptions(raw.port, { commandTimeoutMs: 100 }));
        await Promise.allSettled([
          session.mail('a@example.net'),
          session.rcpt('b@example.org'),
          session.rcpt('c@example.org'),
        ]);
        await waitFor(() => raw.openSockets() === 0);
        await raw.close();
      },
    ],
    [
      'a drop mid-dialog',
      async () => {
        const raw = await startRawServer({
          onLine: (line, c) => (line.startsWith('RCPT') ? c.socket.destroy() : standardReply(line, c)),
        });
        const session = await transport.open(openOptions(raw.port));
        await Promise.allSettled([session.mail('a@example.net'), session.rcpt('b@example.org'), session.rset()]);
        await raw.close();
      },
    ],
    [
      'a negative greeting',
      async () => {
        const raw = await startRawServer({ banner: '554 5.7.1 Go away\r\n' });
        await rejection(transport.open(openOptions(raw.port)));
        await waitFor(() => raw.openSockets() === 0);
        await raw.close();
      },
    ],
  ];

  for (const [name, scenario] of scenarios) {
    it(name, async () => {
      await expectNoLeak(scenario);
    });
  }

  it('(the check itself notices a session left open)', async () => {
    const lab = await startSmtpServer();
    let session: SmtpSession | undefined;
    const check = expectNoLeak(async () => {
      session = await transport.open(openOptions(lab.port));
    }, 100);
    await expect(check).rejects.toThrow(/TCPWRAP/);
    session!.close();
  });
});
