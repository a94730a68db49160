/** The per-address result: the fields of the service's "Job entry (2.x)", plus the classification. */
import { classificationOf, type Classification, type StatusCode } from '../status/catalogue.js';
import type { ParseResult } from '../syntax/types.js';

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

/** The entry fields a syntax check fills; `status` is Success for a parsed address. */
export function entryFromParse(index: number, inputData: string, parsed: ParseResult, now = new Date()): Entry {
  const completedOn = now.toISOString();
  if (!parsed.ok) {
    return {
      index,
      inputData,
      classification: classificationOf(parsed.status),
      status: parsed.status,
      syntaxFailureIndex: parsed.syntaxFailureIndex,
      completedOn,
    };
  }
  return {
    index,
    inputData,
    classification: classificationOf('Success'),
    status: 'Success',
    emailAddress: parsed.emailAddress,
    emailAddressLocalPart: parsed.localPart,
    emailAddressDomainPart: parsed.domainPart,
    asciiEmailAddressDomainPart: parsed.asciiDomainPart,
    hasInternationalMailboxName: parsed.hasInternationalMailboxName,
    hasInternationalDomainName: parsed.hasInternationalDomainName,
    completedOn,
  };
}

/** The entry with its fields in the service's order (ENTRY_FIELDS), absent fields left out. */
export function orderedEntry(entry: Entry): Entry {
  const ordered: Record<string, unknown> = {};
  for (const field of ENTRY_FIELDS) {
    if (entry[field] !== undefined) ordered[field] = entry[field];
  }
  return ordered as unknown as Entry;
}
