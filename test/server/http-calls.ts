// Requests of the server tests to a real listening server: fetch over HTTP, node:https over TLS (with a client
// certificate when given), credentials defaulting to the root's, the answer read whole (and, through `callerAs`, its
// JSON parsed).
import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { CertifiedKey } from '../lab/tls-ca.js';

export const basic = (username: string, password: string): string => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

export interface Endpoint {
  readonly origin: string;
  /** HTTPS: the CA of the server's certificate. */
  readonly ca?: string;
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

export interface CallOptions {
  /** The Authorization header; root's when absent, none when null. */
  readonly authorization?: string | null;
  readonly json?: unknown;
  readonly patch?: unknown;
  /** A body sent as given (its Content-Type in `headers`). */
  readonly raw?: string | Uint8Array;
  readonly headers?: Record<string, string>;
  /** HTTPS: the client certificate to present. */
  readonly client?: CertifiedKey;
  /** HTTP: 'manual' to answer with a redirect rather than follow it (over TLS redirects are never followed). */
  readonly redirect?: 'manual';
}

/** An answer whose body is read whole as text, not parsed. */
export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export type Call = (server: Endpoint, method: string, path: string, options?: CallOptions) => Promise<Answer>;

/** `call` with `rootAuthorization` as the Authorization header of requests that do not name one. */
export function callerAs(rootAuthorization: string): Call {
  return async (server, method, path, options = {}) => {
    const reply = await exchange(server, method, path, rootAuthorization, options);
    return { status: reply.status, headers: reply.headers, body: parsed(reply.text) };
  };
}

/** A request with `rootAuthorization` unless `options` names another Authorization (or null for none); its answer's text. */
export async function exchange(server: Endpoint, method: string, path: string, rootAuthorization: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  const authorization = options.authorization === undefined ? rootAuthorization : options.authorization;
  if (authorization !== null) headers['authorization'] = authorization;
  let body: string | Uint8Array | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.patch !== undefined) {
    headers['content-type'] = 'application/json-patch+json';
    body = JSON.stringify(options.patch);
  } else if (options.raw !== undefined) {
    body = options.raw;
  }
  if (server.ca !== undefined) return overTls(server, method, path, headers, body, options.client);
  const response = await fetch(`${server.origin}${path}`, {
    method,
    headers,
    ...(body !== undefined && { body }),
    ...(options.redirect !== undefined && { redirect: options.redirect }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** A JSON body parsed; any other text (the metrics' exposition) as it is. */
function parsed(text: string): unknown {
  if (text === '') return undefined;
  return text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text;
}

/** A request over its own TLS connection, trusting the server's CA, with `client`'s certificate when given. */
function overTls(server: Endpoint, method: string, path: string, headers: Record<string, string>, body: string | Uint8Array | undefined, client?: CertifiedKey): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const sent = httpsRequest(
      `${server.origin}${path}`,
      { method, agent: false, ca: server.ca, ...(client !== undefined && { cert: client.cert.pem, key: client.key.pem }), headers },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') answerHeaders.set(name, value);
          resolve({ status: response.statusCode!, headers: answerHeaders, text });
        });
        response.on('error', reject);
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

/** A 1.4 submission (of one entry) whose headers and first bytes are sent and the rest held back, until `finish`. */
export interface HeldSubmission {
  readonly request: ClientRequest;
  finish(): void;
  /** The answer's status, once it comes. */
  readonly answer: Promise<number>;
}

const HELD_BODY = JSON.stringify({ entries: [{ inputData: 'held@example.com' }] });

/**
 * POSTs to `path` of the plain HTTP server at `origin` (the path sent as written: a percent-encoded spelling stays
 * so) for the client address `ip` a trusted proxy names, and holds the body back after its first bytes.
 */
export function heldSubmission(origin: string, path: string, authorization: string, ip: string): HeldSubmission {
  const { hostname, port } = new URL(origin);
  const request = httpRequest({
    host: hostname,
    port,
    method: 'POST',
    path,
    agent: false,
    headers: { authorization, 'content-type': 'application/json', 'content-length': Buffer.byteLength(HELD_BODY), 'x-forwarded-for': ip },
  });
  const answer = new Promise<number>((resolve, reject) => {
    request.once('response', (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode!));
    });
    request.once('error', reject);
  });
  request.write(HELD_BODY.slice(0, 10));
  return { request, finish: () => request.end(HELD_BODY.slice(10)), answer };
}
