// The domain stage through the public createVerifier, against the lab DNS server on loopback (real UDP/TCP DNS,
// answered by test/lab/dns-server.ts and read by the default resolver): every DNS row of decisions.md §5.
import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifier, type Resolver, type VerifierOptions } from '../../packages/mailverify/src/index.js';
import { DnsLookup } from '../../packages/mailverify/src/dns/lookup.js';
import { createDefaultResolver } from '../../packages/mailverify/src/dns/resolver.js';
import { cachedMailDomain, resolveMailDomain, type ExchangerSkippedEvent } from '../../packages/mailverify/src/domain/mail-domain.js';
import { startDnsServer, type LabDnsServer, type Zones } from '../lab/dns-server.js';

// Public (global) addresses: the lab answers with them, nothing connects to them in a 'dns' check.
const PUBLIC_A = '93.184.216.34';
const PUBLIC_A2 = '198.41.0.4';
const PUBLIC_AAAA = '2606:4700:4700::1111';

const ZONES: Zones = {
  'mx-ok.com': { mx: [{ priority: 20, exchange: 'mx2.mx-ok.com' }, { priority: 10, exchange: 'mx1.mx-ok.com' }] },
  'mx1.mx-ok.com': { a: [PUBLIC_A] },
  'mx2.mx-ok.com': { a: [PUBLIC_A2], aaaa: [PUBLIC_AAAA] },
  'null-mx.com': { mx: [{ priority: 0, exchange: '' }] },
  'implicit.com': { a: [PUBLIC_A] },
  'implicit6.com': { aaaa: [PUBLIC_AAAA] },
  'implicit-private.com': { a: ['10.1.2.3'] },
  'no-records.com': { txt: ['v=spf1 -all'] },
  'dangling.com': { mx: [{ priority: 10, exchange: 'nowhere.dangling.com' }] },
  'loopback-mx.com': { mx: [{ priority: 10, exchange: 'mx.loopback-mx.com' }] },
  'mx.loopback-mx.com': { a: ['127.0.0.1'], aaaa: ['::1'] },
  'private-mx.com': { mx: [{ priority: 10, exchange: 'mx.private-mx.com' }] },
  'mx.private-mx.com': { a: ['192.168.1.20', '169.254.169.254', '100.64.0.1'], aaaa: ['fd00::25'] },
  'literal-mx.com': { mx: [{ priority: 10, exchange: '93.184.216.34' }] },
  'localhost-mx.com': { mx: [{ priority: 10, exchange: 'localhost' }] },
  localhost: { a: ['127.0.0.1'] },
  'failover.com': {
    mx: [
      { priority: 5, exchange: 'broken.failover.com' },
      { priority: 10, exchange: 'good.failover.com' },
    ],
  },
  'good.failover.com': { a: [PUBLIC_A] },
  'servfail.com': { rcode: 'SERVFAIL' },
  'refused.com': { rcode: 'REFUSED' },
  'servfail-once.com': { mx: [{ priority: 10, exchange: 'mx.servfail-once.com' }], servfailTimes: 1 },
  'mx.servfail-once.com': { a: [PUBLIC_A] },
  'silent.com': { silent: true },
  'slow-exchange.com': { mx: [{ priority: 10, exchange: 'mx.slow-exchange.com' }] },
  'mx.slow-exchange.com': { silent: true },
  'short-ttl.com': { mx: [{ priority: 10, exchange: 'mx.short-ttl.com' }], ttl: 1 },
  'mx.short-ttl.com': { a: [PUBLIC_A], ttl: 1 },
  'cname-mx.com': { cname: 'target.cname-mx.com' },
  'target.cname-mx.com': { mx: [{ priority: 10, exchange: 'mx1.mx-ok.com' }] },
  'parked.com': { mx: [{ priority: 10, exchange: 'mx.parking-lab.net' }] },
  'mx.parking-lab.net': { a: [PUBLIC_A] },
  'trap.com': { mx: [{ priority: 10, exchange: 'mx.trap-lab.net' }] },
  'mx.trap-lab.net': { a: [PUBLIC_A] },
  'dea-mx.com': { mx: [{ priority: 10, exchange: 'mx.dea-lab.net' }] },
  // A typo of a common domain that exists, with MX records: no suggestion for it.
  'yaho.com': { mx: [{ priority: 10, exchange: 'mx1.mx-ok.com' }] },
  'xn--gmil-63d.com': { mx: [{ priority: 10, exchange: 'mx1.mx-ok.com' }] }, // gmаil.com, with a Cyrillic а
  'mx.dea-lab.net': { a: [PUBLIC_A] },
  // The first UDP query for each name is lost.
  'lossy.com': { mx: [{ priority: 10, exchange: 'mx.lossy.com' }], dropUdp: 1 },
  'mx.lossy.com': { a: [PUBLIC_A], aaaa: [PUBLIC_AAAA], dropUdp: 1 },
  'zero-ttl.com': { mx: [{ priority: 10, exchange: 'mx1.mx-ok.com' }], ttl: 0 },
  'two-second-ttl.com': { mx: [{ priority: 10, exchange: 'mx1.mx-ok.com' }], ttl: 2 },
};

let lab: LabDnsServer;
beforeAll(async () => {
  lab = await startDnsServer(ZONES);
});
afterAll(async () => {
  await lab.close();
});

function verifier(options: VerifierOptions = {}) {
  return createVerifier({
    checks: 'dns',
    ...options,
    // A 400 ms timeout retransmits after 57 ms, which a loaded machine can reach: the counts below are of queries
    // made (exchangeCount), not of datagrams.
    dns: { servers: [lab.address], timeoutMs: 400, ...options.dns },
    lists: {
      parkedMailExchangers: ['parking-lab.net'],
      honeypotMailExchangers: ['trap-lab.net'],
      disposableMailExchangers: ['dea-lab.net'],
      ...options.lists,
    },
  });
}

async function statusOf(address: string, options: VerifierOptions = {}): Promise<string> {
  return (await verifier(options).verify(address)).status;
}

describe('DNS answers → statuses (decisions.md §5)', () => {
  it('MX records whose exchanges resolve to global addresses: Success', async () => {
    const entry = await verifier().verify('john.doe@mx-ok.com');
    expect(entry).toMatchObject({ status: 'Success', classification: 'Deliverable', emailAddress: 'john.doe@mx-ok.com' });
  });

  it('NXDOMAIN: DomainDoesNotExist', async () => {
    expect(await statusOf('a@no-such-domain.com')).toBe('DomainDoesNotExist');
  });

  it('a single MX "0 ." (RFC 7505): DomainHasNullMx, and no exchange is looked up', async () => {
    const before = lab.exchangeCount();
    expect(await statusOf('a@null-mx.com')).toBe('DomainHasNullMx');
    expect(lab.exchangeCount() - before).toBe(1);
  });

  it('no MX, but A or AAAA records: the implicit MX (RFC 5321 §5.1)', async () => {
    expect(await statusOf('a@implicit.com')).toBe('Success');
    expect(await statusOf('a@implicit6.com')).toBe('Success');
  });

  it('no MX and no A/AAAA: DomainIsMisconfigured', async () => {
    expect(await statusOf('a@no-records.com')).toBe('DomainIsMisconfigured');
  });

  it('an implicit MX at a private address: DomainIsMisconfigured unless private addresses are allowed', async () => {
    expect(await statusOf('a@implicit-private.com')).toBe('DomainIsMisconfigured');
    expect(await statusOf('a@implicit-private.com', { allowPrivateAddresses: true })).toBe('Success');
  });

  it('every MX host unresolvable: DomainIsMisconfigured', async () => {
    expect(await statusOf('a@dangling.com')).toBe('DomainIsMisconfigured');
  });

  it('MX hosts resolving only to loopback, private, link-local or shared addresses: DomainIsMisconfigured', async () => {
    expect(await statusOf('a@loopback-mx.com')).toBe('DomainIsMisconfigured');
    expect(await statusOf('a@private-mx.com')).toBe('DomainIsMisconfigured');
    expect(await statusOf('a@localhost-mx.com')).toBe('DomainIsMisconfigured');
    expect(await statusOf('a@loopback-mx.com', { allowPrivateAddresses: true })).toBe('Success');
    expect(await statusOf('a@private-mx.com', { allowPrivateAddresses: true })).toBe('Success');
  });

  it('an IP literal as exchange: DomainIsMisconfigured, whatever allowPrivateAddresses says', async () => {
    expect(await statusOf('a@literal-mx.com')).toBe('DomainIsMisconfigured');
    expect(await statusOf('a@literal-mx.com', { allowPrivateAddresses: true })).toBe('DomainIsMisconfigured');
  });

  it('SERVFAIL or REFUSED after one retry: DomainIsMisconfigured; a SERVFAIL answered on the retry is no failure', async () => {
    const before = lab.exchangeCount('servfail.com', 'MX');
    expect(await statusOf('a@servfail.com')).toBe('DomainIsMisconfigured');
    expect(lab.exchangeCount('servfail.com', 'MX') - before).toBe(2);
    expect(await statusOf('a@refused.com')).toBe('DomainIsMisconfigured');
    expect(await statusOf('a@servfail-once.com')).toBe('Success');
  });

  it('no answer in time: DnsQueryTimeout, for the domain and for its exchanges', async () => {
    expect(await statusOf('a@silent.com', { dns: { timeoutMs: 200 } })).toBe('DnsQueryTimeout');
    expect(await statusOf('a@slow-exchange.com', { dns: { timeoutMs: 200 } })).toBe('DnsQueryTimeout');
  });

  it('a lost datagram is sent again within dns.timeoutMs: no DnsQueryTimeout', async () => {
    const from = lab.queries.length;
    expect(await statusOf('a@lossy.com', { dns: { timeoutMs: 700 } })).toBe('Success');
    const sent = lab.queries.slice(from).map((q) => `${q.name} ${q.type}`);
    expect(sent.filter((q) => q === 'lossy.com MX')).toHaveLength(2);
    expect(sent.filter((q) => q.startsWith('mx.lossy.com '))).toHaveLength(3); // A and AAAA, one of them lost once
  });

  it('a socket failure (nothing listening): DnsConnectionFailure', async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const { port } = socket.address();
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    expect(await statusOf('a@mx-ok.com', { dns: { servers: [`127.0.0.1:${port}`] } })).toBe('DnsConnectionFailure');
  });

  it('follows a CNAME to the MX records', async () => {
    expect(await statusOf('a@cname-mx.com')).toBe('Success');
  });
});

describe('mail exchangers', () => {
  const lookup = () => new DnsLookup(createDefaultResolver({ servers: [lab.address], timeoutMs: 400 }));

  it('are sorted by preference, each with its addresses', async () => {
    expect(await resolveMailDomain(lookup(), 'mx-ok.com', { allowPrivateAddresses: false })).toEqual({
      status: null,
      hasMx: true,
      exchangers: [
        { host: 'mx1.mx-ok.com', priority: 10, addresses: [PUBLIC_A] },
        { host: 'mx2.mx-ok.com', priority: 20, addresses: [PUBLIC_A2, PUBLIC_AAAA] },
      ],
    });
  });

  it('skip an unresolvable exchange and keep the next one', async () => {
    const result = await resolveMailDomain(lookup(), 'failover.com', { allowPrivateAddresses: false });
    expect(result).toEqual({ status: null, hasMx: true, exchangers: [{ host: 'good.failover.com', priority: 10, addresses: [PUBLIC_A] }] });
  });

  it('keep only the usable addresses of an exchange', async () => {
    const result = await resolveMailDomain(lookup(), 'private-mx.com', { allowPrivateAddresses: true });
    expect(result.status === null && result.exchangers[0]!.addresses).toEqual(['192.168.1.20', '169.254.169.254', '100.64.0.1', 'fd00::25']);
  });

  it('come from the cache without a query once resolved: the same result as the resolution, the same object each time', async () => {
    const dns = lookup();
    const domains = ['mx-ok.com', 'failover.com', 'implicit.com', 'null-mx.com', 'dangling.com', 'no-records.com'];
    for (const domain of domains) expect(cachedMailDomain(dns, domain, { allowPrivateAddresses: false })).toBeUndefined();
    expect(dns.stats.hits).toBe(0);
    const resolved = [];
    for (const domain of domains) resolved.push(await resolveMailDomain(dns, domain, { allowPrivateAddresses: false }));
    const { queries, hits } = dns.stats;
    const first = domains.map((domain) => cachedMailDomain(dns, domain, { allowPrivateAddresses: false }));
    expect(first).toEqual(resolved);
    const again = domains.map((domain) => cachedMailDomain(dns, domain, { allowPrivateAddresses: false }));
    again.forEach((result, i) => expect(result).toBe(first[i]));
    expect(dns.stats.queries).toBe(queries);
    expect(dns.stats.hits).toBeGreaterThan(hits);
  });

  it('come from the cache only while every answer is cached', async () => {
    const dns = new DnsLookup(createDefaultResolver({ servers: [lab.address], timeoutMs: 400 }), { maxTtlMs: 50 });
    const resolved = await resolveMailDomain(dns, 'mx-ok.com', { allowPrivateAddresses: false });
    expect(cachedMailDomain(dns, 'mx-ok.com', { allowPrivateAddresses: false })).toEqual(resolved);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(cachedMailDomain(dns, 'mx-ok.com', { allowPrivateAddresses: false })).toBeUndefined();
  });

  it('left out for their non-global addresses are reported on every resolution from the cache', async () => {
    const dns = lookup();
    const skipped: ExchangerSkippedEvent[] = [];
    const options = { allowPrivateAddresses: false, onSkipped: (event: ExchangerSkippedEvent) => skipped.push(event) };
    expect(await resolveMailDomain(dns, 'loopback-mx.com', options)).toEqual({ status: 'DomainIsMisconfigured', hasMx: true });
    expect(cachedMailDomain(dns, 'loopback-mx.com', options)).toEqual({ status: 'DomainIsMisconfigured', hasMx: true });
    expect(cachedMailDomain(dns, 'loopback-mx.com', options)).toEqual({ status: 'DomainIsMisconfigured', hasMx: true });
    expect(skipped).toHaveLength(3);
    expect(skipped[2]).toEqual({ domain: 'loopback-mx.com', exchanger: 'mx.loopback-mx.com', addresses: ['127.0.0.1', '::1'] });
  });

  it('name the implicit MX after the domain itself', async () => {
    expect(await resolveMailDomain(lookup(), 'implicit.com', { allowPrivateAddresses: false })).toEqual({
      status: null,
      hasMx: false,
      exchangers: [{ host: 'implicit.com', priority: 0, addresses: [PUBLIC_A] }],
    });
  });
});

describe('mail-exchanger host lists (pipeline step 7)', () => {
  it('parking service, spam trap and disposable provider exchangers', async () => {
    expect(await statusOf('a@parked.com')).toBe('MailExchangerIsParked');
    expect(await statusOf('a@trap.com')).toBe('MailExchangerIsHoneypot');
    const dea = await verifier().verify('a@dea-mx.com');
    expect(dea).toMatchObject({ status: 'MailExchangerIsWellKnownDea', classification: 'Risky', isDisposableEmailAddress: true });
  });
});

describe('queries that are never sent', () => {
  it('no query for a syntax failure, an unknown or special-use top-level label, or a listed disposable domain', async () => {
    const v = verifier();
    const before = lab.exchangeCount();
    for (const [address, status] of [
      ['john..doe@mx-ok.com', 'DoubleDotSequence'],
      ['a@mx-ok', 'DomainPartCompliancyFailure'],
      ['a@host.notarealtld', 'DomainDoesNotExist'],
      ['a@printer.local', 'DomainDoesNotExist'],
      ['a@site.test', 'DomainDoesNotExist'],
      ['a@x.example', 'DomainDoesNotExist'],
      ['a@hidden.onion', 'DomainDoesNotExist'],
      ['a@router.home.arpa', 'DomainDoesNotExist'],
      ['a@mailinator.com', 'DomainIsWellKnownDea'],
    ] as const) {
      expect([address, (await v.verify(address)).status]).toEqual([address, status]);
    }
    expect(lab.exchangeCount() - before).toBe(0);
    expect(v.stats().dns.queries).toBe(0);
  });

  it("checks: 'syntax' sends no query at all", async () => {
    const v = verifier({ checks: 'syntax' });
    const before = lab.exchangeCount();
    expect((await v.verify('a@mx-ok.com')).status).toBe('Success');
    expect((await v.verify('a@no-such-domain.com')).status).toBe('Success');
    expect(lab.exchangeCount() - before).toBe(0);
  });

  it('no query for a domain literal; a non-global literal is UnacceptableDomainLiteral at the "["', async () => {
    const v = verifier();
    const before = lab.exchangeCount();
    expect(await v.verify('test@[127.0.0.1]')).toMatchObject({ status: 'UnacceptableDomainLiteral', syntaxFailureIndex: 5 });
    expect(await v.verify('x@(c)[IPv6:::1]')).toMatchObject({ status: 'UnacceptableDomainLiteral', syntaxFailureIndex: 5 });
    expect(await v.verify('x@[010.0.0.1]')).toMatchObject({ status: 'UnacceptableDomainLiteral', syntaxFailureIndex: 2 });
    expect((await v.verify('x@[93.184.216.34]')).status).toBe('Success');
    expect((await verifier({ allowPrivateAddresses: true }).verify('test@[127.0.0.1]')).status).toBe('Success');
    expect(lab.exchangeCount() - before).toBe(0);
  });
});

describe('the DNS cache', () => {
  it('answers a domain seen before without a query', async () => {
    const v = verifier();
    await v.verify('a@mx-ok.com');
    const sent = lab.exchangeCount();
    const first = v.stats().dns;
    expect(first.queries).toBeGreaterThan(0);
    await v.verify('b@mx-ok.com');
    await v.verify('c@MX-OK.com');
    expect(lab.exchangeCount()).toBe(sent);
    expect(v.stats().dns.queries).toBe(first.queries);
    expect(v.stats().dns.hits).toBeGreaterThan(first.hits);
  });

  it('caches negative answers too', async () => {
    const v = verifier();
    await v.verify('a@no-such-domain.com');
    const sent = lab.exchangeCount();
    expect((await v.verify('b@no-such-domain.com')).status).toBe('DomainDoesNotExist');
    expect(lab.exchangeCount()).toBe(sent);
  });

  it('shares one request between concurrent identical queries', async () => {
    const v = verifier();
    const before = lab.exchangeCount('mx-ok.com', 'MX');
    const entries = await Promise.all(Array.from({ length: 20 }, (_, i) => v.verify(`user${i}@mx-ok.com`)));
    expect(entries.every((e) => e.status === 'Success')).toBe(true);
    expect(lab.exchangeCount('mx-ok.com', 'MX') - before).toBe(1);
  });

  it('asks again when the TTL of the answer has passed', async () => {
    const v = verifier();
    await v.verify('a@short-ttl.com');
    const before = lab.exchangeCount('mx.short-ttl.com', 'A');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await v.verify('b@short-ttl.com');
    expect(lab.exchangeCount('mx.short-ttl.com', 'A') - before).toBe(1);
  });

  it('never serves an MX of TTL 0 from the cache (RFC 1035 §3.2.1)', async () => {
    const v = verifier();
    const before = lab.exchangeCount('zero-ttl.com', 'MX');
    expect((await v.verify('a@zero-ttl.com')).status).toBe('Success');
    expect((await v.verify('b@zero-ttl.com')).status).toBe('Success');
    expect(lab.exchangeCount('zero-ttl.com', 'MX') - before).toBe(2);
    expect(v.stats().dns.hits).toBeGreaterThan(0); // the exchange's addresses (TTL 300) did come from the cache
  });

  it('keeps an MX of TTL 2 s for 2 s, then asks again', async () => {
    const v = verifier();
    const before = lab.exchangeCount('two-second-ttl.com', 'MX');
    const started = performance.now();
    await v.verify('a@two-second-ttl.com');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await v.verify('b@two-second-ttl.com');
    const afterOneSecond = lab.exchangeCount('two-second-ttl.com', 'MX');
    // Unless the machine stalled for a second, the answer was still fresh.
    if (performance.now() - started < 1900) expect(afterOneSecond - before).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 2100 - (performance.now() - started))));
    await v.verify('c@two-second-ttl.com');
    expect(lab.exchangeCount('two-second-ttl.com', 'MX') - afterOneSecond).toBe(1);
  });

  it('keeps at most maxEntries answers', async () => {
    const v = verifier({ dns: { cache: { maxEntries: 1 } } });
    await v.verify('a@implicit.com'); // MX, A and AAAA: only the last answer stays
    const before = lab.exchangeCount('implicit.com', 'MX');
    await v.verify('b@implicit.com');
    expect(lab.exchangeCount('implicit.com', 'MX') - before).toBe(1);
  });
});

describe('flags and suggestions', () => {
  it('are filled for an address that parses, whatever its status', async () => {
    const entry = await verifier().verify('postmaster@no-such-domain.com');
    expect(entry).toMatchObject({ status: 'DomainDoesNotExist', isRoleAccount: true, isFreeEmailAddress: false, isDisposableEmailAddress: false });
    const free = await verifier({ checks: 'syntax' }).verify('jane.doe@gmail.com');
    expect(free).toMatchObject({ status: 'Success', isFreeEmailAddress: true, isRoleAccount: false });
  });

  it('suggest the likely domain for a typo, but never for a domain with MX records in this run', async () => {
    const typo = await verifier().verify('jane@outlok.com');
    expect(typo).toMatchObject({ status: 'DomainDoesNotExist', suggestions: ['jane@outlook.com'] });
    // Typo domains registered by disposable services keep their suggestion.
    const squatted = await verifier().verify('jane@gmial.com');
    expect(squatted).toMatchObject({ status: 'DomainIsWellKnownDea', suggestions: ['jane@gmail.com'] });
    const offline = await verifier({ checks: 'syntax' }).verify('jane@yaho.com');
    expect(offline.suggestions).toEqual(['jane@yahoo.com']);
    const resolvesWithMx = await verifier().verify('jane@yaho.com');
    expect(resolvesWithMx).toMatchObject({ status: 'Success' });
    expect(resolvesWithMx.suggestions).toBeUndefined();
  });

  it('suggest the common domain a look-alike stands for even when it has MX records, and flag its mixed scripts', async () => {
    const lookAlike = await verifier().verify('jane@gm\u0430il.com');
    expect(lookAlike).toMatchObject({ status: 'Success', suggestions: ['jane@gmail.com'], hasMixedScriptDomainName: true });
    expect(lookAlike.asciiEmailAddressDomainPart).toBe('xn--gmil-63d.com');
    const plain = await verifier().verify('jane@mx-ok.com');
    expect(plain.hasMixedScriptDomainName).toBeUndefined();
  });
});

describe('a resolver of the host application', () => {
  it('is used instead of the default one, behind the cache (the README example, pointed at the lab)', async () => {
    const { promises: dns } = await import('node:dns');
    const system = new dns.Resolver({ timeout: 400, tries: 1 });
    system.setServers([lab.address]);
    const asked: string[] = [];
    const resolver: Resolver = {
      resolveMx: (name) => (asked.push(`MX ${name}`), system.resolveMx(name)),
      resolve4: (name, options) => (asked.push(`A ${name}`), system.resolve4(name, options)),
      resolve6: (name, options) => (asked.push(`AAAA ${name}`), system.resolve6(name, options)),
    };
    const v = createVerifier({ checks: 'dns', dns: { resolver } });
    expect((await v.verify('a@mx-ok.com')).status).toBe('Success');
    expect((await v.verify('b@mx-ok.com')).status).toBe('Success');
    expect((await v.verify('a@null-mx.com')).status).toBe('DomainHasNullMx');
    expect(asked.filter((q) => q === 'MX mx-ok.com')).toHaveLength(1);
    expect(asked).toContain('A mx1.mx-ok.com');
    expect(v.stats().dns.hits).toBeGreaterThan(0);
  });

  // A stand-in for the host's own code, failing the ways the interface documents (the real faults are tested above).
  it('has its errors read by their Node codes', async () => {
    const failing = (code: string): Resolver => {
      const fail = (name: string) => Promise.reject(Object.assign(new Error(`${code} ${name}`), { code }));
      return { resolveMx: fail, resolve4: fail, resolve6: fail };
    };
    const statusWith = async (code: string) => (await createVerifier({ checks: 'dns', dns: { resolver: failing(code) } }).verify('a@example-corp.com')).status;
    expect(await statusWith('ETIMEOUT')).toBe('DnsQueryTimeout');
    expect(await statusWith('ECONNREFUSED')).toBe('DnsConnectionFailure');
    expect(await statusWith('ENOTFOUND')).toBe('DomainDoesNotExist');
    expect(await statusWith('ESERVFAIL')).toBe('DomainIsMisconfigured');
  });
});
