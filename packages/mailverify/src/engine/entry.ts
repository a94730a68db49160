/** The per-address result: the fields of the service's "Job entry (2.x)", plus the classification. */
import type { Classification, StatusCode } from '../status/catalogue.js';
import type { ParsedAddress } from '../syntax/types.js';
import { isMixedScriptDomain } from '../suggest/look-alike.js';
import type { Evidence } from './evidence.js';

export interface Entry {
  /** Zero-based position of the entry in its batch. */
  index: number;
  /** The original input. */
  inputData: string;
  classification: Classification | (string & {});
  status: StatusCode;
  emailAddress?: string;
  emailAddressLocalPart?: string;
  emailAddressDomainPart?: string;
  asciiEmailAddressDomainPart?: string;
  hasInternationalMailboxName?: boolean;
  hasInternationalDomainName?: boolean;
  isDisposableEmailAddress?: boolean;
  isRoleAccount?: boolean;
  isFreeEmailAddress?: boolean;
  /** Zero-based index (UTF-16 code units) of the first syntax error in `inputData`. */
  syntaxFailureIndex?: number;
  suggestions?: string[];
  custom?: string;
  duplicateOf?: number;
  /** ISO 8601 completion time. */
  completedOn: string;
  /**
   * A label of the domain mixes scripts (UTS #39 §5.1: `gmаil.com` with a Cyrillic а), as look-alikes of other
   * domains do; present, true, only then (mailverify's own field; not in the service). It changes no status.
   */
  hasMixedScriptDomainName?: boolean;
  /** What decided the entry, when evidence was asked for (mailverify's own field; not in the service). */
  evidence?: Evidence;
}

/** Field order of the entry in tabular output (CSV). */
export const ENTRY_FIELDS = [
  'index',
  'inputData',
  'classification',
  'status',
  'emailAddress',
  'emailAddressLocalPart',
  'emailAddressDomainPart',
  'asciiEmailAddressDomainPart',
  'hasInternationalMailboxName',
  'hasInternationalDomainName',
  'isDisposableEmailAddress',
  'isRoleAccount',
  'isFreeEmailAddress',
  'syntaxFailureIndex',
  'suggestions',
  'custom',
  'duplicateOf',
  'completedOn',
] as const satisfies readonly (keyof Entry)[];

/** What an entry is built from; absent parts are left out of it. */
export interface EntryParts {
  index: number;
  inputData: string;
  status: StatusCode;
  classification: string;
  parsed?: ParsedAddress;
  flags?: { isDisposableEmailAddress: boolean; isRoleAccount: boolean; isFreeEmailAddress: boolean };
  syntaxFailureIndex?: number;
  suggestions?: string[];
  custom?: string;
  duplicateOf?: number;
  evidence?: Evidence;
}

/** An entry with its fields in the service's order (ENTRY_FIELDS), absent fields left out. */
export function makeEntry(parts: EntryParts): Entry {
  const entry = { index: parts.index, inputData: parts.inputData, classification: parts.classification, status: parts.status } as Entry;
  const { parsed, flags } = parts;
  if (parsed !== undefined) {
    entry.emailAddress = parsed.emailAddress;
    entry.emailAddressLocalPart = parsed.localPart;
    entry.emailAddressDomainPart = parsed.domainPart;
    entry.asciiEmailAddressDomainPart = parsed.asciiDomainPart;
    entry.hasInternationalMailboxName = parsed.hasInternationalMailboxName;
    entry.hasInternationalDomainName = parsed.hasInternationalDomainName;
  }
  if (flags !== undefined) {
    entry.isDisposableEmailAddress = flags.isDisposableEmailAddress;
    entry.isRoleAccount = flags.isRoleAccount;
    entry.isFreeEmailAddress = flags.isFreeEmailAddress;
  }
  if (parts.syntaxFailureIndex !== undefined) entry.syntaxFailureIndex = parts.syntaxFailureIndex;
  if (parts.suggestions !== undefined && parts.suggestions.length > 0) entry.suggestions = parts.suggestions;
  if (parts.custom !== undefined) entry.custom = parts.custom;
  if (parts.duplicateOf !== undefined) entry.duplicateOf = parts.duplicateOf;
  entry.completedOn = isoNow();
  if (parsed?.hasInternationalDomainName === true && isMixedScriptDomain(parsed.asciiDomainPart)) entry.hasMixedScriptDomainName = true;
  if (parts.evidence !== undefined) entry.evidence = parts.evidence;
  return entry;
}

let lastMs = -1;
let lastIso = '';

/** The current time in ISO 8601; entries finished in the same millisecond share the string. */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
