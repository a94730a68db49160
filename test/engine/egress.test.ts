// Egresses through the public API: createVerifier({ smtp: { egress } }) against a mail lab on loopback, a real SOCKS5
// proxy (microsocks, its outgoing connections bound to 127.0.0.7) and source addresses bound by the engine. The lab
// records where each connection came from and what it said (EHLO name, envelope sender).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Entry, SmtpSessionEvent, Verifier } from '../../packages/mailverify/src/index.js';
import { createVerifier } from '../../packages/mailverify/src/index.js';
import { labVerifier } from '../lab/lab-verifier.js';
import { expectNoLeak } from '../lab/leaks.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { startSocksProxy, type SocksProxyProcess } from '../lab/socks-proxy.js';
import { MICROSOCKS, needing } from '../lab/system-programs.js';

const PASSWORD = 'egress-Pa55word';
const SERVERS = ['mx1', 'mx2', 'mx3', 'mx4'] as const;

let lab: MailLab;
let proxy: SocksProxyProcess;
const proxyIt = needing(MICROSOCKS, 'the engine tests through a SOCKS5 proxy (microsocks)').it;
const verifiers: Verifier[] = [];

beforeAll(async () => {
  lab = await startMailLab({
    servers: Object.fromEntries(SERVERS.map((name) => [name, { mailboxes: ['alice', 'bob'] }])),
    domains: Object.fromEntries(SERVERS.map((name) => [`${name}-egress.com`, [name]])),
  });
  if (proxyIt === it) proxy = await startSocksProxy({ username: 'prober', password: PASSWORD, bindAddress: '127.0.0.7' });
});

afterAll(async () => {
  await proxy?.stop();
  await lab?.close();
});

afterEach(async () => {
  await Promise.all(verifiers.splice(0).map((verifier) => verifier.close()));
  lab.reset();
});

const inputs = SERVERS.flatMap((name) => [`alice@${name}-egress.com`, `bob@${name}-egress.com`, `nobody@${name}-egress.com`]);

async function verifyAll(verifier: Verifier): Promise<Map<string, Entry>> {
  const entries = new Map<string, Entry>();
  for await (const entry of verifier.verifyMany(inputs)) entries.set(entry.inputData, entry);
  return entries;
}

function expectRightVerdicts(entries: Map<string, Entry>): void {
  for (const input of inputs) {
    expect(entries.get(input)?.status, input).toBe(input.startsWith('nobody') ? 'MailboxDoesNotExist' : 'Success');
  }
}

/** Warnings emitted while `run` runs (the process's own, as an operator sees them). */
async function warningsDuring(run: () => Promise<void>): Promise<Error[]> {
  const warnings: Error[] = [];
  const listener = (warning: Error) => warnings.push(warning);
  process.on('warning', listener);
  try {
    await run();
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return warnings;
}

function sessions(events: SmtpSessionEvent[], kind: SmtpSessionEvent['event']): SmtpSessionEvent[] {
  return events.filter((event) => event.event === kind);
}

describe('smtp.egress', () => {
  proxyIt('spreads connections over a source address and a proxy, each with its own EHLO name and sender', async () => {
    const events: SmtpSessionEvent[] = [];
    const verifier = labVerifier(lab, {
      observer: { smtpSession: (event) => events.push(event) },
      smtp: {
        maxConnectionsPerExchanger: 1,
        egress: [
          { id: 'bound', localAddress: '127.0.0.5', heloName: 'bound.probe.test', mailFrom: 'bounce@bound.probe.test' },
          { id: 'proxied', proxy: proxy.url, heloName: 'proxied.probe.test', mailFrom: 'bounce@proxied.probe.test' },
        ],
      },
    });
    verifiers.push(verifier);
    expectRightVerdicts(await verifyAll(verifier));

    const opened = sessions(events, 'open');
    expect(new Set(opened.map((event) => event.egress))).toEqual(new Set(['bound', 'proxied']));
    const helo = { '127.0.0.5': 'bound.probe.test', '127.0.0.7': 'proxied.probe.test' } as Record<string, string>;
    let connections = 0;
    for (const name of SERVERS) {
      const peers = lab.peers(name);
      const transcripts = lab.transcript(name);
      connections += peers.length;
      peers.forEach((peer, i) => {
        // Only the two egresses' addresses reach the exchangers: nothing leaves by the system's route.
        expect(Object.keys(helo)).toContain(peer);
        expect(transcripts[i]![0]).toBe(`EHLO ${helo[peer]}`);
        for (const line of transcripts[i]!.filter((l) => l.startsWith('MAIL FROM'))) {
          expect(line).toBe(`MAIL FROM:<bounce@${helo[peer]}>`);
        }
      });
    }
    expect(connections).toBe(opened.length);
  });

  proxyIt('tries another egress when a proxy refuses its credentials, warns once naming it, never shows the password', async () => {
    const events: SmtpSessionEvent[] = [];
    const wrong = proxy.url.replace(PASSWORD, 'not-the-password');
    let entries = new Map<string, Entry>();
    const warnings = await warningsDuring(async () => {
      const verifier = labVerifier(lab, {
        observer: { smtpSession: (event) => events.push(event) },
        smtp: { egress: [{ id: 'wrong-creds', proxy: wrong }, { id: 'direct', localAddress: '127.0.0.6' }] },
      });
      verifiers.push(verifier);
      entries = await verifyAll(verifier);
    });
    expectRightVerdicts(entries);
    const failed = sessions(events, 'failed');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((event) => event.egress === 'wrong-creds' && event.status === 'SmtpConnectionFailure')).toBe(true);
    expect(sessions(events, 'open').every((event) => event.egress === 'direct')).toBe(true);
    const mine = warnings.filter((warning) => (warning as Error & { code?: string }).code === 'MAILVERIFY_EGRESS');
    expect(mine).toHaveLength(1);
    expect(mine[0]!.message).toContain('wrong-creds');
    expect(mine[0]!.message).toContain('socks5://prober@');
    for (const text of [...mine.map((w) => w.message), JSON.stringify([...entries.values()]), JSON.stringify(events)]) {
      expect(text).not.toContain('not-the-password');
      expect(text).not.toContain(PASSWORD);
    }
  });

  proxyIt('gives SmtpConnectionFailure when the only egress cannot be used, and leaves nothing open', async () => {
    for (const egress of [
      { id: 'wrong-creds', proxy: proxy.url.replace(PASSWORD, 'nope') },
      // An address this host does not have: binding it fails (EADDRNOTAVAIL).
      { id: 'foreign-address', localAddress: '192.0.2.1' },
    ]) {
      let entry: Entry | undefined;
      const warnings = await warningsDuring(() =>
        expectNoLeak(async () => {
          const verifier = labVerifier(lab, { smtp: { egress: [egress] } });
          entry = await verifier.verify('alice@mx1-egress.com');
          await verifier.close();
          // The socks package's unreferenced handshake timer outlives the handshake by up to the connect timeout and
          // a second (packages/mailverify/src/smtp/egress/socks.ts): it must be gone by then.
        }, 1500 + 1000 + 1000),
      );
      expect(entry?.status, egress.id).toBe('SmtpConnectionFailure');
      expect(warnings.filter((warning) => warning.message.includes(egress.id))).toHaveLength(1);
      expect(lab.stats('mx1').rcpts).toBe(0);
    }
  });

  it('gives SmtpConnectionTimeout through a proxy that never answers', async () => {
    const { createServer } = await import('node:net');
    const held = new Set<import('node:net').Socket>();
    const silent = createServer((socket) => {
      held.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as import('node:net').AddressInfo;
    try {
      const verifier = labVerifier(lab, { smtp: { egress: [{ id: 'silent', proxy: `socks5://127.0.0.1:${port}` }] } }, { connectTimeoutMs: 300, commandTimeoutMs: 300 });
      verifiers.push(verifier);
      const warnings = await warningsDuring(async () => {
        expect((await verifier.verify('alice@mx2-egress.com')).status).toBe('SmtpConnectionTimeout');
      });
      expect(warnings.some((warning) => warning.message.includes('silent'))).toBe(true);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('refuses a malformed egress with a TypeError naming the field, whatever the checks, without the password', () => {
    expect(() => createVerifier({ checks: 'syntax', smtp: { egress: [{ id: 'a b' }] } })).toThrow(/smtp\.egress\[0\]\.id/u);
    expect(() => createVerifier({ smtp: { egress: [{ id: 'a' }, { id: 'a' }] } })).toThrow(/smtp\.egress\[1\]\.id/u);
    let message = '';
    try {
      createVerifier({ smtp: { egress: [{ id: 'p', proxy: 'http://user:s3cret@proxy.example:8080' }] } });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^createVerifier: option smtp\.egress\[0\]\.proxy: /u);
    expect(message).not.toContain('s3cret');
  });
});
