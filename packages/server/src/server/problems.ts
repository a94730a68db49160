/**
 * Problem documents (RFC 9457): every 4xx and 5xx answer carries one, `application/problem+json`, with a relative
 * `type` URI, a `title`, the `status` and a `detail` written for the client, and the extension member `requestId`:
 * the request's id, also in its `X-Request-Id` header and its log lines, so that a client's report can be found in
 * the log. Nothing internal (stack, path, SQL) ever goes into one.
 */
import type { FastifyReply } from 'fastify';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  /** The id of the request answered (an extension member; clients ignore members they do not know). */
  readonly requestId?: string;
}

/** A problem of a known kind, by status: the titles of RFC 9110 and the types this server uses. */
const KINDS: Record<number, { type: string; title: string }> = {
  400: { type: '/problems/invalid-request', title: 'Bad Request' },
  401: { type: '/problems/unauthorized', title: 'Unauthorized' },
  // The other 402 of this server has its own type: /problems/monthly-maximum-exceeded.
  402: { type: '/problems/insufficient-credit', title: 'Payment Required' },
  403: { type: '/problems/forbidden', title: 'Forbidden' },
  404: { type: '/problems/not-found', title: 'Not Found' },
  405: { type: '/problems/method-not-allowed', title: 'Method Not Allowed' },
  406: { type: '/problems/not-acceptable', title: 'Not Acceptable' },
  408: { type: '/problems/request-timeout', title: 'Request Timeout' },
  409: { type: '/problems/conflict', title: 'Conflict' },
  410: { type: '/problems/gone', title: 'Gone' },
  412: { type: '/problems/precondition-failed', title: 'Precondition Failed' },
  413: { type: '/problems/payload-too-large', title: 'Content Too Large' },
  414: { type: '/problems/uri-too-long', title: 'URI Too Long' },
  415: { type: '/problems/unsupported-media-type', title: 'Unsupported Media Type' },
  429: { type: '/problems/too-many-requests', title: 'Too Many Requests' },
  431: { type: '/problems/request-header-fields-too-large', title: 'Request Header Fields Too Large' },
  500: { type: '/problems/internal-error', title: 'Internal Server Error' },
  503: { type: '/problems/unavailable', title: 'Service Unavailable' },
  507: { type: '/problems/insufficient-storage', title: 'Insufficient Storage' },
};

/** The most characters of what a client sent (an id, a path) that a detail repeats. */
const EXCERPT_LENGTH = 100;

/** What a client sent, as a detail repeats it: whole up to 100 characters, else its start and an ellipsis. */
export function excerpt(text: string): string {
  return text.length <= EXCERPT_LENGTH ? text : `${text.slice(0, EXCERPT_LENGTH)}…`;
}

/** An error that becomes a problem document; thrown by handlers, answered by the error handler. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly type: string = (KINDS[status] ?? KINDS[500]!).type,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
  }

  toProblem(): Problem {
    const kind = KINDS[this.status];
    return { type: this.type, title: kind?.title ?? 'Error', status: this.status, detail: this.detail };
  }
}

/** 400 for a field of the request, named by its JSON path (`entries[3].custom`). */
export function invalidField(path: string, problem: string): ProblemError {
  return new ProblemError(400, `${path}: ${problem}`, '/problems/invalid-field');
}

/**
 * 429 (`/problems/too-many-requests`) for `reason`, with `Retry-After` in whole seconds, at least 1 (RFC 9110 §10.2.3),
 * said in the detail too. The one answer of every limit: failed sign-ins, request rates, throttling rules.
 */
export function tooManyRequests(reason: string, waitMs: number): ProblemError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new ProblemError(429, `${reason}: try again in ${seconds} second${seconds === 1 ? '' : 's'}.`, undefined, { 'Retry-After': String(seconds) });
}

/** Seconds a client is asked to wait before trying again a request refused for a full disk. */
const FULL_DISK_RETRY_AFTER_S = 10;

/**
 * The answer to a request the store refused for a full disk: 507 (RFC 4918 §11.5: the server cannot store what the
 * request needs) for what would store something new, such as a submission; 503 for a DELETE, which needs room only
 * for a tombstone and is simply to be tried again. Both with `Retry-After`; nothing of the request was kept.
 */
export function storageFullProblem(method: string): ProblemError {
  const retryAfter = { 'Retry-After': String(FULL_DISK_RETRY_AFTER_S) };
  return method === 'DELETE'
    ? new ProblemError(503, 'The disk holding the data is full: the job cannot be deleted now; try again later.', '/problems/insufficient-storage', retryAfter)
    : new ProblemError(507, 'The disk holding the data is full: the request cannot be stored now; try again later.', undefined, retryAfter);
}

export function sendProblem(reply: FastifyReply, problem: ProblemError): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  const document: Problem = { ...problem.toProblem(), requestId: String(reply.request.id) };
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(document);
}

/**
 * A problem document as the raw bytes of a whole HTTP/1.1 answer, for refusals made before a request exists (a
 * malformed request line, headers too large, a request that timed out), where only the socket can be written to.
 */
export function rawProblemAnswer(status: number, detail: string): string {
  const problem = new ProblemError(status, detail).toProblem();
  const body = JSON.stringify(problem);
  return (
    `HTTP/1.1 ${status} ${problem.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
