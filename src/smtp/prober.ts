/**
 * The SMTP stage (decisions.md §6): mailbox and catch-all probing with RCPT TO, never DATA.
 *
 * Recipients of one domain are batched, up to `maxRecipientsPerTransaction`, until their batch gets a session, into
 * one transaction: MAIL FROM once, the RCPTs (pipelined by the transport when the server advertises PIPELINING), RSET.
 * When a recipient is accepted, a random local part is probed in a transaction of its own to tell a catch-all
 * server; that answer is cached per exchanger and domain. Exchangers (and their addresses) are tried in preference
 * order, moving on when a session cannot be opened. A session that drops mid-dialog leaves the recipients still waiting on it without an
 * answer; they are tried once more on a new session, then get SmtpDialogError.
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { MailExchanger } from '../domain/mail-domain.js';
import type { StatusCode } from '../status/catalogue.js';
import { classifySmtpReply } from './classify.js';
import type { SmtpReply } from './reply.js';
import { ConnectionSlots, type Lease, type SlotLimits } from './slots.js';
import { SmtpTransportError, type SmtpSession, type SmtpTransport } from './transport.js';

export interface ProberOptions extends SlotLimits {
  transport: SmtpTransport;
  port: number;
  heloName: string;
  mailFrom: string;
  /** TCP connect, greeting, EHLO and STARTTLS. */
  connectTimeoutMs: number;
  /** Each command, and the reply to a real recipient's RCPT. */
  commandTimeoutMs: number;
  /** The reply to the catch-all probe's RCPT. */
  catchAllTimeoutMs: number;
  maxRecipientsPerTransaction: number;
  /** Most exchanger addresses tried for one batch (failover). */
  maxAttemptsPerDomain: number;
  tls: { starttls: boolean; rejectUnauthorized: boolean };
  /** How long a catch-all answer is kept per exchanger and domain. */
  catchAllCacheTtlMs: number;
}

export interface ProbeRecipient {
  /** The address as sent in RCPT TO: the local part as written (without CFWS) and the ASCII domain. */
  readonly address: string;
  /** The local part has non-ASCII characters: the server must offer SMTPUTF8 (RFC 6531 §3.4). */
  readonly international: boolean;
}

interface Pending {
  readonly recipient: ProbeRecipient;
  readonly resolve: (status: StatusCode) => void;
  /** Sessions that dropped under this recipient before it had an answer. */
  faults: number;
}

interface Route {
  readonly exchanger: MailExchanger;
  readonly address: string;
}

/** What ended an attempt to open a session. */
type OpenFailure = { readonly failed: StatusCode; readonly fromReply: boolean };

/** The recipients of one domain that share a transaction. */
interface Batch {
  readonly domain: string;
  readonly exchangers: readonly MailExchanger[];
  readonly pending: Pending[];
}

/** What one transaction left to do. */
interface TransactionResult {
  /** Accepted by RCPT: they wait for the catch-all verdict. */
  accepted: Pending[];
  /** Refused with 4.5.3 as one recipient too many: they go one per transaction. */
  alone: Pending[];
  /** Left without an answer by another recipient's timeout: tried again, at no cost. */
  collateral: Pending[];
  /** Left without an answer by a dropped or garbled session. */
  dropped: Pending[];
}

/** Answers to the probe that leave the catch-all question open; they are not cached. */
const PROBE_INCONCLUSIVE: ReadonlySet<StatusCode> = new Set<StatusCode>([
  'SmtpDialogError',
  'LocalEndPointRejected',
  'LocalSenderAddressRejected',
]);

/** A catch-all probe's answer; 'tooMany' and 'dropped' call for one more try on a new connection. */
type ProbeOutcome = StatusCode | 'tooMany' | 'dropped';

/** A dropped session is tried once more before the recipients get SmtpDialogError (decisions.md §6). */
const SESSION_FAULT_RETRIES = 1;

export class SmtpProber {
  private readonly slots: ConnectionSlots;
  private readonly catchAll: LRUCache<string, boolean>;
  /**
   * The probe's local part per exchanger and domain, kept across passes: a greylisting server (RFC 6647) refuses a
   * new sender/recipient pair once, so a fresh random local part on each pass would never get past it.
   */
  private readonly probeLocalParts: LRUCache<string, string>;
  /** Per domain, the batch that recipients can still join: it has not got its session yet and has room. */
  private readonly joinable = new Map<string, Batch>();

  constructor(private readonly options: ProberOptions) {
    this.slots = new ConnectionSlots(options);
    this.catchAll = new LRUCache({ max: 10_000, ttl: options.catchAllCacheTtlMs });
    // No TTL: the same probe must come back however far apart the passes are.
    this.probeLocalParts = new LRUCache({ max: 10_000 });
  }

  get openConnections(): number {
    return this.slots.openConnections;
  }

  /** Resolves when every connection is closed (QUIT included) and no work waits for one. */
  idle(): Promise<void> {
    return this.slots.idle();
  }

  /**
   * The SMTP status of one recipient of `domain`, whose usable exchangers are given in preference order.
   *
   * Recipients join their domain's batch until it has a session (a connection slot is free and the session open) or
   * is full; so the busier the exchanger, the more recipients share a transaction.
   */
  probe(domain: string, exchangers: readonly MailExchanger[], recipient: ProbeRecipient): Promise<StatusCode> {
    return new Promise((resolve) => {
      let batch = this.joinable.get(domain);
      if (batch === undefined) {
        batch = { domain, exchangers, pending: [] };
        this.joinable.set(domain, batch);
        this.start(batch);
      }
      batch.pending.push({ recipient, resolve, faults: 0 });
      if (batch.pending.length >= this.options.maxRecipientsPerTransaction) this.seal(batch);
    });
  }

  /** No more recipients join this batch. */
  private seal(batch: Batch): void {
    if (this.joinable.get(batch.domain) === batch) this.joinable.delete(batch.domain);
  }

  private start(batch: Batch): void {
    this.run(batch).catch(() => {
      // A bug of ours: every recipient still waiting gets its one result (a second resolve is ignored).
      for (const p of batch.pending) p.resolve('UnhandledException');
    });
  }

  /** Routes in preference order: each exchanger's addresses, as many as the attempt budget allows. */
  private routes(exchangers: readonly MailExchanger[]): Route[] {
    const routes: Route[] = [];
    for (const exchanger of exchangers) {
      for (const address of exchanger.addresses) routes.push({ exchanger, address });
    }
    return routes.slice(0, this.options.maxAttemptsPerDomain);
  }

  /** A session on the first route that opens, or the status that the failures to open give. */
  private async session(
    routes: Route[],
    fresh = false,
  ): Promise<{ route: Route; lease: Lease; session: SmtpSession } | OpenFailure> {
    let failure: OpenFailure | null = null;
    for (const route of routes) {
      const lease = await this.slots.acquire(route.address, { fresh });
      if (lease.session !== null) return { route, lease, session: lease.session };
      const opened = await this.open(route);
      if ('failed' in opened) {
        lease.release(null);
        // A negative reply says more than a refused connection; otherwise the most preferred exchanger's failure.
        if (failure === null || (opened.fromReply && !failure.fromReply)) failure = opened;
        continue;
      }
      return { route, lease, session: opened };
    }
    return failure ?? { failed: 'SmtpConnectionFailure', fromReply: false };
  }

  private async run(batch: Batch): Promise<void> {
    const routes = this.routes(batch.exchangers);
    // Recipients submitted in the same turn of the event loop join before anything else happens.
    await new Promise((resolve) => setImmediate(resolve));
    let waiting = batch.pending;
    for (let first = true; waiting.length > 0; first = false) {
      const got = await this.session(routes);
      if (first) {
        this.seal(batch);
        waiting = batch.pending;
      }
      if ('failed' in got) {
        for (const p of waiting) p.resolve(got.failed);
        return;
      }
      const { route, lease, session } = got;
      let result: TransactionResult;
      try {
        result = await this.serve(session, waiting);
      } catch (error) {
        // Only a bug gets here (ours or a transport's): the slot is still given back, and the session ended.
        lease.release(session);
        throw error;
      }
      for (const p of result.dropped) p.faults++;
      const accepted = result.accepted;
      if (accepted.length > 0) {
        // The catch-all verdict takes over the lease (it may need a connection of its own).
        const resolveAll = (status: StatusCode) => accepted.forEach((p) => p.resolve(status));
        this.verdict(route, lease, session, batch.domain).then(resolveAll, () => resolveAll('UnhandledException'));
      } else {
        lease.release(session);
      }
      waiting = [];
      for (const p of [...result.collateral, ...result.dropped]) {
        if (p.faults > SESSION_FAULT_RETRIES) p.resolve('SmtpDialogError');
        else waiting.push(p);
      }
    }
  }

  private async open(route: Route): Promise<SmtpSession | OpenFailure> {
    const { options } = this;
    try {
      return await options.transport.open({
        host: route.address,
        port: options.port,
        servername: route.exchanger.host,
        heloName: options.heloName,
        tls: options.tls,
        connectTimeoutMs: options.connectTimeoutMs,
        commandTimeoutMs: options.commandTimeoutMs,
      });
    } catch (error) {
      return openFailure(error);
    }
  }

  /** The real recipients on one session: one transaction, then one per recipient refused as one too many. */
  private async serve(session: SmtpSession, pending: Pending[]): Promise<TransactionResult> {
    const smtputf8 = session.extensions.has('SMTPUTF8');
    const ascii: Pending[] = [];
    const international: Pending[] = [];
    for (const p of pending) {
      if (!p.recipient.international) ascii.push(p);
      // RFC 6531 §3.4: a non-ASCII mailbox needs SMTPUTF8; without it no RCPT is sent (decisions.md §6).
      else if (smtputf8) international.push(p);
      else p.resolve('ServerDoesNotSupportInternationalMailboxes');
    }
    // Non-ASCII recipients go in a transaction of their own (MAIL ... SMTPUTF8): a refusal of that parameter must
    // not fall on the ASCII ones.
    const result: TransactionResult = { accepted: [], alone: [], collateral: [], dropped: [] };
    const groups = [ascii, international].filter((group) => group.length > 0);
    for (let g = 0; g < groups.length; g++) {
      if (session.closed) {
        result.collateral.push(...groups.slice(g).flat());
        break;
      }
      merge(result, await this.transaction(session, groups[g]!));
    }
    // RFC 5321 §3.3 lets a server take fewer recipients (452 4.5.3): those go one per transaction.
    const alone = result.alone;
    result.alone = [];
    for (let i = 0; i < alone.length; i++) {
      if (session.closed) {
        result.collateral.push(...alone.slice(i));
        break;
      }
      merge(result, await this.transaction(session, [alone[i]!]));
    }
    return result;
  }

  /** The real recipients' transaction (see `issue`), read reply by reply. */
  private async transaction(session: SmtpSession, recipients: Pending[]): Promise<TransactionResult> {
    const result: TransactionResult = { accepted: [], alone: [], collateral: [], dropped: [] };
    if (recipients.length === 0) return result;
    const parameters = recipients.some((p) => p.recipient.international) ? ['SMTPUTF8'] : [];
    const addresses = recipients.map((p) => p.recipient.address);
    const { mail, rcpts, settled } = this.issue(session, parameters, addresses, this.options.commandTimeoutMs);
    try {
      const mailReply = await replyOrError(mail);
      if (mailReply instanceof Error) {
        // No answer to MAIL in time: the server is as slow for every recipient, none is to blame for another.
        if (timedOut(mailReply)) recipients.forEach((p) => p.resolve('MailboxValidationTimeout'));
        else this.fault(mailReply, recipients, result);
        return result;
      }
      const sender = classifySmtpReply('mail', mailReply);
      if (sender !== null) {
        // The sender was refused: the RCPTs after it say nothing about the mailboxes.
        for (const p of recipients) p.resolve(sender);
        return result;
      }
      let closing = false;
      for (let i = 0; i < recipients.length; i++) {
        const p = recipients[i]!;
        const reply = await replyOrError(rcpts[i]!);
        if (reply instanceof Error) {
          // After a 421 the server has closed the channel: the same answer for everyone behind (decisions.md §6).
          if (closing) recipients.slice(i).forEach((q) => q.resolve('ServerTemporaryUnavailable'));
          else this.fault(reply, recipients.slice(i), result);
          return result;
        }
        closing ||= reply.code === 421;
        const status = classifySmtpReply('rcpt', reply);
        if (status === null) result.accepted.push(p);
        // Refused as one too many behind others: tried alone. Refused so when first, the answer stands (§6).
        else if (status === 'ServerDoesNotAllowMultipleRecipients' && i > 0) result.alone.push(p);
        else p.resolve(status);
      }
      return result;
    } finally {
      await settled;
    }
  }

  /**
   * A transport error before every recipient had an answer. A timeout is the first waiting RCPT's; the recipients
   * behind it were not at fault. A drop or a garbled reply is the session's: they are tried again.
   */
  private fault(error: Error, unanswered: Pending[], result: TransactionResult): void {
    if (!(error instanceof SmtpTransportError)) {
      // Outside the transport contract: a bug (ours or a host transport's), never retried.
      unanswered.forEach((p) => p.resolve('UnhandledException'));
    } else if (timedOut(error)) {
      unanswered[0]!.resolve('MailboxValidationTimeout');
      result.collateral.push(...unanswered.slice(1));
    } else {
      result.dropped.push(...unanswered);
    }
  }

  /**
   * ServerIsCatchAll or Success for the accepted recipients of `route`: a local part that cannot exist is probed in a
   * transaction of its own (after the RSET of the real one), and the answer is cached per exchanger and domain: one
   * hosted exchanger serves catch-all and ordinary domains alike. Owns `lease`.
   */
  private async verdict(route: Route, lease: Lease, session: SmtpSession, domain: string): Promise<StatusCode> {
    const key = `${route.exchanger.host} ${domain}`;
    const cached = this.catchAll.get(key);
    if (cached !== undefined) {
      lease.release(session);
      return cached ? 'ServerIsCatchAll' : 'Success';
    }
    let local = this.probeLocalParts.get(key);
    if (local === undefined) {
      local = randomLocalPart();
      this.probeLocalParts.set(key, local);
    }
    const probeAddress = `${local}@${domain}`;
    let probe: ProbeOutcome;
    try {
      probe = await this.probeOnce(session, probeAddress);
    } finally {
      // A server that refused the probe as one too many may count per connection: nobody else gets this one.
      if (probe! === 'tooMany') session.close();
      lease.release(session);
    }
    if (probe === 'tooMany' || probe === 'dropped') {
      // Refused as one recipient too many, or the session dropped: once more, first thing on a new connection.
      const got = await this.session([route], true);
      if ('failed' in got) return got.failed;
      try {
        probe = await this.probeOnce(got.session, probeAddress);
      } finally {
        got.lease.release(got.session);
      }
      // Every attempt refused as too many (decisions.md §6), or a second drop.
      if (probe === 'tooMany') return 'ServerDoesNotAllowMultipleRecipients';
      if (probe === 'dropped') return 'SmtpDialogError';
    }
    if (probe === 'Success' || probe === 'ServerIsCatchAll') this.catchAll.set(key, probe === 'ServerIsCatchAll');
    return probe;
  }

  /**
   * MAIL FROM, one RCPT per address (each waiting `rcptTimeoutMs` for its reply), RSET: issued together, the
   * transport writes them at once only under PIPELINING (RFC 2920). Every promise has a handler from the start, so a
   * failed session, or a transport that throws, leaves no unhandled rejection; `settled` resolves when all are done.
   */
  private issue(session: SmtpSession, parameters: readonly string[], addresses: readonly string[], rcptTimeoutMs: number) {
    const mail = command(() => session.mail(this.options.mailFrom, parameters));
    const rcpts = addresses.map((address) => command(() => session.rcpt(address, { timeoutMs: rcptTimeoutMs })));
    const rset = command(() => session.rset());
    return { mail, rcpts, settled: Promise.allSettled([mail, ...rcpts, rset]) };
  }

  /** One probe transaction; 'tooMany' or 'dropped' when it must be tried again on a new connection. */
  private async probeOnce(session: SmtpSession, probeAddress: string): Promise<ProbeOutcome> {
    if (session.closed) return 'dropped';
    const { mail, rcpts, settled } = this.issue(session, [], [probeAddress], this.options.catchAllTimeoutMs);
    const rcpt = rcpts[0]!;
    try {
      const mailReply = await replyOrError(mail);
      if (mailReply instanceof Error) return timedOut(mailReply) ? 'CatchAllValidationTimeout' : 'dropped';
      const sender = classifySmtpReply('mail', mailReply);
      if (sender !== null) return sender;
      const reply = await replyOrError(rcpt);
      if (reply instanceof Error) return timedOut(reply) ? 'CatchAllValidationTimeout' : 'dropped';
      const status = classifySmtpReply('rcpt', reply);
      if (status === null) return 'ServerIsCatchAll';
      if (status === 'ServerDoesNotAllowMultipleRecipients') return 'tooMany';
      // A temporary refusal of the probe leaves the verdict open: transient, tried again in a later pass.
      if (reply.code >= 400 && reply.code < 500) return status === 'ServerTemporaryUnavailable' ? status : 'MailboxTemporarilyUnavailable';
      // Refusals that are about us, or replies out of place, say nothing about the mailboxes: no verdict.
      if (PROBE_INCONCLUSIVE.has(status)) return status;
      // A permanent refusal of a mailbox that cannot exist: the server tells mailboxes apart.
      return 'Success';
    } finally {
      await settled;
    }
  }
}

/** The status of a failure to open a session (decisions.md §6). */
function openFailure(error: unknown): OpenFailure {
  if (!(error instanceof SmtpTransportError)) return { failed: 'SmtpConnectionFailure', fromReply: false };
  switch (error.code) {
    case 'ETIMEDOUT':
      return { failed: 'SmtpConnectionTimeout', fromReply: false };
    case 'EREPLY': {
      const phase = error.phase === 'greeting' ? 'greeting' : 'ehlo';
      const status = error.reply === undefined ? null : classifySmtpReply(phase, error.reply);
      return { failed: status ?? 'SmtpDialogError', fromReply: true };
    }
    case 'EPROTOCOL':
      return { failed: 'SmtpDialogError', fromReply: true };
    default:
      return { failed: 'SmtpConnectionFailure', fromReply: false };
  }
}

/** A command's reply promise, with a handler attached at once; a transport that throws becomes a rejection. */
function command(send: () => Promise<SmtpReply>): Promise<SmtpReply> {
  let sent: Promise<SmtpReply>;
  try {
    sent = send();
  } catch (error) {
    sent = Promise.reject(error);
  }
  sent.catch(() => {});
  return sent;
}

function merge(into: TransactionResult, from: TransactionResult): void {
  into.accepted.push(...from.accepted);
  into.alone.push(...from.alone);
  into.collateral.push(...from.collateral);
  into.dropped.push(...from.dropped);
}

async function replyOrError(command: Promise<SmtpReply>): Promise<SmtpReply | Error> {
  try {
    return await command;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

const timedOut = (error: Error): boolean => error instanceof SmtpTransportError && error.code === 'ETIMEDOUT';

/** A local part that no real mailbox has: 20 random base-32 characters. */
export function randomLocalPart(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let local = '';
  for (const byte of randomBytes(20)) local += alphabet[byte & 31];
  return local;
}
