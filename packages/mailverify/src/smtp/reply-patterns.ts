/**
 * The wording of negative SMTP replies, as data: which phrases say that the server refused *us* (reputation), cannot
 * take a non-ASCII address (SMTPUTF8), refused our *sender*, or says the mailbox is full, that there are too many
 * recipients, or that the mailbox does not exist. `classifySmtpReply` (classify.ts) tries the kinds in the order of
 * PATTERN_KIND_ORDER (docs/verification.md#reading-smtp-replies) and decides on the first kind that has a matching row.
 *
 * Every row names the public text it was taken from; test/smtp/reply-cases.ts holds those texts and a test checks that
 * each row matches at least one of them. Patterns are case-insensitive, compiled once, and linear: literal phrases, small
 * alternations, at most one `\S+` and fixed-length look-arounds, never a nested quantifier. Short keys: "R parser.rs" is
 * reacherhq/check-if-email-exists core/src/smtp/parser.rs, "SFM" is ActiveCampaign/smtp-field-manual data/codes/*.json.
 */

export type ReplyPatternKind = 'reputation' | 'smtputf8' | 'sender' | 'quota' | 'tooManyRecipients' | 'userUnknown';

export interface ReplyPattern {
  /** Stable name, `<kind prefix>.<what>`; classify.ts reports it as the reason of a decision. */
  readonly id: string;
  readonly kind: ReplyPatternKind;
  /** Tested against the reply text (enhanced codes included); always case-insensitive, never global or sticky. */
  readonly pattern: RegExp;
  /**
   * Lower-case words one of which every text the pattern matches holds (a test checks it on generated matches): a
   * text without any of them cannot match, and classify.ts then skips the pattern.
   */
  readonly words: readonly string[];
  /** Where the wording was seen: a URL, a repository path, or an RFC section. */
  readonly source: string;
}

/**
 * Reputation first: a prober refused for its IP or name must never read "no such mailbox". Then SMTPUTF8 → sender →
 * quota → too many recipients → user unknown.
 */
export const PATTERN_KIND_ORDER: readonly ReplyPatternKind[] = Object.freeze([
  'reputation',
  'smtputf8',
  'sender',
  'quota',
  'tooManyRecipients',
  'userUnknown',
]);

const row = (id: string, kind: ReplyPatternKind, pattern: RegExp, words: readonly string[], source: string): ReplyPattern =>
  Object.freeze({ id, kind, pattern, words: Object.freeze([...words]), source });

export const REPLY_PATTERNS: readonly ReplyPattern[] = Object.freeze([
  // --- Reputation: the server refuses our IP address, our HELO name or our lack of PTR; blocklists; relay denied.
  row('rep.spamhaus', 'reputation', /spamhaus/i, ['spamhaus'],
    'Exchange Online 550 5.7.1 "blocked using Spamhaus" (github.com/sendgrid/docs/issues/6275); Yahoo 553 5.7.1 [BL21] (ActiveCampaign/smtp-field-manual PR #64)'),
  row('rep.barracuda', 'reputation', /barracuda reputation|barracudacentral\.org/i, ['barracuda'],
    'Barracuda 554 "blocked using Barracuda Reputation" (getconversio/email-deep-validator PR #20); "black list at b.barracudacentral.org" (R parser.rs)'),
  row('rep.spamcop', 'reputation', /spamcop/i, ['spamcop'],
    'Postfix 554 5.7.1 "blocked using bl.spamcop.net" (github.com/simple-login/app/issues/497)'),
  row('rep.dnsbl', 'reputation', /\bdnsbls?\b/i, ['dnsbl'],
    'Comcast "found on one or more DNSBLs" (R parser.rs)'),
  row('rep.rbl', 'reputation', /\brbl\b/i, ['rbl'],
    'Trend Micro "blocked using Trend Micro RBL+" (zone-eu/zone-mta PR #177); Barracuda "is in an RBL" (R parser.rs)'),
  row('rep.blocklist', 'reputation', /\b(?:block|black) ?list/i, ['blocklist', 'block list', 'blacklist', 'black list'],
    'Outlook.com 550 5.7.1 "on our block list (S3150)" (MicrosoftDocs/OfficeDocs-Support #834); GMX "IP address is block listed" (R parser.rs test)'),
  row('rep.blocked-using', 'reputation', /\bblocked using\b/i, ['blocked using'],
    'Postfix reject_rbl_client "Client host [..] blocked using" (vdukhovni/postfix src/smtpd/smtpd_check.ref)'),
  row('rep.blocked-see', 'reputation', /\bblocked - see\b/i, ['blocked - see'],
    'Proofpoint "Blocked - see https://ipcheck.proofpoint.com/" (R parser.rs); SpamCop "Blocked - see https://www.spamcop.net/bl.shtml"'),
  row('rep.blocked-alone', 'reputation', /^blocked\.?$/im, ['blocked'],
    'Barracuda "550 Blocked" (SFM data/codes/550.json)'),
  row('rep.client-host', 'reputation', /\bclient host\b/i, ['client host'],
    'Postfix "Client host rejected: cannot find your hostname" and "Client host [ip] blocked using" (vdukhovni/postfix src/smtpd/smtpd_check.ref)'),
  row('rep.helo-rejected', 'reputation', /\bhelo command rejected\b/i, ['helo command rejected'],
    'Postfix "Helo command rejected: need fully-qualified hostname" (vdukhovni/postfix src/smtpd/smtpd_check.ref)'),
  row('rep.helo-argument', 'reputation', /\b(?:helo|ehlo) argument/i, ['helo argument', 'ehlo argument'],
    'Exim "501 Syntactically invalid EHLO argument(s)" (Exim/exim src/src/smtp_in.c); Gmail "501 5.5.4 HELO/EHLO argument is invalid" (support.google.com/a/answer/3726730)'),
  row('rep.ptr', 'reputation', /\bptr\b/i, ['ptr'],
    'GMX greeting "554-Bad DNS PTR resource record" (github.com/EDSM-NET/FrontEnd/issues/21); Gmail 5.7.25 "does not have a PTR record"'),
  row('rep.reverse-dns', 'reputation', /\breverse (?:dns|hostname)\b/i, ['reverse dns', 'reverse hostname'],
    'Postfix "cannot find your reverse hostname" (R parser.rs); AT&T "Fix reverse DNS for" (SFM 550.json); "Reverse DNS lookup does not match" (spamgourmet/spamgourmet#58)'),
  row('rep.ip-ref', 'reputation', /\b(?:your|the|this|sending|blocked) ip\b/i, [' ip'],
    'Gmail "The IP you\'re using to send mail is not authorized" (support.google.com/a/answer/3726730); Exchange Online 5.7.708 "traffic not accepted from this IP"'),
  row('rep.ip-noun', 'reputation', /\bip (?:address|reputation|frequency)\b/i, ['ip address', 'ip reputation', 'ip frequency'],
    '"554 IP address 198.51.100.5 rejected [IP reputation fail]" (sisimai/p5-sisimai#469); QQ "550 Ip frequency limited" (sisimai rhost-tencent-01.eml)'),
  row('rep.reputation', 'reputation', /\breputation\b/i, ['reputation'],
    'Mimecast "Poor Reputation Sender" (R parser.rs); Gmail "very low reputation of the sending domain" (SFM 550.json)'),
  row('rep.sbrs', 'reputation', /\bsbrs\b/i, ['sbrs'],
    'Cisco "SBRS score too low" (R parser.rs, on @amazon.com)'),
  row('rep.connections', 'reputation', /\bconnections? (?:rejected|not accepted|will not be accepted)\b/i, ['connection'],
    'Yahoo "Connections will not be accepted from" (SFM PR #64); AT&T "Connections not accepted from servers" (SFM 550.json); Symantec "Connection rejected by policy" (R parser.rs)'),
  row('rep.administratively-denied', 'reputation', /\badministratively denied\b/i, ['administratively denied'],
    'qmail "mail from your location [ip] is administratively denied (#5.7.1)" (R parser.rs)'),
  row('rep.relay-denied', 'reputation', /\brelay(?:ing)? (?:access )?(?:denied|disallowed|not permitted|not allowed)\b/i, ['relay'],
    'Postfix "Relay access denied" (smtpd_check.ref); Exim "relay not permitted" (postalserver/postal#647); Zoho "Relaying disallowed" (SFM 553.json)'),
  row('rep.relay-other', 'reputation', /\bunable to relay\b|\bas a relay\b|\bnot permitted to relay\b/i, ['relay'],
    'Symantec "you are trying to use me [..] as a relay" (SFM 553.json); Exchange "Unable to relay" (sisimai rhost/exchangeonline.rb)'),

  // --- SMTPUTF8 (RFC 6531): a non-ASCII mailbox that the server will not take.
  row('utf8.smtputf8', 'smtputf8', /\bsmtputf8\b/i, ['smtputf8'],
    'Postfix smtpd "553 5.6.7 Must declare SMTPUTF8 to send unicode address" (MailRoute\'s list of Postfix replies)'),
  row('utf8.non-ascii', 'smtputf8', /\bnon-ascii address/i, ['non-ascii address'],
    'RFC 6531, IANA registration of X.6.7 (sample text "Non-ASCII addresses not permitted for that sender/recipient")'),

  // --- Sender: our MAIL FROM address or domain is refused (SPF, DMARC, spoofing, sender verification).
  row('snd.sender-rejected', 'sender', /\bsender (?:address )?(?:rejected|denied|refused)\b/i, ['sender'],
    'Postfix "Sender address rejected" (smtpd_check.ref, smtpd_nullmx.ref); Exchange "5.1.0 Sender denied" (sisimai rhost/exchangeonline.rb)'),
  row('snd.sender-verify', 'sender', /\bsender verif(?:y|ication) failed\b/i, ['sender verif'],
    'Exim "550-Verification failed for <x> 550-Unrouteable address 550 Sender verify failed" (PHPMailer/PHPMailer#1187)'),
  row('snd.valid-sender', 'sender', /\bvalid sender\b/i, ['valid sender'],
    'Exim "does not recognize x as a valid sender" (docker-mailserver/docker-mailserver#2257)'),
  row('snd.domain-of-sender', 'sender', /\bdomain of sender\b/i, ['domain of sender'],
    'Sendmail "Domain of sender address x does not resolve/exist" (sendmail cf/m4/proto.m4)'),
  row('snd.spf', 'sender', /\bspf\b/i, ['spf'],
    'Gmail 5.7.24 "The SPF record of the sending domain" (support.google.com/a/answer/3726730); QQ "SPF check failed" (sisimai rhost/tencent.rb)'),
  row('snd.dmarc', 'sender', /\bdmarc\b/i, ['dmarc'],
    'Gmail "not accepted due to domain\'s DMARC policy" (SFM 550.json); QQ "550 DMARC check failed." (sisimai rhost-tencent-03.eml)'),
  row('snd.spoof', 'sender', /spoof/i, ['spoof'],
    'Mimecast "Rejected by header based Anti-Spoofing policy"; Barracuda "rejecting spoofed message" (SFM 550.json)'),
  row('snd.envelope-blocked', 'sender', /\benvelope blocked\b/i, ['envelope blocked'],
    'Mimecast "Administrative prohibition - envelope blocked" and "Envelope blocked - User Entry" (SFM 550.json; community.mimecast.com DOC-1369)'),
  row('snd.blocked-senders', 'sender', /\bblocked senders?\b/i, ['blocked sender'],
    'Mimecast "Rejected by header based manually Blocked Senders" (SFM 550.json)'),

  // --- Quota: the mailbox is full (RFC 3463 X.2.2). Not "queue quota" or "sending quota": those are not the mailbox's.
  row('quota.over-quota', 'quota', /\bover ?quota\b/i, ['quota'],
    'Gmail "is over quota" (SFM 552.json); iCloud "user is overquota"; Orange "Recipient overquota" (SFM 552.json)'),
  row('quota.quota-exceeded', 'quota', /(?<!sending |queue )\bquota exceeded\b/i, ['quota exceeded'],
    'Free/Dovecot "Quota exceeded (mailbox for user is full)" (SFM 554.json); Free "user quota exceeded" (SFM 552.json)'),
  row('quota.quota-violation', 'quota', /\bquota violation\b/i, ['quota violation'],
    'Comcast "recipient rejected - extended quota violation" (SFM 552.json)'),
  row('quota.out-of-storage', 'quota', /\bout of storage\b/i, ['out of storage'],
    'Gmail "452-4.2.2 The recipient\'s inbox is out of storage space" (support.google.com/a/answer/3726730)'),
  row('quota.storage-allocation', 'quota', /\bexceeded storage allocation\b/i, ['exceeded storage allocation'],
    'GMX "552 Requested mail action aborted: exceeded storage allocation" (SFM 552.json; RFC 5321 §4.2.3 552 text)'),
  row('quota.size-limit', 'quota', /\bmailbox size limit exceeded\b/i, ['mailbox size limit exceeded'],
    'Yandex "552 5.2.2 Mailbox size limit exceeded" (SFM 552.json)'),

  // --- Too many recipients (RFC 5321 §4.5.3.1.10, X.5.3). Not Postfix's per-client rate "too many recipients from ...".
  row('rcpts.too-many', 'tooManyRecipients', /\btoo many recipients\b(?! from)/i, ['too many recipients'],
    'Postfix smtpd "452 4.5.3 Error: too many recipients" (MailRoute\'s list of Postfix replies); "452 #4.5.3 Too many recipients." (jakartaee/mail-api#20)'),

  // --- User unknown: the mailbox does not exist or is disabled. Only decides a 5.7.x reply at RCPT (classify.ts).
  row('user.unknown', 'userUnknown', /\b(?:user|recipient|addressee) unknown\b|\bunknown (?:user|recipient)\b/i, ['unknown'],
    'Postfix "User unknown in local recipient table" (smtpd_check.ref); AT&T "Addressee unknown" (SFM 550.json); "554 Unknown Recipient (#5.1.1)" (R parser.rs)'),
  row('user.no-such', 'userUnknown', /\bno such (?:user|mailbox|recipient|person)\b|\bno mailbox here\b/i, ['no such', 'no mailbox here'],
    'Yandex "550 5.7.1 No such user!" (SFM 550.json); Strato "550 5.1.2 No such mailbox" (YunoHost/issues#2684)'),
  row('user.does-not-exist', 'userUnknown', /\b(?:does not|doesn't|dosn't) exist\b|\bis not exist\b/i, ['exist'],
    'Gmail "The email account that you tried to reach does not exist" (SFM 550.json); "RCPT (x) dosn\'t exist" (R parser.rs)'),
  row('user.not-found', 'userUnknown', /\b(?:recipient|mailbox|user) not found\b|\brecip(?:ient)?notfound\b/i, ['not found', 'notfound'],
    'Tutanota "550 5.7.1 : Recipient address rejected: Recipient not found" (tutao/tutanota#7713); Exchange "RESOLVER.ADR.RecipientNotFound" (gregkh/usbutils#145)'),
  row('user.mailbox-unavailable', 'userUnknown', /\bmailbox (?:is )?unavailable\b/i, ['unavailable'],
    'Outlook.com "550 5.5.0 Requested action not taken: mailbox unavailable" (SFM 550.json); RFC 5321 §4.2.3 550 text'),
  row('user.invalid', 'userUnknown', /\binvalid[- ](?:recipient|mailbox|address|email address)\b/i, ['invalid'],
    'Mimecast "Invalid Recipient" (SFM 451.json); Trend Micro "Invalid-Recipient" (SFM 554.json); Mail.ru "invalid mailbox" (SFM 550.json)'),
  row('user.disabled', 'userUnknown', /\b(?:account|mailbox|user)(?: that you tried to reach)? (?:is|has been) (?:disabled|inactive|deactivated)\b/i, ['disabled', 'inactive', 'deactivated'],
    'Gmail "550 5.2.1 The email account that you tried to reach is disabled"; Yahoo "This mailbox is disabled (554.30)" (SFM 550.json, 554.json)'),
  row('user.no-longer', 'userUnknown', /\bno longer (?:valid|available|on server)\b/i, ['no longer'],
    'Yahoo "dd x is no longer valid. [-20]" (SFM 554.json); "550 5.1.6 recipient no longer on server" (customeros/mailsherpa#19)'),
  row('user.no-account', 'userUnknown', /\bdoesn['’]t have an account\b|\bdoesn['’]t have a \S+ account\b/i, ['have a'],
    'Yahoo "554 delivery error: dd This user doesn\'t have a yahoo.com account" (hbattat/verifyEmail#30)'),
  row('user.unrouteable', 'userUnknown', /\bunrouteable address\b/i, ['unrouteable address'],
    'Exim "550 Unrouteable address" (fail2ban/fail2ban#1762; R parser.rs)'),
  row('user.not-valid', 'userUnknown', /\bnot a valid (?:recipient|mailbox|email address|rfc[- ]?5321 address)\b|\bmarked as invalid\b|\bnot in recipient list\b/i, ['not a valid', 'marked as invalid', 'not in recipient list'],
    'Proofpoint "This is not a valid email address" and "User email address is marked as invalid" (SFM 550.json); ZeroSpam "Not in recipient list" (SFM 554.json)'),
]);

const BY_KIND: ReadonlyMap<ReplyPatternKind, readonly ReplyPattern[]> = new Map(
  PATTERN_KIND_ORDER.map((kind) => [kind, REPLY_PATTERNS.filter((p) => p.kind === kind)]),
);

/** The first row of `kind` whose pattern matches `text`, or null. */
export function firstMatchOfKind(kind: ReplyPatternKind, text: string): ReplyPattern | null {
  for (const p of BY_KIND.get(kind) ?? []) if (p.pattern.test(text)) return p;
  return null;
}

/**
 * One case-insensitive expression for the words of every row of `kinds`: a text it does not match matches no row of
 * those kinds, found in one scan instead of one per row. A word that holds another is left out (the shorter finds it).
 */
export function wordScreenOfKinds(kinds: readonly ReplyPatternKind[]): RegExp {
  const words = [...new Set(REPLY_PATTERNS.filter((p) => kinds.includes(p.kind)).flatMap((p) => p.words))];
  const needed = words.filter((word) => !words.some((other) => other !== word && word.includes(other)));
  return new RegExp(needed.map((word) => word.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')).join('|'), 'i');
}

/** Every row that matches `text`, whatever its kind and the phase (for tests and debugging). */
export function matchingPatternIds(text: string): string[] {
  return REPLY_PATTERNS.filter((p) => p.pattern.test(text)).map((p) => p.id);
}
