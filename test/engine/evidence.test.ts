// Evidence through the public API: createVerifier({ evidence: true }) and verifyMany(…, { evidence: true }) against a
// mail lab on loopback. One case per stage that can decide: DNS, the exchanger's refusal of the session, the sender's
// refusal, the RCPT reply, the catch-all probe; and an answer asked again through another egress.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { classifySmtpReply, explainSmtpReply, type Entry, type Verifier, type VerifierOptions } from '../../packages/mailverify/src/index.js';
import { labVerifier } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

let lab: MailLab;
const verifiers: Verifier[] = [];

beforeAll(async () => {
  lab = await startMailLab({
    servers: {
      strict: { mailboxes: ['alice'] },
      catchall: { acceptAll: true },
      closed: { greeting: '554 No SMTP service here' },
      banned: { greeting: '554 5.7.1 Your IP is on a blocklist' },
      nosender: { mail: '550 5.1.8 Sender address rejected: domain not found' },
      limited: {
        engine: 'raw',
        pipelining: false,
        mailboxes: ['alice'],
        sourceLimit: { rcpts: 0, reply: '421 4.7.28 Our system has detected an unusual rate of mail from your IP' },
      },
    },
    domains: {
      'strict-evidence.com': ['strict'],
      'two-evidence.com': ['strict', 'catchall'],
      'catchall-evidence.com': ['catchall'],
      'closed-evidence.com': ['closed'],
      'banned-evidence.com': ['banned'],
      'nosender-evidence.com': ['nosender'],
      'limited-evidence.com': ['limited'],
      'null-evidence.com': { mx: [{ priority: 0, exchange: '' }] },
    },
  });
});

afterAll(() => lab?.close());
afterEach(async () => {
  await Promise.all(verifiers.splice(0).map((verifier) => verifier.close()));
  lab.reset();
});

function verifier(options: VerifierOptions = {}): Verifier {
  const made = labVerifier(lab, { evidence: true, ...options });
  verifiers.push(made);
  return made;
}

async function entriesOf(made: Verifier, inputs: string[], batch = {}): Promise<Entry[]> {
  const entries: Entry[] = [];
  for await (const entry of made.verifyMany(inputs, { order: 'input', ...batch })) entries.push(entry);
  return entries;
}

const host = (name: string) => lab.hostOf(name);
const address = (name: string) => lab.addressOf(name);
const ruleOf = (reply: { phase: 'greeting' | 'ehlo' | 'mail' | 'rcpt'; code: number; text: string }) => explainSmtpReply(reply.phase, reply).rule;

describe('evidence', () => {
  it('DNS decides: no exchanger (NXDOMAIN), a null MX, and --checks dns with the exchangers in preference order', async () => {
    const [missing, nullMx] = await entriesOf(verifier(), ['alice@nowhere-evidence.com', 'alice@null-evidence.com']);
    expect(missing).toMatchObject({ status: 'DomainDoesNotExist', evidence: {} });
    expect(nullMx).toMatchObject({ status: 'DomainHasNullMx', evidence: { mx: [] } });

    const [dnsOnly] = await entriesOf(verifier({ checks: 'dns' }), ['alice@two-evidence.com']);
    expect(dnsOnly).toMatchObject({ status: 'Success', evidence: { mx: [host('strict'), host('catchall')] } });
    expect(Object.keys(dnsOnly!.evidence!)).toEqual(['mx']);
  });

  it('the RCPT reply decides: the exchanger and address asked, the egress, the reply and its rule', async () => {
    const [nobody] = await entriesOf(verifier(), ['nobody@two-evidence.com']);
    expect(nobody!.status).toBe('MailboxDoesNotExist');
    const evidence = nobody!.evidence!;
    expect(Object.keys(evidence)).toEqual(['mx', 'exchanger', 'address', 'egress', 'replies', 'rule']);
    expect(evidence).toMatchObject({ mx: [host('strict'), host('catchall')], exchanger: host('strict'), address: address('strict'), egress: 'default' });
    expect(evidence.replies).toEqual([
      { phase: 'rcpt', code: 550, enhancedCode: '5.1.1', text: '5.1.1 <nobody@two-evidence.com>: Recipient address rejected: User unknown' },
    ]);
    expect(evidence.rule).toBe(ruleOf(evidence.replies![0]!));
  });

  it('the catch-all probe decides: a Success shows the probe refused, a catch-all shows it accepted (also from the cache)', async () => {
    const made = verifier();
    const [alice, any] = await entriesOf(made, ['alice@strict-evidence.com', 'anyone@catchall-evidence.com']);
    expect(alice!.status).toBe('Success');
    const [own, probe] = alice!.evidence!.replies!;
    expect(own).toMatchObject({ phase: 'rcpt', code: 250 });
    expect(probe).toMatchObject({ phase: 'rcpt', code: 550, enhancedCode: '5.1.1' });
    expect(alice!.evidence!.rule).toBe(ruleOf(probe!));

    expect(any!.status).toBe('ServerIsCatchAll');
    expect(any!.evidence!.replies!.map((reply) => reply.code)).toEqual([250, 250]);
    expect(any!.evidence!.rule).toBe('positive');

    // The catch-all verdict now comes from the cache: the probe's reply still backs it.
    const [again] = await entriesOf(made, ['someone@catchall-evidence.com']);
    expect(again!.status).toBe('ServerIsCatchAll');
    expect(again!.evidence!.replies!.map((reply) => reply.code)).toEqual([250, 250]);
  });

  it("the exchanger's refusal decides: the greeting, or the MAIL reply, is the evidence", async () => {
    const [closed, nosender] = await entriesOf(verifier(), ['alice@closed-evidence.com', 'alice@nosender-evidence.com']);
    expect(closed!.status).toBe(classifySmtpReply('greeting', { code: 554, text: 'No SMTP service here' }));
    expect(closed!.evidence).toEqual({
      mx: [host('closed')],
      exchanger: host('closed'),
      address: address('closed'),
      egress: 'default',
      replies: [{ phase: 'greeting', code: 554, text: 'No SMTP service here' }],
      rule: ruleOf({ phase: 'greeting', code: 554, text: 'No SMTP service here' }),
    });
    expect(nosender!.status).toBe('LocalSenderAddressRejected');
    expect(nosender!.evidence!.replies).toEqual([
      { phase: 'mail', code: 550, enhancedCode: '5.1.8', text: '5.1.8 Sender address rejected: domain not found' },
    ]);
  });

  it('a refusal of the prober at the greeting, deferred rather than waited for: that greeting is the evidence', async () => {
    const [banned] = await entriesOf(verifier({ smtp: { maxCoolingWaitMs: 0 }, observer: { egressCooling: () => {} } }), ['alice@banned-evidence.com']);
    expect(banned!.status).toBe('LocalEndPointRejected');
    expect(banned!.evidence).toMatchObject({
      exchanger: host('banned'),
      egress: 'default',
      replies: [{ phase: 'greeting', code: 554, enhancedCode: '5.7.1', text: '5.7.1 Your IP is on a blocklist' }],
    });
  });

  it('an address literal has no DNS part and no exchanger name; a duplicate has no evidence', async () => {
    const literal = `alice@[${address('strict')}]`;
    const [first, duplicate] = await entriesOf(verifier(), [literal, literal], { deduplication: 'Safe' });
    expect(first!.status).toBe('Success');
    expect(Object.keys(first!.evidence!)).toEqual(['address', 'egress', 'replies', 'rule']);
    expect(first!.evidence!.address).toBe(address('strict'));
    expect(duplicate).toMatchObject({ status: 'Duplicate' });
    expect(duplicate!.evidence).toBeUndefined();
  });

  it('is off by default; a batch may ask for it, or leave it out', async () => {
    const plain = verifier({ evidence: false });
    const [without] = await entriesOf(plain, ['nobody@strict-evidence.com']);
    expect(without!.status).toBe('MailboxDoesNotExist');
    expect('evidence' in without!).toBe(false);
    const [asked] = await entriesOf(plain, ['nobody@strict-evidence.com'], { evidence: true });
    expect(asked!.evidence!.exchanger).toBe(host('strict'));
    const [declined] = await entriesOf(verifier(), ['nobody@strict-evidence.com'], { evidence: false });
    expect(declined!.evidence).toBeUndefined();
    // Syntax failures and offline verdicts never reached DNS: no evidence.
    const [broken] = await entriesOf(verifier(), ['not an address']);
    expect(broken!.evidence).toBeUndefined();
  });

  it('a reply about the prober is asked again through another egress: the evidence is that answer, through that egress', async () => {
    const made = verifier({
      smtp: {
        egress: [
          { id: 'first', localAddress: '127.0.0.5' },
          { id: 'second', localAddress: '127.0.0.6' },
        ],
        maxConnectionsPerExchanger: 1,
      },
      observer: { egressCooling: () => {} },
    });
    // The exchanger refuses every source: the first egress is refused, the recipient is asked through the second,
    // refused again; that last answer, through that egress, is the evidence.
    const [alice] = await entriesOf(made, ['alice@limited-evidence.com']);
    expect(alice!.status).toBe('ServerTemporaryUnavailable');
    expect(alice!.evidence).toMatchObject({ exchanger: host('limited'), egress: 'second' });
    expect(alice!.evidence!.replies).toEqual([
      { phase: 'rcpt', code: 421, enhancedCode: '4.7.28', text: '4.7.28 Our system has detected an unusual rate of mail from your IP' },
    ]);
  });

  it('rejects a malformed option, naming it', () => {
    expect(() => labVerifier(lab, { evidence: 'yes' as unknown as boolean })).toThrow(/evidence/);
    const made = verifier();
    const iterate = async () => {
      for await (const entry of made.verifyMany(['a@b.com'], { evidence: 1 as unknown as boolean })) void entry;
    };
    return expect(iterate()).rejects.toThrow(/option evidence must be true or false/);
  });
});

