// The mail lab's SMTP side, engine-neutral parts plus the raw responder.
//
// - `Behaviour`: what one lab server answers (mailboxes, greylisting, exact replies, faults). Both engines ask it,
//   so that a scenario gives the same replies on smtp-server and on the raw responder.
// - `ConnectionRecord`: the transcript of one connection, the exact bytes received, and the command counters.
// - `RawSmtpSession`: a small SMTP server on a bare `node:net` socket, for what smtp-server cannot do: garbage
//   replies, silences, drops at exact points, multi-line and arbitrary replies, RFC 5321 behaviour after a 5xx
//   greeting, synchronisation checks. Its default replies copy smtp-server's texts (checked by mail-lab.test.ts).
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';

/** The points of a session where a fault or a delay can be put. `ehlo` covers EHLO and HELO. */
export type Stage = 'greeting' | 'ehlo' | 'starttls' | 'mail' | 'rcpt' | 'rset' | 'quit';
export const STAGES: readonly Stage[] = ['greeting', 'ehlo', 'starttls', 'mail', 'rcpt', 'rset', 'quit'];

/** A stage, or `rcpt:LOCAL` (`rcpt:LOCAL@DOMAIN`) for the RCPT of one recipient only (case-insensitive). */
export type Trigger = Stage | `rcpt:${string}`;

/**
 * A reply as "CODE TEXT", usually "CODE ENHANCED TEXT" (`'452 4.2.2 Mailbox full'`). Several lines are separated by
 * `\n` and each starts with the code; the lab writes the `-` continuation marks and CRLFs itself. A reply whose lines
 * do not all start with a 3-digit code is written verbatim, one CRLF per line: a malformed reply, on purpose.
 */
export type Reply = string;

/** One lab server's behaviour. Every field is optional: `{}` is a server that knows no mailbox. */
export interface ServerSpec {
  /** Which implementation serves it. Default: smtp-server when it can do everything asked, else the raw responder. */
  engine?: 'smtp-server' | 'raw';
  /** Local parts that exist (or full addresses, when the entry holds an `@`), compared case-insensitively. */
  mailboxes?: string[];
  /** Accept every recipient (a catch-all server). */
  acceptAll?: boolean;
  /** Connections beyond this many open at once are greeted with `421 4.7.0 Too many connections` and closed. */
  maxConnections?: number;
  /** Accept every recipient of these domains (catch-all domains on a server that knows its other domains' mailboxes). */
  acceptAllDomains?: string[];
  /** The reply to recipients that are not mailboxes (default `550 5.1.1 ... User unknown`). */
  rejectOthers?: Reply;
  /** Exact RCPT reply per local part (or full address). Takes precedence over `mailboxes`/`acceptAll`. */
  rcpt?: Record<string, Reply>;
  /** Reply to every MAIL FROM (a 2xx one opens the transaction). */
  mail?: Reply;
  /**
   * Replaces the 220 greeting. After a 421 the server closes; after a 5xx it answers 503 to everything but QUIT
   * (RFC 5321 3.1).
   */
  greeting?: Reply;
  /** Reply to EHLO (HELO is still answered normally: the client's fallback). */
  ehlo?: Reply;
  /** The first N RCPT attempts per recipient (counted per server across connections) get 450 4.7.1. */
  greylist?: number;
  /**
   * A greylisting window: every RCPT for a recipient within this many ms of its first attempt (per server, across
   * connections) gets 450 4.7.1. With `greylist` too, a recipient passes only once both are satisfied.
   */
  greylistMs?: number;
  /** More accepted recipients than this in one transaction: 452 4.5.3. */
  maxRecipients?: number;
  /** Close the socket, without a reply, when this command arrives (`greeting`: as soon as the client connects). */
  drop?: Trigger | Trigger[];
  /** Never answer this command, nor any later one (the connection stays open). */
  silent?: Trigger | Trigger[];
  /** Answer this command with a malformed line instead of a reply. */
  garbage?: Trigger | Trigger[];
  /** Raw responder: carry out this command but send no reply to it; later commands are answered normally. */
  omit?: Trigger | Trigger[];
  /** Raw responder: right after the reply to this command, in the same write, `250 2.0.0 Unsolicited`. */
  extra?: Trigger | Trigger[];
  /** Raw responder: every reply after the greeting is sent twice, in one write. */
  doubleReplies?: boolean;
  /** Raw responder: the reply to RSET (a 2xx one resets the transaction; any other leaves it open). */
  rset?: Reply;
  /**
   * Raw responder: a delay line on the server's output. Every write (greeting included), and the close after it,
   * reaches the client this many ms later. Writes are not serialized by it: the replies to a pipelined group leave
   * in one write and share one delay.
   */
  replyDelayMs?: number;
  /** Wait this long before the reply, per stage (`rcpt:LOCAL` keys win over `rcpt`). */
  delayMs?: Partial<Record<Trigger, number>>;
  /** Advertise SMTPUTF8 (default true). */
  smtputf8?: boolean;
  /** Advertise PIPELINING (default true). */
  pipelining?: boolean;
  /** Offer STARTTLS with the self-signed test certificate (default false). */
  starttls?: boolean;
  /**
   * Raw responder: a provider's rate limit per source address. Each RCPT is counted for the address the connection
   * came from; one more than `rcpts` within `windowMs` (default 60 s) gets `reply` (a 421 closes the connection), as
   * Gmail's `421 4.7.28` or Microsoft's `550 5.7.606` do. Servers naming the same `group` share the counts (the
   * exchangers of one provider).
   */
  sourceLimit?: SourceLimit;
  /**
   * Raw responder only: refuse a command that arrives before the reply to the previous one was sent (unless
   * PIPELINING is advertised) with 554 5.5.0 and close, as Exim's `smtp_enforce_sync` does.
   */
  strictSync?: boolean;
}

export interface SourceLimit {
  readonly rcpts: number;
  readonly windowMs?: number;
  readonly reply: Reply;
  readonly group?: string;
}

/** RCPTs per source address, shared by the servers of a `sourceLimit` group: the time of each, and the refusals. */
export interface SourceCounts {
  readonly times: Map<string, number[]>;
  readonly asked: Map<string, number>;
  readonly limited: Map<string, number>;
}

export function newSourceCounts(): SourceCounts {
  return { times: new Map(), asked: new Map(), limited: new Map() };
}

export const SPEC_KEYS: ReadonlySet<string> = new Set([
  'sourceLimit',
  'engine',
  'mailboxes',
  'acceptAll',
  'acceptAllDomains',
  'maxConnections',
  'rejectOthers',
  'rcpt',
  'mail',
  'greeting',
  'ehlo',
  'greylist',
  'greylistMs',
  'maxRecipients',
  'drop',
  'silent',
  'garbage',
  'omit',
  'extra',
  'doubleReplies',
  'rset',
  'replyDelayMs',
  'delayMs',
  'smtputf8',
  'pipelining',
  'starttls',
  'strictSync',
]);

/** The default reply texts. Those of the normal dialog are smtp-server's own (with enhanced status codes on). */
export const REPLIES = {
  greeting: (host: string): Reply => `220 ${host} ESMTP`,
  ehloGreeting: (host: string, client: string): string => `${host} Nice to meet you, [${client}]`,
  mailOk: '250 2.1.0 Accepted',
  rcptOk: '250 2.1.5 Accepted',
  unknownUser: (address: string): Reply => `550 5.1.1 <${address}>: Recipient address rejected: User unknown`,
  greylisted: (address: string): Reply =>
    `450 4.7.1 <${address}>: Recipient address rejected: Greylisted, try again later`,
  tooManyRecipients: '452 4.5.3 Error: too many recipients',
  utf8Required: (address: string): Reply => `553 5.6.7 <${address}>: non-ASCII address without SMTPUTF8`,
  utf8Unsupported: '555 5.5.4 Unsupported option: SMTPUTF8',
  data: '554 5.5.1 Error: the mail lab never accepts DATA',
  rset: '250 2.0.0 Flushed',
  noop: '250 2.0.0 OK',
  vrfy: '252 2.1.5 Try to send something. No promises though',
  quit: '221 2.0.0 Bye',
  starttls: '220 2.0.0 Ready to start TLS',
  tlsActive: '503 5.5.1 Error: TLS already active',
  unknownCommand: '500 5.5.2 Error: command not recognized',
  heloFirst: '503 5.5.1 Error: send HELO/EHLO first',
  needMail: '503 5.5.1 Error: need MAIL command',
  nestedMail: '503 5.5.1 Error: nested MAIL command',
  badSender: '501 5.1.7 Error: Bad sender address syntax',
  badRecipient: '501 5.1.3 Error: Bad recipient address syntax',
  ehloSyntax: '501 Error: syntax: EHLO hostname',
  heloSyntax: '501 Error: Syntax: HELO hostname',
  /** Raw responder: every command but QUIT after a 5xx greeting. */
  afterRefusal: '503 5.5.1 Error: the greeting refused this session, only QUIT is accepted',
  /** Raw responder with strictSync: a command sent before the previous reply. */
  syncError: '554 5.5.0 SMTP synchronization error',
  /** What `garbage` sends instead of a reply. */
  garbage: 'this is not an SMTP reply',
  /** What `extra` sends after the reply. */
  unsolicited: '250 2.0.0 Unsolicited',
  tooManyConnections: '421 4.7.0 Too many connections, try again later',
} as const;

/** The SIZE both engines advertise. */
export const MAX_MESSAGE_SIZE = 10 * 1024 * 1024;

const CODE_LINE = /^(\d{3})(?:[ -](.*))?$/s;
const ENHANCED_AT_START = /^([245])\.\d{1,3}\.\d{1,3}(?: |$)/;

export interface ParsedReply {
  /** The reply code, or undefined for a deliberately malformed reply. */
  code: number | undefined;
  /** The bytes to write, CRLF-terminated. */
  wire: string;
  /** The text of each line after the code (and its separator). */
  texts: string[];
}

/** Turns a `Reply` into its wire form (see `Reply`). */
export function parseReply(reply: Reply): ParsedReply {
  const lines = reply.split('\n').map((line) => line.replace(/\r$/, ''));
  const matches = lines.map((line) => CODE_LINE.exec(line));
  const first = matches[0]?.[1];
  const wellFormed = first !== undefined && matches.every((m) => m !== null && m[1] === first);
  if (!wellFormed) return { code: undefined, wire: lines.map((line) => `${line}\r\n`).join(''), texts: lines };
  const texts = matches.map((m) => m?.[2] ?? '');
  const wire = texts
    .map((text, i) => {
      const last = i === texts.length - 1;
      if (last && text === '') return `${first}\r\n`;
      return `${first}${last ? ' ' : '-'}${text}\r\n`;
    })
    .join('');
  return { code: Number(first), wire, texts };
}

/** True when smtp-server can send this reply exactly: one line, 4xx/5xx, an enhanced code of the same class. */
export function smtpServerCanSend(reply: Reply): boolean {
  const parsed = parseReply(reply);
  if (parsed.code === undefined || parsed.code < 400 || parsed.texts.length !== 1) return false;
  const enhanced = ENHANCED_AT_START.exec(parsed.texts[0] ?? '');
  return enhanced !== null && enhanced[1] === String(parsed.code)[0];
}

/** True when a reply text starts with an enhanced status code (smtp-server must not prefix another one). */
export function startsWithEnhancedCode(text: string): boolean {
  return ENHANCED_AT_START.test(text);
}

export function isTwoXX(code: number | undefined): boolean {
  return code !== undefined && code >= 200 && code < 300;
}

interface ParsedTrigger {
  stage: Stage;
  /** For `rcpt:WHO`, lower-cased. */
  who?: string;
}

export function parseTrigger(trigger: string): ParsedTrigger | undefined {
  if ((STAGES as readonly string[]).includes(trigger)) return { stage: trigger as Stage };
  const match = /^rcpt:(.+)$/s.exec(trigger);
  return match?.[1] === undefined ? undefined : { stage: 'rcpt', who: match[1].toLowerCase() };
}

function triggers(value: Trigger | Trigger[] | undefined): ParsedTrigger[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map((t) => {
    const parsed = parseTrigger(t);
    if (parsed === undefined) throw new Error(`unknown trigger ${JSON.stringify(t)}`);
    return parsed;
  });
}

export function localPartOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? address : address.slice(0, at);
}

/** True when `key` (a local part, or a full address when it holds an `@`) names `address`. */
function names(key: string, address: string): boolean {
  const wanted = key.toLowerCase();
  return wanted.includes('@') ? address.toLowerCase() === wanted : localPartOf(address).toLowerCase() === wanted;
}

// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\x00-\x7f]/;

export type RcptDecision = { accept: true } | { accept: false; reply: Reply };

/** A server's greylist memory of one recipient. */
export interface GreylistEntry {
  attempts: number;
  /** performance.now() of the first attempt. */
  first: number;
}

/**
 * A server's behaviour: the spec plus the greylist state it shares with every other connection of the server.
 * Engine-neutral: smtp-server calls it from onMailFrom/onRcptTo, the raw responder from its command handlers.
 */
export class Behaviour {
  readonly smtputf8: boolean;
  readonly pipelining: boolean;
  readonly starttls: boolean;
  private readonly drops: ParsedTrigger[];
  private readonly silences: ParsedTrigger[];
  private readonly garbages: ParsedTrigger[];
  private readonly omits: ParsedTrigger[];
  private readonly extras: ParsedTrigger[];
  /** `mailboxes`, lower-cased: local parts and full addresses apart (a quoted local part may hold an `@`). */
  private readonly localMailboxes: Set<string>;
  private readonly fullMailboxes: Set<string>;
  private readonly catchAllDomains: Set<string>;
  private readonly delays: Array<ParsedTrigger & { ms: number }>;

  constructor(
    readonly spec: ServerSpec,
    readonly host: string,
    private readonly greylist: Map<string, GreylistEntry>,
    private readonly sources: SourceCounts = newSourceCounts(),
  ) {
    this.smtputf8 = spec.smtputf8 ?? true;
    this.pipelining = spec.pipelining ?? true;
    this.starttls = spec.starttls ?? false;
    this.drops = triggers(spec.drop);
    this.silences = triggers(spec.silent);
    this.garbages = triggers(spec.garbage);
    this.omits = triggers(spec.omit);
    this.extras = triggers(spec.extra);
    const mailboxes = (spec.mailboxes ?? []).map((m) => m.toLowerCase());
    this.localMailboxes = new Set(mailboxes.filter((m) => !m.includes('@')));
    this.fullMailboxes = new Set(mailboxes.filter((m) => m.includes('@')));
    this.catchAllDomains = new Set((spec.acceptAllDomains ?? []).map((d) => d.toLowerCase()));
    this.delays = Object.entries(spec.delayMs ?? {}).map(([key, ms]) => {
      const parsed = parseTrigger(key);
      if (parsed === undefined) throw new Error(`unknown delayMs key ${JSON.stringify(key)}`);
      return { ...parsed, ms: ms ?? 0 };
    });
  }

  drop(stage: Stage, address?: string): boolean {
    return this.hit(this.drops, stage, address);
  }

  silent(stage: Stage, address?: string): boolean {
    return this.hit(this.silences, stage, address);
  }

  garbage(stage: Stage, address?: string): boolean {
    return this.hit(this.garbages, stage, address);
  }

  omit(stage: Stage, address?: string): boolean {
    return this.hit(this.omits, stage, address);
  }

  extra(stage: Stage, address?: string): boolean {
    return this.hit(this.extras, stage, address);
  }

  /** The delay before the reply at this stage; a `rcpt:WHO` entry wins over `rcpt`. */
  delay(stage: Stage, address?: string): number {
    let general = 0;
    for (const d of this.delays) {
      if (d.stage !== stage) continue;
      if (d.who === undefined) general = d.ms;
      else if (address !== undefined && names(d.who, address)) return d.ms;
    }
    return general;
  }

  /** The reply to `MAIL FROM:<address>`, or undefined for the default 250. */
  mail(address: string, parameters: readonly string[]): Reply | undefined {
    const utf8 = parameters.some((p) => p.toUpperCase() === 'SMTPUTF8');
    if (utf8 && !this.smtputf8) return REPLIES.utf8Unsupported;
    if (!utf8 && NON_ASCII.test(localPartOf(address))) return REPLIES.utf8Required(address);
    return this.spec.mail;
  }

  /**
   * The RCPT decision after the maxRecipients check (which both engines make first, as smtp-server does); `source`,
   * the address the connection came from.
   */
  rcpt(address: string, smtputf8Transaction: boolean, source = ''): RcptDecision {
    const sourceLimit = this.spec.sourceLimit;
    if (sourceLimit !== undefined) {
      const now = performance.now();
      const windowMs = sourceLimit.windowMs ?? 60_000;
      const times = (this.sources.times.get(source) ?? []).filter((t) => now - t < windowMs);
      this.sources.asked.set(source, (this.sources.asked.get(source) ?? 0) + 1);
      if (times.length >= sourceLimit.rcpts) {
        this.sources.times.set(source, times);
        this.sources.limited.set(source, (this.sources.limited.get(source) ?? 0) + 1);
        return { accept: false, reply: sourceLimit.reply };
      }
      times.push(now);
      this.sources.times.set(source, times);
    }
    if (!smtputf8Transaction && NON_ASCII.test(localPartOf(address))) {
      return { accept: false, reply: REPLIES.utf8Required(address) };
    }
    const limit = this.spec.greylist ?? 0;
    const windowMs = this.spec.greylistMs ?? 0;
    if (limit > 0 || windowMs > 0) {
      const key = address.toLowerCase();
      const now = performance.now();
      const seen = this.greylist.get(key) ?? { attempts: 0, first: now };
      this.greylist.set(key, { attempts: seen.attempts + 1, first: seen.first });
      if (seen.attempts < limit || now - seen.first < windowMs) {
        return { accept: false, reply: REPLIES.greylisted(address) };
      }
    }
    for (const [key, reply] of Object.entries(this.spec.rcpt ?? {})) {
      if (!names(key, address)) continue;
      return isTwoXX(parseReply(reply).code) ? { accept: true } : { accept: false, reply };
    }
    if (this.spec.acceptAll === true || this.isMailbox(address)) return { accept: true };
    const lower = address.toLowerCase();
    if (this.catchAllDomains.has(lower.slice(lower.lastIndexOf('@') + 1))) return { accept: true };
    return { accept: false, reply: this.spec.rejectOthers ?? REPLIES.unknownUser(address) };
  }

  /** The exact 2xx reply configured for this recipient, if any (the raw responder sends it instead of 250). */
  rcptSuccessReply(address: string): Reply | undefined {
    for (const [key, reply] of Object.entries(this.spec.rcpt ?? {})) {
      if (names(key, address)) return isTwoXX(parseReply(reply).code) ? reply : undefined;
    }
    return undefined;
  }

  /** As `names` over every entry of `mailboxes`, in constant time (benchmark labs hold thousands). */
  private isMailbox(address: string): boolean {
    const lower = address.toLowerCase();
    return this.fullMailboxes.has(lower) || this.localMailboxes.has(localPartOf(lower));
  }

  private hit(list: ParsedTrigger[], stage: Stage, address?: string): boolean {
    return list.some(
      (t) => t.stage === stage && (t.who === undefined || (address !== undefined && names(t.who, address))),
    );
  }
}

/** Counters of one server, updated from the bytes received (so both engines count alike). */
export interface Counters {
  /** Connections accepted. */
  connections: number;
  /** Connections open now. */
  open: number;
  /** The most connections open at once (since the start or the last reset). */
  maxConcurrent: number;
  /** Command lines received (split on LF, as the servers do). */
  commands: number;
  /** MAIL commands received. */
  transactions: number;
  /** RCPT commands received. */
  rcpts: number;
  /** DATA (or BDAT) commands received: the engine must never send one. */
  data: number;
}

export function zeroCounters(): Counters {
  return { connections: 0, open: 0, maxConcurrent: 0, commands: 0, transactions: 0, rcpts: 0, data: 0 };
}

const CRLF = Buffer.from('\r\n');

/**
 * The transcript of one connection: every line received, as the exact bytes between CRLFs (a bare CR, a bare LF or
 * a NUL stays inside its line, visible), the unterminated rest, and the index of the first line received over TLS.
 */
export class ConnectionRecord {
  readonly lines: Buffer[] = [];
  /** Index in `lines` of the first line received after the TLS handshake. */
  secureFrom: number | undefined;
  private pending: Buffer;
  private commandPending: Buffer;

  constructor(
    private readonly counters: Counters,
    carried?: ConnectionRecord,
  ) {
    this.pending = carried?.pending ?? Buffer.alloc(0);
    this.commandPending = carried?.commandPending ?? Buffer.alloc(0);
    if (carried?.secureFrom !== undefined) this.secureFrom = 0;
  }

  /** Bytes received and not yet terminated by CRLF. */
  get partial(): Buffer {
    return this.pending;
  }

  feed(chunk: Buffer): void {
    let data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    for (let end = data.indexOf(CRLF); end >= 0; end = data.indexOf(CRLF)) {
      this.lines.push(Buffer.from(data.subarray(0, end)));
      data = data.subarray(end + 2);
    }
    this.pending = Buffer.from(data);
    // The counters follow the servers' own framing: commands end at LF, with an optional CR before it.
    let commands = this.commandPending.length === 0 ? chunk : Buffer.concat([this.commandPending, chunk]);
    for (let end = commands.indexOf(0x0a); end >= 0; end = commands.indexOf(0x0a)) {
      this.count(commands.subarray(0, end));
      commands = commands.subarray(end + 1);
    }
    this.commandPending = Buffer.from(commands);
  }

  markSecure(): void {
    this.secureFrom ??= this.lines.length;
  }

  private count(line: Buffer): void {
    const verb = /^\s*([A-Za-z]+)/.exec(line.toString('latin1'))?.[1]?.toUpperCase();
    this.counters.commands++;
    if (verb === 'MAIL') this.counters.transactions++;
    else if (verb === 'RCPT') this.counters.rcpts++;
    else if (verb === 'DATA' || verb === 'BDAT') this.counters.data++;
  }
}

/** What an engine needs from the lab for one connection. */
export interface ConnectionContext {
  readonly behaviour: Behaviour;
  readonly remoteAddress: string;
  /** The self-signed key and certificate, when the server offers STARTTLS. */
  readonly tls: { key: Buffer; cert: Buffer } | undefined;
  /** Records what arrives on `socket` (the TLS socket after STARTTLS). */
  tap(socket: Socket | TLSSocket): void;
  untap(): void;
  /** A new socket of this connection (the TLS one), to be destroyed by close. */
  track(socket: Socket | TLSSocket): void;
  /** A timer that close cancels, unref'd so that it never keeps the process alive. */
  schedule(ms: number, run: () => void): void;
}

interface QueuedLine {
  text: string;
  /** It arrived while a reply to an earlier command was still owed. */
  early: boolean;
}

interface Step {
  reply?: string;
  after?: 'close' | 'starttls';
}

/** What the session puts on the wire, in order: bytes, the close after a reply, the switch to TLS, a hard drop. */
type Output = { write: string } | { end: true } | { upgrade: true } | { destroy: true };

const MAX_PENDING = 1024 * 1024;

/**
 * The raw responder: one SMTP session on a socket. Commands end at LF (a CR before it is dropped), as in smtp-server
 * and Postfix; several may arrive in one chunk (pipelining) or one across chunks. They are answered strictly in
 * order: a delayed reply (`delayMs`) holds back the commands behind it. `replyDelayMs` is different: a delay line
 * after the session, which holds nothing back, so that it behaves like a network round trip.
 */
export class RawSmtpSession {
  private socket: Socket | TLSSocket;
  private pending: Buffer = Buffer.alloc(0);
  private readonly queue: QueuedLine[] = [];
  /** A reply is being delayed, the greeting is not out yet, or TLS is being negotiated. */
  private busy = true;
  private frozen = false;
  private ended = false;
  private refused = false;
  private upgradePending = false;
  private helo = false;
  private secure = false;
  private transaction = false;
  private smtputf8Transaction = false;
  private readonly accepted = new Set<string>();
  private readonly onData = (chunk: Buffer): void => this.receive(chunk);
  private readonly replyDelayMs: number;
  /** Outputs gathered while a batch of commands is answered; they enter the delay line as one write. */
  private batch: Output[] | undefined;
  /** The delay line: groups of outputs, oldest first, each with its own timer. */
  private readonly line: Output[][] = [];

  constructor(
    socket: Socket,
    private readonly ctx: ConnectionContext,
  ) {
    this.socket = socket;
    this.replyDelayMs = ctx.behaviour.spec.replyDelayMs ?? 0;
  }

  /** `overLimit`: the server already has its `maxConnections` open; this one is refused with 421. */
  start(overLimit = false): void {
    const { behaviour } = this.ctx;
    this.socket.on('data', this.onData);
    this.socket.once('close', () => {
      this.ended = true;
    });
    if (behaviour.drop('greeting')) return this.batched(() => this.destroy());
    if (behaviour.silent('greeting')) {
      this.frozen = true;
      return;
    }
    const greeting: Step = overLimit
      ? this.greetingStep(REPLIES.tooManyConnections)
      : behaviour.garbage('greeting')
        ? { reply: `${REPLIES.garbage}\r\n` }
        : this.greetingStep(behaviour.spec.greeting ?? REPLIES.greeting(behaviour.host));
    if (behaviour.omit('greeting')) delete greeting.reply;
    if (behaviour.extra('greeting')) greeting.reply = `${greeting.reply ?? ''}${REPLIES.unsolicited}\r\n`;
    this.batched(() => {
      this.later(behaviour.delay('greeting'), () => this.perform(greeting));
      this.pump(); // commands that arrived before the greeting (an early talker), once it is out
    });
  }

  private greetingStep(reply: Reply): Step {
    const { code, wire } = parseReply(reply);
    if (code === 421) return { reply: wire, after: 'close' };
    if (code !== undefined && code >= 400) this.refused = true;
    return { reply: wire };
  }

  private receive(chunk: Buffer): void {
    let data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let owed = this.busy || this.queue.length > 0;
    for (let end = data.indexOf(0x0a); end >= 0; end = data.indexOf(0x0a)) {
      let line = data.subarray(0, end);
      if (line[line.length - 1] === 0x0d) line = line.subarray(0, -1);
      this.queue.push({ text: line.toString('utf8'), early: owed });
      owed = true;
      data = data.subarray(end + 1);
    }
    this.pending = Buffer.from(data);
    if (this.pending.length > MAX_PENDING) {
      this.frozen = true;
      this.socket.destroy();
      return;
    }
    this.batched(() => this.pump());
  }

  /** Answers the queued commands in order, until one is delayed or the session stops. */
  private pump(): void {
    if (!this.busy && !this.frozen && !this.ended && this.queue.length > 0) {
      // The replies to a pipelined batch leave together, as one write.
      this.socket.cork();
      try {
        while (!this.busy && !this.frozen && !this.ended && this.queue.length > 0) {
          const line = this.queue.shift() as QueuedLine;
          this.command(line);
        }
      } finally {
        this.socket.uncork();
      }
    }
    if (this.upgradePending && !this.ended) this.upgrade();
  }

  /** Runs `answer` with its outputs gathered, so that they enter the delay line together (one write). */
  private batched(answer: () => void): void {
    if (this.replyDelayMs <= 0 || this.batch !== undefined) return answer();
    const batch: Output[] = [];
    this.batch = batch;
    try {
      answer();
    } finally {
      this.batch = undefined;
    }
    if (batch.length === 0 || this.ended) return;
    this.line.push(batch);
    // Every group waits the same time, so the k-th timer to fire delivers the k-th group: byte order is kept.
    this.ctx.schedule(this.replyDelayMs, () => this.deliver(this.line.shift() ?? []));
  }

  /** Puts one output on the wire now, or into the delay line's current group. */
  private output(item: Output): void {
    if (this.batch !== undefined) this.batch.push(item);
    else this.deliver([item]);
  }

  private deliver(items: Output[]): void {
    if (this.ended) return;
    const bytes = items.map((item) => ('write' in item ? item.write : '')).join('');
    if (bytes !== '') this.socket.write(bytes);
    for (const item of items) {
      if ('end' in item) this.socket.end();
      else if ('destroy' in item) {
        // The replies already answered in this pipelined batch leave first, as a real server's would.
        while (this.socket.writableCorked > 0) this.socket.uncork();
        this.socket.destroy();
      } else if ('upgrade' in item) this.upgradePending = true;
    }
    if (this.upgradePending && this.replyDelayMs > 0) this.upgrade();
  }

  private command({ text, early }: QueuedLine): void {
    const { behaviour } = this.ctx;
    const verb = (/^\S*/.exec(text)?.[0] ?? '').toUpperCase();
    const stage = stageOf(verb);
    const address = stage === 'rcpt' ? parsePath(text, 'RCPT TO')?.address : undefined;
    if (stage !== undefined) {
      if (behaviour.drop(stage, address)) return this.destroy();
      if (behaviour.silent(stage, address)) {
        this.frozen = true;
        return;
      }
    }
    const step =
      stage !== undefined && behaviour.garbage(stage, address)
        ? { reply: `${REPLIES.garbage}\r\n` }
        : this.answer(verb, text, early);
    if (step.reply !== undefined && behaviour.spec.doubleReplies === true) step.reply += step.reply;
    if (stage !== undefined && behaviour.omit(stage, address)) delete step.reply;
    if (stage !== undefined && behaviour.extra(stage, address)) {
      step.reply = `${step.reply ?? ''}${REPLIES.unsolicited}\r\n`;
    }
    this.later(stage === undefined ? 0 : behaviour.delay(stage, address), () => this.perform(step));
  }

  /** The reply to one command, and the state change it brings. */
  private answer(verb: string, text: string, early: boolean): Step {
    const { behaviour } = this.ctx;
    const reply = (r: Reply): Step => {
      const { code, wire } = parseReply(r);
      return code === 421 ? { reply: wire, after: 'close' } : { reply: wire };
    };
    if (verb === 'QUIT') return { reply: `${REPLIES.quit}\r\n`, after: 'close' };
    if (this.refused) return reply(REPLIES.afterRefusal);
    if (early && behaviour.spec.strictSync === true && !behaviour.pipelining) {
      return { reply: `${REPLIES.syncError}\r\n`, after: 'close' };
    }
    const argument = text.slice(verb.length).trim();
    switch (verb) {
      case 'EHLO': {
        if (argument === '' || /\s/.test(argument)) return reply(REPLIES.ehloSyntax);
        this.resetTransaction();
        if (behaviour.spec.ehlo !== undefined) {
          this.helo = isTwoXX(parseReply(behaviour.spec.ehlo).code);
          return reply(behaviour.spec.ehlo);
        }
        this.helo = true;
        return { reply: this.ehloReply() };
      }
      case 'HELO':
        if (argument === '' || /\s/.test(argument)) return reply(REPLIES.heloSyntax);
        this.resetTransaction();
        this.helo = true;
        return reply(`250 ${REPLIES.ehloGreeting(behaviour.host, this.ctx.remoteAddress)}`);
      case 'MAIL': {
        if (!this.helo) return reply(REPLIES.heloFirst);
        const path = parsePath(text, 'MAIL FROM');
        if (path === undefined) return reply(REPLIES.badSender);
        if (this.transaction) return reply(REPLIES.nestedMail);
        const custom = behaviour.mail(path.address, path.parameters);
        if (custom !== undefined && !isTwoXX(parseReply(custom).code)) return reply(custom);
        this.transaction = true;
        this.smtputf8Transaction = path.parameters.some((p) => p.toUpperCase() === 'SMTPUTF8');
        return reply(custom ?? REPLIES.mailOk);
      }
      case 'RCPT': {
        if (!this.helo) return reply(REPLIES.heloFirst);
        if (!this.transaction) return reply(REPLIES.needMail);
        const path = parsePath(text, 'RCPT TO');
        if (path === undefined) return reply(REPLIES.badRecipient);
        const key = path.address.toLowerCase();
        const max = behaviour.spec.maxRecipients;
        if (max !== undefined && this.accepted.size >= max && !this.accepted.has(key)) {
          return reply(REPLIES.tooManyRecipients);
        }
        const decision = behaviour.rcpt(path.address, this.smtputf8Transaction, this.ctx.remoteAddress);
        if (!decision.accept) return reply(decision.reply);
        this.accepted.add(key);
        return reply(behaviour.rcptSuccessReply(path.address) ?? REPLIES.rcptOk);
      }
      case 'RSET': {
        const custom = behaviour.spec.rset;
        if (custom === undefined || isTwoXX(parseReply(custom).code)) this.resetTransaction();
        return reply(custom ?? REPLIES.rset);
      }
      case 'NOOP':
        return reply(REPLIES.noop);
      case 'VRFY':
        return reply(REPLIES.vrfy);
      case 'DATA':
      case 'BDAT':
        return reply(this.helo ? REPLIES.data : REPLIES.heloFirst);
      case 'STARTTLS':
        if (!behaviour.starttls) return reply(REPLIES.unknownCommand);
        if (this.secure) return reply(REPLIES.tlsActive);
        return { reply: `${REPLIES.starttls}\r\n`, after: 'starttls' };
      default:
        return reply(REPLIES.unknownCommand);
    }
  }

  private ehloReply(): string {
    const { behaviour } = this.ctx;
    const lines = [REPLIES.ehloGreeting(behaviour.host, this.ctx.remoteAddress)];
    if (behaviour.pipelining) lines.push('PIPELINING');
    lines.push('8BITMIME');
    if (behaviour.smtputf8) lines.push('SMTPUTF8');
    lines.push('ENHANCEDSTATUSCODES');
    if (behaviour.starttls && !this.secure) lines.push('STARTTLS');
    lines.push(`SIZE ${MAX_MESSAGE_SIZE}`);
    return lines.map((line, i) => `250${i === lines.length - 1 ? ' ' : '-'}${line}\r\n`).join('');
  }

  private resetTransaction(): void {
    this.transaction = false;
    this.smtputf8Transaction = false;
    this.accepted.clear();
  }

  /** Runs `step` now, or after `ms` with the queue held back meanwhile. */
  private later(ms: number, run: () => void): void {
    if (ms <= 0) {
      this.busy = false;
      run();
      return;
    }
    this.busy = true;
    this.ctx.schedule(ms, () =>
      this.batched(() => {
        this.busy = false;
        run();
        this.pump();
      }),
    );
  }

  private perform(step: Step): void {
    if (this.ended) return;
    if (step.reply !== undefined) this.output({ write: step.reply });
    if (step.after === 'close') {
      this.frozen = true;
      this.output({ end: true });
    } else if (step.after === 'starttls') {
      // Whatever was pipelined behind STARTTLS arrived in plaintext: dropped, as smtp-server does (RFC 3207 5).
      this.queue.length = 0;
      this.pending = Buffer.alloc(0);
      this.busy = true;
      this.output({ upgrade: true });
    }
  }

  /** Wraps the socket in TLS, once the 220 reply has left the (uncorked) socket. */
  private upgrade(): void {
    this.upgradePending = false;
    // Plaintext that arrived while the 220 was in the delay line is dropped too.
    this.queue.length = 0;
    this.pending = Buffer.alloc(0);
    const tls = this.ctx.tls;
    const raw = this.socket as Socket;
    raw.off('data', this.onData);
    this.ctx.untap();
    if (tls === undefined) return this.destroy();
    const secure = new TLSSocket(raw, { isServer: true, key: tls.key, cert: tls.cert });
    this.ctx.track(secure);
    secure.on('error', () => secure.destroy());
    secure.once('secure', () => {
      this.socket = secure;
      this.secure = true;
      this.helo = false; // RFC 3207 4.2: the client starts over with EHLO
      this.resetTransaction();
      this.ctx.tap(secure);
      secure.on('data', this.onData);
      this.busy = false;
      this.pump();
    });
  }

  /** Drops the connection (after whatever is still in the delay line). */
  private destroy(): void {
    this.frozen = true;
    this.output({ destroy: true });
  }
}

function stageOf(verb: string): Stage | undefined {
  switch (verb) {
    case 'EHLO':
    case 'HELO':
      return 'ehlo';
    case 'MAIL':
      return 'mail';
    case 'RCPT':
      return 'rcpt';
    case 'RSET':
      return 'rset';
    case 'QUIT':
      return 'quit';
    case 'STARTTLS':
      return 'starttls';
    default:
      return undefined;
  }
}

/**
 * `MAIL FROM:<path> params` / `RCPT TO:<path> params`. Lenient: spaces are allowed around the colon and inside the
 * brackets (a quoted local part); a source route is dropped.
 */
export function parsePath(
  line: string,
  command: 'MAIL FROM' | 'RCPT TO',
): { address: string; parameters: string[] } | undefined {
  const head = new RegExp(`^${command.replace(' ', '\\s+')}\\s*:\\s*<`, 'i').exec(line);
  if (head === null) return undefined;
  const rest = line.slice(head[0].length);
  // The closing bracket: the first '>' outside a quoted string.
  let quoted = false;
  let end = -1;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === '>' && !quoted) {
      end = i;
      break;
    }
  }
  if (end < 0) return undefined;
  const address = rest.slice(0, end).replace(/^@[^:]*:/, '');
  const tail = rest.slice(end + 1);
  if (tail !== '' && !/^\s/.test(tail)) return undefined;
  if (command === 'RCPT TO' && address === '') return undefined;
  return { address, parameters: tail.trim() === '' ? [] : tail.trim().split(/\s+/) };
}
