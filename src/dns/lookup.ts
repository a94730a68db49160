/**
 * DNS lookups as the domain stage needs them: answers or error codes (never a thrown error), SERVFAIL and REFUSED
 * retried once, answers cached in a bounded LRU for the TTL of the answer (capped), negative answers cached for a
 * shorter time, and concurrent identical queries sharing one request.
 */
import { LRUCache } from 'lru-cache';
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
type Query = () => Promise<{ records: MxRecord[] | string[]; ttlMs: number | undefined }>;

export class DnsLookup {
  readonly stats: DnsStats = { hits: 0, misses: 0, queries: 0 };
  private readonly cache: LRUCache<string, Cached>;
  private readonly inFlight = new Map<string, Promise<Cached>>();
  private readonly maxTtlMs: number;
  private readonly negativeTtlMs: number;

  /**
   * `onQuery` hears of every query sent to the resolver (the verifier's observer, docs/verification.md#observing-the-engine).
   */
  constructor(
    private readonly resolver: Resolver,
    options: DnsCacheOptions = {},
    private readonly onQuery?: (event: DnsQueryEvent) => void,
  ) {
    this.maxTtlMs = options.maxTtlMs ?? 300_000;
    this.negativeTtlMs = options.negativeTtlMs ?? 60_000;
    // No timers: lru-cache checks the TTL when an entry is read (ttlAutopurge stays off).
    this.cache = new LRUCache<string, Cached>({ max: options.maxEntries ?? 10_000, ttl: this.maxTtlMs });
  }

  /**
   * MX records of `name`, kept for the least TTL of the answer; a resolver that reports no TTL (Node's, for MX) has
   * them kept for `maxTtlMs`.
   */
  mx(name: string): Promise<DnsAnswer<MxRecord[]>> {
    return this.lookup('MX', name, async () => {
      const records = await this.resolver.resolveMx(name);
      return { records, ttlMs: leastTtlMs(records) };
    }) as Promise<DnsAnswer<MxRecord[]>>;
  }

  /** IPv4 (family 4) or IPv6 (family 6) addresses of `name`, kept for the least TTL of the answer. */
  addresses(name: string, family: 4 | 6): Promise<DnsAnswer<string[]>> {
    return this.lookup(family === 4 ? 'A' : 'AAAA', name, async () => {
      const answers =
        family === 4 ? await this.resolver.resolve4(name, { ttl: true }) : await this.resolver.resolve6(name, { ttl: true });
      return { records: answers.map((answer) => answer.address), ttlMs: leastTtlMs(answers) };
    }) as Promise<DnsAnswer<string[]>>;
  }

  private lookup(type: DnsRecordType, name: string, query: Query): Promise<Cached> {
    const key = `${type} ${name}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      this.stats.hits++;
      return Promise.resolve(cached);
    }
    this.stats.misses++;
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return pending;
    const request = this.ask(key, type, name, query).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, request);
    return request;
  }

  private async ask(key: string, type: DnsRecordType, name: string, query: Query): Promise<Cached> {
    for (let attempt = 1; ; attempt++) {
      this.stats.queries++;
      const sentAt = this.onQuery === undefined ? 0 : performance.now();
      try {
        const { records, ttlMs } = await query();
        this.onQuery?.({ type, name, outcome: 'answer', durationMs: performance.now() - sentAt });
        const answer = { ok: true as const, records } as Cached;
        // RFC 1035 §3.2.1: a TTL of 0 is for the transaction in progress only (here: the lookups sharing it).
        const ttl = Math.min(ttlMs ?? this.maxTtlMs, this.maxTtlMs);
        if (ttl > 0) this.cache.set(key, answer, { ttl });
        return answer;
      } catch (error) {
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
