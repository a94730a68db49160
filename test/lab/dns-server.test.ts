// The lab DNS server, checked through Node's real resolver (c-ares over UDP and TCP), plus a few raw-socket
// checks of the wire behaviour Node's resolver cannot show (malformed input, TCP framing, EDNS sizes).
import { createSocket } from 'node:dgram';
import type { promises as dnsPromises } from 'node:dns';
import { connect } from 'node:net';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, RecordType } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mxFields, startDnsServer, type LabDnsServer, type Zones } from './dns-server.js';

const bigMx = Array.from({ length: 60 }, (_, i) => ({ priority: i + 1, exchange: `mx${i + 1}.big.test` }));

const ZONES: Zones = {
  'mx.test': {
    mx: [
      { priority: 20, exchange: 'mx2.mx.test' },
      { priority: 10, exchange: 'mx1.mx.test' },
    ],
  },
  'host.test': { a: ['192.0.2.1', '192.0.2.2'], aaaa: ['2001:db8::1'], txt: ['v=spf1 -all', 'x'.repeat(300)] },
  'ttl.test': { a: ['192.0.2.3'], ttl: 42 },
  'nodata.test': { a: ['192.0.2.4'] },
  'null-mx.test': { mx: [{ priority: 0, exchange: '' }] },
  'alias.test': { cname: 'target.test' },
  'target.test': { mx: [{ priority: 5, exchange: 'mx.target.test' }] },
  'dangling-alias.test': { cname: 'missing.test' },
  'loop1.test': { cname: 'loop2.test' },
  'loop2.test': { cname: 'loop1.test' },
  'servfail.test': { rcode: 'SERVFAIL' },
  'refused.test': { rcode: 'REFUSED' },
  'notimp.test': { rcode: 'NOTIMP' },
  'formerr.test': { rcode: 'FORMERR' },
  'nxdomain.test': { rcode: 'NXDOMAIN' },
  'flaky.test': { mx: [{ priority: 10, exchange: 'mx.flaky.test' }], servfailTimes: 1 },
  'lossy.test': { a: ['192.0.2.6'], dropUdp: 2 },
  'silent.test': { silent: true },
  'slow.test': { a: ['192.0.2.5'], delayMs: 150 },
  'big.test': { mx: bigMx },
};

async function resolverFor(server: LabDnsServer, timeout = 300): Promise<dnsPromises.Resolver> {
  const { promises } = await import('node:dns');
  const resolver = new promises.Resolver({ timeout, tries: 1 });
  resolver.setServers([server.address]);
  return resolver;
}

let lab: LabDnsServer;
let resolver: dnsPromises.Resolver;

beforeAll(async () => {
  lab = await startDnsServer(ZONES);
  resolver = await resolverFor(lab);
});

afterAll(async () => {
  await lab.close();
});

describe('answers through node:dns', () => {
  it('listens on loopback, UDP and TCP sharing one port', () => {
    expect(lab.host).toBe('127.0.0.1');
    expect(lab.port).toBeGreaterThan(0);
    expect(lab.address).toBe(`127.0.0.1:${lab.port}`);
  });

  it('MX, in the order given', async () => {
    expect(mxFields(await resolver.resolveMx('mx.test'))).toEqual([
      { exchange: 'mx2.mx.test', priority: 20 },
      { exchange: 'mx1.mx.test', priority: 10 },
    ]);
  });

  it('A', async () => {
    expect(await resolver.resolve4('host.test')).toEqual(['192.0.2.1', '192.0.2.2']);
  });

  it('AAAA', async () => {
    expect(await resolver.resolve6('host.test')).toEqual(['2001:db8::1']);
  });

  it('A with its TTL (default 300, or the ttl of the name)', async () => {
    expect(await resolver.resolve4('ttl.test', { ttl: true })).toEqual([{ address: '192.0.2.3', ttl: 42 }]);
    expect(await resolver.resolve4('nodata.test', { ttl: true })).toEqual([{ address: '192.0.2.4', ttl: 300 }]);
  });

  it('TXT, long strings split into 255-byte chunks', async () => {
    expect(await resolver.resolveTxt('host.test')).toEqual([['v=spf1 -all'], ['x'.repeat(255), 'x'.repeat(45)]]);
  });

  it('a name without records of the asked type: NODATA, which node reports as ENODATA', async () => {
    await expect(resolver.resolveMx('nodata.test')).rejects.toMatchObject({ code: 'ENODATA' });
  });

  it('a name not in the zones: NXDOMAIN, which node reports as ENOTFOUND', async () => {
    await expect(resolver.resolveMx('nowhere.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('query names are case-insensitive', async () => {
    expect(await resolver.resolve4('HOST.Test')).toEqual(['192.0.2.1', '192.0.2.2']);
  });

  it('null MX (exchange "") comes back as exchange "" priority 0', async () => {
    expect(mxFields(await resolver.resolveMx('null-mx.test'))).toEqual([{ exchange: '', priority: 0 }]);
  });

  it('CNAME then MX: the server follows the CNAME and the resolver returns the target MX', async () => {
    const before = lab.queryCount();
    expect(mxFields(await resolver.resolveMx('alias.test'))).toEqual([{ exchange: 'mx.target.test', priority: 5 }]);
    expect(lab.queryCount() - before).toBe(1); // followed in the one answer, not by a second query
    expect(await resolver.resolveCname('alias.test')).toEqual(['target.test']);
  });

  it('a CNAME to a missing name is ENOTFOUND, a CNAME loop ESERVFAIL', async () => {
    await expect(resolver.resolveMx('dangling-alias.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolver.resolveMx('loop1.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
  });

  it('rcode SERVFAIL: ESERVFAIL', async () => {
    await expect(resolver.resolveMx('servfail.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
  });

  it('rcode REFUSED: EREFUSED', async () => {
    await expect(resolver.resolveMx('refused.test')).rejects.toMatchObject({ code: 'EREFUSED' });
  });

  it('rcode NOTIMP, FORMERR and NXDOMAIN on a name present in the zones', async () => {
    await expect(resolver.resolveMx('notimp.test')).rejects.toMatchObject({ code: 'ENOTIMP' });
    await expect(resolver.resolveMx('formerr.test')).rejects.toMatchObject({ code: 'EFORMERR' });
    await expect(resolver.resolve4('nxdomain.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('servfailTimes: 1 gives SERVFAIL once, then the answer', async () => {
    await expect(resolver.resolveMx('flaky.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    expect(mxFields(await resolver.resolveMx('flaky.test'))).toEqual([{ exchange: 'mx.flaky.test', priority: 10 }]);
    expect(lab.queryCount('flaky.test', 'MX')).toBe(2);
  });

  it('dropUdp: 2 leaves two UDP queries unanswered (but logged), answers the third, and never drops TCP', async () => {
    const quick = await resolverFor(lab, 100);
    await expect(quick.resolve4('lossy.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    await expect(quick.resolve4('lossy.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(await quick.resolve4('lossy.test')).toEqual(['192.0.2.6']);
    expect(lab.queryCount('lossy.test')).toBe(3);
    const server = await startDnsServer({ 'tcp.test': { a: ['192.0.2.7'], dropUdp: 1 } });
    try {
      const [response] = await tcpExchangeWith(server, [frame(query('tcp.test', 'A', 31))], 1);
      expect(response?.answers?.map(dataOf)).toEqual(['192.0.2.7']);
      server.setZones({ 'tcp.test': { a: ['192.0.2.8'], dropUdp: 1 } }); // the count starts again
      await expect((await resolverFor(server, 100)).resolve4('tcp.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
      expect(server.queries.map((q) => q.transport)).toEqual(['tcp', 'udp']);
    } finally {
      await server.close();
    }
  });

  it('silent: no answer, ETIMEOUT', async () => {
    const started = Date.now();
    await expect(resolver.resolveMx('silent.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(lab.queryCount('silent.test')).toBe(1);
  });

  it('delayMs: the answer comes after the delay', async () => {
    const patient = await resolverFor(lab, 2000);
    const started = Date.now();
    expect(await patient.resolve4('slow.test')).toEqual(['192.0.2.5']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('a 60-record MX answer is truncated over UDP and arrives complete over TCP', async () => {
    const expected = bigMx.map(({ priority, exchange }) => ({ exchange, priority }));
    expect(mxFields(await resolver.resolveMx('big.test'))).toEqual(expected);
    expect(lab.queries.filter((q) => q.name === 'big.test').map(({ name, type, transport }) => ({ name, type, transport }))).toEqual([
      { name: 'big.test', type: 'MX', transport: 'udp' },
      { name: 'big.test', type: 'MX', transport: 'tcp' },
    ]);
  });

  it('queryCount: all queries, by name, by name and type (any case)', async () => {
    const server = await startDnsServer({
      'count.test': { a: ['192.0.2.9'], mx: [{ priority: 1, exchange: 'm.test' }] },
    });
    try {
      const r = await resolverFor(server);
      await r.resolve4('count.test');
      await r.resolve4('count.test');
      await r.resolveMx('count.test');
      await expect(r.resolveMx('other.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
      expect(server.queryCount()).toBe(4);
      expect(server.queryCount('count.test')).toBe(3);
      expect(server.queryCount('Count.Test.', 'a')).toBe(2);
      expect(server.queryCount('count.test', 'MX')).toBe(1);
      expect(server.queryCount(undefined, 'MX')).toBe(2);
      expect(server.queryCount('other.test', 'A')).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('setZones replaces the data while running (and resets servfailTimes)', async () => {
    const server = await startDnsServer({ 'change.test': { a: ['192.0.2.10'], servfailTimes: 1 } });
    try {
      const r = await resolverFor(server);
      await expect(r.resolve4('change.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
      expect(await r.resolve4('change.test')).toEqual(['192.0.2.10']);
      server.setZones({ 'change.test': { a: ['192.0.2.11'], servfailTimes: 1 }, 'new.test': { a: ['192.0.2.12'] } });
      await expect(r.resolve4('change.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
      expect(await r.resolve4('change.test')).toEqual(['192.0.2.11']);
      expect(await r.resolve4('new.test')).toEqual(['192.0.2.12']);
      server.setZones({});
      await expect(r.resolve4('new.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    } finally {
      await server.close();
    }
  });

  it('rejects bad zone data up front', async () => {
    await expect(startDnsServer({ 'bad.test': { a: ['not-an-ip'] } })).rejects.toThrow(/not an IPv4 address/);
    expect(() => lab.setZones({ 'bad.test': { aaaa: ['192.0.2.1'] } })).toThrow(/not an IPv6 address/);
    expect(() => lab.setZones({ 'bad.test': { cname: `${'x'.repeat(64)}.test` } })).toThrow(/not a valid domain/);
    expect(() => lab.setZones({ 'bad..test': { a: ['192.0.2.1'] } })).toThrow(/not a valid domain/);
    expect(() => lab.setZones({ 'bad.test': { dropUdp: -1 } })).toThrow(/dropUdp -1/);
    expect(() => lab.setZones({ 'bad.test': { servfailTimes: 1.5 } })).toThrow(/servfailTimes 1.5/);
    expect(mxFields(await resolver.resolveMx('mx.test'))).toHaveLength(2); // the zones in place are kept
  });

  it('an answer too large for any DNS message (over 65535 bytes): SERVFAIL', async () => {
    const a = Array.from({ length: 5000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
    const server = await startDnsServer({ 'huge.test': { a } });
    try {
      await expect((await resolverFor(server)).resolve4('huge.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    } finally {
      await server.close();
    }
  });

  it('close() leaves no UDP, TCP server or TCP socket handle behind, and is idempotent', async () => {
    const kinds = ['UDPWrap', 'TCPServerWrap', 'TCPSocketWrap'];
    const count = (): Record<string, number> =>
      Object.fromEntries(kinds.map((k) => [k, process.getActiveResourcesInfo().filter((r) => r === k).length]));
    const before = count();
    const server = await startDnsServer({ 'big.test': { mx: bigMx } });
    const r = await resolverFor(server);
    expect(await r.resolveMx('big.test')).toHaveLength(60); // opens a TCP connection to the server
    const running = count();
    expect(running.UDPWrap).toBeGreaterThan(before.UDPWrap ?? 0);
    expect(running.TCPServerWrap).toBeGreaterThan(before.TCPServerWrap ?? 0);
    await server.close();
    await server.close();
    expect(count()).toEqual(before);
    await expect(r.resolveMx('big.test')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('port option: binds UDP and TCP on the port asked for', async () => {
    const first = await startDnsServer({});
    const port = first.port;
    await first.close();
    const server = await startDnsServer({ 'p.test': { a: ['192.0.2.13'] } }, { port });
    try {
      expect(server.port).toBe(port);
      expect(await (await resolverFor(server)).resolve4('p.test')).toEqual(['192.0.2.13']);
    } finally {
      await server.close();
    }
  });
});

// Raw wire checks: queries built with dns-packet, sent over plain sockets.

function query(name: string, type: RecordType, id: number, udpPayloadSize?: number): Buffer {
  const additionals: Answer[] = [];
  if (udpPayloadSize !== undefined) {
    const edns = { extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] };
    additionals.push({ type: 'OPT', name: '.', udpPayloadSize, ...edns });
  }
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type, name }],
    additionals,
  });
}

/** Sends datagrams from one socket and resolves with the first response. */
async function udpExchange(...messages: Buffer[]): Promise<DecodedPacket> {
  const socket = createSocket('udp4');
  try {
    const response = new Promise<Buffer>((resolve) => socket.once('message', resolve));
    for (const message of messages) socket.send(message, lab.port, lab.host);
    return dnsPacket.decode(await response);
  } finally {
    socket.close();
  }
}

/** The rdata of a decoded record (OPT records have none). */
function dataOf(record: Answer): unknown {
  return 'data' in record ? record.data : undefined;
}

function frame(message: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(message.length);
  return Buffer.concat([length, message]);
}

/** Writes the chunks one by one on one TCP connection and collects `expected` length-prefixed responses. */
function tcpExchange(chunks: Buffer[], expected: number): Promise<DecodedPacket[]> {
  return tcpExchangeWith(lab, chunks, expected);
}

async function tcpExchangeWith(server: LabDnsServer, chunks: Buffer[], expected: number): Promise<DecodedPacket[]> {
  const socket = connect(server.port, server.host);
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const responses = new Promise<DecodedPacket[]>((resolve, reject) => {
      const decoded: DecodedPacket[] = [];
      let pending: Buffer = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
          decoded.push(dnsPacket.decode(pending.subarray(2, 2 + pending.readUInt16BE(0))));
          pending = pending.subarray(2 + pending.readUInt16BE(0));
        }
        if (decoded.length >= expected) resolve(decoded);
      });
      socket.once('error', reject);
    });
    for (const chunk of chunks) {
      socket.write(chunk);
      await new Promise((resolve) => setTimeout(resolve, 10)); // so that the server reads them as separate chunks
    }
    return await responses;
  } finally {
    socket.destroy();
  }
}

describe('on the wire', () => {
  it('copies the id and the question, sets AA, copies RD', async () => {
    const response = await udpExchange(query('Host.Test', 'A', 4242));
    expect(response.id).toBe(4242);
    expect(response.questions).toEqual([{ name: 'Host.Test', type: 'A', class: 'IN' }]);
    expect(response.flag_qr).toBe(true);
    expect(response.flag_aa).toBe(true);
    expect(response.flag_rd).toBe(true);
    expect(response.answers?.map(dataOf)).toEqual(['192.0.2.1', '192.0.2.2']);
  });

  it('ignores a malformed datagram and goes on answering', async () => {
    const response = await udpExchange(Buffer.from([1, 2, 3]), Buffer.alloc(40, 0xff), query('host.test', 'A', 7));
    expect(response.id).toBe(7);
  });

  it('UDP: 512 bytes without EDNS (TC set, no answers), the client EDNS size with it', async () => {
    const plain = await udpExchange(query('big.test', 'MX', 1));
    expect(plain.flag_tc).toBe(true);
    expect(plain.answers).toEqual([]);
    const edns = await udpExchange(query('big.test', 'MX', 2, 4096));
    expect(edns.flag_tc).toBe(false);
    expect(edns.answers).toHaveLength(60);
    expect(edns.additionals?.map((a) => a.type)).toEqual(['OPT']);
  });

  it('exchangeCount: a datagram sent again with the same id from the same port counts once; queryCount counts each', async () => {
    const [queriesBefore, exchangesBefore] = [lab.queryCount('resent.test'), lab.exchangeCount('resent.test')];
    const socket = createSocket('udp4');
    try {
      let answered = 0;
      const threeAnswers = new Promise<void>((resolve) => socket.on('message', () => ++answered === 3 && resolve()));
      for (const id of [77, 77, 78]) socket.send(query('resent.test', 'A', id), lab.port, lab.host);
      await threeAnswers;
    } finally {
      socket.close();
    }
    expect(lab.queryCount('resent.test') - queriesBefore).toBe(3);
    expect(lab.exchangeCount('resent.test') - exchangesBefore).toBe(2);
  });

  it('TCP: several queries on one connection, split across chunks anyhow', async () => {
    const first = frame(query('big.test', 'MX', 11));
    const second = frame(query('host.test', 'AAAA', 12));
    // Split inside a length prefix, inside a message, and with the end of one message sharing a chunk with the next.
    const chunks = [
      first.subarray(0, 1),
      first.subarray(1, 20),
      Buffer.concat([first.subarray(20), second.subarray(0, 5)]),
      second.subarray(5),
    ];
    const responses = await tcpExchange(chunks, 2);
    expect(responses.map((r) => r.id)).toEqual([11, 12]);
    expect(responses[0]?.answers).toHaveLength(60);
    expect(responses[1]?.answers?.map(dataOf)).toEqual(['2001:db8::1']);
  });

  it('TCP: a client leaving mid-message or before a delayed answer does no harm', async () => {
    const half = frame(query('host.test', 'A', 21)).subarray(0, 10);
    const leaving = connect(lab.port, lab.host);
    await new Promise<void>((resolve) => leaving.once('connect', resolve));
    leaving.end(half);
    const early = connect(lab.port, lab.host);
    await new Promise<void>((resolve) => early.once('connect', resolve));
    early.write(frame(query('slow.test', 'A', 22)));
    early.resetAndDestroy(); // an RST, before the 150 ms answer is due
    await new Promise((resolve) => setTimeout(resolve, 250));
    const [response] = await tcpExchange([frame(query('host.test', 'A', 23))], 1);
    expect(response?.id).toBe(23);
  });
});
