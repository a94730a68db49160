// The permission evaluator, table by table: grants, denials winning, wildcards, omitted operation
// and scope, aliases, and malformed rules refused with their place named.
import { describe, expect, it } from 'vitest';
import { PermissionRuleError, isAllowed, parseRules, type PermissionRequest } from '../../packages/server/src/accounts/permissions.js';

const request = (text: string): PermissionRequest => {
  const [resource, operation, scope] = text.split(':') as [PermissionRequest['resource'], PermissionRequest['operation'], PermissionRequest['scope']];
  return { resource, operation, scope };
};

// [rules, request (resource:operation:scope), allowed]
const CASES: ReadonlyArray<readonly [readonly string[], string, boolean]> = [
  // No rule: refused.
  [[], 'email-validations:read:my', false],
  // A grant of its exact segments.
  [['email-validations:write:my'], 'email-validations:write:my', true],
  [['email-validations:write:my'], 'email-validations:read:my', false],
  [['email-validations:write:my'], 'users:write:my', false],
  // Scope `my` covers one's own only; an omitted scope is the account, which includes `my`.
  [['email-validations:read:my'], 'email-validations:read:account', false],
  [['email-validations:read'], 'email-validations:read:account', true],
  [['email-validations:read'], 'email-validations:read:my', true],
  // An omitted operation is every operation of the resource.
  [['email-validations'], 'email-validations:delete:account', true],
  [['email-validations'], 'credits:read-balance:account', false],
  [['credits'], 'credits:read-usage:account', true],
  // `*` matches any one value of its segment.
  [['*'], 'users:delete:account', true],
  [['*:read'], 'credits:read-balance:account', false],
  [['*:read'], 'users:read:account', true],
  [['email-validations:*:my'], 'email-validations:delete:my', true],
  [['email-validations:*:my'], 'email-validations:delete:account', false],
  // A scope of `*` matches the values a scope can hold (`my`); the account only by omitting the scope.
  [['email-validations:read:*'], 'email-validations:read:my', true],
  [['email-validations:read:*'], 'email-validations:read:account', false],
  // Any matching denial refuses, wherever it stands.
  [['email-validations', '-email-validations:delete'], 'email-validations:delete:my', false],
  [['-email-validations:delete', 'email-validations'], 'email-validations:delete:account', false],
  [['email-validations', '-email-validations:delete'], 'email-validations:read:account', true],
  [['*', '-users'], 'users:read:my', false],
  [['*', '-users'], 'credits:read-balance:account', true],
  // A denial of `my` leaves the account's other jobs to the grant; a denial of the account covers `my`.
  [['email-validations:delete', '-email-validations:delete:my'], 'email-validations:delete:my', false],
  [['email-validations:delete', '-email-validations:delete:my'], 'email-validations:delete:account', true],
  [['email-validations:delete:my', '-email-validations:delete'], 'email-validations:delete:my', false],
  // A denial alone grants nothing.
  [['-users'], 'email-validations:read:my', false],
  // Aliases: email-verifications for email-validations, own for my.
  [['email-verifications:*:own'], 'email-validations:write:my', true],
  [['email-verifications:*:own'], 'email-validations:write:account', false],
  [['-email-verifications:delete', 'email-validations'], 'email-validations:delete:my', false],
];

describe('isAllowed', () => {
  it.each(CASES)('%j allow %s: %s', (rules, wanted, allowed) => {
    expect(isAllowed(parseRules(rules), request(wanted))).toBe(allowed);
  });
});

describe('parseRules', () => {
  it('reads each segment, with aliases resolved and omitted segments left undefined', () => {
    expect(parseRules(['-email-verifications:delete:own', 'credits', '*:*:*'])).toEqual([
      { deny: true, resource: 'email-validations', operation: 'delete', scope: 'my' },
      { deny: false, resource: 'credits', operation: undefined, scope: undefined },
      { deny: false, resource: '*', operation: '*', scope: '*' },
    ]);
  });

  it.each([
    ['', 'has an empty segment'],
    ['-', 'has an empty segment'],
    ['email-validations:', 'has an empty segment'],
    ['email-validations::my', 'has an empty segment'],
    ['email-validations:read:my:extra', 'has more than three segments (resource:operation:scope)'],
    ['jobs:read', 'names an unknown resource, jobs'],
    ['Email-Validations', 'names an unknown resource, Email-Validations'],
    ['--users', 'names an unknown resource, -users'],
    ['credits:read', 'names an unknown operation, read'],
    ['users:read-balance', 'names an unknown operation, read-balance'],
    ['*:execute', 'names an unknown operation, execute'],
    ['users:read:team', 'names an unknown scope, team'],
    ['__proto__', 'names an unknown resource, __proto__'],
  ])('refuses %j: it %s, naming its place', (rule, problem) => {
    let error: unknown;
    try {
      parseRules(['email-validations:read:my', rule]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PermissionRuleError);
    expect(error).toMatchObject({ index: 1, rule, problem, message: `authorization.rules[1]: ${JSON.stringify(rule)} ${problem}` });
  });
});
