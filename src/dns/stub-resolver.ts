/**
 * The default resolver: a stub resolver (RFC 1035 §7) on `dns-packet` that asks the configured recursive servers.
 *
 * - UDP first, with a random query id and a fresh socket (random source port, RFC 5452 §9.2) per query; a lost
 *   datagram is sent again within the deadline, with a doubling interval (RFC 1035 §4.2.1, RFC 1536 §1), each
 *   retransmission going to the next server (RFC 1035 §7.2).
 * - A response counts only when it comes from the server asked (the sockets are connected) and matches the query's
 *   id and question (RFC 5452 §9.1); anything else is ignored as a possible forgery.
 * - A truncated answer (TC) is asked again over TCP (RFC 1035 §4.2.2, RFC 7766 §5).
 * - SERVFAIL, REFUSED and NOTIMP, or a server that cannot be reached, move the query on to the next server.
 * - Every record comes with its TTL, MX records included (Node's own resolver reports none for them).
 * - Failures reject with Node's DNS error codes, so that callers read this resolver and Node's alike.
 *
 * Every socket and timer of a query is released when its promise settles.
 */
import { randomInt } from 'node:crypto';
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

/**
 * Asks the servers one question and resolves with its records, or rejects with a Node DNS error code. `syscall` names
 * the query in errors as Node does (`queryMx`, `queryA`...). An aborted `signal` ends the query at once (ECANCELLED),
 * with no datagram sent after it.
 */
export function query(
  servers: readonly DnsServer[],
  name: string,
  type: RecordType,
  timeoutMs: number,
  syscall: string,
  signal?: AbortSignal,
): Promise<AnswerRecords> {
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  if (!isQueryableName(bare)) return Promise.reject(dnsError('EBADNAME', syscall, name));
  if (signal?.aborted === true) return Promise.reject(dnsError('ECANCELLED', syscall, name));
  return new Promise<DecodedPacket>((resolve, reject) => {
    const exchange = new Exchange(servers, bare, type, timeoutMs, resolve, (code) => reject(dnsError(code, syscall, name)));
    if (signal !== undefined) {
      const cancel = (): void => exchange.cancel();
      signal.addEventListener('abort', cancel, { once: true });
      exchange.onFinish = () => signal.removeEventListener('abort', cancel);
    }
    exchange.start();
  }).then((response) => {
    const rcode = (response.flags ?? 0) & RCODE_MASK;
    if (rcode !== 0) throw dnsError(RCODE_ERRORS[rcode] ?? 'EBADRESP', syscall, name);
    const answers = recordsOfType(response, bare, type);
    if (answers.length === 0) throw dnsError('ENODATA', syscall, name);
    return { answers };
  });
}

/** One question put to the servers, from the first datagram to the settled answer. */
class Exchange {
  private readonly id = randomInt(0x10000);
  private readonly message: Buffer;
  private readonly udpSockets = new Map<number, UdpSocket>();
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
    private readonly name: string,
    private readonly type: RecordType,
    private readonly timeoutMs: number,
    private readonly onAnswer: (response: DecodedPacket) => void,
    private readonly onError: (code: string) => void,
  ) {
    const packet = { type: 'query' as const, id: this.id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name, class: 'IN' as const }] };
    this.message = dnsPacket.encode(packet).subarray(0, dnsPacket.encode.bytes);
  }

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
    this.send(server);
    clearTimeout(this.retransmitTimer);
    if (this.sends < UDP_SENDS) {
      const interval = (this.timeoutMs * 2 ** (this.sends - 1)) / (2 ** UDP_SENDS - 1);
      this.retransmitTimer = setTimeout(() => this.sendDatagram(), interval);
    }
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

  private send(index: number): void {
    let socket = this.udpSockets.get(index);
    if (socket === undefined) {
      const server = this.servers[index]!;
      const created = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
      socket = created;
      this.udpSockets.set(index, created);
      // A connected socket receives only from its server, and hears of ICMP "port unreachable" (ECONNREFUSED).
      created.on('error', (error: NodeJS.ErrnoException) => this.serverFailed(index, connectionCode(error)));
      created.on('message', (message: Buffer) => this.onDatagram(index, message));
      created.connect(server.port, server.host, () => this.transmit(index, created));
      return;
    }
    // Not connected yet (the first send is still waiting for it): that send goes out once it is.
    if (isConnected(socket)) this.transmit(index, socket);
  }

  private transmit(index: number, socket: UdpSocket): void {
    if (this.udpSockets.get(index) !== socket) return; // closed meanwhile (settled, or gone over to TCP)
    socket.send(this.message, (error) => {
      if (error !== null) this.serverFailed(index, connectionCode(error));
    });
  }

  private onDatagram(index: number, message: Buffer): void {
    if (this.settled) return;
    const response = decodeOrNull(message);
    if (response === null || !answersQuery(response, this.id, this.name, this.type)) {
      if (message.length >= 2 && message.readUInt16BE(0) === this.id) this.sawBadResponse = true;
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
    this.closeUdp();
    const server = this.servers[index]!;
    const socket = connect({ host: server.host, port: server.port });
    this.tcpSocket = socket;
    socket.setNoDelay(true);
    let received: Buffer = Buffer.alloc(0);
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(this.message.length);
      socket.write(Buffer.concat([length, this.message]));
    });
    socket.on('data', (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      // RFC 1035 §4.2.2: each message is preceded by its length in two octets.
      if (received.length < 2 || received.length < 2 + received.readUInt16BE(0)) return;
      const response = decodeOrNull(received.subarray(2, 2 + received.readUInt16BE(0)));
      // Over TCP nobody else can slip an answer in: a wrong one is a bad server.
      if (response === null || !answersQuery(response, this.id, this.name, this.type)) return this.fail('EBADRESP');
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
    clearTimeout(this.retransmitTimer);
    this.closeUdp();
    this.tcpSocket?.destroy();
    this.onFinish?.();
  }

  private closeUdp(): void {
    clearTimeout(this.retransmitTimer);
    for (const socket of this.udpSockets.values()) socket.close();
    this.udpSockets.clear();
  }
}

function isConnected(socket: UdpSocket): boolean {
  try {
    socket.remoteAddress();
    return true;
  } catch {
    return false; // ERR_SOCKET_DGRAM_NOT_CONNECTED
  }
}

/** A socket failure as c-ares reports one: a server that cannot be reached is ECONNREFUSED, a dropped one ECONNRESET. */
function connectionCode(error: NodeJS.ErrnoException): string {
  return error.code === 'ECONNRESET' ? 'ECONNRESET' : 'ECONNREFUSED';
}
