// The doctor through the public API, diagnoseEgress, against real parts on loopback: the lab DNS server (PTR, A, SPF
// TXT and DNSBL zones), lab exchangers that name the client's address in their EHLO reply, and a real SOCKS5 proxy
// (microsocks). Each egress leaves from an address of its own in 127.0.0.0/8, so each has its own reverse DNS.
import { promises as dns } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnoseEgress, type DiagnoseEgressOptions, type EgressDiagnosis, type SmtpEgress } from '../../packages/mailverify/src/index.js';
import { expectNoLeak } from '../lab/leaks.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { startSocksProxy, type SocksProxyProcess } from '../lab/socks-proxy.js';
import { MICROSOCKS, needing } from '../lab/system-programs.js';

const PASSWORD = 'doctor-Pa55word';
const ZONES = ['bl.example-dnsbl.com', 'other.example-dnsbl.com'];
/** 2001:db8::5 as RFC 3596 §2.5 reverses it: 32 nibbles, least significant first. */
const V6_NIBBLES = '5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2';

let lab: MailLab;
let proxy: SocksProxyProcess;
const proxyIt = needing(MICROSOCKS, 'the doctor test of a SOCKS5 proxy (microsocks)').it;

beforeAll(async () => {
  lab = await startMailLab({
    servers: { mx1: { mailboxes: [] }, silent: { silent: 'greeting' } },
    domains: {
      'probe-doctor.com': ['mx1'],
      'closed-doctor.com': ['refused'],
      'silent-doctor.com': ['silent'],
      // 127.0.0.50: all well. Its PTR name resolves back, and is the HELO name.
      '50.0.0.127.in-addr.arpa': { ptr: ['ok.example-doctor.com'] },
      'ok.example-doctor.com': { a: ['127.0.0.50'] },
      // 127.0.0.51: no PTR record. 127.0.0.52: a PTR name other than the HELO name. 127.0.0.53: a PTR name that
      // does not resolve back.
      '52.0.0.127.in-addr.arpa': { ptr: ['other.example-doctor.com'] },
      'other.example-doctor.com': { a: ['127.0.0.52'] },
      'helo52.example-doctor.com': { a: ['127.0.0.52'] },
      '53.0.0.127.in-addr.arpa': { ptr: ['elsewhere.example-doctor.com'] },
      'elsewhere.example-doctor.com': { a: ['127.0.0.99'] },
      // 127.0.0.54: listed. 127.0.0.55: the zone refuses this resolver.
      '54.0.0.127.in-addr.arpa': { ptr: ['listed.example-doctor.com'] },
      'listed.example-doctor.com': { a: ['127.0.0.54'] },
      '54.0.0.127.bl.example-dnsbl.com': { a: ['127.0.0.2'], txt: ['Listed: see https://bl.example-dnsbl.com/54'] },
      '55.0.0.127.bl.example-dnsbl.com': { a: ['127.255.255.254'] },
      // 2001:db8::5, given as publicAddress: reverse nibbles under ip6.arpa, its AAAA record, listed by nibbles too.
      [`${V6_NIBBLES}.ip6.arpa`]: { ptr: ['v6.example-doctor.com'] },
      'v6.example-doctor.com': { aaaa: ['2001:db8::5'] },
      [`${V6_NIBBLES}.bl.example-dnsbl.com`]: { a: ['127.0.0.4'] },
      // SPF of the sender domains.
      'example-doctor.com': { txt: ['v=spf1 ip4:127.0.0.50 ip4:127.0.0.52 ip4:127.0.0.54 ip4:127.0.0.55 ip6:2001:db8::/64 -all'] },
      'softfail-doctor.com': { txt: ['v=spf1 ip4:192.0.2.1 ~all'] },
      'fail-doctor.com': { txt: ['v=spf1 -all'] },
      'nospf-doctor.com': { txt: ['some other text'] },
    },
  });
  if (proxyIt === it) proxy = await startSocksProxy({ username: 'prober', password: PASSWORD, bindAddress: '127.0.0.56' });
});

afterAll(async () => {
  await proxy?.stop();
  await lab?.close();
});

function options(egress: SmtpEgress[], more: DiagnoseEgressOptions = {}): DiagnoseEgressOptions {
  return {
    heloName: 'ok.example-doctor.com',
    mailFrom: 'bounce@example-doctor.com',
    allowPrivateAddresses: true,
    dnsbl: ZONES,
    probeDomain: 'probe-doctor.com',
    ...more,
    dns: { servers: [lab.dnsAddress], timeoutMs: 1000, ...more.dns },
    smtp: { port: lab.port, connectTimeoutMs: 1500, commandTimeoutMs: 1500, egress, ...more.smtp },
  };
}

/** The rows of one egress by check. */
function byCheck(rows: EgressDiagnosis[], egress: string): Record<string, EgressDiagnosis> {
  return Object.fromEntries(rows.filter((row) => row.egress === egress).map((row) => [row.check, row]));
}

function results(rows: EgressDiagnosis[], egress: string): Record<string, string> {
  return Object.fromEntries(rows.filter((row) => row.egress === egress).map((row) => [row.check, row.result]));
}

function expectFixes(rows: EgressDiagnosis[]): void {
  for (const row of rows) {
    if (row.result !== 'ok') expect(row.detail, `${row.egress} ${row.check}`).toMatch(/ — \S/);
    expect(row.detail).not.toMatch(/[\r\n]/);
  }
}

describe('diagnoseEgress', () => {
  it('all ok: PTR and HELO name agree, SPF passes, not listed, port 25 answers, the EHLO reply tells the address', async () => {
    let rows: EgressDiagnosis[] = [];
    await expectNoLeak(async () => {
      rows = await diagnoseEgress(options([{ id: 'good', localAddress: '127.0.0.50' }]));
    }, 2000, ['UDPWRAP']);
    expect(rows.map((row) => row.check)).toEqual(['public-address', 'ptr', 'helo', 'spf', 'dnsbl', 'port25']);
    expect(rows.every((row) => row.egress === 'good' && row.result === 'ok'), JSON.stringify(rows, null, 1)).toBe(true);
    const row = byCheck(rows, 'good');
    expect(row['public-address']!.detail).toContain('127.0.0.50 (as mx1.mx.lab.test saw it in its EHLO reply)');
    expect(row.ptr!.detail).toBe('127.0.0.50 → ok.example-doctor.com → 127.0.0.50');
    expect(row.spf!.detail).toMatch(/^pass for 127\.0\.0\.50 from example-doctor\.com/);
    expect(row.dnsbl!.detail).toBe('127.0.0.50 is not listed on bl.example-dnsbl.com, other.example-dnsbl.com');
    expect(row.port25!.detail).toBe(`mx1.mx.lab.test (127.0.0.2) port ${lab.port}: greeting 220, EHLO ok.example-doctor.com 250 (naming 127.0.0.50), QUIT`);
    // Greeting, EHLO, QUIT: never MAIL.
    const lines = lab.transcript('mx1').flat();
    expect(lines).toEqual(['EHLO ok.example-doctor.com', 'QUIT']);
    expect(lab.stats('mx1').transactions).toBe(0);
  });

  it('no PTR record: fail; a HELO name that does not resolve to the address: fail', async () => {
    const rows = await diagnoseEgress(options([{ id: 'noptr', localAddress: '127.0.0.51' }]));
    expectFixes(rows);
    const row = byCheck(rows, 'noptr');
    expect(row.ptr!.result).toBe('fail');
    expect(row.ptr!.detail).toMatch(/^no PTR record for 127\.0\.0\.51 \(51\.0\.0\.127\.in-addr\.arpa\) — ask whoever holds/);
    expect(row.helo!.result).toBe('fail');
    expect(row.helo!.detail).toContain('ok.example-doctor.com resolves to 127.0.0.50, not to 127.0.0.51');
    // Not in the SPF record either: -all.
    expect(row.spf!.result).toBe('fail');
  });

  it('a PTR name other than the HELO name: warn; a PTR name that does not resolve back: fail', async () => {
    const rows = await diagnoseEgress(
      options([
        { id: 'other', localAddress: '127.0.0.52', heloName: 'helo52.example-doctor.com' },
        { id: 'unconfirmed', localAddress: '127.0.0.53', heloName: 'elsewhere.example-doctor.com' },
      ]),
    );
    expectFixes(rows);
    expect(results(rows, 'other')).toMatchObject({ ptr: 'ok', helo: 'warn', spf: 'ok' });
    expect(byCheck(rows, 'other').helo!.detail).toContain('use other.example-doctor.com as the HELO name (--helo-name)');
    expect(results(rows, 'unconfirmed')).toMatchObject({ ptr: 'fail', helo: 'fail' });
    expect(byCheck(rows, 'unconfirmed').ptr!.detail).toContain('elsewhere.example-doctor.com → 127.0.0.99');
  });

  it('SPF: softfail and fail are failures, no record a warning', async () => {
    const rows = await diagnoseEgress(
      options([
        { id: 'soft', localAddress: '127.0.0.50', mailFrom: 'bounce@softfail-doctor.com' },
        { id: 'hard', localAddress: '127.0.0.50', mailFrom: 'bounce@fail-doctor.com' },
        { id: 'none', localAddress: '127.0.0.50', mailFrom: 'bounce@nospf-doctor.com' },
      ]),
    );
    expectFixes(rows);
    expect(byCheck(rows, 'soft').spf).toMatchObject({ result: 'fail' });
    expect(byCheck(rows, 'soft').spf!.detail).toMatch(/^softfail for 127\.0\.0\.50 from softfail-doctor\.com .* — add ip4:127\.0\.0\.50 to the SPF record/);
    expect(byCheck(rows, 'hard').spf).toMatchObject({ result: 'fail' });
    expect(byCheck(rows, 'hard').spf!.detail).toMatch(/^fail for/);
    expect(byCheck(rows, 'none').spf).toMatchObject({ result: 'warn' });
    expect(byCheck(rows, 'none').spf!.detail).toMatch(/^none for 127\.0\.0\.50 from nospf-doctor\.com \(no SPF record\) — /);
  });

  it('DNSBL: a listing is a failure with its reason; a 127.255.255.x answer (resolver refused) a warning', async () => {
    const rows = await diagnoseEgress(
      options([
        { id: 'listed', localAddress: '127.0.0.54', heloName: 'listed.example-doctor.com' },
        { id: 'refused', localAddress: '127.0.0.55' },
      ]),
    );
    expectFixes(rows);
    expect(byCheck(rows, 'listed').dnsbl!.result).toBe('fail');
    expect(byCheck(rows, 'listed').dnsbl!.detail).toContain('127.0.0.54 is listed on bl.example-dnsbl.com (127.0.0.2: Listed: see https://bl.example-dnsbl.com/54)');
    expect(byCheck(rows, 'refused').dnsbl!.result).toBe('warn');
    expect(byCheck(rows, 'refused').dnsbl!.detail).toMatch(
      /^bl\.example-dnsbl\.com refuses this resolver \(127\.255\.255\.254\); not listed on other\.example-dnsbl\.com — .*--dns-server/,
    );
  });

  it('port 25 refused: fail; the public address unknown: warn, and the checks that need it warn too', async () => {
    let rows: EgressDiagnosis[] = [];
    await expectNoLeak(async () => {
      rows = await diagnoseEgress(options([], { probeDomain: 'closed-doctor.com' }));
    }, 2000, ['UDPWRAP']);
    expectFixes(rows);
    expect(results(rows, 'default')).toEqual({ 'public-address': 'warn', ptr: 'warn', helo: 'warn', spf: 'warn', dnsbl: 'warn', port25: 'fail' });
    const row = byCheck(rows, 'default');
    expect(row.port25!.detail).toMatch(/refused or dropped the connection .* — outbound port 25 is closed here .*--smtp-proxy/);
    expect(row.ptr!.detail).toMatch(/^not checked: it needs the public address — .*--public-address/);
  });

  it('a silent exchanger: fail once the connect timeout has passed', async () => {
    const started = Date.now();
    let rows: EgressDiagnosis[] = [];
    // The session given up on leaves no socket nor timer behind.
    await expectNoLeak(async () => {
      rows = await diagnoseEgress(options([{ id: 'good', localAddress: '127.0.0.50' }], { probeDomain: 'silent-doctor.com', smtp: { connectTimeoutMs: 300 } }));
    }, 2000, ['UDPWRAP']);
    expect(Date.now() - started).toBeLessThan(3000);
    const row = byCheck(rows, 'good');
    expect(row.port25!.result).toBe('fail');
    expect(row.port25!.detail).toMatch(/stayed silent: no greeting within 300 ms — outbound port 25 is closed here/);
    // The address is still known (localAddress): the other checks ran.
    expect(row['public-address']!.detail).toBe("127.0.0.50 (the egress's localAddress)");
    expect(row.ptr!.result).toBe('ok');
  });

  proxyIt('a proxy that refuses the password: fail, and the password appears nowhere', async () => {
    const wrong = proxy.url.replace(encodeURIComponent(PASSWORD), 'not-the-Secret9');
    const rows = await diagnoseEgress(options([{ id: 'badproxy', proxy: wrong }, { id: 'proxied', proxy: proxy.url }]));
    expectFixes(rows);
    expect(JSON.stringify(rows)).not.toContain(PASSWORD);
    expect(JSON.stringify(rows)).not.toContain('not-the-Secret9');
    const bad = byCheck(rows, 'badproxy');
    expect(rows.filter((row) => row.egress === 'badproxy').map((row) => row.check)[0]).toBe('proxy');
    expect(bad.proxy!.result).toBe('fail');
    expect(bad.proxy!.detail).toContain(`socks5://prober@127.0.0.1:${proxy.port}`);
    expect(bad.proxy!.detail).toContain('refused the credentials');
    const good = byCheck(rows, 'proxied');
    expect(good.proxy!.result).toBe('ok');
    expect(good.port25!.result).toBe('ok');
    // The exchanger saw the proxy's outgoing address.
    expect(good['public-address']!.detail).toContain('127.0.0.56 (as mx1.mx.lab.test saw it');
  });

  it('without allowPrivateAddresses, loopback exchangers and addresses are not used', async () => {
    const rows = await diagnoseEgress(options([{ id: 'good', localAddress: '127.0.0.50' }], { allowPrivateAddresses: false }));
    expectFixes(rows);
    const row = byCheck(rows, 'good');
    expect(row.port25!.result).toBe('fail');
    expect(row.port25!.detail).toContain('private or loopback addresses only (mx1.mx.lab.test 127.0.0.2)');
    expect(row['public-address']!.result).toBe('warn');
    expect(row['public-address']!.detail).toContain('only used with --allow-private-addresses');
    expect(lab.stats('mx1').connections).toBeGreaterThan(0); // earlier tests; none from this one:
    const before = lab.stats('mx1').connections;
    await diagnoseEgress(options([], { allowPrivateAddresses: false }));
    expect(lab.stats('mx1').connections).toBe(before);
  });

  it('a publicAddress is used as given, and a different address seen by the exchanger is a warning', async () => {
    const rows = await diagnoseEgress(options([{ id: 'declared', localAddress: '127.0.0.52', publicAddress: '127.0.0.50' }]));
    const row = byCheck(rows, 'declared');
    expect(row['public-address']!.result).toBe('warn');
    expect(row['public-address']!.detail).toContain("127.0.0.50 (the egress's publicAddress), but mx1.mx.lab.test saw 127.0.0.52");
    expect(row.ptr!.detail).toBe('127.0.0.50 → ok.example-doctor.com → 127.0.0.50');
  });

  it('an IPv6 public address: PTR under ip6.arpa, AAAA, ip6 in SPF, DNSBL by nibbles', async () => {
    const rows = await diagnoseEgress(options([{ id: 'v6', publicAddress: '2001:db8::5', heloName: 'v6.example-doctor.com' }]));
    const row = byCheck(rows, 'v6');
    expect(row['public-address']!.detail).toMatch(/^2001:db8::5 \(the egress's publicAddress\), but mx1\.mx\.lab\.test saw 127\.0\.0\.1/);
    expect(row.ptr).toMatchObject({ result: 'ok', detail: '2001:db8::5 → v6.example-doctor.com → 2001:db8::5' });
    expect(row.helo).toMatchObject({ result: 'ok' });
    expect(row.spf!.detail).toMatch(/^pass for 2001:db8::5 from example-doctor\.com/);
    expect(row.dnsbl).toMatchObject({ result: 'fail' });
    expect(row.dnsbl!.detail).toMatch(/^2001:db8::5 is listed on bl\.example-dnsbl\.com \(127\.0\.0\.4\)/);
  });

  it("a resolver of the host application's: node:dns's Resolver, which also answers PTR and TXT", async () => {
    const resolver = new dns.Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([lab.dnsAddress]);
    const rows = await diagnoseEgress(options([{ id: 'good', localAddress: '127.0.0.50' }], { dns: { resolver } }));
    expect(rows.map((row) => row.result)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
    const partial = { resolveMx: resolver.resolveMx.bind(resolver), resolve4: resolver.resolve4.bind(resolver), resolve6: resolver.resolve6.bind(resolver) };
    await expect(diagnoseEgress({ dns: { resolver: partial as never } })).rejects.toThrow(/^diagnoseEgress: option dns\.resolver must be an object with resolveMx, resolve4, resolve6, resolvePtr, resolveTxt methods/);
  });

  it('two egresses: the rows of each, egress after egress', async () => {
    const rows = await diagnoseEgress(options([{ id: 'one', localAddress: '127.0.0.50' }, { id: 'two', localAddress: '127.0.0.52', heloName: 'other.example-doctor.com' }]));
    expect(rows.map((row) => `${row.egress} ${row.check} ${row.result}`)).toEqual([
      'one public-address ok',
      'one ptr ok',
      'one helo ok',
      'one spf ok',
      'one dnsbl ok',
      'one port25 ok',
      'two public-address ok',
      'two ptr ok',
      'two helo ok',
      'two spf ok',
      'two dnsbl ok',
      'two port25 ok',
    ]);
    for (const row of rows) expect(Object.keys(row)).toEqual(['egress', 'check', 'result', 'detail']);
  });

  it('bad options are a TypeError naming the option', async () => {
    await expect(diagnoseEgress({ smtp: { egress: [{ id: 'x', publicAddress: 'nope' }] } })).rejects.toThrow(
      /^diagnoseEgress: option smtp\.egress\[0\]\.publicAddress must be an IP address, got "nope"$/,
    );
    await expect(diagnoseEgress({ smtp: { egress: [{ id: 'x', proxy: 'socks5://u:Secret-77@' }] } })).rejects.toThrow(/smtp\.egress\[0\]\.proxy/);
    await expect(diagnoseEgress({ smtp: { egress: [{ id: 'x', proxy: 'socks5://u:Secret-77@' }] } })).rejects.not.toThrow(/Secret-77/);
    await expect(diagnoseEgress({ dnsbl: ['zen.spamhaus.org', 'not a zone'] })).rejects.toThrow(/^diagnoseEgress: option dnsbl must be an array of DNS zone names/);
    await expect(diagnoseEgress({ probeDomain: '' })).rejects.toThrow(/option probeDomain must be a domain name/);
    await expect(diagnoseEgress({ smtp: { port: 0 } })).rejects.toThrow(/option smtp\.port must be a TCP port number/);
    await expect(diagnoseEgress({ mailFrom: 'nobody' })).rejects.toThrow(/^diagnoseEgress: option mailFrom must be an address/);
    await expect(diagnoseEgress({ quality: 'High' } as never)).rejects.toThrow(/^diagnoseEgress: unknown option quality/);
    await expect(diagnoseEgress({ dns: { servers: ['nowhere'] } })).rejects.toThrow(/^diagnoseEgress: option dns\.servers/);
  });
});
