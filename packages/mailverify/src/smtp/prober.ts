/**
 * The SMTP stage (docs/verification.md#smtp-probing): mailbox and catch-all probing with RCPT TO, never DATA.
 *
 * Work is grouped by mail exchanger address. Every recipient waits in the queue of the address it is routed to, with
 * the recipients of every other domain and batch that use the same exchanger; a session opened for that address
 * drains the queue in rounds. A round is written at once (the transport pipelines it when the server offers
 * PIPELINING, RFC 2920): for each domain, transactions of up to `maxRecipientsPerTransaction` real recipients (MAIL
 * FROM, the RCPTs, RSET), and the catch-all probes that earlier rounds called for, one per exchanger and domain, each
 * in a transaction of its own. A session takes round after round while its queue has work, then ends with QUIT.
 * A round is sized to the exchanger's pace (the time between its RCPT replies): a slow one gets rounds of what it
 * answers in about a second, so that its waiting work spreads over the sessions its cap allows and work of a higher
 * priority gets the next round that starts (docs/verification.md#batches).
 *
 * A round's replies count only when they are in step: every command answered, each RSET with 2xx, and no reply
 * without a command waiting for it. Otherwise the round is void; no verdict comes from a dialog out of step. The
 * recipients of a void round, and those a dropped session left unanswered, are suspects: each is tried once more,
 * alone in a round of its own on a new connection, so that one recipient that upsets a server cannot take the others
 * down with it (a server may hold back the replies of a pipelined group and lose them all when it drops); a suspect
 * that fails again gets SmtpDialogError, and so do the rest once a few rounds in a row have failed on that exchanger. A
 * server that stops answering costs one timeout for everything it left unanswered. Exchanger addresses are tried in
 * preference order when a session cannot be opened (failover).
 */
import { randomBytes } from 'node:crypto';
import { BoundedCache } from '../cache/bounded-cache.js';
import type { MailExchanger } from '../domain/mail-domain.js';
import type { StatusCode } from '../status/catalogue.js';
import { classifySmtpReply, type SmtpReplyPhase } from './classify.js';
import { LocalRecipientLedger, type Grant, type RateLimits, type RecipientLedger } from './egress/budget.js';
import { Cooling, isAboutProber } from './egress/cooling.js';
import { routeOf, type Egress } from './egress/egresses.js';
import { addReply, MAX_EVIDENCE_TEXT, witness, witnessReply, type SmtpEvidence } from './evidence.js';
import { Providers, type Provider } from './egress/providers.js';
import { enhancedCodeOf } from './reply.js';
import type { SmtpReply } from './reply.js';
import { ConnectionSlots, type SlotLimits } from './slots.js';
import { SmtpTransportError, type SmtpSession, type SmtpTransport } from './transport.js';

export interface ProberOptions extends SlotLimits {
  transport: SmtpTransport;
  port: number;
  /**
   * The ways out, each with its identity (EHLO name, envelope sender) and cap: a connection leaves by the one with
   * the fewest open connections (ties: this order). The verifier always gives at least the implicit `default`.
   */
  egresses: readonly Egress[];
  /** TCP connect, greeting, EHLO and STARTTLS. */
  connectTimeoutMs: number;
  /** Each command, and the reply to a real recipient's RCPT. */
  commandTimeoutMs: number;
  /** The reply to the catch-all probe's RCPT. */
  catchAllTimeoutMs: number;
  maxRecipientsPerTransaction: number;
  /** Most exchanger addresses tried for one recipient (failover). */
  maxAttemptsPerDomain: number;
  tls: { starttls: boolean; rejectUnauthorized: boolean };
  /** How long a catch-all answer is kept per exchanger and domain. */
  catchAllCacheTtlMs: number;
  /** Told of every session opened, refused or closed (the verifier's observer). */
  onSession?: (event: SmtpSessionEvent) => void;
  /** Told of every reply to MAIL, RCPT and RSET (the verifier's observer). */
  onReply?: (event: SmtpReplyEvent) => void;
  /**
   * Told when a connection failed through the fault of its egress (the proxy refused or did not answer, the source
   * address could not be bound); the message names the egress and never a password. Default: a process warning,
   * once until a session through that egress opens again.
   */
  onEgressFailure?: (egress: string, message: string) => void;
  /** The provider behind each exchanger, with its limits per egress (default: every exchanger its own, no limits). */
  providers?: Providers;
  /** The recipient budgets per egress × provider (default: this process's own). */
  ledger?: RecipientLedger;
  /** The cooling state per egress × provider (default: this process's own). */
  cooling?: Cooling;
  /** How long work waits for a cooling egress before it is deferred to the next pass (default 5 minutes). */
  maxCoolingWaitMs?: number;
  /** Told of every cooling that starts (the verifier's observer). Default: a process warning. */
  onCooling?: (event: EgressCoolingEvent) => void;
}

/** A reply about the prober put an egress × provider into cooling: no new connection that way for `cooldownMs`. */
export interface EgressCoolingEvent {
  /** The egress's id. */
  readonly egress: string;
  /** The provider's id: a profile's, or the exchanger's host name. */
  readonly provider: string;
  readonly reply: { readonly code: number; readonly enhancedCode?: string; readonly text: string };
  readonly cooldownMs: number;
}

/**
 * A session with a mail exchanger: opened, not opened (`status` says why), or closed after it was open. Sessions
 * to one exchanger address are at most `maxConnectionsPerExchanger`; each holds one connection.
 */
export interface SmtpSessionEvent {
  readonly event: 'open' | 'failed' | 'close';
  /** The exchanger's host name ('' for an address literal)... */
  readonly exchanger: string;
  /** ...and the address connected to... */
  readonly address: string;
  /** ...through this egress (its id; `default` without `smtp.egress`). */
  readonly egress: string;
  /** For 'failed': `SmtpConnectionFailure`, `SmtpConnectionTimeout`, or the status of the refusal (a 554 greeting...). */
  readonly status?: StatusCode;
  /** 'open' and 'failed': the connection and the opening dialog (greeting, EHLO, STARTTLS); 'close': the session's life. */
  readonly durationMs: number;
}

/** A reply to a probe's command. */
export interface SmtpReplyEvent {
  readonly exchanger: string;
  readonly address: string;
  readonly egress: string;
  readonly phase: 'mail' | 'rcpt' | 'rset';
  readonly code: number;
  /** From the command's issue to its reply; a pipelined command's reply comes after those of the commands before it. */
  readonly latencyMs: number;
}

export interface ProbeRecipient {
  /** The address as sent in RCPT TO: the local part as written (without CFWS) and the ASCII domain. */
  readonly address: string;
  /** The local part has non-ASCII characters: the server must offer SMTPUTF8 (RFC 6531 §3.4). */
  readonly international: boolean;
}

/** Timeouts of one caller's work, when they differ from the prober's (a batch of another quality level). */
export interface ProbeTimeouts {
  readonly connectMs: number;
  readonly commandMs: number;
  readonly catchAllMs: number;
}

/** The work of one caller (a batch): its priority, whether it was withdrawn, and its own timeouts if any. */
export interface ProbeOwner {
  /** 0–255; higher-priority work gets free connections, and places in a round, first. */
  readonly priority: number;
  readonly withdrawn: boolean;
  readonly timeouts?: ProbeTimeouts;
}

export interface ProbeRequest {
  /** The recipient's ASCII domain. */
  readonly domain: string;
  /** Its usable exchangers, in preference order. */
  readonly exchangers: readonly MailExchanger[];
  readonly recipient: ProbeRecipient;
  readonly owner: ProbeOwner;
  /** Filled in with what the attempt that gave the result saw (opt-in evidence). */
  readonly evidence?: SmtpEvidence;
}

interface Route {
  readonly exchanger: MailExchanger;
  readonly address: string;
}

/** What ended an attempt to open a session; `egressFault`, the message when the egress itself failed. */
type OpenFailure = {
  readonly failed: StatusCode;
  readonly fromReply: boolean;
  readonly egressFault?: string;
  readonly reply?: SmtpReply;
  readonly phase?: 'greeting' | 'ehlo';
};

/** A recipient on its way through the queues. */
interface Pending {
  readonly request: ProbeRequest;
  readonly routes: readonly Route[];
  readonly resolve: (status: StatusCode | null) => void;
  routeIndex: number;
  /** The most telling failure to open a session so far (failover). */
  openFailure: OpenFailure | null;
  /** Rounds voided, or sessions dropped, before this recipient had its answer: one retry, then SmtpDialogError. */
  faults: number;
  /** A suspect: goes alone in a round of its own. */
  isolated: boolean;
  /** Refused as one recipient too many (452 4.5.3) behind others: goes alone in a transaction. */
  alone: boolean;
  settled: boolean;
  /** When it joined its queue: its priority rises as it waits (no starvation). */
  queuedAt: number;
  /** The egresses through which it got a reply about the prober (null: none): it is asked again through another. */
  asked: Set<string> | null;
  /** The status of the last such reply: its result once no other egress can ask. */
  proberStatus: StatusCode | null;
}

/** The catch-all question for one exchanger and domain, and the accepted recipients waiting for its answer. */
interface CatchAllCheck {
  readonly key: string;
  readonly route: Route;
  readonly probeAddress: string;
  readonly waiters: Pending[];
  /** Attempts that ended in a drop, a void round or a 4.5.3: one more, first thing on a new connection. */
  retries: number;
  /** Must be the first transaction of a new connection. */
  fresh: boolean;
  /** As a recipient's: the egresses whose probe got a reply about the prober, and its status. */
  asked: Set<string> | null;
  proberStatus: StatusCode | null;
  /** The reply that answered it (evidence for its waiters; read only when evidence is asked for). */
  reply: PhaseReply | null;
}

/** A reply and the phase it answered. */
interface PhaseReply {
  readonly phase: SmtpReplyPhase;
  readonly reply: SmtpReply;
}

/** A catch-all verdict kept per exchanger and domain, with the probe's reply behind it. */
interface CatchAllAnswer {
  readonly catchAll: boolean;
  readonly reply: PhaseReply | null;
}

/** The work waiting for one exchanger address. */
interface RouteQueue {
  readonly address: string;
  /** The provider of the exchanger (of the first route that made the queue). */
  readonly provider: Provider;
  /** While the work here waits for a cooling to end: the timer that looks again. */
  coolingWait: NodeJS.Timeout | null;
  recipients: Pending[];
  /** Recipients to be tried alone, one per round. */
  suspects: Pending[];
  checks: CatchAllCheck[];
  /** The highest priority of the waiting work (kept as work comes, worked out again as it leaves). */
  priority: number;
  /** While set, the exchanger refused a connection beyond this many open ones: no more are asked for. */
  accepted: number | null;
  /** Sessions asked for, opening or open. */
  sessions: number;
  /** Of those, the ones that have not taken their first round yet (a fresh check can still go there). */
  starting: number;
  /** Sessions open now. */
  live: number;
  /** Rounds in a row that were void or dropped. */
  failedRounds: number;
  /** Egresses that failed on their own (proxy, source address) to reach this address: the others are tried first. */
  readonly failedEgresses: Set<string>;
  /** Rounds under way, with their sessions (closed when all their work was withdrawn). */
  readonly rounds: Set<Round>;
  /** Sessions being opened: aborted when every piece of work waiting here was withdrawn. */
  readonly openings: Set<AbortController>;
}

type Transaction =
  | { readonly kind: 'real'; readonly recipients: Pending[]; readonly parameters: readonly string[] }
  | { readonly kind: 'probe'; readonly check: CatchAllCheck };

interface Round {
  /** When the last RCPT reply of the round came (0: none yet): the time between replies is the exchanger's pace. */
  lastReplyAt: number;
  readonly session: SmtpSession;
  /** The exchanger and address the session is open with... */
  readonly route: Route;
  /** ...and the egress it left by (its envelope sender is the round's). */
  readonly egress: Egress;
  readonly transactions: Transaction[];
}

/** The replies one transaction got, up to the first command that failed. */
interface Reading {
  mail: SmtpReply | null;
  rcpts: SmtpReply[];
  rset: SmtpReply | null;
  /** The failure that ended the reading: at MAIL, at the RCPT after the ones in `rcpts`, or at RSET. */
  error: Error | null;
}

/** Answers to the probe that leave the catch-all question open; they are not cached. */
const PROBE_INCONCLUSIVE: ReadonlySet<StatusCode> = new Set<StatusCode>([
  'SmtpDialogError',
  'LocalEndPointRejected',
  'LocalSenderAddressRejected',
]);

/** A suspect is tried once more before it gets SmtpDialogError. */
const FAULT_RETRIES = 1;
/** Rounds in a row that fail on one exchanger before its remaining suspects get SmtpDialogError without a retry. */
const FAILED_ROUNDS_LIMIT = 3;
/** Transactions of real recipients in one round: bounds what is written at once. */
const TRANSACTIONS_PER_ROUND = 10;
/**
 * On a slow exchanger a round carries the RCPTs it answers in about this long (one at least), so that its waiting
 * work spreads over the sessions its cap allows, and work of a higher priority waits about this long for a place.
 */
const ROUND_TARGET_MS = 1000;
/** A waiting recipient's priority rises by one for each this long it has waited: low priorities still progress. */
const AGING_MS = 1000;

export class SmtpProber {
  private readonly slots: ConnectionSlots;
  private readonly catchAll: BoundedCache<string, CatchAllAnswer>;
  /**
   * The probe's local part per exchanger and domain, kept across passes: a greylisting server (RFC 6647) refuses a
   * new sender/recipient pair once, so a fresh random local part on each pass would never get past it.
   */
  private readonly probeLocalParts: BoundedCache<string, string>;
  private readonly queues = new Map<string, RouteQueue>();
  /** Catch-all checks asked for and not answered yet, by exchanger and domain. */
  private readonly checks = new Map<string, CatchAllCheck>();
  /** The time an exchanger address takes per RCPT (a moving average of the time between its replies), by address. */
  private readonly rcptPace: BoundedCache<string, number>;
  /** Connections an exchanger address accepted before it refused one more (421 while others were open), for a while. */
  private readonly acceptedByAddress = new BoundedCache<string, number>({ max: 10_000, ttl: 30 * 60_000 });
  private readonly routesOf = new WeakMap<readonly MailExchanger[], readonly Route[]>();
  private readonly egresses: ReadonlyMap<string, Egress>;
  /** Egresses whose failure has been warned about, until a session through them opens. */
  private readonly failingEgresses = new Set<string>();
  private readonly providers: Providers;
  private readonly ledger: RecipientLedger;
  private readonly cooling: Cooling;
  private readonly maxCoolingWaitMs: number;
  /** Set while cutCoolingWaits runs: nothing waits for a cooling then. */
  private closing = false;

  constructor(private readonly options: ProberOptions) {
    if (options.egresses.length === 0) throw new TypeError('SmtpProber: egresses must hold at least one egress');
    this.egresses = new Map(options.egresses.map((egress) => [egress.id, egress]));
    this.slots = new ConnectionSlots(options, options.egresses);
    this.providers = options.providers ?? new Providers([], [...this.egresses.keys()], []);
    this.ledger = options.ledger ?? new LocalRecipientLedger();
    this.cooling = options.cooling ?? new Cooling();
    this.maxCoolingWaitMs = options.maxCoolingWaitMs ?? 5 * 60_000;
    this.catchAll = new BoundedCache({ max: 10_000, ttl: options.catchAllCacheTtlMs });
    // No TTL: the same probe must come back however far apart the passes are.
    this.probeLocalParts = new BoundedCache({ max: 10_000 });
    this.rcptPace = new BoundedCache({ max: 10_000 });
  }

  get openConnections(): number {
    return this.slots.openConnections;
  }

  /** Resolves when every connection is closed (QUIT included) and no work waits for one. */
  idle(): Promise<void> {
    return this.slots.idle();
  }

  /**
   * The SMTP status of one recipient, or null if its owner withdrew it first (see `withdraw`). Never rejects: a bug
   * of ours gives UnhandledException.
   */
  probe(request: ProbeRequest): Promise<StatusCode | null> {
    return new Promise((resolve) => {
      const routes = this.routes(request.exchangers);
      const pending: Pending = {
        request,
        routes,
        resolve,
        routeIndex: 0,
        openFailure: null,
        faults: 0,
        isolated: false,
        alone: false,
        settled: false,
        queuedAt: 0,
        asked: null,
        proberStatus: null,
      };
      if (routes.length === 0) return this.settle(pending, 'SmtpConnectionFailure');
      this.enqueue(pending);
    });
  }

  /**
   * Drops the waiting work of an owner that has been withdrawn (its `withdrawn` is now true): its recipients resolve
   * with null, and sessions whose round carries nothing else are closed at once.
   */
  withdraw(owner: ProbeOwner): void {
    const mine = (p: Pending) => p.request.owner === owner;
    for (const check of this.checks.values()) check.waiters.filter(mine).forEach((p) => this.settle(p, null));
    for (const queue of [...this.queues.values()]) {
      for (const list of ['recipients', 'suspects'] as const) {
        queue[list].filter(mine).forEach((p) => this.settle(p, null));
        queue[list] = queue[list].filter((p) => !p.settled);
      }
      queue.checks = queue.checks.filter((check) => check.waiters.some((p) => !p.settled));
      for (const round of queue.rounds) {
        for (const p of roundRecipients(round)) if (mine(p)) this.settle(p, null);
        if (!roundHasLiveWork(round)) round.session.close();
      }
      if (queue.recipients.length + queue.suspects.length + queue.checks.length === 0) {
        // Nothing waits here any more: sessions being opened stop where they are, with nothing more written.
        for (const opening of queue.openings) opening.abort();
        if (queue.sessions === 0) this.dropQueue(queue);
      }
    }
    for (const [key, check] of this.checks) if (!check.waiters.some((p) => !p.settled)) this.checks.delete(key);
  }

  /**
   * Routes in preference order: each exchanger's addresses, as many as the attempt budget allows. Made once per
   * exchanger list: the recipients of a domain share the one the DNS stage resolved (never changed once made).
   */
  private routes(exchangers: readonly MailExchanger[]): readonly Route[] {
    let routes = this.routesOf.get(exchangers);
    if (routes === undefined) {
      const all: Route[] = [];
      for (const exchanger of exchangers) {
        for (const address of exchanger.addresses) all.push({ exchanger, address });
      }
      routes = all.slice(0, this.options.maxAttemptsPerDomain);
      this.routesOf.set(exchangers, routes);
    }
    return routes;
  }

  private settle(pending: Pending, status: StatusCode | null): void {
    if (pending.settled) return;
    pending.settled = true;
    pending.resolve(status);
  }

  private queue(route: Route): RouteQueue {
    const { address } = route;
    let queue = this.queues.get(address);
    if (queue === undefined) {
      queue = {
        address,
        provider: this.providers.of(route.exchanger.host === '' ? address : route.exchanger.host),
        coolingWait: null,
        recipients: [],
        suspects: [],
        checks: [],
        priority: 0,
        accepted: this.acceptedByAddress.get(address) ?? null,
        sessions: 0,
        starting: 0,
        live: 0,
        failedRounds: 0,
        failedEgresses: new Set(),
        rounds: new Set(),
        openings: new Set(),
      };
      this.queues.set(address, queue);
    }
    return queue;
  }

  private enqueue(pending: Pending): void {
    if (pending.request.owner.withdrawn) return this.settle(pending, null);
    const queue = this.queue(pending.routes[pending.routeIndex]!);
    pending.queuedAt = performance.now();
    (pending.isolated ? queue.suspects : queue.recipients).push(pending);
    queue.priority = Math.max(queue.priority, pending.request.owner.priority);
    this.ensureSessions(queue);
  }

  private enqueueCheck(check: CatchAllCheck): void {
    const queue = this.queue(check.route);
    queue.checks.push(check);
    for (const p of check.waiters) queue.priority = Math.max(queue.priority, p.request.owner.priority);
    this.ensureSessions(queue);
  }

  private dropQueue(queue: RouteQueue): void {
    if (queue.coolingWait !== null) clearTimeout(queue.coolingWait);
    queue.coolingWait = null;
    if (this.queues.get(queue.address) === queue) this.queues.delete(queue.address);
  }

  /**
   * Asks for as many sessions as the queue's backlog calls for, within the per-exchanger cap and through the egresses
   * that may take its work now; with none, the work waits for a cooling to end, or is deferred.
   */
  private ensureSessions(queue: RouteQueue): void {
    const backlog = queue.recipients.length + queue.checks.length;
    if (backlog + queue.suspects.length === 0) {
      if (queue.sessions === 0) this.dropQueue(queue);
      return;
    }
    if (this.usableEgresses(queue).length === 0) {
      if (queue.sessions === 0) this.waitOrDefer(queue);
      return;
    }
    const perRound = this.roundSize(queue.address) ?? this.fullRound;
    // Suspects go one per round: each may use a session of its own, within the cap.
    const cap = Math.min(this.options.maxConnectionsPerExchanger, queue.accepted ?? Infinity);
    let wanted = Math.min(cap, Math.ceil(backlog / perRound) + queue.suspects.length);
    // A check that must come first on a new connection needs a session that has not started yet.
    if (queue.starting === 0 && queue.checks.some((c) => c.fresh)) wanted = Math.max(wanted, Math.min(cap, queue.sessions + 1));
    while (queue.sessions < wanted) {
      queue.sessions++;
      queue.starting++;
      void this.serve(queue);
    }
  }

  /**
   * The RCPTs (probes included) a round to this exchanger address carries: a full round for a quick one, what it
   * answers in about ROUND_TARGET_MS for a slow one; null while its pace is not known yet.
   */
  private roundSize(address: string): number | null {
    const pace = this.rcptPace.get(address);
    if (pace === undefined) return null;
    return Math.max(1, Math.min(this.fullRound, Math.floor(ROUND_TARGET_MS / Math.max(pace, 1))));
  }

  /** The real recipients of a full round. */
  private get fullRound(): number {
    return this.options.maxRecipientsPerTransaction * TRANSACTIONS_PER_ROUND;
  }

  /**
   * A RCPT reply came: the exchanger's pace is the time since the reply before it (or since the command was issued).
   * Once it shows the exchanger slower than before, its waiting work may call for more sessions.
   */
  private paceRcpt(round: Round, issuedAt: number): void {
    const now = performance.now();
    const took = now - Math.max(issuedAt, round.lastReplyAt);
    round.lastReplyAt = now;
    const { address } = round.route;
    const before = this.rcptPace.get(address);
    const sizeBefore = this.roundSize(address);
    this.rcptPace.set(address, before === undefined ? took : (before + took) / 2);
    const queue = this.queues.get(address);
    if (queue === undefined || queue.recipients.length + queue.checks.length === 0) return;
    const size = this.roundSize(address)!;
    if (sizeBefore === null || size < sizeBefore) this.ensureSessions(queue);
  }

  /** One session for a queue: a slot, the connection, rounds while there is work, QUIT. */
  private async serve(queue: RouteQueue): Promise<void> {
    const { provider } = queue;
    const group = provider.maxConnectionsPerEgress === undefined ? undefined : { id: provider.id, maxPerEgress: provider.maxConnectionsPerEgress };
    const slot = await this.slots.acquire(queue.address, () => queue.priority, { usable: () => this.usableEgresses(queue), ...(group !== undefined && { group }) });
    if (slot === null) {
      // No egress may take this work now (cooling, a spent budget): the queue waits, or is deferred, without a session.
      queue.starting--;
      queue.sessions--;
      this.ensureSessions(queue);
      return;
    }
    const { onSession } = this.options;
    const limits = rateLimitsOf(provider);
    /** Set when a reply about the prober came on this session: otherwise its end brings the next cooling back to a minute. */
    const proberReplied = { value: false };
    let route: Route | null = null;
    let session: SmtpSession | null = null;
    let openedAt = 0;
    let starting = true;
    const started = () => {
      if (starting) queue.starting--;
      starting = false;
    };
    const opening = new AbortController();
    const egress = this.egresses.get(slot.egress)!;
    try {
      route = firstRoute(queue);
      if (route === null) return;
      const openingAt = performance.now();
      queue.openings.add(opening);
      const opened = await this.open(route, egress, provider, this.timeoutsOf(ownersOf(queue)), opening.signal);
      queue.openings.delete(opening);
      openedAt = performance.now();
      if (opening.signal.aborted) {
        // Its work was withdrawn while it opened: closed unused, without a word more (a transport that ignored the
        // signal may have opened it).
        if (!('failed' in opened)) opened.close();
        started();
        return;
      }
      const { host: exchanger } = route.exchanger;
      if ('failed' in opened) {
        onSession?.({ event: 'failed', exchanger, address: route.address, egress: egress.id, status: opened.failed, durationMs: openedAt - openingAt });
        started();
        if (opened.egressFault !== undefined) this.egressFailed(egress, opened.egressFault);
        if (opened.reply !== undefined && isAboutProber(opened.reply)) this.startCooling(queue, egress, opened.reply);
        this.openFailed(queue, egress, opened);
        return;
      }
      this.failingEgresses.delete(egress.id);
      onSession?.({ event: 'open', exchanger, address: route.address, egress: egress.id, durationMs: openedAt - openingAt });
      session = opened;
      queue.live++;
      for (;;) {
        // A cooling pair takes no new transaction: the session ends after its current one.
        if (this.cooling.isCooling(egress.id, provider.id)) break;
        let allowance = Infinity;
        let grant: Grant | null = null;
        if (limits !== null) {
          const wanted = Math.min(queue.recipients.length + queue.suspects.length + queue.checks.length, this.fullRound + queue.checks.length);
          if (wanted === 0) break;
          const taken = await this.ledger.take(egress.id, provider.id, wanted, limits);
          // The day's budget is spent here: the work goes by another egress, or is deferred, once this session ends.
          if (taken.daySpent) break;
          if (taken.granted === 0) {
            // Over the minute's rate: another egress with room takes the work (once this session ends), else it waits
            // here in the open session.
            if (this.usableEgresses(queue).length > 0) break;
            await new Promise((resolve) => setTimeout(resolve, taken.retryInMs));
            if (session.closed) break;
            continue;
          }
          grant = taken;
          allowance = taken.granted;
        }
        const round = this.takeRound(queue, session, route, egress, starting, allowance);
        if (grant !== null) await this.ledger.giveBack(egress.id, provider.id, allowance - (round === null ? 0 : rcptsOf(round)), limits!, grant);
        started();
        if (round === null) break;
        queue.rounds.add(round);
        try {
          await this.runRound(queue, round, proberReplied);
        } catch {
          // A bug of ours (or a transport's, outside its contract): the round's work gets its one result.
          session.close();
          for (const p of roundRecipients(round)) this.settle(p, 'UnhandledException');
        } finally {
          queue.rounds.delete(round);
          // Its RCPTs have all reached the server by now: the minute's window counts them from here.
          if (grant !== null) await this.ledger.restamp(egress.id, provider.id, rcptsOf(round), limits!, grant);
        }
        if (session.closed) break;
      }
    } finally {
      queue.openings.delete(opening);
      started();
      if (session !== null) {
        queue.live--;
        // quit() never rejects (transport contract); a closed session returns at once.
        await session.quit();
        onSession?.({ event: 'close', exchanger: route!.exchanger.host, address: route!.address, egress: egress.id, durationMs: performance.now() - openedAt });
        if (!proberReplied.value) this.cooling.clean(egress.id, provider.id);
      }
      // The cap a refusal taught is kept a while: a new queue for the address starts from it.
      if (--queue.sessions === 0) queue.accepted = this.acceptedByAddress.get(queue.address) ?? null;
      // Work that came while the session was ending gets a session of its own before this slot is free.
      this.ensureSessions(queue);
      slot.release();
    }
  }

  /**
   * The timeouts for work of several owners sharing a session or a transaction: the longest of each, so that no
   * owner's address is cut shorter than its own quality level allows.
   */
  private timeoutsOf(owners: Iterable<ProbeOwner>): ProbeTimeouts {
    const { connectTimeoutMs, commandTimeoutMs, catchAllTimeoutMs } = this.options;
    let connectMs = 0;
    let commandMs = 0;
    let catchAllMs = 0;
    for (const owner of owners) {
      const t = owner.timeouts;
      connectMs = Math.max(connectMs, t?.connectMs ?? connectTimeoutMs);
      commandMs = Math.max(commandMs, t?.commandMs ?? commandTimeoutMs);
      catchAllMs = Math.max(catchAllMs, t?.catchAllMs ?? catchAllTimeoutMs);
    }
    return connectMs === 0
      ? { connectMs: connectTimeoutMs, commandMs: commandTimeoutMs, catchAllMs: catchAllTimeoutMs }
      : { connectMs, commandMs, catchAllMs };
  }

  private async open(route: Route, egress: Egress, provider: Provider, timeouts: ProbeTimeouts, signal: AbortSignal): Promise<SmtpSession | OpenFailure> {
    const { options } = this;
    try {
      return await options.transport.open({
        host: route.address,
        port: options.port,
        servername: route.exchanger.host,
        heloName: egress.heloName,
        egress: routeOf(egress),
        provider: { id: provider.id, ...(provider.maxConnectionsPerEgress !== undefined && { maxConnectionsPerEgress: provider.maxConnectionsPerEgress }) },
        tls: options.tls,
        connectTimeoutMs: timeouts.connectMs,
        commandTimeoutMs: timeouts.commandMs,
        signal,
      });
    } catch (error) {
      return openFailure(error);
    }
  }

  /**
   * The egresses a new session for this queue may leave by now: those its provider allows that have not failed on
   * their own to reach it, are not cooling, have not spent the day's budget, and have work here they may ask.
   */
  private usableEgresses(queue: RouteQueue): readonly string[] {
    const { provider } = queue;
    const limits = rateLimitsOf(provider);
    const usable: string[] = [];
    for (const id of provider.egresses) {
      if (queue.failedEgresses.has(id) || this.cooling.isCooling(id, provider.id)) continue;
      if (limits !== null) {
        const budget = this.ledger.peek(id, provider.id, limits);
        if (budget.daySpent || budget.retryInMs > 0) continue;
      }
      if (hasWorkFor(queue, id)) usable.push(id);
    }
    return usable;
  }

  /**
   * No egress may take the queue's work now. Over a minute's rate the work waits for the window (never failed for
   * it); when an egress that has work here ends its cooling within maxCoolingWaitMs, it waits for that; otherwise it is
   * deferred to the next pass: the status of the reply about the prober it got, or ServerTemporaryUnavailable.
   */
  private waitOrDefer(queue: RouteQueue): void {
    const { provider } = queue;
    const limits = rateLimitsOf(provider);
    const now = performance.now();
    let soonest = Infinity;
    let rateOnly = false;
    for (const id of provider.egresses) {
      if (queue.failedEgresses.has(id) || !hasWorkFor(queue, id)) continue;
      const budget = limits === null ? null : this.ledger.peek(id, provider.id, limits);
      if (budget?.daySpent === true) continue;
      const until = this.cooling.coolingUntil(id, provider.id);
      const ready = Math.max(until, budget === null || budget.retryInMs === 0 ? 0 : now + budget.retryInMs);
      if (ready === 0) continue;
      if (ready < soonest) {
        soonest = ready;
        rateOnly = until === 0;
      }
    }
    const wait = soonest - now;
    if (!this.closing && (rateOnly || wait <= this.maxCoolingWaitMs)) {
      queue.coolingWait ??= setTimeout(() => {
        queue.coolingWait = null;
        this.slots.wake();
        this.ensureSessions(queue);
      }, Math.max(1, Math.ceil(wait)));
      return;
    }
    this.defer(queue);
  }

  /** The work waiting in a queue gets its deferred status now. */
  private defer(queue: RouteQueue): void {
    const recipients = [...queue.recipients, ...queue.suspects];
    const checks = queue.checks;
    queue.recipients = [];
    queue.suspects = [];
    queue.checks = [];
    for (const p of recipients) this.settle(p, p.proberStatus ?? 'ServerTemporaryUnavailable');
    for (const check of checks) this.answerCheck(check, check.proberStatus ?? 'ServerTemporaryUnavailable');
    if (queue.sessions === 0) this.dropQueue(queue);
  }

  /** Work waiting for a cooling to end is deferred at once (the verifier is closing). */
  cutCoolingWaits(): void {
    this.closing = true;
    try {
      for (const queue of [...this.queues.values()]) {
        if (queue.coolingWait === null) continue;
        clearTimeout(queue.coolingWait);
        queue.coolingWait = null;
        this.defer(queue);
      }
    } finally {
      this.closing = false;
    }
  }

  /** An egress's own failure is told once, until a session through it opens again. */
  private egressFailed(egress: Egress, message: string): void {
    if (this.failingEgresses.has(egress.id)) return;
    this.failingEgresses.add(egress.id);
    if (this.options.onEgressFailure !== undefined) this.options.onEgressFailure(egress.id, message);
    else process.emitWarning(message, { code: 'MAILVERIFY_EGRESS' });
  }

  /**
   * No session could be opened to this address. While another session to it is open or opening, the work waits for
   * that one, and no more are asked for (a server may refuse one connection too many: 421); otherwise each recipient
   * moves to its next route, or gets the most telling failure once its routes are spent. A catch-all check belongs
   * to its exchanger: its waiters get the failure.
   */
  private openFailed(queue: RouteQueue, egress: Egress, failure: OpenFailure): void {
    const refusedOneMore = failure.egressFault === undefined && queue.sessions > 1;
    if (refusedOneMore) {
      // Refused while another session is open: no more than those it accepted are asked for, for a while.
      queue.accepted = Math.max(queue.live, 1);
      this.acceptedByAddress.set(queue.address, queue.accepted);
    }
    if (failure.reply !== undefined && isAboutProber(failure.reply)) {
      // Refused for who we are (a 421, a blocklist...): the pair cools (serve), and the work waits for another way, or
      // is deferred with this status (ensureSessions), rather than moving on to exchangers that judge the prober alike.
      for (const p of [...queue.recipients, ...queue.suspects]) {
        p.proberStatus ??= failure.failed;
        witnessOpenFailure(p.request.evidence, queue.address, egress, p.routes[p.routeIndex]!, failure);
      }
      for (const check of queue.checks) {
        check.proberStatus ??= failure.failed;
        check.reply = openFailurePhaseReply(failure) ?? check.reply;
      }
      return;
    }
    if (refusedOneMore) return;
    if (failure.egressFault !== undefined) {
      // The egress failed, not the exchanger: another egress is tried for this address before the next exchanger.
      queue.failedEgresses.add(egress.id);
      if (this.usableEgresses(queue).length > 0) return;
      queue.failedEgresses.clear();
      // Every egress failed; sessions through them that are still opening will fail likewise.
    }
    const recipients = [...queue.recipients, ...queue.suspects];
    const checks = queue.checks;
    queue.recipients = [];
    queue.suspects = [];
    queue.checks = [];
    for (const p of recipients) {
      // A negative reply says more than a refused connection; otherwise the most preferred exchanger's failure.
      if (p.openFailure === null || (failure.fromReply && !p.openFailure.fromReply)) {
        p.openFailure = failure;
        witnessOpenFailure(p.request.evidence, queue.address, egress, p.routes[p.routeIndex]!, failure);
      }
      p.routeIndex++;
      if (p.routeIndex < p.routes.length) this.enqueue(p);
      else this.settle(p, p.openFailure.failed);
    }
    for (const check of checks) {
      check.reply = openFailurePhaseReply(failure) ?? check.reply;
      this.answerCheck(check, failure.failed);
    }
  }

  /**
   * The next round for a session: on a new connection, a check that must come first goes alone; then a suspect goes
   * alone; otherwise the waiting checks, then the real recipients (higher priority first) in transactions per
   * domain. Null: nothing left.
   */
  private takeRound(queue: RouteQueue, session: SmtpSession, route: Route, egress: Egress, isNew: boolean, allowance = Infinity): Round | null {
    const transactions: Transaction[] = [];
    // Work that got a reply about the prober through this egress is asked through another.
    const askable = (work: { asked: Set<string> | null }) => work.asked === null || !work.asked.has(egress.id);
    if (isNew) {
      const fresh = queue.checks.findIndex((c) => c.fresh && askable(c));
      if (fresh >= 0) {
        const [check] = queue.checks.splice(fresh, 1);
        check!.fresh = false;
        return { session, route, egress, lastReplyAt: 0, transactions: [{ kind: 'probe', check: check! }] };
      }
    }
    const passed: Pending[] = [];
    for (let p = queue.suspects.shift(); p !== undefined; p = queue.suspects.shift()) {
      if (p.settled) continue;
      if (!askable(p)) {
        passed.push(p);
        continue;
      }
      if (!p.request.recipient.international || session.extensions.has('SMTPUTF8')) {
        queue.suspects.unshift(...passed);
        return { session, route, egress, lastReplyAt: 0, transactions: [realTransaction([p])] };
      }
      if (p.request.evidence !== undefined) witness(p.request.evidence, route.exchanger.host, route.address, egress.id, []);
      this.settle(p, 'ServerDoesNotSupportInternationalMailboxes');
    }
    queue.suspects = passed;
    const perTransaction = this.options.maxRecipientsPerTransaction;
    // A round as large as the exchanger's pace allows; until that pace is known, one transaction's worth, so that a
    // slow exchanger holds no more than that on one session while its pace shows.
    const size = this.roundSize(queue.address);
    // A provider's rate may allow fewer RCPTs than that now.
    let room = Math.min(size ?? this.fullRound, allowance);
    // Probes count against a slow or rate-limited round (each is one more RCPT); a full round takes them all.
    const slow = room < this.fullRound || allowance !== Infinity;
    const later: CatchAllCheck[] = [];
    for (const check of queue.checks) {
      if (check.fresh || !askable(check) || (slow && room === 0)) later.push(check);
      else {
        transactions.push({ kind: 'probe', check });
        if (slow) room--;
      }
    }
    queue.checks = later;

    const taken = size === null ? takeByPriority(queue, Math.min(perTransaction, room), askable, true) : takeByPriority(queue, room, askable);
    const smtputf8 = session.extensions.has('SMTPUTF8');
    const byDomain = new Map<string, { ascii: Pending[]; international: Pending[] }>();
    queue.priority = highestPriority(queue);
    for (const p of taken) {
      if (p.request.recipient.international && !smtputf8) {
        // RFC 6531 §3.4: a non-ASCII mailbox needs SMTPUTF8; without it no RCPT is sent.
        if (p.request.evidence !== undefined) witness(p.request.evidence, route.exchanger.host, route.address, egress.id, []);
        this.settle(p, 'ServerDoesNotSupportInternationalMailboxes');
        continue;
      }
      if (p.alone) {
        transactions.push(realTransaction([p]));
        continue;
      }
      let group = byDomain.get(p.request.domain);
      if (group === undefined) byDomain.set(p.request.domain, (group = { ascii: [], international: [] }));
      (p.request.recipient.international ? group.international : group.ascii).push(p);
    }
    // Non-ASCII recipients go in transactions of their own (MAIL ... SMTPUTF8): a refusal of that parameter must not
    // fall on the ASCII ones.
    for (const group of byDomain.values()) {
      for (const list of [group.ascii, group.international]) {
        for (let i = 0; i < list.length; i += perTransaction) transactions.push(realTransaction(list.slice(i, i + perTransaction)));
      }
    }
    return transactions.length === 0 ? null : { session, route, egress, lastReplyAt: 0, transactions };
  }

  /**
   * Writes a round at once and reads its replies in order. Verdicts are applied only once the whole round is known
   * to be in step (see the header); a timeout, a 421 or a drop ends the reading where it happened, and the later
   * transactions get what that tells.
   */
  private async runRound(queue: RouteQueue, round: Round, proberReplied: { value: boolean }): Promise<void> {
    const { session } = round;
    const issued = round.transactions.map((tx) => this.issue(round, tx));
    const outcome = new RoundOutcome();
    let stop: Next = 'next';
    try {
      for (let i = 0; i < round.transactions.length; i++) {
        const tx = round.transactions[i]!;
        if (stop !== 'next') {
          witnessTransaction(round, tx, null);
          outcome.rest(stop, tx);
          continue;
        }
        const reading = readingOf(await issued[i]!);
        witnessTransaction(round, tx, reading);
        stop = this.interpret(tx, reading, outcome);
        if (stop === 'void') return this.voidRound(queue, round);
      }
      if (stop === 'next') {
        // A reply that came with no command waiting shows only after the last one: let the transport read what has
        // already been received before the round is trusted.
        await settleTurns();
        if (session.failure?.code === 'EPROTOCOL') return this.voidRound(queue, round);
      }
      if (stop === 'bug') session.close();
      if (outcome.proberReply !== null) {
        proberReplied.value = true;
        this.startCooling(queue, round.egress, outcome.proberReply);
      }
      this.apply(outcome, session, round.egress);
      this.roundEnded(queue, stop === 'dropped');
    } finally {
      await Promise.all(issued);
    }
  }

  /** One transaction's replies → its part of the outcome, and what the transactions after it get (`Next`). */
  private interpret(tx: Transaction, reading: Reading, outcome: RoundOutcome): Next {
    const { mail, rcpts, rset, error } = reading;
    if (error !== null && !(error instanceof SmtpTransportError)) {
      // Outside the transport contract: a bug (ours or a host transport's), never retried.
      outcome.rest('bug', tx);
      return 'bug';
    }
    // An unreadable reply, or one with no command waiting: the replies may belong to other commands.
    if (error?.code === 'EPROTOCOL') return 'void';
    const everyRcpt = mail !== null && rcpts.length === txSize(tx);
    // Every RCPT answered and RSET never: a reply is missing somewhere, so the same holds.
    if (everyRcpt && timedOut(error)) return 'void';
    if (rset !== null && rset.code !== 421 && (rset.code < 200 || rset.code > 299)) return 'void';
    const failed: Next = error === null ? 'next' : timedOut(error) ? 'timeout' : 'dropped';

    if (mail === null) {
      // No answer to MAIL: the server is as slow, or as gone, for every recipient.
      outcome.rest(failed, tx);
      return failed;
    }
    if (mail.code === 421) {
      // The server is closing (RFC 5321 §3.8), about us: nobody of the transaction was asked.
      outcome.noteProber(mail);
      outcome.rest('closing', tx);
      return 'closing';
    }
    if (rset?.code === 421) outcome.noteProber(rset);
    const sender = classifySmtpReply('mail', mail);
    if (sender !== null) {
      // The sender was refused: the RCPTs after it say nothing about the mailboxes.
      if (isAboutProber(mail)) {
        outcome.noteProber(mail);
        outcome.askElsewhere(tx, sender);
      } else {
        outcome.all(tx, sender);
      }
      return rset?.code === 421 ? 'closing' : failed;
    }
    for (let i = 0; i < rcpts.length; i++) {
      const reply = rcpts[i]!;
      if (reply.code === 421) {
        // RFC 5321 §3.8: the server closes the channel. The recipient it answered got a reply about us; those
        // behind it were not asked.
        outcome.noteProber(reply);
        if (tx.kind === 'probe') {
          outcome.proberChecks.push([tx.check, 'ServerTemporaryUnavailable']);
        } else {
          outcome.prober.push([tx.recipients[i]!, 'ServerTemporaryUnavailable']);
          outcome.requeue.push(...tx.recipients.slice(i + 1));
        }
        return 'closing';
      }
      if (isAboutProber(reply)) {
        // Refused for who we are, not for the mailbox: asked again through another egress before it counts.
        outcome.noteProber(reply);
        const status = classifySmtpReply('rcpt', reply) ?? 'SmtpDialogError';
        if (tx.kind === 'probe') outcome.proberChecks.push([tx.check, status]);
        else outcome.prober.push([tx.recipients[i]!, status]);
        continue;
      }
      if (tx.kind === 'probe') {
        outcome.probes.push([tx.check, probeVerdict(reply)]);
        continue;
      }
      const p = tx.recipients[i]!;
      const status = classifySmtpReply('rcpt', reply);
      if (status === null) outcome.accepted.push(p);
      // Refused as one too many behind others: tried alone. Refused so when first, the answer stands.
      else if (status === 'ServerDoesNotAllowMultipleRecipients' && i > 0) outcome.alone.push(p);
      else outcome.finals.push([p, status]);
      if (status === 'MailboxTemporarilyUnavailable') outcome.greylisted.push(p);
    }
    if (!everyRcpt) {
      if (tx.kind === 'probe') {
        outcome.rest(failed, tx);
      } else {
        // A silent server costs one timeout for all it left unanswered; after a drop they are suspects.
        const unanswered = tx.recipients.slice(rcpts.length);
        if (failed === 'timeout') unanswered.forEach((p) => outcome.finals.push([p, 'MailboxValidationTimeout']));
        else outcome.suspects.push(...unanswered);
      }
      return failed;
    }
    // Closed after the last RCPT reply, or 421 to RSET: those answers stand.
    if (rset === null) return failed;
    return rset.code === 421 ? 'closing' : 'next';
  }

  /** Out of step: nothing the round's replies say is trusted; its work is tried again on a new connection. */
  private voidRound(queue: RouteQueue, round: Round): void {
    round.session.close();
    // Replies out of step are no evidence of anything.
    for (const tx of round.transactions) witnessTransaction(round, tx, null);
    const outcome = new RoundOutcome();
    for (const tx of round.transactions) outcome.rest('dropped', tx);
    this.apply(outcome, null, round.egress);
    this.roundEnded(queue, true);
  }

  /** After a few failed rounds in a row, the suspects still waiting for this exchanger are not tried again. */
  private roundEnded(queue: RouteQueue, failed: boolean): void {
    if (!failed) {
      queue.failedRounds = 0;
      return;
    }
    if (++queue.failedRounds < FAILED_ROUNDS_LIMIT) return;
    for (const p of queue.suspects.splice(0)) this.settle(p, 'SmtpDialogError');
  }

  private apply(outcome: RoundOutcome, session: SmtpSession | null, egress: Egress): void {
    for (const [p, status] of outcome.finals) this.settle(p, status);
    for (const [p, status] of outcome.prober) this.askElsewhere(p, egress, status);
    for (const [check, status] of outcome.proberChecks) this.askCheckElsewhere(check, egress, status);
    for (const p of outcome.requeue) this.enqueue(p);
    for (const check of outcome.requeueChecks) this.enqueueCheck(check);
    for (const p of outcome.suspects) this.retrySuspect(p);
    for (const p of outcome.alone) {
      p.alone = true;
      this.enqueue(p);
    }
    for (const p of outcome.accepted) this.awaitVerdict(p);
    for (const [check, probe] of outcome.probes) this.answerProbe(check, probe, session);
    // A greylisting server (RFC 6647) will refuse the probe's first attempt too: ask it now, so that its wait runs
    // alongside the recipients' and the next pass can get a verdict.
    for (const p of outcome.greylisted) this.check(p.routes[p.routeIndex]!, p.request.domain);
  }

  /**
   * A reply about the prober came through `egress` (a cooling has started): the recipient is asked again through
   * another egress its provider allows, at most once per egress in this pass; with none left, the reply's status is
   * its result.
   */
  private askElsewhere(p: Pending, egress: Egress, status: StatusCode): void {
    if (p.settled) return;
    (p.asked ??= new Set()).add(egress.id);
    p.proberStatus = status;
    const asked = p.asked;
    if (this.providerOf(p.routes[p.routeIndex]!).egresses.every((id) => asked.has(id))) return this.settle(p, status);
    this.enqueue(p);
  }

  /** The same for a catch-all probe: asked again through another egress, or its waiters get the status. */
  private askCheckElsewhere(check: CatchAllCheck, egress: Egress, status: StatusCode): void {
    (check.asked ??= new Set()).add(egress.id);
    check.proberStatus = status;
    const asked = check.asked;
    if (this.providerOf(check.route).egresses.every((id) => asked.has(id))) return this.answerCheck(check, status);
    this.enqueueCheck(check);
  }

  private providerOf(route: Route): Provider {
    return this.queues.get(route.address)?.provider ?? this.providers.of(route.exchanger.host === '' ? route.address : route.exchanger.host);
  }

  /** A reply about the prober: its egress × provider cools (once: a cooling under way is not extended). */
  private startCooling(queue: RouteQueue, egress: Egress, reply: SmtpReply): void {
    const started = this.cooling.start(egress.id, queue.provider.id);
    if (started === null) return;
    const enhancedCode = enhancedCodeOf(reply.code, reply.text) ?? undefined;
    const event: EgressCoolingEvent = {
      egress: egress.id,
      provider: queue.provider.id,
      reply: { code: reply.code, ...(enhancedCode !== undefined && { enhancedCode }), text: reply.text.slice(0, MAX_EVIDENCE_TEXT) },
      cooldownMs: started.cooldownMs,
    };
    if (this.options.onCooling !== undefined) this.options.onCooling(event);
    else {
      const text = event.reply.text.replace(/\s+/gu, ' ');
      process.emitWarning(`egress ${event.egress} cools for ${Math.round(event.cooldownMs / 1000)} s with provider ${event.provider}: ${reply.code} ${text}`, { code: 'MAILVERIFY_EGRESS_COOLING' });
    }
  }

  /** A suspect is tried again alone, once; then SmtpDialogError. */
  private retrySuspect(p: Pending): void {
    if (p.settled) return;
    p.faults++;
    if (p.faults > FAULT_RETRIES) return this.settle(p, 'SmtpDialogError');
    p.isolated = true;
    this.enqueue(p);
  }

  /**
   * MAIL FROM, one RCPT per address, RSET: issued together; the transport writes them at once only under PIPELINING
   * (RFC 2920). Every promise has a handler from the start, so a failed session, or a transport that throws, leaves
   * no unhandled rejection; the promise returned resolves when all are done.
   */
  private issue(round: Round, tx: Transaction): IssuedTransaction {
    const { session } = round;
    const probe = tx.kind === 'probe';
    const addresses = probe ? [tx.check.probeAddress] : tx.recipients.map((p) => p.request.recipient.address);
    const parameters = probe ? [] : tx.parameters;
    const timeouts = this.timeoutsOf(probe ? tx.check.waiters.map((p) => p.request.owner) : tx.recipients.map((p) => p.request.owner));
    const timeoutMs = probe ? timeouts.catchAllMs : timeouts.commandMs;
    const mail = this.command(round, 'mail', () => session.mail(round.egress.mailFrom, parameters));
    const rcptOptions = { timeoutMs };
    const commands = [mail];
    for (const address of addresses) commands.push(this.command(round, 'rcpt', () => session.rcpt(address, rcptOptions)));
    commands.push(this.command(round, 'rset', () => session.rset()));
    // In the same turn as the commands: allSettled handles every rejection.
    return Promise.allSettled(commands);
  }

  /** A command's reply promise (see `command`), its reply told to `onReply` when there is one. */
  private command(round: Round, phase: SmtpReplyEvent['phase'], send: () => Promise<SmtpReply>): Promise<SmtpReply> {
    const { onReply } = this.options;
    const issuedAt = onReply === undefined ? 0 : performance.now();
    const reply = command(send);
    if (phase === 'rcpt') {
      const issuedAt = performance.now();
      reply.then(() => this.paceRcpt(round, issuedAt), () => {});
    }
    if (onReply !== undefined) {
      const { exchanger, address } = round.route;
      reply.then(
        ({ code }) => onReply({ exchanger: exchanger.host, address, egress: round.egress.id, phase, code, latencyMs: performance.now() - issuedAt }),
        () => {},
      );
    }
    return reply;
  }

  /**
   * Accepted recipients wait for the catch-all verdict of their exchanger and domain: cached, or asked with a local
   * part that cannot exist, in a transaction of its own.
   */
  private awaitVerdict(p: Pending): void {
    if (p.settled) return;
    const route = p.routes[p.routeIndex]!;
    const cached = this.catchAll.get(catchAllKey(route, p.request.domain));
    if (cached !== undefined) {
      if (p.request.evidence !== undefined && cached.reply !== null) addReply(p.request.evidence, witnessReply(cached.reply.phase, cached.reply.reply));
      return this.settle(p, cached.catchAll ? 'ServerIsCatchAll' : 'Success');
    }
    this.check(route, p.request.domain)!.waiters.push(p);
    const queue = this.queues.get(route.address);
    if (queue !== undefined) queue.priority = Math.max(queue.priority, p.request.owner.priority);
  }

  /** The catch-all check of an exchanger and domain: the one under way, a new one, or null when the verdict is cached. */
  private check(route: Route, domain: string): CatchAllCheck | null {
    const key = catchAllKey(route, domain);
    if (this.catchAll.get(key) !== undefined) return null;
    let check = this.checks.get(key);
    if (check === undefined) {
      let local = this.probeLocalParts.get(key);
      if (local === undefined) {
        local = randomLocalPart();
        this.probeLocalParts.set(key, local);
      }
      check = { key, route, probeAddress: `${local}@${domain}`, waiters: [], retries: 0, fresh: false, asked: null, proberStatus: null, reply: null };
      this.checks.set(key, check);
      this.enqueueCheck(check);
    }
    return check;
  }

  /**
   * The probe's outcome. 'retry' (a drop, a void round) and 'tooMany' (a 4.5.3, which a server may count
   * per connection) are tried once more, first thing on a new connection; a second time they give SmtpDialogError
   * and ServerDoesNotAllowMultipleRecipients (docs/verification.md#catch-all-detection).
   */
  private answerProbe(check: CatchAllCheck, outcome: ProbeOutcome, session: SmtpSession | null): void {
    if (outcome === 'retry' || outcome === 'tooMany') {
      if (outcome === 'tooMany') session?.close();
      check.retries++;
      if (check.retries > 1) return this.answerCheck(check, outcome === 'tooMany' ? 'ServerDoesNotAllowMultipleRecipients' : 'SmtpDialogError');
      check.fresh = true;
      return this.enqueueCheck(check);
    }
    if (outcome === 'Success' || outcome === 'ServerIsCatchAll') this.catchAll.set(check.key, { catchAll: outcome === 'ServerIsCatchAll', reply: check.reply });
    this.answerCheck(check, outcome);
  }

  private answerCheck(check: CatchAllCheck, status: StatusCode): void {
    if (this.checks.get(check.key) === check) this.checks.delete(check.key);
    for (const p of check.waiters) {
      if (!p.settled && p.request.evidence !== undefined && check.reply !== null) addReply(p.request.evidence, witnessReply(check.reply.phase, check.reply.reply));
      this.settle(p, status);
    }
  }
}

/** A probe's answer: a verdict or status for its waiters, or a reason to try it again. */
type ProbeOutcome = StatusCode | 'tooMany' | 'retry';

/**
 * What the transactions after a failed one get: 'next', none failed; 'timeout', the server went silent; 'closing',
 * it said 421; 'dropped', the session was lost (suspects); 'bug', outside the transport contract; 'void', out of step.
 */
type Next = 'next' | 'timeout' | 'closing' | 'dropped' | 'bug' | 'void';

/** What a round's replies said, kept until the round is known to be in step. */
class RoundOutcome {
  readonly accepted: Pending[] = [];
  readonly alone: Pending[] = [];
  readonly finals: [Pending, StatusCode][] = [];
  /** Left without an answer by a dropped or void round. */
  readonly suspects: Pending[] = [];
  readonly probes: [CatchAllCheck, ProbeOutcome][] = [];
  /** Refused for now (greylisting, RFC 6647): the probe is asked early. */
  readonly greylisted: Pending[] = [];
  /** The first reply about the prober (it starts a cooling), and the work that got one, with its status. */
  proberReply: SmtpReply | null = null;
  readonly prober: [Pending, StatusCode][] = [];
  readonly proberChecks: [CatchAllCheck, StatusCode][] = [];
  /** Not asked, because the server closed (421) before them: back in the queue. */
  readonly requeue: Pending[] = [];
  readonly requeueChecks: CatchAllCheck[] = [];

  noteProber(reply: SmtpReply): void {
    this.proberReply ??= reply;
  }

  /** Every recipient of a transaction (the probe, for a probe) got a reply about the prober with this status. */
  askElsewhere(tx: Transaction, status: StatusCode): void {
    if (tx.kind === 'probe') this.proberChecks.push([tx.check, status]);
    else tx.recipients.forEach((p) => this.prober.push([p, status]));
  }

  /** The same status for every recipient of a transaction (the probe's waiters, for a probe). */
  all(tx: Transaction, status: StatusCode): void {
    if (tx.kind === 'probe') this.probes.push([tx.check, status]);
    else tx.recipients.forEach((p) => this.finals.push([p, status]));
  }

  /** A transaction that the failure of an earlier command (`next`) left without answers. */
  rest(next: Next, tx: Transaction): void {
    if (next === 'next' || next === 'void') return;
    if (next === 'timeout') this.all(tx, tx.kind === 'probe' ? 'CatchAllValidationTimeout' : 'MailboxValidationTimeout');
    else if (next === 'closing') {
      if (tx.kind === 'probe') this.requeueChecks.push(tx.check);
      else this.requeue.push(...tx.recipients);
    }
    else if (next === 'bug') this.all(tx, 'UnhandledException');
    else if (tx.kind === 'probe') this.probes.push([tx.check, 'retry']);
    else this.suspects.push(...tx.recipients);
  }
}

/** Catch-all verdicts are kept per exchanger and domain: one hosted exchanger serves both kinds of domain. */
function catchAllKey(route: Route, domain: string): string {
  return `${route.exchanger.host} ${domain}`;
}

/** The status a probe's RCPT reply gives the accepted recipients (the MAIL reply was positive). */
function probeVerdict(reply: SmtpReply): ProbeOutcome {
  const status = classifySmtpReply('rcpt', reply);
  if (status === null) return 'ServerIsCatchAll';
  if (status === 'ServerDoesNotAllowMultipleRecipients') return 'tooMany';
  // A temporary refusal of the probe leaves the verdict open: transient, tried again in a later pass.
  if (reply.code >= 400 && reply.code < 500) return status === 'ServerTemporaryUnavailable' ? status : 'MailboxTemporarilyUnavailable';
  // Refusals that are about us, or replies out of place, say nothing about the mailboxes: no verdict.
  if (PROBE_INCONCLUSIVE.has(status)) return status;
  // A permanent refusal of a mailbox that cannot exist: the server tells mailboxes apart.
  return 'Success';
}

/** A transaction's commands issued, settled: MAIL, the RCPTs and RSET, in that order. */
type IssuedTransaction = Promise<PromiseSettledResult<SmtpReply>[]>;

/**
 * The replies of one transaction in order, stopping at the first command that failed. Read once every command has
 * settled: a failure fails every command still pending (transport contract), so this is when the last one settles.
 */
function readingOf(results: readonly PromiseSettledResult<SmtpReply>[]): Reading {
  const reading: Reading = { mail: null, rcpts: [], rset: null, error: null };
  const last = results.length - 1;
  for (let i = 0; i <= last; i++) {
    const result = results[i]!;
    if (result.status === 'rejected') {
      const error: unknown = result.reason;
      reading.error = error instanceof Error ? error : new Error(String(error));
      break;
    }
    if (i === 0) reading.mail = result.value;
    else if (i === last) reading.rset = result.value;
    else reading.rcpts.push(result.value);
  }
  return reading;
}

function realTransaction(recipients: Pending[]): Transaction {
  // RFC 6531 §3.4: MAIL FROM carries SMTPUTF8 when a recipient needs it.
  const parameters = recipients.some((p) => p.request.recipient.international) ? ['SMTPUTF8'] : [];
  return { kind: 'real', recipients, parameters };
}

function txSize(tx: Transaction): number {
  return tx.kind === 'probe' ? 1 : tx.recipients.length;
}

function* roundRecipients(round: Round): Iterable<Pending> {
  for (const tx of round.transactions) {
    if (tx.kind === 'probe') yield* tx.check.waiters;
    else yield* tx.recipients;
  }
}

function roundHasLiveWork(round: Round): boolean {
  for (const p of roundRecipients(round)) if (!p.settled) return true;
  return false;
}

/** The route a new session opens with: the exchanger host (TLS server name) of the first waiting work. */
/** The owners of the work waiting in a queue. */
function* ownersOf(queue: RouteQueue): Generator<ProbeOwner> {
  for (const p of queue.recipients) yield p.request.owner;
  for (const p of queue.suspects) yield p.request.owner;
  for (const check of queue.checks) for (const p of check.waiters) yield p.request.owner;
}

function firstRoute(queue: RouteQueue): Route | null {
  const p = queue.recipients[0] ?? queue.suspects[0];
  if (p !== undefined) return p.routes[p.routeIndex]!;
  return queue.checks[0]?.route ?? null;
}

/** The highest priority of the work still waiting in a queue. */
function highestPriority(queue: RouteQueue): number {
  let max = 0;
  for (const p of queue.recipients) max = Math.max(max, p.request.owner.priority);
  for (const p of queue.suspects) max = Math.max(max, p.request.owner.priority);
  for (const check of queue.checks) for (const p of check.waiters) max = Math.max(max, p.request.owner.priority);
  return max;
}

/**
 * Up to `limit` recipients from the queue, higher priority first (a priority rising by one for each AGING_MS waited)
 * and otherwise in arrival order; with `oneDomain`, only of the first one's domain. Withdrawn ones are dropped on the
 * way (they were answered by `withdraw`).
 */
function takeByPriority(queue: RouteQueue, limit: number, askable: (p: Pending) => boolean, oneDomain = false): Pending[] {
  // Those this session may not ask stay in the queue, in their order.
  const live: Pending[] = [];
  const kept: Pending[] = [];
  for (const p of queue.recipients) if (!p.settled) (askable(p) ? live : kept).push(p);
  const first = live[0]?.request.owner.priority;
  if (live.some((p) => p.request.owner.priority !== first)) {
    const now = performance.now();
    const effective = (p: Pending) => p.request.owner.priority + Math.floor((now - p.queuedAt) / AGING_MS);
    // Array.prototype.sort is stable: arrival order within a priority is kept.
    live.sort((a, b) => effective(b) - effective(a));
  }
  if (!oneDomain || live.length === 0) {
    queue.recipients = kept.length === 0 ? live.slice(limit) : [...live.slice(limit), ...kept];
    return live.slice(0, limit);
  }
  const domain = live[0]!.request.domain;
  const taken: Pending[] = [];
  const left: Pending[] = [];
  for (const p of live) (taken.length < limit && p.request.domain === domain ? taken : left).push(p);
  queue.recipients = kept.length === 0 ? left : [...left, ...kept];
  return taken;
}

/** The status of a failure to open a session (docs/verification.md#the-session). */
function openFailure(error: unknown): OpenFailure {
  if (!(error instanceof SmtpTransportError)) return { failed: 'SmtpConnectionFailure', fromReply: false };
  if (error.egress !== undefined) {
    const failed = error.code === 'ETIMEDOUT' ? 'SmtpConnectionTimeout' : 'SmtpConnectionFailure';
    return { failed, fromReply: false, egressFault: error.message };
  }
  switch (error.code) {
    case 'ETIMEDOUT':
      return { failed: 'SmtpConnectionTimeout', fromReply: false };
    case 'EREPLY': {
      const phase = error.phase === 'greeting' ? 'greeting' : 'ehlo';
      const status = error.reply === undefined ? null : classifySmtpReply(phase, error.reply);
      return { failed: status ?? 'SmtpDialogError', fromReply: true, ...(error.reply !== undefined && { reply: error.reply, phase }) };
    }
    case 'EPROTOCOL':
      return { failed: 'SmtpDialogError', fromReply: true };
    default:
      return { failed: 'SmtpConnectionFailure', fromReply: false };
  }
}

/**
 * A command's reply promise; a transport that throws becomes a rejection. `issue` hands every one of a transaction's
 * promises to Promise.allSettled at once, which handles their rejections: no promise of its own per command here.
 */
function command(send: () => Promise<SmtpReply>): Promise<SmtpReply> {
  try {
    return send();
  } catch (error) {
    return Promise.reject(error);
  }
}

const timedOut = (error: Error | null): boolean => error instanceof SmtpTransportError && error.code === 'ETIMEDOUT';

/** Two turns of the event loop: replies already received are read and matched by the transport meanwhile. */
function settleTurns(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** A local part that no real mailbox has: 20 random base-32 characters. */
export function randomLocalPart(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let local = '';
  for (const byte of randomBytes(20)) local += alphabet[byte & 31];
  return local;
}

/** A provider's rates, or null when it has none. */
function rateLimitsOf(provider: Provider): RateLimits | null {
  if (provider.recipientsPerMinute === undefined && provider.recipientsPerDay === undefined) return null;
  return { perMinute: provider.recipientsPerMinute, perDay: provider.recipientsPerDay };
}

/** Whether the queue holds work that may be asked through this egress (not already refused for us through it). */
function hasWorkFor(queue: RouteQueue, egress: string): boolean {
  const askable = (work: { asked: Set<string> | null }) => work.asked === null || !work.asked.has(egress);
  return queue.recipients.some(askable) || queue.suspects.some(askable) || queue.checks.some(askable);
}

/** The RCPTs a round carries. */
function rcptsOf(round: Round): number {
  let count = 0;
  for (const tx of round.transactions) count += txSize(tx);
  return count;
}

/**
 * Evidence of one transaction for its recipients (and the probe's reply, kept on its check): the MAIL reply when it
 * refused, else each recipient's RCPT reply; without a reading (not reached, or out of step) only where it was asked.
 */
function witnessTransaction(round: Round, tx: Transaction, reading: Reading | null): void {
  if (tx.kind === 'real' && !tx.recipients.some((p) => p.request.evidence !== undefined)) return;
  const { route, egress } = round;
  const mail = reading?.mail ?? null;
  const refused = mail !== null && classifySmtpReply('mail', mail) !== null ? mail : null;
  if (tx.kind === 'probe') {
    const rcpt = reading?.rcpts[0];
    tx.check.reply = refused !== null ? { phase: 'mail', reply: refused } : rcpt === undefined ? null : { phase: 'rcpt', reply: rcpt };
    return;
  }
  const refusal = refused === null ? null : witnessReply('mail', refused);
  for (let i = 0; i < tx.recipients.length; i++) {
    const evidence = tx.recipients[i]!.request.evidence;
    if (evidence === undefined) continue;
    const rcpt = refusal === null ? reading?.rcpts[i] : undefined;
    const replies = refusal !== null ? [refusal] : rcpt !== undefined ? [witnessReply('rcpt', rcpt)] : [];
    witness(evidence, route.exchanger.host, route.address, egress.id, replies);
  }
}

/** A session that could not be opened, as evidence: where, through which egress, and the refusal if one was read. */
function witnessOpenFailure(evidence: SmtpEvidence | undefined, address: string, egress: Egress, route: Route, failure: OpenFailure): void {
  if (evidence === undefined) return;
  const refusal = openFailurePhaseReply(failure);
  witness(evidence, route.exchanger.host, address, egress.id, refusal === null ? [] : [witnessReply(refusal.phase, refusal.reply)]);
}

/** The refusal that ended an opening, with its phase, when one was read. */
function openFailurePhaseReply(failure: OpenFailure): PhaseReply | null {
  return failure.reply === undefined || failure.phase === undefined ? null : { phase: failure.phase, reply: failure.reply };
}
