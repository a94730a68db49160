/**
 * createVerifier: the pipeline (docs/verification.md#the-pipeline, `stages.ts`) behind a batch planner (`batch.ts`).
 *
 * A verifier holds what its batches share: the DNS cache, the SMTP connection caps, sessions and catch-all verdicts,
 * the lists and the suggester. `verify` is a batch of one. Transient results are tried again in later passes, as many
 * as the quality level gives (docs/verification.md#quality-levels-and-passes).
 */
import { hostname } from 'node:os';
import { isStatusCode, type StatusCode } from '../status/catalogue.js';
import { DnsLookup, type DnsQueryEvent, type DnsStats } from '../dns/lookup.js';
import { createDefaultResolver, type DefaultResolver, type Resolver } from '../dns/resolver.js';
import { createLists } from '../lists/lists.js';
import { createNodemailerTransport } from '../smtp/nodemailer-transport.js';
import { SmtpProber, type ProbeTimeouts } from '../smtp/prober.js';
import { isHeloName, isMailFrom } from '../smtp/identity.js';
import { readEgresses, type Egress } from '../smtp/egress/egresses.js';
import { checkProviderProfiles, Providers } from '../smtp/egress/providers.js';
import type { RecipientLedger } from '../smtp/egress/budget.js';
import type { Cooling } from '../smtp/egress/cooling.js';
import { createSuggester } from '../suggest/suggest.js';
import { syntaxPolicyOf } from '../syntax/policy.js';
import { BatchRun, batchOptions, type BatchContext, type BatchInput, type LevelSettings, type VerifyManyOptions } from './batch.js';
import type { Entry } from './entry.js';
import { classifierOf } from './offline.js';
import { checkOptionNames } from '../options/names.js';
import { VERIFIER_OPTION_NAMES, type VerifierOptions } from './options.js';
import type { Checks } from './stages.js';
import { checkQuality, QUALITY_LEVELS, type Quality, type QualityLevel } from './quality.js';
import { checkOverrideRules, compileOverrides } from './overrides.js';
import { checkObserver, guardObserver, type Observe } from './observer.js';
import { planningOf, type Planning } from './planning.js';

export type { BatchInput, BatchProgress, VerifyManyOptions } from './batch.js';
export type { Checks } from './stages.js';
export type { Quality, QualityLevel } from './quality.js';
export type { OverrideRule } from './overrides.js';
export type { VerifierObserver } from './observer.js';
export type { SmtpOptions, VerifierOptions } from './options.js';

export interface Verifier {
  /** Verifies one address; resolves with its entry (index 0). Never rejects for a string input. */
  verify(input: string): Promise<Entry>;
  /**
   * Verifies a batch, read lazily from any (async) iterable into a bounded window (`readAhead`): one entry per input,
   * each with its `index`, as it finishes (or in input order with `order: 'input'`). SMTP work is grouped by mail
   * exchanger across the window, and across the verifier's other batches. Unknown options are a TypeError.
   */
  verifyMany(inputs: Iterable<BatchInput> | AsyncIterable<BatchInput>, options?: VerifyManyOptions): AsyncIterable<Entry>;
  /** DNS cache counters (hits, misses, queries sent) and the SMTP connections open now. */
  stats(): { dns: DnsStats; smtp: { openConnections: number } };
  /**
   * Resolves once every address under way has its result and every SMTP connection is closed (sessions end with
   * QUIT just after their last address is answered). Waits between passes are cut short: those addresses keep the
   * result of the pass they had. The built-in resolver's UDP sockets close too. Call it before exiting, after
   * abandoning a batch, or in a test's teardown; the verifier stays usable.
   */
  close(): Promise<void>;
}

const CHECKS: readonly Checks[] = ['syntax', 'dns', 'smtp'];

function optionError(name: string, expected: string, value: unknown, caller = 'createVerifier'): TypeError {
  return new TypeError(`${caller}: option ${name} must be ${expected}, got ${JSON.stringify(value) ?? String(value)}`);
}

function checkOptions(options: VerifierOptions): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw optionError('(options)', 'an object', options);
  checkOptionNames(options, VERIFIER_OPTION_NAMES, 'createVerifier');
  for (const name of ['dns', 'smtp', 'smtp.tls', 'dns.cache', 'lists', 'classifications'] as const) {
    const value = name.split('.').reduce<unknown>((object, key) => (object as Record<string, unknown> | undefined)?.[key], options);
    if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) throw optionError(name, 'an object', value);
  }
  for (const name of ['allowPrivateAddresses', 'suggestions', 'evidence'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') throw optionError(name, 'true or false', options[name]);
  }
  for (const name of ['starttls', 'rejectUnauthorized'] as const) {
    const value = options.smtp?.tls?.[name];
    if (value !== undefined && typeof value !== 'boolean') throw optionError(`smtp.tls.${name}`, 'true or false', value);
  }
  for (const name of ['maxEntries', 'maxTtlMs', 'negativeTtlMs'] as const) {
    const value = options.dns?.cache?.[name];
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) throw optionError(`dns.cache.${name}`, 'a positive number', value);
  }
  const resolver = options.dns?.resolver as unknown as Record<string, unknown> | undefined;
  if (resolver !== undefined && !['resolveMx', 'resolve4', 'resolve6'].every((method) => typeof resolver?.[method] === 'function')) {
    throw optionError('dns.resolver', 'an object with resolveMx, resolve4 and resolve6 methods', resolver);
  }
  for (const [status, name] of Object.entries(options.classifications ?? {})) {
    if (!isStatusCode(status)) throw new TypeError(`createVerifier: option classifications has ${JSON.stringify(status)}, which is not a status code`);
    if (typeof name !== 'string' || name === '') throw optionError(`classifications.${status}`, 'a non-empty string', name);
  }
  checkObserver(options.observer);
  if (options.checks !== undefined && !CHECKS.includes(options.checks)) throw optionError('checks', `one of ${CHECKS.join(', ')}`, options.checks);
  if (options.quality !== undefined) checkQuality(options.quality, 'createVerifier: option quality');
  const inFlight = options.dns?.maxQueriesInFlight;
  if (inFlight !== undefined && !(Number.isInteger(inFlight) && inFlight > 0)) throw optionError('dns.maxQueriesInFlight', 'a positive integer', inFlight);
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
  // checkOptions has made sure it is an object.
  if (smtp === undefined) return;
  if (smtp.port !== undefined && !(Number.isInteger(smtp.port) && smtp.port > 0 && smtp.port < 65536)) {
    throw optionError('smtp.port', 'a TCP port number', smtp.port);
  }
  for (const name of POSITIVE_SMTP_OPTIONS) {
    const value = smtp[name];
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) throw optionError(`smtp.${name}`, 'a positive number', value);
  }
  const coolingWait = smtp.maxCoolingWaitMs;
  if (coolingWait !== undefined && !(Number.isInteger(coolingWait) && coolingWait >= 0)) {
    throw optionError('smtp.maxCoolingWaitMs', 'a whole number of milliseconds', coolingWait);
  }
  if (smtp.transport !== undefined && typeof smtp.transport?.open !== 'function') {
    throw optionError('smtp.transport', 'an object with an open(options) method', smtp.transport);
  }
}

function checkHeloName(name: string, caller: string): string {
  if (!isHeloName(name)) throw optionError('heloName', 'a host name', name, caller);
  return name;
}

function checkMailFrom(address: string, caller: string): string {
  if (!isMailFrom(address)) throw optionError('mailFrom', 'an address (local@domain)', address, caller);
  return address;
}


/**
 * The Unknown statuses that another pass may change: timeouts, temporary failures, greylisting, dropped connections.
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

const TRANSIENT_WITH_EGRESSES: ReadonlySet<StatusCode> = new Set<StatusCode>([
  ...TRANSIENT_STATUSES,
  'LocalEndPointRejected',
  'LocalSenderAddressRejected',
]);

const DEFAULT_PASS_DELAY_MS = 5 * 60_000;

/**
 * A quality level on a verifier. A standard level gives way to the verifier's explicit options (`passes`,
 * `passDelayMs`, `smtp.*TimeoutMs`); a custom level's own figures win over them, and those it leaves out are the
 * options', else the Standard level's.
 */
function levelSettings(options: VerifierOptions, quality: Quality | QualityLevel): LevelSettings {
  const smtp = options.smtp ?? {};
  const passDelayMs = options.passDelayMs ?? DEFAULT_PASS_DELAY_MS;
  if (typeof quality === 'string') {
    const connectMs = smtp.connectTimeoutMs ?? QUALITY_LEVELS[quality].timeoutMs;
    const commandMs = smtp.commandTimeoutMs ?? connectMs;
    const timeouts = { connectMs, commandMs, catchAllMs: smtp.catchAllTimeoutMs ?? commandMs };
    return { passes: options.passes ?? QUALITY_LEVELS[quality].passes, passDelayMs, timeouts };
  }
  const connectMs = quality.connectTimeout ?? smtp.connectTimeoutMs ?? QUALITY_LEVELS.Standard.timeoutMs;
  const ownTimeouts = quality.connectTimeout !== undefined || quality.commandTimeout !== undefined;
  const commandMs = quality.commandTimeout ?? (quality.connectTimeout === undefined ? smtp.commandTimeoutMs : undefined) ?? connectMs;
  return {
    passes: quality.passes ?? options.passes ?? QUALITY_LEVELS.Standard.passes,
    passDelayMs: quality.passDelay ?? passDelayMs,
    timeouts: { connectMs, commandMs, catchAllMs: (ownTimeouts ? undefined : smtp.catchAllTimeoutMs) ?? commandMs },
  };
}

/**
 * The egresses with their defaults (the verifier's EHLO name, sender and total cap), checked even without SMTP;
 * `caller` starts the errors (the doctor's `diagnoseEgress` reads them too).
 */
export function egressesOf(options: Pick<VerifierOptions, 'heloName' | 'mailFrom' | 'smtp'>, caller = 'createVerifier'): Egress[] {
  const heloName = checkHeloName(options.heloName ?? hostname(), caller);
  const mailFrom = checkMailFrom(options.mailFrom ?? `verify@${heloName}`, caller);
  const defaults = { heloName, mailFrom, maxConnections: options.smtp?.maxConnections ?? 50 };
  return readEgresses(options.smtp?.egress, defaults, `${caller}: option smtp.egress`);
}

/**
 * What the verifiers of a cluster's processes share (packages/server/src/cluster/runtime.ts): the recipient budgets and
 * the cooling of each egress × provider. Without it, a verifier keeps its own.
 */
export interface SharedEgressState {
  readonly ledger: RecipientLedger;
  readonly cooling: Cooling;
}

function createProber(
  options: VerifierOptions,
  egresses: readonly Egress[],
  providers: Providers,
  timeouts: ProbeTimeouts,
  observe: Observe,
  shared: SharedEgressState | undefined,
): SmtpProber {
  const smtp = options.smtp ?? {};
  return new SmtpProber({
    providers,
    ...(shared !== undefined && { ledger: shared.ledger, cooling: shared.cooling }),
    ...(smtp.maxCoolingWaitMs !== undefined && { maxCoolingWaitMs: smtp.maxCoolingWaitMs }),
    ...(observe.egressCooling !== undefined && { onCooling: observe.egressCooling }),
    transport: smtp.transport ?? createNodemailerTransport(),
    port: smtp.port ?? 25,
    egresses,
    connectTimeoutMs: timeouts.connectMs,
    commandTimeoutMs: timeouts.commandMs,
    catchAllTimeoutMs: timeouts.catchAllMs,
    maxConnections: smtp.maxConnections ?? 50,
    maxConnectionsPerExchanger: smtp.maxConnectionsPerExchanger ?? 3,
    maxRecipientsPerTransaction: smtp.maxRecipientsPerTransaction ?? 10,
    maxAttemptsPerDomain: smtp.maxAttemptsPerDomain ?? 3,
    tls: { starttls: smtp.tls?.starttls ?? true, rejectUnauthorized: smtp.tls?.rejectUnauthorized ?? false },
    catchAllCacheTtlMs: smtp.catchAllCacheTtlMs ?? 30 * 60_000,
    onSession: observe.smtpSession,
    onReply: observe.smtpReply,
  });
}

export function createVerifier(options: VerifierOptions = {}): Verifier {
  return verifierWith(options, undefined);
}

/** A verifier whose budgets and cooling are shared with other processes (a cluster's workers). */
export function createSharedVerifier(options: VerifierOptions, shared: SharedEgressState): Verifier {
  return verifierWith(options, shared);
}

function verifierWith(options: VerifierOptions, shared: SharedEgressState | undefined): Verifier {
  checkOptions(options);
  const syntax = syntaxPolicyOf(options.syntax, 'createVerifier', 'syntax.');
  const checks = options.checks ?? 'smtp';
  const level = levelSettings(options, options.quality ?? 'Standard');
  const overrides = options.overrides === undefined ? [] : checkOverrideRules(options.overrides, 'createVerifier: option overrides');
  const observe = guardObserver(options.observer);
  const egresses = egressesOf(options);
  const egressIds = egresses.map((egress) => egress.id);
  const providers = new Providers(checkProviderProfiles(options.smtp?.providers, 'createVerifier: option smtp.providers', egressIds), egressIds);
  const prober = checks === 'smtp' ? createProber(options, egresses, providers, level.timeouts, observe, shared) : null;
  // The built-in resolver's sockets are the verifier's to close; a resolver of the host application's is its own.
  const ownResolver = options.dns?.resolver === undefined ? defaultResolver(options.dns) : undefined;
  const resolver = options.dns?.resolver ?? ownResolver!;
  const dns = new DnsLookup(resolver, options.dns?.cache, dnsQueryHook(observe, resolver), options.dns?.maxQueriesInFlight ?? 100);
  const suggester = options.suggestions === false ? null : createSuggester();
  let closing = false;
  const context: BatchContext = {
    syntax,
    checks,
    lists: createLists(options.lists),
    dns,
    resolving: new Map(),
    prober,
    allowPrivateAddresses: options.allowPrivateAddresses === true,
    observe,
    evidence: options.evidence === true,
    level,
    qualityLevel: (quality) => levelSettings(options, quality),
    overrides,
    overrideMatcher: compileOverrides(overrides),
    suggester,
    classify: classifierOf(options.classifications),
    // With several egresses, a refusal of our address or sender through one may not hold through another: later
    // passes ask again.
    transient: egresses.length > 1 ? TRANSIENT_WITH_EGRESSES : TRANSIENT_STATUSES,
    closing: () => closing,
  };
  const runs = new Set<BatchRun>();

  function verifyMany(inputs: Iterable<BatchInput> | AsyncIterable<BatchInput>, batch?: VerifyManyOptions): AsyncIterable<Entry> {
    return {
      [Symbol.asyncIterator]: () => {
        // Checked when iteration starts, as an async generator would: the error reaches the for-await loop.
        try {
          return new BatchRun(context, inputs, batchOptions(batch), runs).entries();
        } catch (error) {
          return failing(error);
        }
      },
    };
  }

  const verifier: Verifier = {
    async verify(input: string): Promise<Entry> {
      if (typeof input !== 'string') {
        throw new TypeError(`verify expects a string, got ${input === null ? 'null' : typeof input}`);
      }
      for await (const entry of verifyMany([input])) return entry;
      throw new Error('verify: the batch of one ended without its entry');
    },
    verifyMany,
    stats: () => ({ dns: { ...dns.stats }, smtp: { openConnections: prober?.openConnections ?? 0 } }),
    close: async () => {
      // Later passes still waiting end now with the result they have; then every address under way finishes and
      // every connection closes.
      closing = true;
      try {
        for (;;) {
          for (const run of runs) run.cutPasses();
          prober?.cutCoolingWaits();
          await Promise.all([...runs].map((run) => run.idle()));
          await prober?.idle();
          if ([...runs].every((run) => run.isIdle)) break;
        }
        await ownResolver?.close();
      } finally {
        closing = false;
      }
    },
  };
  planners.set(verifier, planningOf(context));
  return verifier;
}

const planners = new WeakMap<Verifier, Planning>();

/** @internal What a cluster's planner needs of a verifier made by createVerifier. */
export function planningFor(verifier: Verifier): Planning {
  const planning = planners.get(verifier);
  if (planning === undefined) throw new TypeError('planningFor: not a verifier made by createVerifier');
  return planning;
}

/** The observer's DNS hook, told which servers the built-in resolver asks. */
function dnsQueryHook(observe: Observe, resolver: Resolver): ((event: DnsQueryEvent) => void) | undefined {
  const { dnsQuery } = observe;
  if (dnsQuery === undefined) return undefined;
  const servers = (resolver as Partial<DefaultResolver>).servers;
  return servers === undefined ? dnsQuery : (event) => dnsQuery({ ...event, servers });
}

/** The built-in resolver; a server it cannot read is the option's error. */
function defaultResolver(dns: VerifierOptions['dns']): DefaultResolver {
  try {
    return createDefaultResolver({ servers: dns?.servers, timeoutMs: dns?.timeoutMs });
  } catch (error) {
    throw new TypeError(`createVerifier: option dns.servers: ${(error as Error).message}`);
  }
}

/** An async iterator that throws `error` on its first step. */
function failing(error: unknown): AsyncIterator<Entry> {
  return {
    next: () => Promise.reject(error),
    return: () => Promise.resolve({ done: true, value: undefined }),
  };
}
