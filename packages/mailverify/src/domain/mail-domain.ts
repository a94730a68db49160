/**
 * The domain stage (docs/verification.md#dns): which hosts receive mail for a domain, and at which usable addresses.
 * MX records sorted by preference, each exchange resolved to A/AAAA; RFC 7505 null MX; the RFC 5321 §5.1 implicit
 * MX when there is no MX; exchanges that are IP literals, or that resolve only to non-global addresses, are never
 * used (unless the caller allows private addresses; IP literals never).
 */
import { isIP } from 'node:net';
import type { StatusCode } from '../status/catalogue.js';
import type { Interest } from '../dns/interest.js';
import type { DnsAnswer, DnsLookup } from '../dns/lookup.js';
import type { MxRecord } from '../dns/resolver.js';
import { isGlobalAddress } from '../net/ip-ranges.js';

export interface MailExchanger {
  /** Host name, lower case, no trailing dot. */
  readonly host: string;
  readonly priority: number;
  /** Addresses the engine may connect to, IPv4 first. */
  readonly addresses: readonly string[];
}

export type DomainStatus = Extract<
  StatusCode,
  'DomainDoesNotExist' | 'DomainHasNullMx' | 'DomainIsMisconfigured' | 'DnsQueryTimeout' | 'DnsConnectionFailure'
>;

export type MailDomain =
  | {
      readonly status: null;
      /** Usable exchangers in preference order. */
      readonly exchangers: readonly MailExchanger[];
      /** The domain has MX records (false: the implicit MX of its own A/AAAA records is used). */
      readonly hasMx: boolean;
    }
  | { readonly status: DomainStatus; readonly hasMx: boolean };

/**
 * A mail exchanger left out because every address it resolves to is non-global (loopback, private, link-local,
 * reserved...) and the caller does not allow those: its domain gets `DomainIsMisconfigured` unless another exchanger
 * is usable.
 */
export interface ExchangerSkippedEvent {
  readonly domain: string;
  /** The exchanger's host name: an MX target, or the domain itself for the implicit MX. */
  readonly exchanger: string;
  /** The addresses it resolved to, none of them global. */
  readonly addresses: readonly string[];
}

export interface MailDomainOptions {
  readonly allowPrivateAddresses: boolean;
  /** Told of each exchanger left out for its non-global addresses (the verifier's observer). */
  readonly onSkipped?: (event: ExchangerSkippedEvent) => void;
  /**
   * Who waits for the answer: once withdrawn, no further query is asked and the resolution rejects with a
   * WithdrawnError (see `DnsLookup`). Default: a caller that never withdraws.
   */
  readonly interest?: Interest;
}

/** Most exchangers considered per domain: bounds the queries a hostile zone can cause. */
export const MAX_EXCHANGERS = 10;

/**
 * Node's DNS error codes (the c-ares codes of `node:dns`) → the status of the domain stage. ENODATA (the name exists,
 * no record of that type) is an absence of records, not a failure: null.
 */
const LOOKUP_FAILURES: Readonly<Record<string, DomainStatus | null>> = {
  ENODATA: null,
  ENOTFOUND: 'DomainDoesNotExist', // NXDOMAIN
  ETIMEOUT: 'DnsQueryTimeout', // no answer within the cap (ours or the resolver's)
  ECANCELLED: 'DnsQueryTimeout', // our deadline cancelled the query
  ECONNREFUSED: 'DnsConnectionFailure', // socket failures
  ECONNRESET: 'DnsConnectionFailure',
  ECONNECTION: 'DnsConnectionFailure',
  EBADRESP: 'DnsConnectionFailure',
  EOF: 'DnsConnectionFailure',
};

/** The status of a failed lookup, or null when it is an absence of records. */
function failureStatus(code: string): DomainStatus | null {
  // Anything else (ESERVFAIL/EREFUSED after their retry, EFORMERR, ENOTIMP, EBADNAME...): the domain cannot be resolved.
  return Object.hasOwn(LOOKUP_FAILURES, code) ? (LOOKUP_FAILURES[code] as DomainStatus | null) : 'DomainIsMisconfigured';
}

/** When a host's lookups fail, the most telling status: a transient failure wins over a missing record. */
function worst(a: DomainStatus | null, b: DomainStatus | null): DomainStatus | null {
  const rank = (s: DomainStatus | null) =>
    s === 'DnsQueryTimeout' ? 3 : s === 'DnsConnectionFailure' ? 2 : s === null ? 0 : 1;
  return rank(b) > rank(a) ? b : a;
}

interface HostAddresses {
  /** Addresses allowed by the address policy. */
  readonly usable: string[];
  /** Every address found (usable or not). */
  readonly found: string[];
  /** The failure of a lookup that did not answer with records or NODATA. */
  readonly failure: DomainStatus | null;
}

/** A lookup the resolution needs: the MX records of a name, or its A or AAAA records. */
type Question = { readonly type: 'MX' | 'A' | 'AAAA'; readonly name: string };
type Answer = DnsAnswer<MxRecord[]> | DnsAnswer<string[]>;

/** The A and AAAA lookups of a host, in that order (IPv4 first). */
function addressQuestions(host: string): Question[] {
  return [
    { type: 'A', name: host },
    { type: 'AAAA', name: host },
  ];
}

/** The addresses of an exchanger from its A and AAAA answers; one whose addresses are all non-global is reported to `onSkipped`. */
function hostAddresses(domain: string, host: string, answers: readonly Answer[], options: MailDomainOptions): HostAddresses {
  const usable: string[] = [];
  const found: string[] = [];
  let failure: DomainStatus | null = null;
  for (const answer of answers as readonly DnsAnswer<string[]>[]) {
    if (!answer.ok) {
      failure = worst(failure, failureStatus(answer.code));
      continue;
    }
    for (const address of answer.records) {
      found.push(address);
      if (options.allowPrivateAddresses || isGlobalAddress(address)) usable.push(address);
    }
  }
  if (usable.length === 0 && found.length > 0) options.onSkipped?.({ domain, exchanger: host, addresses: found });
  return { usable, found, failure };
}

/**
 * The resolution as steps: each `yield` asks for lookups and gets their answers, in the same order. Written once for
 * both drivers: `resolveMailDomain` (queries, awaited) and `cachedMailDomain` (cached answers only, synchronous).
 */
function* resolution(domain: string, options: MailDomainOptions): Generator<Question[], MailDomain, Answer[]> {
  const [mx] = (yield [{ type: 'MX', name: domain }]) as [DnsAnswer<MxRecord[]>];
  if (!mx.ok) {
    const status = failureStatus(mx.code);
    if (status !== null) return { status, hasMx: false };
  }
  const records = mx.ok ? mx.records : [];

  if (records.length === 0) {
    // RFC 5321 §5.1: no MX, so the domain itself is the implicit MX, preference 0.
    const own = hostAddresses(domain, domain, yield addressQuestions(domain), options);
    if (own.usable.length > 0) return { status: null, exchangers: [{ host: domain, priority: 0, addresses: own.usable }], hasMx: false };
    // Addresses that exist but may not be used, or none at all: misconfigured, unless a lookup failed transiently.
    const failure = own.found.length > 0 ? null : own.failure;
    return { status: failure === 'DnsQueryTimeout' || failure === 'DnsConnectionFailure' ? failure : 'DomainIsMisconfigured', hasMx: false };
  }

  // RFC 7505: a single MX of preference 0 and an empty exchange ("."): the domain accepts no mail.
  if (records.length === 1 && isNullExchange(records[0]!.exchange)) return { status: 'DomainHasNullMx', hasMx: true };

  const hosts = [...records]
    .filter((record) => !isNullExchange(record.exchange))
    .sort((a, b) => a.priority - b.priority)
    .map((record) => ({ host: record.exchange.toLowerCase().replace(/\.$/, ''), priority: record.priority }))
    .filter((record, i, all) => all.findIndex((other) => other.host === record.host) === i)
    .slice(0, MAX_EXCHANGERS)
    // RFC 5321 §5.1: an exchange is a host name; an IP literal there is a misconfiguration, never followed.
    .filter(({ host }) => isIP(host) === 0);

  // Every exchanger's lookups at once.
  const answers = yield hosts.flatMap(({ host }) => addressQuestions(host));
  const exchangers: MailExchanger[] = [];
  let failure: DomainStatus | null = null;
  for (let i = 0; i < hosts.length; i++) {
    const { host, priority } = hosts[i]!;
    const addresses = hostAddresses(domain, host, answers.slice(2 * i, 2 * i + 2), options);
    if (addresses.usable.length > 0) exchangers.push({ host, priority, addresses: addresses.usable });
    else if (addresses.found.length === 0) failure = worst(failure, addresses.failure);
  }
  if (exchangers.length > 0) return { status: null, exchangers, hasMx: true };
  return {
    status: failure === 'DnsQueryTimeout' || failure === 'DnsConnectionFailure' ? failure : 'DomainIsMisconfigured',
    hasMx: true,
  };
}

function ask(dns: DnsLookup, question: Question, interest: Interest | undefined): Promise<Answer> {
  return question.type === 'MX' ? dns.mx(question.name, interest) : dns.addresses(question.name, question.type === 'A' ? 4 : 6, interest);
}

/** Resolves the mail exchangers of a lower-case ASCII domain. */
export async function resolveMailDomain(dns: DnsLookup, domain: string, options: MailDomainOptions): Promise<MailDomain> {
  const steps = resolution(domain, options);
  let step = steps.next([]);
  while (step.done !== true) {
    const answers = await Promise.all(step.value.map((question) => ask(dns, question, options.interest)));
    step = steps.next(answers);
  }
  return step.value;
}

/** A resolution completed from the cache: the lookups it read, their answers, and what it gave. */
interface Remembered {
  readonly allowPrivateAddresses: boolean;
  readonly questions: readonly Question[];
  readonly answers: readonly Answer[];
  readonly mailDomain: MailDomain;
}

/** Most domains remembered per DnsLookup; past it the memory starts over (it only saves work). */
const REMEMBERED_DOMAINS = 10_000;
const rememberedBy = new WeakMap<DnsLookup, Map<string, Remembered>>();

/**
 * The same resolution when every answer it needs is in the cache (then counted as cache hits), without a query,
 * a promise or a turn of the event loop; undefined when one is missing (nothing is counted then). While the cache
 * holds the very answers a domain was last resolved from, the result is the same object as then.
 */
export function cachedMailDomain(dns: DnsLookup, domain: string, options: MailDomainOptions): MailDomain | undefined {
  let remembered = rememberedBy.get(dns);
  if (remembered === undefined) rememberedBy.set(dns, (remembered = new Map()));
  const known = remembered.get(domain);
  if (known !== undefined && known.allowPrivateAddresses === options.allowPrivateAddresses && stillCached(dns, known)) {
    dns.stats.hits += known.answers.length;
    return known.mailDomain;
  }
  // An exchanger left out is told to the observer on every resolution: such a result is not remembered.
  let skipped = false;
  const steps = resolution(domain, {
    ...options,
    onSkipped: (event) => {
      skipped = true;
      options.onSkipped?.(event);
    },
  });
  const questions: Question[] = [];
  const answers: Answer[] = [];
  let step = steps.next([]);
  while (step.done !== true) {
    const stepAnswers: Answer[] = [];
    for (const question of step.value) {
      const answer = dns.cached(question.type, question.name);
      if (answer === undefined) return undefined;
      stepAnswers.push(answer);
    }
    questions.push(...step.value);
    answers.push(...stepAnswers);
    step = steps.next(stepAnswers);
  }
  dns.stats.hits += answers.length;
  if (!skipped) {
    if (remembered.size >= REMEMBERED_DOMAINS) remembered.clear();
    remembered.set(domain, { allowPrivateAddresses: options.allowPrivateAddresses, questions, answers, mailDomain: step.value });
  }
  return step.value;
}

/** Whether the cache still holds, for each lookup, the answer the remembered resolution read. */
function stillCached(dns: DnsLookup, known: Remembered): boolean {
  for (let i = 0; i < known.questions.length; i++) {
    const question = known.questions[i]!;
    if (dns.cached(question.type, question.name) !== known.answers[i]) return false;
  }
  return true;
}

function isNullExchange(exchange: string): boolean {
  return exchange === '' || exchange === '.';
}
