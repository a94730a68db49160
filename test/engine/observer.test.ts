// The verifier's observer (docs/verification.md#observing-the-engine), against the mail lab: a real DNS server and
// real SMTP servers on loopback. What it is told must match what the servers saw; an observer that fails must change
// no result.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { combineObservers, createVerifier, type Entry, type VerifierObserver } from '../../packages/mailverify/src/index.js';
import type { DnsQueryEvent, EgressCoolingEvent, ExchangerSkippedEvent, SmtpReplyEvent, SmtpSessionEvent, VerdictEvent } from '../../packages/mailverify/src/index.js';
import { unreachableDnsServer } from '../lab/closed-port.js';
import { labVerifier } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

let lab: MailLab;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: { strict: { mailboxes: ['alice', 'bob'] } },
    domains: {
      'strict-lab.com': ['strict'],
      'failover-lab.com': ['refused', 'strict'],
      'private-mx.com': { mx: [{ priority: 10, exchange: 'mx.private-mx.com' }, { priority: 20, exchange: 'backup.private-mx.com' }] },
      'mx.private-mx.com': { a: ['10.0.0.5'], aaaa: ['fd00::5'] },
      'backup.private-mx.com': { a: ['172.16.0.9'] },
    },
  });
});
afterAll(() => lab?.close());

/** An observer that records every event. */
function recorder() {
  const events = {
    dnsQuery: [] as DnsQueryEvent[],
    exchangerSkipped: [] as ExchangerSkippedEvent[],
    smtpSession: [] as SmtpSessionEvent[],
    smtpReply: [] as SmtpReplyEvent[],
    verdict: [] as VerdictEvent[],
    egressCooling: [] as EgressCoolingEvent[],
  };
  const observer: Required<VerifierObserver> = {
    dnsQuery: (event) => events.dnsQuery.push(event),
    exchangerSkipped: (event) => events.exchangerSkipped.push(event),
    smtpSession: (event) => events.smtpSession.push(event),
    smtpReply: (event) => events.smtpReply.push(event),
    verdict: (event) => events.verdict.push(event),
    egressCooling: (event) => events.egressCooling.push(event),
  };
  return { events, observer };
}

async function collect(entries: AsyncIterable<Entry>): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const entry of entries) out.push(entry);
  return out;
}

describe('the observer', () => {
  it('hears every DNS query, SMTP session and reply and result, as the servers saw them', async () => {
    lab.reset();
    const { events, observer } = recorder();
    const verifier = labVerifier(lab, { observer });
    const inputs = ['alice@strict-lab.com', 'nobody@strict-lab.com', 'bob@failover-lab.com', 'not-an-address'];
    const entries = await collect(verifier.verifyMany(inputs, { order: 'input' }));
    await verifier.close();
    expect(entries.map((e) => e.status)).toEqual(['Success', 'MailboxDoesNotExist', 'Success', 'AtSignNotFound']);

    // One event per result, with its status and classification.
    expect([...events.verdict].sort(byStatus)).toEqual(entries.map((e) => ({ status: e.status, classification: e.classification })).sort(byStatus));

    // One event per query the lab's DNS server received, naming the server asked.
    expect(events.dnsQuery).toHaveLength(lab.dns.exchangeCount());
    expect(events.dnsQuery.filter((e) => e.type === 'MX').map((e) => e.name).sort()).toEqual(['failover-lab.com', 'strict-lab.com']);
    expect(events.dnsQuery.find((e) => e.name === 'strict-lab.com')).toMatchObject({ type: 'MX', outcome: 'answer', servers: [lab.dnsAddress] });
    expect(events.dnsQuery.find((e) => e.type === 'AAAA')).toMatchObject({ outcome: 'nodata', code: 'ENODATA' });
    for (const event of events.dnsQuery) expect(event.durationMs).toBeGreaterThanOrEqual(0);

    // The refused exchanger: one session that failed; every other opened once and closed once after the batch.
    const failed = events.smtpSession.filter((e) => e.event === 'failed');
    expect(failed).toEqual([
      expect.objectContaining({ exchanger: lab.hostOf('refused'), address: lab.addressOf('refused'), status: 'SmtpConnectionFailure' }),
    ]);
    const opened = events.smtpSession.filter((e) => e.event === 'open');
    expect(opened).toHaveLength(lab.stats('strict').connections);
    expect(events.smtpSession.filter((e) => e.event === 'close')).toHaveLength(opened.length);
    expect(opened.every((e) => e.exchanger === lab.hostOf('strict') && e.address === lab.addressOf('strict'))).toBe(true);

    // One reply event per command the server received.
    const replies = (phase: string) => events.smtpReply.filter((e) => e.phase === phase);
    expect(replies('rcpt')).toHaveLength(lab.stats('strict').rcpts);
    expect(replies('mail')).toHaveLength(lab.stats('strict').transactions);
    expect(replies('rcpt').map((e) => e.code).sort()).toContain(550);
    expect(replies('mail').every((e) => e.code === 250 && e.latencyMs >= 0)).toBe(true);
  });

  it('hears of exchangers skipped for their non-global addresses', async () => {
    const { events, observer } = recorder();
    const verifier = labVerifier(lab, { observer, allowPrivateAddresses: false });
    expect((await verifier.verify('jo@private-mx.com')).status).toBe('DomainIsMisconfigured');
    await verifier.close();
    expect(events.exchangerSkipped.sort((a, b) => a.exchanger.localeCompare(b.exchanger))).toEqual([
      { domain: 'private-mx.com', exchanger: 'backup.private-mx.com', addresses: ['172.16.0.9'] },
      { domain: 'private-mx.com', exchanger: 'mx.private-mx.com', addresses: ['10.0.0.5', 'fd00::5'] },
    ]);
    expect(events.smtpSession).toEqual([]);
  });

  it('tells a DNS server that cannot be reached apart from names that do not exist', async () => {
    const dead = await unreachableDnsServer();
    const { events, observer } = recorder();
    const verifier = createVerifier({ checks: 'dns', dns: { servers: [dead], timeoutMs: 1000 }, observer });
    expect((await verifier.verify('jo@example.com')).status).toBe('DnsConnectionFailure');
    expect(events.dnsQuery).toEqual([
      { type: 'MX', name: 'example.com', outcome: 'unreachable', code: 'ECONNREFUSED', durationMs: expect.any(Number), servers: [dead] },
    ]);
    const lookups = recorder();
    const working = labVerifier(lab, { checks: 'dns', observer: lookups.observer });
    expect((await working.verify('jo@nowhere-at-all.com')).status).toBe('DomainDoesNotExist');
    expect(lookups.events.dnsQuery).toEqual([expect.objectContaining({ type: 'MX', outcome: 'nxdomain', code: 'ENOTFOUND' })]);
  });

  it('changes no result when it throws or rejects, and the first failure is a process warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const failing: VerifierObserver = {
        dnsQuery: () => {
          throw new Error('observer bug');
        },
        smtpReply: async () => {
          throw new Error('async observer bug');
        },
        verdict: () => {
          throw new Error('observer bug');
        },
      };
      const { events, observer } = recorder();
      const verifier = labVerifier(lab, { observer: combineObservers(failing, observer) });
      const entries = await collect(verifier.verifyMany(['alice@strict-lab.com', 'nobody@strict-lab.com'], { order: 'input' }));
      await verifier.close();
      await new Promise((resolve) => setImmediate(resolve));
      expect(entries.map((e) => e.status)).toEqual(['Success', 'MailboxDoesNotExist']);
      // The other observer still heard everything.
      expect(events.verdict).toHaveLength(2);
      expect(events.smtpReply.length).toBeGreaterThan(0);
      expect(rejections).toEqual([]);
      const ours = warnings.filter((w) => (w as Error & { code?: string }).code === 'MAILVERIFY_OBSERVER');
      expect(ours.map((w) => w.message)).toEqual([expect.stringMatching(/observer failed in (dnsQuery|smtpReply|verdict).*observer bug/)]);
    } finally {
      process.off('warning', onWarning);
      process.off('unhandledRejection', onRejection);
    }
  });

  it('is checked: an object whose methods are functions', () => {
    expect(() => createVerifier({ observer: 5 as never })).toThrow(/option observer must be an object, got 5/);
    expect(() => createVerifier({ observer: { verdict: 'yes' } as never })).toThrow(/option observer.verdict must be a function/);
    expect(() => createVerifier({ observr: {} } as never)).toThrow(/unknown option observr \(did you mean observer\?\)/);
    expect(() => createVerifier({ checks: 'syntax', observer: {} })).not.toThrow();
  });
});

const byStatus = (a: VerdictEvent, b: VerdictEvent) => a.status.localeCompare(b.status);
