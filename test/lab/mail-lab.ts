// The mail lab: the lab DNS server plus SMTP servers on loopback, built from a declarative scenario, for end-to-end
// tests and benchmarks of the engine. Every server has its own address 127.0.M.N (from 127.0.0.2 up) and all share
// one port, so the engine can be pointed at the lab with `smtp: { port: lab.port }`. See README.md ("Mail lab").
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { SMTPConnection, type SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';
import { startDnsServer, type LabDnsServer, type ZoneRecords, type Zones } from './dns-server.js';
import {
  Behaviour,
  ConnectionRecord,
  MAX_MESSAGE_SIZE,
  parseReply,
  parseTrigger,
  RawSmtpSession,
  REPLIES,
  SPEC_KEYS,
  smtpServerCanSend,
  startsWithEnhancedCode,
  zeroCounters,
  newSourceCounts,
  type SourceCounts,
  type ConnectionContext,
  type Counters,
  type GreylistEntry,
  type Reply,
  type ServerSpec,
} from './smtp-responder.js';

export { REPLIES, type Reply, type ServerSpec, type Stage, type Trigger } from './smtp-responder.js';

export type Engine = 'smtp-server' | 'raw';

/** A mail exchanger of a domain: a server name (or `refused`), or one with an explicit MX preference. */
export type Exchanger = string | { server: string; priority: number };

/**
 * A domain: its exchangers in preference order (MX 10, 20, ...), or raw zone records for the lab DNS server (a
 * null MX, NXDOMAIN, SERVFAIL, a CNAME, a delay...). `[]` is a domain that exists and has no MX.
 */
export type DomainSpec = Exchanger[] | ZoneRecords;

export interface MailLabScenario {
  /** The engine of every server that does not name its own (e.g. 'raw' for benchmarks: no 100 ms greeting delay). */
  engine?: Engine;
  /** The `replyDelayMs` of every server that does not set its own (raw responder only; 0 leaves it off). */
  replyDelayMs?: number;
  /** A DNS answer delay put on every zone the lab builds (its own `delayMs` wins), e.g. for benchmarks. */
  dnsDelayMs?: number;
  /** The SMTP port every server listens on (e.g. 25, for clients that hard-code it). Default: a free port. */
  port?: number;
  servers?: Record<string, ServerSpec>;
  domains?: Record<string, DomainSpec>;
}

/** A connection's counters (see `Counters`); `stats()` without a name sums them over every server. */
export type ServerStats = Counters;

/** One connection's transcript, in detail. */
export interface ConnectionTranscript {
  /** Each line received, exactly, without its CRLF (a bare CR, LF or NUL stays inside the line). */
  raw: Buffer[];
  /** The same lines decoded as UTF-8. */
  lines: string[];
  /** Bytes received after the last CRLF (empty when the client ended its last line properly). */
  partial: Buffer;
  /** Index of the first line received over TLS, after STARTTLS. */
  secureFrom: number | undefined;
}

export interface MailLab {
  /** "127.0.0.1:PORT", for `dns.servers`. */
  readonly dnsAddress: string;
  /** The lab DNS server itself (query log, `setZones`...). */
  readonly dns: LabDnsServer;
  /** The SMTP port every server listens on. */
  readonly port: number;
  /** The server names, in address order. */
  readonly servers: readonly string[];
  /** The loopback address of a server, or of `refused` (where nothing listens). */
  addressOf(name: string): string;
  /** Its host name, `NAME.mx.lab.test`, which the lab DNS resolves to `addressOf(name)`. */
  hostOf(name: string): string;
  /** Which implementation serves new connections of a server. */
  engineOf(name: string): Engine;
  /** Every line each connection sent, per connection in order of arrival, decoded as UTF-8. */
  transcript(name: string): string[][];
  /** The same in detail: exact bytes, the unterminated rest, where TLS began. */
  connections(name: string): ConnectionTranscript[];
  /** The counters of one server, or summed over all (then `maxConcurrent` is the lab-wide peak). */
  stats(name?: string): ServerStats;
  /** The source address of each connection a server accepted, in order of arrival (as `transcript`). */
  peers(name: string): string[];
  /**
   * The RCPTs each source address sent to a `sourceLimit` group (a server's name when it names no group), and how many
   * of them got the limit's reply.
   */
  sourceStats(group: string): { asked: Record<string, number>; limited: Record<string, number> };
  /** Replaces a server's behaviour for the connections opened afterwards (greylist state is kept). */
  setServer(name: string, spec: ServerSpec): void;
  /** Replaces the DNS data of the domains. */
  setDomains(domains: Record<string, DomainSpec>): void;
  /** Clears transcripts, counters, greylist state and the DNS query log. Open connections carry on. */
  reset(): void;
  /** Closes every server, connection, pending reply and the DNS server; resolves when no handle is left. */
  close(): Promise<void>;
}

/** The built-in exchanger name for an address where nothing listens (connection refused). */
export const REFUSED = 'refused';
export const HOST_SUFFIX = 'mx.lab.test';

const BIND_ATTEMPTS = 10;
/** Enough for large benchmark labs; the addresses run 127.0.0.2 ... 127.0.0.254, 127.0.1.1 ... */
const MAX_ADDRESSES = 10_000;
const SMTP_SERVER_DELAYS = new Set(['greeting', 'mail', 'rcpt']);
const NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TLS_DIR = new URL('./tls/', import.meta.url);

let tlsMaterial: { key: Buffer; cert: Buffer } | undefined;

/** The self-signed test certificate (test/lab/tls), read once. */
function loadTls(): { key: Buffer; cert: Buffer } {
  if (tlsMaterial !== undefined) return tlsMaterial;
  try {
    tlsMaterial = {
      key: readFileSync(new URL('localhost-key.pem', TLS_DIR)),
      cert: readFileSync(new URL('localhost-cert.pem', TLS_DIR)),
    };
  } catch (error) {
    throw new Error(
      `mail lab: STARTTLS needs test/lab/tls/localhost-{key,cert}.pem (see test/lab/tls/README.md): ${String(error)}`,
    );
  }
  return tlsMaterial;
}

// ----------------------------------------------------------------------------------------------------------------
// Scenario checks

function fail(what: string): never {
  throw new Error(`mail lab: ${what}`);
}

function checkReply(where: string, reply: unknown): void {
  if (typeof reply !== 'string' || reply.trim() === '') fail(`${where} must be a non-empty reply string`);
}

function checkDelay(where: string, ms: unknown): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) fail(`${where} must be a number >= 0`);
}

/**
 * The i-th lab address (0: 127.0.0.2). Host numbers run 1..254 in each 127.0.M.0/24, skipping 127.0.0.1, which
 * the DNS server holds. All of 127.0.0.0/8 is loopback (RFC 1122 3.2.1.3).
 */
function labAddress(index: number): string {
  const slot = index + 1;
  return `127.0.${Math.floor(slot / 254)}.${(slot % 254) + 1}`;
}

function checkSpec(name: string, spec: ServerSpec): void {
  const where = `server ${JSON.stringify(name)}`;
  if (typeof spec !== 'object' || spec === null) fail(`${where}: the spec must be an object`);
  for (const key of Object.keys(spec)) if (!SPEC_KEYS.has(key)) fail(`${where}: unknown option ${JSON.stringify(key)}`);
  if (spec.engine !== undefined && spec.engine !== 'smtp-server' && spec.engine !== 'raw') {
    fail(`${where}: engine must be 'smtp-server' or 'raw'`);
  }
  const { mailboxes } = spec;
  if (mailboxes !== undefined && !(Array.isArray(mailboxes) && mailboxes.every((m) => typeof m === 'string'))) {
    fail(`${where}: mailboxes must be an array of strings`);
  }
  for (const [key, reply] of Object.entries(spec.rcpt ?? {})) checkReply(`${where}: rcpt.${key}`, reply);
  for (const field of ['mail', 'greeting', 'ehlo', 'rset'] as const) {
    if (spec[field] !== undefined) checkReply(`${where}: ${field}`, spec[field]);
  }
  if (spec.greylist !== undefined && !(Number.isInteger(spec.greylist) && spec.greylist >= 0)) {
    fail(`${where}: greylist must be a whole number`);
  }
  if (spec.greylistMs !== undefined) checkDelay(`${where}: greylistMs`, spec.greylistMs);
  if (spec.replyDelayMs !== undefined) checkDelay(`${where}: replyDelayMs`, spec.replyDelayMs);
  if (spec.doubleReplies !== undefined && typeof spec.doubleReplies !== 'boolean') {
    fail(`${where}: doubleReplies must be true or false`);
  }
  if (spec.maxConnections !== undefined && !(Number.isInteger(spec.maxConnections) && spec.maxConnections >= 1)) {
    fail(`${where}: maxConnections must be a whole number from 1`);
  }
  const { sourceLimit } = spec;
  if (sourceLimit !== undefined) {
    if (!(Number.isInteger(sourceLimit.rcpts) && sourceLimit.rcpts >= 0)) fail(`${where}: sourceLimit.rcpts must be a whole number`);
    if (sourceLimit.windowMs !== undefined) checkDelay(`${where}: sourceLimit.windowMs`, sourceLimit.windowMs);
    checkReply(`${where}: sourceLimit.reply`, sourceLimit.reply);
  }
  if (spec.maxRecipients !== undefined && !(Number.isInteger(spec.maxRecipients) && spec.maxRecipients >= 1)) {
    fail(`${where}: maxRecipients must be a whole number from 1`);
  }
  for (const [key, ms] of Object.entries(spec.delayMs ?? {})) {
    if (parseTrigger(key) === undefined) fail(`${where}: unknown delayMs key ${JSON.stringify(key)}`);
    checkDelay(`${where}: delayMs.${key}`, ms);
  }
  for (const field of ['drop', 'silent', 'garbage', 'omit', 'extra'] as const) {
    const value = spec[field];
    if (value === undefined) continue;
    for (const trigger of Array.isArray(value) ? value : [value]) {
      if (typeof trigger !== 'string' || parseTrigger(trigger) === undefined) {
        fail(`${where}: ${field} has an unknown trigger ${JSON.stringify(trigger)}`);
      }
    }
  }
}

/** Why smtp-server cannot serve this spec exactly (empty when it can). */
function smtpServerObstacles(spec: ServerSpec): string[] {
  const obstacles: string[] = [];
  if (spec.greeting !== undefined) obstacles.push('a custom greeting');
  if (spec.ehlo !== undefined) obstacles.push('a custom EHLO reply');
  for (const field of ['drop', 'silent', 'garbage', 'omit', 'extra', 'rset'] as const) {
    if (spec[field] !== undefined) obstacles.push(field);
  }
  if (spec.doubleReplies === true) obstacles.push('doubleReplies');
  if (spec.maxConnections !== undefined) obstacles.push('maxConnections');
  if ((spec.replyDelayMs ?? 0) > 0) obstacles.push('replyDelayMs');
  if (spec.strictSync === true) obstacles.push('strictSync');
  if (spec.sourceLimit !== undefined) obstacles.push('sourceLimit');
  for (const key of Object.keys(spec.delayMs ?? {})) {
    const trigger = parseTrigger(key);
    if (trigger !== undefined && !SMTP_SERVER_DELAYS.has(trigger.stage)) obstacles.push(`delayMs.${key}`);
  }
  if (spec.rejectOthers !== undefined && !smtpServerCanSend(spec.rejectOthers)) {
    obstacles.push(`the RCPT reply ${JSON.stringify(spec.rejectOthers)}`);
  }
  if (spec.mail !== undefined && !smtpServerCanSend(spec.mail)) {
    obstacles.push(`the MAIL reply ${JSON.stringify(spec.mail)}`);
  }
  for (const [key, reply] of Object.entries(spec.rcpt ?? {})) {
    if (!smtpServerCanSend(reply)) obstacles.push(`the RCPT reply for ${key} ${JSON.stringify(reply)}`);
  }
  return obstacles;
}

function chooseEngine(name: string, spec: ServerSpec): Engine {
  const obstacles = smtpServerObstacles(spec);
  if (spec.engine === 'smtp-server' && obstacles.length > 0) {
    fail(`server ${JSON.stringify(name)}: smtp-server cannot do ${obstacles.join(', ')} (use engine 'raw')`);
  }
  return spec.engine ?? (obstacles.length === 0 ? 'smtp-server' : 'raw');
}

/** The scenario-wide defaults a server spec inherits. */
interface LabDefaults {
  engine?: Engine;
  replyDelayMs?: number;
}

function withDefaults(spec: ServerSpec, defaults: LabDefaults): ServerSpec {
  if (typeof spec !== 'object' || spec === null) return spec;
  const result = { ...spec };
  if (defaults.engine !== undefined && result.engine === undefined) result.engine = defaults.engine;
  if ((defaults.replyDelayMs ?? 0) > 0 && result.replyDelayMs === undefined) {
    result.replyDelayMs = defaults.replyDelayMs;
  }
  return result;
}

function hostOf(name: string): string {
  return `${name}.${HOST_SUFFIX}`;
}

function buildZones(
  addresses: ReadonlyMap<string, string>,
  servers: ReadonlySet<string>,
  domains: Record<string, DomainSpec>,
  dnsDelayMs: number,
): Zones {
  const zones = buildZoneRecords(addresses, servers, domains);
  if (dnsDelayMs > 0) {
    for (const [name, records] of Object.entries(zones)) zones[name] = { delayMs: dnsDelayMs, ...records };
  }
  return zones;
}

function buildZoneRecords(
  addresses: ReadonlyMap<string, string>,
  servers: ReadonlySet<string>,
  domains: Record<string, DomainSpec>,
): Zones {
  const zones: Zones = {};
  for (const [name, address] of addresses) zones[hostOf(name)] = { a: [address] };
  for (const [domain, spec] of Object.entries(domains)) {
    const key = domain.toLowerCase().replace(/\.$/, '');
    if (zones[key] !== undefined) fail(`domain ${JSON.stringify(domain)} is defined twice or is a lab host name`);
    if (!Array.isArray(spec)) {
      zones[key] = spec;
      continue;
    }
    const mx = spec.map((exchanger, i) => {
      const server = typeof exchanger === 'string' ? exchanger : exchanger.server;
      if (!servers.has(server) && server !== REFUSED) {
        fail(`domain ${JSON.stringify(domain)}: unknown exchanger ${JSON.stringify(server)}`);
      }
      const priority = typeof exchanger === 'string' ? (i + 1) * 10 : exchanger.priority;
      return { priority, exchange: hostOf(server) };
    });
    zones[key] = { mx };
  }
  return zones;
}

// ----------------------------------------------------------------------------------------------------------------
// Binding: one port, many loopback addresses

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function isInUse(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'EADDRINUSE';
}

/**
 * Listens on every address with one port: the given one, or else the first listener picks a free port and the rest
 * reuse it (retried if it is taken on a later address).
 */
async function listenAll(
  addresses: readonly string[],
  fixedPort: number,
): Promise<{ port: number; listeners: Server[] }> {
  for (let attempt = 1; ; attempt++) {
    const listeners: Server[] = [];
    try {
      let port = fixedPort;
      for (const address of addresses) {
        const server = createServer();
        await listen(server, address, port);
        listeners.push(server);
        port = (server.address() as AddressInfo).port;
      }
      if (listeners.length === 0 && port === 0) {
        // No server: still a port, for the `refused` address.
        const probe = createServer();
        await listen(probe, labAddress(0), 0);
        port = (probe.address() as AddressInfo).port;
        await closeServer(probe);
      }
      return { port, listeners };
    } catch (error) {
      await Promise.all(listeners.map(closeServer));
      if (!isInUse(error) || fixedPort !== 0 || attempt >= BIND_ATTEMPTS) throw error;
    }
  }
}

// ----------------------------------------------------------------------------------------------------------------
// Connections

/** One accepted connection, whatever the engine: its sockets, timers, transcript and counters. */
class LabConnection implements ConnectionContext {
  readonly sockets = new Set<Socket | TLSSocket>();
  readonly closed: Promise<void>;
  readonly remoteAddress: string;
  record: ConnectionRecord;
  private readonly timers = new Set<NodeJS.Timeout>();
  private tapped: { socket: Socket | TLSSocket; listener: (chunk: Buffer) => void } | undefined;
  private isClosed = false;
  private resolveClosed!: () => void;
  private readonly onRawClose = (): void => this.onClose();

  constructor(
    private readonly server: LabServer,
    readonly socket: Socket,
    readonly behaviour: Behaviour,
    readonly tls: { key: Buffer; cert: Buffer } | undefined,
  ) {
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.remoteAddress = socket.remoteAddress ?? '';
    this.record = server.newRecord(undefined, this.remoteAddress);
    this.sockets.add(socket);
    this.watch(socket);
    this.tap(socket);
  }

  /** (Re-)attaches the close and error listeners to the accepted socket (smtp-server's STARTTLS removes them). */
  watch(socket: Socket): void {
    socket.on('error', () => {});
    socket.once('close', this.onRawClose);
  }

  tap(socket: Socket | TLSSocket): void {
    this.untap();
    const listener = (chunk: Buffer): void => this.record.feed(chunk);
    socket.on('data', listener);
    this.tapped = { socket, listener };
    if (socket !== this.socket) this.record.markSecure();
  }

  untap(): void {
    if (this.tapped === undefined) return;
    this.tapped.socket.off('data', this.tapped.listener);
    this.tapped = undefined;
  }

  track(socket: Socket | TLSSocket): void {
    this.sockets.add(socket);
    socket.on('error', () => {});
  }

  schedule(ms: number, run: () => void): void {
    if (this.isClosed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.isClosed) run();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  destroy(): void {
    this.cancelTimers();
    // The TLS socket first: it is the topmost one.
    for (const socket of [...this.sockets].reverse()) socket.destroy();
  }

  private cancelTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private onClose(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.cancelTimers();
    for (const socket of this.sockets) if (!socket.destroyed) socket.destroy();
    this.server.connectionClosed(this);
    this.resolveClosed();
  }
}

/** smtp-server's connection, with the two changes the lab needs. */
class LabSmtpConnection extends SMTPConnection {
  constructor(
    server: SMTPServer,
    socket: Socket,
    options: SMTPConnectionOptions,
    private readonly lab: LabConnection,
  ) {
    super(server, socket, options);
  }

  /** A reply text that already starts with an enhanced code (ours) does not get smtp-server's automatic one. */
  override send(code: number, data?: string | string[] | null, context?: string | false): void {
    const exact = context === undefined && typeof data === 'string' && startsWithEnhancedCode(data);
    super.send(code, data, exact ? false : context);
  }

  /** The engine must never send DATA: refuse it outright, without the 354 smtp-server would give. */
  override handler_DATA(_command: Buffer, callback: () => void): void {
    this.send(554, parseReply(REPLIES.data).texts[0] ?? '', false);
    callback();
  }

  /** STARTTLS: smtp-server strips every listener of the plain socket; put the lab's close watch back. */
  override upgrade(callback: () => void, secureCallback?: () => void): void {
    const plain = this._socket as Socket;
    super.upgrade(callback, secureCallback);
    this.lab.watch(plain);
  }
}

type Done = (err?: Error | null) => void;

function replyError(reply: Reply): Error {
  const { code, texts } = parseReply(reply);
  const error = new Error(texts.join('\n')) as Error & { responseCode?: number };
  error.responseCode = code;
  return error;
}

/** A real smtp-server, fed the sockets the lab accepts, answering from the server's `Behaviour`. */
class LabSmtpServer extends SMTPServer {
  private readonly sessions = new Map<string, LabConnection>();
  /**
   * Whether the open transaction of a session was started with SMTPUTF8. Not `session.envelope.smtpUtf8`:
   * smtp-server sets that before onMailFrom and never clears it, even when the MAIL is refused.
   */
  private readonly utf8 = new Map<string, boolean>();
  private nextId = 0;

  constructor(
    private readonly behaviour: Behaviour,
    tls: { key: Buffer; cert: Buffer } | undefined,
  ) {
    super({
      name: behaviour.host,
      size: MAX_MESSAGE_SIZE,
      logger: false,
      disableReverseLookup: true,
      authOptional: true,
      hideENHANCEDSTATUSCODES: false,
      hideSMTPUTF8: !behaviour.smtputf8,
      hidePIPELINING: !behaviour.pipelining,
      disabledCommands: behaviour.starttls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
      maxRecipients: behaviour.spec.maxRecipients,
      ...(behaviour.starttls && tls !== undefined ? { key: tls.key, cert: tls.cert } : {}),
    });
    this.on('error', () => {}); // client resets and failed handshakes: nothing to do, 'close' follows
  }

  /** What `connect()` does, with the lab's connection class. */
  adopt(socket: Socket, lab: LabConnection): void {
    const id = `lab${++this.nextId}`;
    this.sessions.set(id, lab);
    void lab.closed.then(() => {
      this.sessions.delete(id);
      this.utf8.delete(id);
    });
    const connection = new LabSmtpConnection(this, socket, { id }, lab);
    this.connections.add(connection);
    connection.on('error', (error: Error) => this._onError(error));
    connection.on('connect', (info) => this._onClientConnect(info));
    connection.init();
  }

  /** Runs `next` after the configured delay (on the connection's timers, so that close cancels it). */
  private after(session: SMTPServerSession, ms: number, next: () => void): void {
    const lab = this.sessions.get(session.id);
    if (ms > 0 && lab !== undefined) lab.schedule(ms, next);
    else next();
  }

  override onConnect(session: SMTPServerSession, callback: Done): void {
    this.after(session, this.behaviour.delay('greeting'), () => callback());
  }

  override onSecure(socket: Socket | TLSSocket, session: SMTPServerSession, callback: Done): void {
    const lab = this.sessions.get(session.id);
    if (lab !== undefined) {
      lab.track(socket);
      lab.tap(socket); // before callback(): smtp-server pipes the socket into its parser right after
    }
    callback();
  }

  override onMailFrom(address: SMTPServerAddress, session: SMTPServerSession, callback: Done): void {
    const parameters = Object.keys(address.args || {});
    const reply = this.behaviour.mail(address.address, parameters);
    this.after(session, this.behaviour.delay('mail'), () => {
      if (reply === undefined) this.utf8.set(session.id, parameters.includes('SMTPUTF8'));
      callback(reply === undefined ? null : replyError(reply));
    });
  }

  override onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: Done): void {
    const decision = this.behaviour.rcpt(address.address, this.utf8.get(session.id) === true, session.remoteAddress);
    this.after(session, this.behaviour.delay('rcpt', address.address), () =>
      callback(decision.accept ? null : replyError(decision.reply)),
    );
  }

  /** Unreachable (handler_DATA refuses), but never accept a message. */
  override onData(stream: SMTPServerDataStream, _session: SMTPServerSession, callback: Done): void {
    stream.resume();
    stream.once('end', () => callback(replyError(REPLIES.data)));
  }
}

// ----------------------------------------------------------------------------------------------------------------
// Servers and the lab

class LabServer {
  readonly counters = zeroCounters();
  records: ConnectionRecord[] = [];
  /** The source address of each record's connection. */
  peers: string[] = [];
  readonly live = new Set<LabConnection>();
  readonly greylist = new Map<string, GreylistEntry>();
  behaviour!: Behaviour;
  engine!: Engine;
  private smtp: LabSmtpServer | undefined;
  private tls: { key: Buffer; cert: Buffer } | undefined;

  constructor(
    private readonly lab: Lab,
    readonly name: string,
    readonly address: string,
    readonly listener: Server,
    spec: ServerSpec,
  ) {
    this.configure(spec);
    listener.on('connection', (socket: Socket) => this.accept(socket));
    listener.on('error', () => {});
  }

  configure(given: ServerSpec): void {
    const spec = withDefaults(given, this.lab.defaults);
    checkSpec(this.name, spec);
    const engine = chooseEngine(this.name, spec);
    const behaviour = new Behaviour({ ...spec }, hostOf(this.name), this.greylist, this.lab.sourceCounts(spec.sourceLimit?.group ?? this.name));
    const tls = behaviour.starttls ? loadTls() : undefined;
    this.behaviour = behaviour;
    this.engine = engine;
    this.tls = tls;
    this.smtp = engine === 'smtp-server' ? new LabSmtpServer(behaviour, tls) : undefined;
  }

  newRecord(carried?: ConnectionRecord, peer = ''): ConnectionRecord {
    const record = new ConnectionRecord(this.counters, carried);
    this.records.push(record);
    this.peers.push(peer);
    return record;
  }

  private accept(socket: Socket): void {
    if (this.lab.isClosing) {
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    const limit = this.behaviour.spec.maxConnections;
    const overLimit = limit !== undefined && this.counters.open >= limit;
    const connection = new LabConnection(this, socket, this.behaviour, this.tls);
    this.live.add(connection);
    this.counters.connections++;
    this.counters.open++;
    this.counters.maxConcurrent = Math.max(this.counters.maxConcurrent, this.counters.open);
    this.lab.connectionOpened();
    if (this.smtp !== undefined) this.smtp.adopt(socket, connection);
    else new RawSmtpSession(socket, connection).start(overLimit);
  }

  connectionClosed(connection: LabConnection): void {
    if (!this.live.delete(connection)) return;
    this.counters.open--;
    this.lab.connectionClosed();
  }

  reset(): void {
    const open = this.counters.open;
    Object.assign(this.counters, zeroCounters(), { open, maxConcurrent: open });
    this.greylist.clear();
    this.records = [];
    this.peers = [];
    // Open connections go on recording, into fresh transcripts.
    for (const connection of this.live) connection.record = this.newRecord(connection.record, connection.remoteAddress);
  }
}

class Lab implements MailLab {
  readonly dnsAddress: string;
  readonly servers: readonly string[];
  isClosing = false;
  private open = 0;
  private maxOpen = 0;
  private closing: Promise<void> | undefined;
  private readonly sources = new Map<string, SourceCounts>();

  constructor(
    readonly dns: LabDnsServer,
    readonly port: number,
    private readonly byName: Map<string, LabServer>,
    private readonly addresses: Map<string, string>,
    servers: readonly string[],
    readonly defaults: LabDefaults,
    private readonly dnsDelayMs: number,
  ) {
    this.dnsAddress = dns.address;
    this.servers = servers;
  }

  addressOf(name: string): string {
    const address = this.addresses.get(name);
    if (address === undefined) fail(`no server ${JSON.stringify(name)}`);
    return address;
  }

  hostOf(name: string): string {
    this.addressOf(name);
    return hostOf(name);
  }

  engineOf(name: string): Engine {
    return this.server(name).engine;
  }

  transcript(name: string): string[][] {
    return this.connections(name).map(({ lines, partial }) =>
      partial.length > 0 ? [...lines, partial.toString('utf8')] : lines,
    );
  }

  connections(name: string): ConnectionTranscript[] {
    return this.server(name).records.map((record) => ({
      raw: record.lines.map((line) => Buffer.from(line)),
      lines: record.lines.map((line) => line.toString('utf8')),
      partial: Buffer.from(record.partial),
      secureFrom: record.secureFrom,
    }));
  }

  stats(name?: string): ServerStats {
    if (name !== undefined) return { ...this.server(name).counters };
    const total = zeroCounters();
    for (const server of this.byName.values()) {
      for (const key of Object.keys(total) as Array<keyof Counters>) total[key] += server.counters[key];
    }
    total.maxConcurrent = this.maxOpen;
    return total;
  }

  setServer(name: string, spec: ServerSpec): void {
    this.server(name).configure(spec);
  }

  setDomains(domains: Record<string, DomainSpec>): void {
    this.dns.setZones(buildZones(this.addresses, new Set(this.byName.keys()), domains, this.dnsDelayMs));
  }

  peers(name: string): string[] {
    return [...this.server(name).peers];
  }

  sourceStats(group: string): { asked: Record<string, number>; limited: Record<string, number> } {
    const counts = this.sources.get(group);
    return { asked: Object.fromEntries(counts?.asked ?? []), limited: Object.fromEntries(counts?.limited ?? []) };
  }

  /** The per-source counts of a `sourceLimit` group (a server's name when it names none), made on first use. */
  sourceCounts(group: string): SourceCounts {
    let counts = this.sources.get(group);
    if (counts === undefined) this.sources.set(group, (counts = newSourceCounts()));
    return counts;
  }

  reset(): void {
    for (const server of this.byName.values()) server.reset();
    for (const counts of this.sources.values()) for (const map of [counts.times, counts.asked, counts.limited]) map.clear();
    this.maxOpen = this.open;
    this.dns.queries.splice(0);
  }

  connectionOpened(): void {
    this.open++;
    this.maxOpen = Math.max(this.maxOpen, this.open);
  }

  connectionClosed(): void {
    this.open--;
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.isClosing = true;
    const done: Array<Promise<void>> = [this.dns.close()];
    for (const server of this.byName.values()) {
      done.push(closeServer(server.listener));
      for (const connection of server.live) {
        done.push(connection.closed);
        connection.destroy();
      }
    }
    await Promise.all(done);
    // As in the DNS server: libuv releases closed handles in the loop's close phase, after the callbacks above.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }

  private server(name: string): LabServer {
    const server = this.byName.get(name);
    if (server === undefined) fail(`no server ${JSON.stringify(name)}`);
    return server;
  }
}

/**
 * Starts the lab: one SMTP server per entry of `servers` (127.0.0.2, 127.0.0.3... in order, one shared port),
 * the `refused` address after them, and a DNS server on 127.0.0.1 with an A record per server
 * (`NAME.mx.lab.test`) and the domains' MX records.
 */
export async function startMailLab(scenario: MailLabScenario): Promise<MailLab> {
  const { engine, replyDelayMs, dnsDelayMs = 0, port: fixedPort = 0 } = scenario;
  if (engine !== undefined && engine !== 'smtp-server' && engine !== 'raw') {
    fail("engine must be 'smtp-server' or 'raw'");
  }
  if (replyDelayMs !== undefined) checkDelay('replyDelayMs', replyDelayMs);
  checkDelay('dnsDelayMs', dnsDelayMs);
  if (!(Number.isInteger(fixedPort) && fixedPort >= 0 && fixedPort <= 65535)) fail('port must be 0 to 65535');
  const defaults: LabDefaults = { engine, replyDelayMs };
  const specs = Object.entries(scenario.servers ?? {}).map(
    ([name, spec]) => [name, withDefaults(spec, defaults)] as const,
  );
  if (specs.length + 1 > MAX_ADDRESSES) fail(`too many servers (at most ${MAX_ADDRESSES - 1})`);
  const addresses = new Map<string, string>();
  specs.forEach(([name, spec], i) => {
    if (!NAME_PATTERN.test(name)) fail(`server name ${JSON.stringify(name)} must be a lower-case DNS label`);
    checkSpec(name, spec);
    chooseEngine(name, spec);
    if (spec.starttls === true) loadTls(); // fail before binding anything
    addresses.set(name, labAddress(i));
  });
  if (!addresses.has(REFUSED)) addresses.set(REFUSED, labAddress(specs.length));
  const zones = buildZones(addresses, new Set(specs.map(([name]) => name)), scenario.domains ?? {}, dnsDelayMs);

  // Nothing listens on `refused`'s address at this port: every lab binds its first server on 127.0.0.2, so no
  // other lab can hold this port, and a wildcard listener could not have bound it either.
  const { port, listeners } = await listenAll(
    specs.map(([name]) => addresses.get(name) as string),
    fixedPort,
  );
  let dns: LabDnsServer;
  try {
    dns = await startDnsServer(zones);
  } catch (error) {
    await Promise.all(listeners.map(closeServer));
    throw error;
  }
  const byName = new Map<string, LabServer>();
  const lab = new Lab(dns, port, byName, addresses, specs.map(([name]) => name), defaults, dnsDelayMs);
  specs.forEach(([name, spec], i) => {
    byName.set(name, new LabServer(lab, name, addresses.get(name) as string, listeners[i] as Server, spec));
  });
  return lab;
}
