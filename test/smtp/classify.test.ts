import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_REPLY_TEXT,
  SMTP_REPLY_PHASES,
  classifySmtpReply,
  explainSmtpReply,
  type SmtpReplyPhase,
  type SmtpReplyRule,
} from '../../packages/mailverify/src/smtp/classify.js';
import { parseReply } from '../../packages/mailverify/src/smtp/reply.js';
import { PATTERN_KIND_ORDER, REPLY_PATTERNS, matchingPatternIds } from '../../packages/mailverify/src/smtp/reply-patterns.js';
import { STATUS_CODES, type StatusCode } from '../../packages/mailverify/src/status/catalogue.js';
import { REPLY_CASES } from './reply-cases.js';

const label = (c: { phase: string; code: number; text: string }): string =>
  `${c.phase} ${c.code} ${JSON.stringify(c.text.length > 90 ? `${c.text.slice(0, 90)}…` : c.text)}`;

describe('classifySmtpReply on real replies (test/smtp/reply-cases.ts)', () => {
  it.each(REPLY_CASES.map((c) => [label(c), c] as const))('%s', (_, c) => {
    const explained = explainSmtpReply(c.phase, { code: c.code, text: c.text });
    expect(explained.status).toBe(c.expected);
    expect(classifySmtpReply(c.phase, { code: c.code, text: c.text })).toBe(c.expected);
    if (c.rule !== undefined) expect(explained.rule).toBe(c.rule);
  });

  it('has at least 80 real replies, each with its source, from many senders', () => {
    expect(REPLY_CASES.length).toBeGreaterThanOrEqual(80);
    for (const c of REPLY_CASES) expect(c.source.trim(), label(c)).not.toBe('');
    const sources = new Set(REPLY_CASES.map((c) => c.source));
    expect(sources.size).toBeGreaterThanOrEqual(40);
    // The providers the brief names, each present at least once.
    const all = REPLY_CASES.map((c) => `${c.source} ${c.text}`).join('\n');
    for (const who of [
      'Gmail', 'Google', 'Outlook', 'Exchange Online', 'Yahoo', 'GMX', 'iCloud', 'Postfix', 'Exim', 'Sendmail',
      'Mimecast', 'postgrey', 'Spamhaus', 'Barracuda', 'Proofpoint', 'Zoho', 'Yandex', 'Mail.ru', 'QQ',
    ]) {
      expect(all, who).toContain(who);
    }
  });

  it('keeps the texts as classifySmtpReply takes them: no reply code left at the start of a line', () => {
    for (const c of REPLY_CASES) {
      const lines = c.text.split('\n');
      // A continuation marker like "550-" or "550 " at a line start means a code was not stripped (usbutils#145 keeps
      // a nested "550 " on purpose: Exim quoted the other server's reply inside its own line).
      const stray = lines.filter((l) => /^\d{3}[ -]/.test(l) && !l.startsWith('550 5.1.10 RESOLVER'));
      expect(stray, label(c)).toEqual([]);
    }
  });

  it('agrees with parseReply on the wire form of every case', () => {
    for (const c of REPLY_CASES) {
      const lines = c.text.split('\n');
      const raw = lines.map((l, i) => `${c.code}${i === lines.length - 1 ? ' ' : '-'}${l}`).join('\r\n');
      const parsed = parseReply(raw);
      if (c.code % 100 >= 60) {
        expect(parsed.code, label(c)).toBe(0);
        continue;
      }
      expect(classifySmtpReply(c.phase, parsed), label(c)).toBe(c.expected);
    }
  });
});

describe('the pattern table (packages/mailverify/src/smtp/reply-patterns.ts)', () => {
  it('has unique ids, a known kind, a source, and case-insensitive, stateless patterns', () => {
    const ids = REPLY_PATTERNS.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of REPLY_PATTERNS) {
      expect(PATTERN_KIND_ORDER).toContain(p.kind);
      expect(p.source.trim(), p.id).not.toBe('');
      expect(p.pattern.flags, p.id).toContain('i');
      expect(p.pattern.flags, p.id).not.toMatch(/[gy]/);
    }
  });

  it('has no nested quantifier (a quantified group holding a quantifier)', () => {
    for (const p of REPLY_PATTERNS) {
      expect(p.pattern.source, p.id).not.toMatch(/\([^()]*[+*][^()]*\)[+*?{]/);
    }
  });

  it('has every row matched by at least one real reply', () => {
    const matched = new Set(REPLY_CASES.flatMap((c) => matchingPatternIds(c.text)));
    const unmatched = REPLY_PATTERNS.map((p) => p.id).filter((id) => !matched.has(id));
    expect(unmatched).toEqual([]);
  });

  it('has every kind deciding at least one real reply', () => {
    const decided = new Set(
      REPLY_CASES.map((c) => explainSmtpReply(c.phase, { code: c.code, text: c.text }).kind).filter((k) => k !== null),
    );
    expect([...decided].sort()).toEqual([...PATTERN_KIND_ORDER].sort());
  });

  it('stays fast on long adversarial text', () => {
    const inputs = [
      'a'.repeat(200_000),
      "doesn't have a ".repeat(20_000),
      'blocked '.repeat(30_000),
      'quota '.repeat(30_000),
      `${'x'.repeat(100_000)} doesn't have a ${'y'.repeat(100_000)}`,
    ];
    const started = performance.now();
    for (const text of inputs) for (const p of REPLY_PATTERNS) p.pattern.test(text);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('every rule of classify.ts', () => {
  const ALL_RULES: readonly SmtpReplyRule[] = [
    'malformed', 'positive', 'unexpected-positive', 'closing-421', 'enhanced-5.6.7', 'enhanced-x.2.2', 'enhanced-x.5.3',
    'enhanced-sender', 'enhanced-5.7.25', 'enhanced-5.7.606-649', 'transient-outside-rcpt', 'transient-4.3-4.4',
    'transient-wording', 'transient-default', 'protocol-error', 'wording', 'bare-5.7', 'greeting-default',
    'ehlo-default', 'mail-5.5', 'mail-default', 'rcpt-user-unknown-code', 'rcpt-default',
  ];

  it('is reached by at least one real reply', () => {
    const reached = new Set(REPLY_CASES.map((c) => explainSmtpReply(c.phase, { code: c.code, text: c.text }).rule));
    expect(ALL_RULES.filter((r) => !reached.has(r))).toEqual([]);
  });
});

/** Both sides of each rule: a reply the rule decides, and a close one it does not. */
describe('both sides of every rule', () => {
  const rule = (phase: SmtpReplyPhase, code: number, text: string): SmtpReplyRule =>
    explainSmtpReply(phase, { code, text }).rule;
  const status = (phase: SmtpReplyPhase, code: number, text: string): StatusCode | null =>
    classifySmtpReply(phase, { code, text });

  it('positive codes: only the one expected per phase', () => {
    expect(status('greeting', 220, 'mx ESMTP')).toBeNull();
    expect(status('greeting', 250, 'mx ESMTP')).toBe('SmtpDialogError');
    expect(status('ehlo', 250, 'mx')).toBeNull();
    expect(status('ehlo', 251, 'mx')).toBe('SmtpDialogError');
    expect(status('mail', 250, '2.1.0 Ok')).toBeNull();
    expect(status('mail', 251, '2.1.0 Ok')).toBe('SmtpDialogError');
    for (const code of [250, 251, 252]) expect(status('rcpt', code, '2.1.5 Ok')).toBeNull();
    expect(status('rcpt', 253, '2.1.5 Ok')).toBe('SmtpDialogError');
    expect(status('rcpt', 220, 'ready')).toBe('SmtpDialogError');
    expect(status('rcpt', 334, 'VXNlcm5hbWU6')).toBe('SmtpDialogError');
  });

  it('421 is always ServerTemporaryUnavailable; 450 with the same text is not', () => {
    const text = '4.2.2 <x@y>: Recipient address rejected: Quota exceeded';
    for (const phase of SMTP_REPLY_PHASES) expect(status(phase, 421, text)).toBe('ServerTemporaryUnavailable');
    expect(status('rcpt', 421, '4.5.3 Too many recipients')).toBe('ServerTemporaryUnavailable');
    expect(status('rcpt', 452, text)).toBe('MailboxHasInsufficientStorage');
  });

  it('5.6.7 at MAIL and RCPT; not at EHLO, not 4.6.7', () => {
    const text = '5.6.7 Must declare SMTPUTF8 to send unicode address';
    expect(rule('rcpt', 553, text)).toBe('enhanced-5.6.7');
    expect(rule('mail', 553, text)).toBe('enhanced-5.6.7');
    expect(status('ehlo', 553, '5.6.7 no')).toBe('SmtpDialogError');
    expect(status('rcpt', 453, '4.6.7 later')).toBe('MailboxTemporarilyUnavailable');
  });

  it('x.2.2 at RCPT only; 4.3.1 with storage wording is the server', () => {
    expect(rule('rcpt', 452, '4.2.2 Mailbox full')).toBe('enhanced-x.2.2');
    expect(rule('rcpt', 552, '5.2.2 Mailbox full')).toBe('enhanced-x.2.2');
    expect(status('mail', 452, '4.2.2 Mailbox full')).toBe('ServerTemporaryUnavailable');
    expect(status('mail', 552, '5.2.2 Mailbox full')).toBe('LocalSenderAddressRejected');
    expect(status('rcpt', 452, '4.3.1 Insufficient system storage')).toBe('ServerTemporaryUnavailable');
    expect(status('rcpt', 552, '5.2.3 Message too large')).toBe('MailboxDoesNotExist');
  });

  it('x.5.3 at RCPT only', () => {
    expect(rule('rcpt', 452, '4.5.3 Too many recipients')).toBe('enhanced-x.5.3');
    expect(status('rcpt', 552, '5.5.3 Too many recipients')).toBe('ServerDoesNotAllowMultipleRecipients');
    expect(status('mail', 452, '4.5.3 Too many recipients')).toBe('ServerTemporaryUnavailable');
    expect(status('rcpt', 452, '4.5.0 SMTP protocol violation')).toBe('MailboxTemporarilyUnavailable');
  });

  it('sender codes 5.1.7, 5.1.8, 5.7.23, 5.7.24, 5.7.26, 5.7.27 decide before wording; 4.1.8 and 5.7.22 do not', () => {
    for (const code of ['5.1.7', '5.1.8', '5.7.23', '5.7.24', '5.7.26', '5.7.27']) {
      expect(explainSmtpReply('rcpt', { code: 550, text: `${code} blocked using Spamhaus` })).toMatchObject({
        status: 'LocalSenderAddressRejected',
        rule: 'enhanced-sender',
        enhancedCode: code,
      });
      expect(status('mail', 550, `${code} no`)).toBe('LocalSenderAddressRejected');
    }
    expect(status('rcpt', 450, '4.1.8 Domain not found')).toBe('MailboxTemporarilyUnavailable');
    expect(rule('rcpt', 550, '5.7.22 no')).toBe('bare-5.7');
  });

  it('5.7.25 and 5.7.606-649 at any phase; 5.7.605 and 5.7.650 are bare 5.7.x', () => {
    for (const phase of SMTP_REPLY_PHASES) {
      expect(rule(phase, 550, '5.7.25 No PTR')).toBe('enhanced-5.7.25');
      expect(rule(phase, 550, '5.7.606 Access denied')).toBe('enhanced-5.7.606-649');
      expect(rule(phase, 550, '5.7.649 Access denied')).toBe('enhanced-5.7.606-649');
    }
    expect(rule('rcpt', 550, '5.7.605 Access denied')).toBe('bare-5.7');
    expect(rule('rcpt', 550, '5.7.650 Access denied')).toBe('bare-5.7');
    expect(status('rcpt', 450, '4.7.25 No PTR')).toBe('MailboxTemporarilyUnavailable');
  });

  it('an enhanced code of another class than the reply is ignored (RFC 3463)', () => {
    expect(explainSmtpReply('rcpt', { code: 550, text: '4.7.606 Access denied' })).toMatchObject({
      status: 'MailboxDoesNotExist',
      rule: 'rcpt-default',
      enhancedCode: null,
    });
    expect(status('rcpt', 550, '5.7.606 Access denied')).toBe('LocalEndPointRejected');
    expect(status('rcpt', 452, '5.2.2 full')).toBe('MailboxTemporarilyUnavailable');
    expect(status('rcpt', 452, '4.2.2 full')).toBe('MailboxHasInsufficientStorage');
    expect(status('rcpt', 550, '4.5.3 x')).toBe('MailboxDoesNotExist');
    // One in mid-line is not an enhanced code either; one at the start of a later line is.
    expect(status('rcpt', 550, 'Access denied 5.7.606')).toBe('MailboxDoesNotExist');
    expect(status('rcpt', 550, 'Access denied\n5.7.606 banned')).toBe('LocalEndPointRejected');
  });

  it('4xx outside RCPT is ServerTemporaryUnavailable; the same at RCPT is not', () => {
    const text = '4.7.1 Client host rejected: cannot find your hostname';
    for (const phase of ['greeting', 'ehlo', 'mail'] as const) expect(rule(phase, 450, text)).toBe('transient-outside-rcpt');
    expect(status('rcpt', 450, text)).toBe('MailboxTemporarilyUnavailable');
  });

  it('4.3.x and 4.4.x at RCPT are the server, 4.2.x and 4.7.x the mailbox', () => {
    expect(status('rcpt', 451, '4.3.0 Try again')).toBe('ServerTemporaryUnavailable');
    expect(status('rcpt', 451, '4.4.2 Timeout - closing connection')).toBe('ServerTemporaryUnavailable');
    expect(status('rcpt', 451, '4.2.0 Try again')).toBe('MailboxTemporarilyUnavailable');
    expect(status('rcpt', 451, '4.7.1 Try again')).toBe('MailboxTemporarilyUnavailable');
  });

  it('a 4xx at RCPT stays in the closed set whatever its wording', () => {
    expect(status('rcpt', 450, 'Client host [1.2.3.4] blocked using zen.spamhaus.org')).toBe('MailboxTemporarilyUnavailable');
    expect(status('rcpt', 450, 'Sender address rejected: Domain not found')).toBe('MailboxTemporarilyUnavailable');
    expect(status('rcpt', 450, 'Non-ASCII addresses not permitted')).toBe('MailboxTemporarilyUnavailable');
    expect(status('rcpt', 450, 'User unknown')).toBe('MailboxTemporarilyUnavailable');
    expect(status('rcpt', 452, 'Mailbox over quota')).toBe('MailboxHasInsufficientStorage');
    expect(status('rcpt', 452, 'Too many recipients')).toBe('ServerDoesNotAllowMultipleRecipients');
    expect(status('rcpt', 452, 'Too many recipients from 1.2.3.4')).toBe('MailboxTemporarilyUnavailable');
  });

  it('500, 502, 503 and 5.5.1 are dialog errors before any wording; 501 and 5.5.2 are not', () => {
    for (const code of [500, 502, 503]) expect(rule('rcpt', code, 'Relay access denied')).toBe('protocol-error');
    expect(rule('rcpt', 554, '5.5.1 Relay access denied')).toBe('protocol-error');
    expect(status('rcpt', 501, 'Relay access denied')).toBe('LocalEndPointRejected');
    expect(status('rcpt', 501, '5.5.2 Syntax error')).toBe('MailboxDoesNotExist');
  });

  it('wording order: reputation, SMTPUTF8, sender, quota, too many recipients, user unknown', () => {
    const all = 'Client host blocked using Spamhaus; SMTPUTF8 required; Sender address rejected; over quota; too many recipients; User unknown';
    const drop = (t: string, part: string): string => t.replace(part, '');
    let text = all;
    const expected: StatusCode[] = [
      'LocalEndPointRejected',
      'ServerDoesNotSupportInternationalMailboxes',
      'LocalSenderAddressRejected',
      'MailboxHasInsufficientStorage',
      'ServerDoesNotAllowMultipleRecipients',
      'MailboxDoesNotExist',
    ];
    const parts = ['Client host blocked using Spamhaus; ', 'SMTPUTF8 required; ', 'Sender address rejected; ', 'over quota; ', 'too many recipients; '];
    for (let i = 0; i < expected.length; i++) {
      expect(explainSmtpReply('rcpt', { code: 550, text })).toMatchObject({ status: expected[i], rule: 'wording' });
      if (i < parts.length) text = drop(text, parts[i]!);
    }
  });

  it('quota, too many recipients and user unknown wording apply at RCPT only', () => {
    expect(status('rcpt', 550, 'Mailbox over quota')).toBe('MailboxHasInsufficientStorage');
    expect(status('mail', 550, 'Mailbox over quota')).toBe('LocalSenderAddressRejected');
    expect(status('rcpt', 550, '5.7.1 too many recipients')).toBe('ServerDoesNotAllowMultipleRecipients');
    expect(status('mail', 550, '5.7.1 too many recipients')).toBe('LocalEndPointRejected');
    expect(status('rcpt', 550, '5.7.1 User unknown')).toBe('MailboxDoesNotExist');
    expect(status('mail', 550, '5.7.1 User unknown')).toBe('LocalEndPointRejected');
    expect(status('ehlo', 550, 'User unknown')).toBe('SmtpDialogError');
  });

  it('SMTPUTF8 and sender wording apply at MAIL and RCPT, not at the greeting or EHLO', () => {
    expect(status('mail', 550, 'SPF check failed')).toBe('LocalSenderAddressRejected');
    expect(status('ehlo', 550, 'SPF check failed')).toBe('SmtpDialogError');
    expect(status('greeting', 554, 'SPF check failed')).toBe('LocalEndPointRejected');
    expect(status('mail', 550, 'Non-ASCII addresses not permitted')).toBe('ServerDoesNotSupportInternationalMailboxes');
    expect(status('ehlo', 550, 'Non-ASCII addresses not permitted')).toBe('SmtpDialogError');
  });

  it('generic user-unknown codes lose to wording', () => {
    for (const code of ['5.0.0', '5.1.0', '5.1.1', '5.1.3', '5.1.6', '5.2.1', '5.4.1', '5.5.0']) {
      expect(rule('rcpt', 550, `${code} Mailbox unavailable`)).toBe('wording');
      expect(rule('rcpt', 550, `${code} Go away`)).toBe('rcpt-user-unknown-code');
      expect(status('rcpt', 550, `${code} Client host [1.2.3.4] blocked using RBL`)).toBe('LocalEndPointRejected');
      expect(status('rcpt', 552, `${code} over quota`)).toBe('MailboxHasInsufficientStorage');
    }
    expect(rule('rcpt', 550, '5.1.2 Go away')).toBe('rcpt-default');
  });

  it('a bare 5.7.x is LocalEndPointRejected; a 5.7.x with wording follows the wording', () => {
    expect(rule('rcpt', 550, '5.7.1 Go away')).toBe('bare-5.7');
    expect(status('rcpt', 550, '5.7.1 No such user')).toBe('MailboxDoesNotExist');
    expect(status('rcpt', 550, '5.7.1 DMARC policy')).toBe('LocalSenderAddressRejected');
    expect(status('rcpt', 550, '5.1.1 Go away')).toBe('MailboxDoesNotExist');
  });

  it('phase defaults: greeting, EHLO, MAIL (5.5.x apart), RCPT', () => {
    expect(rule('greeting', 554, 'No SMTP service here')).toBe('greeting-default');
    expect(status('greeting', 554, 'No SMTP service here')).toBe('LocalEndPointRejected');
    expect(status('greeting', 503, 'bad sequence')).toBe('SmtpDialogError');
    expect(rule('ehlo', 550, 'Not now')).toBe('ehlo-default');
    expect(status('ehlo', 550, 'Helo command rejected: Host not found')).toBe('LocalEndPointRejected');
    expect(rule('mail', 550, 'Not now')).toBe('mail-default');
    expect(status('mail', 550, 'Not now')).toBe('LocalSenderAddressRejected');
    expect(rule('mail', 501, '5.5.4 Bad syntax')).toBe('mail-5.5');
    expect(status('mail', 550, '5.5.0 Mailbox unavailable')).toBe('SmtpDialogError');
    expect(status('mail', 550, 'Client host blocked using zen.spamhaus.org')).toBe('LocalEndPointRejected');
    expect(rule('rcpt', 550, 'Not now')).toBe('rcpt-default');
  });

  it('patterns that must not fire: queue or sending quota, per-client recipient rate, a relay= field', () => {
    expect(matchingPatternIds('4.7.3 Organization queue quota exceeded.')).toEqual([]);
    expect(matchingPatternIds('5.4.5 Daily sending quota exceeded.')).toEqual([]);
    expect(matchingPatternIds('Error: too many recipients from 1.2.3.4')).toEqual([]);
    expect(matchingPatternIds('Addressee unknown, relay=[192.0.2.1]')).toEqual(['user.unknown']);
    expect(matchingPatternIds('Recipient address rejected: Access denied')).toEqual([]);
    expect(matchingPatternIds('Envelope blocked - User Entry')).toEqual(['snd.envelope-blocked']);
    expect(matchingPatternIds('Insufficient system storage')).toEqual([]);
  });
});

describe('malformed input', () => {
  it('gives SmtpDialogError for codes that are not reply codes', () => {
    for (const code of [0, -550, 99, 199, 550.5, 560, 577, 600, 999, 1550, Number.NaN, Infinity, -Infinity, 2.5e2 + 0.1]) {
      expect(explainSmtpReply('rcpt', { code, text: '5.1.1 User unknown' }), String(code)).toMatchObject({
        status: 'SmtpDialogError',
        rule: 'malformed',
      });
    }
  });

  it('never throws for odd replies', () => {
    const odd: unknown[] = [
      null,
      undefined,
      {},
      [],
      42,
      'string',
      { code: '550', text: 'User unknown' },
      { code: 550n, text: 'x' },
      { code: 550, text: 123 },
      { code: 550, text: null },
      { code: 550 },
      Object.create(null),
      new Proxy({}, { get: () => { throw new Error('boom'); } }),
      { get code(): number { throw new Error('boom'); }, text: '' },
    ];
    for (const reply of odd) {
      for (const phase of SMTP_REPLY_PHASES) {
        const status = classifySmtpReply(phase, reply as { code: number; text: string });
        expect(status === null || STATUS_CODES.includes(status)).toBe(true);
      }
    }
    expect(classifySmtpReply('rcpt', { code: 550, text: 123 as unknown as string })).toBe('MailboxDoesNotExist');
    expect(classifySmtpReply('rcpt', { code: 550, text: '' })).toBe('MailboxDoesNotExist');
    expect(classifySmtpReply('rcpt', null as unknown as { code: number; text: string })).toBe('SmtpDialogError');
  });

  it('handles huge text quickly, reading wording in the first MAX_REPLY_TEXT characters', () => {
    const started = performance.now();
    const huge = `5.1.1 ${'x'.repeat(5_000_000)} User unknown`;
    expect(classifySmtpReply('rcpt', { code: 550, text: huge })).toBe('MailboxDoesNotExist');
    const late = `5.7.1 ${'x'.repeat(MAX_REPLY_TEXT)} No such user`;
    expect(explainSmtpReply('rcpt', { code: 550, text: late }).rule).toBe('bare-5.7');
    const early = `5.7.1 No such user ${'x'.repeat(MAX_REPLY_TEXT)}`;
    expect(explainSmtpReply('rcpt', { code: 550, text: early }).rule).toBe('wording');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('throws a TypeError naming an unknown phase', () => {
    for (const phase of ['data', 'RCPT', '', 'starttls', 'connect']) {
      expect(() => classifySmtpReply(phase as SmtpReplyPhase, { code: 250, text: '' })).toThrow(TypeError);
      expect(() => classifySmtpReply(phase as SmtpReplyPhase, { code: 250, text: '' })).toThrow(JSON.stringify(phase));
    }
    const odd: unknown[] = [undefined, null, 3, Symbol('rcpt'), {}, Object.create(null), 10n];
    for (const phase of odd) {
      expect(() => classifySmtpReply(phase as SmtpReplyPhase, { code: 250, text: '' })).toThrow(/unknown SMTP reply phase/);
    }
  });
});

describe('properties (fast-check)', () => {
  const RUNS = { numRuns: 4000 };
  const phase = fc.constantFrom(...SMTP_REPLY_PHASES);
  const validCode = fc
    .tuple(fc.integer({ min: 2, max: 5 }), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 9 }))
    .map(([a, b, c]) => a * 100 + b * 10 + c);
  const anyCode = fc.oneof(
    validCode,
    fc.integer(),
    fc.integer({ min: 0, max: 1000 }),
    fc.double(),
    fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 421, 450, 550, 577),
  );
  // Pieces of real replies, so that generated texts also hit the patterns and the enhanced codes.
  const fragments = [
    ...new Set(REPLY_CASES.flatMap((c) => c.text.split(/(?<=[ :;,.\n])/)).slice(0, 800)),
    '4.2.2 ', '5.2.2 ', '4.5.3 ', '5.5.3 ', '5.6.7 ', '5.7.1 ', '5.7.25 ', '5.7.606 ', '5.5.1 ', '4.3.1 ', '4.4.4 ',
    '\n', '\r\n', '\u0000', '\ud800', 'é', '用',
  ];
  const piecewise = fc.array(fc.constantFrom(...fragments), { maxLength: 12 }).map((p) => p.join(''));
  const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ maxLength: 200 }), piecewise);

  const CLOSED_4XX: ReadonlySet<StatusCode | null> = new Set([
    'MailboxTemporarilyUnavailable',
    'ServerTemporaryUnavailable',
    'MailboxHasInsufficientStorage',
    'ServerDoesNotAllowMultipleRecipients',
  ]);
  const POSITIVE: Record<SmtpReplyPhase, readonly number[]> = { greeting: [220], ehlo: [250], mail: [250], rcpt: [250, 251, 252] };

  it('never throws and always returns a catalogue status or null', () => {
    fc.assert(
      fc.property(phase, anyCode, anyText, (p, code, text) => {
        const status = classifySmtpReply(p, { code, text });
        return status === null || STATUS_CODES.includes(status);
      }),
      RUNS,
    );
  });

  it('never gives a 4xx reply a status outside the closed 4xx set', () => {
    fc.assert(
      fc.property(phase, fc.integer({ min: 400, max: 459 }), anyText, (p, code, text) => {
        expect(CLOSED_4XX.has(classifySmtpReply(p, { code, text }))).toBe(true);
      }),
      RUNS,
    );
  });

  it('returns null only for the positive codes of the phase, and always for them', () => {
    fc.assert(
      fc.property(phase, anyCode, anyText, (p, code, text) => {
        const isPositive = POSITIVE[p].includes(code);
        expect(classifySmtpReply(p, { code, text }) === null).toBe(isPositive);
      }),
      RUNS,
    );
  });

  it('gives 5xx replies a 5xx-side status (never a 4xx-only one)', () => {
    const FOUR_ONLY: ReadonlySet<StatusCode | null> = new Set(['MailboxTemporarilyUnavailable', 'ServerTemporaryUnavailable', null]);
    fc.assert(
      fc.property(phase, fc.integer({ min: 500, max: 559 }), anyText, (p, code, text) => {
        expect(FOUR_ONLY.has(classifySmtpReply(p, { code, text }))).toBe(false);
      }),
      RUNS,
    );
  });

  it('depends on the text only through its case-insensitive content', () => {
    fc.assert(
      fc.property(phase, validCode, piecewise, (p, code, text) => {
        const lower = text.toLowerCase();
        // Lower-casing an enhanced code changes nothing; lower-casing the words must not change the status either.
        expect(classifySmtpReply(p, { code, text: text.toUpperCase() })).toBe(classifySmtpReply(p, { code, text: lower }));
      }),
      { numRuns: 1000 },
    );
  });
});
