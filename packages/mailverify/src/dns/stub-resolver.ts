/**
 * The default resolver: a stub resolver (RFC 1035 §7) on `dns-packet` that asks the configured recursive servers.
 *
 * - UDP first, over a few sockets per server shared by the queries in flight; each query has a cryptographically
 *   random id, unique on its socket, and each socket serves a bounded number of queries before a fresh one (a new
 *   random source port) takes its place (RFC 5452 §9.2). A lost datagram is sent again within the deadline, with a
 *   doubling interval (RFC 1035 §4.2.1, RFC 1536 §1), each retransmission going to the next server (RFC 1035 §7.2).
 * - A response counts only when it comes from the server asked (the sockets are connected) and matches the query's
 *   id and question (RFC 5452 §9.1); anything else is ignored as a possible forgery.
 * - A truncated answer (TC) is asked again over TCP (RFC 1035 §4.2.2, RFC 7766 §5).
 * - SERVFAIL, REFUSED and NOTIMP, or a server that cannot be reached, move the query on to the next server.
 * - Every record comes with its TTL, MX records included (Node's own resolver reports none for them).
 * - Failures reject with Node's DNS error codes, so that callers read this resolver and Node's alike; the errors of
 *   answers about the name (NXDOMAIN, NODATA), common in a list, are made without a stack trace.
 *
 * Every timer and TCP socket of a query is released when its promise settles; the shared UDP sockets do not keep the
 * process alive and are closed by `close()`.
 */
import { randomFillSync } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { getServers } from 'node:dns';
import { connect, isIP, type Socket as TcpSocket } from 'node:net';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, RecordType } from 'dns-packet';

/** A DNS server to ask: an IP address and a port. */
export interface DnsServer {
  readonly host: string;
  readonly port: number;
}

/** The records of a successful answer of one type, with each record's TTL in seconds. */
export interface AnswerRecords {
  readonly answers: ReadonlyArray<{ readonly data: unknown; readonly ttl: number }>;
}

const DNS_PORT = 53;
/** UDP sends per query: the first one and two retransmissions. */
const UDP_SENDS = 3;
/** UDP sockets per server: enough for a busy batch's queries in flight to spread over. */
const SOCKETS_PER_SERVER = 4;
/** Queries one UDP socket carries before it is retired, so that the source port keeps changing (RFC 5452 §9.2). */
const QUERIES_PER_SOCKET = 256;
/** Response codes of RFC 1035 §4.1.1, mapped to Node's error codes (c-ares's). */
const RCODE_ERRORS: Readonly<Record<number, string>> = {
  1: 'EFORMERR',
  2: 'ESERVFAIL',
  3: 'ENOTFOUND', // NXDOMAIN
  4: 'ENOTIMP',
  5: 'EREFUSED',
};
/** Answers that say something about the server rather than the name: another server may do better. */
const SERVER_FAILURES = new Set([2, 4, 5]);
const RCODE_MASK = 0xf;
const OPCODE_QUERY = 0;
const MAX_NAME_OCTETS = 253; // RFC 1035 §2.3.4 (255 on the wire)
const MAX_LABEL_OCTETS = 63;

/** An error like the ones `node:dns` rejects with. */
export function dnsError(code: string, syscall: string, hostname: string): Error & { code: string } {
  return Object.assign(new Error(`${syscall} ${code} ${hostname}`), { code, syscall, hostname });
}

/**
 * The same error without a stack trace (its `stack` is the message line alone): for answers that are facts about
 * the name, which a list meets by the thousand and whose stack would only name this file.
 */
function answerError(code: string, syscall: string, hostname: string): Error & { code: string } {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return dnsError(code, syscall, hostname);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Servers written as `ip`, `ip:port` or `[ipv6]:port` (what `dns.setServers` takes). Throws a TypeError for anything
 * else, so that a bad option fails at once rather than at every query.
 */
export function parseServers(servers: readonly string[]): DnsServer[] {
  return servers.map((server) => {
    if (isIP(server) !== 0) return { host: server, port: DNS_PORT };
    const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(server) ?? /^([^:[\]]+):(\d{1,5})$/.exec(server);
    const port = Number(match?.[2]);
    if (match === null || isIP(match[1]!) === 0 || port < 1 || port > 0xffff) {
      throw new TypeError(`DNS server ${JSON.stringify(server)} is not an IP address with an optional port`);
    }
    return { host: match[1]!, port };
  });
}

/** The system's servers, as Node reads them (resolv.conf); c-ares's own fallback when there are none. */
export function systemServers(): DnsServer[] {
  const servers = parseServers(getServers());
  return servers.length > 0 ? servers : [{ host: '127.0.0.1', port: DNS_PORT }];
}

/** A host name that can be put in a question: printable ASCII labels of 1 to 63 octets, 253 octets in all. */
function isQueryableName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_NAME_OCTETS || !/^[\x21-\x5b\x5d-\x7e]+$/.test(name)) return false;
  return name.split('.').every((label) => label.length > 0 && label.length <= MAX_LABEL_OCTETS);
}

function sameName(a: string, b: string): boolean {
  // RFC 1035 §2.3.3: names compare without regard to case.
  return a.toLowerCase() === b.toLowerCase();
}

/** The response answers this very query: its id, a standard query's opcode and the same single question. */
function answersQuery(response: DecodedPacket, id: number, name: string, type: RecordType): boolean {
  const question = response.questions?.length === 1 ? response.questions[0]! : undefined;
  return (
    response.type === 'response' &&
    response.id === id &&
    ((response.flags ?? 0) >> 11) % 16 === OPCODE_QUERY &&
    question !== undefined &&
    question.type === type &&
    (question.class ?? 'IN') === 'IN' &&
    sameName(question.name, name)
  );
}

function decodeOrNull(message: Buffer): DecodedPacket | null {
  try {
    return dnsPacket.decode(message);
  } catch {
    return null;
  }
}

/**
 * The records of `type` that answer `name`: its own, or those of the name its CNAME chain in the answer section leads
 * to (RFC 1034 §3.6.2), each with the least TTL along the chain. Records of other owners are ignored.
 */
function recordsOfType(response: DecodedPacket, name: string, type: RecordType): Array<{ data: unknown; ttl: number }> {
  const answers: Answer[] = response.answers ?? [];
  // RFC 2181 §8: a TTL with the most significant bit set is read as 0.
  const ttlOf = (answer: Answer): number =>
    'ttl' in answer && typeof answer.ttl === 'number' && answer.ttl <= 0x7fffffff ? answer.ttl : 0;
  let owner = name;
  let chainTtl = Infinity;
  const visited = new Set<string>();
  for (;;) {
    visited.add(owner.toLowerCase());
    const own = answers.filter((answer) => answer.type === type && sameName(answer.name, owner));
    if (own.length > 0) {
      return own.map((answer) => ({ data: (answer as { data: unknown }).data, ttl: Math.min(ttlOf(answer), chainTtl) }));
    }
    const alias = answers.find((answer) => answer.type === 'CNAME' && sameName(answer.name, owner));
    const target = alias !== undefined && 'data' in alias && typeof alias.data === 'string' ? alias.data : undefined;
    if (alias === undefined || target === undefined || visited.has(target.toLowerCase())) return [];
    chainTtl = Math.min(chainTtl, ttlOf(alias));
    owner = target;
  }
}

/** 16-bit query ids from the system's CSPRNG, drawn a block at a time. */
const randomIds = new Uint16Array(256);
let nextRandomId = randomIds.length;

function randomId(): number {
  if (nextRandomId === randomIds.length) {
    randomFillSync(randomIds);
    nextRandomId = 0;
  }
  return randomIds[nextRandomId++]!;
}

/** What a query in flight on a shared socket hears: the datagrams carrying its id, and the socket's failure. */
interface Waiter {
  onDatagram(message: Buffer): void;
  onFailure(code: string): void;
}

/** One UDP socket connected to a server, shared by the queries in flight to it, each under an id of its own. */
class SharedSocket {
  /** The queries waiting for an answer, by id. */
  readonly waiting = new Map<number, Waiter>();
  /** Queries given to this socket so far (retired at QUERIES_PER_SOCKET). */
  uses = 0;
  private readonly socket: UdpSocket;
  private connected = false;
  /** Datagrams sent before the socket was connected: they go out once it is. */
  private readonly unsent: Array<{ message: Buffer; waiter: Waiter }> = [];
  private closed = false;

  constructor(
    server: DnsServer,
    private readonly onClosed: (socket: SharedSocket) => void,
  ) {
    this.socket = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
    // Only a query's deadline timer keeps the process alive: an idle socket never does.
    this.socket.unref();
    // A connected socket receives only from its server, and hears of ICMP "port unreachable" (ECONNREFUSED): that
    // concerns every query on it.
    this.socket.on('error', (error: NodeJS.ErrnoException) => this.fail(connectionCode(error)));
    this.socket.on('message', (message: Buffer) => {
      if (message.length >= 2) this.waiting.get(message.readUInt16BE(0))?.onDatagram(message);
    });
    this.socket.connect(server.port, server.host, () => {
      this.connected = true;
      for (const { message, waiter } of this.unsent.splice(0)) this.transmit(message, waiter);
    });
  }

  get retired(): boolean {
    return this.closed || this.uses >= QUERIES_PER_SOCKET;
  }

  /** A random id not in use on this socket, reserved for `waiter`. */
  register(waiter: Waiter): number {
    let id = randomId();
    while (this.waiting.has(id)) id = randomId();
    this.waiting.set(id, waiter);
    this.uses++;
    return id;
  }

  send(message: Buffer, waiter: Waiter): void {
    if (this.connected) this.transmit(message, waiter);
    else this.unsent.push({ message, waiter });
  }

  /** The query under `id` is over: a retired socket closes with its last one. */
  release(id: number, waiter: Waiter): void {
    if (this.waiting.get(id) === waiter) this.waiting.delete(id);
    if (this.retired && this.waiting.size === 0) this.close();
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.onClosed(this);
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private transmit(message: Buffer, waiter: Waiter): void {
    if (this.closed) return;
    this.socket.send(message, (error) => {
      if (error !== null) waiter.onFailure(connectionCode(error));
    });
  }

  private fail(code: string): void {
    const waiters = [...this.waiting.values()];
    void this.close();
    for (const waiter of waiters) waiter.onFailure(code);
  }
}

/** The UDP sockets to one server: a query takes an idle one, else opens one while there are fewer than the cap. */
class SocketPool {
  private readonly sockets = new Set<SharedSocket>();

  constructor(private readonly server: DnsServer) {}

  take(): SharedSocket {
    let least: SharedSocket | undefined;
    for (const socket of this.sockets) {
      if (socket.retired) continue;
      if (socket.waiting.size === 0) return socket;
      if (least === undefined || socket.waiting.size < least.waiting.size) least = socket;
    }
    if (least !== undefined && this.openCount() >= SOCKETS_PER_SERVER) return least;
    const socket = new SharedSocket(this.server, (closed) => this.sockets.delete(closed));
    this.sockets.add(socket);
    return socket;
  }

  /** The sockets not yet retired (retired ones close with their last query). */
  private openCount(): number {
    let count = 0;
    for (const socket of this.sockets) if (!socket.retired) count++;
    return count;
  }

  /** Closes every socket; the queries still waiting on them fail with ECANCELLED. */
  close(): Promise<void> {
    const sockets = [...this.sockets];
    const waiters = sockets.flatMap((socket) => [...socket.waiting.values()]);
    const closed = Promise.all(sockets.map((socket) => socket.close())).then(() => undefined);
    for (const waiter of waiters) waiter.onFailure('ECANCELLED');
    return closed;
  }
}

/** A stub resolver for a list of servers: the UDP sockets it shares between queries, and its deadline per query. */
export class StubResolver {
  private readonly pools: SocketPool[];

  constructor(
    readonly servers: readonly DnsServer[],
    private readonly timeoutMs: number,
  ) {
    this.pools = servers.map((server) => new SocketPool(server));
  }

  /**
   * Asks the servers one question and resolves with its records, or rejects with a Node DNS error code. `syscall`
   * names the query in errors as Node does (`queryMx`, `queryA`...). An aborted `signal` ends the query at once
   * (ECANCELLED), with no datagram sent after it.
   */
  query(name: string, type: RecordType, syscall: string, signal?: AbortSignal): Promise<AnswerRecords> {
    const bare = name.endsWith('.') ? name.slice(0, -1) : name;
    if (!isQueryableName(bare)) return Promise.reject(answerError('EBADNAME', syscall, name));
    if (signal?.aborted === true) return Promise.reject(dnsError('ECANCELLED', syscall, name));
    return new Promise<DecodedPacket>((resolve, reject) => {
      const exchange = new Exchange(this.servers, this.pools, bare, type, this.timeoutMs, resolve, (code) => reject(dnsError(code, syscall, name)));
      if (signal !== undefined) {
        const cancel = (): void => exchange.cancel();
        signal.addEventListener('abort', cancel, { once: true });
        exchange.onFinish = () => signal.removeEventListener('abort', cancel);
      }
      exchange.start();
    }).then((response) => {
      const rcode = (response.flags ?? 0) & RCODE_MASK;
      if (rcode !== 0) throw answerError(RCODE_ERRORS[rcode] ?? 'EBADRESP', syscall, name);
      const answers = recordsOfType(response, bare, type);
      if (answers.length === 0) throw answerError('ENODATA', syscall, name);
      return { answers };
    });
  }

  /** Closes the shared sockets (queries still under way fail with ECANCELLED); later queries open new ones. */
  close(): Promise<void> {
    return Promise.all(this.pools.map((pool) => pool.close())).then(() => undefined);
  }
}

/** A query's place on the socket of one server: its id there, and what it hears. */
interface Lease extends Waiter {
  readonly socket: SharedSocket;
  id: number;
  /** The query encoded with this lease's id. */
  message: Buffer;
}

/** One question put to the servers, from the first datagram to the settled answer. */
class Exchange {
  /** The socket and id this query uses with each server asked so far, by server index. */
  private readonly leases = new Map<number, Lease>();
  /** Servers that failed this query (unreachable, or SERVFAIL/REFUSED/NOTIMP), by index, with the failure. */
  private readonly failed = new Map<number, { code: string; response?: DecodedPacket }>();
  private tcpSocket: TcpSocket | undefined;
  private retransmitTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private sends = 0;
  /** The server the next datagram goes to. */
  private next = 0;
  /** A response with our id that could not be read: reported instead of a timeout. */
  private sawBadResponse = false;
  private settled = false;
  /** Called once the exchange has settled and released its sockets and timers. */
  onFinish: (() => void) | undefined;

  constructor(
    private readonly servers: readonly DnsServer[],
    private readonly pools: readonly SocketPool[],
    private readonly name: string,
    private readonly type: RecordType,
    private readonly timeoutMs: number,
    private readonly onAnswer: (response: DecodedPacket) => void,
    private readonly onError: (code: string) => void,
  ) {}

  start(): void {
    if (this.servers.length === 0) return this.fail('ECONNREFUSED');
    if (this.settled) return; // cancelled before it started
    this.deadlineTimer = setTimeout(() => this.fail(this.sawBadResponse ? 'EBADRESP' : 'ETIMEOUT'), this.timeoutMs);
    this.sendDatagram();
  }

  /**
   * Sends the query to the next server still in the running, and schedules the retransmission: the sends are spread
   * so that each wait is twice the one before and the last ends at the deadline (0, T/7 and 3T/7 for three sends).
   */
  private sendDatagram(): void {
    if (this.settled || this.tcpSocket !== undefined) return;
    const server = this.nextServer();
    if (server === undefined) return;
    this.sends++;
    const lease = this.leases.get(server) ?? this.lease(server);
    lease.socket.send(lease.message, lease);
    clearTimeout(this.retransmitTimer);
    if (this.sends < UDP_SENDS) {
      const interval = (this.timeoutMs * 2 ** (this.sends - 1)) / (2 ** UDP_SENDS - 1);
      this.retransmitTimer = setTimeout(() => this.sendDatagram(), interval);
    }
  }

  /** A socket to server `index` and an id on it; retransmissions to the same server reuse both. */
  private lease(index: number): Lease {
    const socket = this.pools[index]!.take();
    const lease: Lease = {
      socket,
      id: 0,
      message: Buffer.alloc(0),
      onDatagram: (message: Buffer) => this.onDatagram(index, lease.id, message),
      onFailure: (code: string) => this.serverFailed(index, code),
    };
    lease.id = socket.register(lease);
    lease.message = encodeQuery(lease.id, this.name, this.type);
    this.leases.set(index, lease);
    return lease;
  }

  /** The index of the next server that has not failed (round robin), or undefined after failing when none is left. */
  private nextServer(): number | undefined {
    for (let step = 0; step < this.servers.length; step++) {
      const index = (this.next + step) % this.servers.length;
      if (!this.failed.has(index)) {
        this.next = index + 1;
        return index;
      }
    }
    this.failAfterEveryServer();
    return undefined;
  }

  private onDatagram(index: number, id: number, message: Buffer): void {
    if (this.settled) return;
    const response = decodeOrNull(message);
    if (response === null || !answersQuery(response, id, this.name, this.type)) {
      this.sawBadResponse = true; // it carries our id (the socket routes by id)
      return;
    }
    if (response.flag_tc) return this.askOverTcp(index);
    const rcode = (response.flags ?? 0) & RCODE_MASK;
    if (SERVER_FAILURES.has(rcode)) return this.serverFailed(index, RCODE_ERRORS[rcode]!, response);
    this.succeed(response);
  }

  /** A server failed this query: go on at once with the next one, or report the failure when none is left. */
  private serverFailed(index: number, code: string, response?: DecodedPacket): void {
    if (this.settled || this.failed.has(index)) return;
    if (code === 'ECANCELLED') return this.fail(code); // the resolver was closed
    this.failed.set(index, { code, response });
    this.sendDatagram();
  }

  /** Every server failed: the last answer received stands (SERVFAIL...), else the last socket error. */
  private failAfterEveryServer(): void {
    const failures = [...this.failed.values()];
    const answered = failures.filter((failure) => failure.response !== undefined).at(-1);
    if (answered?.response !== undefined) this.succeed(answered.response);
    else this.fail(failures.at(-1)?.code ?? 'ECONNREFUSED');
  }

  /** The same query over TCP to the server that truncated its answer, within what is left of the deadline. */
  private askOverTcp(index: number): void {
    const message = this.leases.get(index)!.message;
    const id = this.leases.get(index)!.id;
    this.releaseUdp();
    const server = this.servers[index]!;
    const socket = connect({ host: server.host, port: server.port });
    this.tcpSocket = socket;
    socket.setNoDelay(true);
    let received: Buffer = Buffer.alloc(0);
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(message.length);
      socket.write(Buffer.concat([length, message]));
    });
    socket.on('data', (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      // RFC 1035 §4.2.2: each message is preceded by its length in two octets.
      if (received.length < 2 || received.length < 2 + received.readUInt16BE(0)) return;
      const response = decodeOrNull(received.subarray(2, 2 + received.readUInt16BE(0)));
      // Over TCP nobody else can slip an answer in: a wrong one is a bad server.
      if (response === null || !answersQuery(response, id, this.name, this.type)) return this.fail('EBADRESP');
      this.succeed(response);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => this.fail(connectionCode(error)));
    socket.on('close', () => this.fail('ECONNRESET')); // closed before a whole answer arrived
  }

  private succeed(response: DecodedPacket): void {
    if (this.settled) return;
    this.finish();
    this.onAnswer(response);
  }

  private fail(code: string): void {
    if (this.settled) return;
    this.finish();
    this.onError(code);
  }

  /** Nobody waits for the answer any more: nothing more is sent, and every socket and timer is released. */
  cancel(): void {
    this.fail('ECANCELLED');
  }

  private finish(): void {
    this.settled = true;
    clearTimeout(this.deadlineTimer);
    this.releaseUdp();
    this.tcpSocket?.destroy();
    this.onFinish?.();
  }

  /** Gives back this query's ids: the sockets stay with their pools. */
  private releaseUdp(): void {
    clearTimeout(this.retransmitTimer);
    for (const lease of this.leases.values()) lease.socket.release(lease.id, lease);
    this.leases.clear();
  }
}

function encodeQuery(id: number, name: string, type: RecordType): Buffer {
  const packet = { type: 'query' as const, id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name, class: 'IN' as const }] };
  return dnsPacket.encode(packet).subarray(0, dnsPacket.encode.bytes);
}

/** A socket failure as c-ares reports one: a server that cannot be reached is ECONNREFUSED, a dropped one ECONNRESET. */
function connectionCode(error: NodeJS.ErrnoException): string {
  return error.code === 'ECONNRESET' ? 'ECONNRESET' : 'ECONNREFUSED';
}
