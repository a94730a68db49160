import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CURRENT_STATUS_CODES,
  LEGACY_STATUS_CODES,
  STATUS_CODES,
  classificationOf,
  groupsOf,
  isInGroup,
  isStatusCode,
  type StatusCode,
} from '../packages/mailverify/src/index.js';

// A verbatim copy of the service description (shared/spec/service-api.md).
const spec = readFileSync(new URL('./fixtures/service-api.md', import.meta.url), 'utf8');

/** Status names of the 2.x table: first column of the rows under "### Validation status codes". */
function currentNamesFromSpec(): string[] {
  const section = spec.slice(spec.indexOf('### Validation status codes'), spec.indexOf('### User overview'));
  return [...section.matchAll(/^\| (\w+)(?: \([\d.]+\+\))? \|/gm)].map((m) => m[1]!).filter((n) => n !== 'Status');
}

/** Names of the legacy list: the sentence "Legacy status codes: A; B, C; ...; UnhandledException." */
function legacyNamesFromSpec(): string[] {
  const line = spec.split('\n').find((l) => l.startsWith('Legacy status codes:'))!;
  const list = line.slice('Legacy status codes:'.length, line.indexOf('UnhandledException.') + 'UnhandledException'.length);
  return list
    .split(/[;,]/)
    .map((item) => item.replace(/\([^)]*\)/g, '').trim())
    .filter((item) => item !== '');
}

describe('status catalogue', () => {
  it('has exactly the 2.x statuses of service-api.md', () => {
    const names = currentNamesFromSpec();
    expect(names.length).toBe(42);
    expect([...CURRENT_STATUS_CODES].sort()).toEqual([...names].sort());
  });

  it('has exactly the legacy 1.4 statuses of service-api.md', () => {
    const names = legacyNamesFromSpec();
    expect(names.length).toBe(35);
    expect([...LEGACY_STATUS_CODES].sort()).toEqual([...names].sort());
    expect(CURRENT_STATUS_CODES).not.toContain('MailboxConnectionFailure');
    expect(CURRENT_STATUS_CODES).not.toContain('CatchAllConnectionFailure');
  });

  it('STATUS_CODES is the union of both catalogues, without repeats', () => {
    expect(new Set(STATUS_CODES)).toEqual(new Set([...CURRENT_STATUS_CODES, ...LEGACY_STATUS_CODES]));
    expect(new Set(STATUS_CODES).size).toBe(STATUS_CODES.length);
  });

  it('classifies per decisions.md section 8', () => {
    const expected: Record<string, StatusCode[]> = {
      Deliverable: ['Success'],
      Risky: [
        'ServerIsCatchAll',
        'MailboxHasInsufficientStorage',
        'DomainIsWellKnownDea',
        'MailExchangerIsWellKnownDea',
        'MailboxIsDea',
        'MailExchangerIsHoneypot',
        'MailExchangerIsParked',
      ],
      Undeliverable: [
        'AtSignNotFound',
        'DoubleDotSequence',
        'DomainPartCompliancyFailure',
        'InvalidAddressLength',
        'InvalidCharacterInSequence',
        'InvalidEmptyQuotedWord',
        'InvalidFoldingWhiteSpaceSequence',
        'InvalidLocalPartLength',
        'InvalidWordBoundaryStart',
        'IspSpecificSyntaxFailure',
        'UnbalancedCommentParenthesis',
        'UnexpectedQuotedPairSequence',
        'UnmatchedQuotedPair',
        'UnacceptableDomainLiteral',
        'DomainDoesNotExist',
        'DomainIsMisconfigured',
        'DomainHasNullMx',
        'MailboxDoesNotExist',
      ],
      Unknown: [
        'DnsConnectionFailure',
        'DnsQueryTimeout',
        'MailboxTemporarilyUnavailable',
        'MailboxValidationTimeout',
        'LocalEndPointRejected',
        'LocalSenderAddressRejected',
        'ServerDoesNotAllowMultipleRecipients',
        'ServerDoesNotSupportInternationalMailboxes',
        'ServerTemporaryUnavailable',
        'CatchAllValidationTimeout',
        'SmtpConnectionFailure',
        'SmtpConnectionTimeout',
        'SmtpDialogError',
        'UnhandledException',
        // Legacy-only connection failures, and the two statuses whose classification comes from elsewhere.
        'MailboxConnectionFailure',
        'CatchAllConnectionFailure',
        'Duplicate',
        'OverrideMatch',
      ],
    };
    const listed = Object.values(expected).flat();
    expect(new Set(listed)).toEqual(new Set(STATUS_CODES));
    for (const [classification, statuses] of Object.entries(expected)) {
      for (const status of statuses) expect([status, classificationOf(status)]).toEqual([status, classification]);
    }
  });

  it('groups the statuses behind the legacy shorthands', () => {
    const syntax = STATUS_CODES.filter((s) => isInGroup(s, 'syntax'));
    expect(syntax).toHaveLength(14);
    expect(groupsOf('DnsQueryTimeout')).toEqual(['dns', 'timeout']);
    expect(groupsOf('SmtpConnectionFailure')).toEqual(['smtp', 'network']);
    expect(groupsOf('MailboxValidationTimeout')).toEqual(['mailbox', 'timeout']);
    expect(groupsOf('CatchAllConnectionFailure')).toEqual(['catchAll', 'network']);
    expect(groupsOf('Success')).toEqual([]);
    expect(STATUS_CODES.filter((s) => isInGroup(s, 'timeout')).sort()).toEqual(
      ['CatchAllValidationTimeout', 'DnsQueryTimeout', 'MailboxValidationTimeout', 'SmtpConnectionTimeout'].sort(),
    );
  });

  it('rejects an unknown status with a TypeError', () => {
    expect(() => classificationOf('NoSuchStatus' as StatusCode)).toThrow(TypeError);
    expect(isStatusCode('success')).toBe(false);
  });
});
