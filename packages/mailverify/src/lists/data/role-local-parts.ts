/**
 * Role local parts (the isRoleAccount flag): mailboxes of a function, not of a person. Matched on the local part
 * lower-cased, unquoted, before any `+tag`, with `.`, `-` and `_` removed, so `No-Reply`, `no_reply` and `noreply`
 * are one entry (see `roleKey` in lists.ts).
 *
 * Kept small on purpose. AfterShip's role.txt (889 lines, 888 distinct) and Reacher's roles.txt (a list of about the
 * same size) also hold words that are often a person's own mailbox or handle: first names and surnames (`dean`,
 * `chef`, `gardner`), titles (`president`, `captain`), places (`paris`, `sydney`), brands (`apple`, `facebook`),
 * years, and two-letter entries that are initials as often as departments (`ca`, `la`, `md`, `pm`). A false "role"
 * flag on a person's address costs more than a missed one, so only unambiguous functions are here; callers add the
 * rest through options. `hr`, `it` and `pr` stay in although `h.r` then matches too: they are the common department
 * addresses.
 */
import type { Sourced } from './sourced.js';

const AFTERSHIP = 'AfterShip/email-verifier cmd/build_metadata/role.txt @ 5d3666a4';
const REACHER = 'reacherhq/check-if-email-exists core/src/misc/roles.txt @ 16b8a29d';

export const ROLE_LOCAL_PARTS: readonly Sourced[] = [
  {
    names: ['info', 'marketing', 'sales', 'support'],
    source: 'RFC 2142 §3 (business-related mailbox names), https://www.rfc-editor.org/rfc/rfc2142#section-3',
  },
  {
    names: ['abuse', 'noc', 'security'],
    source: 'RFC 2142 §4 (network operations mailbox names), https://www.rfc-editor.org/rfc/rfc2142#section-4',
  },
  {
    names: ['postmaster', 'hostmaster', 'usenet', 'news', 'webmaster', 'www', 'uucp', 'ftp'],
    source:
      'RFC 2142 §5 (support mailbox names for specific Internet services), https://www.rfc-editor.org/rfc/rfc2142#section-5; ' +
      'postmaster is also required by RFC 5321 §4.5.1',
  },
  {
    names: ['root', 'mailer-daemon', 'nobody', 'noreply', 'list-request'],
    source: `${AFTERSHIP}; ${REACHER}`,
    note: 'system and automated senders; no-reply and no.reply are the same key as noreply',
  },
  {
    names: ['majordomo', 'listserv'],
    source: REACHER,
    note: 'mailing-list servers',
  },
  {
    names: [
      // administration and IT
      'admin', 'administrator', 'webadmin', 'sysadmin', 'it', 'itsupport', 'techsupport', 'helpdesk', 'phishing', 'spam',
      // contact points
      'contact', 'contactus', 'hello', 'help', 'service', 'customerservice', 'customercare', 'customersupport',
      'custserv', 'feedback', 'enquiries', 'enquiry', 'inquiries', 'inquiry', 'questions', 'office', 'headoffice',
      'frontdesk', 'reception',
      // money
      'billing', 'accounts', 'accounting', 'accountspayable', 'invoice', 'invoices', 'payments', 'payroll', 'finance',
      'orders', 'purchasing', 'procurement', 'shipping', 'returns',
      // people and press
      'team', 'staff', 'everyone', 'all', 'jobs', 'careers', 'career', 'hiring', 'recruiting', 'recruitment', 'hr',
      'humanresources', 'press', 'media', 'pr', 'communications', 'partners', 'partnerships', 'investors',
      'investorrelations', 'membership', 'admissions',
      // legal
      'legal', 'privacy', 'compliance',
      // bookings and lists
      'operations', 'reservations', 'booking', 'bookings', 'newsletter', 'subscribe', 'unsubscribe', 'notifications',
      'list',
    ],
    source: `${AFTERSHIP}; ${REACHER}`,
    note: 'functional addresses kept from both lists',
  },
  {
    names: [
      'kontakt', 'contacto', 'contato', 'ventas', 'vendas', 'verkauf', 'soporte', 'suporte', 'assistenza', 'presse',
      'rrhh', 'recrutement', 'comercial', 'buchhaltung', 'contabilidad', 'facturacion', 'verwaltung',
    ],
    source: `${AFTERSHIP}; ${REACHER}`,
    note: 'the same functions in German, Spanish, Portuguese, French and Italian',
  },
];
