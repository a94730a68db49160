// The whole pipeline through the public createVerifier, against the mail lab: the lab DNS server and real SMTP
// servers on loopback (test/lab/mail-lab.ts). Every SMTP row of decisions.md §6, the probe strategy and the faults.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodemailerTransport, type Entry, type SmtpTransport, type VerifierOptions } from '../../packages/mailverify/src/index.js';
import { expectNoLeak } from '../lab/leaks.js';
import { labVerifier } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

let lab: MailLab;

beforeAll(async () => {
  lab = await startMailLab({
    servers: {
      strict: { mailboxes: ['alice', 'bob', 'carol', 'dave'] },
      catchall: { acceptAll: true },
      grey: { mailboxes: ['alice'], greylist: 1 },
      quota: {
        mailboxes: ['alice'],
        rcpt: { full: '452 4.2.2 Mailbox full', lookup: '451 4.3.0 <lookup@quota-lab.com>: Temporary lookup failure' },
      },
      picky: { mailboxes: ['alice', 'bob', 'carol'], maxRecipients: 1 },
      single: { mailboxes: ['alice'], rejectOthers: '452 4.5.3 Too many recipients (AS780090)' },
      nosender: { mail: '550 5.7.1 Sender address rejected: not permitted' },
      banned: { greeting: '554 5.7.1 Service unavailable; client host [127.0.0.1] blocked using zen.spamhaus.org' },
      busy: { greeting: '421 4.3.2 Service not available, closing transmission channel' },
      closing: { mailboxes: ['alice'], rcpt: { bye: '421 4.4.2 Connection dropped' } },
      dropper: { mailboxes: ['alice'], drop: 'rcpt' },
      silent: { silent: 'greeting' },
      slow: { mailboxes: ['alice'], delayMs: { rcpt: 400 } },
      ascii: { mailboxes: ['alice', 'jörg'], smtputf8: false },
      utf8: { mailboxes: ['alice', 'jörg'], rcpt: { 'jürgen': '553 5.6.7 Non-ASCII addresses are not supported' } },
      serial: { mailboxes: ['alice', 'bob'], pipelining: false },
      tls: { mailboxes: ['alice'], starttls: true },
      garbage: { garbage: 'rcpt' },
    },
    domains: {
      'strict-lab.com': ['strict'],
      'strict-too-lab.com': ['strict'],
      'catchall-lab.com': ['catchall'],
      'grey-lab.com': ['grey'],
      'quota-lab.com': ['quota'],
      'picky-lab.com': ['picky'],
      'single-lab.com': ['single'],
      'nosender-lab.com': ['nosender'],
      'banned-lab.com': ['banned'],
      'busy-lab.com': ['busy'],
      'closing-lab.com': ['closing'],
      'dropper-lab.com': ['dropper'],
      'silent-lab.com': ['silent'],
      'slow-lab.com': ['slow'],
      'ascii-lab.com': ['ascii'],
      'utf8-lab.com': ['utf8'],
      'serial-lab.com': ['serial'],
      'tls-lab.com': ['tls'],
      'garbage-lab.com': ['garbage'],
      'refused-lab.com': ['refused'],
      'failover-lab.com': ['refused', 'strict'],
    },
  });
});

afterAll(async () => {
  await lab.close();
});

function verifier(options: VerifierOptions = {}) {
  return labVerifier(lab, options);
}

async function verifyAll(addresses: string[], options: VerifierOptions = {}): Promise<Entry[]> {
  const v = verifier(options);
  const entries: Entry[] = [];
  for await (const entry of v.verifyMany(addresses, { order: 'input' })) entries.push(entry);
  await v.close();
  return entries;
}

async function statusOf(address: string, options: VerifierOptions = {}): Promise<string> {
  const v = verifier(options);
  const entry = await v.verify(address);
  await v.close();
  return entry.status;
}

describe('SMTP rows of decisions.md §6, end to end', () => {
  it('RCPT accepted, probe rejected: Success; unknown mailbox: MailboxDoesNotExist', async () => {
    const entries = await verifyAll(['alice@strict-lab.com', 'nobody@strict-lab.com']);
    expect(entries.map((e) => [e.status, e.classification])).toEqual([
      ['Success', 'Deliverable'],
      ['MailboxDoesNotExist', 'Undeliverable'],
    ]);
  });

  it('RCPT accepted and probe accepted: ServerIsCatchAll', async () => {
    expect(await statusOf('anyone@catchall-lab.com')).toBe('ServerIsCatchAll');
  });

  it('over quota: MailboxHasInsufficientStorage; 451 4.3.x at RCPT: ServerTemporaryUnavailable', async () => {
    expect(await statusOf('full@quota-lab.com')).toBe('MailboxHasInsufficientStorage');
    expect(await statusOf('lookup@quota-lab.com')).toBe('ServerTemporaryUnavailable');
  });

  it('greylisting: MailboxTemporarilyUnavailable, and Success on later passes', async () => {
    lab.reset();
    expect(await statusOf('alice@grey-lab.com')).toBe('MailboxTemporarilyUnavailable');
    lab.reset();
    // Pass 1: the real RCPT is greylisted; pass 2: accepted, the probe greylisted; pass 3: the same probe, refused.
    expect(await statusOf('alice@grey-lab.com', { passes: 3, passDelayMs: 10 })).toBe('Success');
    const probes = lab.transcript('grey').flat().filter((line) => line.startsWith('RCPT') && !line.includes('alice@'));
    expect(probes).toHaveLength(2);
    expect(probes[0]).toBe(probes[1]);
  });

  it('close() cuts the wait before a later pass short: the address keeps the result it has', async () => {
    lab.reset();
    const v = verifier({ passes: 3, passDelayMs: 10 * 60_000 });
    const pending = v.verify('alice@grey-lab.com');
    while (lab.stats('grey').rcpts === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await v.close();
    expect((await pending).status).toBe('MailboxTemporarilyUnavailable');
    expect(v.stats().smtp.openConnections).toBe(0);
  });

  it('High quality retries transient results (3 passes), Standard does not', async () => {
    lab.reset();
    expect(await statusOf('alice@grey-lab.com', { quality: 'High', passDelayMs: 10, smtp: { connectTimeoutMs: 1500 } })).toBe('Success');
  });

  // A 421 is about the prober: the one egress cools, and with no wait for it allowed the work is deferred at once.
  const noCoolingWait = { smtp: { maxCoolingWaitMs: 0 } };

  it('421 in the greeting or at RCPT: ServerTemporaryUnavailable, for the recipients behind it too', async () => {
    expect(await statusOf('alice@busy-lab.com', noCoolingWait)).toBe('ServerTemporaryUnavailable');
    expect(await statusOf('bye@closing-lab.com', noCoolingWait)).toBe('ServerTemporaryUnavailable');
    const entries = await verifyAll(['bye@closing-lab.com', 'alice@closing-lab.com', 'nobody@closing-lab.com'], noCoolingWait);
    expect(entries.map((e) => e.status)).toEqual(Array(3).fill('ServerTemporaryUnavailable'));
  });

  it('sender refused at MAIL: LocalSenderAddressRejected, and no RCPT is read as a mailbox answer', async () => {
    expect(await statusOf('alice@nosender-lab.com')).toBe('LocalSenderAddressRejected');
  });

  it('554 banner naming a blocklist: LocalEndPointRejected', async () => {
    // 5.7.1 with blocklist wording is about the prober: deferred (no wait allowed), with the status of that reply.
    expect(await statusOf('alice@banned-lab.com', noCoolingWait)).toBe('LocalEndPointRejected');
  });

  it('non-ASCII local part without SMTPUTF8: ServerDoesNotSupportInternationalMailboxes, and no RCPT is sent', async () => {
    lab.reset();
    expect(await statusOf('jörg@ascii-lab.com')).toBe('ServerDoesNotSupportInternationalMailboxes');
    expect(lab.transcript('ascii').flat().some((line) => /^RCPT/i.test(line))).toBe(false);
    expect(await statusOf('jörg@utf8-lab.com')).toBe('Success');
    const sent = lab.transcript('utf8').flat();
    expect(sent.some((line) => line.startsWith('MAIL FROM:<bounce@mailverify-lab.com> SMTPUTF8'))).toBe(true);
    expect(sent).toContain('RCPT TO:<jörg@utf8-lab.com>');
    // ASCII and non-ASCII recipients of one domain: two transactions, only the second with SMTPUTF8.
    lab.reset();
    const mixed = await verifyAll(['alice@utf8-lab.com', 'jörg@utf8-lab.com']);
    expect(mixed.map((e) => e.status)).toEqual(['Success', 'Success']);
    const mails = lab.transcript('utf8').flat().filter((line) => line.startsWith('MAIL'));
    expect(mails.slice(0, 2)).toEqual(['MAIL FROM:<bounce@mailverify-lab.com>', 'MAIL FROM:<bounce@mailverify-lab.com> SMTPUTF8']);
    // SMTPUTF8 offered, but the mailbox refused with 5.6.7 (RFC 6531 §3.6.1).
    expect(await statusOf('jürgen@utf8-lab.com')).toBe('ServerDoesNotSupportInternationalMailboxes');
  });

  it('a second recipient refused as too many (4.5.3): each is tried alone, in a transaction of its own', async () => {
    lab.reset();
    const entries = await verifyAll(['alice@picky-lab.com', 'bob@picky-lab.com', 'nobody@picky-lab.com']);
    expect(entries.map((e) => e.status)).toEqual(['Success', 'Success', 'MailboxDoesNotExist']);
  });

  it('RCPT accepted, every attempt to probe a second recipient refused as too many: ServerDoesNotAllowMultipleRecipients', async () => {
    lab.reset();
    expect(await statusOf('alice@single-lab.com')).toBe('ServerDoesNotAllowMultipleRecipients');
    // The probe after RSET, then once more first thing on a new connection.
    expect(lab.stats('single').connections).toBe(2);
    expect(lab.stats('single').rcpts).toBe(3);
  });

  it('connection refused: SmtpConnectionFailure; no greeting in time: SmtpConnectionTimeout', async () => {
    expect(await statusOf('alice@refused-lab.com')).toBe('SmtpConnectionFailure');
    expect(await statusOf('alice@silent-lab.com', { smtp: { connectTimeoutMs: 300 } })).toBe('SmtpConnectionTimeout');
  });

  it('no RCPT reply in time: MailboxValidationTimeout; no probe reply in time: CatchAllValidationTimeout', async () => {
    expect(await statusOf('alice@slow-lab.com', { smtp: { commandTimeoutMs: 150 } })).toBe('MailboxValidationTimeout');
    expect(await statusOf('alice@slow-lab.com', { smtp: { commandTimeoutMs: 2000, catchAllTimeoutMs: 150 } })).toBe(
      'CatchAllValidationTimeout',
    );
  });

  it('garbage replies, or a connection dropped mid-dialog after a retry: SmtpDialogError', async () => {
    expect(await statusOf('alice@garbage-lab.com')).toBe('SmtpDialogError');
    lab.reset();
    expect(await statusOf('alice@dropper-lab.com')).toBe('SmtpDialogError');
    expect(lab.stats('dropper').connections).toBe(2);
  });
});

describe('probe strategy', () => {
  it('fails over to the next exchanger when one refuses connections', async () => {
    expect(await statusOf('alice@failover-lab.com')).toBe('Success');
  });

  it('one MAIL FROM for the recipients of a domain, the probe in its own transaction, QUIT at the end, never DATA', async () => {
    lab.reset();
    const entries = await verifyAll(['alice@strict-lab.com', 'bob@strict-lab.com', 'nobody@strict-lab.com', 'carol@strict-lab.com']);
    expect(entries.map((e) => e.status)).toEqual(['Success', 'Success', 'MailboxDoesNotExist', 'Success']);
    const stats = lab.stats('strict');
    expect(stats.data).toBe(0);
    expect(stats.connections).toBe(1);
    expect(stats.transactions).toBe(2); // the real recipients, then the catch-all probe
    // A connection of an earlier test may still be closing on the server's side: its transcript was cleared.
    const [session] = lab.transcript('strict').filter((lines) => lines.length > 0);
    expect(session!.at(-1)).toBe('QUIT');
    expect(session!.filter((line) => line === 'RSET')).toHaveLength(2);
  });

  it('caches the catch-all verdict per exchanger and domain', async () => {
    lab.reset();
    const v = verifier();
    expect((await v.verify('alice@strict-lab.com')).status).toBe('Success');
    expect((await v.verify('bob@strict-lab.com')).status).toBe('Success');
    await v.close();
    expect(lab.stats('strict').transactions).toBe(3); // two real transactions, one probe
  });

  it('works without PIPELINING and with STARTTLS on a self-signed certificate', async () => {
    expect((await verifyAll(['alice@serial-lab.com', 'bob@serial-lab.com', 'x@serial-lab.com'])).map((e) => e.status)).toEqual([
      'Success',
      'Success',
      'MailboxDoesNotExist',
    ]);
    expect(await statusOf('alice@tls-lab.com')).toBe('Success');
    expect(await statusOf('alice@tls-lab.com', { smtp: { tls: { starttls: true, rejectUnauthorized: true } } })).toBe(
      'SmtpConnectionFailure',
    );
  });
});

describe('safety', () => {
  it('never connects to a loopback exchanger unless allowPrivateAddresses', async () => {
    lab.reset();
    expect(await statusOf('alice@strict-lab.com', { allowPrivateAddresses: false })).toBe('DomainIsMisconfigured');
    expect(lab.stats('strict').connections).toBe(0);
  });

  it('keeps to the connection caps, and reuses a connection for waiting work', async () => {
    lab.reset();
    const addresses = Array.from({ length: 30 }, (_, i) => `user${i}@${i % 2 ? 'strict-lab.com' : 'strict-too-lab.com'}`);
    const entries = await verifyAll(addresses, { smtp: { maxConnectionsPerExchanger: 1, maxRecipientsPerTransaction: 2 } });
    expect(entries).toHaveLength(30);
    expect(entries.every((e) => e.status === 'MailboxDoesNotExist')).toBe(true);
    const stats = lab.stats('strict');
    expect(stats.maxConcurrent).toBe(1);
    // One connection, handed from batch to batch and across the two domains; 15 recipients per domain, 2 a time.
    expect(stats.connections).toBe(1);
    expect(stats.transactions).toBe(16);
  });

  it('never lets CR, LF or NUL reach the wire, whatever the input', async () => {
    lab.reset();
    const hostile = [
      'alice@strict-lab.com\r\nDATA',
      'alice\r\n@strict-lab.com',
      '"a\r\nRCPT TO:<x@y>"@strict-lab.com',
      '"a\\\r\nb"@strict-lab.com',
      'alice@strict-lab.com\u0000',
      '"al\u0000ice"@strict-lab.com',
      '(\r\n)alice@strict-lab.com',
      'alice@strict-lab.com (\r\n )',
    ];
    const entries = await verifyAll(hostile);
    expect(entries).toHaveLength(hostile.length);
    for (const line of lab.transcript('strict').flat()) expect(line).not.toMatch(/[\r\n\0]/);
    expect(lab.stats('strict').data).toBe(0);
  });

  it('a fault in one session does not change the result of another address', async () => {
    lab.reset();
    const entries = await verifyAll(['alice@strict-lab.com', 'alice@dropper-lab.com', 'bob@strict-lab.com', 'x@garbage-lab.com']);
    expect(entries.map((e) => e.status)).toEqual(['Success', 'SmtpDialogError', 'Success', 'SmtpDialogError']);
  });

  it('leaves no socket or timer behind, on either side, whatever the faults', async () => {
    await expectNoLeak(async () => {
      const entries = await verifyAll(
        ['alice@strict-lab.com', 'alice@dropper-lab.com', 'alice@slow-lab.com', 'alice@refused-lab.com', 'x@garbage-lab.com', 'a@silent-lab.com'],
        { smtp: { connectTimeoutMs: 300, commandTimeoutMs: 200 } },
      );
      expect(entries.map((e) => e.status)).toEqual([
        'Success',
        'SmtpDialogError',
        'MailboxValidationTimeout',
        'SmtpConnectionFailure',
        'SmtpDialogError',
        'SmtpConnectionTimeout',
      ]);
    });
  });
});

describe('a transport of the host application', () => {
  it('is used instead of the default one (the README example, pointed at the lab)', async () => {
    const base = createNodemailerTransport();
    const opened: string[] = [];
    const transport: SmtpTransport = {
      async open(options) {
        const session = await base.open(options);
        opened.push(`${options.servername} [${options.host}] ${[...session.extensions].includes('PIPELINING')}`);
        return session;
      },
    };
    expect(await statusOf('alice@strict-lab.com', { smtp: { transport } })).toBe('Success');
    expect(opened).toEqual([`${lab.hostOf('strict')} [${lab.addressOf('strict')}] true`]);
  });

  // A stand-in for a host's transport with a bug (it throws what the interface does not allow): no real server can
  // make our own code fail, and the address must still get its one result, without an unhandled rejection (vitest
  // fails a run that has one).
  it('with a bug gives UnhandledException, never a rejection', async () => {
    const buggy = (method: 'mail' | 'rcpt'): SmtpTransport => {
      const base = createNodemailerTransport();
      return {
        async open(options) {
          const session = await base.open(options);
          return Object.assign(Object.create(session) as typeof session, {
            [method]: () => {
              throw new Error('transport bug');
            },
          });
        },
      };
    };
    for (const method of ['mail', 'rcpt'] as const) {
      const entries = await verifyAll(['alice@strict-lab.com', 'bob@catchall-lab.com'], { smtp: { transport: buggy(method) } });
      expect(entries.map((e) => [e.status, e.classification])).toEqual([
        ['UnhandledException', 'Unknown'],
        ['UnhandledException', 'Unknown'],
      ]);
    }
  });
});
