// The fast path of classifySmtpReply (commonReplyStatus: code and enhanced code, no wording patterns) against the full
// rules (explainSmtpReply): the same status whenever the fast path decides, on every real reply and on generated ones.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SMTP_REPLY_PHASES, classifySmtpReply, commonReplyStatus, explainSmtpReply } from '../../packages/mailverify/src/smtp/classify.js';
import { REPLY_PATTERNS } from '../../packages/mailverify/src/smtp/reply-patterns.js';
import { REPLY_CASES } from './reply-cases.js';

const fullStatus = (phase: (typeof SMTP_REPLY_PHASES)[number], code: number, text: string) =>
  explainSmtpReply(phase, { code, text }).status;

describe('the fast path decides the common replies', () => {
  it.each([
    ['rcpt', 250, '2.1.5 Ok', null],
    ['rcpt', 550, '5.1.1 <nobody@example.com>: Recipient address rejected: User unknown in local recipient table', 'MailboxDoesNotExist'],
    ['rcpt', 550, "5.1.1 The email account that you tried to reach does not exist. Please try\n5.1.1 double-checking the recipient's email address for typos or\n5.1.1 unnecessary spaces. Learn more at\n5.1.1  https://support.google.com/mail/?p=NoSuchUser", 'MailboxDoesNotExist'],
    ['rcpt', 550, '5.5.0 Requested action not taken: mailbox unavailable', 'MailboxDoesNotExist'],
    ['rcpt', 450, '4.7.1 <someone@example.com>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.com.html', 'MailboxTemporarilyUnavailable'],
    ['greeting', 220, 'mx.example.com ESMTP', null],
    ['mail', 250, '2.1.0 Ok', null],
  ] as const)('%s %s %s', (phase, code, text, status) => {
    expect(commonReplyStatus(phase, code, text)).toBe(status);
    expect(fullStatus(phase, code, text)).toBe(status);
  });

  it('and leaves the others to the full rules: wording that changes the status, code rules, other phases', () => {
    expect(commonReplyStatus('rcpt', 550, '5.1.1 Service unavailable; client host [192.0.2.1] blocked using zen.spamhaus.org')).toBeUndefined();
    expect(commonReplyStatus('rcpt', 552, '5.2.2 Mailbox full')).toBeUndefined();
    expect(commonReplyStatus('rcpt', 452, '4.2.02 over quota')).toBeUndefined();
    expect(commonReplyStatus('rcpt', 452, '4.5.3 Error: too many recipients')).toBeUndefined();
    expect(commonReplyStatus('rcpt', 550, '5.7.1 No such user')).toBeUndefined();
    expect(commonReplyStatus('mail', 550, '5.1.1 User unknown')).toBeUndefined();
    expect(commonReplyStatus('rcpt', 421, '4.7.0 Try again later')).toBeUndefined();
  });
});

describe('the fast path agrees with the full rules', () => {
  it('on every real reply of reply-cases.ts', () => {
    let decided = 0;
    for (const c of REPLY_CASES) {
      const quick = commonReplyStatus(c.phase, c.code, c.text);
      if (quick === undefined) continue;
      decided++;
      expect(quick, `${c.phase} ${c.code} ${c.text}`).toBe(fullStatus(c.phase, c.code, c.text));
      expect(quick).toBe(c.expected);
    }
    expect(decided).toBeGreaterThan(10);
  });

  const words = [...new Set(REPLY_PATTERNS.flatMap((p) => p.words))];
  /** A row's pattern without \b and look-arounds, case-sensitive: what fast-check can generate texts from. */
  const relaxed = (row: (typeof REPLY_PATTERNS)[number]): RegExp =>
    new RegExp(row.pattern.source.replaceAll('\\b', '').replace(/\(\?<?[!=][^)]*\)/g, ''), row.pattern.flags.replace('i', ''));
  const fragments = REPLY_CASES.flatMap((c) => c.text.split(/(?<=[ \n:;,.])/)).filter((f) => f.length > 0);
  const flipCase = (text: string, seed: number): string =>
    [...text].map((ch, i) => ((seed >> i % 31) & 1 ? ch.toUpperCase() : ch.toLowerCase())).join('');
  const piece = fc.oneof(
    fc.constantFrom(...words),
    fc.constantFrom(...REPLY_PATTERNS).chain((row) => fc.stringMatching(relaxed(row), { maxLength: 30 })),
    fc.constantFrom(...fragments),
    fc.constantFrom('<nobody@example.com>:', 'Recipient address rejected:', 'User unknown', ' ip', 'İP', 'sending ip', 'quota', 'queue quota exceeded', 'too many recipients from'),
    fc.string({ maxLength: 12 }),
  );
  const enhanced = fc.oneof(
    fc.constantFrom('', '5.1.1 ', '5.1.0 ', '5.5.0 ', '5.5.1 ', '5.7.1 ', '5.2.2 ', '5.1.7 ', '5.6.7 ', '5.7.25 ', '5.7.606 ', '4.7.1 ', '4.2.2 ', '4.2.02 ', '4.5.3 ', '4.3.0 ', '4.4.1 ', '4.1.1 ', '4.10.1 '),
    fc.tuple(fc.constantFrom(2, 4, 5), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 999 })).map(([c, s, d]) => `${c}.${s}.${d} `),
  );
  const reply = fc.record({
    // Mostly RCPT 4xx and 5xx, where the fast path reads negative replies.
    phase: fc.oneof({ arbitrary: fc.constant('rcpt' as const), weight: 3 }, fc.constantFrom(...SMTP_REPLY_PHASES)),
    code: fc.oneof(
      { arbitrary: fc.constantFrom(450, 451, 452, 550, 551, 552, 553, 554), weight: 4 },
      fc.constantFrom(220, 250, 251, 252, 421, 500, 503),
      fc.integer({ min: 0, max: 600 }),
    ),
    text: fc
      .tuple(enhanced, fc.array(piece, { maxLength: 8 }), fc.constantFrom(' ', '\n', '\n5.1.1 '), fc.integer())
      .map(([code, pieces, separator, seed]) => flipCase(code + pieces.join(separator), seed)),
  });

  it('on generated replies', () => {
    fc.assert(
      fc.property(reply, ({ phase, code, text }) => {
        const quick = commonReplyStatus(phase, code, text);
        if (quick !== undefined) expect(quick).toBe(fullStatus(phase, code, text));
        expect(classifySmtpReply(phase, { code, text })).toBe(fullStatus(phase, code, text));
      }),
      { numRuns: 5000 },
    );
  });

  // Each row's words must be in every text its pattern matches: texts from the pattern with \b and look-arounds
  // dropped (fast-check cannot generate those), in any case, kept when the real pattern matches them.
  it.each(REPLY_PATTERNS.map((p) => [p.id, p] as const))('every text that %s matches holds one of its words', (_, row) => {
    fc.assert(
      fc.property(fc.stringMatching(relaxed(row)), fc.integer(), (text, seed) => {
        const cased = flipCase(text, seed);
        fc.pre(row.pattern.test(cased));
        expect(row.words.some((word) => cased.toLowerCase().includes(word))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
