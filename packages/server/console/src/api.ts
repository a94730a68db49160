/**
 * The console's REST client: every page talks to the server through an `Api` and nothing else.
 *
 * - `basePathOf(location.pathname)`: the server's base path, from the console's own URL (`/x/console/...` → `/x`,
 *   `/console/` → ``), so one build works under any `--base-path`. `createApi({ basePath, token, onUnauthorized })`
 *   makes the client; `api.root` is `<basePath>/v2.7`, which every path below is relative to.
 * - `api.request<T>(method, path, options)` → `Promise<ApiResponse<T>>` `{ status, body, etag, location, headers }`
 *   for any 2xx (a 202 included: callers look at `status`). Options: `query` (a record; undefined values left out),
 *   `json` (a body sent as JSON), `form` (a `FormData`, sent as multipart for file imports), `patch` (a JSON Patch
 *   array, sent as `application/json-patch+json`), `ifMatch` (an ETag, sent as `If-Match`, quoted when bare),
 *   `headers`, `signal` (an `AbortSignal`: a page stops its requests when it goes away).
 * - Shorthands answering the body: `api.get<T>(path, query?)`, `api.post<T>(path, json, query?)`,
 *   `api.put<T>(path, json)`, `api.patch<T>(path, operations, ifMatch?)`, `api.del(path, ifMatch?)`.
 * - `api.download(path, accept, query?)` → `{ blob, fileName }`: an export (the file name from Content-Disposition);
 *   `saveFile(blob, fileName)` hands it to the browser as a download.
 * - A 429 to a GET is asked again after its Retry-After (up to 30 s, four tries in all): a request rate limit of
 *   the server slows the console down rather than stopping it.
 * - Every non-2xx throws an `ApiError` with `status` and `problem` (the problem document: `detail`, `title`, `type`;
 *   built from the status line when the answer has none); its `message` is the detail. A network failure throws an
 *   `ApiError` with status 0. A 401 also calls `onUnauthorized` (the session ended: back to sign-in).
 * - Requests carry `Authorization: Bearer <token>` when there is a token, and `credentials: 'omit'` always, so that
 *   the server's Basic challenge never opens the browser's own password dialog.
 */

export const API_VERSION = 'v2.7';

/** An RFC 9457 problem document as the server answers it. */
export interface Problem {
  readonly type?: string;
  readonly title?: string;
  readonly status?: number;
  readonly detail?: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;
  constructor(status: number, problem: Problem) {
    super(problem.detail ?? problem.title ?? `The server answered ${status}.`);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
  }
}

export interface RequestOptions {
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly json?: unknown;
  readonly form?: FormData;
  readonly patch?: readonly unknown[];
  readonly ifMatch?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export interface ApiResponse<T> {
  readonly status: number;
  readonly body: T;
  readonly etag: string | null;
  readonly location: string | null;
  readonly headers: Headers;
}

export interface Download {
  readonly blob: Blob;
  readonly fileName: string;
}

export interface Api {
  readonly basePath: string;
  /** `<basePath>/v2.7`. */
  readonly root: string;
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  get<T = unknown>(path: string, query?: RequestOptions['query'], signal?: AbortSignal): Promise<T>;
  post<T = unknown>(path: string, json: unknown, query?: RequestOptions['query']): Promise<T>;
  put<T = unknown>(path: string, json: unknown): Promise<T>;
  patch<T = unknown>(path: string, operations: readonly unknown[], ifMatch?: string): Promise<T>;
  del(path: string, ifMatch?: string): Promise<void>;
  download(path: string, accept: string, query?: RequestOptions['query']): Promise<Download>;
}

export interface ApiOptions {
  readonly basePath: string;
  /** The bearer token to send, read at each request. */
  readonly token: () => string | null;
  /** Called on every 401 (an expired or revoked token). */
  readonly onUnauthorized?: () => void;
}

/** The server's base path from the console's path: what comes before its `/console` segment. */
export function basePathOf(pathname: string): string {
  const at = pathname.search(/\/console(\/|$)/);
  return at === -1 ? '' : pathname.slice(0, at);
}

function queryString(query: RequestOptions['query']): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

async function problemOf(response: Response): Promise<Problem> {
  const fallback: Problem = { status: response.status, title: response.statusText || `HTTP ${response.status}` };
  try {
    const text = await response.text();
    const body = JSON.parse(text) as unknown;
    return typeof body === 'object' && body !== null ? { ...fallback, ...(body as Problem) } : fallback;
  } catch {
    return fallback;
  }
}

/** The file name of a Content-Disposition header (`filename*=UTF-8''…` preferred), or `fallback`. */
export function fileNameOf(disposition: string | null, fallback: string): string {
  if (disposition === null) return fallback;
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition);
  if (extended !== null) {
    try {
      return decodeURIComponent(extended[1]!.trim());
    } catch {
      // a broken encoding: try the plain parameter
    }
  }
  const plain = /filename\s*=\s*("([^"]*)"|[^;]+)/i.exec(disposition);
  return plain === null ? fallback : (plain[2] ?? plain[1]!).trim();
}

/** Hands a file to the browser as a download. */
export function saveFile(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has started the download once click() returns; the URL can go after this task.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

const MAX_ATTEMPTS = 4;
const MAX_RETRY_AFTER_MS = 30_000;

/** A 429's Retry-After in milliseconds, when it is whole seconds the console is willing to wait. */
function retryAfterMs(response: Response): number | null {
  const seconds = Number(response.headers.get('retry-after') ?? 'none');
  return Number.isInteger(seconds) && seconds >= 0 && seconds * 1000 <= MAX_RETRY_AFTER_MS ? seconds * 1000 : null;
}

/** Waits `ms`, or rejects as fetch does when `signal` aborts first. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer);
      reject(new DOMException('The request was aborted.', 'AbortError'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    if (signal?.aborted === true) aborted();
    else signal?.addEventListener('abort', aborted, { once: true });
  });
}

export function createApi(options: ApiOptions): Api {
  const root = `${options.basePath}/${API_VERSION}`;

  async function send(method: string, path: string, request: RequestOptions, accept: string): Promise<Response> {
    const headers: Record<string, string> = { accept, ...request.headers };
    const token = options.token();
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    if (request.ifMatch !== undefined) headers['if-match'] = /^(W\/)?"/.test(request.ifMatch) || request.ifMatch === '*' ? request.ifMatch : `"${request.ifMatch}"`;
    let body: BodyInit | undefined;
    if (request.form !== undefined) body = request.form;
    else if (request.patch !== undefined) {
      headers['content-type'] = 'application/json-patch+json';
      body = JSON.stringify(request.patch);
    } else if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    }
    let response: Response;
    for (let attempt = 1; ; attempt++) {
      try {
        response = await fetch(`${root}${path}${queryString(request.query)}`, {
          method,
          headers,
          body,
          credentials: 'omit',
          cache: 'no-store',
          ...(request.signal !== undefined && { signal: request.signal }),
        });
      } catch (error) {
        if (error instanceof DOMException && error.name === 'AbortError') throw error;
        throw new ApiError(0, { title: 'No answer', detail: 'The server could not be reached. Check the connection and try again.' });
      }
      // A request rate limit: a read is asked again once the server says it may be (a write is left to the user).
      const wait = retryAfterMs(response);
      if (response.status !== 429 || method !== 'GET' || wait === null || attempt >= MAX_ATTEMPTS) break;
      await response.body?.cancel();
      await sleep(wait, request.signal);
    }
    if (response.ok) return response;
    const problem = await problemOf(response);
    if (response.status === 401) options.onUnauthorized?.();
    throw new ApiError(response.status, problem);
  }

  const api: Api = {
    basePath: options.basePath,
    root,
    async request<T>(method: string, path: string, request: RequestOptions = {}): Promise<ApiResponse<T>> {
      const response = await send(method, path, request, 'application/json');
      const text = await response.text();
      return {
        status: response.status,
        body: (text === '' ? undefined : JSON.parse(text)) as T,
        etag: response.headers.get('etag'),
        location: response.headers.get('location'),
        headers: response.headers,
      };
    },
    get: async (path, query, signal) => (await api.request('GET', path, { ...(query && { query }), ...(signal && { signal }) })).body as never,
    post: async (path, json, query) => (await api.request('POST', path, { json, ...(query && { query }) })).body as never,
    put: async (path, json) => (await api.request('PUT', path, { json })).body as never,
    patch: async (path, operations, ifMatch) => (await api.request('PATCH', path, { patch: operations, ...(ifMatch !== undefined && { ifMatch }) })).body as never,
    del: async (path, ifMatch) => {
      await api.request('DELETE', path, ifMatch === undefined ? {} : { ifMatch });
    },
    async download(path, accept, query) {
      const response = await send('GET', path, query === undefined ? {} : { query }, accept);
      if (response.status === 202) throw new ApiError(202, { title: 'Not ready', detail: 'The job is still in progress: its export is available once it completes.' });
      const blob = await response.blob();
      return { blob, fileName: fileNameOf(response.headers.get('content-disposition'), 'export') };
    },
  };
  return api;
}
