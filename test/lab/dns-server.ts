// The lab DNS server: a real authoritative DNS server on loopback, UDP and TCP on one port, answering from
// in-memory zones, so that tests exercise real resolvers (Node's own, c-ares, and the engine's stub resolver) over real
// sockets rather than a mock.
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import type { MxRecord } from 'node:dns';
import { createServer, isIPv4, isIPv6, type Server as TcpServer, type Socket as TcpSocket } from 'node:net';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, OptAnswer, Packet } from 'dns-packet';

/** One name's records. Names are lower-case ASCII without a trailing dot. */
export interface ZoneRecords {
  /** In the order given. exchange '' or '.' is a null MX (RFC 7505: `MX 0 .`). */
  mx?: Array<{ priority: number; exchange: string }>;
  a?: string[];
  aaaa?: string[];
  /** PTR records (reverse names such as `5.0.0.127.in-addr.arpa`): the host names they point to. */
  ptr?: string[];
  /** Followed within the zones for every other type. */
  cname?: string;
  /** One TXT record per string (split into 255-byte character-strings on the wire). */
  txt?: string[];
  /** TTL of every answer of this name (default 300). */
  ttl?: number;
  /** Answer every query for this name (or reaching it through a CNAME) with this response code. */
  rcode?: 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED' | 'NOTIMP' | 'FORMERR';
  /** Never answer (to test timeouts). */
  silent?: boolean;
  /** Answer after this delay. */
  delayMs?: number;
  /** Answer SERVFAIL this many times, then normally (counted per name, reset by setZones). */
  servfailTimes?: number;
  /** Drop this many UDP queries unanswered, as a lossy network would, then answer (per name, reset by setZones). */
  dropUdp?: number;
}

export type Zones = Record<string, ZoneRecords>;

export type Transport = 'udp' | 'tcp';

export interface LoggedQuery {
  name: string;
  type: string;
  transport: Transport;
  /** The query's id. */
  id: number;
  /** The port the query came from. */
  clientPort: number;
}

export interface LabDnsServer {
  readonly host: string;
  readonly port: number;
  /** "127.0.0.1:PORT" ("[::1]:PORT" for IPv6): what Resolver.setServers takes. */
  readonly address: string;
  /** Every query received, in order (name lower-cased, without trailing dot), with its id and the client's port. */
  readonly queries: LoggedQuery[];
  queryCount(name?: string, type?: string): number;
  /**
   * Like queryCount, but a retransmission (the same id from the same port, for the same question) is not counted
   * again: the queries a resolver made, whatever a loaded machine made it send twice.
   */
  exchangeCount(name?: string, type?: string): number;
  /** Replace the data while running (also resets the servfailTimes and dropUdp counters). */
  setZones(zones: Zones): void;
  /** Closes both sockets, every TCP connection and every pending delayed answer. */
  close(): Promise<void>;
}

// dns-packet's encode ignores a `rcode` field: the code has to be OR-ed into the header flags.
const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
type RcodeName = keyof typeof RCODE;

const OPCODE_MASK = 0xf << 11;
const DEFAULT_TTL = 300;
const MAX_CNAME_HOPS = 8;
const CLASSIC_UDP_LIMIT = 512; // RFC 1035 limit when the client sent no EDNS OPT record
const OUR_EDNS_SIZE = 1232; // what we advertise back (the DNS flag day 2020 value)
const BIND_ATTEMPTS = 5;

interface Resolution {
  rcode: RcodeName;
  answers: Answer[];
}

/** Lower-case, no trailing dot: the form zone keys and the query log use. */
function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

function isOpt(record: Answer): record is OptAnswer {
  return record.type === 'OPT';
}

/** The records of `type` held at one name, with `owner` as the owner name (the spelling the client asked for). */
function recordsOfType(records: ZoneRecords, owner: string, type: string): Answer[] {
  const ttl = records.ttl ?? DEFAULT_TTL;
  switch (type) {
    case 'A':
      return (records.a ?? []).map((data) => ({ type: 'A', name: owner, ttl, data }));
    case 'AAAA':
      return (records.aaaa ?? []).map((data) => ({ type: 'AAAA', name: owner, ttl, data }));
    case 'MX':
      return (records.mx ?? []).map(({ priority, exchange }) => ({
        type: 'MX',
        name: owner,
        ttl,
        // '.' rather than '': dns-packet sizes '' as 2 bytes but writes 1, leaving a stray byte in the packet.
        data: { preference: priority, exchange: exchange === '' ? '.' : exchange },
      }));
    case 'TXT':
      return (records.txt ?? []).map((text) => ({ type: 'TXT', name: owner, ttl, data: characterStrings(text) }));
    case 'PTR':
      return (records.ptr ?? []).map((data) => ({ type: 'PTR', name: owner, ttl, data }));
    case 'CNAME':
      return records.cname === undefined ? [] : [{ type: 'CNAME', name: owner, ttl, data: records.cname }];
    default:
      return [];
  }
}

/** A TXT string as the 255-byte character-strings the wire format needs. */
function characterStrings(text: string): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 255) chunks.push(bytes.subarray(at, at + 255));
  return chunks.length > 0 ? chunks : [Buffer.alloc(0)];
}

/** The answer to one question from the zones, following CNAMEs. */
function resolve(zones: ReadonlyMap<string, ZoneRecords>, qname: string, type: string): Resolution {
  const answers: Answer[] = [];
  const visited = new Set<string>();
  let owner = qname;
  for (let hop = 0; hop < MAX_CNAME_HOPS; hop++) {
    const key = normalizeName(owner);
    const records = zones.get(key);
    // A CNAME to a name we do not hold is NXDOMAIN, with the CNAME chain kept in the answer (as real servers do).
    if (records === undefined) return { rcode: 'NXDOMAIN', answers };
    if (records.rcode !== undefined) return { rcode: records.rcode, answers };
    const own = recordsOfType(records, owner, type);
    if (own.length > 0 || records.cname === undefined || type === 'CNAME') {
      return { rcode: 'NOERROR', answers: [...answers, ...own] };
    }
    visited.add(key);
    answers.push({ type: 'CNAME', name: owner, ttl: records.ttl ?? DEFAULT_TTL, data: records.cname });
    owner = records.cname;
    if (visited.has(normalizeName(owner))) break; // a CNAME loop
  }
  return { rcode: 'SERVFAIL', answers: [] };
}

function isEncodableName(name: string): boolean {
  const bare = name.replace(/\.$/, '');
  if (bare === '') return true; // the root: a null MX
  const labels = bare.split('.');
  return Buffer.byteLength(bare) <= 253 && labels.every((l) => l.length > 0 && Buffer.byteLength(l) <= 63);
}

/** Fail where the test wrote bad data rather than as a SERVFAIL on the wire later. */
function validateZones(zones: Zones): Map<string, ZoneRecords> {
  const map = new Map<string, ZoneRecords>();
  for (const [name, records] of Object.entries(zones)) {
    const problem = (what: string): Error => new Error(`lab DNS zone ${JSON.stringify(name)}: ${what}`);
    // dns-packet writes a label over 63 bytes without complaint, as a corrupt packet.
    for (const domain of [name, records.cname ?? '', ...(records.mx ?? []).map((mx) => mx.exchange), ...(records.ptr ?? [])]) {
      if (!isEncodableName(domain)) throw problem(`${JSON.stringify(domain)} is not a valid domain name`);
    }
    for (const ip of records.a ?? []) if (!isIPv4(ip)) throw problem(`A ${JSON.stringify(ip)} is not an IPv4 address`);
    for (const ip of records.aaaa ?? []) {
      if (!isIPv6(ip)) throw problem(`AAAA ${JSON.stringify(ip)} is not an IPv6 address`);
    }
    for (const { priority } of records.mx ?? []) {
      if (!Number.isInteger(priority) || priority < 0 || priority > 0xffff) throw problem(`MX priority ${priority}`);
    }
    for (const field of ['servfailTimes', 'dropUdp'] as const) {
      const count = records[field];
      if (count !== undefined && !(Number.isInteger(count) && count >= 0)) throw problem(`${field} ${count}`);
    }
    const { ttl } = records;
    if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 0 || ttl > 0x7fffffff)) throw problem(`ttl ${ttl}`);
    map.set(normalizeName(name), records);
  }
  return map;
}

class DnsLab implements LabDnsServer {
  readonly address: string;
  readonly queries: LoggedQuery[] = [];
  private zones: Map<string, ZoneRecords>;
  /** How many SERVFAILs each name with servfailTimes has been given so far. */
  private readonly servfailsGiven = new Map<string, number>();
  /** How many UDP queries have been dropped so far, per name with dropUdp. */
  private readonly udpDropped = new Map<string, number>();
  private readonly connections = new Set<TcpSocket>();
  private readonly delayed = new Set<NodeJS.Timeout>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly udp: UdpSocket,
    private readonly tcp: TcpServer,
    readonly host: string,
    readonly port: number,
    zones: Map<string, ZoneRecords>,
  ) {
    this.zones = zones;
    this.address = isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
    // Errors on a bound UDP socket (a failed send) concern one client only: never let them crash the test run.
    udp.on('error', () => {});
    udp.on('message', (message, peer) => this.onUdpMessage(message, peer));
    tcp.on('error', () => {});
    tcp.on('connection', (socket) => this.onTcpConnection(socket));
  }

  queryCount(name?: string, type?: string): number {
    return this.queriesFor(name, type).length;
  }

  exchangeCount(name?: string, type?: string): number {
    return new Set(this.queriesFor(name, type).map((q) => `${q.transport}/${q.clientPort}/${q.id}/${q.name}/${q.type}`)).size;
  }

  private queriesFor(name: string | undefined, type: string | undefined): LoggedQuery[] {
    const wantedName = name === undefined ? undefined : normalizeName(name);
    const wantedType = type?.toUpperCase();
    return this.queries.filter(
      (q) => (wantedName === undefined || q.name === wantedName) && (wantedType === undefined || q.type === wantedType),
    );
  }

  setZones(zones: Zones): void {
    this.zones = validateZones(zones);
    this.servfailsGiven.clear();
    this.udpDropped.clear();
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    for (const timer of this.delayed) clearTimeout(timer);
    this.delayed.clear();
    const closed: Array<Promise<void>> = [
      new Promise((done) => this.udp.close(() => done())),
      // Its callback runs once the listening handle and every connection are gone.
      new Promise((done) => this.tcp.close(() => done())),
    ];
    for (const socket of this.connections) {
      closed.push(new Promise((done) => socket.once('close', () => done())));
      socket.destroy();
    }
    await Promise.all(closed);
    // The 'close' callbacks of dgram and net.Server run before libuv has released the handles (that happens in
    // the loop's close phase, after the check phase): two turns of setImmediate get past it, so that no handle
    // of ours is left in process.getActiveResourcesInfo() when close() resolves.
    await new Promise((done) => setImmediate(done));
    await new Promise((done) => setImmediate(done));
  }

  private onUdpMessage(message: Buffer, peer: RemoteInfo): void {
    this.handle(message, 'udp', peer.port, (response) => {
      if (this.closing === undefined) this.udp.send(response, peer.port, peer.address, () => {});
    });
  }

  private onTcpConnection(socket: TcpSocket): void {
    this.connections.add(socket);
    socket.on('close', () => this.connections.delete(socket));
    // A client resetting the connection (ECONNRESET) is normal: 'close' follows, nothing else to do.
    socket.on('error', () => {});
    // Messages carry a 2-byte length prefix and may be split across chunks or share one.
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 2) {
        const end = 2 + pending.readUInt16BE(0);
        if (pending.length < end) break;
        const message = pending.subarray(2, end);
        pending = pending.subarray(end);
        this.handle(message, 'tcp', socket.remotePort ?? 0, (response) => {
          if (!socket.writable) return; // the client went away while we were delaying
          const length = Buffer.alloc(2);
          length.writeUInt16BE(response.length);
          socket.write(Buffer.concat([length, response]));
        });
      }
    });
  }

  /** One query, whatever the transport; `reply` sends the encoded response. */
  private handle(message: Buffer, transport: Transport, clientPort: number, reply: (response: Buffer) => void): void {
    if (this.closing !== undefined) return;
    let query: DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return; // not a DNS message: ignore it, as a server would
    }
    if (query.type !== 'query') return; // a response sent to us: answering it could loop

    const questions = query.questions ?? [];
    const question = questions[0];
    const clientOpt = (query.additionals ?? []).find(isOpt);
    const respond = (rcode: RcodeName, answers: Answer[]): void => {
      let response = this.encodeResponse(query, rcode, answers, clientOpt);
      // Over UDP, an answer larger than the client accepts goes out empty with TC set: the client retries over TCP.
      const limit = clientOpt === undefined ? CLASSIC_UDP_LIMIT : Math.max(CLASSIC_UDP_LIMIT, clientOpt.udpPayloadSize);
      if (transport === 'udp' && response !== undefined && response.length > limit) {
        response = this.encodeResponse(query, rcode, [], clientOpt, dnsPacket.TRUNCATED_RESPONSE);
      }
      if (response !== undefined) reply(response);
    };

    if (question === undefined || questions.length !== 1) return respond('FORMERR', []);
    const name = normalizeName(question.name);
    this.queries.push({ name, type: question.type, transport, id: query.id ?? 0, clientPort });
    if (((query.flags ?? 0) & OPCODE_MASK) !== 0) return respond('NOTIMP', []); // only standard queries

    const records = this.zones.get(name);
    if (records?.silent === true) return;
    if (transport === 'udp' && records?.dropUdp !== undefined) {
      const dropped = this.udpDropped.get(name) ?? 0;
      if (dropped < records.dropUdp) {
        this.udpDropped.set(name, dropped + 1);
        return; // logged in `queries` (it arrived), never answered
      }
    }
    const answer = (): void => {
      const given = this.servfailsGiven.get(name) ?? 0;
      if (records?.servfailTimes !== undefined && given < records.servfailTimes) {
        this.servfailsGiven.set(name, given + 1);
        return respond('SERVFAIL', []);
      }
      const { rcode, answers } = resolve(this.zones, question.name, question.type);
      respond(rcode, answers);
    };
    if (records?.delayMs !== undefined && records.delayMs > 0) {
      const timer = setTimeout(() => {
        this.delayed.delete(timer);
        answer();
      }, records.delayMs);
      this.delayed.add(timer);
    } else {
      answer();
    }
  }

  private encodeResponse(
    query: DecodedPacket,
    rcode: RcodeName,
    answers: Answer[],
    clientOpt: OptAnswer | undefined,
    extraFlags = 0,
  ): Buffer | undefined {
    const queryFlags = query.flags ?? 0;
    // It stands in for the client's recursive resolver too, hence RA alongside AA.
    const flags =
      (queryFlags & (OPCODE_MASK | dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED)) |
      dnsPacket.AUTHORITATIVE_ANSWER |
      dnsPacket.RECURSION_AVAILABLE |
      extraFlags;
    // RFC 6891: answer an EDNS query with an OPT record of our own.
    const additionals: Answer[] = [];
    if (clientOpt !== undefined) {
      additionals.push({
        type: 'OPT',
        name: '.',
        udpPayloadSize: OUR_EDNS_SIZE,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: 0,
        flag_do: false,
        options: [],
      });
    }
    const packet: Packet = {
      type: 'response',
      id: query.id ?? 0,
      flags: flags | RCODE[rcode],
      questions: query.questions ?? [],
      answers,
      additionals,
    };
    let encoded: Buffer | undefined;
    try {
      encoded = dnsPacket.encode(packet).subarray(0, dnsPacket.encode.bytes);
    } catch {
      // Data dns-packet cannot encode: a SERVFAIL below, rather than an exception in a socket handler (a crash).
    }
    // No DNS message may exceed 65535 bytes (TCP's 2-byte length prefix): zones that large are a test bug.
    if (encoded !== undefined && encoded.length <= 0xffff) return encoded;
    if (answers.length === 0) return undefined; // not even the bare header and question encode: stay silent
    return this.encodeResponse(query, 'SERVFAIL', [], clientOpt, extraFlags);
  }
}

function bindUdp(socket: UdpSocket, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.off('error', reject);
      resolve();
    });
  });
}

function listenTcp(server: TcpServer, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Starts a lab DNS server on `host` (default 127.0.0.1), UDP and TCP on the same port (`port` 0, the default,
 * picks a free one).
 */
export async function startDnsServer(
  zones: Zones,
  options: { host?: string; port?: number } = {},
): Promise<LabDnsServer> {
  const host = options.host ?? '127.0.0.1';
  const requestedPort = options.port ?? 0;
  const zoneMap = validateZones(zones);
  // The free UDP port the system picks may be taken for TCP: then start over with another one.
  const attempts = requestedPort === 0 ? BIND_ATTEMPTS : 1;
  for (let attempt = 1; ; attempt++) {
    const udp = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    try {
      await bindUdp(udp, host, requestedPort);
    } catch (error) {
      udp.close();
      throw error;
    }
    const port = udp.address().port;
    const tcp = createServer();
    try {
      await listenTcp(tcp, host, port);
      return new DnsLab(udp, tcp, host, port, zoneMap);
    } catch (error) {
      await new Promise<void>((done) => udp.close(() => done()));
      const inUse = error instanceof Error && 'code' in error && error.code === 'EADDRINUSE';
      if (!inUse || attempt >= attempts) throw error;
    }
  }
}

/**
 * MX records as node:dns answers them, for comparing on every Node.js version: Node.js 24 adds `type: 'MX'` to each
 * record and earlier versions do not, so that field alone is dropped (with that value); any other field stays.
 */
export function mxFields(records: readonly MxRecord[]): MxRecord[] {
  return records.map((record) => {
    const { type, ...fields } = record as MxRecord & { type?: unknown };
    return type === 'MX' ? fields : record;
  });
}
