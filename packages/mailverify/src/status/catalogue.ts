/**
 * The status catalogue: every validation status of the service (2.x and legacy 1.4), the groups behind the legacy
 * boolean shorthands, and the default classification of each status.
 *
 * Names are exact (the service's "Validation status codes" and "Legacy status codes"); a test compares this table
 * with a copy of that text (test/fixtures/service-api.md). Groups follow the order of the legacy list, where the
 * statuses are grouped syntax / DNS / SMTP / mailbox / catch-all; timeout and network cut across them. Statuses that
 * exist only in 2.x are placed by analogy, noted per row. Classifications: docs/verification.md#classification.
 */

export type StatusGroup = 'syntax' | 'dns' | 'smtp' | 'mailbox' | 'catchAll' | 'timeout' | 'network';
export type Classification = 'Deliverable' | 'Risky' | 'Undeliverable' | 'Unknown';

interface StatusRow {
  /** Groups behind the legacy shorthands (`isSyntaxFailure`, `isDnsFailure`, ...). */
  readonly groups: readonly StatusGroup[];
  /** Default classification. Duplicate and OverrideMatch take theirs from elsewhere. */
  readonly classification: Classification;
  /** Present in the 2.x catalogue. */
  readonly current: boolean;
  /** Present in the legacy 1.4 catalogue. */
  readonly legacy: boolean;
}

const row = (
  groups: readonly StatusGroup[],
  classification: Classification,
  current = true,
  legacy = true,
): StatusRow => ({ groups, classification, current, legacy });

/** One row per status. `current`/`legacy` say which of the service's catalogues lists it. */
const TABLE = {
  Success: row([], 'Deliverable'),
  // Syntax (legacy list, second group).
  AtSignNotFound: row(['syntax'], 'Undeliverable'),
  DoubleDotSequence: row(['syntax'], 'Undeliverable'),
  DomainPartCompliancyFailure: row(['syntax'], 'Undeliverable'),
  InvalidAddressLength: row(['syntax'], 'Undeliverable'),
  InvalidCharacterInSequence: row(['syntax'], 'Undeliverable'),
  InvalidEmptyQuotedWord: row(['syntax'], 'Undeliverable'),
  InvalidFoldingWhiteSpaceSequence: row(['syntax'], 'Undeliverable'),
  InvalidLocalPartLength: row(['syntax'], 'Undeliverable'),
  InvalidWordBoundaryStart: row(['syntax'], 'Undeliverable'),
  IspSpecificSyntaxFailure: row(['syntax'], 'Undeliverable'),
  UnbalancedCommentParenthesis: row(['syntax'], 'Undeliverable'),
  UnexpectedQuotedPairSequence: row(['syntax'], 'Undeliverable'),
  UnmatchedQuotedPair: row(['syntax'], 'Undeliverable'),
  // 2.x only; parseAddress reports malformed literals with it, so it counts as syntax.
  UnacceptableDomainLiteral: row(['syntax'], 'Undeliverable', true, false),
  // Disposable providers: no failure group in the legacy list.
  DomainIsWellKnownDea: row([], 'Risky'),
  MailExchangerIsWellKnownDea: row([], 'Risky', true, false),
  MailboxIsDea: row([], 'Risky', true, false),
  // DNS (legacy list, fourth group).
  DomainDoesNotExist: row(['dns'], 'Undeliverable'),
  DnsQueryTimeout: row(['dns', 'timeout'], 'Unknown'),
  DnsConnectionFailure: row(['dns', 'network'], 'Unknown'),
  DomainIsMisconfigured: row(['dns'], 'Undeliverable'),
  // 2.1+, a DNS answer.
  DomainHasNullMx: row(['dns'], 'Undeliverable', true, false),
  // 2.4+, judged from the MX host names, like the DNS group.
  MailExchangerIsParked: row(['dns'], 'Risky', true, false),
  // SMTP (legacy list, fifth group).
  SmtpConnectionTimeout: row(['smtp', 'timeout'], 'Unknown'),
  SmtpConnectionFailure: row(['smtp', 'network'], 'Unknown'),
  SmtpDialogError: row(['smtp'], 'Unknown'),
  LocalEndPointRejected: row(['smtp'], 'Unknown'),
  // 2.x only: a server-level temporary condition.
  ServerTemporaryUnavailable: row(['smtp'], 'Unknown', true, false),
  // Mailbox (legacy list, sixth group).
  MailboxDoesNotExist: row(['mailbox'], 'Undeliverable'),
  MailboxConnectionFailure: row(['mailbox', 'network'], 'Unknown', false, true),
  LocalSenderAddressRejected: row(['mailbox'], 'Unknown'),
  MailboxValidationTimeout: row(['mailbox', 'timeout'], 'Unknown'),
  MailboxTemporarilyUnavailable: row(['mailbox'], 'Unknown'),
  ServerDoesNotSupportInternationalMailboxes: row(['mailbox'], 'Unknown'),
  MailExchangerIsHoneypot: row(['mailbox'], 'Risky'),
  // 2.x only: a mailbox answer.
  MailboxHasInsufficientStorage: row(['mailbox'], 'Risky', true, false),
  // Catch-all (legacy list, seventh group).
  CatchAllValidationTimeout: row(['catchAll', 'timeout'], 'Unknown'),
  ServerIsCatchAll: row(['catchAll'], 'Risky'),
  CatchAllConnectionFailure: row(['catchAll', 'network'], 'Unknown', false, true),
  // 2.x only: the fake-recipient test could not run.
  ServerDoesNotAllowMultipleRecipients: row(['catchAll'], 'Unknown', true, false),
  Duplicate: row([], 'Unknown'),
  // 2.5+.
  OverrideMatch: row([], 'Unknown', true, false),
  UnhandledException: row([], 'Unknown'),
} as const satisfies Record<string, StatusRow>;

export type StatusCode = keyof typeof TABLE;

/** Every status name, 2.x and legacy, in catalogue order. */
export const STATUS_CODES: readonly StatusCode[] = Object.freeze(Object.keys(TABLE) as StatusCode[]);

/** Statuses of the 2.x catalogue. */
export const CURRENT_STATUS_CODES: readonly StatusCode[] = Object.freeze(
  STATUS_CODES.filter((s) => TABLE[s].current),
);

/** Statuses of the legacy 1.4 catalogue. */
export const LEGACY_STATUS_CODES: readonly StatusCode[] = Object.freeze(STATUS_CODES.filter((s) => TABLE[s].legacy));

/** The statuses `parseAddress` can return. */
export type SyntaxStatus =
  | 'AtSignNotFound'
  | 'DoubleDotSequence'
  | 'DomainPartCompliancyFailure'
  | 'InvalidAddressLength'
  | 'InvalidCharacterInSequence'
  | 'InvalidEmptyQuotedWord'
  | 'InvalidFoldingWhiteSpaceSequence'
  | 'InvalidLocalPartLength'
  | 'InvalidWordBoundaryStart'
  | 'IspSpecificSyntaxFailure'
  | 'UnbalancedCommentParenthesis'
  | 'UnexpectedQuotedPairSequence'
  | 'UnmatchedQuotedPair'
  | 'UnacceptableDomainLiteral';

export function isStatusCode(value: unknown): value is StatusCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(TABLE, value);
}

/** The groups a status belongs to (for the legacy shorthands). */
export function groupsOf(status: StatusCode): readonly StatusGroup[] {
  return lookup(status).groups;
}

/** True when `status` belongs to `group`. */
export function isInGroup(status: StatusCode, group: StatusGroup): boolean {
  return lookup(status).groups.includes(group);
}

/**
 * The default classification of a status (docs/verification.md#classification). `Duplicate` and `OverrideMatch` have no
 * classification of their own (they take the duplicated entry's or the rule's); alone they give `Unknown`.
 */
export function classificationOf(status: StatusCode): Classification {
  return lookup(status).classification;
}

function lookup(status: StatusCode): StatusRow {
  if (!isStatusCode(status)) {
    throw new TypeError(`mailverify: unknown status code ${JSON.stringify(status)}; expected one of STATUS_CODES`);
  }
  return TABLE[status];
}
