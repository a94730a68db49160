// The batch planner (decisions.md §12) through the public createVerifier, against the mail lab: grouping by
// exchanger, passes per batch, abort, priority, progress, one result per input under faults, and batch verdicts
// equal to verify().
import type { EgressCoolingEvent } from '../../packages/mailverify/src/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodemailerTransport, createVerifier, type BatchProgress, type Entry, type SmtpTransport, type VerifierOptions, type VerifyManyOptions } from '../../packages/mailverify/src/index.js';
import { expectNoLeak } from '../lab/leaks.js';
import { labVerifier, labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

let lab: MailLab;

const GREYLIST_MS = 250;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: {
      shared: { mailboxes: ['alice', 'bob', 'carol', 'dave'], acceptAllDomains: ['catchall-plan.com'] },
      grey: { mailboxes: ['alice', 'bob'], greylistMs: GREYLIST_MS },
      dropbob: { mailboxes: ['alice', 'bob', 'carol'], drop: 'rcpt:bob' },
      slow: { mailboxes: ['alice'], delayMs: { rcpt: 5000 } },
      tarpit1: { mailboxes: ['alice'], delayMs: { rcpt: 5400 } },
      tarpit2: { mailboxes: ['alice'], delayMs: { rcpt: 5400 } },
      garbage: { garbage: 'rcpt' },
      onlyone: { mailboxes: ['alice', 'bob'], maxConnections: 1 },
      ...Object.fromEntries(['l1', 'l2', 'l3', 'l4', 'l5', 'h'].map((name) => [name, { mailboxes: ['alice'], delayMs: { rcpt: 20 } }])),
    },
    domains: {
      'one-plan.com': ['shared'],
      'two-plan.com': ['shared'],
      'catchall-plan.com': ['shared'],
      'grey-plan.com': ['grey'],
      'dropbob-plan.com': ['dropbob'],
      'slow-plan.com': ['slow'],
      'tarpit1-plan.com': ['tarpit1'],
      'tarpit2-plan.com': ['tarpit2'],
      'garbage-plan.com': ['garbage'],
      'onlyone-plan.com': ['onlyone'],
      'refused-plan.com': ['refused'],
      'failover-plan.com': ['refused', 'shared'],
      ...Object.fromEntries(['l1', 'l2', 'l3', 'l4', 'l5', 'h'].map((name) => [`${name}-plan.com`, [name]])),
    },
  });
});

afterAll(async () => {
  await lab.close();
});

function verifier(options: VerifierOptions = {}) {
  return labVerifier(lab, options);
}

async function collect(entries: AsyncIterable<Entry>): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const entry of entries) out.push(entry);
  return out;
}

async function batch(addresses: string[], options: VerifierOptions = {}, batchOptions: VerifyManyOptions = {}): Promise<Entry[]> {
  const v = verifier(options);
  try {
    return await collect(v.verifyMany(addresses, batchOptions));
  } finally {
    await v.close();
  }
}

const byIndex = (entries: Entry[]): Entry[] => [...entries].sort((a, b) => a.index - b.index);

describe('grouping by mail exchanger', () => {
  it('one session carries every domain of an exchanger, 10 recipients a transaction, one probe per domain', async () => {
    lab.reset();
    const locals = ['alice', 'bob', 'carol', 'dave', ...Array.from({ length: 16 }, (_, i) => `nobody${i}`)];
    const domains = ['one-plan.com', 'two-plan.com', 'catchall-plan.com'];
    // Interleaved, as a real list is: grouping is the planner's work, not the input's.
    const addresses = locals.flatMap((local) => domains.map((domain) => `${local}@${domain}`));
    const entries = byIndex(await batch(addresses));
    expect(entries.map((e) => e.index)).toEqual(addresses.map((_, i) => i));
    for (const entry of entries) {
      const [local, domain] = entry.inputData.split('@');
      const expected = domain === 'catchall-plan.com' ? 'ServerIsCatchAll' : local!.startsWith('nobody') ? 'MailboxDoesNotExist' : 'Success';
      expect([entry.inputData, entry.status]).toEqual([entry.inputData, expected]);
    }
    const stats = lab.stats('shared');
    expect(stats.connections).toBe(1);
    // Two transactions of 10 per domain, and three probes (one per domain; catch-all and ordinary told apart).
    expect(stats.transactions).toBe(3 * 2 + 3);
    expect(stats.rcpts).toBe(addresses.length + 3);
    expect(stats.data).toBe(0);
  });

  it('shares connections and catch-all verdicts between batches of one verifier', async () => {
    lab.reset();
    const v = verifier();
    const [first, second] = await Promise.all([
      collect(v.verifyMany(['alice@one-plan.com', 'x@one-plan.com'])),
      collect(v.verifyMany(['bob@one-plan.com', 'y@catchall-plan.com'])),
    ]);
    await v.close();
    expect(byIndex(first).map((e) => e.status)).toEqual(['Success', 'MailboxDoesNotExist']);
    expect(byIndex(second).map((e) => e.status)).toEqual(['Success', 'ServerIsCatchAll']);
    expect(lab.stats('shared').connections).toBe(1);
    // one-plan.com's probe is asked once for both batches.
    expect(lab.stats('shared').transactions).toBe(2 + 2);
  });

  it('never holds more connections open than maxConnections, counted at the transport', async () => {
    const base = createNodemailerTransport();
    let open = 0;
    let peak = 0;
    const counting: SmtpTransport = {
      async open(options) {
        open++;
        peak = Math.max(peak, open);
        let session;
        try {
          session = await base.open(options);
        } catch (error) {
          open--;
          throw error;
        }
        let counted = true;
        const done = () => {
          if (counted) open--;
          counted = false;
        };
        return Object.assign(Object.create(session) as typeof session, {
          close: () => (session.close(), done()),
          quit: async () => (await session.quit(), done()),
        });
      },
    };
    const servers = ['l1', 'l2', 'l3', 'l4', 'l5', 'h'];
    const addresses = servers.flatMap((name) => ['alice', 'bob', 'carol'].map((local) => `${local}@${name}-plan.com`));
    const entries = await batch(addresses, { smtp: { maxConnections: 2, transport: counting } });
    expect(entries).toHaveLength(addresses.length);
    expect(peak).toBe(2);
    expect(open).toBe(0);
  });

  it('an exchanger that refuses a connection beyond its first (421): the pair cools, no verdict is taken from it', async () => {
    lab.reset();
    // More than one round of work: the exchanger is asked for more sessions, and refuses them with 421, a reply about
    // the prober. The session it accepted ends after its current round; with no wait for the cooling allowed, the work
    // left is deferred (ServerTemporaryUnavailable), never given a mailbox verdict it did not get. (The refusals come
    // before the accepted session's first round here, so that one ends at once: every entry is deferred.)
    const addresses = Array.from({ length: 250 }, (_, i) => `${['alice', 'bob', `n${i}`][i % 3]}@onlyone-plan.com`);
    const coolings: EgressCoolingEvent[] = [];
    const entries = byIndex(await batch(addresses, { smtp: { maxCoolingWaitMs: 0 }, observer: { egressCooling: (event) => coolings.push(event) } }));
    expect(entries).toHaveLength(addresses.length);
    const answered = entries.filter((e) => e.status !== 'ServerTemporaryUnavailable');
    for (const entry of answered) expect(entry.status).toBe(entry.inputData.startsWith('n') ? 'MailboxDoesNotExist' : 'Success');
    expect(coolings).toEqual([
      { egress: 'default', provider: lab.hostOf('onlyone'), reply: { code: 421, enhancedCode: '4.7.0', text: expect.stringMatching(/too many connections/iu) as string }, cooldownMs: 60_000 },
    ]);
    expect(lab.stats('onlyone').connections).toBeLessThanOrEqual(3);
  });
});

describe('passes per batch', () => {
  it('retries only transient results, after passDelayMs, without holding the others back', async () => {
    lab.reset();
    const addresses = ['alice@grey-plan.com', 'alice@one-plan.com', 'bob@grey-plan.com', 'nobody@one-plan.com', 'bob@two-plan.com'];
    const v = verifier({ passes: 3, passDelayMs: GREYLIST_MS + 150 });
    const arrivals: Entry[] = [];
    for await (const entry of v.verifyMany(addresses)) arrivals.push(entry);
    await v.close();
    // The addresses that needed one pass came out first, before the greylisted ones' second pass.
    expect(arrivals.slice(0, 3).map((e) => e.inputData).sort()).toEqual(['alice@one-plan.com', 'bob@two-plan.com', 'nobody@one-plan.com']);
    expect(byIndex(arrivals).map((e) => e.status)).toEqual(['Success', 'Success', 'Success', 'MailboxDoesNotExist', 'Success']);
    // Only the greylisted addresses were asked again: pass 1 (both refused, the probe asked early and refused),
    // pass 2 (both accepted, the probe refused as unknown now that its own wait is over).
    expect(lab.stats('grey').rcpts).toBe(3 + 3);
    expect(lab.stats('shared').rcpts).toBe(3 + 2);
  });

  it('gives the last pass result when passes run out, and Standard quality makes no second pass', async () => {
    lab.reset();
    expect((await batch(['alice@grey-plan.com'], { passDelayMs: 10 })).map((e) => e.status)).toEqual(['MailboxTemporarilyUnavailable']);
    expect(lab.stats('grey').rcpts).toBe(2); // the recipient and the early probe, once
  });

  it('a batch may have its own quality level: its passes and its anti-tarpit timeouts', async () => {
    lab.reset();
    // No explicit SMTP timeouts: each batch waits as long as its quality level says (Standard 5 s, High 50 s).
    const v = createVerifier(labVerifierOptions(lab, { passDelayMs: GREYLIST_MS + 150 }, { connectTimeoutMs: undefined, commandTimeoutMs: undefined } as never));
    try {
      const [standard, high] = await Promise.all([
        collect(v.verifyMany(['alice@tarpit1-plan.com', 'alice@grey-plan.com'], { order: 'input' })),
        collect(v.verifyMany(['alice@tarpit2-plan.com', 'bob@grey-plan.com'], { quality: 'High', order: 'input' })),
      ]);
      expect(standard.map((e) => e.status)).toEqual(['MailboxValidationTimeout', 'MailboxTemporarilyUnavailable']);
      expect(high.map((e) => e.status)).toEqual(['Success', 'Success']);
    } finally {
      await v.close();
    }
    await expect(v.verifyMany([], { quality: 'Best' as never })[Symbol.asyncIterator]().next()).rejects.toThrow(
      'verifyMany: option quality must be one of Standard, High, Extreme or a quality level object, got "Best"',
    );
  });

  it('a batch may have its own number of passes: two batches on one verifier, one retried, one not', async () => {
    lab.reset();
    const v = verifier({ passDelayMs: GREYLIST_MS + 150 });
    try {
      const [once, twice] = await Promise.all([
        collect(v.verifyMany(['alice@grey-plan.com'])),
        collect(v.verifyMany(['bob@grey-plan.com'], { passes: 2 })),
      ]);
      expect(once.map((e) => e.status)).toEqual(['MailboxTemporarilyUnavailable']);
      expect(twice.map((e) => e.status)).toEqual(['Success']);
    } finally {
      await v.close();
    }
    await expect(v.verifyMany([], { passes: 0 })[Symbol.asyncIterator]().next()).rejects.toThrow(
      'verifyMany: option passes must be a positive integer, got 0',
    );
  });
});

describe('abort, priority and progress', () => {
  it('an AbortSignal stops the batch at once: nothing more is yielded and its connections close', async () => {
    await expectNoLeak(async () => {
      lab.reset();
      const v = verifier({ smtp: { commandTimeoutMs: 10_000 } });
      const controller = new AbortController();
      const yielded: Entry[] = [];
      const run = (async () => {
        for await (const entry of v.verifyMany(['nobody@one-plan.com', 'alice@slow-plan.com', 'bob@slow-plan.com'], { signal: controller.signal })) {
          yielded.push(entry);
        }
      })();
      // Wait until the quick address is out and the slow server has the RCPTs (it answers after 5 s), then abort.
      while (yielded.length < 1 || lab.stats('slow').rcpts < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
      await expect(run).rejects.toThrow(/abort/i);
      await v.close();
      // The session was closed at once, not ended with QUIT after the slow replies.
      const [session] = lab.transcript('slow');
      expect(session!.filter((line) => line.startsWith('RCPT'))).toHaveLength(2);
      expect(session).not.toContain('QUIT');
      expect(yielded.map((e) => e.inputData)).toEqual(['nobody@one-plan.com']);
      expect(v.stats().smtp.openConnections).toBe(0);
      expect(lab.stats('slow').transactions).toBe(1);
    });
  });

  it('an already aborted signal yields nothing and connects nowhere', async () => {
    lab.reset();
    const v = verifier();
    await expect(collect(v.verifyMany(['alice@one-plan.com'], { signal: AbortSignal.abort() }))).rejects.toThrow(/abort/i);
    await v.close();
    expect(lab.stats().connections).toBe(0);
  });

  it('a batch with a higher priority gets free connections first', async () => {
    lab.reset();
    const v = verifier({ smtp: { maxConnections: 1 } });
    const order: string[] = [];
    const low = ['l1', 'l2', 'l3', 'l4', 'l5'].map((name) => `alice@${name}-plan.com`);
    const runLow = (async () => {
      for await (const e of v.verifyMany(low, { priority: 10 })) order.push(e.inputData);
    })();
    const runHigh = (async () => {
      for await (const e of v.verifyMany(['alice@h-plan.com'], { priority: 200 })) order.push(e.inputData);
    })();
    await Promise.all([runLow, runHigh]);
    await v.close();
    expect(order).toHaveLength(6);
    // At most the session that had the only connection before the high-priority work arrived comes first.
    expect(order.indexOf('alice@h-plan.com')).toBeLessThanOrEqual(1);
  });

  it('reports progress from 0 to 1 (the unit of the service), with the total of an array at once and of an iterable at its end', async () => {
    const v = verifier({ checks: 'syntax' });
    const reports: BatchProgress[] = [];
    const inputs = Array.from({ length: 500 }, (_, i) => `user${i}@example.org`);
    await collect(v.verifyMany(inputs, { onProgress: (p) => reports.push(p) }));
    expect(reports.at(-1)).toEqual({ completed: 500, total: 500, percentage: 1, estimatedTimeRemainingMs: 0 });
    for (const report of reports) {
      expect(report.total).toBe(500);
      expect(report.percentage).toBe(report.completed / 500);
    }

    const fromIterable: BatchProgress[] = [];
    async function* source() {
      yield* ['a@example.org', 'b@example.org', 'bad'];
    }
    await collect(v.verifyMany(source(), { onProgress: (p) => fromIterable.push(p) }));
    expect(fromIterable.at(-1)).toMatchObject({ completed: 3, total: 3, percentage: 1 });
    expect(fromIterable.filter((p) => p.percentage === 1)).toHaveLength(1);

    const empty: BatchProgress[] = [];
    expect(await collect(v.verifyMany([], { onProgress: (p) => empty.push(p) }))).toEqual([]);
    expect(empty).toEqual([{ completed: 0, total: 0, percentage: 1 }]);
    await v.close();
  });

  it('a progress callback that throws stops the batch with its error', async () => {
    const v = verifier({ checks: 'syntax' });
    const failing = () => {
      throw new Error('callback failed');
    };
    await expect(collect(v.verifyMany(['a@example.org'], { onProgress: failing }))).rejects.toThrow('callback failed');
  });
});

describe('every input answered exactly once', () => {
  it('under faults mid-session, refused connections, failover, garbage, syntax errors and duplicates', async () => {
    lab.reset();
    const addresses: string[] = [];
    const domains = ['dropbob-plan.com', 'garbage-plan.com', 'refused-plan.com', 'failover-plan.com', 'one-plan.com', 'catchall-plan.com'];
    for (let i = 0; i < 120; i++) {
      const local = ['alice', 'bob', 'carol', `n${i}`][i % 4]!;
      addresses.push(i % 17 === 0 ? `broken${i}@@x` : `${local}@${domains[i % domains.length]}`);
    }
    const entries = await batch(addresses, { smtp: { maxConnections: 4, maxConnectionsPerExchanger: 1 } }, { deduplication: 'Safe' });
    expect(entries).toHaveLength(addresses.length);
    expect(new Set(entries.map((e) => e.index)).size).toBe(addresses.length);
    for (const entry of entries) expect(entry.inputData).toBe(addresses[entry.index]);
    expect(entries.filter((e) => e.status === 'UnhandledException')).toEqual([]);
    expect(lab.stats().data).toBe(0);
  });
});

describe('batch verdicts equal verify()', () => {
  it('over the lab behaviours: catch-all and ordinary domains on one exchanger, greylisting with passes, a drop mid-session, timeouts, failover', async () => {
    const addresses = [
      'alice@one-plan.com',
      'nobody@one-plan.com',
      'x@catchall-plan.com',
      'bob@two-plan.com',
      'alice@grey-plan.com',
      'nobody@grey-plan.com',
      'alice@dropbob-plan.com',
      'bob@dropbob-plan.com',
      'carol@dropbob-plan.com',
      'alice@failover-plan.com',
      'alice@refused-plan.com',
      'alice@garbage-plan.com',
      'alice@slow-plan.com',
      'jörg@one-plan.com',
    ];
    const options: VerifierOptions = { passes: 2, passDelayMs: GREYLIST_MS + 150, smtp: { commandTimeoutMs: 300 } };
    const alone: string[] = [];
    for (const address of addresses) {
      lab.reset();
      const v = verifier(options);
      alone.push((await v.verify(address)).status);
      await v.close();
    }
    lab.reset();
    const together = byIndex(await batch(addresses, options)).map((e) => e.status);
    expect(together).toEqual(alone);
    expect(alone).toEqual([
      'Success',
      'MailboxDoesNotExist',
      'ServerIsCatchAll',
      'Success',
      'Success',
      'MailboxDoesNotExist',
      'Success',
      'SmtpDialogError',
      'Success',
      'Success',
      'SmtpConnectionFailure',
      'SmtpDialogError',
      'MailboxValidationTimeout',
      'MailboxDoesNotExist',
    ]);
  });
});
