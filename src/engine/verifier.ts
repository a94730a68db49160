/**
 * createVerifier: the pipeline of decisions.md §4 over one address.
 *
 * 1. syntax and provider rules; 2. domain-literal policy; 3. public top-level label; 5. disposable domain and
 * relay-service lists; 6. DNS; 7. mail-exchanger host lists; 8. SMTP. (4, deduplication and override rules, belongs
 * to batches.) The first stage that yields a status decides it; the flags and suggestions are filled for every
 * address that parses. `checks: 'syntax'` stops after step 5, `'dns'` after step 7. Transient results are tried
 * again in later passes, as many as the quality level gives (decisions.md §10).
 */
import { hostname } from 'node:os';
import { classificationOf, type StatusCode } from '../status/catalogue.js';
import { DnsLookup, type DnsCacheOptions, type DnsStats } from '../dns/lookup.js';
import { createNodeResolver, type Resolver } from '../dns/resolver.js';
import { resolveMailDomain, type MailExchanger } from '../domain/mail-domain.js';
import { hasPublicTopLevel } from '../domain/top-level.js';
import { createLists, type Lists, type ListsOptions } from '../lists/lists.js';
import { classifyAddress } from '../net/ip-ranges.js';
import { createNodemailerTransport } from '../smtp/nodemailer-transport.js';
import { SmtpProber } from '../smtp/prober.js';
import { hasLineBreakOrNul, type SmtpTransport } from '../smtp/transport.js';
import { createSuggester, type Suggester } from '../suggest/suggest.js';
import { parseWithPositions } from '../syntax/parse.js';
import type { ParsedAddress } from '../syntax/types.js';
import { DEDUPLICATION_MODES, deduplicationKey, type Deduplication } from './dedupe.js';
import { entryFromParse, orderedEntry, type Entry } from './entry.js';

export type Checks = 'syntax' | 'dns' | 'smtp';
export type Quality = 'Standard' | 'High' | 'Extreme';

export interface VerifierOptions {
  /** EHLO name of SMTP probes; default `os.hostname()`. */
  heloName?: string;
  /** Envelope sender of SMTP probes; default `verify@<heloName>`. */
  mailFrom?: string;
  dns?: {
    /** DNS servers (`ip` or `ip:port`) for the default resolver; default: the system's. */
    servers?: string[];
    /** A hard cap on each DNS query (default 5000 ms). */
    timeoutMs?: number;
    /** A resolver of the host application's, used instead of Node's (see `Resolver`). */
    resolver?: Resolver;
    /** Bounds and lifetimes of the DNS cache. */
    cache?: DnsCacheOptions;
  };
  smtp?: SmtpOptions;
  /** Default false: never use, or connect to, a non-global address (loopback, private, link-local, reserved...). */
  allowPrivateAddresses?: boolean;
  /** Passes over transient results and default timeouts (decisions.md §10); default 'Standard'. */
  quality?: Quality;
  /** Passes over transient results, instead of the quality level's (Standard 1, High 3, Extreme 9). */
  passes?: number;
  /** The wait between two passes (default 5 minutes). */
  passDelayMs?: number;
  /** How far to go (default `'smtp'`); `'syntax'` uses no network at all. */
  checks?: Checks;
  /** Extend or replace the built-in lists (disposable, free, role, relay and mail-exchanger lists). */
  lists?: ListsOptions;
  /** Typo suggestions (default true). */
  suggestions?: boolean;
  /** Classification names per status, overriding decisions.md §8 (custom names are allowed, as in the service). */
  classifications?: Partial<Record<StatusCode, string>>;
}

export interface SmtpOptions {
  /** Default 25. */
  port?: number;
  /** TCP connect, greeting, EHLO and STARTTLS (default by quality: 5 s, 50 s, 120 s). */
  connectTimeoutMs?: number;
  /** Each later command, and the reply to a real recipient's RCPT (default as connectTimeoutMs). */
  commandTimeoutMs?: number;
  /** The reply to the catch-all probe (default: commandTimeoutMs). */
  catchAllTimeoutMs?: number;
  /** A transport of the host application's, used instead of the nodemailer one (see `SmtpTransport`). */
  transport?: SmtpTransport;
  /** Open connections in all (default 50). */
  maxConnections?: number;
  /** Open connections to one exchanger address (default 3). */
  maxConnectionsPerExchanger?: number;
  /** Real recipients of one domain per transaction (default 10). */
  maxRecipientsPerTransaction?: number;
  /** Exchanger addresses tried for one domain before giving up (default 3). */
  maxAttemptsPerDomain?: number;
  /** STARTTLS when offered (default true); certificate validation (default false, as between mail servers, RFC 7435). */
  tls?: { starttls?: boolean; rejectUnauthorized?: boolean };
  /** How long a catch-all verdict is kept per exchanger and domain (default 30 minutes). */
  catchAllCacheTtlMs?: number;
}

/** A batch input: an address, or an address with the submitter's custom data (service-api.md, job entries). */
export type BatchInput = string | { inputData: string; custom?: string };

export interface VerifyManyOptions {
  /** Addresses verified at the same time (default 10). */
  concurrency?: number;
  /** Duplicate marking (decisions.md §9); default 'Off'. */
  deduplication?: Deduplication;
}

export interface Verifier {
  /** Verifies one address; resolves with its entry (index 0). Never rejects for a string input. */
  verify(input: string): Promise<Entry>;
  /**
   * Verifies a batch, read lazily from any (async) iterable: one entry per input, in input order, each with its
   * `index`. At most `concurrency` addresses are under way, so memory stays bounded however long the input.
   */
  verifyMany(inputs: Iterable<BatchInput> | AsyncIterable<BatchInput>, options?: VerifyManyOptions): AsyncIterable<Entry>;
  /** DNS cache counters (hits, misses, queries sent) and the SMTP connections open now. */
  stats(): { dns: DnsStats; smtp: { openConnections: number } };
  /**
   * Resolves once every address under way has its result and every SMTP connection is closed (sessions end with
   * QUIT just after their last address is answered). Waits between passes are cut short: those addresses keep the
   * result of the pass they had. Call it before exiting, after abandoning a batch, or in a test's teardown; the
   * verifier stays usable.
   */
  close(): Promise<void>;
}

const CHECKS: readonly Checks[] = ['syntax', 'dns', 'smtp'];
const QUALITIES: readonly Quality[] = ['Standard', 'High', 'Extreme'];

function optionError(name: string, expected: string, value: unknown): TypeError {
  return new TypeError(`createVerifier: option ${name} must be ${expected}, got ${JSON.stringify(value) ?? String(value)}`);
}

function checkOptions(options: VerifierOptions): void {
  if (typeof options !== 'object' || options === null) throw optionError('(options)', 'an object', options);
  if (options.checks !== undefined && !CHECKS.includes(options.checks)) throw optionError('checks', `one of ${CHECKS.join(', ')}`, options.checks);
  if (options.quality !== undefined && !QUALITIES.includes(options.quality)) throw optionError('quality', `one of ${QUALITIES.join(', ')}`, options.quality);
  const timeout = options.dns?.timeoutMs;
  if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) throw optionError('dns.timeoutMs', 'a positive number', timeout);
  for (const name of ['passes', 'passDelayMs'] as const) {
    const value = options[name];
    if (value !== undefined && !(Number.isInteger(value) && value >= (name === 'passes' ? 1 : 0))) {
      throw optionError(name, name === 'passes' ? 'a positive integer' : 'a whole number of milliseconds', value);
    }
  }
  checkSmtpOptions(options);
  const servers = options.dns?.servers;
  if (servers !== undefined && !(Array.isArray(servers) && servers.every((s) => typeof s === 'string'))) {
    throw optionError('dns.servers', 'an array of strings', servers);
  }
}

const POSITIVE_SMTP_OPTIONS = [
  'connectTimeoutMs',
  'commandTimeoutMs',
  'catchAllTimeoutMs',
  'maxConnections',
  'maxConnectionsPerExchanger',
  'maxRecipientsPerTransaction',
  'maxAttemptsPerDomain',
  'catchAllCacheTtlMs',
] as const;

function checkSmtpOptions(options: VerifierOptions): void {
  const smtp = options.smtp;
  if (smtp === undefined) return;
  if (typeof smtp !== 'object' || smtp === null) throw optionError('smtp', 'an object', smtp);
  if (smtp.port !== undefined && !(Number.isInteger(smtp.port) && smtp.port > 0 && smtp.port < 65536)) {
    throw optionError('smtp.port', 'a TCP port number', smtp.port);
  }
  for (const name of POSITIVE_SMTP_OPTIONS) {
    const value = smtp[name];
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) throw optionError(`smtp.${name}`, 'a positive number', value);
  }
  if (smtp.transport !== undefined && typeof smtp.transport?.open !== 'function') {
    throw optionError('smtp.transport', 'an object with an open(options) method', smtp.transport);
  }
}

/** A name for EHLO (RFC 5321 §4.1.1.1): one word of printable ASCII. */
function checkHeloName(name: string): string {
  if (typeof name !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(name)) throw optionError('heloName', 'a host name', name);
  return name;
}

/** The envelope sender: printable, no spaces or angle brackets, so MAIL FROM:<...> stays one well-formed line. */
function checkMailFrom(address: string): string {
  if (typeof address !== 'string' || hasLineBreakOrNul(address) || /[\s<>]/.test(address) || !address.includes('@')) {
    throw optionError('mailFrom', 'an address (local@domain)', address);
  }
  return address;
}

/** The quality levels of decisions.md §10: passes over transient results and the anti-tarpit timeout. */
const QUALITY_LEVELS: Record<Quality, { passes: number; timeoutMs: number }> = {
  Standard: { passes: 1, timeoutMs: 5_000 },
  High: { passes: 3, timeoutMs: 50_000 },
  Extreme: { passes: 9, timeoutMs: 120_000 },
};

/**
 * The Unknown statuses that another pass may change (decisions.md §10: timeouts, temporary failures, greylisting).
 * Rejections of our own host or sender, and missing server features, do not change by waiting.
 */
const TRANSIENT_STATUSES: ReadonlySet<StatusCode> = new Set<StatusCode>([
  'DnsQueryTimeout',
  'DnsConnectionFailure',
  'MailboxTemporarilyUnavailable',
  'MailboxValidationTimeout',
  'CatchAllValidationTimeout',
  'ServerTemporaryUnavailable',
  'SmtpConnectionFailure',
  'SmtpConnectionTimeout',
  'SmtpDialogError',
]);

function createProber(options: VerifierOptions, quality: { timeoutMs: number }): SmtpProber {
  const smtp = options.smtp ?? {};
  const heloName = checkHeloName(options.heloName ?? hostname());
  const connectTimeoutMs = smtp.connectTimeoutMs ?? quality.timeoutMs;
  const commandTimeoutMs = smtp.commandTimeoutMs ?? connectTimeoutMs;
  return new SmtpProber({
    transport: smtp.transport ?? createNodemailerTransport(),
    port: smtp.port ?? 25,
    heloName,
    mailFrom: checkMailFrom(options.mailFrom ?? `verify@${heloName}`),
    connectTimeoutMs,
    commandTimeoutMs,
    catchAllTimeoutMs: smtp.catchAllTimeoutMs ?? commandTimeoutMs,
    maxConnections: smtp.maxConnections ?? 50,
    maxConnectionsPerExchanger: smtp.maxConnectionsPerExchanger ?? 3,
    maxRecipientsPerTransaction: smtp.maxRecipientsPerTransaction ?? 10,
    maxAttemptsPerDomain: smtp.maxAttemptsPerDomain ?? 3,
    tls: { starttls: smtp.tls?.starttls ?? true, rejectUnauthorized: smtp.tls?.rejectUnauthorized ?? false },
    catchAllCacheTtlMs: smtp.catchAllCacheTtlMs ?? 30 * 60_000,
  });
}

type ParseWithPositions = ReturnType<typeof parseWithPositions>;

/** The waits between passes, which `close()` cuts short. */
class PassDelays {
  private readonly waiting = new Map<NodeJS.Timeout, () => void>();
  cancelled = false;

  wait(ms: number): Promise<void> {
    if (this.cancelled) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(timer);
        resolve();
      }, ms);
      this.waiting.set(timer, resolve);
    });
  }

  cancelAll(): void {
    for (const [timer, resolve] of this.waiting) {
      clearTimeout(timer);
      resolve();
    }
    this.waiting.clear();
  }
}

export function createVerifier(options: VerifierOptions = {}): Verifier {
  checkOptions(options);
  const checks = options.checks ?? 'smtp';
  const quality = QUALITY_LEVELS[options.quality ?? 'Standard'];
  const passes = options.passes ?? quality.passes;
  const passDelayMs = options.passDelayMs ?? 5 * 60_000;
  const prober = checks === 'smtp' ? createProber(options, quality) : null;
  const allowPrivateAddresses = options.allowPrivateAddresses === true;
  const resolver = options.dns?.resolver ?? createNodeResolver({ servers: options.dns?.servers, timeoutMs: options.dns?.timeoutMs });
  const dns = new DnsLookup(resolver, options.dns?.cache);
  const lists = createLists(options.lists);
  const suggester: Suggester | null = options.suggestions === false ? null : createSuggester();
  const classify = (status: StatusCode): string => options.classifications?.[status] ?? classificationOf(status);

  /** `parse`: the input's parse when the caller has it already (deduplication parses first). */
  async function run(input: string, index: number, parse?: ParseWithPositions): Promise<Entry> {
    const { result: parsed, domainStart } = parse ?? parseWithPositions(input);
    const entry = entryFromParse(index, input, parsed);
    if (!parsed.ok) return { ...entry, classification: classify(parsed.status) };

    let stage = new Stages(parsed, entry, lists);
    let status = await stage.run(checks, { dns, allowPrivateAddresses, domainStart, prober });
    for (let pass = 2; pass <= passes && TRANSIENT_STATUSES.has(status.status) && !passDelays.cancelled; pass++) {
      await passDelays.wait(passDelayMs);
      if (passDelays.cancelled) break;
      stage = new Stages(parsed, entry, lists);
      status = await stage.run(checks, { dns, allowPrivateAddresses, domainStart, prober });
    }
    if (suggester !== null && !stage.isLiteral && !stage.hasMx) {
      const suggestions = suggester.suggest(parsed.localPart, parsed.asciiDomainPart);
      if (suggestions.length > 0) entry.suggestions = suggestions;
    }
    return orderedEntry({
      ...entry,
      ...status.extra,
      status: status.status,
      classification: classify(status.status),
      completedOn: new Date().toISOString(),
    });
  }

  const passDelays = new PassDelays();
  const inFlight = new Set<Promise<Entry>>();

  /** Never rejects: a bug of ours still gives the address its one result (decisions.md §6). */
  function safeRun(input: string, index: number, parse?: ParseWithPositions): Promise<Entry> {
    const running = run(input, index, parse).catch((): Entry => {
      const status = 'UnhandledException';
      return { index, inputData: input, classification: classify(status), status, completedOn: new Date().toISOString() };
    });
    inFlight.add(running);
    void running.then(() => inFlight.delete(running));
    return running;
  }

  async function* verifyMany(
    inputs: Iterable<BatchInput> | AsyncIterable<BatchInput>,
    batchOptions: VerifyManyOptions = {},
  ): AsyncGenerator<Entry> {
    const concurrency = batchOptions.concurrency ?? 10;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw optionError('concurrency', 'a positive integer', concurrency);
    const mode = batchOptions.deduplication ?? 'Off';
    if (!DEDUPLICATION_MODES.includes(mode)) throw optionError('deduplication', DEDUPLICATION_MODES.join(', '), mode);
    const firstByKey = new Map<string, { index: number; entry: Promise<Entry> }>();
    const window: Promise<Entry>[] = [];
    let index = 0;
    for await (const item of inputs) {
      const { inputData, custom } = batchItem(item, index);
      window.push(withCustom(start(inputData, index++, mode, firstByKey), custom));
      if (window.length >= concurrency) yield await window.shift()!;
    }
    while (window.length > 0) yield await window.shift()!;
  }

  function start(
    input: string,
    index: number,
    mode: Deduplication,
    firstByKey: Map<string, { index: number; entry: Promise<Entry> }>,
  ): Promise<Entry> {
    if (mode === 'Off') return safeRun(input, index);
    const parse = parseWithPositions(input);
    const parsed = parse.result;
    const key = deduplicationKey(input, parsed, mode);
    const first = firstByKey.get(key);
    if (first === undefined) {
      const entry = safeRun(input, index, parse);
      firstByKey.set(key, { index, entry });
      return entry;
    }
    // The first occurrence keeps its result; this one takes its classification (decisions.md §8, §9).
    return first.entry.then((firstEntry) =>
      orderedEntry({
        ...entryFromParse(index, input, parsed),
        status: 'Duplicate',
        classification: firstEntry.classification,
        duplicateOf: first.index,
        syntaxFailureIndex: undefined,
        completedOn: new Date().toISOString(),
      }),
    );
  }

  return {
    async verify(input: string): Promise<Entry> {
      if (typeof input !== 'string') {
        throw new TypeError(`verify expects a string, got ${input === null ? 'null' : typeof input}`);
      }
      return safeRun(input, 0);
    },
    verifyMany,
    stats: () => ({ dns: { ...dns.stats }, smtp: { openConnections: prober?.openConnections ?? 0 } }),
    close: async () => {
      // Later passes still waiting end now with the result they have; then every address under way finishes and
      // every connection closes.
      passDelays.cancelled = true;
      passDelays.cancelAll();
      try {
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        await prober?.idle();
      } finally {
        passDelays.cancelled = false;
      }
    },
  };
}

function batchItem(item: BatchInput, index: number): { inputData: string; custom?: string } {
  if (typeof item === 'string') return { inputData: item };
  if (typeof item === 'object' && item !== null && typeof item.inputData === 'string') {
    if (item.custom !== undefined && typeof item.custom !== 'string') {
      throw new TypeError(`verifyMany: input ${index} has a custom value that is not a string`);
    }
    return item;
  }
  throw new TypeError(`verifyMany: input ${index} must be a string or { inputData: string, custom?: string }`);
}

async function withCustom(entry: Promise<Entry>, custom: string | undefined): Promise<Entry> {
  if (custom === undefined) return entry;
  return orderedEntry({ ...(await entry), custom });
}

interface StageContext {
  dns: DnsLookup;
  prober: SmtpProber | null;
  allowPrivateAddresses: boolean;
  domainStart: number;
}

/** The stages after syntax for one parsed address; they fill the flags of `entry` as they learn them. */
class Stages {
  readonly isLiteral: boolean;
  hasMx = false;
  /** Step 5's answers, known from the start (they set the flags too). */
  private readonly disposable: boolean;
  private readonly relay: boolean;

  constructor(
    private readonly parsed: ParsedAddress,
    private readonly entry: Entry,
    private readonly lists: Lists,
  ) {
    this.isLiteral = parsed.domainPart.startsWith('[');
    const domain = parsed.asciiDomainPart;
    this.disposable = !this.isLiteral && lists.isDisposableDomain(domain);
    this.relay = !this.isLiteral && lists.isRelayDomain(domain);
    entry.isRoleAccount = lists.isRoleAccount(parsed.localPart);
    entry.isFreeEmailAddress = !this.isLiteral && lists.isFreeProvider(domain);
    entry.isDisposableEmailAddress = this.disposable || this.relay;
  }

  async run(checks: Checks, context: StageContext): Promise<{ status: StatusCode; extra?: Partial<Entry> }> {
    const domain = this.parsed.asciiDomainPart;
    if (this.isLiteral) {
      // Step 2: a literal must be a global address unless the caller allows others; it skips steps 3 and 5-7.
      const address = literalAddress(domain);
      if (classifyAddress(address) !== 'global' && !context.allowPrivateAddresses) {
        return { status: 'UnacceptableDomainLiteral', extra: { syntaxFailureIndex: context.domainStart } };
      }
      // Step 8: probed at that address (decisions.md §4).
      if (checks !== 'smtp' || context.prober === null) return { status: 'Success' };
      return { status: await this.probe(context.prober, [{ host: '', priority: 0, addresses: [address] }]) };
    }
    // Step 3: no DNS query for a name that cannot exist.
    if (!hasPublicTopLevel(domain)) return { status: 'DomainDoesNotExist' };
    // Step 5: disposable domains, then relay services.
    if (this.disposable) return { status: 'DomainIsWellKnownDea' };
    if (this.relay) return { status: 'MailboxIsDea' };
    if (checks === 'syntax') return { status: 'Success' };

    // Step 6: DNS.
    const mailDomain = await resolveMailDomain(context.dns, domain, { allowPrivateAddresses: context.allowPrivateAddresses });
    this.hasMx = mailDomain.hasMx;
    if (mailDomain.status !== null) return { status: mailDomain.status };

    // Step 7: what the mail exchangers' host names tell.
    for (const exchanger of mailDomain.exchangers) {
      const category = this.lists.mailExchangerCategory(exchanger.host);
      if (category === 'disposable') {
        this.entry.isDisposableEmailAddress = true;
        return { status: 'MailExchangerIsWellKnownDea' };
      }
      if (category === 'parked') return { status: 'MailExchangerIsParked' };
      if (category === 'honeypot') return { status: 'MailExchangerIsHoneypot' };
    }
    // Step 8: SMTP.
    if (checks !== 'smtp' || context.prober === null) return { status: 'Success' };
    return { status: await this.probe(context.prober, mailDomain.exchangers) };
  }

  /** RCPT TO takes the local part as written, without CFWS, and the ASCII domain (RFC 5321 §4.1.2). */
  private probe(prober: SmtpProber, exchangers: readonly MailExchanger[]): Promise<StatusCode> {
    const { parsed } = this;
    return prober.probe(parsed.asciiDomainPart, exchangers, {
      address: `${parsed.localPart}@${parsed.asciiDomainPart}`,
      international: parsed.hasInternationalMailboxName,
    });
  }
}

/** The IP address inside an address literal (`[192.0.2.1]`, `[IPv6:2001:db8::1]`), in the form node:net reads. */
function literalAddress(literal: string): string {
  const inner = literal.slice(1, -1);
  if (/^ipv6:/i.test(inner)) return inner.slice(5);
  // IPv4 parts may have leading zeros in a literal (decisions.md §3); node:net does not read them.
  return inner
    .split('.')
    .map((part) => String(Number(part)))
    .join('.');
}
