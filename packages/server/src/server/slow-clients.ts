/**
 * Clients that send slowly must not hold connections. A request answered before its body has arrived (refused for its
 * credentials, its rate, its size...) gets `Connection: close` and its connection is closed once the answer is written,
 * the rest of its body unread: Node would otherwise read and drop it, however slowly it comes, to keep the connection
 * for a next request. And a body must arrive at a minimum rate once a grace has passed (a slow start, a slow link),
 * else the request is answered 408 and its connection closed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ProblemError } from './problems.js';

export interface BodyRate {
  /** The least average rate of a body, in bytes per second (0: none). */
  readonly bytesPerSecond: number;
  /** The time a body has before its rate counts: by then it needs none of its bytes, then one per 1/rate second. */
  readonly graceMs: number;
}

/** While the server has not read what came, the time is not the client's: it is looked at again this much later. */
const BACKED_UP_CHECK_MS = 1000;

/** Whether a request has a body (RFC 9112 §6.3): a Transfer-Encoding, or a Content-Length above 0. */
export function hasBody(request: IncomingMessage): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

/** Every answer to a request whose body has not all arrived closes its connection. */
export function closeUnreadBodies(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.raw.complete || !hasBody(request.raw)) return done(null, payload);
    // Node parses a body that came with the header fields a turn after handing over the request: such a body has arrived.
    setImmediate(() => {
      if (!request.raw.complete) reply.header('connection', 'close');
      done(null, payload);
    });
  });
}

/**
 * Bodies read at `rate` at least: each is read through a stream that counts its bytes. Added ahead of the routes' own
 * preParsing hooks (decompression), so that what is counted is what the client sent.
 */
export function limitBodyRate(app: FastifyInstance, rate: BodyRate): void {
  if (!(rate.bytesPerSecond > 0)) return;
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!hasBody(request.raw)) return done(null, payload);
    done(null, rateChecked(payload, rate, reply.raw));
  });
}

function rateChecked(payload: Readable, rate: BodyRate, response: ServerResponse): Readable {
  let received = 0;
  const body = new Transform({
    transform(chunk: Buffer, _encoding, next) {
      received += chunk.length;
      next(null, chunk);
    },
  });
  const started = performance.now();
  // The time the body waited on the server (a route storing what it read, a busy event loop).
  let serverTime = 0;
  let checked = started;
  let timer: NodeJS.Timeout | undefined;
  const check = (): void => {
    const now = performance.now();
    if (payload.readableLength > 0 || body.writableLength > 0 || body.readableLength > 0) {
      serverTime += now - checked;
      checked = now;
      timer = setTimeout(check, BACKED_UP_CHECK_MS).unref();
      return;
    }
    checked = now;
    const due = started + serverTime + rate.graceMs + (received * 1000) / rate.bytesPerSecond;
    if (now < due) {
      timer = setTimeout(check, due - now).unref();
      return;
    }
    // The request stream is left as it is (destroying it would close the connection before the answer).
    payload.unpipe(body);
    body.destroy(Object.assign(new ProblemError(408, `The request body arrived slower than ${rate.bytesPerSecond} bytes per second.`), { statusCode: 408 }));
  };
  timer = setTimeout(check, rate.graceMs).unref();
  const stop = (): void => clearTimeout(timer);
  payload.once('end', stop);
  body.once('close', stop);
  response.once('close', stop);
  payload.once('error', (error) => body.destroy(error));
  payload.pipe(body);
  return body;
}
