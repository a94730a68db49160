// An aborted batch withdraws everything it had asked for (decisions §11, §12), against the mail lab over a slow lab
// DNS server that counts the queries it receives: its queued DNS queries are never sent, those in flight are
// dropped, its SMTP work goes, and another batch on the same verifier goes on to its end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/mailverify/src/index.js';
import { expectNoLeak } from '../lab/leaks.js';
import { labVerifier } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

let lab: MailLab;

/** Each DNS answer comes after this long: with few queries in flight at once, the queue stays long. */
const DNS_DELAY_MS = 300;
const ABORTED_DOMAINS = 300;
const LIVE_DOMAINS = 20;
/** How long nothing may reach the lab after an abort settles (a behaviour check: the counts must not move). */
const QUIET_WINDOW_MS = 500;
/** A server that greets this long after it accepts a connection. */
const GREETING_DELAY_MS = 1000;

const abortedDomain = (i: number) => `a${i}-withdraw.com`;
const liveDomain = (i: number) => `b${i}-withdraw.com`;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    dnsDelayMs: DNS_DELAY_MS,
    servers: {
      quick: { mailboxes: ['alice'] },
      slow: { mailboxes: ['alice'], delayMs: { rcpt: 5000 } },
      latergreeting: { mailboxes: ['alice'], delayMs: { greeting: GREETING_DELAY_MS } },
    },
    domains: {
      'slow-withdraw.com': ['slow'],
      'warm-withdraw.com': ['quick', 'slow'],
      'latergreeting-withdraw.com': ['latergreeting'],
      ...Object.fromEntries(Array.from({ length: ABORTED_DOMAINS }, (_, i) => [abortedDomain(i), ['quick']])),
      ...Object.fromEntries(Array.from({ length: LIVE_DOMAINS }, (_, i) => [liveDomain(i), ['quick']])),
    },
  });
});

afterAll(async () => {
  await lab.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Queries the lab received for the aborted batch's domains. */
const abortedQueries = () => lab.dns.queries.filter((q) => /^a\d+-withdraw\.com$|^slow-withdraw\.com$/.test(q.name)).length;
/** Commands the lab's SMTP servers received for the aborted batch's recipients (and on the slow server at all). */
const abortedCommands = () =>
  lab.transcript('quick').flat().filter((line) => /@a\d+-withdraw\.com>/.test(line)).length + lab.stats('slow').commands;

describe('an aborted batch', () => {
  it('leaves nothing queued: no DNS query nor SMTP command after the abort, and the live batch finishes', async () => {
    await expectNoLeak(async () => {
      // A deadline far above the lab's delay: no query is sent twice. The exchangers' own addresses are cached first, so
      // each address needs one query of its own (its domain's MX).
      const v = labVerifier(lab, { dns: { maxQueriesInFlight: 10, timeoutMs: 5000 } }, { connectTimeoutMs: 10_000, commandTimeoutMs: 10_000 });
      expect((await v.verify('alice@warm-withdraw.com')).status).toBe('Success');
      lab.reset();
      const controller = new AbortController();
      const aborted: Entry[] = [];
      const abortedRun = (async () => {
        const inputs = ['alice@slow-withdraw.com', ...Array.from({ length: ABORTED_DOMAINS }, (_, i) => `alice@${abortedDomain(i)}`)];
        for await (const entry of v.verifyMany(inputs, { signal: controller.signal })) aborted.push(entry);
      })();
      const live = v.verifyMany(Array.from({ length: LIVE_DOMAINS }, (_, i) => `alice@${liveDomain(i)}`));
      const liveEntries: Entry[] = [];
      const liveRun = (async () => {
        for await (const entry of live) liveEntries.push(entry);
      })();

      // Mid-way: some results out, the slow exchanger holding a RCPT, most of the DNS queries still queued.
      while (aborted.length < 5 || lab.stats('slow').rcpts < 1) await sleep(5);
      controller.abort();
      await expect(abortedRun).rejects.toThrow(/abort/i);
      const queriesAtAbort = abortedQueries();
      const commandsAtAbort = abortedCommands();
      expect(queriesAtAbort).toBeLessThan(ABORTED_DOMAINS / 2);

      await sleep(QUIET_WINDOW_MS);
      expect(abortedQueries()).toBe(queriesAtAbort);
      expect(abortedCommands()).toBe(commandsAtAbort);
      // The slow session was closed at once (no QUIT after the slow reply).
      expect(lab.transcript('slow').flat()).not.toContain('QUIT');

      await liveRun;
      expect(liveEntries).toHaveLength(LIVE_DOMAINS);
      expect(liveEntries.every((e) => e.status === 'Success')).toBe(true);
      await v.close();
      expect(v.stats().smtp.openConnections).toBe(0);
    }, 2000, ['UDPWRAP']);
  });
});

describe('an aborted batch, while a session is being opened for it', () => {
  it('stops the opening where it is: nothing is written to the exchanger after the abort', async () => {
    await expectNoLeak(async () => {
      lab.reset();
      const v = labVerifier(lab, { dns: { timeoutMs: 5000 } }, { connectTimeoutMs: 10_000, commandTimeoutMs: 10_000 });
      const controller = new AbortController();
      const run = (async () => {
        for await (const entry of v.verifyMany(['alice@latergreeting-withdraw.com'], { signal: controller.signal })) void entry;
      })();
      // Connected, the greeting not yet sent.
      while (lab.stats('latergreeting').connections < 1) await sleep(5);
      controller.abort();
      await expect(run).rejects.toThrow(/abort/i);
      await v.close();
      // Past the greeting: a session that went on opening would have sent EHLO by now.
      await sleep(GREETING_DELAY_MS + QUIET_WINDOW_MS);
      expect(lab.stats('latergreeting').commands).toBe(0);
      expect(v.stats().smtp.openConnections).toBe(0);
    }, 2000, ['UDPWRAP']);
  });
});
