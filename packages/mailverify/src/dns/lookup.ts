/**
 * DNS lookups as the domain stage needs them: answers or error codes (never a thrown error but one, below), SERVFAIL
 * and REFUSED retried once, answers cached in a bounded LRU for the TTL of the answer (capped), negative answers cached
 * for a shorter time, concurrent identical queries sharing one request, and at most so many queries in flight.
 *
 * Each lookup is made for an `Interest` (a batch, or a resolution that batches share). A request that every caller of
 * it has withdrawn leaves the queue unsent, or is aborted in flight, at the next `withdraw()`; those callers get a
 * WithdrawnError, the only error a lookup throws. A caller still interested that shared such a request asks again.
 */
import { BoundedCache } from '../cache/bounded-cache.js';
import { LASTING, SharedInterest, WithdrawnError, type Interest } from './interest.js';
import { QueryLimit } from './limit.js';
import type { MxRecord, Resolver } from './resolver.js';

export type DnsAnswer<T> = { readonly ok: true; readonly records: T } | { readonly ok: false; readonly code: string };

export interface DnsCacheOptions {
  /** Most cached answers (default 10,000). */
  maxEntries?: number;
  /** The longest an answer is kept, whatever its TTL says, in milliseconds (default 5 minutes). */
  maxTtlMs?: number;
  /** How long NXDOMAIN, NODATA and SERVFAIL/REFUSED answers are kept, in milliseconds (default 1 minute). */
  negativeTtlMs?: number;
}

/** The record types the domain stage asks for. */
export type DnsRecordType = 'MX' | 'A' | 'AAAA';

/**
 * What came of one query, in a few kinds (few enough for a metric label): an answer, a name that does not exist
 * (NXDOMAIN), a name without records of the type (NODATA), a server's refusal or failure, no answer in time, no server
 * reached (refused, reset), or another error (a malformed answer or name).
 */
export type DnsQueryOutcome = 'answer' | 'nxdomain' | 'nodata' | 'servfail' | 'refused' | 'timeout' | 'unreachable' | 'error';

/** One query sent to the resolver (a retry is a query of its own; a cache hit is none). */
export interface DnsQueryEvent {
  readonly type: DnsRecordType;
  readonly name: string;
  readonly outcome: DnsQueryOutcome;
  /** Node's error code of a failure (`ENOTFOUND`, `ETIMEOUT`, `ECONNREFUSED`...); absent for an answer. */
  readonly code?: string;
  /** From sending the query to its answer or failure. */
  readonly durationMs: number;
  /** The servers the built-in resolver asks (`ip:port`); absent with a resolver of the host application's. */
  readonly servers?: readonly string[];
}

/** Node's DNS error codes → the kind of outcome; any other code is 'error'. */
const OUTCOMES: Readonly<Record<string, DnsQueryOutcome>> = {
  ENOTFOUND: 'nxdomain',
  ENODATA: 'nodata',
  ESERVFAIL: 'servfail',
  EREFUSED: 'refused',
  ETIMEOUT: 'timeout',
  ECANCELLED: 'timeout',
  ECONNREFUSED: 'unreachable',
  ECONNRESET: 'unreachable',
  ECONNECTION: 'unreachable',
  EOF: 'unreachable',
};

function outcomeOf(code: string): DnsQueryOutcome {
  return Object.hasOwn(OUTCOMES, code) ? OUTCOMES[code]! : 'error';
}

export interface DnsStats {
  /** Answers served from the cache. */
  hits: number;
  /** Lookups that were not in the cache (including those that joined a request already under way). */
  misses: number;
  /** Queries sent to the resolver, retries included. */
  queries: number;
}

/** Answers that are facts about the name (cached as negative answers); other failures are transient. */
const NEGATIVE_CODES = new Set(['ENOTFOUND', 'ENODATA', 'ESERVFAIL', 'EREFUSED', 'EFORMERR', 'ENOTIMP']);
/** Answers worth asking again once: another try may reach a server that answers. */
const RETRIED_CODES = new Set(['ESERVFAIL', 'EREFUSED']);

type Cached = DnsAnswer<MxRecord[]> | DnsAnswer<string[]>;
type Query = (signal: AbortSignal) => Promise<{ records: MxRecord[] | string[]; ttlMs: number | undefined }>;

/** A request under way, and the interest of everyone who waits for it. */
interface Request {
  readonly answer: Promise<Cached>;
  readonly interest: SharedInterest;
}

export class DnsLookup {
  readonly stats: DnsStats = { hits: 0, misses: 0, queries: 0 };
  private readonly cache: BoundedCache<string, Cached>;
  private readonly inFlight = new Map<string, Request>();
  private readonly limit: QueryLimit;
  private readonly maxTtlMs: number;
  private readonly negativeTtlMs: number;

  /**
   * `onQuery` hears of every query sent to the resolver that settles (the verifier's observer,
   * docs/verification.md#observing-the-engine); a query withdrawn in flight is not reported. At most
   * `maxQueriesInFlight` queries are sent at once.
   */
  constructor(
    private readonly resolver: Resolver,
    options: DnsCacheOptions = {},
    private readonly onQuery?: (event: DnsQueryEvent) => void,
    maxQueriesInFlight = Infinity,
  ) {
    this.limit = new QueryLimit(maxQueriesInFlight);
    this.maxTtlMs = options.maxTtlMs ?? 300_000;
    this.negativeTtlMs = options.negativeTtlMs ?? 60_000;
    // No timers: the cache checks the TTL when an entry is read.
    this.cache = new BoundedCache<string, Cached>({ max: options.maxEntries ?? 10_000, ttl: this.maxTtlMs });
  }

  /**
   * MX records of `name`, kept for the least TTL of the answer; a resolver that reports no TTL (Node's, for MX) has
   * them kept for `maxTtlMs`.
   */
  mx(name: string, interest: Interest = LASTING): Promise<DnsAnswer<MxRecord[]>> {
    return this.lookup('MX', name, interest, async (signal) => {
      const records = await this.resolver.resolveMx(name, { signal });
      return { records, ttlMs: leastTtlMs(records) };
    }) as Promise<DnsAnswer<MxRecord[]>>;
  }

  /** IPv4 (family 4) or IPv6 (family 6) addresses of `name`, kept for the least TTL of the answer. */
  addresses(name: string, family: 4 | 6, interest: Interest = LASTING): Promise<DnsAnswer<string[]>> {
    return this.lookup(family === 4 ? 'A' : 'AAAA', name, interest, async (signal) => {
      const answers =
        family === 4
          ? await this.resolver.resolve4(name, { ttl: true, signal })
          : await this.resolver.resolve6(name, { ttl: true, signal });
      return { records: answers.map((answer) => answer.address), ttlMs: leastTtlMs(answers) };
    }) as Promise<DnsAnswer<string[]>>;
  }

  /**
   * The cached answer for a lookup, if there is one, without a query and without counting it (`cachedMailDomain`
   * counts the hits of a resolution it completes from the cache).
   */
  cached(type: DnsRecordType, name: string): DnsAnswer<MxRecord[]> | DnsAnswer<string[]> | undefined {
    return this.cache.get(`${type} ${name}`);
  }

  /** Takes back the queries that nobody wants any more: unsent, or aborted in flight (see the header). */
  withdraw(): void {
    this.limit.withdraw();
  }

  private async lookup(type: DnsRecordType, name: string, interest: Interest, query: Query): Promise<Cached> {
    const key = `${type} ${name}`;
    for (;;) {
      if (interest.withdrawn) throw new WithdrawnError();
      const cached = this.cache.get(key);
      if (cached !== undefined) {
        this.stats.hits++;
        return cached;
      }
      this.stats.misses++;
      let request = this.inFlight.get(key);
      if (request === undefined) {
        const shared = new SharedInterest(interest);
        const answer = this.ask(key, type, name, shared, query).finally(() => {
          if (this.inFlight.get(key) === request) this.inFlight.delete(key);
        });
        request = { answer, interest: shared };
        this.inFlight.set(key, request);
      } else {
        request.interest.join(interest);
      }
      try {
        return await request.answer;
      } catch (error) {
        // Withdrawn by the others who shared it: asked again, unless this caller has been withdrawn too.
        if (!(error instanceof WithdrawnError)) throw error;
      }
    }
  }

  private async ask(key: string, type: DnsRecordType, name: string, interest: Interest, query: Query): Promise<Cached> {
    for (let attempt = 1; ; attempt++) {
      let sentAt = 0;
      try {
        const { records, ttlMs } = await this.limit.run(interest, (signal) => {
          this.stats.queries++;
          if (this.onQuery !== undefined) sentAt = performance.now();
          return query(signal);
        });
        this.onQuery?.({ type, name, outcome: 'answer', durationMs: performance.now() - sentAt });
        const answer = { ok: true as const, records } as Cached;
        // RFC 1035 §3.2.1: a TTL of 0 is for the transaction in progress only (here: the lookups sharing it).
        const ttl = Math.min(ttlMs ?? this.maxTtlMs, this.maxTtlMs);
        if (ttl > 0) this.cache.set(key, answer, { ttl });
        return answer;
      } catch (error) {
        if (error instanceof WithdrawnError) throw error;
        const code = errorCode(error);
        this.onQuery?.({ type, name, outcome: outcomeOf(code), code, durationMs: performance.now() - sentAt });
        if (RETRIED_CODES.has(code) && attempt === 1) continue;
        const answer: Cached = { ok: false, code };
        if (NEGATIVE_CODES.has(code)) this.cache.set(key, answer, { ttl: Math.min(this.negativeTtlMs, this.maxTtlMs) });
        return answer;
      }
    }
  }
}

/** The least TTL of the records in milliseconds, or undefined when no record reports a usable one. */
function leastTtlMs(records: ReadonlyArray<{ ttl?: unknown }>): number | undefined {
  let least: number | undefined;
  for (const { ttl } of records) {
    if (typeof ttl === 'number' && Number.isFinite(ttl) && ttl >= 0) least = Math.min(least ?? Infinity, ttl);
  }
  return least === undefined ? undefined : Math.floor(least * 1000);
}

/** The `code` of a DNS error; an error without one (a resolver of the host application's) counts as a bad answer. */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'EBADRESP';
}
