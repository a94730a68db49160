// Slow and numerous clients against the real `mailverify serve`: a body trickled a byte at a time is answered 408 and
// its connection closed once its grace has passed; a request refused before its body has arrived (401) is answered and
// its connection closed at once, the body unread; connections past the cap of one address, or of all, are closed as
// they are accepted, while other clients are served; a trusted proxy is not capped; and clients that send at a normal
// pace (a large upload, requests reusing a keep-alive connection) are not affected. The new options are given as
// environment variables, which an older build ignores (so that the same file shows what it did).
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, Agent, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { basic } from './http-calls.js';

const PASSWORD = 'slow clients root password';
const AUTH = basic('root', PASSWORD);
/** The trusted proxy's address; each test's clients come from addresses of their own (127.0.0.0/8 is all loopback). */
const PROXY = '127.0.0.200';

let dir: string;
/** --min-body-rate 1000 with a 1 s grace, at most 5 connections per address, 127.0.0.200 a trusted proxy. */
let strict: ServeProcess;
/** At most 8 client connections in all. */
let few: ServeProcess;

function start(name: string, env: Record<string, string>, flags: string[] = []): Promise<ServeProcess> {
  return startServe(['--data-dir', join(dir, name), '--log-level', 'warn', '--checks', 'syntax', ...flags], { MAILVERIFY_ROOT_PASSWORD: PASSWORD, ...env });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-slow-clients-'));
  [strict, few] = await Promise.all([
    start('strict', { MAILVERIFY_MIN_BODY_RATE: '1000', MAILVERIFY_BODY_RATE_GRACE: '1000', MAILVERIFY_MAX_CONNECTIONS_PER_ADDRESS: '5' }, ['--trust-proxy', PROXY]),
    start('few', { MAILVERIFY_MAX_CLIENT_CONNECTIONS: '8' }),
  ]);
});

afterAll(async () => {
  for (const server of [strict, few]) if (server !== undefined) expect(await server.stop(), server.stderr()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

interface Trickled {
  /** All the server sent. */
  readonly answer: string;
  /** Whether the server closed the connection (else the client gave up at its time limit). */
  readonly closedByServer: boolean;
  /** The body bytes the client had sent when the connection ended. */
  readonly sent: number;
}

/**
 * A client that sends `head`, then a chunk of one byte every `everyMs` (chunked encoding) until the server closes the
 * connection or `giveUpMs` has passed.
 */
function trickle(port: number, head: string, localAddress: string, { everyMs = 200, giveUpMs = 15_000 } = {}): Promise<Trickled> {
  return new Promise((resolve) => {
    let answer = '';
    let sent = 0;
    let gaveUp = false;
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => socket.write(head));
    const drip = setInterval(() => {
      if (!socket.writable) return;
      socket.write('1\r\n \r\n');
      sent += 1;
    }, everyMs);
    const limit = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, giveUpMs);
    socket.on('data', (chunk) => (answer += String(chunk)));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(drip);
      clearTimeout(limit);
      resolve({ answer, closedByServer: !gaveUp, sent });
    });
  });
}

const submissionHead = (authorization?: string): string =>
  'POST /v2.7/email-validations HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
  (authorization === undefined ? '' : `Authorization: ${authorization}\r\n`) +
  'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n';

function statusOf(answer: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
}

function problemOf(answer: string): any {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
}

/** A connection that stays open; `closed` resolves with what the server sent once the connection ends. */
function idle(port: number, localAddress: string): Promise<{ socket: Socket; closed: Promise<string> }> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    const closed = new Promise<string>((done) => socket.on('close', () => done(answer)));
    socket.on('data', (chunk) => (answer += String(chunk)));
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

/** GET /health on a connection of its own from `localAddress`: the status, or the error's code. */
function health(port: number, localAddress: string): Promise<number | string> {
  return new Promise((resolve) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: '/health', localAddress, agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode!));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    request.end();
  });
}

/** Waits until the server has seen the connections (accepting is asynchronous). */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 300));

describe('slow bodies', () => {
  it('a chunked body trickled slower than --min-body-rate is answered 408 and its connection closed once the grace has passed', async () => {
    const trickled = await trickle(strict.port, submissionHead(AUTH), '127.0.0.11');
    expect(trickled.closedByServer).toBe(true);
    expect(statusOf(trickled.answer)).toBe(408);
    expect(trickled.answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(problemOf(trickled.answer)).toMatchObject({ status: 408, type: '/problems/request-timeout', detail: expect.stringMatching(/slower than 1000 bytes per second/) });
    // The grace is 1 s and the client sends 5 bytes a second: closed after some 5 bytes, far from the 75 it would send by its time limit.
    expect(trickled.sent).toBeLessThan(25);
  }, 30_000);

  it('a request refused before its body has arrived (401) is answered and its connection closed at once, the body unread', async () => {
    for (const authorization of [undefined, basic('root', 'not the password')]) {
      const trickled = await trickle(strict.port, submissionHead(authorization), '127.0.0.12');
      expect(trickled.closedByServer).toBe(true);
      expect(statusOf(trickled.answer)).toBe(401);
      expect(trickled.answer).toMatch(/\r\nconnection: close\r\n/i);
      // Before the first byte of the trickle, not once the grace has passed.
      expect(trickled.sent).toBeLessThan(3);
    }
  }, 60_000);

  it('a body with a Content-Length that stops coming is not read after a 401: the connection is closed at once', async () => {
    const head = 'POST /v2.7/email-validations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"entries":[';
    const trickled = await trickle(strict.port, head, '127.0.0.13', { everyMs: 60_000 });
    expect(trickled.closedByServer).toBe(true);
    expect(statusOf(trickled.answer)).toBe(401);
  }, 30_000);
});

describe('connections per address and in all', () => {
  it('connections past --max-connections-per-address are closed at once, while another address is served', async () => {
    const held = await Promise.all(Array.from({ length: 5 }, () => idle(strict.port, '127.0.0.21')));
    await settle();
    const extra = await idle(strict.port, '127.0.0.21');
    // Closed before any byte was read or answered.
    expect(await extra.closed).toBe('');
    expect(await health(strict.port, '127.0.0.21')).toBe('ECONNRESET');
    expect(await health(strict.port, '127.0.0.22')).toBe(200);
    // One closed, one more is let in.
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await settle();
    expect(await health(strict.port, '127.0.0.21')).toBe(200);
    for (const { socket } of held) socket.destroy();
  }, 30_000);

  it('a proxy named by --trust-proxy is not capped: it carries many clients', async () => {
    const held = await Promise.all(Array.from({ length: 12 }, () => idle(strict.port, PROXY)));
    await settle();
    expect(await health(strict.port, PROXY)).toBe(200);
    for (const { socket } of held) socket.destroy();
  }, 30_000);

  it('connections past --max-client-connections are closed as they are accepted; once one ends, a new one is served', async () => {
    const held = await Promise.all(Array.from({ length: 8 }, (_, index) => idle(few.port, `127.0.0.${31 + index}`)));
    await settle();
    expect(await health(few.port, '127.0.0.41')).toBe('ECONNRESET');
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await settle();
    expect(await health(few.port, '127.0.0.41')).toBe(200);
    for (const { socket } of held) socket.destroy();
  }, 30_000);
});

describe('clients at a normal pace are not affected', () => {
  it('a large submission sent at once is accepted under the strict body rate, the server taking its time to store it', async () => {
    const entries = Array.from({ length: 100_000 }, (_, index) => ({ inputData: `someone.${index}@example.org` }));
    const body = JSON.stringify({ entries });
    expect(body.length).toBeGreaterThan(3_000_000);
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = httpRequest(
        { host: '127.0.0.1', port: strict.port, method: 'POST', path: '/v2.7/email-validations', localAddress: '127.0.0.51', agent: false, headers: { authorization: AUTH, 'content-type': 'application/json' } },
        (response) => collect(response).then(resolve, reject),
      );
      request.on('error', reject);
      request.end(body);
    });
    expect(answer.status, answer.text).toBe(202);
  }, 60_000);

  it('requests reuse a keep-alive connection, a refused one with a whole body included', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const send = (path: string, headers: Record<string, string>, body?: string) =>
        new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
          const request = httpRequest({ host: '127.0.0.1', port: strict.port, method: body === undefined ? 'GET' : 'POST', path, agent, localAddress: '127.0.0.52', headers }, (response) => {
            response.resume();
            response.on('end', () => resolve({ status: response.statusCode!, reused: request.reusedSocket }));
          });
          request.on('error', reject);
          request.end(body);
        });
      const answers = [
        await send('/health', {}),
        await send('/v2.7/email-validations', { authorization: AUTH, 'content-type': 'application/json' }, '{"entries":[{"inputData":"jane@example.org"}]}'),
        await send('/v2.7/email-validations', { 'content-type': 'application/json' }, '{"entries":[]}'),
        await send('/v2.7/email-validations?limit=1', { authorization: AUTH }),
      ];
      expect(answers.map(({ status }) => status)).toEqual([200, 202, 401, 200]);
      expect(answers.map(({ reused }) => reused)).toEqual([false, true, true, true]);
    } finally {
      agent.destroy();
    }
  }, 30_000);
});

function collect(response: IncomingMessage): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    response.on('data', (chunk) => (text += String(chunk)));
    response.on('end', () => resolve({ status: response.statusCode!, text }));
    response.on('error', reject);
  });
}
