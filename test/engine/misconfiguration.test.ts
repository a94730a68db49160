// The misconfiguration warnings' rules (packages/mailverify/src/engine/misconfiguration.ts): when a warning is given,
// and how often. The events are the observer's own shapes, given in the order the engine would give them; the server's
// tests (test/server/metrics.test.ts) run the same monitor on a real unreachable DNS server and real private
// exchangers.
import { describe, expect, it } from 'vitest';
import { MisconfigurationMonitor, type MisconfigurationWarning } from '../../packages/mailverify/src/engine/misconfiguration.js';
import type { DnsQueryEvent } from '../../packages/mailverify/src/engine/observer.js';

function monitor(options: { dnsFailureRun?: number; intervalMs?: number } = {}) {
  const warnings: MisconfigurationWarning[] = [];
  const clock = { now: 0 };
  const watch = new MisconfigurationMonitor({ warn: (w) => warnings.push(w), now: () => clock.now, ...options });
  return { watch, warnings, clock };
}

const servers = ['192.0.2.53:53', '[2001:db8::53]:53'];
const refused = (name: string): DnsQueryEvent => ({ type: 'MX', name, outcome: 'unreachable', code: 'ECONNREFUSED', durationMs: 1, servers });
const timedOut = (name: string): DnsQueryEvent => ({ type: 'MX', name, outcome: 'timeout', code: 'ETIMEOUT', durationMs: 5000, servers });
const answered = (name: string): DnsQueryEvent => ({ type: 'MX', name, outcome: 'nxdomain', code: 'ENOTFOUND', durationMs: 1, servers });

describe('MisconfigurationMonitor', () => {
  it('warns once queries in a row got no answer, naming the servers, the errors and the flag', () => {
    const { watch, warnings } = monitor({ dnsFailureRun: 3 });
    watch.dnsQuery(refused('a.com'));
    watch.dnsQuery(timedOut('b.com'));
    expect(warnings).toEqual([]);
    watch.dnsQuery(refused('c.com'));
    expect(warnings).toEqual([
      {
        cause: 'dns-unreachable',
        message:
          '3 DNS queries in a row got no answer (ECONNREFUSED, ETIMEOUT) from the DNS server(s) 192.0.2.53:53, ' +
          '[2001:db8::53]:53, so addresses get DnsConnectionFailure or DnsQueryTimeout whatever they are. Check that ' +
          'this host can reach the server (a firewall, a resolver that is down, a wrong address), or name another ' +
          'with --dns-server (option dns.servers).',
      },
    ]);
  });

  it('does not count answers, even negative ones: an answer breaks the run', () => {
    const { watch, warnings } = monitor({ dnsFailureRun: 3 });
    for (let i = 0; i < 10; i++) {
      watch.dnsQuery(refused(`a${i}.com`));
      watch.dnsQuery(refused(`b${i}.com`));
      watch.dnsQuery(answered(`c${i}.com`));
    }
    expect(warnings).toEqual([]);
  });

  it('warns again only after the interval, while the failures go on', () => {
    const { watch, warnings, clock } = monitor({ dnsFailureRun: 2, intervalMs: 60_000 });
    for (let i = 0; i < 10; i++) watch.dnsQuery(refused(`a${i}.com`));
    expect(warnings).toHaveLength(1);
    clock.now = 59_999;
    watch.dnsQuery(refused('b.com'));
    expect(warnings).toHaveLength(1);
    clock.now = 60_000;
    watch.dnsQuery(refused('c.com'));
    expect(warnings).toHaveLength(2);
    expect(warnings[1]!.message).toMatch(/^12 DNS queries in a row/);
  });

  it('names the resolver when it is the host application\'s', () => {
    const { watch, warnings } = monitor({ dnsFailureRun: 1 });
    watch.dnsQuery({ type: 'A', name: 'mx.a.com', outcome: 'timeout', code: 'ETIMEOUT', durationMs: 5000 });
    expect(warnings[0]!.message).toContain('got no answer (ETIMEOUT) from the resolver,');
  });

  it('warns of a skipped exchanger at once, then with the count of skips since, once per interval', () => {
    const { watch, warnings, clock } = monitor({ intervalMs: 1000 });
    watch.exchangerSkipped({ domain: 'a.com', exchanger: 'mx.a.com', addresses: ['10.0.0.5', 'fd00::5'] });
    watch.exchangerSkipped({ domain: 'b.com', exchanger: 'b.com', addresses: ['192.168.1.2'] });
    watch.exchangerSkipped({ domain: 'c.com', exchanger: 'mx.c.com', addresses: ['127.0.0.1'] });
    clock.now = 1000;
    watch.exchangerSkipped({ domain: 'd.com', exchanger: 'd.com', addresses: ['192.168.1.3'] });
    expect(warnings.map((w) => w.cause)).toEqual(['non-global-exchangers', 'non-global-exchangers']);
    expect(warnings[0]!.message).toBe(
      'Skipped a mail exchanger that resolves only to non-global addresses (a.com: mx.a.com → 10.0.0.5, fd00::5); a ' +
        'domain with no other exchanger gets DomainIsMisconfigured. If such exchangers are meant to be reached (an ' +
        'internal network, a test setup), allow them with --allow-private-addresses (option allowPrivateAddresses).',
    );
    expect(warnings[1]!.message).toMatch(/^Skipped a mail exchanger that resolves only to non-global addresses \(d\.com → 192\.168\.1\.3\), and 2 more since the last warning; /);
  });
});
