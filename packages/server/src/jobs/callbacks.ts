/**
 * Completion callbacks: when a job that names a callback URL completes, an event is put in the store's outbox (in the
 * transaction that completes the job) and a worker delivers it. A failed delivery is tried again later from the
 * outbox; it never runs the verification again.
 *
 * - Body `{ "event": { "type": "email-validation.completed", "version": "1.1", "createdOn", "data": { "id", "name" } } }`;
 *   version 1.0 has neither `version` nor `name`, and `name` is left out when the job has none. `Idempotency-Key` is a
 *   random UUID per event: the key and the body (its createdOn included) are the same on every try.
 * - Success: a 2xx within `timeoutMs` (5 s). Redirects are not followed: a 3xx is a failure like any other status.
 * - Retries: the first 10 s after the first try started, then each gap twice the one before, at most 1 hour, until
 *   24 hours after the first try; then the event is dropped (and logged).
 * - The URL's host is resolved when sending and every address is checked: a non-global address is refused unless
 *   private addresses are allowed. The connection goes to the address checked (the socket's lookup answers with it),
 *   so a name that resolves again to something else (DNS rebinding) cannot redirect it.
 * - HTTPS certificates are verified unless the job's callback says `skipServerCertificateValidation`.
 *
 * Requests go through node:http and node:https: no redirect is ever followed, the `lookup` option pins the address,
 * and no dependency is needed (undici's current major requires Node 22).
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest, type ClientRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isGlobalAddress, type Resolver } from 'mailverify/internal';
import { isoTime, realClock, type Clock, type ClockTimer } from './clock.js';
import type { CallbackDelivery, CallbackEvent, JobRecord, JobStore } from './types.js';

export const CALLBACK_EVENT_TYPE = 'email-validation.completed';

/** The gap before the first retry; each later gap is twice the one before... */
export const FIRST_RETRY_MS = 10_000;
/** ...up to this. */
export const MAX_RETRY_GAP_MS = 3_600_000;
/** No try starts later than this after the first one. */
export const GIVE_UP_AFTER_MS = 24 * 3_600_000;
/** A receiver has this long to answer with a 2xx. */
export const DEFAULT_CALLBACK_TIMEOUT_MS = 5_000;

/** The callback event of a job completed at `completedOn`, or undefined when the job names no callback. */
export function completionEvent(job: JobRecord, completedOn: string): CallbackEvent | undefined {
  const { callback } = job;
  if (callback === undefined) return undefined;
  const event =
    callback.version === '1.0'
      ? { type: CALLBACK_EVENT_TYPE, createdOn: completedOn, data: { id: job.id } }
      : {
          type: CALLBACK_EVENT_TYPE,
          version: '1.1',
          createdOn: completedOn,
          data: job.name === undefined ? { id: job.id } : { id: job.id, name: job.name },
        };
  return {
    jobId: job.id,
    url: callback.url,
    skipServerCertificateValidation: callback.skipServerCertificateValidation,
    idempotencyKey: randomUUID(),
    body: JSON.stringify({ event }),
    dueAt: Date.parse(completedOn),
  };
}

/** The gap between the start of try `attempt` (1 for the first) and the next one. */
/** A job's completion now: its time and its callback event (none without a callback). */
export function completionNow(job: JobRecord, clock: Clock): { readonly completedOn: string; readonly callback?: CallbackEvent } {
  const completedOn = isoTime(clock);
  const callback = completionEvent(job, completedOn);
  return callback === undefined ? { completedOn } : { completedOn, callback };
}

export function retryGapMs(attempt: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), MAX_RETRY_GAP_MS);
}

export interface DeliveryOptions {
  /** Resolves the URL's host (A and AAAA). */
  readonly resolver: Resolver;
  /** Non-global addresses (loopback, private, link-local...) may be called. Default false. */
  readonly allowPrivateAddresses?: boolean;
  /** Milliseconds the whole try may take, resolution included (default 5,000). */
  readonly timeoutMs?: number;
  /** Aborts the try (it then fails). */
  readonly signal?: AbortSignal;
}

export type DeliveryOutcome = { readonly delivered: true; readonly status: number } | { readonly delivered: false; readonly reason: string };

/** One try: POSTs the event's body to its URL. Never rejects: a failure is an outcome with its reason. */
export async function deliverCallback(event: CallbackEvent, options: DeliveryOptions): Promise<DeliveryOutcome> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  const onAbort = (): void => controller.abort(options.signal!.reason);
  if (options.signal?.aborted) controller.abort(options.signal.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const url = new URL(event.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return failed(`${url.protocol} is not http or https`);
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const addresses = await abortable(hostAddresses(host, options.resolver), controller.signal);
    if (addresses.length === 0) return failed(`${host} has no address`);
    if (options.allowPrivateAddresses !== true) {
      const refused = addresses.find((address) => !isGlobalAddress(address));
      if (refused !== undefined) return failed(`${host} resolves to ${refused}, not a global address`);
    }
    const status = await post(url, host, addresses[0]!, event, controller.signal);
    if (status >= 200 && status < 300) return { delivered: true, status };
    return failed(`HTTP status ${status}`);
  } catch (error) {
    const reason = controller.signal.aborted ? controller.signal.reason : error;
    return failed(reason instanceof Error ? reason.message : String(reason));
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

function failed(reason: string): DeliveryOutcome {
  return { delivered: false, reason };
}

/**
 * Every address of `host`: an IP literal is itself; `localhost` and its subdomains are loopback without asking DNS
 * (RFC 6761 section 6.3); any other name gets its A and AAAA records (IPv4 first).
 */
async function hostAddresses(host: string, resolver: Resolver): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return ['127.0.0.1', '::1'];
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(name, { ttl: true }), resolver.resolve6(name, { ttl: true })]);
  if (v4.status === 'rejected' && v6.status === 'rejected') throw v4.reason;
  return [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])].map((record) => record.address);
}

/** `promise`, or the signal's reason once it aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** POSTs the body to `address` (the host's checked address) and resolves with the status of the answer. */
function post(url: URL, host: string, address: string, event: CallbackEvent, signal: AbortSignal): Promise<number> {
  const family = isIP(address);
  // The socket asks this lookup, not DNS: it connects to the address that was checked.
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all === true) {
      (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    } else {
      callback(null, address, family);
    }
  };
  const body = Buffer.from(event.body, 'utf8');
  const options: RequestOptions & { rejectUnauthorized?: boolean } = {
    method: 'POST',
    host,
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    lookup: pinned,
    // A connection of its own, closed after the answer: nothing is pooled between tries.
    agent: false,
    signal,
    headers: {
      'content-type': 'application/json',
      'content-length': body.length,
      'idempotency-key': event.idempotencyKey,
      'user-agent': 'mailverify',
      connection: 'close',
    },
    ...(url.username !== '' && {
      auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
    }),
    ...(url.protocol === 'https:' && { rejectUnauthorized: !event.skipServerCertificateValidation }),
  };
  return new Promise<number>((resolve, reject) => {
    // The status decides; the body is read and dropped so that the connection ends cleanly. A body still coming at
    // the deadline is cut off (the abort destroys the socket), and the status stands.
    let status: number | undefined;
    const settle = (error: unknown): void => (status === undefined ? reject(error) : resolve(status));
    let request: ClientRequest;
    try {
      request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options, (response) => {
        status = response.statusCode ?? 0;
        response.on('end', () => resolve(status!));
        response.on('error', settle);
        response.on('close', () => settle(new Error('the connection closed')));
        response.resume();
      });
    } catch (error) {
      reject(error as Error);
      return;
    }
    request.on('error', settle);
    request.end(body);
  });
}

export interface CallbackWorkerOptions extends Omit<DeliveryOptions, 'signal'> {
  readonly store: JobStore;
  /** The time source of the retry schedule (default: the real clock). */
  readonly clock?: Clock;
  /** Tries at once (default 128): each a socket, none waiting for another to end. */
  readonly concurrency?: number;
  /**
   * Where a failed try, a dropped event and a failure of the worker's own are told, with their details (job id, try,
   * next try, reason, the URL without credentials or query); default: console.error.
   */
  readonly log?: (message: string, details?: Record<string, unknown>) => void;
  /** Told of each try that ended (delivered or failed; a try cut short by close() is neither) and each event dropped. */
  readonly onOutcome?: (outcome: 'delivered' | 'failed' | 'dropped') => void;
}

/**
 * Delivers the outbox: the events due, then sleeps on the clock until the next one is due or `wake()` says an event
 * was added. Events left pending by a previous process are delivered from `start()` on.
 */
export class CallbackWorker {
  readonly #options: CallbackWorkerOptions;
  readonly #clock: Clock;
  readonly #stopping = new AbortController();
  #timer: ClockTimer | undefined;
  #pumping: Promise<void> | null = null;
  #again = false;
  /** Ends the wait of a delivery round for a try to end: an event was added. */
  #woken: (() => void) | undefined;
  /** The tries running, by outbox event id. */
  readonly #inFlight = new Map<number, Promise<void>>();
  #started = false;
  #closed = false;

  constructor(options: CallbackWorkerOptions) {
    const concurrency = options.concurrency ?? 128;
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency: a positive integer');
    const timeoutMs = options.timeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError('timeoutMs: a positive number');
    this.#options = { ...options, concurrency, timeoutMs };
    this.#clock = options.clock ?? realClock;
  }

  /** Starts delivering, beginning with the events already due. */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#pump();
  }

  /** An event was added to the outbox: delivers it now. */
  wake(): void {
    if (this.#started && !this.#closed) this.#pump();
  }

  /** Resolves when the worker has nothing in hand: no try running, the next one waiting on the clock. */
  async settled(): Promise<void> {
    while (this.#pumping !== null) await this.#pumping;
  }

  /** Stops: tries in flight are aborted (they are made again at the next start), no new one begins. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopping.abort(new Error('the server is closing'));
    this.#woken?.();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.settled();
  }

  #pump(): void {
    if (this.#pumping !== null) {
      this.#again = true;
      this.#woken?.();
      return;
    }
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pumping = this.#deliverDue()
      .catch((error: unknown) => {
        this.#log(`mailverify: callback delivery failed: ${(error as Error)?.message ?? String(error)}`);
        // The store failed: the outbox is read again a little later.
        if (!this.#closed && this.#timer === undefined) this.#schedule(FIRST_RETRY_MS);
      })
      .finally(() => {
        this.#pumping = null;
        if (this.#again && !this.#closed) this.#pump();
      });
  }

  /**
   * Delivers every event due, each try on its own: up to `concurrency` tries run at once, and as soon as one ends the
   * next event due takes its place (an event added meanwhile too), so that a receiver that answers at once is never
   * held behind others that take their whole timeout. Events in flight stay in the outbox until their try ends.
   */
  async #deliverDue(): Promise<void> {
    const { store } = this.#options;
    const concurrency = this.#options.concurrency!;
    let failure: { error: unknown } | undefined;
    for (;;) {
      if (this.#closed || failure !== undefined) break;
      this.#again = false;
      const free = concurrency - this.#inFlight.size;
      const due =
        free === 0
          ? []
          : (await store.dueCallbacks(this.#clock.now(), concurrency + this.#inFlight.size))
              .filter((delivery) => !this.#inFlight.has(delivery.id))
              .slice(0, free);
      for (const delivery of due) {
        const attempt = this.#attempt(delivery)
          // A failure of the store on one try does not cut the others short; it ends the round once they have ended.
          .catch((error: unknown) => void (failure ??= { error }))
          .finally(() => this.#inFlight.delete(delivery.id));
        this.#inFlight.set(delivery.id, attempt);
      }
      if (this.#inFlight.size === 0) {
        if (this.#again) continue;
        break;
      }
      // Wait for a try to end or an event to be added, then look again.
      if (!this.#again) await Promise.race([...this.#inFlight.values(), new Promise<void>((resolve) => (this.#woken = resolve))]);
      this.#woken = undefined;
    }
    await Promise.all(this.#inFlight.values());
    if (failure !== undefined) throw failure.error;
    if (this.#closed) return;
    const next = await store.nextCallbackAt();
    if (next !== null && !this.#closed) this.#schedule(next - this.#clock.now());
  }

  /** Reads the outbox again in `ms` on the clock. */
  #schedule(ms: number): void {
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#pump();
    }, ms);
  }

  async #attempt(delivery: CallbackDelivery): Promise<void> {
    const { store } = this.#options;
    const started = this.#clock.now();
    const firstAttemptAt = delivery.firstAttemptAt ?? started;
    if (started > firstAttemptAt + GIVE_UP_AFTER_MS) {
      // Due long ago (the server was down past the last try): nothing is sent any more.
      await store.removeCallback(delivery.id);
      this.#options.onOutcome?.('dropped');
      this.#log(`mailverify: callback of job ${delivery.jobId} dropped: no answer within 24 hours (${delivery.attempts} tries)`, {
        jobId: delivery.jobId,
        url: loggableUrl(delivery.url),
      });
      return;
    }
    const outcome = await deliverCallback(delivery, { ...this.#options, signal: this.#stopping.signal });
    if (outcome.delivered) {
      this.#options.onOutcome?.('delivered');
      await store.removeCallback(delivery.id);
      return;
    }
    // A try cut short by close() is not counted: it is made again at the next start.
    if (this.#closed) return;
    this.#options.onOutcome?.('failed');
    const attempts = delivery.attempts + 1;
    const next = started + retryGapMs(attempts);
    const details = { jobId: delivery.jobId, attempt: attempts, reason: outcome.reason, url: loggableUrl(delivery.url) };
    if (next > firstAttemptAt + GIVE_UP_AFTER_MS) {
      await store.removeCallback(delivery.id);
      this.#options.onOutcome?.('dropped');
      this.#log(`mailverify: callback of job ${delivery.jobId} dropped after ${attempts} tries in 24 hours; the last: ${outcome.reason}`, details);
    } else {
      await store.callbackAttempted(delivery.id, firstAttemptAt, next);
      const nextAttemptOn = new Date(next).toISOString();
      this.#log(`mailverify: callback of job ${delivery.jobId} failed (try ${attempts}): ${outcome.reason}; next try at ${nextAttemptOn}`, {
        ...details,
        nextAttemptOn,
      });
    }
  }

  #log(message: string, details?: Record<string, unknown>): void {
    if (this.#options.log !== undefined) this.#options.log(message, details);
    else console.error(message);
  }
}

/** A callback URL as it may be logged: its origin and path, without credentials or a query that may hold a secret. */
export function loggableUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(not a URL)';
  }
}
