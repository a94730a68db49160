// The default resolver (packages/mailverify/src/dns/stub-resolver.ts) against real DNS servers on loopback: the lab DNS
// server, made to lose datagrams, truncate, fail or stay silent, and a few raw UDP servers that answer wrongly on
// purpose.
import { createHook } from 'node:async_hooks';
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import type { Answer } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsLookup } from '../../packages/mailverify/src/dns/lookup.js';
import { createDefaultResolver, type DefaultResolver } from '../../packages/mailverify/src/dns/resolver.js';
import { createVerifier } from '../../packages/mailverify/src/engine/verifier.js';
import { expectNoLeak } from '../lab/leaks.js';
import { startDnsServer, type LabDnsServer, type Zones } from '../lab/dns-server.js';

const bigMx = Array.from({ length: 60 }, (_, i) => ({ priority: i + 1, exchange: `mx${i + 1}.big.test` }));

const ZONES: Zones = {
  'mx.test': { mx: [{ priority: 20, exchange: 'mx2.mx.test' }, { priority: 10, exchange: 'MX1.mx.test' }], ttl: 120 },
  'host.test': { a: ['192.0.2.1', '192.0.2.2'], aaaa: ['2001:db8::1'], ttl: 42 },
  'null-mx.test': { mx: [{ priority: 0, exchange: '' }] },
  'alias.test': { cname: 'middle.test', ttl: 30 },
  'middle.test': { cname: 'target.test', ttl: 600 },
  'target.test': { mx: [{ priority: 5, exchange: 'mx.target.test' }], a: ['192.0.2.7'], ttl: 90 },
  'dangling.test': { cname: 'missing.test' },
  'loop1.test': { cname: 'loop2.test' },
  'loop2.test': { cname: 'loop1.test' },
  'nodata.test': { a: ['192.0.2.4'] },
  'servfail.test': { rcode: 'SERVFAIL' },
  'refused.test': { rcode: 'REFUSED' },
  'notimp.test': { rcode: 'NOTIMP' },
  'formerr.test': { rcode: 'FORMERR' },
  'silent.test': { silent: true },
  'big.test': { mx: bigMx },
  'lossy1.test': { mx: [{ priority: 10, exchange: 'mx.lossy1.test' }], dropUdp: 1 },
  'lossy2.test': { a: ['192.0.2.8'], dropUdp: 2 },
  'lossy3.test': { a: ['192.0.2.9'], dropUdp: 3 },
  'lossy-once.test': { a: ['192.0.2.10'], dropUdp: 1 },
  'zero-ttl.test': { mx: [{ priority: 10, exchange: 'mx.zero-ttl.test' }], ttl: 0 },
  'resolver-lab.com': { mx: [{ priority: 10, exchange: 'mx.resolver-lab.com' }] },
  'mx.resolver-lab.com': { a: ['192.0.2.20'] },
  '20.2.0.192.in-addr.arpa': { ptr: ['mx.resolver-lab.com.'] },
  'txt.resolver-lab.com': { txt: ['v=spf1 ip4:192.0.2.20 -all', `long ${'x'.repeat(300)}`] },
};

const TIMEOUT_MS = 700;

let lab: LabDnsServer;
let resolver: DefaultResolver;
beforeAll(async () => {
  lab = await startDnsServer(ZONES);
  resolver = createDefaultResolver({ servers: [lab.address], timeoutMs: TIMEOUT_MS });
});
afterAll(async () => {
  await lab.close();
});

/** The queries the lab received for a name since `from` (an index in its query log). */
function queriesSince(from: number, name: string): string[] {
  return lab.queries.slice(from).filter((q) => q.name === name).map((q) => `${q.type}/${q.transport}`);
}

describe('answers', () => {
  it('MX in the order given, with their TTL, exchanges as written without a trailing dot', async () => {
    expect(await resolver.resolveMx('mx.test')).toEqual([
      { exchange: 'mx2.mx.test', priority: 20, ttl: 120 },
      { exchange: 'MX1.mx.test', priority: 10, ttl: 120 },
    ]);
  });

  it('A and AAAA with their TTL', async () => {
    expect(await resolver.resolve4('host.test', { ttl: true })).toEqual([
      { address: '192.0.2.1', ttl: 42 },
      { address: '192.0.2.2', ttl: 42 },
    ]);
    expect(await resolver.resolve6('host.test', { ttl: true })).toEqual([{ address: '2001:db8::1', ttl: 42 }]);
  });

  it('a null MX reads as exchange "" priority 0, as with Node', async () => {
    expect(await resolver.resolveMx('null-mx.test')).toEqual([{ exchange: '', priority: 0, ttl: 300 }]);
  });

  it('PTR names without their trailing dot, and TXT records as their character-strings, as node:dns gives them', async () => {
    expect(await resolver.resolvePtr('20.2.0.192.in-addr.arpa')).toEqual(['mx.resolver-lab.com']);
    const txt = await resolver.resolveTxt('txt.resolver-lab.com');
    expect(txt).toEqual([['v=spf1 ip4:192.0.2.20 -all'], [`long ${'x'.repeat(250)}`, 'x'.repeat(50)]]);
    await expect(resolver.resolvePtr('21.2.0.192.in-addr.arpa')).rejects.toMatchObject({ code: 'ENOTFOUND', syscall: 'queryPtr' });
    await expect(resolver.resolveTxt('mx.resolver-lab.com')).rejects.toMatchObject({ code: 'ENODATA', syscall: 'queryTxt' });
  });

  it('names are case-insensitive and may end with a dot', async () => {
    expect(await resolver.resolve4('HOST.Test.', { ttl: true })).toHaveLength(2);
  });

  it('follows a CNAME chain in the answer, with the least TTL along it, in one query', async () => {
    const from = lab.queries.length;
    expect(await resolver.resolveMx('alias.test')).toEqual([{ exchange: 'mx.target.test', priority: 5, ttl: 30 }]);
    expect(await resolver.resolve4('alias.test', { ttl: true })).toEqual([{ address: '192.0.2.7', ttl: 30 }]);
    expect(queriesSince(from, 'alias.test')).toEqual(['MX/udp', 'A/udp']);
  });

  it('a 60-record MX answer: truncated over UDP, asked again and read whole over TCP', async () => {
    const from = lab.queries.length;
    const records = await resolver.resolveMx('big.test');
    expect(records.map(({ exchange, priority }) => ({ exchange, priority }))).toEqual(bigMx);
    expect(queriesSince(from, 'big.test')).toEqual(['MX/udp', 'MX/tcp']);
  });
});

describe('failures, with the codes Node gives', () => {
  it.each([
    ['nowhere.test', 'ENOTFOUND'], // NXDOMAIN
    ['nodata.test', 'ENODATA'], // NOERROR without MX
    ['dangling.test', 'ENOTFOUND'], // a CNAME to a missing name
    ['loop1.test', 'ESERVFAIL'], // a CNAME loop
    ['servfail.test', 'ESERVFAIL'],
    ['refused.test', 'EREFUSED'],
    ['notimp.test', 'ENOTIMP'],
    ['formerr.test', 'EFORMERR'],
  ])('%s: %s', async (name, code) => {
    await expect(resolver.resolveMx(name)).rejects.toMatchObject({ code, syscall: 'queryMx', hostname: name });
  });

  it('no answer: ETIMEOUT at the deadline, after three datagrams', async () => {
    const from = lab.queries.length;
    const started = performance.now();
    await expect(resolver.resolve4('silent.test', { ttl: true })).rejects.toMatchObject({ code: 'ETIMEOUT', syscall: 'queryA' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(queriesSince(from, 'silent.test')).toEqual(['A/udp', 'A/udp', 'A/udp']);
  });

  it('nothing listening: ECONNREFUSED, at once', async () => {
    const closed = await unusedPort();
    const refused = createDefaultResolver({ servers: [`127.0.0.1:${closed}`], timeoutMs: 60_000 });
    await expect(refused.resolveMx('mx.test')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('a name that cannot be asked: EBADNAME, without a query', async () => {
    const from = lab.queries.length;
    for (const name of ['', '.', 'a..b', `${'x'.repeat(64)}.test`, `${'a.'.repeat(127)}test`, 'sp ace.test', 'é.test', 'a\\.b']) {
      await expect(resolver.resolveMx(name)).rejects.toMatchObject({ code: 'EBADNAME' });
    }
    expect(lab.queries.length).toBe(from);
  });

  it('servers it cannot read are refused when the resolver is made', () => {
    for (const server of ['dns.example', '192.0.2.1:0', '192.0.2.1:99999', '[::1]', '[2001:db8::1]:', '300.1.1.1', '']) {
      expect(() => createDefaultResolver({ servers: [server] })).toThrow(TypeError);
    }
    expect(() => createDefaultResolver({ servers: ['192.0.2.1', '192.0.2.1:5353', '[2001:db8::1]:53', '2001:db8::2'] })).not.toThrow();
  });
});

describe('lost datagrams (RFC 1035 §4.2.1: retransmission)', () => {
  it('one lost query is sent again and answered within the deadline', async () => {
    const from = lab.queries.length;
    expect(await resolver.resolveMx('lossy1.test')).toEqual([{ exchange: 'mx.lossy1.test', priority: 10, ttl: 300 }]);
    expect(queriesSince(from, 'lossy1.test')).toEqual(['MX/udp', 'MX/udp']);
  });

  it('two lost: the third datagram is answered', async () => {
    expect(await resolver.resolve4('lossy2.test', { ttl: true })).toEqual([{ address: '192.0.2.8', ttl: 300 }]);
  });

  it('three lost: ETIMEOUT', async () => {
    await expect(resolver.resolve4('lossy3.test', { ttl: true })).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(lab.queryCount('lossy3.test')).toBe(3);
  });
});

describe('an IPv6 server', () => {
  it('is asked over udp6 and tcp6', async () => {
    const server = await startDnsServer({ 'big.test': { mx: bigMx }, 'host.test': { aaaa: ['2001:db8::5'] } }, { host: '::1' });
    try {
      const r = createDefaultResolver({ servers: [server.address], timeoutMs: TIMEOUT_MS });
      expect(await r.resolve6('host.test', { ttl: true })).toEqual([{ address: '2001:db8::5', ttl: 300 }]);
      expect(await r.resolveMx('big.test')).toHaveLength(60);
      expect(server.queries.map((q) => q.transport)).toEqual(['udp', 'udp', 'tcp']);
    } finally {
      await server.close();
    }
  });
});

describe('several servers (RFC 1035 §7.2)', () => {
  it('a retransmission goes to the next server: a silent first server costs one interval, not the deadline', async () => {
    const mute = await startDnsServer({ 'host.test': { silent: true } });
    try {
      const both = createDefaultResolver({ servers: [mute.address, lab.address], timeoutMs: TIMEOUT_MS });
      expect(await both.resolve4('host.test', { ttl: true })).toHaveLength(2);
      expect(mute.queryCount('host.test')).toBe(1);
    } finally {
      await mute.close();
    }
  });

  it('REFUSED, SERVFAIL or an unreachable server moves on to the next server at once', async () => {
    const refusing = await startDnsServer({ 'host.test': { rcode: 'REFUSED' } });
    const failing = await startDnsServer({ 'host.test': { rcode: 'SERVFAIL' } });
    const closed = await unusedPort();
    try {
      const servers = [refusing.address, `127.0.0.1:${closed}`, failing.address, lab.address];
      // A deadline far longer than the test's: only moving on at once can answer in time.
      const chain = createDefaultResolver({ servers, timeoutMs: 60_000 });
      expect(await chain.resolve4('host.test', { ttl: true })).toHaveLength(2);
      expect([refusing.queryCount(), failing.queryCount()]).toEqual([1, 1]);
    } finally {
      await Promise.all([refusing.close(), failing.close()]);
    }
  });

  it('every server failing: the last answer received stands', async () => {
    const refusing = await startDnsServer({ 'host.test': { rcode: 'REFUSED' } });
    const closed = await unusedPort();
    try {
      const servers = [refusing.address, `127.0.0.1:${closed}`];
      await expect(createDefaultResolver({ servers }).resolve4('host.test', { ttl: true })).rejects.toMatchObject({ code: 'EREFUSED' });
    } finally {
      await refusing.close();
    }
  });
});

describe('answers that do not match the query (RFC 5452 §9.1)', () => {
  it('are ignored: a wrong id, a wrong name, a wrong type, a query, garbage; the right answer still counts', async () => {
    const server = await rawServer((query, reply) => {
      const question = query.questions![0]!;
      const answer: Answer = { type: 'A', name: question.name, ttl: 60, data: '198.51.100.1' };
      const wrongName = { type: 'A' as const, name: 'other.test' };
      reply({ id: (query.id! + 1) % 0x10000, questions: [question], answers: [{ ...answer, data: '203.0.113.1' }] });
      reply({ id: query.id, questions: [wrongName], answers: [{ ...answer, name: 'other.test', data: '203.0.113.2' }] });
      reply({ id: query.id, questions: [{ ...question, type: 'AAAA' }], answers: [] });
      reply({ id: query.id, type: 'query', questions: [question], answers: [{ ...answer, data: '203.0.113.3' }] });
      reply(Buffer.from([0, 1, 2]));
      reply({ id: query.id, questions: [{ ...question, name: question.name.toUpperCase() }], answers: [answer] });
    });
    try {
      const r = createDefaultResolver({ servers: [server.address], timeoutMs: TIMEOUT_MS });
      expect(await r.resolve4('Host.Test', { ttl: true })).toEqual([{ address: '198.51.100.1', ttl: 60 }]);
    } finally {
      await server.close();
    }
  });

  it('records of another owner than the name or its CNAME chain are not taken', async () => {
    const server = await rawServer((query, reply) => {
      const question = query.questions![0]!;
      reply({
        id: query.id,
        questions: [question],
        answers: [
          { type: 'A', name: 'elsewhere.test', ttl: 60, data: '203.0.113.4' },
          { type: 'CNAME', name: 'unrelated.test', ttl: 60, data: 'host.test' },
        ],
      });
    });
    try {
      const r = createDefaultResolver({ servers: [server.address], timeoutMs: TIMEOUT_MS });
      await expect(r.resolve4('host.test', { ttl: true })).rejects.toMatchObject({ code: 'ENODATA' });
    } finally {
      await server.close();
    }
  });

  it('a server that only ever sends unreadable answers with our id: EBADRESP at the deadline', async () => {
    const server = await rawServer((query, reply) => {
      const id = Buffer.alloc(2);
      id.writeUInt16BE(query.id!);
      reply(Buffer.concat([id, Buffer.from([0x81, 0x80, 0, 1, 0, 1])])); // a header cut short
    });
    try {
      const r = createDefaultResolver({ servers: [server.address], timeoutMs: 200 });
      await expect(r.resolve4('host.test', { ttl: true })).rejects.toMatchObject({ code: 'EBADRESP' });
    } finally {
      await server.close();
    }
  });

  it('query ids are random', async () => {
    const ids: number[] = [];
    const server = await rawServer((query, reply) => {
      ids.push(query.id!);
      reply({ id: query.id, flags: 3, questions: query.questions, answers: [] }); // NXDOMAIN
    });
    try {
      const r = createDefaultResolver({ servers: [server.address], timeoutMs: TIMEOUT_MS });
      for (let i = 0; i < 16; i++) await expect(r.resolveMx(`n${i}.test`)).rejects.toMatchObject({ code: 'ENOTFOUND' });
      expect(ids).toHaveLength(16);
      expect(new Set(ids).size).toBeGreaterThan(8);
    } finally {
      await server.close();
    }
  });
});

describe('resources', () => {
  it('no socket or timer is left after any outcome and close()', async () => {
    await resolver.close();
    const udpBefore = await settledUdpHandles();
    await expectNoLeak(async () => {
      const closed = await unusedPort();
      const unreachable = createDefaultResolver({ servers: [`127.0.0.1:${closed}`] });
      const outcomes = await Promise.allSettled([
        resolver.resolveMx('mx.test'),
        resolver.resolveMx('big.test'), // over TCP
        resolver.resolveMx('nowhere.test'),
        resolver.resolveMx('silent.test'),
        resolver.resolve4('lossy-once.test', { ttl: true }), // after a retransmission
        unreachable.resolveMx('mx.test'),
        resolver.resolveMx('bad..name'),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled', 'rejected', 'rejected']);
      await Promise.all([resolver.close(), unreachable.close()]);
      await udpHandlesBackTo(udpBefore);
    });
  });

  it('many concurrent lookups through the cache: each answered, one query per name', async () => {
    const names = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? 'host.test' : `n${i}.nowhere.test`));
    await resolver.close();
    const udpBefore = await settledUdpHandles();
    const from = lab.queries.length;
    const lookup = new DnsLookup(resolver);
    const answers = await Promise.all([...names, ...names].map((name) => lookup.addresses(name, 4)));
    expect(answers.filter((a) => a.ok)).toHaveLength(50);
    expect(answers.filter((a) => !a.ok && a.code === 'ENOTFOUND')).toHaveLength(50);
    expect(lab.queries.length - from).toBe(26);
    await resolver.close();
    await udpHandlesBackTo(udpBefore);
  });
});

describe('shared sockets (RFC 5452 §9.2)', () => {
  it('many concurrent queries share a few sockets, each query with an id of its own', async () => {
    const r = createDefaultResolver({ servers: [lab.address], timeoutMs: TIMEOUT_MS });
    const from = lab.queries.length;
    const names = Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? 'host.test' : `n${i}.nowhere.test`));
    const outcomes = await Promise.allSettled(names.map((name) => r.resolve4(name, { ttl: true })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(20);
    const { ports, ids } = clientPortsAndIds(from);
    expect(ids).toHaveLength(60);
    expect(ports.size).toBeGreaterThanOrEqual(1);
    expect(ports.size).toBeLessThanOrEqual(4);
    expect(new Set(ids).size).toBeGreaterThan(50); // 16 random bits each: a few may repeat on different sockets
    // Later queries reuse the sockets.
    const later = lab.queries.length;
    await Promise.all(['host.test', 'mx.test'].map((name) => r.resolveMx(name).catch(() => [])));
    for (const port of clientPortsAndIds(later).ports) expect(ports).toContain(port);
    await r.close();
  });

  it('a socket is retired after 256 queries: the source port changes', async () => {
    const r = createDefaultResolver({ servers: [lab.address], timeoutMs: TIMEOUT_MS });
    const from = lab.queries.length;
    for (let i = 0; i < 300; i++) await r.resolve4('host.test', { ttl: true });
    const received = lab.queries.slice(from);
    expect(new Set(received.slice(0, 256).map((q) => q.clientPort)).size).toBe(1);
    expect(received[256]!.clientPort).not.toBe(received[0]!.clientPort);
    await r.close();
  });

  it('an answer carrying another query\'s id, or its own id with another question, is ignored', async () => {
    // Holds the first queries that share a socket, then answers each with the other's id or question first.
    const held: Array<{ query: dnsPacket.DecodedPacket; reply: Reply; port: number }> = [];
    let spoofed = 0;
    const server = await rawServer((query, reply, peer) => {
      if (spoofed > 0) return reply({ id: query.id, questions: query.questions, answers: [{ type: 'A', name: query.questions![0]!.name, ttl: 60, data: '198.51.100.9' }] });
      held.push({ query, reply, port: peer.port });
      const sharing = held.filter((h) => h.port === peer.port);
      if (sharing.length < 2 || spoofed > 0) return;
      const [a, b] = sharing as [(typeof held)[0], (typeof held)[0]];
      const record = (q: dnsPacket.DecodedPacket, data: string): Answer => ({ type: 'A', name: q.questions![0]!.name, ttl: 60, data });
      spoofed = 2;
      a.reply({ id: b.query.id, questions: a.query.questions, answers: [record(a.query, '203.0.113.1')] }); // b's id
      a.reply({ id: a.query.id, questions: b.query.questions, answers: [record(b.query, '203.0.113.2')] }); // b's question
      for (const h of held) h.reply({ id: h.query.id, questions: h.query.questions, answers: [record(h.query, '198.51.100.9')] });
    });
    try {
      const r = createDefaultResolver({ servers: [server.address], timeoutMs: 2000 });
      const names = Array.from({ length: 6 }, (_, i) => `q${i}.test`);
      const answers = await Promise.all(names.map((name) => r.resolve4(name, { ttl: true })));
      expect(spoofed).toBe(2);
      for (const answer of answers) expect(answer).toEqual([{ address: '198.51.100.9', ttl: 60 }]);
      await r.close();
    } finally {
      await server.close();
    }
  });

  it('close() closes the sockets, fails a query under way with ECANCELLED, and the resolver works on', async () => {
    const before = await settledUdpHandles();
    const r = createDefaultResolver({ servers: [lab.address], timeoutMs: 5000 });
    await Promise.all(['host.test', 'mx.test', 'null-mx.test'].map((name) => r.resolveMx(name).catch(() => [])));
    expect(udpHandles()).toBeGreaterThan(before);
    const pending = r.resolve4('silent.test', { ttl: true });
    await r.close();
    await expect(pending).rejects.toMatchObject({ code: 'ECANCELLED' });
    await udpHandlesBackTo(before);
    expect(await r.resolve4('host.test', { ttl: true })).toHaveLength(2);
    await r.close();
    await udpHandlesBackTo(before);
  });

  it("the verifier's close() closes the built-in resolver's sockets", async () => {
    const before = await settledUdpHandles();
    const verifier = createVerifier({ checks: 'dns', dns: { servers: [lab.address] }, allowPrivateAddresses: true });
    const from = lab.queries.length;
    await verifier.verify('someone@resolver-lab.com');
    expect(queriesSince(from, 'resolver-lab.com')).toEqual(['MX/udp']);
    expect(udpHandles()).toBeGreaterThan(before);
    await verifier.close();
    await udpHandlesBackTo(before);
  });

  it('NXDOMAIN and NODATA reject without a stack trace; transport failures keep theirs', async () => {
    const nxdomain = await resolver.resolveMx('nowhere.test').catch((error: Error) => error);
    const nodata = await resolver.resolveMx('nodata.test').catch((error: Error) => error);
    for (const error of [nxdomain, nodata]) {
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).stack).toBe(`Error: ${(error as Error).message}`);
    }
    expect(nxdomain).toMatchObject({ code: 'ENOTFOUND', message: 'queryMx ENOTFOUND nowhere.test' });
    const timeout = await createDefaultResolver({ servers: [lab.address], timeoutMs: 50 })
      .resolve4('silent.test', { ttl: true })
      .catch((error: Error) => error);
    expect(timeout).toMatchObject({ code: 'ETIMEOUT' });
    expect((timeout as Error).stack).toContain('\n    at ');
  });
});

describe('the cache honours the answer TTL (RFC 1035 §3.2.1)', () => {
  it('an MX with TTL 0 is never served from the cache, but concurrent lookups share its one query', async () => {
    const lookup = new DnsLookup(resolver);
    const from = lab.queries.length;
    const [first, second] = await Promise.all([lookup.mx('zero-ttl.test'), lookup.mx('zero-ttl.test')]);
    expect(first).toEqual(second);
    expect(queriesSince(from, 'zero-ttl.test')).toEqual(['MX/udp']);
    await lookup.mx('zero-ttl.test');
    expect(queriesSince(from, 'zero-ttl.test')).toEqual(['MX/udp', 'MX/udp']);
  });

  it('an MX without a TTL (a resolver like Node\'s) is kept for maxTtlMs', async () => {
    let asked = 0;
    const lookup = new DnsLookup(
      { ...resolver, resolveMx: async (name) => (asked++, (await resolver.resolveMx(name)).map(({ exchange, priority }) => ({ exchange, priority }))) },
      { maxTtlMs: 300 },
    );
    await lookup.mx('zero-ttl.test');
    await lookup.mx('zero-ttl.test');
    expect(asked).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 350));
    await lookup.mx('zero-ttl.test');
    expect(asked).toBe(2);
  });
});

// Helpers.

/** UDP sockets open in this process (the resolver's are unref'd: process.getActiveResourcesInfo() omits them). */
const liveUdp = new Set<number>();
createHook({
  init(id, type) {
    if (type === 'UDPWRAP') liveUdp.add(id);
  },
  destroy(id) {
    liveUdp.delete(id);
  },
}).enable();

function udpHandles(): number {
  return liveUdp.size;
}

/** The UDP handles once those closed by earlier tests are released. */
async function settledUdpHandles(): Promise<number> {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  return udpHandles();
}

/** Closed sockets release their handles in a later turn of the event loop: wait for that (2 s at most). */
async function udpHandlesBackTo(count: number): Promise<void> {
  const deadline = Date.now() + 2000;
  while (udpHandles() > count && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  expect(udpHandles()).toBe(count);
}

/** A UDP port with nothing behind it (bound, then closed). */
async function unusedPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** The source port and id of every query the lab received since `from`. */
function clientPortsAndIds(from: number): { ports: Set<number>; ids: number[] } {
  const received = lab.queries.slice(from).filter((q) => q.transport === 'udp');
  return { ports: new Set(received.map((q) => q.clientPort)), ids: received.map((q) => q.id) };
}

type Reply = (response: Buffer | { id?: number; type?: 'query' | 'response'; flags?: number; questions?: dnsPacket.Question[]; answers?: Answer[] }) => void;

/** A UDP DNS server that answers each query as `answer` decides, response by response. */
async function rawServer(answer: (query: dnsPacket.DecodedPacket, reply: Reply, from: RemoteInfo) => void): Promise<{ address: string; close: () => Promise<void> }> {
  const socket: UdpSocket = createSocket('udp4');
  socket.on('message', (message: Buffer, peer: RemoteInfo) => {
    const query = dnsPacket.decode(message);
    answer(query, (response) => {
      const bytes = Buffer.isBuffer(response) ? response : dnsPacket.encode({ type: 'response', flags: dnsPacket.RECURSION_AVAILABLE, ...response });
      socket.send(bytes, peer.port, peer.address);
    }, peer);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
