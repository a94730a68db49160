// A callback receiver for tests: a real HTTP or HTTPS server on loopback that records every request it gets (with the
// test clock's time) and answers each with the next answer of its script: a status, a redirect, or an answer held
// back past the sender's timeout. Without a script it answers 200.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Clock } from '../../packages/server/src/jobs/clock.js';

export interface ScriptedAnswer {
  readonly status: number;
  /** Sent as `Location` (a redirect). */
  readonly location?: string;
  /** Real milliseconds before answering. */
  readonly delayMs?: number;
}

export interface ReceivedCallback {
  /** The clock's time when the request arrived. */
  readonly at: number;
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export interface CallbackReceiver {
  /** `http://127.0.0.1:PORT` (or https). */
  readonly origin: string;
  readonly port: number;
  readonly received: ReceivedCallback[];
  /** Answers still to give, in order. */
  readonly script: ScriptedAnswer[];
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs` real milliseconds). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const TLS_DIR = join(import.meta.dirname, '..', 'lab', 'tls');

export async function startReceiver(clock: Clock, options: { https?: boolean; script?: ScriptedAnswer[] } = {}): Promise<CallbackReceiver> {
  const received: ReceivedCallback[] = [];
  const script = [...(options.script ?? [])];
  const held = new Set<NodeJS.Timeout>();
  const waiters = new Set<() => void>();

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        at: clock.now(),
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      for (const wake of [...waiters]) wake();
      const answer = script.shift() ?? { status: 200 };
      const send = (): void => {
        if (response.destroyed) return;
        response.writeHead(answer.status, answer.location === undefined ? {} : { location: answer.location });
        response.end('{}');
      };
      if (answer.delayMs === undefined) return send();
      const timer = setTimeout(() => {
        held.delete(timer);
        send();
      }, answer.delayMs);
      held.add(timer);
      // The sender gave up: nothing to answer.
      response.on('close', () => {
        clearTimeout(timer);
        held.delete(timer);
      });
    });
  };

  const server: Server = options.https
    ? createHttpsServer({ cert: readFileSync(join(TLS_DIR, 'localhost-cert.pem')), key: readFileSync(join(TLS_DIR, 'localhost-key.pem')) }, handle)
    : createHttpServer(handle);
  // A failed TLS handshake (the sender refused the certificate) is the sender's business.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    origin: `${options.https ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    received,
    script,
    waitFor(count, timeoutMs = 5_000) {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the receiver got ${received.length} requests, not ${count}`));
        }, timeoutMs);
        const check = (): void => {
          if (received.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    async close() {
      for (const timer of held) clearTimeout(timer);
      held.clear();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
