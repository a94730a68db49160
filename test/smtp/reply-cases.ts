/**
 * Real SMTP replies and the status decisions.md §6 gives them: the data of test/smtp/classify.test.ts.
 *
 * `text` is the reply as `classifySmtpReply` takes it: without the three-digit code of each line, lines joined by "\n"
 * (a bounce that folded one reply line over several lines of its own is unfolded; "550-" continuations are kept as
 * lines). Every row says where the text was published. Addresses and IPs are as published (often already redacted).
 * Where the source did not record the command the reply answered, the row says so in `note` and uses RCPT, the
 * command a verifier asks about. `rule` is set where the reason matters (classify.ts, `SmtpReplyRule`).
 */

import type { SmtpReplyPhase, SmtpReplyRule } from '../../packages/mailverify/src/smtp/classify.js';
import type { StatusCode } from '../../packages/mailverify/src/status/catalogue.js';

export interface ReplyCase {
  readonly phase: SmtpReplyPhase;
  readonly code: number;
  readonly text: string;
  readonly expected: StatusCode | null;
  readonly source: string;
  readonly rule?: SmtpReplyRule;
  readonly note?: string;
}

// Sources used many times.
const sfm = (code: number, who: string): string =>
  `${who}, Postmark SMTP Field Manual (ActiveCampaign/smtp-field-manual data/codes/${code}.json)`;
const gh = (path: string): string => `https://github.com/${path}`;
const POSTFIX_REF = 'Postfix test reference output (vdukhovni/postfix postfix/src/smtpd/smtpd_check.ref)';
const POSTFIX_NULLMX = 'Postfix test reference output (vdukhovni/postfix postfix/src/smtpd/smtpd_nullmx.ref)';
const MAILROUTE = "Postfix smtpd reply, as listed in MailRoute's 'Postfix SMTP Response Errors'";
const GOOGLE =
  'Google Workspace SMTP error reference, support.google.com/a/answer/3726730 (quoted in sisimai/rb-sisimai lib/sisimai/rhost/google.rb)';
const REACHER = (where: string): string =>
  `reacherhq/check-if-email-exists core/src/smtp/parser.rs, reply quoted in a comment${where === '' ? '' : ` (${where})`}`;
const PHASE_UNRECORDED = 'command not recorded by the source; classified as a RCPT answer';
const REACHER_CODE = 'Reacher logs only "permanent:"/"transient:" + text; the code is the class it implies';

export const REPLY_CASES: readonly ReplyCase[] = [
  // ---------------------------------------------------------------- positive answers (decisions.md §6)
  { phase: 'greeting', code: 220, text: 'mx2.mailbox.org ESMTP Postfix', expected: null, rule: 'positive', source: gh('karolyi/py3-validate-email/issues/81') },
  { phase: 'greeting', code: 220, text: 'mxs.mail.ru ESMTP ready', expected: null, rule: 'positive', source: gh('reacherhq/check-if-email-exists/issues/771') },
  {
    phase: 'ehlo', code: 250, expected: null, rule: 'positive', source: gh('hardenize/hardenize-public/issues/23'),
    text: 'iitmx-3.mail.ams1.xing.com\nPIPELINING\nSIZE 20480000\nVRFY\nETRN\nSTARTTLS\nENHANCEDSTATUSCODES\n8BITMIME\nSMTPUTF8',
  },
  { phase: 'mail', code: 250, text: '2.1.0 Ok', expected: null, rule: 'positive', source: MAILROUTE },
  { phase: 'mail', code: 250, text: '2.0.0 OK', expected: null, rule: 'positive', source: gh('reacherhq/check-if-email-exists/issues/771') },
  { phase: 'rcpt', code: 250, text: '2.1.5 Ok', expected: null, rule: 'positive', source: MAILROUTE },
  { phase: 'rcpt', code: 250, text: 'Go ahead', expected: null, rule: 'positive', source: gh('reacherhq/check-if-email-exists/issues/771') },
  { phase: 'rcpt', code: 251, text: 'User not local; will forward to <forward-path>', expected: null, rule: 'positive', source: 'RFC 5321 §4.2.2 (251 reply text)' },
  { phase: 'rcpt', code: 252, text: 'Cannot VRFY user, but will accept message and attempt delivery', expected: null, rule: 'positive', source: 'RFC 5321 §4.2.2 (252 reply text)' },
  // A positive code that does not answer this command.
  { phase: 'ehlo', code: 220, text: '2.0.0 Ready to start TLS', expected: 'SmtpDialogError', rule: 'unexpected-positive', source: MAILROUTE, note: 'the STARTTLS answer, given to EHLO' },
  { phase: 'rcpt', code: 354, text: 'End data with <CR><LF>.<CR><LF>', expected: 'SmtpDialogError', rule: 'unexpected-positive', source: 'Postfix smtpd 354 reply to DATA', note: 'the DATA answer, given to RCPT' },

  // ---------------------------------------------------------------- malformed code
  {
    phase: 'rcpt', code: 577, expected: 'SmtpDialogError', rule: 'malformed', source: gh('hardenize/hardenize-public/issues/23'),
    text: '5.1.1 <dmarc_agg@xing.com>: Recipient address rejected: undeliverable address: host barracuda-2.mail.ams1.xing.com[10.12.16.55] said: 550 No such user (dmarc_agg@xing.com) (in reply to RCPT TO command)',
    note: 'swaks transcript "<** 577 5.1.1": the second digit 7 is not a reply code (RFC 5321 §4.2)',
  },

  // ---------------------------------------------------------------- 421: always ServerTemporaryUnavailable
  { phase: 'greeting', code: 421, text: 'Service not available, closing transmission channel', expected: 'ServerTemporaryUnavailable', rule: 'closing-421', source: sfm(421, 'Verizon Media') },
  { phase: 'greeting', code: 421, text: '4.3.2 Service not available [outlook.com]', expected: 'ServerTemporaryUnavailable', rule: 'closing-421', source: sfm(421, 'Outlook') },
  { phase: 'ehlo', code: 421, text: '4.7.0 me.com Error: too many errors', expected: 'ServerTemporaryUnavailable', rule: 'closing-421', source: sfm(421, 'Apple') },
  {
    phase: 'mail', code: 421, expected: 'ServerTemporaryUnavailable', rule: 'closing-421', source: sfm(421, 'Google'), note: PHASE_UNRECORDED.replace('RCPT', 'MAIL'),
    text: '4.7.0 [x.xx.xx.xx] Our system has detected that this message is suspicious due to the very low reputation of the sending domain. To best protect our users from spam, the message has been blocked. Please visit https://support.google.com/mail/answer/188131 for more information. - gsmtp',
  },
  { phase: 'rcpt', code: 421, text: '4.7.0 [TSS04] Messages from 0.0.0.0 temporarily deferred due to user complaints - 4.16.55.1; see https://help.yahoo.com/kb/postmaster/SLN3434.html', expected: 'ServerTemporaryUnavailable', rule: 'closing-421', source: sfm(421, 'Verizon Media (Yahoo)') },
  { phase: 'rcpt', code: 421, text: '4.1.1 <email@example.com>: Recipient address rejected: unverified address: Address verification in progress', expected: 'ServerTemporaryUnavailable', rule: 'closing-421', source: sfm(421, 'Proofpoint') },
  { phase: 'rcpt', code: 421, text: '4.3.2 The maximum number of concurrent connections per resource forest has exceeded a limit, closing transmission channel. example.com. PRX8 [example.com]', expected: 'ServerTemporaryUnavailable', rule: 'closing-421', source: sfm(421, 'Exchange Online') },
  { phase: 'rcpt', code: 421, text: '4.7.1 Messages to example@icloud.com deferred due to excessive volume. Try again later - https://support.apple.com/en-us/HT204137', expected: 'ServerTemporaryUnavailable', rule: 'closing-421', source: sfm(421, 'Apple') },
  { phase: 'rcpt', code: 421, text: 'Recipient not in route list', expected: 'ServerTemporaryUnavailable', rule: 'closing-421', source: `hMailServer, ${gh('hmailserver/hmailserver/issues/21')}` },

  // ---------------------------------------------------------------- greeting
  {
    phase: 'greeting', code: 554, expected: 'LocalEndPointRejected', source: `GMX, ${gh('EDSM-NET/FrontEnd/issues/21')} and ${gh('OpenSMTPD/OpenSMTPD/issues/446')}`,
    text: 'gmx.net (mxgmx017) Nemesis ESMTP Service not available\nNo SMTP service\nBad DNS PTR resource record.\nFor explanation visit http://postmaster.gmx.com/en/error-messages?ip=94.23.55.190&c=rdns',
  },
  { phase: 'greeting', code: 554, text: 'kundenserver.de (mxeue010) Nemesis ESMTP Service not available\nNo SMTP service\ninvalid DNS PTR resource record, IP=198.179.57.23', expected: 'LocalEndPointRejected', source: `1&1 IONOS, ${gh('EmailVerify/email-verify/issues/38')}` },
  { phase: 'greeting', code: 554, text: 'gmx.net (mxgmx117) Nemesis ESMTP Service not available\nNo SMTP service\nIP address is block listed.\nFor explanation visit https://www.gmx.net/mail/senderguidelines?c=bl', expected: 'LocalEndPointRejected', source: REACHER('test_is_err_ip_blacklisted, gmx.net') },
  { phase: 'greeting', code: 550, text: '5.7.25 IP name lookup failed. No valid PTR record found for the given IP address. - ImprovMX v2024.06.06', expected: 'LocalEndPointRejected', rule: 'enhanced-5.7.25', source: `ImprovMX, ${gh('NixOS/SC-election-2024/issues/61')} ("refused to talk to me")` },
  { phase: 'greeting', code: 554, text: 'IP address 198.51.100.5 rejected [IP reputation fail]', expected: 'LocalEndPointRejected', rule: 'wording', source: gh('sisimai/p5-sisimai/issues/469') },
  { phase: 'greeting', code: 554, text: 'Service unavailable; Client host [127.0.0.2] blocked using blackholes.mail-abuse.org; Blackholed - see <URL:http://mail-abuse.org/cgi-bin/lookup?127.0.0.2>', expected: 'LocalEndPointRejected', source: `${POSTFIX_REF} (CONNECT)` },
  { phase: 'greeting', code: 554, text: '<random.bad.domain[123.123.123.123]>: Client host rejected: match bad.domain', expected: 'LocalEndPointRejected', source: `${POSTFIX_REF} (CONNECT)` },
  { phase: 'greeting', code: 554, text: 'resimta-h1p-037598.sys.comcast.net resimta-h1p-037598.sys.comcast.net 5.135.185.166 found on one or more DNSBLs, see http://postmaster.comcast.net/smtp-error-codes.php#BL000001', expected: 'LocalEndPointRejected', source: REACHER('on @comcast.net'), note: REACHER_CODE },
  { phase: 'greeting', code: 554, text: 'smtp-fw-9107.amazon.com; SBRS score too low: http://www.senderbase.org/', expected: 'LocalEndPointRejected', source: REACHER('on @amazon.com'), note: REACHER_CODE },
  { phase: 'greeting', code: 521, text: '5.3.2 Service currently unavailable', expected: 'LocalEndPointRejected', rule: 'greeting-default', source: MAILROUTE },

  // ---------------------------------------------------------------- EHLO / HELO
  { phase: 'ehlo', code: 501, text: 'Syntactically invalid EHLO argument(s)', expected: 'LocalEndPointRejected', rule: 'wording', source: 'Exim (Exim/exim src/src/smtp_in.c, "501 Syntactically invalid %s argument(s)")' },
  { phase: 'ehlo', code: 501, text: '5.5.4 HELO/EHLO argument is invalid. https://support.google.com/mail/?p=helo', expected: 'LocalEndPointRejected', rule: 'wording', source: GOOGLE },
  { phase: 'ehlo', code: 504, text: '<foo>: Helo command rejected: need fully-qualified hostname', expected: 'LocalEndPointRejected', source: POSTFIX_REF },
  { phase: 'ehlo', code: 501, text: '<[321.255.255.255]>: Helo command rejected: invalid ip address', expected: 'LocalEndPointRejected', source: POSTFIX_REF },
  { phase: 'ehlo', code: 554, text: '5.7.1 <foo.dunno.com>: Helo command rejected: Access denied', expected: 'LocalEndPointRejected', rule: 'wording', source: MAILROUTE },
  { phase: 'ehlo', code: 450, text: '<foo.>: Helo command rejected: Host not found', expected: 'ServerTemporaryUnavailable', rule: 'transient-outside-rcpt', source: POSTFIX_REF },
  { phase: 'ehlo', code: 502, text: '5.5.2 Error: command not recognized', expected: 'SmtpDialogError', rule: 'protocol-error', source: MAILROUTE },
  { phase: 'ehlo', code: 550, text: '5.5.1 Protocol error', expected: 'SmtpDialogError', rule: 'protocol-error', source: `${MAILROUTE}; postscreen pregreet (smtp-anchors.md §1)` },
  { phase: 'ehlo', code: 501, text: '5.5.4 Invalid domain name', expected: 'SmtpDialogError', rule: 'ehlo-default', source: 'Exchange Online 5.5.4 "Invalid domain name" (sisimai/rb-sisimai lib/sisimai/rhost/exchangeonline.rb)' },

  // ---------------------------------------------------------------- MAIL FROM
  { phase: 'mail', code: 553, text: "5.7.1 [TSS07] Connections will not be accepted from 206.189.235.121, because the ip is in Spamhaus's list; see https://postmaster.verizonmedia.com/error-codes", expected: 'LocalEndPointRejected', rule: 'wording', source: `Yahoo, ${gh('chenjj/espoofer/issues/15')} (reply to "mail from:")` },
  {
    phase: 'mail', code: 550, expected: 'LocalEndPointRejected', rule: 'wording', source: `Outlook.com, ${gh('root-io/vmail/issues/91')} (in reply to MAIL FROM)`,
    text: "5.7.1 Unfortunately, messages from [62.210.82.129] weren't sent. Please contact your Internet service provider since part of their network is on our block list (AS3140). You can also refer your provider to http://mail.live.com/mail/troubleshooting.aspx#errors.",
  },
  { phase: 'mail', code: 550, text: 'X-Host-Lookup-Failed: Reverse DNS lookup does not match for <smarthost>\n(deferred)', expected: 'LocalEndPointRejected', rule: 'wording', source: `spamgourmet, ${gh('spamgourmet/spamgourmet/issues/58')} (in reply to MAIL FROM)` },
  { phase: 'mail', code: 450, text: '4.1.8 <sname@nxdomain.porcupine.org>: Sender address rejected: Domain not found', expected: 'ServerTemporaryUnavailable', rule: 'transient-outside-rcpt', source: POSTFIX_NULLMX },
  { phase: 'mail', code: 450, text: 'Client host rejected: cannot find your hostname, [131.155.210.17]', expected: 'ServerTemporaryUnavailable', rule: 'transient-outside-rcpt', source: `${POSTFIX_REF} (MAIL)` },
  { phase: 'mail', code: 451, text: '4.3.5 <>: Sender address rejected: Server configuration error', expected: 'ServerTemporaryUnavailable', rule: 'transient-outside-rcpt', source: MAILROUTE },
  { phase: 'mail', code: 556, text: '5.7.0 <sname@nullmx.porcupine.org>: Sender address rejected: Domain nullmx.porcupine.org does not accept mail', expected: 'LocalSenderAddressRejected', rule: 'wording', source: POSTFIX_NULLMX },
  { phase: 'mail', code: 554, text: '5.7.1 <sname@spike.porcupine.org>: Sender address rejected: ns or mx server spike.porcupine.org', expected: 'LocalSenderAddressRejected', rule: 'wording', source: POSTFIX_NULLMX },
  { phase: 'mail', code: 554, text: '<bad-sender@any.domain>: Sender address rejected: match bad-sender@', expected: 'LocalSenderAddressRejected', source: POSTFIX_REF },
  { phase: 'mail', code: 504, text: '<foo@foo>: Sender address rejected: need fully-qualified address', expected: 'LocalSenderAddressRejected', source: POSTFIX_REF },
  { phase: 'mail', code: 553, text: '5.6.7 Must declare SMTPUTF8 to send unicode address', expected: 'ServerDoesNotSupportInternationalMailboxes', rule: 'enhanced-5.6.7', source: MAILROUTE },
  { phase: 'mail', code: 553, text: '5.1.7 The sender address <address> is not a valid RFC 5321 address. For more information, go to About SMTP error messages and review RFC 5321 specifications.', expected: 'LocalSenderAddressRejected', rule: 'enhanced-sender', source: GOOGLE },
  {
    phase: 'mail', code: 553, expected: 'LocalSenderAddressRejected', rule: 'enhanced-sender', source: 'Sendmail cf/m4/proto.m4 ("553 Domain of sender address " $&f " does not exist", 5.1.8)',
    text: '5.1.8 <sender@nxdomain.example>... Domain of sender address sender@nxdomain.example does not exist', note: 'the sender is a placeholder',
  },
  { phase: 'mail', code: 501, text: '5.5.4 Syntax: MAIL FROM:<address>', expected: 'SmtpDialogError', rule: 'mail-5.5', source: MAILROUTE },
  { phase: 'mail', code: 503, text: '5.5.1 Error: nested MAIL command', expected: 'SmtpDialogError', rule: 'protocol-error', source: MAILROUTE },
  { phase: 'mail', code: 503, text: '5.7.0 Error: access denied for foo@example.com', expected: 'SmtpDialogError', rule: 'protocol-error', source: MAILROUTE },
  { phase: 'mail', code: 530, text: '5.5.1 Authentication Required.', expected: 'SmtpDialogError', rule: 'protocol-error', source: GOOGLE },
  { phase: 'mail', code: 530, text: '5.7.0 Must issue a STARTTLS command first', expected: 'LocalEndPointRejected', rule: 'bare-5.7', source: `${MAILROUTE}; ${GOOGLE}`, note: 'smtp-anchors.md §1 wanted SmtpDialogError here; §6 says bare 5.7.x' },
  { phase: 'mail', code: 550, text: '5.7.1 Access denied', expected: 'LocalEndPointRejected', rule: 'bare-5.7', source: 'sisimai test data, Rejected: "5.7.1 Access denied (in reply to MAIL FROM command)"' },
  { phase: 'mail', code: 550, text: '#5.1.0 Address rejected.', expected: 'LocalSenderAddressRejected', rule: 'mail-default', source: gh('customeros/mailsherpa/issues/19'), note: 'published without its command; used at MAIL to exercise the MAIL default' },

  // ---------------------------------------------------------------- RCPT: mailbox does not exist
  { phase: 'rcpt', code: 550, text: "5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces. Learn more at https://support.google.com/mail/?p=NoSuchUser - gsmtp", expected: 'MailboxDoesNotExist', source: sfm(550, 'Gmail') },
  { phase: 'rcpt', code: 550, text: '5.2.1 The email account that you tried to reach is disabled. Learn more at https://support.google.com/mail/?p=DisabledUser - gsmtp', expected: 'MailboxDoesNotExist', rule: 'wording', source: sfm(550, 'Gmail') },
  {
    phase: 'rcpt', code: 550, expected: 'MailboxDoesNotExist', rule: 'rcpt-user-unknown-code', source: sfm(550, 'Gmail'),
    text: '5.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered. For more information, please visit https://support.google.com/mail/?p=ReceivingRatePerm - gsmtp',
    note: 'the mailbox exists (a rate limit); §6 makes any unclaimed RCPT 5xx MailboxDoesNotExist',
  },
  { phase: 'rcpt', code: 550, text: '5.1.1 <example@icloud.com>: user does not exist', expected: 'MailboxDoesNotExist', source: sfm(550, 'iCloud'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.1.1 Not our Customer', expected: 'MailboxDoesNotExist', rule: 'rcpt-user-unknown-code', source: sfm(550, 'Comcast'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.1.1 <example@comcast.net> recipient mailbox unallocated', expected: 'MailboxDoesNotExist', source: sfm(550, 'Comcast'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.5.0 Requested action not taken: mailbox unavailable. [#.eop-nam12.prod.protection.outlook.com]', expected: 'MailboxDoesNotExist', rule: 'wording', source: sfm(550, 'Outlook'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'Message was not accepted -- invalid mailbox. Local mailbox example@mail.ru is unavailable: account is disabled', expected: 'MailboxDoesNotExist', source: sfm(550, 'Mail.ru'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.7.1 No such user!', expected: 'MailboxDoesNotExist', rule: 'wording', source: sfm(550, 'Yandex'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.2.1 <EXAMPLE@PRODIGY.NET>... Addressee unknown, relay=[x.xx.xx.xx]', expected: 'MailboxDoesNotExist', source: sfm(550, 'AT&T'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.1.1 <example@zoho.com> User unknown', expected: 'MailboxDoesNotExist', source: sfm(550, 'Zoho'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.1.1 <email@example>: Recipient address rejected: User unknown', expected: 'MailboxDoesNotExist', source: sfm(550, 'Proofpoint'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.1.1 - This is not a valid email address. Please verify that you have the correct email address for your recipient.', expected: 'MailboxDoesNotExist', source: sfm(550, 'Proofpoint'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.7.1 <email@example.com>: Recipient address rejected: User email address is marked as invalid.', expected: 'MailboxDoesNotExist', rule: 'wording', source: sfm(550, 'Proofpoint'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.4.1 [email@example.com]: Recipient address rejected: Access denied [example.com]', expected: 'MailboxDoesNotExist', rule: 'rcpt-user-unknown-code', source: sfm(550, 'Office 365'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.4.1 Recipient address rejected: Access denied. AS(201806281) [PR2FRA01FT009.eop-fra01.prod.protection.outlook.com]', expected: 'MailboxDoesNotExist', rule: 'rcpt-user-unknown-code', source: `Exchange Online, ${gh('zone-eu/zone-mta/pull/214')}` },
  { phase: 'rcpt', code: 550, text: '5.4.1 [redacted@redacted.br]: Recipient address rejected: Access denied [BL2NAM02FT061.eop-nam02.prod.protection.outlook.com]', expected: 'MailboxDoesNotExist', source: `Exchange Online, ${gh('sisimai/rb-sisimai/issues/77')} (in reply to RCPT TO)` },
  { phase: 'rcpt', code: 550, text: 'cuda_nsu 5.1.1 <email@example.com>... User unknown', expected: 'MailboxDoesNotExist', rule: 'wording', source: sfm(550, 'Barracuda'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'No such user (email@example.com)', expected: 'MailboxDoesNotExist', source: sfm(550, 'Barracuda'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'cuda_nsu 5.4.1 [email@example.com]: Recipient address rejected: Access denied [example.com]', expected: 'MailboxDoesNotExist', rule: 'rcpt-default', source: sfm(550, 'Barracuda'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'Invalid recipient <email@example.com> (#5.1.1)', expected: 'MailboxDoesNotExist', source: sfm(550, 'Symantec'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 554, text: "delivery error: dd This user doesn't have a yahoo.com account (alexwillis2011@yahoo.com) [-5] - mta1325.mail.gq1.yahoo.com", expected: 'MailboxDoesNotExist', rule: 'wording', source: `Yahoo, ${gh('hbattat/verifyEmail/issues/30')}` },
  { phase: 'rcpt', code: 554, text: 'delivery error: dd Sorry, your message to example@example.com cannot be delivered. This mailbox is disabled (554.30). - example.yahoo.com', expected: 'MailboxDoesNotExist', source: sfm(554, 'Verizon Media (Yahoo)'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 554, text: 'delivery error: dd example@example.com is no longer valid. [-20] - example.yahoo.com', expected: 'MailboxDoesNotExist', source: sfm(554, 'Verizon Media (Yahoo)'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 552, text: '1 Requested mail action aborted, mailbox not found', expected: 'MailboxDoesNotExist', rule: 'wording', source: sfm(552, 'Verizon Media (Yahoo)'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 552, text: '5.1.1 <example@zoho.com> Mailbox delivery failure policy error', expected: 'MailboxDoesNotExist', rule: 'rcpt-user-unknown-code', source: sfm(552, 'Zoho'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 553, text: '5.1.2 The recipient address <.@gmail.com> is not a valid RFC-5321 address. - gsmtp', expected: 'MailboxDoesNotExist', source: sfm(553, 'Google'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 553, text: '5.1.3 The recipient address is not a valid RFC-5321 address', expected: 'MailboxDoesNotExist', source: `Gmail, ${gh('datawookie/emayili/issues/72')}` },
  { phase: 'rcpt', code: 501, text: '5.1.3 Invalid address [outlook.com]', expected: 'MailboxDoesNotExist', source: sfm(501, 'Microsoft'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 501, text: 'Syntax error in parameters or arguments', expected: 'MailboxDoesNotExist', rule: 'rcpt-default', source: sfm(501, 'Verizon'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 554, text: '5.7.1 <example@example.com>: Recipient address rejected: Invalid-Recipient.', expected: 'MailboxDoesNotExist', rule: 'wording', source: sfm(554, 'Trend Micro'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 554, text: '5.7.1 <email@example.com>: Recipient address rejected: Not in recipient list', expected: 'MailboxDoesNotExist', rule: 'wording', source: sfm(554, 'ZeroSpam'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.1.1 RESOLVER.ADR.RecipNotFound; not found', expected: 'MailboxDoesNotExist', source: `Exchange (on premises), ${gh('Pro/exchange-catchall/issues/10')}` },
  {
    phase: 'rcpt', code: 550, expected: 'MailboxDoesNotExist', rule: 'wording', source: `Exim callout to Exchange Online, ${gh('gregkh/usbutils/issues/145')} (in reply to RCPT TO)`,
    text: 'Callout verification failed:\n550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP\naddress lookup',
  },
  { phase: 'rcpt', code: 550, text: '5.7.1 : Recipient address rejected: Recipient not found', expected: 'MailboxDoesNotExist', rule: 'wording', source: `Tutanota, ${gh('tutao/tutanota/issues/7713')}` },
  { phase: 'rcpt', code: 550, text: '5.1.2 No such mailbox [MSG0031]', expected: 'MailboxDoesNotExist', source: `Strato (rzone.de), ${gh('YunoHost/issues/issues/2684')} (in reply to RCPT TO)` },
  { phase: 'rcpt', code: 550, text: '5.2.0 No such mailbox', expected: 'MailboxDoesNotExist', rule: 'wording', source: gh('mailcow/mailcow-dockerized/issues/3435') },
  { phase: 'rcpt', code: 550, text: '5.1.2 Mailbox does not exist.', expected: 'MailboxDoesNotExist', source: `Stalwart, ${gh('stalwartlabs/stalwart/issues/2460')}` },
  { phase: 'rcpt', code: 550, text: '#5.1.0 Address rejected.', expected: 'MailboxDoesNotExist', rule: 'rcpt-default', source: gh('customeros/mailsherpa/issues/19') },
  { phase: 'rcpt', code: 550, text: '5.1.6 recipient no longer on server', expected: 'MailboxDoesNotExist', source: gh('customeros/mailsherpa/issues/19') },
  { phase: 'rcpt', code: 550, text: 'Invalid recipient', expected: 'MailboxDoesNotExist', source: `OpenSMTPD, ${gh('OpenSMTPD/OpenSMTPD/issues/541')} (RCPT TO)` },
  { phase: 'rcpt', code: 550, text: 'Invalid email address', expected: 'MailboxDoesNotExist', source: `smtp-server, ${gh('JoeBiellik/pleasenospam/issues/37')} (Recipient command failed)` },
  { phase: 'rcpt', code: 550, text: 'Unrouteable address', expected: 'MailboxDoesNotExist', rule: 'wording', source: `Exim, ${gh('fail2ban/fail2ban/issues/1762')} ("rejected RCPT <x>: Unrouteable address")` },
  { phase: 'rcpt', code: 550, text: 'Requested action not taken: mailbox unavailable\nFailure sending mail. Try again later', expected: 'MailboxDoesNotExist', rule: 'wording', source: `GMX, ${gh('jstedfast/MailKit/issues/968')} (RecipientNotAccepted)` },
  { phase: 'rcpt', code: 550, text: 'Mailbox not found or access denied', expected: 'MailboxDoesNotExist', rule: 'wording', source: `${gh('gogs/gogs/issues/4871')} ("Rcpt: 550 ...")` },
  { phase: 'rcpt', code: 556, text: '5.1.0 <rname@nullmx.porcupine.org>: Recipient address rejected: Domain nullmx.porcupine.org does not accept mail', expected: 'MailboxDoesNotExist', rule: 'rcpt-user-unknown-code', source: POSTFIX_NULLMX },
  { phase: 'rcpt', code: 504, text: '<foo@foo>: Recipient address rejected: need fully-qualified address', expected: 'MailboxDoesNotExist', rule: 'rcpt-default', source: POSTFIX_REF },
  { phase: 'rcpt', code: 550, text: '5.1.1 <foo@example.com>: Recipient address rejected: User unknown in local recipient table', expected: 'MailboxDoesNotExist', rule: 'wording', source: MAILROUTE },
  { phase: 'rcpt', code: 550, text: "RCPT (***@stigpods.com.cn) dosn't exist", expected: 'MailboxDoesNotExist', source: REACHER('on @stigpods.com.cn'), note: REACHER_CODE },
  { phase: 'rcpt', code: 554, text: 'Unknown Recipient (#5.1.1)', expected: 'MailboxDoesNotExist', rule: 'wording', source: REACHER('on @parkwayhonda.com') },
  { phase: 'rcpt', code: 550, text: '5.1.1 Sorry, no mailbox here by that name', expected: 'MailboxDoesNotExist', source: REACHER('') },
  {
    phase: 'rcpt', code: 554, expected: 'MailboxDoesNotExist', rule: 'rcpt-default', source: sfm(554, 'Outlook'),
    text: '5.2.122 The recipient has exceeded their limit for the number of messages they can receive per hour. For more information go to http://go.microsoft.com/fwlink/?LinkId=526653. (#) [outlook.com]',
    note: 'the mailbox exists (an hourly limit); §6 makes any unclaimed RCPT 5xx MailboxDoesNotExist',
  },

  // ---------------------------------------------------------------- RCPT: our IP, HELO, PTR, blocklists, relay
  {
    phase: 'rcpt', code: 550, expected: 'LocalEndPointRejected', rule: 'enhanced-5.7.606-649', source: `Exchange Online, ${gh('JamBrain/JamBrain/issues/271')} (in reply to RCPT TO)`,
    text: '5.7.606 Access denied, banned sending IP [45.79.188.170]. To request removal from this list please visit https://sender.office.com/ and follow the directions. For more information please go to http://go.microsoft.com/fwlink/?LinkID=526655 (AS16012609)',
  },
  { phase: 'rcpt', code: 550, text: '5.7.1 Service unavailable, Client host [50.31.49.41] blocked using Spamhaus. To request removal from this list see https://www.spamhaus.org/query/ip/50.31.49.41 (AS3130). [VE1EUR01FT062.eop-EUR01.prod.protection.outlook.com]', expected: 'LocalEndPointRejected', rule: 'wording', source: `Exchange Online, ${gh('sendgrid/docs/issues/6275')}` },
  { phase: 'rcpt', code: 550, text: '5.7.1 Mail from IP 3.93.33.11 was rejected due to listing in Spamhaus SBL. For details please see http://www.spamhaus.org/query/bl?ip=3.93.33.11', expected: 'LocalEndPointRejected', source: `iCloud, ${gh('reacherhq/check-if-email-exists/issues/1065')}` },
  { phase: 'rcpt', code: 554, text: '5.7.1 Service unavailable; Client host [167.89.94.22] blocked using bl.spamcop.net; Blocked - see https://www.spamcop.net/bl.shtml?167.89.94.22', expected: 'LocalEndPointRejected', source: `Postfix with SpamCop, ${gh('simple-login/app/issues/497')} ("reject: RCPT")` },
  { phase: 'rcpt', code: 554, text: '5.7.1 Service unavailable; Client host [redacted] blocked using zen.spamhaus.org; Error: open resolver; https://check.spamhaus.org/returnc/pub/46.38.225.230/', expected: 'LocalEndPointRejected', source: `Postfix with Spamhaus, ${gh('simple-login/app/pull/2674')} ("reject: RCPT")` },
  { phase: 'rcpt', code: 554, text: 'Service unavailable; Client host [bl11-253-215.dsl.telepac.pt] blocked using\nBarracuda Reputation;\nhttp://www.barracudanetworks.com/reputation/?r=1&ip=85.244.xxx.yyy', expected: 'LocalEndPointRejected', source: `Barracuda, ${gh('getconversio/email-deep-validator/pull/20')}` },
  { phase: 'rcpt', code: 550, text: 'Service unavailable; Client Host [1.2.3.4] blocked using Trend Micro RBL+. Please see http://www.mail-abuse.com/cgi-bin/lookup?ip_address=1.2.3.4', expected: 'LocalEndPointRejected', source: `Trend Micro, ${gh('zone-eu/zone-mta/pull/177')}`, note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'Blocked', expected: 'LocalEndPointRejected', rule: 'wording', source: sfm(550, 'Barracuda'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'Blocked - see https://ipcheck.proofpoint.com/?ip=23.129.64.192', expected: 'LocalEndPointRejected', source: REACHER('Proofpoint'), note: REACHER_CODE },
  { phase: 'rcpt', code: 550, text: 'Rejected because 23.129.64.213 is in a black list at b.barracudacentral.org', expected: 'LocalEndPointRejected', source: REACHER('Barracuda'), note: REACHER_CODE },
  { phase: 'rcpt', code: 550, text: 'JunkMail rejected - (gmail.com) [193.218.118.140]:46615 is in an RBL: http://www.barracudanetworks.com/reputation/?pr=1&ip=193.218.118.140', expected: 'LocalEndPointRejected', source: REACHER('Barracuda'), note: REACHER_CODE },
  { phase: 'rcpt', code: 550, text: 'csi.mimecast.org Poor Reputation Sender. - https://community.mimecast.com/docs/DOC-1369#550 [6ATVl4DjOvSA6XNsWGoUFw.us31]', expected: 'LocalEndPointRejected', rule: 'wording', source: REACHER('Mimecast'), note: 'reputation wording wins over the word "Sender"' },
  { phase: 'rcpt', code: 550, text: '5.7.1 Mail from 23.129.64.183 has been blocked by Trend Micro Email Reputation Service.', expected: 'LocalEndPointRejected', source: REACHER('Trend Micro'), note: REACHER_CODE },
  { phase: 'rcpt', code: 553, text: 'sorry, mail from your location [5.79.109.48] is administratively denied (#5.7.1)', expected: 'LocalEndPointRejected', source: REACHER('qmail'), note: REACHER_CODE },
  { phase: 'rcpt', code: 550, text: 'Connection rejected by policy [7.3] 38206, please visit https://support.symantec.com/en_US/article.TECH246726.html for more details about this error message.', expected: 'LocalEndPointRejected', source: REACHER('Symantec'), note: REACHER_CODE },
  { phase: 'rcpt', code: 550, text: '5.7.1 Service unavailable; Client host [147.75.45.223] is blacklisted. Visit https://www.sophos.com/en-us/threat-center/ip-lookup.aspx?ip=147.75.45.223 to request delisting', expected: 'LocalEndPointRejected', source: REACHER('Sophos'), note: REACHER_CODE },
  { phase: 'rcpt', code: 550, text: '5.7.1 Recipient not authorized, your IP has been found on a block list', expected: 'LocalEndPointRejected', source: REACHER(''), note: REACHER_CODE },
  { phase: 'rcpt', code: 554, text: '5.7.1 <mta.voipdir.net[]>: Client host rejected: Access denied', expected: 'LocalEndPointRejected', rule: 'wording', source: REACHER('test_is_invalid') },
  { phase: 'rcpt', code: 550, text: '5.7.1 Client host rejected: cannot find your reverse hostname, [23.129.64.184]', expected: 'LocalEndPointRejected', source: REACHER('Postfix'), note: REACHER_CODE },
  { phase: 'rcpt', code: 550, text: '5.7.1 Relaying denied. IP name possibly forged [45.154.35.252]', expected: 'LocalEndPointRejected', source: REACHER('Sendmail'), note: REACHER_CODE },
  { phase: 'rcpt', code: 554, text: '5.7.1 <example@icloud.com>: Relay access denied', expected: 'LocalEndPointRejected', rule: 'wording', source: sfm(554, 'Apple'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 554, text: '5.7.1 <recipint@example.com>: Relay access denied', expected: 'LocalEndPointRejected', source: `Postfix, ${gh('postalserver/postal/issues/647')}` },
  { phase: 'rcpt', code: 550, text: 'relay not permitted!', expected: 'LocalEndPointRejected', source: `Exim, ${gh('postalserver/postal/issues/647')}` },
  { phase: 'rcpt', code: 550, text: 'relaying denied for <example@example.com>', expected: 'LocalEndPointRejected', source: sfm(550, 'Verizon'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.7.1 Relaying denied', expected: 'LocalEndPointRejected', source: sfm(550, 'Proofpoint'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 553, text: 'Relaying disallowed,mx.zoho.com', expected: 'LocalEndPointRejected', source: sfm(553, 'Zoho'), note: PHASE_UNRECORDED },
  {
    phase: 'rcpt', code: 553, expected: 'LocalEndPointRejected', source: sfm(553, 'Symantec Email Security.cloud'), note: PHASE_UNRECORDED,
    text: 'you are trying to use me [xx.messagelabs.com] as a relay, but I have not been configured to let you [x.xx.xx.xx, example.com] do this. Please visit www.symanteccloud.com/troubleshooting for more details about this error message and instructions to resolve this issue. (#5.7.1)',
  },
  { phase: 'rcpt', code: 550, text: '5.7.1 Unable to relay', expected: 'LocalEndPointRejected', rule: 'wording', source: 'Exchange 5.7.1 "Unable to relay" (sisimai/rb-sisimai lib/sisimai/rhost/exchangeonline.rb)' },
  { phase: 'rcpt', code: 554, text: '<foo@watson.ibm.com>: Recipient address rejected: Relay access denied', expected: 'LocalEndPointRejected', rule: 'wording', source: POSTFIX_REF },
  { phase: 'rcpt', code: 554, text: '<bad.domain>: Helo command rejected: match bad.domain', expected: 'LocalEndPointRejected', rule: 'wording', source: `${POSTFIX_REF} (HELO restriction delayed to RCPT)` },
  {
    phase: 'rcpt', code: 550, expected: 'LocalEndPointRejected', source: `Outlook.com, ${gh('MicrosoftDocs/OfficeDocs-O365ITPro/issues/661')}`,
    text: "5.7.1 Unfortunately, messages from [104.130.122.30] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3140). You can also refer your provider to http://mail.live.com/mail/troubleshooting.aspx#errors. [HE1EUR04FT035.eop-eur04.prod.protection.outlook.com]",
  },
  {
    phase: 'rcpt', code: 550, expected: 'LocalEndPointRejected', rule: 'wording', source: sfm(550, 'Gmail'), note: PHASE_UNRECORDED,
    text: '5.7.1 [x.xx.xx.xx] Our system has detected that this message is likely suspicious due to the very low reputation of the sending domain. To best protect our users from spam, the message has been blocked. Please visit https://support.google.com/mail/answer/188131 for more information. - gsmtp',
  },
  { phase: 'rcpt', code: 550, text: '5.7.1 Service unavailable, MailFrom domain is listed in Spamhaus. To request removal from this list see https://www.spamhaus.org/query/lookup/ (S8002) [#.eop-nam02.prod.protection.outlook.com]', expected: 'LocalEndPointRejected', rule: 'wording', source: sfm(550, 'Outlook'), note: 'a listed sender domain: blocklist wording is reputation, and reputation comes first (§6)' },
  { phase: 'rcpt', code: 550, text: '5.7.1 Your email was rejected due to having a domain present in the Spamhaus DBL -- see https://www.spamhaus.org/dbl/', expected: 'LocalEndPointRejected', source: sfm(550, 'iCloud'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.7.1 Connections not accepted from servers without a valid sender example.com. Fix reverse DNS for x.xx.xx.xx', expected: 'LocalEndPointRejected', rule: 'wording', source: sfm(550, 'AT&T'), note: 'reputation wording wins over "valid sender"' },
  { phase: 'rcpt', code: 550, text: '5.7.1 [CS01] Message rejected due to local policy. Please visit https://support.apple.com/en-us/HT204137', expected: 'LocalEndPointRejected', rule: 'bare-5.7', source: sfm(550, 'iCloud'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 554, text: '5.7.9 Message not accepted for policy reasons. See https://help.yahoo.com/kb/postmaster/SLN7253.html', expected: 'LocalEndPointRejected', rule: 'bare-5.7', source: sfm(554, 'Verizon Media (Yahoo)'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.7.1 Policy rejection on the target address', expected: 'LocalEndPointRejected', rule: 'bare-5.7', source: sfm(550, 'Yandex'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 554, text: '5.7.1 <example@example.com>: Recipient address rejected: BLOCK-SEND-ER.', expected: 'LocalEndPointRejected', rule: 'bare-5.7', source: sfm(554, 'Trend Micro'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.7.708 Access denied, traffic not accepted from this IP', expected: 'LocalEndPointRejected', rule: 'wording', source: `Exchange Online, ${gh('MicrosoftDocs/OfficeDocs-Exchange/issues/1745')}` },
  { phase: 'rcpt', code: 550, text: '5.7.511 Access denied, banned sender[xxx.xxx.xxx.xxx].', expected: 'LocalEndPointRejected', rule: 'bare-5.7', source: `Exchange Online, ${gh('MicrosoftDocs/microsoft-365-docs/pull/7619')}` },
  { phase: 'rcpt', code: 550, text: '5.7.513 Service unavailable, Client host [$ConnectingIP] blocked by $recipientDomain using Customer Block list (AS16012607)', expected: 'LocalEndPointRejected', rule: 'wording', source: `Exchange Online NDR table, ${gh('MicrosoftDocs/OfficeDocs-Exchange/pull/1230')}` },
  { phase: 'rcpt', code: 550, text: '5.7.28 There is an unusual rate of unsolicited mail originating from your IP address. To protect our users from spam, mail sent from your IP address has been blocked.', expected: 'LocalEndPointRejected', rule: 'wording', source: GOOGLE },
  { phase: 'rcpt', code: 550, text: "5.7.1 The IP you're using to send mail is not authorized to send email directly to our servers. Use the SMTP relay at your service provider instead.", expected: 'LocalEndPointRejected', rule: 'wording', source: GOOGLE },
  { phase: 'rcpt', code: 550, text: '5.7.25 The IP address sending this message does not have a PTR record setup, or the corresponding forward DNS entry does not point to the sending IP. As a policy, Gmail does not accept messages from IPs with missing PTR records.', expected: 'LocalEndPointRejected', rule: 'enhanced-5.7.25', source: GOOGLE },
  { phase: 'rcpt', code: 550, text: 'Ip frequency limited [V2VkIEFwciAgMyAxNjozNjo1OSBKU1QgMjAxOQo=/RkNGMjlFQTVEQ0E Blocked IP 192.0.2.22]. http://service.mail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000725', expected: 'LocalEndPointRejected', rule: 'wording', source: 'QQ Mail (sisimai/rb-sisimai set-of-emails/maildir/bsd/rhost-tencent-01.eml)', note: 'given after DATA in the sample' },

  // ---------------------------------------------------------------- RCPT: our sender is refused
  {
    phase: 'rcpt', code: 550, expected: 'LocalSenderAddressRejected', rule: 'enhanced-sender', source: `Gmail, ${gh('Purelymail/purelymail-issues/issues/394')}`,
    text: "5.7.26 Unauthenticated email from branan.org is not accepted due to domain's DMARC policy. Please contact the administrator of branan.org domain if this was a legitimate mail. To learn about the DMARC initiative, go to https://support.google.com/mail/?p=DmarcRejection 38308e7fff4ca-389f2f1fdd7sor3282081fa.1 - gsmtp",
  },
  {
    phase: 'rcpt', code: 550, expected: 'LocalSenderAddressRejected', rule: 'wording', source: sfm(550, 'Gmail'), note: PHASE_UNRECORDED,
    text: "5.7.1 Unauthenticated email from example.com is not accepted due to domain's DMARC policy. Please contact the administrator of example.com domain if this was a legitimate mail. Please visit https://support.google.com/mail/answer/2451690 to learn about the DMARC initiative. - gsmtp",
  },
  { phase: 'rcpt', code: 550, text: '5.7.26 Your email has been blocked because the sender is unauthenticated.', expected: 'LocalSenderAddressRejected', rule: 'enhanced-sender', source: `Gmail, ${gh('hmailserver/hmailserver/issues/491')}` },
  { phase: 'rcpt', code: 550, text: '5.7.24 The SPF record of the sending domain has one or more suspicious entries. For more information, go to Email sender guidelines.', expected: 'LocalSenderAddressRejected', rule: 'enhanced-sender', source: GOOGLE },
  { phase: 'rcpt', code: 550, text: '5.7.1 Your message was rejected due to reservation-example.com’s DMARC policy. See https://support.apple.com/en-us/HT204137 for info', expected: 'LocalSenderAddressRejected', rule: 'wording', source: sfm(550, 'iCloud'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.2.0 Message rejected due to DMARC. Please see http://postmaster.comcast.net/smtp-error-codes.php#DM000001', expected: 'LocalSenderAddressRejected', source: sfm(550, 'Comcast'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.7.1 Email rejected per DMARC policy for mail.ru', expected: 'LocalSenderAddressRejected', source: sfm(550, 'Yandex'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: '5.7.1 Email rejected per DMARC policy for zoho.com', expected: 'LocalSenderAddressRejected', source: sfm(550, 'Zoho'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'DMARC check failed. http://service.mail.qq.com/cgi-bin/help?subtype=1&&no=1001508&&id=16.', expected: 'LocalSenderAddressRejected', rule: 'wording', source: 'QQ Mail (sisimai/rb-sisimai set-of-emails/maildir/bsd/rhost-tencent-03.eml)', note: 'given after DATA in the sample' },
  { phase: 'rcpt', code: 550, text: 'Administrative prohibition - envelope blocked - https://community.mimecast.com/docs/DOC-1369#550 [#]', expected: 'LocalSenderAddressRejected', rule: 'wording', source: sfm(550, 'Mimecast'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'Rejected by header based Anti-Spoofing policy: email@example.com - https://community.mimecast.com/docs/DOC-1369#550 [#]', expected: 'LocalSenderAddressRejected', source: sfm(550, 'Mimecast'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'Rejected by header based manually Blocked Senders: email@example.com - https://community.mimecast.com/docs/DOC-1369#550 [#]', expected: 'LocalSenderAddressRejected', source: sfm(550, 'Mimecast'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'Envelope blocked - User Entry - https://community.mimecast.com/docs/DOC-1369#550 [#]', expected: 'LocalSenderAddressRejected', source: sfm(550, 'Mimecast'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'rejecting spoofed message', expected: 'LocalSenderAddressRejected', source: sfm(550, 'Barracuda'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 550, text: 'Verification failed for <backoffice@Ydomain.lu>\nUnrouteable address\nSender verify failed', expected: 'LocalSenderAddressRejected', rule: 'wording', source: `Exim, ${gh('PHPMailer/PHPMailer/issues/1187')} ("The following recipients failed")`, note: 'sender wording wins over "Unrouteable address"' },
  { phase: 'rcpt', code: 550, text: 'Verification failed for <user@example.com>\nThe mail server does not recognize user@example.com as a valid sender.\nSender verify failed', expected: 'LocalSenderAddressRejected', source: `Exim, ${gh('docker-mailserver/docker-mailserver/issues/2257')}` },
  { phase: 'rcpt', code: 554, text: '<foo@bad.domain>: Sender address rejected: match bad.domain', expected: 'LocalSenderAddressRejected', rule: 'wording', source: `${POSTFIX_REF} (sender restriction delayed to RCPT)` },
  { phase: 'rcpt', code: 550, text: '5.1.0 <baz@example.com>: Sender address rejected: User unknown in local recipient table', expected: 'LocalSenderAddressRejected', rule: 'wording', source: MAILROUTE, note: 'generic 5.1.0 and "User unknown" lose to sender wording' },
  { phase: 'rcpt', code: 550, text: '5.7.27 <sname@nullmx.porcupine.org>: Sender address rejected: Domain nullmx.porcupine.org does not accept mail', expected: 'LocalSenderAddressRejected', rule: 'enhanced-sender', source: `${MAILROUTE}; AfterShip/email-verifier#133 (smtp-anchors.md §1)` },
  { phase: 'rcpt', code: 554, text: '5.1.8 <user@no.sender.domain>: Sender address rejected: Domain not found', expected: 'LocalSenderAddressRejected', rule: 'enhanced-sender', source: MAILROUTE },

  // ---------------------------------------------------------------- RCPT: SMTPUTF8
  { phase: 'rcpt', code: 553, text: '5.6.7 Must declare SMTPUTF8 to send unicode address', expected: 'ServerDoesNotSupportInternationalMailboxes', rule: 'enhanced-5.6.7', source: MAILROUTE },
  { phase: 'rcpt', code: 553, text: 'Non-ASCII addresses not permitted for that sender/recipient', expected: 'ServerDoesNotSupportInternationalMailboxes', rule: 'wording', source: 'RFC 6531, IANA registration of X.6.7 (sample text, with 553)', note: 'the registered text without an enhanced code' },

  // ---------------------------------------------------------------- RCPT: mailbox full
  { phase: 'rcpt', code: 452, text: '4.2.2 The email account that you tried to reach is over quota. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaTemp - gsmtp', expected: 'MailboxHasInsufficientStorage', rule: 'enhanced-x.2.2', source: sfm(452, 'Google'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 452, text: "4.2.2 The recipient's inbox is out of storage space. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaTemp", expected: 'MailboxHasInsufficientStorage', rule: 'enhanced-x.2.2', source: GOOGLE },
  { phase: 'rcpt', code: 552, text: '5.2.2 The email account that you tried to reach is over quota. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaPerm - gsmtp', expected: 'MailboxHasInsufficientStorage', rule: 'enhanced-x.2.2', source: sfm(552, 'Google'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 552, text: '5.2.2 Mailbox size limit exceeded', expected: 'MailboxHasInsufficientStorage', source: sfm(552, 'Yandex'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 552, text: '5.2.2 <example@icloud.com>: user is overquota', expected: 'MailboxHasInsufficientStorage', source: sfm(552, 'Apple'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 552, text: '5.2.2 user quota exceeded (UserSearch)', expected: 'MailboxHasInsufficientStorage', source: sfm(552, 'Free'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 554, text: '5.2.2 <example@free.fr>: Recipient address rejected: Quota exceeded (mailbox for user is full)', expected: 'MailboxHasInsufficientStorage', rule: 'enhanced-x.2.2', source: sfm(554, 'Free'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 552, text: '5.1.1 Boite du destinataire pleine. Recipient overquota. OFR_417 [417]', expected: 'MailboxHasInsufficientStorage', rule: 'wording', source: sfm(552, 'Orange'), note: 'generic 5.1.1 loses to quota wording' },
  { phase: 'rcpt', code: 552, text: '5.1.1 <example@comcast.net> recipient rejected - extended quota violation', expected: 'MailboxHasInsufficientStorage', rule: 'wording', source: sfm(552, 'Comcast'), note: 'generic 5.1.1 loses to quota wording' },
  { phase: 'rcpt', code: 552, text: 'Requested mail action aborted: exceeded storage allocation Quota exceeded.', expected: 'MailboxHasInsufficientStorage', rule: 'wording', source: sfm(552, 'GMX'), note: 'Reacher missed this wording (reacherhq/check-if-email-exists#1464)' },

  // ---------------------------------------------------------------- RCPT: too many recipients
  { phase: 'rcpt', code: 452, text: '4.5.3 Too many recipients (AS780090) [SN1NAM02FT003.eop-nam02.prod.protection.outlook.com]', expected: 'ServerDoesNotAllowMultipleRecipients', rule: 'enhanced-x.5.3', source: `Exchange Online, ${gh('reacherhq/check-if-email-exists/issues/569')}` },
  { phase: 'rcpt', code: 452, text: '4.5.3 Recipients belong to multiple regions ATTR38 [DM6NAM11FT074.eop-nam11.prod.protection.outlook.com 2023-10-28T12:19:33.163Z 08DBD79CFB305B7E]', expected: 'ServerDoesNotAllowMultipleRecipients', rule: 'enhanced-x.5.3', source: `Outlook.com, ${gh('Mailu/Mailu/issues/3013')} (in reply to RCPT TO)` },
  { phase: 'rcpt', code: 452, text: '4.5.3 Error: too many recipients', expected: 'ServerDoesNotAllowMultipleRecipients', rule: 'enhanced-x.5.3', source: MAILROUTE },
  { phase: 'rcpt', code: 452, text: '#4.5.3 Too many recipients.', expected: 'ServerDoesNotAllowMultipleRecipients', rule: 'transient-wording', source: gh('jakartaee/mail-api/issues/20') },
  { phase: 'rcpt', code: 452, text: '4.5.3 Domain policy size per transaction exceeded, please try this recipient in a separate transaction.', expected: 'ServerDoesNotAllowMultipleRecipients', rule: 'enhanced-x.5.3', source: GOOGLE },

  // ---------------------------------------------------------------- RCPT: other temporary answers
  { phase: 'rcpt', code: 450, text: '4.2.0 <mirabellug@aful.org>: Recipient address rejected: Greylisted,\nsee http://postgrey.schweikert.ch/help/aful.org.html', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-default', source: `postgrey, ${gh('schweikert/postgrey/issues/84')} (after RCPT TO)` },
  { phase: 'rcpt', code: 450, text: '4.2.0 <phma@bezitopo.org>: Recipient address rejected: Greylisted', expected: 'MailboxTemporarilyUnavailable', source: `postgrey, ${gh('schweikert/postgrey/issues/82')} ("reject: RCPT")` },
  { phase: 'rcpt', code: 450, text: '4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered. Please resend your message at a later time. If the user is able to receive mail at that time, your message will be delivered. For more information, please visit https://support.google.com/mail/?p=ReceivingRate - gsmtp', expected: 'MailboxTemporarilyUnavailable', source: sfm(450, 'Google'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 450, text: 'User is receiving mail too quickly', expected: 'MailboxTemporarilyUnavailable', source: sfm(450, 'Verizon Media (Yahoo)'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 450, text: '4.7.3 Organization queue quota exceeded. [outlook.com]', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-default', source: sfm(450, 'Outlook'), note: 'a queue quota, not the mailbox\'s' },
  { phase: 'rcpt', code: 450, text: '4.2.1 The recipient has exceeded message rate limit. Try again later.', expected: 'MailboxTemporarilyUnavailable', source: sfm(450, 'Yandex'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 450, text: '4.1.8 Sender address rejected: Domain not found', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-wording', source: `${sfm(450, 'Infomaniak')} (in reply to RCPT TO)` },
  { phase: 'rcpt', code: 451, text: '4.1.8 <sender@nxdomain.example>... Domain of sender address sender@nxdomain.example does not resolve', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-wording', source: 'Sendmail cf/m4/proto.m4 ("451 Domain of sender address " $&f " does not resolve", 4.1.8)', note: 'the sender is a placeholder' },
  { phase: 'rcpt', code: 450, text: '4.2.0 <example@comcast.net> - Recipient temporarily unavailable', expected: 'MailboxTemporarilyUnavailable', source: sfm(450, 'Comcast'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 450, text: 'cuda_nsu 4.7.1 <email@example.com>: Recipient address rejected: Policy Rejection- Abuse. Go away.', expected: 'MailboxTemporarilyUnavailable', source: sfm(450, 'Barracuda'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 450, text: '4.2.0 <email@example.com>: Recipient address rejected: example.com greylisted for 60 seconds by ZEROSPAM', expected: 'MailboxTemporarilyUnavailable', source: sfm(450, 'ZeroSpam'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 451, text: 'Open relay not allowed - https://community.mimecast.com/docs/DOC-1369#451 [#]', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-wording', source: sfm(451, 'Mimecast'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 451, text: 'Internal resource temporarily unavailable - https://community.mimecast.com/docs/DOC-1369#451 [#]', expected: 'MailboxTemporarilyUnavailable', source: sfm(451, 'Mimecast'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 451, text: 'Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#451 [#]', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-wording', source: sfm(451, 'Mimecast'), note: 'user-unknown wording on a 4xx stays temporary' },
  { phase: 'rcpt', code: 451, text: '4.7.0 Temporary server error. Please try again later. PRX4 NextHop: example.com [example.com]', expected: 'MailboxTemporarilyUnavailable', source: sfm(451, 'Office 365'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 451, text: '4.7.1 <email@example.com>: Recipient address rejected: Greylisted for 5 minutes', expected: 'MailboxTemporarilyUnavailable', source: sfm(451, 'Barracuda'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 451, text: '4.7.650 The mail server [167.89.12.138] has been temporarily rate limited due to IP reputation. For e-mail delivery information, see https://postmaster.live.com (S3113) [VI1EUR06FT038.eop-eur06.prod.protection.outlook.com]', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-wording', source: `Outlook.com, ${gh('sendgrid/docs/issues/6275')}` },
  { phase: 'rcpt', code: 451, text: 'Temporary local problem - please try later', expected: 'MailboxTemporarilyUnavailable', source: `Exim, ${gh('postalserver/postal/issues/546')}` },
  { phase: 'rcpt', code: 451, text: '4.2.1 Mailbox busy, try again later', expected: 'MailboxTemporarilyUnavailable', source: gh('roundcube/roundcubemail/issues/7448') },
  { phase: 'rcpt', code: 452, text: 'temporary domain failure <example@example.com>', expected: 'MailboxTemporarilyUnavailable', source: sfm(452, 'Yahoo'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 450, text: '4.1.1 Recipient address rejected: unverified address: try again', expected: 'MailboxTemporarilyUnavailable', source: 'Postfix address verification (smtp-anchors.md §1)' },
  { phase: 'rcpt', code: 450, text: 'Client host rejected: cannot find your hostname, [131.155.210.17]', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-wording', source: `${POSTFIX_REF} (RCPT)` },
  { phase: 'rcpt', code: 450, text: '4.7.25 Client host rejected: cannot find your hostname, [147.75.45.223]', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-wording', source: REACHER('Postfix'), note: REACHER_CODE },
  { phase: 'rcpt', code: 450, text: 'You dont seem to have a reverse dns entry. Come back later. You are greylisted for 20 minutes. See http://www.fsf.org/about/systems/greylisting', expected: 'MailboxTemporarilyUnavailable', source: REACHER('fsf.org'), note: REACHER_CODE },
  { phase: 'rcpt', code: 450, text: '4.7.1 Error: too many recipients from <detail>', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-default', source: MAILROUTE, note: 'a per-client rate (anvil), not a per-message limit' },
  { phase: 'rcpt', code: 450, text: '4.7.1 Unable to Relay. ATTR14', expected: 'MailboxTemporarilyUnavailable', rule: 'transient-wording', source: `Outlook, ${gh('ActiveCampaign/smtp-field-manual/pull/97')}` },
  // 4.3.x / 4.4.x: the server, not the mailbox.
  { phase: 'rcpt', code: 451, text: '4.4.4 Temporary server error. Please try again later', expected: 'ServerTemporaryUnavailable', rule: 'transient-4.3-4.4', source: `Exchange Online, ${gh('reacherhq/check-if-email-exists/issues/1334')} (smtp-anchors.md §1)` },
  { phase: 'rcpt', code: 452, text: '4.3.1 Insufficient system resources (TSTE) [outlook.com]', expected: 'ServerTemporaryUnavailable', rule: 'transient-4.3-4.4', source: sfm(452, 'Microsoft'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 452, text: '4.3.1 Insufficient system storage', expected: 'ServerTemporaryUnavailable', rule: 'transient-4.3-4.4', source: 'RFC 5321 §4.2.3 452 text with RFC 3463 4.3.1 (smtp-anchors.md §1)' },
  { phase: 'rcpt', code: 451, text: '4.3.0 Mail server temporarily rejected message. - gsmtp', expected: 'ServerTemporaryUnavailable', rule: 'transient-4.3-4.4', source: sfm(451, 'Gmail'), note: PHASE_UNRECORDED },
  { phase: 'rcpt', code: 451, text: '4.3.0 Multiple destination domains per transaction is unsupported. Please try again.', expected: 'ServerTemporaryUnavailable', rule: 'transient-4.3-4.4', source: GOOGLE },
  { phase: 'rcpt', code: 451, text: '4.3.5 <reject@dunno.domain>: Recipient address rejected: Server configuration error', expected: 'ServerTemporaryUnavailable', rule: 'transient-4.3-4.4', source: MAILROUTE },
  { phase: 'rcpt', code: 451, text: '4.3.5 <foo.dunno.com[131.155.210.17]>: Client host rejected: Server configuration error', expected: 'ServerTemporaryUnavailable', rule: 'transient-4.3-4.4', source: MAILROUTE, note: 'the code decides before the reputation wording' },

  // ---------------------------------------------------------------- RCPT: protocol errors
  { phase: 'rcpt', code: 503, text: '5.5.1 Error: need MAIL command', expected: 'SmtpDialogError', rule: 'protocol-error', source: MAILROUTE },
  { phase: 'rcpt', code: 503, text: '5.5.1 Bad sequence of commands.', expected: 'SmtpDialogError', rule: 'protocol-error', source: GOOGLE },
  { phase: 'rcpt', code: 500, text: '5.5.2 Error: bad syntax', expected: 'SmtpDialogError', rule: 'protocol-error', source: MAILROUTE },
];
