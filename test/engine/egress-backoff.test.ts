// Provider profiles and back-off through the public API, against a lab "provider" of two exchangers that counts the
// RCPTs of each source address (the two egresses bind 127.0.0.5 and 127.0.0.6) and answers past a limit as Gmail
// (421 4.7.28) or Exchange Online (550 5.7.606) do. No verdict may come from such a reply.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EgressCoolingEvent, Entry, SmtpEgress, VerifierOptions } from '../../packages/mailverify/src/index.js';
import { labVerifier } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab, type ServerSpec } from '../lab/mail-lab.js';

const EGRESSES: SmtpEgress[] = [
  { id: 'first', localAddress: '127.0.0.5' },
  { id: 'second', localAddress: '127.0.0.6' },
];
const PROVIDER = { id: 'lab-provider', match: ['p?.mx.lab.test'] };
const MAILBOXES = ['alice', 'bob', 'carol', 'dave'];

let lab: MailLab;

/**
 * Without PIPELINING each reply is read before the next command goes: a 421 that closes the connection leaves no
 * pipelined replies unread (which would make their recipients suspects, asked again alone).
 */
function limited(rcpts: number, reply: string): ServerSpec {
  return { engine: 'raw', pipelining: false, mailboxes: MAILBOXES, sourceLimit: { rcpts, reply, group: 'provider' } };
}

beforeAll(async () => {
  lab = await startMailLab({
    servers: { p1: limited(4, '421 4.7.28 Our system has detected an unusual rate of mail from your IP; rate limited'), p2: { mailboxes: MAILBOXES } },
    domains: { 'one-backoff.com': ['p1'], 'two-backoff.com': ['p2'] },
  });
});

afterAll(() => lab?.close());
afterEach(async () => {
  // A session's QUIT may still be in flight on the server's side: its connection would be recorded afresh by reset.
  while (lab.stats().open > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  lab.reset();
});

async function run(inputs: string[], options: VerifierOptions): Promise<{ entries: Entry[]; coolings: EgressCoolingEvent[] }> {
  const coolings: EgressCoolingEvent[] = [];
  const verifier = labVerifier(lab, {
    ...options,
    observer: { egressCooling: (event) => coolings.push(event) },
    smtp: { egress: EGRESSES, providers: [PROVIDER], maxConnectionsPerExchanger: 1, ...options.smtp },
  });
  const entries: Entry[] = [];
  try {
    for await (const entry of verifier.verifyMany(inputs, { order: 'input' })) entries.push(entry);
  } finally {
    await verifier.close();
  }
  return { entries, coolings };
}

const right = (input: string) => (MAILBOXES.includes(input.split('@')[0]!) ? 'Success' : 'MailboxDoesNotExist');

describe('back-off on replies about the prober', () => {
  it('a 421 4.7.28 through one egress cools it; the recipient is asked through the other; every verdict is right', async () => {
    const inputs = ['alice', 'bob', 'nobody', 'carol', 'dave', 'nemo'].map((local) => `${local}@one-backoff.com`);
    const { entries, coolings } = await run(inputs, {});
    expect(entries.map((e) => e.status)).toEqual(inputs.map(right));
    expect(coolings).toEqual([
      { egress: 'first', provider: 'lab-provider', reply: { code: 421, enhancedCode: '4.7.28', text: expect.stringContaining('unusual rate') as string }, cooldownMs: 60_000 },
    ]);
    const { asked, limited: refused } = lab.sourceStats('provider');
    expect(refused).toEqual({ '127.0.0.5': 1 });
    expect(asked['127.0.0.6']).toBeGreaterThan(0);
  });

  it('550 5.7.606 through one egress: not taken as the answer; asked through the other egress', async () => {
    lab.setServer('p1', limited(4, '550 5.7.606 Access denied, banned sending IP [127.0.0.5]'));
    try {
      const inputs = ['alice', 'bob', 'nobody', 'carol', 'dave', 'nemo'].map((local) => `${local}@one-backoff.com`);
      const { entries, coolings } = await run(inputs, {});
      expect(entries.map((e) => e.status)).toEqual(inputs.map(right));
      expect(coolings.map((c) => [c.egress, c.reply.enhancedCode])).toEqual([['first', '5.7.606']]);
      expect(lab.sourceStats('provider').limited['127.0.0.6']).toBeUndefined();
    } finally {
      lab.setServer('p1', limited(4, '421 4.7.28 Our system has detected an unusual rate of mail from your IP; rate limited'));
    }
  });

  it('with every egress cooling and no wait allowed, the work left is deferred, never given a verdict from such a reply', async () => {
    lab.setServer('p1', limited(1, '550 5.7.606 Access denied, banned sending IP'));
    try {
      const inputs = ['alice', 'bob', 'nobody', 'carol', 'dave', 'nemo', 'erin', 'frank'].map((local) => `${local}@one-backoff.com`);
      const { entries, coolings } = await run(inputs, { smtp: { maxCoolingWaitMs: 0 } });
      expect(new Set(coolings.map((c) => c.egress))).toEqual(new Set(['first', 'second']));
      for (const entry of entries) {
        // Refused through both egresses: the reply's status; never asked: ServerTemporaryUnavailable; else the verdict.
        expect(['LocalEndPointRejected', 'ServerTemporaryUnavailable', right(entry.inputData)]).toContain(entry.status);
      }
      expect(entries.some((e) => e.status === 'LocalEndPointRejected')).toBe(true);
    } finally {
      lab.setServer('p1', limited(4, '421 4.7.28 Our system has detected an unusual rate of mail from your IP; rate limited'));
    }
  });

  it('with several egresses LocalEndPointRejected is transient: a later pass asks again', async () => {
    lab.setServer('p1', limited(1, '550 5.7.606 Access denied, banned sending IP'));
    try {
      const input = 'alice@one-backoff.com';
      // Both egresses refused in the first pass (1 RCPT each, the first taken by another recipient of the pass).
      const first = await run(['bob@one-backoff.com', 'carol@one-backoff.com', 'dave@one-backoff.com', input], { smtp: { maxCoolingWaitMs: 0 } });
      expect(first.entries.at(-1)!.status).not.toBe('Success');
      // The limit lifted: the next verifier's second pass gets the verdict the first pass could not.
      lab.setServer('p1', { mailboxes: MAILBOXES });
      lab.reset();
      const { entries } = await run([input], { passes: 2, passDelayMs: 10, smtp: { maxCoolingWaitMs: 0 } });
      expect(entries[0]!.status).toBe('Success');
    } finally {
      lab.setServer('p1', limited(4, '421 4.7.28 Our system has detected an unusual rate of mail from your IP; rate limited'));
    }
  });
});

describe('provider profiles', () => {
  it('a profile matching the limit keeps every source under it: no limit reply, every verdict right', async () => {
    const inputs = ['alice', 'bob', 'nobody', 'carol', 'dave', 'nemo'].map((local) => `${local}@one-backoff.com`);
    // 6 recipients and a catch-all probe: 7 RCPTs, at most 4 a minute per egress.
    const { entries, coolings } = await run(inputs, { smtp: { providers: [{ ...PROVIDER, recipientsPerMinute: 4 }] } });
    expect(entries.map((e) => e.status)).toEqual(inputs.map(right));
    expect(coolings).toEqual([]);
    const { asked, limited: refused } = lab.sourceStats('provider');
    expect(refused).toEqual({});
    expect(Object.values(asked).every((count) => count <= 4)).toBe(true);
    expect(Object.keys(asked).sort()).toEqual(['127.0.0.5', '127.0.0.6']);
  });

  it('one budget across the provider: its exchangers of two domains share the egress × provider count', async () => {
    const inputs = ['alice@one-backoff.com', 'bob@two-backoff.com', 'nobody@one-backoff.com', 'carol@two-backoff.com'];
    const { entries } = await run(inputs, { smtp: { egress: [EGRESSES[0]!], providers: [{ ...PROVIDER, recipientsPerDay: 3 }] } });
    // 3 RCPTs in all through the one egress: what is left is deferred (ServerTemporaryUnavailable), never refused.
    const answered = entries.filter((e) => e.status !== 'ServerTemporaryUnavailable');
    expect(answered.length).toBeGreaterThan(0);
    expect(answered.length).toBeLessThan(inputs.length);
    for (const entry of answered) expect(entry.status).toBe(right(entry.inputData));
    expect(lab.stats('p1').rcpts + lab.stats('p2').rcpts).toBe(3);
  });

  it('a profile restricted to one egress sends its exchangers by that egress only', async () => {
    const inputs = ['alice@one-backoff.com', 'bob@two-backoff.com', 'nobody@two-backoff.com'];
    const { entries } = await run(inputs, { smtp: { maxConnectionsPerExchanger: 3, providers: [{ ...PROVIDER, egress: ['second'] }] } });
    expect(entries.map((e) => e.status)).toEqual(inputs.map(right));
    expect(new Set([...lab.peers('p1'), ...lab.peers('p2')])).toEqual(new Set(['127.0.0.6']));
  });

  it('refuses a malformed profile with a TypeError naming the field', () => {
    expect(() => labVerifier(lab, { smtp: { providers: [{ id: 'x', match: [] }] } })).toThrow(/smtp\.providers\[0\]\.match/u);
    expect(() => labVerifier(lab, { smtp: { providers: [{ id: 'x', match: ['*.x'], egress: ['nowhere'] }] } })).toThrow(/smtp\.providers\[0\]\.egress names "nowhere"/u);
    expect(() => labVerifier(lab, { smtp: { providers: [{ id: 'x', match: ['*.x'], recipientsPerMinute: 0 }] } })).toThrow(/recipientsPerMinute must be a whole number/u);
  });
});
