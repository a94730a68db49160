/**
 * The server's defaults, in a module of their own so that the `serve` command's option table (src/cli/serve-options.ts)
 * documents and applies the very values the server uses, without loading the server.
 */

/** The folder of the SQLite store when no store is given. */
export const DEFAULT_DATA_DIR = './mailverify-data';
/** The SQLite database file in the data folder. */
export const DATA_FILE = 'mailverify.db';
/** A job's retention from its completion when it sets none. */
export const DEFAULT_RETENTION_MS = 30 * 24 * 3_600_000;
/** The largest request body. */
export const DEFAULT_BODY_LIMIT = 64 * 1024 * 1024;
/** The most entries of one job. */
export const DEFAULT_MAX_ENTRIES_PER_JOB = 1_000_000;
/**
 * The time a client has to send a whole request, headers and body (Node's own default; Fastify turns it off): a body
 * that never ends no longer holds a connection, and a file descriptor, forever.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;
/**
 * The time a client has to send the request's header fields: a few KiB, which even a slow link sends in well under a
 * second (Node's own default is 60 s, which lets clients that trickle header fields hold connections three times as long).
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 20_000;
/**
 * The least average rate of a request body, in bytes per second, once its grace has passed: a body trickled a byte at
 * a time is answered 408 and its connection closed, instead of holding it until the request timeout.
 */
export const DEFAULT_MIN_BODY_RATE = 500;
/** The time a body has before its rate counts (then it needs a byte per 1/rate second more). */
export const DEFAULT_BODY_RATE_GRACE_MS = 20_000;
/**
 * The most open connections from one client address; more are closed as they are accepted. Far more than a browser
 * or a client library opens (a handful); a reverse proxy named by trustProxy is not capped.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256;
/**
 * The time a connection may go without any byte read or written: a client that stops reading an export, or a
 * keep-alive connection left open, is closed. Longer than the longest wait of a request (waitTime, 30 s).
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/** Request rate limits (`rateLimits`): tokens added per second to a client IP's bucket under /v2.x. */
export const DEFAULT_RATE_PER_SECOND = 6;
/** The most tokens a bucket holds: the burst an idle client may send at once. */
export const DEFAULT_BURST = 15;
/** The most requests of one client IP in flight under /v1.4. */
export const DEFAULT_LEGACY_IN_FLIGHT = 5;

/** The lifetime of a bearer token. */
export const DEFAULT_TOKEN_LIFETIME_MS = 3_600_000;

/** File import (multipart POST /email-validations): the largest upload, as the JSON body. */
export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;
/** The most an xlsx workbook may inflate to: a zip bomb is 413. */
export const DEFAULT_MAX_INFLATED_BYTES = 256 * 1024 * 1024;
/** The largest xls file, which is read whole. */
export const DEFAULT_MAX_XLS_BYTES = 32 * 1024 * 1024;
/** The time a workbook may take to read. */
export const DEFAULT_SPREADSHEET_TIMEOUT_MS = 120_000;
/** The heap of the thread that reads a workbook, in MiB. */
export const DEFAULT_SPREADSHEET_HEAP_MB = 512;
/**
 * The workbooks read at once; one more is 503 with Retry-After. Each reader may take its heap and the time limit, so
 * this bounds their memory in total (about 2 × 512 MiB by default) whatever the number of cores.
 */
export const DEFAULT_MAX_SPREADSHEET_READERS = 2;
