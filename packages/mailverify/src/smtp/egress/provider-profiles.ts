/**
 * Built-in provider profiles: which mail exchangers belong to one provider (matched on the MX host name), and how hard one
 * egress may press that provider. Rows are tried in order and the first row with a matching pattern wins, so narrower
 * patterns come before broader ones. Every figure is per egress × provider: one source address, all of the provider's
 * exchangers together.
 *
 * Almost no provider publishes a limit for mail it receives from one sending address; where none is published the figures
 * are conservative defaults, and `limitsSource` says why.
 */

/** A provider profile: which exchangers are one provider's, and how hard one egress may press it. */
export interface ProviderProfile {
  /** 1–64 characters of [A-Za-z0-9._-]. */
  readonly id: string;
  /** Wildcard patterns over the exchanger's host name (lower case, no final dot): `*` any run of characters, `?` one character. */
  readonly match: readonly string[];
  /** The egress ids this provider may use (default: all). Built-in rows leave it out. */
  readonly egress?: readonly string[];
  /** Connections open at once per egress to all of this provider's exchangers. */
  readonly maxConnectionsPerEgress?: number;
  /** RCPT commands per egress in any 60 s. */
  readonly recipientsPerMinute?: number;
  /** RCPT commands per egress in any 24 h. */
  readonly recipientsPerDay?: number;
}

/** A row of the built-in table, with where its patterns and figures come from. */
export interface BuiltInProviderProfile extends ProviderProfile {
  /** Public URLs (the provider's own documentation first) that show its MX host names. */
  readonly mxSource: readonly string[];
  /**
   * Where the limits come from: a URL of published sending/receiving guidance, or the words "no published figure: "
   * followed by the reason for the conservative default chosen.
   */
  readonly limitsSource: string;
}

const REACHER_MX = 'https://github.com/reacherhq/check-if-email-exists/blob/master/core/src/mx/mod.rs';
const REACHER_THROTTLE = 'https://github.com/reacherhq/check-if-email-exists/blob/master/backend/backend_config.toml';
const MXSNIFF = 'https://github.com/jace/mxsniff/blob/main/mxsniff/providers.py';

export const PROVIDER_PROFILES: readonly BuiltInProviderProfile[] = [
  {
    // Gmail (gmail-smtp-in.l.google.com) and Workspace (smtp.google.com; before 2023 aspmx.l.google.com, altN.aspmx…).
    id: 'google',
    match: ['*.google.com', '*.googlemail.com'],
    maxConnectionsPerEgress: 3,
    recipientsPerMinute: 60,
    recipientsPerDay: 10000,
    mxSource: [
      'https://support.google.com/a/answer/174125',
      'https://github.com/hashicorp/terraform/issues/14021',
      'https://gist.github.com/ion1/344284',
      REACHER_MX,
    ],
    limitsSource:
      'no published figure: Google states no limit for mail from one sending address; the receiving limits at ' +
      'https://support.google.com/a/answer/1366776 (60 a minute, 3,600 an hour, 86,400 a day) are per receiving mailbox, ' +
      `not per sender. 60 RCPT a minute and 10,000 a day follow the per-worker throttle Reacher recommends (${REACHER_THROTTLE}); ` +
      '3 connections keep one address from looking like a bulk sender.',
  },
  {
    // Outlook.com, Hotmail, Live, MSN: <domain>-com / eur / nam / apc under olc.protection.outlook.com; mxN.hotmail.com is legacy.
    id: 'microsoft-consumer',
    match: ['*.olc.protection.outlook.com', 'mx?.hotmail.com'],
    maxConnectionsPerEgress: 2,
    recipientsPerMinute: 30,
    recipientsPerDay: 5000,
    mxSource: [
      REACHER_MX,
      'https://github.com/willwhite/freemail/pull/69',
      'https://github.com/Mailu/Mailu/issues/2934',
      'http://dnstree.com/hk/hotmail/',
    ],
    limitsSource:
      'no published figure: the Outlook.com sender policy (https://sendersupport.olc.protection.outlook.com/pm/policies.aspx) ' +
      'only caps a sender at 500 simultaneous connections and forbids verifying addresses without sending mail; no RCPT rate ' +
      'is published, so this row is set below the consumer default (2 connections, 30 a minute, 5,000 a day).',
  },
  {
    // Exchange Online: <domain-key>.mail.protection.outlook.com, and <domain-key>.<zone>.mx.microsoft for DNSSEC domains.
    id: 'microsoft-365',
    match: ['*.mail.protection.outlook.com', '*.mx.microsoft'],
    maxConnectionsPerEgress: 5,
    recipientsPerMinute: 120,
    recipientsPerDay: 20000,
    mxSource: [
      'https://learn.microsoft.com/en-us/microsoft-365/enterprise/urls-and-ip-address-ranges',
      'https://learn.microsoft.com/en-us/purview/how-smtp-dane-works',
      'https://techcommunity.microsoft.com/t5/exchange-team-blog/implementing-inbound-smtp-dane-with-dnssec-for-exchange-online/ba-p/3939694',
      'https://c7solutions.com/2024/02/what-is-mx-microsoft',
      REACHER_MX,
    ],
    limitsSource:
      'no published figure: Microsoft publishes no receiving limit per sending address for Exchange Online; the gateway ' +
      'fronts many tenants, so the business-gateway default (5 connections, 120 a minute, 20,000 a day) applies.',
  },
  {
    // Yahoo and AOL (AOL moved to Yahoo's yahoodns.net exchangers in 2018; mailin-0N.mx.aol.com is legacy).
    id: 'yahoo',
    match: ['*.yahoodns.net', '*.mx.aol.com', '*.biz.mail.yahoo.com'],
    maxConnectionsPerEgress: 2,
    recipientsPerMinute: 30,
    recipientsPerDay: 5000,
    mxSource: [
      REACHER_MX,
      MXSNIFF,
      'https://www.wordtothewise.com/2018/01/aol-mx-change-update',
      'https://suped.com/email-deliverability/answers/what-are-the-current-yahoo-mail-server-names-and-infrastructure',
    ],
    limitsSource:
      'no published figure: Yahoo publishes no inbound rate and defers with TSS04 ("unexpected volume"); Twilio SendGrid ' +
      'reports its default inbound rate appears to be about 100 messages an hour per IP ' +
      '(https://support.sendgrid.com/hc/en-us/articles/40452845387931-Improving-email-delivery-to-Yahoo-related-recipients), ' +
      'so this row is set below the consumer default (2 connections, 30 a minute, 5,000 a day).',
  },
  {
    // iCloud, me.com, mac.com and iCloud+ custom domains: mx01 / mx02.mail.icloud.com.
    id: 'apple-icloud',
    match: ['*.mail.icloud.com'],
    maxConnectionsPerEgress: 3,
    recipientsPerMinute: 60,
    recipientsPerDay: 10000,
    mxSource: [MXSNIFF],
    limitsSource:
      "no published figure: Apple's postmaster page (https://support.apple.com/en-us/102322) gives no rate or connection " +
      'limit; the consumer mailbox default (3 connections, 60 a minute, 10,000 a day) applies.',
  },
  {
    // Zoho Mail: mx / mx2 / mx3 under each data centre's domain; free personal accounts use smtpin*.zoho.com.
    id: 'zoho',
    match: [
      'mx*.zoho.com',
      'smtpin*.zoho.com',
      'mx*.zoho.eu',
      'mx*.zoho.in',
      'mx*.zoho.com.au',
      'mx*.zoho.jp',
      'mx*.zoho.com.cn',
      'mx*.zohocloud.ca',
      'mx*.zoho.sa',
    ],
    maxConnectionsPerEgress: 5,
    recipientsPerMinute: 120,
    recipientsPerDay: 20000,
    mxSource: [
      'https://www.zoho.com/mail/help/adminconsole/configure-email-delivery.html',
      'https://mxrecordchecker.com/resources/zoho-mx-records',
      'https://support.pfc-group.eu/portal/en/kb/articles/data-center-for-zoho-account',
      MXSNIFF,
    ],
    limitsSource:
      'no published figure: Zoho publishes no receiving limit per sending address; its exchangers serve many business ' +
      'domains, so the business-gateway default (5 connections, 120 a minute, 20,000 a day) applies.',
  },
  {
    // Yandex Mail (mx.yandex.ru) and Yandex 360 for domains (mx.yandex.net).
    id: 'yandex',
    match: ['mx.yandex.ru', 'mx.yandex.net'],
    maxConnectionsPerEgress: 3,
    recipientsPerMinute: 60,
    recipientsPerDay: 10000,
    mxSource: [
      'https://yandex.com.tr/support/kurum/set-mail/mx.html',
      'https://yandex.com/support/yandex-360/business/admin/en/mail/configuration',
      'https://github.com/firehol/blocklist-ipsets/issues/35',
      MXSNIFF,
    ],
    limitsSource:
      'no published figure: Yandex publishes no receiving limit per sending address; the consumer mailbox default ' +
      '(3 connections, 60 a minute, 10,000 a day) applies.',
  },
  {
    // Mail.ru, inbox.ru, list.ru, bk.ru (mxs.mail.ru) and Mail.ru for Business / VK WorkSpace domains (emx.mail.ru).
    id: 'mail-ru',
    match: ['mxs.mail.ru', 'emx.mail.ru'],
    maxConnectionsPerEgress: 3,
    recipientsPerMinute: 60,
    recipientsPerDay: 10000,
    // No Mail.ru page found that names them: a maintainer's statement and a DNS tool's documented values.
    mxSource: [
      'https://github.com/disposable-email-domains/disposable-email-domains/pull/160',
      'https://glama.ai/mcp/servers/badigit/beget-mcp/tools/mail_setup_mailru',
    ],
    limitsSource:
      'no published figure: Mail.ru publishes no receiving limit per sending address; the consumer mailbox default ' +
      '(3 connections, 60 a minute, 10,000 a day) applies.',
  },
  {
    // GMX (mx0N.gmx.net, mx0N.emig.gmx.net, gmx.com) and WEB.DE (mx-ha0N.web.de), both run by 1&1 Mail & Media.
    id: 'gmx-webde',
    match: ['*.gmx.net', '*.gmx.com', '*.web.de'],
    maxConnectionsPerEgress: 3,
    recipientsPerMinute: 60,
    recipientsPerDay: 10000,
    // Neither postmaster site lists its exchangers; mx-ha0N.web.de is the MX web.de publishes in DNS.
    mxSource: [MXSNIFF, 'https://github.com/reacherhq/check-if-email-exists/blob/master/core/src/smtp/parser.rs'],
    limitsSource:
      'no published figure: the GMX and WEB.DE sender requirements (https://postmaster.gmx.net/de/faq, ' +
      'https://postmaster.web.de/en/requirements-and-recommendations) give no rate or connection limit; the consumer ' +
      'mailbox default (3 connections, 60 a minute, 10,000 a day) applies.',
  },
  {
    // e.g. us-smtp-inbound-1.mimecast.com, za-smtp-inbound-1.mimecast.co.za, je-smtp-inbound-1.mimecast-offshore.com (Jersey).
    id: 'mimecast',
    match: ['*.mimecast.com', '*.mimecast.co.za', '*.mimecast-offshore.com'],
    maxConnectionsPerEgress: 5,
    recipientsPerMinute: 120,
    recipientsPerDay: 20000,
    mxSource: [
      'https://mimecastsupport.zendesk.com/hc/en-us/articles/34000417366675',
      REACHER_MX,
      MXSNIFF,
    ],
    limitsSource:
      'no published figure: Mimecast documents its SMTP error codes but no receiving limit per sending address; the ' +
      'gateway fronts many organisations, so the business-gateway default (5 connections, 120 a minute, 20,000 a day) applies.',
  },
  {
    // Proofpoint Enterprise (mx0a-…/mx0b-….pphosted.com) and Proofpoint Essentials (mx1-us1.ppe-hosted.com, …-eu1…).
    id: 'proofpoint',
    match: ['*.pphosted.com', '*.ppe-hosted.com'],
    maxConnectionsPerEgress: 5,
    recipientsPerMinute: 120,
    recipientsPerDay: 20000,
    // Proofpoint's public pages do not name these hosts (the Essentials article is behind a login).
    mxSource: [REACHER_MX, 'https://github.com/pect0ral/mail_recon', MXSNIFF],
    limitsSource:
      'no published figure: Proofpoint publishes no receiving limit per sending address; the gateway fronts many ' +
      'organisations, so the business-gateway default (5 connections, 120 a minute, 20,000 a day) applies.',
  },
  {
    // Email Gateway Defense: <customer-id>.ess.barracudanetworks.com; the second pattern takes a regional label after ess.
    id: 'barracuda',
    match: ['*.ess.barracudanetworks.com', '*.ess.*.barracudanetworks.com'],
    maxConnectionsPerEgress: 5,
    recipientsPerMinute: 120,
    recipientsPerDay: 20000,
    mxSource: ['https://www.captaindns.com/en/blog/barracuda-secure-email-gateway', MXSNIFF],
    limitsSource:
      'no published figure: Barracuda publishes no receiving limit per sending address; the gateway fronts many ' +
      'organisations, so the business-gateway default (5 connections, 120 a minute, 20,000 a day) applies.',
  },
];
