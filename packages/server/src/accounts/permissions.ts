/**
 * The permission rules of a user (`authorization.rules`): their grammar, `[-]resource[:operation[:scope]]` (the
 * service's Users resource), and their evaluation. Plain functions: the server asks `isAllowed` for each request,
 * from the user's current rules.
 */

/** The resources and the operations each one has. */
export const RESOURCE_OPERATIONS = {
  'email-validations': ['read', 'write', 'delete'],
  users: ['read', 'write', 'delete'],
  credits: ['read-balance', 'read-usage'],
} as const satisfies Record<string, readonly string[]>;

export type Resource = keyof typeof RESOURCE_OPERATIONS;
export type Operation = (typeof RESOURCE_OPERATIONS)[Resource][number];

/**
 * What a request does: `my` when it concerns the caller's own jobs (for `users`, its own record), `account` when it
 * concerns the account's (someone else's, or all of them).
 */
export interface PermissionRequest {
  readonly resource: Resource;
  readonly operation: Operation;
  readonly scope: 'my' | 'account';
}

/** A rule read from its text. `undefined` for an omitted segment, `'*'` for the wildcard. */
export interface PermissionRule {
  readonly deny: boolean;
  readonly resource: Resource | '*';
  readonly operation: Operation | '*' | undefined;
  readonly scope: 'my' | '*' | undefined;
}

/** A rule that does not follow the grammar: `index` is its place in `authorization.rules`. */
export class PermissionRuleError extends Error {
  constructor(
    readonly index: number,
    readonly rule: string,
    readonly problem: string,
  ) {
    super(`authorization.rules[${index}]: ${JSON.stringify(rule)} ${problem}`);
    this.name = 'PermissionRuleError';
  }
}

/** Other spellings accepted for a segment (the names the service's clients also use). */
const RESOURCE_ALIASES: Readonly<Record<string, Resource>> = { 'email-verifications': 'email-validations' };
const SCOPE_ALIASES: Readonly<Record<string, 'my'>> = { own: 'my' };

/** Reads every rule; throws a PermissionRuleError naming the first that is malformed or names an unknown segment. */
export function parseRules(rules: readonly string[]): PermissionRule[] {
  return rules.map((rule, index) => parseRule(rule, index));
}

function parseRule(text: string, index: number): PermissionRule {
  const fail = (problem: string): never => {
    throw new PermissionRuleError(index, text, problem);
  };
  const deny = text.startsWith('-');
  const segments = (deny ? text.slice(1) : text).split(':');
  if (segments.length > 3) fail('has more than three segments (resource:operation:scope)');
  if (segments.some((segment) => segment === '')) fail('has an empty segment');
  const [resourceText, operationText, scopeText] = segments as [string, string | undefined, string | undefined];

  const resource = resourceText === '*' ? '*' : (RESOURCE_ALIASES[resourceText] ?? resourceText);
  if (resource !== '*' && !Object.hasOwn(RESOURCE_OPERATIONS, resource)) fail(`names an unknown resource, ${resourceText}`);

  let operation: PermissionRule['operation'];
  if (operationText !== undefined && operationText !== '*') {
    const known: readonly string[] =
      resource === '*' ? Object.values(RESOURCE_OPERATIONS).flat() : RESOURCE_OPERATIONS[resource as Resource];
    if (!known.includes(operationText)) fail(`names an unknown operation, ${operationText}`);
    operation = operationText as Operation;
  } else {
    operation = operationText;
  }

  const scope = scopeText === undefined || scopeText === '*' ? scopeText : (SCOPE_ALIASES[scopeText] ?? scopeText);
  if (scope !== undefined && scope !== '*' && scope !== 'my') fail(`names an unknown scope, ${scopeText}`);
  return { deny, resource: resource as Resource | '*', operation, scope: scope as PermissionRule['scope'] };
}

/**
 * Whether `rules` allow `request`: any matching denial refuses; otherwise any matching grant allows; otherwise
 * refused. Rules match segment by segment; `*` matches any one value; an omitted operation matches
 * every operation; an omitted scope is the whole account, which includes `my`. A scope of `*` matches the values a
 * scope segment can hold (`my`), not the account: the account is given only by omitting the scope.
 */
export function isAllowed(rules: readonly PermissionRule[], request: PermissionRequest): boolean {
  let granted = false;
  for (const rule of rules) {
    if (!matches(rule, request)) continue;
    if (rule.deny) return false;
    granted = true;
  }
  return granted;
}

function matches(rule: PermissionRule, request: PermissionRequest): boolean {
  if (rule.resource !== '*' && rule.resource !== request.resource) return false;
  if (rule.operation !== undefined && rule.operation !== '*' && rule.operation !== request.operation) return false;
  if (rule.scope === undefined) return true;
  return request.scope === 'my';
}
