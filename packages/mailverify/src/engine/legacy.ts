/**
 * Entries in the shape of the service's legacy 1.4 interface: its field set (no index, classification or
 * suggestions; `syntaxFailureIndex` always present, null when there is none), a legacy status for every 2.x one, and
 * the eight boolean shorthands of the status written.
 */
import { isInGroup, type StatusCode, type StatusGroup } from '../status/catalogue.js';
import type { Entry } from './entry.js';

/**
 * The nearest legacy status of each status the 1.4 catalogue lacks. Every other status is its own. Source: the
 * service's legacy status list; each row names the legacy status with the same meaning for a client of 1.4.
 */
export const LEGACY_STATUS_OF: Readonly<Partial<Record<StatusCode, StatusCode>>> = Object.freeze({
  // A malformed or non-global literal: the domain part fails, as 1.4 reported it.
  UnacceptableDomainLiteral: 'DomainPartCompliancyFailure',
  // A domain that declares it takes no mail, or whose exchangers are parking services: misconfigured for mail.
  DomainHasNullMx: 'DomainIsMisconfigured',
  MailExchangerIsParked: 'DomainIsMisconfigured',
  // Disposable mailboxes, however they were recognised.
  MailExchangerIsWellKnownDea: 'DomainIsWellKnownDea',
  MailboxIsDea: 'DomainIsWellKnownDea',
  // Temporary conditions of the mailbox or its server.
  MailboxHasInsufficientStorage: 'MailboxTemporarilyUnavailable',
  ServerTemporaryUnavailable: 'MailboxTemporarilyUnavailable',
  // The fake-recipient test could not run: reported as catch-all, as 1.4 did.
  ServerDoesNotAllowMultipleRecipients: 'ServerIsCatchAll',
  // An override rule's entry is written by its classification (OVERRIDE_STATUS_OF); this is the answer for a custom
  // classification, or when none is known.
  OverrideMatch: 'UnhandledException',
});

/**
 * The legacy status of an OverrideMatch entry, by the classification its rule named: the status that stands for that
 * classification in 1.4. Unknown and custom classifications: UnhandledException (LEGACY_STATUS_OF).
 */
export const OVERRIDE_STATUS_OF: Readonly<Record<string, StatusCode>> = Object.freeze({
  Deliverable: 'Success',
  Undeliverable: 'MailboxDoesNotExist',
  Risky: 'ServerIsCatchAll',
});

export interface LegacyEntry {
  inputData: string;
  status: StatusCode;
  completedOn: string;
  emailAddress?: string;
  asciiEmailAddressDomainPart?: string;
  emailAddressLocalPart?: string;
  emailAddressDomainPart?: string;
  hasInternationalDomainName?: boolean;
  hasInternationalMailboxName?: boolean;
  isDisposableEmailAddress?: boolean;
  isFreeEmailAddress?: boolean;
  isRoleAccount?: boolean;
  syntaxFailureIndex: number | null;
  custom?: string;
  duplicateOf?: number;
  isSuccess: boolean;
  isSyntaxFailure: boolean;
  isDnsFailure: boolean;
  isSmtpFailure: boolean;
  isMailboxFailure: boolean;
  isCatchAllFailure: boolean;
  isTimeoutFailure: boolean;
  isNetworkFailure: boolean;
}

/** The legacy status written for `status` (and, for OverrideMatch, the classification of the entry). */
export function legacyStatusOf(status: StatusCode, classification?: string): StatusCode {
  if (status === 'OverrideMatch' && classification !== undefined && Object.hasOwn(OVERRIDE_STATUS_OF, classification)) {
    return OVERRIDE_STATUS_OF[classification]!;
  }
  return LEGACY_STATUS_OF[status] ?? status;
}

/** The shorthands and the status groups they stand for, in the legacy entry's order. */
const SHORTHANDS: ReadonlyArray<readonly [keyof LegacyEntry, StatusGroup]> = [
  ['isSyntaxFailure', 'syntax'],
  ['isDnsFailure', 'dns'],
  ['isSmtpFailure', 'smtp'],
  ['isMailboxFailure', 'mailbox'],
  ['isCatchAllFailure', 'catchAll'],
  ['isTimeoutFailure', 'timeout'],
  ['isNetworkFailure', 'network'],
];

/** The legacy 1.4 form of an entry: fields in the legacy order, absent ones left out but `syntaxFailureIndex`. */
export function toLegacyEntry(entry: Entry): LegacyEntry {
  const status = legacyStatusOf(entry.status, entry.classification);
  const legacy = { inputData: entry.inputData, status, completedOn: entry.completedOn } as LegacyEntry;
  if (entry.emailAddress !== undefined) legacy.emailAddress = entry.emailAddress;
  if (entry.asciiEmailAddressDomainPart !== undefined) legacy.asciiEmailAddressDomainPart = entry.asciiEmailAddressDomainPart;
  if (entry.emailAddressLocalPart !== undefined) legacy.emailAddressLocalPart = entry.emailAddressLocalPart;
  if (entry.emailAddressDomainPart !== undefined) legacy.emailAddressDomainPart = entry.emailAddressDomainPart;
  if (entry.hasInternationalDomainName !== undefined) legacy.hasInternationalDomainName = entry.hasInternationalDomainName;
  if (entry.hasInternationalMailboxName !== undefined) legacy.hasInternationalMailboxName = entry.hasInternationalMailboxName;
  if (entry.isDisposableEmailAddress !== undefined) legacy.isDisposableEmailAddress = entry.isDisposableEmailAddress;
  if (entry.isFreeEmailAddress !== undefined) legacy.isFreeEmailAddress = entry.isFreeEmailAddress;
  if (entry.isRoleAccount !== undefined) legacy.isRoleAccount = entry.isRoleAccount;
  legacy.syntaxFailureIndex = entry.syntaxFailureIndex ?? null;
  if (entry.custom !== undefined) legacy.custom = entry.custom;
  if (entry.duplicateOf !== undefined) legacy.duplicateOf = entry.duplicateOf;
  legacy.isSuccess = status === 'Success';
  for (const [name, group] of SHORTHANDS) (legacy as unknown as Record<string, boolean>)[name] = isInGroup(status, group);
  return legacy;
}
