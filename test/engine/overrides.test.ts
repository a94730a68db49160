// Override rules and custom quality levels through the public API, against the mail lab: what a rule decides is
// never looked up (the lab's DNS server and SMTP servers see nothing of it), and a custom level's passes and
// timeouts are the ones used.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createVerifier, toLegacyEntry, type Entry, type OverrideRule, type VerifierOptions, type VerifyManyOptions } from '../../packages/mailverify/src/index.js';
import { labVerifier } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { expectNoLeak } from '../lab/leaks.js';

let lab: MailLab;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: {
      mx: { mailboxes: ['alice', 'bob', 'john', 'info'] },
      grey: { mailboxes: ['alice'], greylistMs: 200 },
      slow: { mailboxes: ['alice'], delayMs: { rcpt: 400 } },
    },
    domains: {
      'example.com': ['mx'],
      'partner.com': ['mx'],
      'xn--bcher-kva.de': ['mx'],
      'grey-q.com': ['grey'],
      'slow-q.com': ['slow'],
    },
  });
});

afterAll(async () => {
  await lab.close();
});

beforeEach(() => lab.reset());

async function run(inputs: string[], options: VerifierOptions = {}, batch: VerifyManyOptions = {}): Promise<Entry[]> {
  const verifier = labVerifier(lab, options);
  try {
    const entries: Entry[] = [];
    for await (const entry of verifier.verifyMany(inputs, { order: 'input', ...batch })) entries.push(entry);
    return entries;
  } finally {
    await verifier.close();
  }
}

/** What the lab saw: DNS queries by name, SMTP connections in all. */
function traffic(): { names: string[]; connections: number } {
  return { names: lab.dns.queries.map((query) => query.name.toLowerCase()), connections: lab.stats().connections };
}

const rule = (match: string, classification: string): OverrideRule => ({ match, classification });

describe('override rules', () => {
  it('give OverrideMatch, the rule classification, parsed parts and flags, with no DNS or SMTP work', async () => {
    const [entry, other] = await run(['Info@Partner.com', 'alice@example.com'], { overrides: [rule('*@partner.com', 'Deliverable')] });
    expect(entry).toMatchObject({
      status: 'OverrideMatch',
      classification: 'Deliverable',
      emailAddress: 'Info@Partner.com',
      emailAddressLocalPart: 'Info',
      emailAddressDomainPart: 'Partner.com',
      asciiEmailAddressDomainPart: 'partner.com',
      isRoleAccount: true,
      isFreeEmailAddress: false,
      isDisposableEmailAddress: false,
    });
    expect(other).toMatchObject({ status: 'Success', classification: 'Deliverable' });
    const seen = traffic();
    expect(seen.names.some((name) => name.includes('partner.com'))).toBe(false);
    expect(seen.names.some((name) => name.includes('example.com'))).toBe(true);
    // One session, for example.com only.
    expect(lab.stats('mx').rcpts).toBe(2); // alice and the catch-all probe
  });

  it('match wildcards over the whole address: * any run (none included), ? exactly one character', async () => {
    const rules = [rule('a?c@example.com', 'Three'), rule('x*@example.com', 'X'), rule('*@*.partner.com', 'Sub'), rule('*', 'Rest')];
    const inputs = ['abc@example.com', 'ac@example.com', 'abbc@example.com', 'x@example.com', 'xyz@example.com', 'a@mail.partner.com', 'a@partner.com'];
    const entries = await run(inputs, { overrides: rules, checks: 'syntax' });
    expect(entries.map((e) => e.classification)).toEqual(['Three', 'Rest', 'Rest', 'X', 'X', 'Sub', 'Rest']);
    expect(entries.every((e) => e.status === 'OverrideMatch')).toBe(true);
  });

  it('treat every other character literally (dots, plus signs, brackets are no pattern syntax)', async () => {
    const rules = [rule('a.b+c@example.com', 'Literal')];
    const entries = await run(['a.b+c@example.com', 'aXb+c@example.com', 'a.bbc@example.com'], { overrides: rules, checks: 'syntax' });
    expect(entries.map((e) => e.status)).toEqual(['OverrideMatch', 'Success', 'Success']);
  });

  it('compare as Safe deduplication does: ASCII case, CFWS, needless quotes, IDN domains in either form', async () => {
    const rules = [
      rule('JOHN@Example.COM', 'Case'),
      rule('"bob"@example.com', 'Quoted'),
      rule('*@bücher.de', 'Idn'),
      rule('"a b"@example.com', 'Space'),
      rule('ü*@example.com', 'Unicode local'),
    ];
    const inputs = ['john@example.com', '(comment) John@EXAMPLE.com ', 'bob@example.com', '"b\\ob"@example.com', 'x@BÜCHER.de', 'x@xn--bcher-kva.de', '"a b"@example.com', 'üser@example.com', 'Üser@example.com'];
    const entries = await run(inputs, { overrides: rules, checks: 'syntax' });
    expect(entries.map((e) => [e.status, e.classification])).toEqual([
      ['OverrideMatch', 'Case'],
      ['OverrideMatch', 'Case'],
      ['OverrideMatch', 'Quoted'],
      ['OverrideMatch', 'Quoted'],
      ['OverrideMatch', 'Idn'],
      ['OverrideMatch', 'Idn'],
      ['OverrideMatch', 'Space'],
      ['OverrideMatch', 'Unicode local'],
      // Only ASCII letters are compared without case.
      ['Success', 'Deliverable'],
    ]);
    const [idnByXn] = await run(['x@bücher.de'], { overrides: [rule('*@xn--bcher-kva.de', 'Xn')], checks: 'syntax' });
    expect(idnByXn).toMatchObject({ status: 'OverrideMatch', classification: 'Xn', hasInternationalDomainName: true });
  });

  it('the first matching rule wins, and a batch rules come before the verifier rules', async () => {
    const verifierRules = [rule('*@example.com', 'Verifier'), rule('bob@example.com', 'Verifier exact')];
    const [alice, bob] = await run(['alice@example.com', 'bob@example.com'], { overrides: verifierRules, checks: 'syntax' });
    expect([alice!.classification, bob!.classification]).toEqual(['Verifier', 'Verifier']);
    const batchRules = [rule('bob@*', 'Batch')];
    const entries = await run(['alice@example.com', 'bob@example.com', 'bob@partner.com'], { overrides: verifierRules, checks: 'syntax' }, { overrides: batchRules });
    expect(entries.map((e) => e.classification)).toEqual(['Verifier', 'Batch', 'Batch']);
    // A long list: the exact and per-domain indexes keep the order of the list.
    const many = [...Array.from({ length: 500 }, (_, i) => rule(`user${i}@example.com`, `Exact ${i}`)), rule('*@example.com', 'Domain'), rule('user7@example.com', 'Late')];
    const ordered = await run(['user7@example.com', 'user700@example.com', 'other@partner.com'], { overrides: [rule('user7*', 'First'), ...many], checks: 'syntax' });
    expect(ordered.map((e) => e.classification)).toEqual(['First', 'First', 'Deliverable']);
    const indexed = await run(['user7@example.com', 'user700@example.com'], { overrides: many, checks: 'syntax' });
    expect(indexed.map((e) => e.classification)).toEqual(['Exact 7', 'Domain']);
  });

  it('never override a syntax failure, an unacceptable literal or a top-level domain that does not exist', async () => {
    const entries = await run(['a..b@example.com', 'a@[127.0.0.1]', 'a@example.invalid', 'a@[8.8.8.8]'], { overrides: [rule('*', 'Everything')], allowPrivateAddresses: false, checks: 'syntax' });
    expect(entries.map((e) => e.status)).toEqual(['DoubleDotSequence', 'UnacceptableDomainLiteral', 'DomainDoesNotExist', 'OverrideMatch']);
    expect(entries[0]!.classification).toBe('Undeliverable');
  });

  it('come before the disposable lists and suggestions still come', async () => {
    const [entry] = await run(['a@mailinator.com', ], { overrides: [rule('*@mailinator.com', 'Trusted')], checks: 'syntax' });
    expect(entry).toMatchObject({ status: 'OverrideMatch', classification: 'Trusted', isDisposableEmailAddress: true });
    const [typo] = await run(['a@gmial.com'], { overrides: [rule('*@gmial.com', 'Typo')], checks: 'syntax' });
    expect(typo).toMatchObject({ status: 'OverrideMatch', suggestions: ['a@gmail.com'] });
  });

  it('a Duplicate of an overridden entry takes its classification and causes no lookup', async () => {
    const entries = await run(['john@partner.com', 'JOHN@partner.com', 'alice@example.com', 'Alice@example.com'], { overrides: [rule('john@partner.com', 'Mine')] }, { deduplication: 'Safe' });
    expect(entries.map((e) => [e.status, e.classification, e.duplicateOf])).toEqual([
      ['OverrideMatch', 'Mine', undefined],
      ['Duplicate', 'Mine', 0],
      ['Success', 'Deliverable', undefined],
      ['Duplicate', 'Deliverable', 2],
    ]);
    expect(traffic().names.some((name) => name.includes('partner.com'))).toBe(false);
  });

  it('apply to verify() and to the offline path alike', async () => {
    const verifier = labVerifier(lab, { overrides: [rule('*@partner.com', 'Risky')] });
    try {
      expect(await verifier.verify('info@partner.com')).toMatchObject({ status: 'OverrideMatch', classification: 'Risky' });
    } finally {
      await verifier.close();
    }
    expect(lab.stats().connections).toBe(0);
    expect(lab.dns.queries).toHaveLength(0);
  });

  it('are written in 1.4 with the status their classification stands for', async () => {
    const rules = ['Deliverable', 'Undeliverable', 'Risky', 'Unknown', 'Mine'].map((name, i) => rule(`u${i}@partner.com`, name));
    const entries = await run(['u0@partner.com', 'u1@partner.com', 'u2@partner.com', 'u3@partner.com', 'u4@partner.com'], { overrides: rules, checks: 'syntax' });
    const legacy = entries.map((entry) => toLegacyEntry(entry));
    expect(legacy.map((e) => e.status)).toEqual(['Success', 'MailboxDoesNotExist', 'ServerIsCatchAll', 'UnhandledException', 'UnhandledException']);
    expect(legacy.map((e) => [e.isSuccess, e.isMailboxFailure, e.isCatchAllFailure])).toEqual([
      [true, false, false],
      [false, true, false],
      [false, false, true],
      [false, false, false],
      [false, false, false],
    ]);
  });

  it('malformed rules are a TypeError naming the rule', () => {
    const bad: [unknown, string][] = [
      ['*@x.com', 'option overrides must be an array'],
      [[{ match: '*@x.com' }], 'overrides[0].classification must be a non-empty string'],
      [[rule('a@x.com', 'A'), { match: '', classification: 'B' }], 'overrides[1].match must be a non-empty string'],
      [[{ match: 'a@x.com', classification: 'A', extra: 1 }], 'overrides[0] has an unknown key "extra"'],
      [[rule('a\r\n@x.com', 'A')], 'overrides[0].match must not hold control characters'],
      [[rule('*@bü*.de', 'A')], 'overrides[0].match: the domain label "bü*" has both a wildcard and non-ASCII characters'],
      [[null], 'overrides[0] must be an object'],
      [[rule('a@x.com', 'x'.repeat(101))], 'overrides[0].classification must be at most 100 characters'],
    ];
    for (const [overrides, message] of bad) {
      expect(() => createVerifier({ overrides: overrides as OverrideRule[], checks: 'syntax' }), message).toThrow(TypeError);
      expect(() => createVerifier({ overrides: overrides as OverrideRule[], checks: 'syntax' })).toThrow(message);
    }
  });

  it('malformed batch rules reject the iteration, naming the rule', async () => {
    const verifier = createVerifier({ checks: 'syntax' });
    await expect(verifier.verifyMany(['a@x.com'], { overrides: [rule('a@x.com', '')] })[Symbol.asyncIterator]().next()).rejects.toThrow(
      'verifyMany: option overrides[0].classification must be a non-empty string',
    );
    await verifier.close();
  });

  it('a pathological pattern costs time proportional to its length, not exponential', async () => {
    const pattern = `${'*a'.repeat(60)}b@example.com`;
    const [entry] = await run([`${'a'.repeat(60)}@example.com`], { overrides: [rule(pattern, 'Never')], checks: 'syntax' });
    expect(entry!.status).toBe('Success');
  });
});

describe('custom quality levels', () => {
  // The verifier waits 150 ms for each command: the slow server (400 ms) times out, the greylisting one refuses the
  // first try. Only a level with a longer timeout and more passes gets both answers.
  const impatient: VerifierOptions = { smtp: { connectTimeoutMs: 150, commandTimeoutMs: 150 } };
  const patient = { id: 'Patient', passes: 3, passDelay: 300, connectTimeout: 2000, commandTimeout: 2000 };
  const inputs = ['alice@slow-q.com', 'alice@grey-q.com'];

  function impatientVerifier(options: VerifierOptions = {}) {
    return labVerifier(lab, { ...impatient, ...options }, { connectTimeoutMs: 150, commandTimeoutMs: 150 });
  }

  async function statuses(options: VerifierOptions, batch: VerifyManyOptions = {}): Promise<string[]> {
    const verifier = impatientVerifier(options);
    try {
      const entries: Entry[] = [];
      for await (const entry of verifier.verifyMany(inputs, { order: 'input', ...batch })) entries.push(entry);
      return entries.map((e) => e.status);
    } finally {
      await verifier.close();
    }
  }

  it('a standard level keeps the verifier timeouts: both addresses stay Unknown', async () => {
    expect(await statuses({}, { quality: 'High', passes: 1 })).toEqual(['MailboxValidationTimeout', 'MailboxTemporarilyUnavailable']);
  });

  it('a custom level on a batch uses its own passes, wait and timeouts', async () => {
    expect(await statuses({}, { quality: patient })).toEqual(['Success', 'Success']);
    // The greylisted recipient was asked again after the level's wait.
    expect(lab.stats('grey').transactions).toBeGreaterThanOrEqual(2);
  });

  it('a custom level as the verifier quality', async () => {
    expect(await statuses({ quality: patient })).toEqual(['Success', 'Success']);
  });

  it('a custom level without timeouts keeps the verifier ones, and one pass does not outwait greylisting', async () => {
    expect(await statuses({}, { quality: { passes: 1, passDelay: 0 } })).toEqual(['MailboxValidationTimeout', 'MailboxTemporarilyUnavailable']);
  });

  it('a malformed level is a TypeError naming its field', async () => {
    expect(() => createVerifier({ quality: { passes: 0 } })).toThrow('createVerifier: option quality.passes must be an integer from 1 to 100, got 0');
    expect(() => createVerifier({ quality: { id: 'high' } })).toThrow('createVerifier: option quality.id must be a name other than Standard, High and Extreme');
    expect(() => createVerifier({ quality: { speed: 1 } as never })).toThrow('createVerifier: option quality has an unknown field "speed"');
    expect(() => createVerifier({ quality: 'Best' as never })).toThrow('createVerifier: option quality must be one of Standard, High, Extreme or a quality level object, got "Best"');
    const verifier = createVerifier({ checks: 'syntax' });
    await expect(verifier.verifyMany([], { quality: { commandTimeout: -1 } })[Symbol.asyncIterator]().next()).rejects.toThrow(
      'verifyMany: option quality.commandTimeout must be a whole number of milliseconds from 1 to 86400000, got -1',
    );
    await verifier.close();
  });

  it('leaves no socket or timer behind', async () => {
    await expectNoLeak(async () => {
      await statuses({}, { quality: patient });
    });
  });
});
