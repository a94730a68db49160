// Honest under faults: servers that misbehave on loopback (the mail lab's raw responder), through the public
// createVerifier. Replies out of step end in SmtpDialogError, never in a verdict; a silent server costs one timeout;
// address literals reach the transport as plain IP addresses.
import { isIP } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodemailerTransport, type Entry, type SmtpTransport, type VerifierOptions } from '../../packages/mailverify/src/index.js';
import { labVerifier } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

let lab: MailLab;

const MAILBOXES = ['alice', 'carol'];

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: {
      omit: { mailboxes: MAILBOXES, omit: 'rcpt:bob' },
      extra: { mailboxes: MAILBOXES, extra: 'rcpt' },
      extraonce: { mailboxes: MAILBOXES, extra: 'rcpt:bob' },
      double: { mailboxes: MAILBOXES, doubleReplies: true },
      doubleserial: { mailboxes: MAILBOXES, doubleReplies: true, pipelining: false },
      badrset: { mailboxes: MAILBOXES, rset: '550 5.5.0 No' },
      silentrcpt: { mailboxes: MAILBOXES, silent: 'rcpt' },
      plain: { mailboxes: MAILBOXES },
    },
    domains: Object.fromEntries(['omit', 'extra', 'extraonce', 'double', 'doubleserial', 'badrset', 'silentrcpt', 'plain'].map((name) => [`${name}-fault.com`, [name]])),
  });
});

afterAll(async () => {
  await lab.close();
});

function verifier(options: VerifierOptions = {}) {
  return labVerifier(lab, options, { connectTimeoutMs: 1000, commandTimeoutMs: 300 });
}

async function statuses(addresses: string[], options: VerifierOptions = {}): Promise<string[]> {
  const v = verifier(options);
  const entries: Entry[] = [];
  for await (const entry of v.verifyMany(addresses, { order: 'input' })) entries.push(entry);
  await v.close();
  return entries.map((e) => e.status);
}

const recipients = (domain: string) => ['alice', 'bob', 'carol', 'nobody'].map((local) => `${local}@${domain}`);

describe('replies out of step end in SmtpDialogError, never in a verdict', () => {
  it('a pipelining server that leaves out one RCPT reply: the others keep their own verdicts, the one left out none', async () => {
    lab.reset();
    // Read in step, bob's missing reply would give carol bob's verdict, nobody carol's, and so on down the line.
    expect(await statuses(recipients('omit-fault.com'))).toEqual(['Success', 'SmtpDialogError', 'Success', 'MailboxDoesNotExist']);
    expect(lab.stats('omit').data).toBe(0);
  });

  it('an unsolicited extra line after every RCPT reply, or after one', async () => {
    lab.reset();
    expect(await statuses(recipients('extra-fault.com'))).toEqual(Array(4).fill('SmtpDialogError'));
    // Failed rounds in a row on one exchanger stop the retries: a bounded number of connections, not one per address.
    expect(lab.stats('extra').connections).toBeLessThanOrEqual(4);
    lab.reset();
    expect(await statuses(recipients('extraonce-fault.com'))).toEqual(['Success', 'SmtpDialogError', 'Success', 'MailboxDoesNotExist']);
  });

  it('every reply sent twice, with PIPELINING and in lock-step', async () => {
    for (const domain of ['double-fault.com', 'doubleserial-fault.com']) {
      lab.reset();
      expect(await statuses(recipients(domain))).toEqual(Array(4).fill('SmtpDialogError'));
    }
  });

  it('an RSET answered with anything but 2xx', async () => {
    lab.reset();
    expect(await statuses(recipients('badrset-fault.com'))).toEqual(Array(4).fill('SmtpDialogError'));
  });

  it('the same server, one address at a time, gives the same answers as in a batch', async () => {
    const alone: string[] = [];
    for (const address of [...recipients('omit-fault.com'), ...recipients('extraonce-fault.com')]) {
      lab.reset();
      const v = verifier();
      alone.push((await v.verify(address)).status);
      await v.close();
    }
    lab.reset();
    expect(await statuses([...recipients('omit-fault.com'), ...recipients('extraonce-fault.com')])).toEqual(alone);
  });
});

describe('a server that goes silent at RCPT', () => {
  it('costs one timeout for the transaction: every recipient MailboxValidationTimeout, on one connection', async () => {
    lab.reset();
    const addresses = Array.from({ length: 10 }, (_, i) => `user${i}@silentrcpt-fault.com`);
    expect(await statuses(addresses)).toEqual(Array(10).fill('MailboxValidationTimeout'));
    const stats = lab.stats('silentrcpt');
    expect(stats.connections).toBe(1);
    expect(stats.rcpts).toBe(10);
  });
});

describe('address literals', () => {
  // A wrapper that records what the engine asks the transport to connect to (the README's transport example).
  function recording(hosts: string[]): SmtpTransport {
    const base = createNodemailerTransport();
    return {
      open(options) {
        hosts.push(options.host);
        return base.open({ ...options, port: lab.port });
      },
    };
  }

  it('reach the transport as plain IP addresses: an IPv4-mapped loopback with leading zeros is loopback', async () => {
    const hosts: string[] = [];
    const literal = 'alice@[IPv6:::ffff:127.000.000.001]';
    expect((await verifier({ allowPrivateAddresses: false }).verify(literal)).status).toBe('UnacceptableDomainLiteral');
    const v = verifier({ smtp: { transport: recording(hosts) } });
    const entry = await v.verify(literal);
    await v.close();
    expect(hosts).toEqual(['127.0.0.1']);
    expect(isIP(hosts[0]!)).toBe(4);
    // Nothing listens on 127.0.0.1 at the lab's port: the connection is refused, which shows it was attempted there.
    expect(entry.status).toBe('SmtpConnectionFailure');
  });

  it('a global IPv6 literal with an embedded IPv4 part in leading-zero form is accepted', async () => {
    const v = verifier({ checks: 'dns', allowPrivateAddresses: false });
    expect((await v.verify('alice@[IPv6:2001:4860::008.008.008.008]')).status).toBe('Success');
    expect((await v.verify('alice@[IPv6:::ffff:010.000.000.001]')).status).toBe('UnacceptableDomainLiteral');
  });
});

describe('a well-behaved server for contrast', () => {
  it('gives every verdict', async () => {
    lab.reset();
    expect(await statuses(recipients('plain-fault.com'))).toEqual(['Success', 'MailboxDoesNotExist', 'Success', 'MailboxDoesNotExist']);
    expect(lab.stats('plain').connections).toBe(1);
  });
});
