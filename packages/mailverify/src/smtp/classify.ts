/**
 * `classifySmtpReply`: the status a negative SMTP reply stands for, or null for a positive one.
 *
 * The decision is an ordered list of rules, numbered as in docs/verification.md#reading-smtp-replies; the wording the
 * rules look for is data, in reply-patterns.ts. Code and enhanced code decide first, text second.
 * `explainSmtpReply` returns the same status with the rule, the pattern and the enhanced code behind it.
 */

import type { StatusCode } from '../status/catalogue.js';
import { enhancedCodeOf, isReplyCode } from './reply.js';
import { PATTERN_KIND_ORDER, firstMatchOfKind, wordScreenOfKinds, type ReplyPatternKind } from './reply-patterns.js';

/** The command a reply answers. Named so as not to clash with transport.ts's `SmtpPhase`. */
export type SmtpReplyPhase = 'greeting' | 'ehlo' | 'mail' | 'rcpt';

export const SMTP_REPLY_PHASES: readonly SmtpReplyPhase[] = Object.freeze(['greeting', 'ehlo', 'mail', 'rcpt']);

/** Which rule decided; one name per step of `explain` below. */
export type SmtpReplyRule =
  | 'malformed'
  | 'positive'
  | 'unexpected-positive'
  | 'closing-421'
  | 'enhanced-5.6.7'
  | 'enhanced-x.2.2'
  | 'enhanced-x.5.3'
  | 'enhanced-sender'
  | 'enhanced-5.7.25'
  | 'enhanced-5.7.606-649'
  | 'transient-outside-rcpt'
  | 'transient-4.3-4.4'
  | 'transient-wording'
  | 'transient-default'
  | 'protocol-error'
  | 'wording'
  | 'bare-5.7'
  | 'greeting-default'
  | 'ehlo-default'
  | 'mail-5.5'
  | 'mail-default'
  | 'rcpt-user-unknown-code'
  | 'rcpt-default';

export interface SmtpReplyExplanation {
  readonly status: StatusCode | null;
  readonly rule: SmtpReplyRule;
  /** For the wording rules: the kind and the row of reply-patterns.ts that decided. */
  readonly kind: ReplyPatternKind | null;
  readonly patternId: string | null;
  /** The enhanced code read from the text (RFC 3463), or null. */
  readonly enhancedCode: string | null;
}

/**
 * Wording is looked for in this much of the text at most. RFC 5321 §4.5.3.1.5 caps a reply line at 512 octets, so real
 * replies are far shorter; the cap keeps a hostile or broken server from making classification slow.
 */
export const MAX_REPLY_TEXT = 64 * 1024;

/** Positive completion per phase: greeting 220, EHLO/HELO 250, MAIL 250, RCPT 250/251/252. */
const POSITIVE: Readonly<Record<SmtpReplyPhase, readonly number[]>> = {
  greeting: [220],
  ehlo: [250],
  mail: [250],
  rcpt: [250, 251, 252],
};

/** Wording kinds that apply per phase: quota, too many recipients and user unknown at RCPT only; SMTPUTF8 and sender
 * at MAIL or RCPT; reputation everywhere. */
const KINDS_BY_PHASE: Readonly<Record<SmtpReplyPhase, ReadonlySet<ReplyPatternKind>>> = {
  greeting: new Set(['reputation']),
  ehlo: new Set(['reputation']),
  mail: new Set(['reputation', 'smtputf8', 'sender']),
  rcpt: new Set(PATTERN_KIND_ORDER),
};

/** Status of each wording kind on a 5xx reply. */
const PERMANENT_BY_KIND: Readonly<Record<ReplyPatternKind, StatusCode>> = {
  reputation: 'LocalEndPointRejected',
  smtputf8: 'ServerDoesNotSupportInternationalMailboxes',
  sender: 'LocalSenderAddressRejected',
  quota: 'MailboxHasInsufficientStorage',
  tooManyRecipients: 'ServerDoesNotAllowMultipleRecipients',
  userUnknown: 'MailboxDoesNotExist',
};

/** Status of each wording kind on a 4xx reply at RCPT: a status a 4xx may give, never a permanent one. */
const TRANSIENT_BY_KIND: Readonly<Record<ReplyPatternKind, StatusCode>> = {
  reputation: 'MailboxTemporarilyUnavailable',
  smtputf8: 'MailboxTemporarilyUnavailable',
  sender: 'MailboxTemporarilyUnavailable',
  quota: 'MailboxHasInsufficientStorage',
  tooManyRecipients: 'ServerDoesNotAllowMultipleRecipients',
  userUnknown: 'MailboxTemporarilyUnavailable',
};

/** 5.1.7 (bad sender syntax), 5.1.8 (bad sender domain), 5.7.23 (SPF), 5.7.24 (SPF error), 5.7.26 (DMARC, multiple
 * authentication checks), 5.7.27 (sender domain has a null MX, RFC 7505): LocalSenderAddressRejected. */
const SENDER_CODES: ReadonlySet<string> = new Set(['5.1.7', '5.1.8', '5.7.23', '5.7.24', '5.7.26', '5.7.27']);

/** Generic "no such user" codes. They lose to wording; at RCPT they name the default rule, nothing more. */
const USER_UNKNOWN_CODES: ReadonlySet<string> = new Set([
  '5.0.0',
  '5.1.0',
  '5.1.1',
  '5.1.3',
  '5.1.6',
  '5.2.1',
  '5.4.1',
  '5.5.0',
]);

/** Words of the wording kinds that give a RCPT 5xx another status than MailboxDoesNotExist (all but user unknown). */
const RCPT_PERMANENT_SCREEN = wordScreenOfKinds(PATTERN_KIND_ORDER.filter((kind) => PERMANENT_BY_KIND[kind] !== 'MailboxDoesNotExist'));
/** Words of the wording kinds that give a RCPT 4xx another status than MailboxTemporarilyUnavailable (quota, too many). */
const RCPT_TRANSIENT_SCREEN = wordScreenOfKinds(
  PATTERN_KIND_ORDER.filter((kind) => TRANSIENT_BY_KIND[kind] !== 'MailboxTemporarilyUnavailable'),
);

/** Why: the classification of one reply, with the rule that decided it. */
export function explainSmtpReply(phase: SmtpReplyPhase, reply: { code: number; text: string }): SmtpReplyExplanation {
  assertPhase(phase);
  const { code, text } = readReply(reply);
  return explain(phase, code, text);
}

/**
 * The status a reply to `phase` stands for, or null when the reply is the positive answer. Never throws for any reply;
 * throws a TypeError for an unknown phase (a programming error).
 */
export function classifySmtpReply(phase: SmtpReplyPhase, reply: { code: number; text: string }): StatusCode | null {
  assertPhase(phase);
  const { code, text } = readReply(reply);
  const quick = commonReplyStatus(phase, code, text);
  return quick !== undefined ? quick : explain(phase, code, text).status;
}

/**
 * The status of the commonest replies, read from the code and the enhanced code without the walk through the wording
 * patterns (one scan for their words instead), or undefined where the rules of `explain` must decide. A positive reply; at RCPT, a 5xx with no enhanced
 * code or a generic "no such user" one (550 5.1.1...), and a 4xx whose enhanced code no code rule claims (450 4.7.1
 * greylisting...), when the text holds none of the words of the wording kinds that would give another status
 * (user-unknown wording gives the same). Exactly the status `explain` gives: test/smtp/classify-fast.test.ts checks it
 * on every real reply and on generated ones.
 */
export function commonReplyStatus(phase: SmtpReplyPhase, code: number, text: string): StatusCode | null | undefined {
  if (!isReplyCode(code)) return undefined;
  if (POSITIVE[phase].includes(code)) return null;
  if (phase !== 'rcpt' || code < 400 || code === 421 || code === 500 || code === 502 || code === 503) return undefined;
  if (text.length > MAX_REPLY_TEXT) return undefined;
  const enhanced = enhancedCodeOf(code, text);
  if (code < 500) {
    if (enhanced !== null && !isPlainTransientCode(enhanced)) return undefined;
    return RCPT_TRANSIENT_SCREEN.test(text) ? undefined : 'MailboxTemporarilyUnavailable';
  }
  if (enhanced !== null && !USER_UNKNOWN_CODES.has(enhanced)) return undefined;
  return RCPT_PERMANENT_SCREEN.test(text) ? undefined : 'MailboxDoesNotExist';
}

/** A 4.x.x code that none of the code rules of a RCPT 4xx claims: not 4.2.2 (quota), 4.5.3 (too many), 4.3.x, 4.4.x. */
function isPlainTransientCode(enhanced: string): boolean {
  const subject = enhanced.charCodeAt(2) - 48; // "4.s.d": the subject is one digit when a dot follows it
  if (enhanced.charCodeAt(3) !== 46) return false;
  if (subject === 3 || subject === 4) return false;
  const detail = Number(enhanced.slice(4)); // as `explain` reads it: 4.2.02 is 4.2.2
  return !((subject === 2 && detail === 2) || (subject === 5 && detail === 3));
}


function explain(phase: SmtpReplyPhase, code: number, rawText: string): SmtpReplyExplanation {
  const result = (
    status: StatusCode | null,
    rule: SmtpReplyRule,
    enhancedCode: string | null = null,
    kind: ReplyPatternKind | null = null,
    patternId: string | null = null,
  ): SmtpReplyExplanation => ({ status, rule, kind, patternId, enhancedCode });

  // 1. A code that is not a valid reply code, or a reply that cannot be parsed → SmtpDialogError.
  // RFC 5321 §4.2 (isReplyCode, the rule reply.ts parses with; parse failures arrive as code 0).
  if (!isReplyCode(code)) return result('SmtpDialogError', 'malformed');
  // 2. Positive only for greeting 220, EHLO/HELO 250, MAIL 250, RCPT 250/251/252; any other 2xx/3xx is a dialog error.
  if (POSITIVE[phase].includes(code)) return result(null, 'positive');
  if (code < 400) return result('SmtpDialogError', 'unexpected-positive');
  // 3. 421 is always ServerTemporaryUnavailable, whatever its text (RFC 5321 §3.8: the server is closing the channel);
  // so before the enhanced codes too: 421 4.2.2 or 421 4.5.3 is still the server going away.
  if (code === 421) return result('ServerTemporaryUnavailable', 'closing-421');

  const text = rawText.length > MAX_REPLY_TEXT ? rawText.slice(0, MAX_REPLY_TEXT) : rawText;
  // 4. The first class.subject.detail at the start of the text or of a line; another class than the code's is ignored
  // (RFC 3463 §2, RFC 2034 §3). enhancedCodeOf implements exactly that.
  const enhanced = enhancedCodeOf(code, text);
  const [, subject, detail] = enhanced === null ? [] : enhanced.split('.').map(Number);
  const atMailOrRcpt = phase === 'mail' || phase === 'rcpt';

  // Specific enhanced codes decide before any wording.
  if (enhanced !== null) {
    // RFC 6531 X.6.7 (IANA registration): non-ASCII address refused; a MAIL or RCPT answer.
    if (enhanced === '5.6.7' && atMailOrRcpt) {
      return result('ServerDoesNotSupportInternationalMailboxes', 'enhanced-5.6.7', enhanced);
    }
    // RFC 3463 X.2.2 mailbox full; a quota rule, so RCPT only, as the quota wording.
    if (subject === 2 && detail === 2 && phase === 'rcpt') {
      return result('MailboxHasInsufficientStorage', 'enhanced-x.2.2', enhanced);
    }
    // RFC 3463 X.5.3 too many recipients (RFC 5321 §4.5.3.1.10); at RCPT only.
    if (subject === 5 && detail === 3 && phase === 'rcpt') {
      return result('ServerDoesNotAllowMultipleRecipients', 'enhanced-x.5.3', enhanced);
    }
    if (SENDER_CODES.has(enhanced) && atMailOrRcpt) {
      return result('LocalSenderAddressRejected', 'enhanced-sender', enhanced);
    }
    // RFC 7372 5.7.25: the client's IP has no valid PTR; any phase.
    if (enhanced === '5.7.25') return result('LocalEndPointRejected', 'enhanced-5.7.25', enhanced);
    // Exchange Online 5.7.606-649 "Access denied, banned sending IP"; any phase.
    if (enhanced.startsWith('5.7.') && detail !== undefined && detail >= 606 && detail <= 649) {
      return result('LocalEndPointRejected', 'enhanced-5.7.606-649', enhanced);
    }
  }

  if (code < 500) {
    // 5. Any other 4xx outside RCPT is ServerTemporaryUnavailable.
    if (phase !== 'rcpt') return result('ServerTemporaryUnavailable', 'transient-outside-rcpt', enhanced);
    // Any 4.3.x or 4.4.x at RCPT → ServerTemporaryUnavailable (system / network trouble, RFC 3463 §3.4-3.5);
    // a code, so it comes before wording (codes decide first, text second). Covers 452 4.3.1.
    if (subject === 3 || subject === 4) return result('ServerTemporaryUnavailable', 'transient-4.3-4.4', enhanced);
    // A 4xx at RCPT never gives a permanent status: reputation or sender wording → MailboxTemporarilyUnavailable, quota
    // wording → MailboxHasInsufficientStorage, too-many-recipients wording → ServerDoesNotAllowMultipleRecipients.
    const match = firstWording(phase, text);
    if (match !== null) {
      return result(TRANSIENT_BY_KIND[match.kind], 'transient-wording', enhanced, match.kind, match.id);
    }
    // Greylisting, 4.2.1 rate, other 4xx on RCPT → MailboxTemporarilyUnavailable.
    return result('MailboxTemporarilyUnavailable', 'transient-default', enhanced);
  }

  // 6. 500, 502, 503 and 5.5.1 → SmtpDialogError: the command was not understood or came out of sequence (RFC 5321
  // §4.2.2), so the text says nothing of us or of the mailbox. A code rule, so before wording.
  if (code === 500 || code === 502 || code === 503 || enhanced === '5.5.1') {
    return result('SmtpDialogError', 'protocol-error', enhanced);
  }
  // 7. Wording order: reputation → SMTPUTF8 → sender → quota → too many recipients → user unknown, each kind only in
  // the phases where it applies. Generic user-unknown codes (5.1.1 ...) lose to wording: they are only read below.
  const match = firstWording(phase, text);
  if (match !== null) return result(PERMANENT_BY_KIND[match.kind], 'wording', enhanced, match.kind, match.id);
  // 8. A bare 5.7.x with no recognised wording → LocalEndPointRejected (RFC 3463 X.7: security or policy status).
  // In every phase, so before the phase defaults below (MAIL's included).
  if (subject === 7) return result('LocalEndPointRejected', 'bare-5.7', enhanced);

  switch (phase) {
    case 'greeting':
      // 9. Greeting 5xx → LocalEndPointRejected (RFC 5321 §3.1: 554 instead of 220 = no service for this client).
      return result('LocalEndPointRejected', 'greeting-default', enhanced);
    case 'ehlo':
      // Other EHLO 5xx → SmtpDialogError; the engine then tries HELO (RFC 5321 §4.1.4).
      return result('SmtpDialogError', 'ehlo-default', enhanced);
    case 'mail':
      // MAIL 5xx → LocalSenderAddressRejected, unless reputation wording (above) or a 5.5.x says otherwise: a 5.5.x
      // (RFC 3463 §3.6, protocol status) means our command, not our sender, was refused.
      if (subject === 5) return result('SmtpDialogError', 'mail-5.5', enhanced);
      return result('LocalSenderAddressRejected', 'mail-default', enhanced);
    case 'rcpt':
      // At RCPT, a 5xx no more specific rule claims → MailboxDoesNotExist (550 5.5.0 "mailbox unavailable",
      // 554 "This user doesn't have an account", Exchange Online 550 5.4.1 "Recipient address rejected: Access denied").
      if (enhanced !== null && USER_UNKNOWN_CODES.has(enhanced)) {
        return result('MailboxDoesNotExist', 'rcpt-user-unknown-code', enhanced);
      }
      return result('MailboxDoesNotExist', 'rcpt-default', enhanced);
  }
}

function firstWording(phase: SmtpReplyPhase, text: string): { kind: ReplyPatternKind; id: string } | null {
  if (text === '') return null;
  const kinds = KINDS_BY_PHASE[phase];
  for (const kind of PATTERN_KIND_ORDER) {
    if (!kinds.has(kind)) continue;
    const found = firstMatchOfKind(kind, text);
    if (found !== null) return { kind, id: found.id };
  }
  return null;
}

/** The code and text of whatever was passed; never throws (a getter that throws, a non-object, a non-string text). */
function readReply(reply: unknown): { code: number; text: string } {
  try {
    if (typeof reply !== 'object' || reply === null) return { code: 0, text: '' };
    const { code, text } = reply as { code: unknown; text: unknown };
    return { code: typeof code === 'number' ? code : 0, text: typeof text === 'string' ? text : '' };
  } catch {
    return { code: 0, text: '' };
  }
}

function assertPhase(phase: unknown): asserts phase is SmtpReplyPhase {
  if (typeof phase === 'string' && (SMTP_REPLY_PHASES as readonly string[]).includes(phase)) return;
  throw new TypeError(
    `mailverify: classifySmtpReply: unknown SMTP reply phase ${describe(phase)}; expected one of ${SMTP_REPLY_PHASES.join(', ')}`,
  );
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    return `a value of type ${typeof value}`;
  }
}
