// Users as plain functions: a creation body validated field by field (each refusal naming the field's full path),
// the defaults of absent settings, BrowserApps, administrators and no escalation, JSON Patch changes, and the
// documents shown, which never hold a secret.
import { describe, expect, it } from 'vitest';
import { parseRules } from '../../packages/server/src/accounts/permissions.js';
import type { UserRecord } from '../../packages/server/src/accounts/types.js';
import {
  BROWSER_APP_RULES,
  PatchTestFailedError,
  UserFieldError,
  UserForbiddenError,
  changedUserRecord,
  checkNoEscalation,
  grantReach,
  isAdministrator,
  newBrowserAppKey,
  newUser,
  patchUser,
  userDetailView,
  userEtag,
  userOverviewView,
  type Caller,
  type NewUserContext,
} from '../../packages/server/src/accounts/users.js';
import { defaultStandardDetail } from './default-detail.js';

const ROOT: Caller = { isRoot: true, rules: [] };
const ADMIN: Caller = { isRoot: false, type: 'Administrator', rules: [], userId: 'admin-1' };
const standardCaller = (...rules: string[]): Caller => ({ isRoot: false, type: 'Standard', rules, userId: 'caller-1' });
/** A Standard user that manages users and holds every right on its own jobs. */
const MANAGER = standardCaller('users:write', 'email-validations:*:my');

const KEY = 'AbCdEfGhIjKlMnOpQrStUvWxYz012345';
const context = (caller: Caller = ROOT): NewUserContext => ({
  id: '8f5b6c1e-0d1a-4c8e-9a51-3f3c1a2b4d5e',
  now: '2026-01-02T03:04:05.000Z',
  caller,
  rootUsername: 'Root',
  makeKey: () => KEY,
});

type Json = Record<string, unknown>;

/** A copy of `body` with the field at `path` (dotted) set to `value`, or removed when `value` is undefined. */
function withField(body: Json, path: string, value: unknown): Json {
  const copy = structuredClone(body);
  const keys = path.split('.');
  let node: Json = copy;
  for (const key of keys.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Json;
  }
  const last = keys.at(-1)!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

const STANDARD: Json = {
  type: 'Standard',
  displayName: 'Ann',
  authentication: { password: { username: 'ann', password: 'correct horse' } },
};
const ADMINISTRATOR: Json = { ...structuredClone(STANDARD), type: 'Administrator' };
const BROWSER_APP: Json = { type: 'BrowserApp', displayName: 'Shop' };

function fieldOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof UserFieldError) return error.field;
    throw error;
  }
  throw new Error('no UserFieldError was thrown');
}

describe('newUser: defaults', () => {
  it('gives a Standard user the default settings and rules, and returns its password to hash', () => {
    const { record, password } = newUser(STANDARD, context());
    expect(password).toBe('correct horse');
    expect(record).toMatchObject({ id: context().id, createdOn: context().now, passwordVersion: 0 });
    expect(record).not.toHaveProperty('passwordHash');
    expect(record.etag).toMatch(/^[0-9a-f]{32}$/);
    expect(record.detail).toEqual(defaultStandardDetail('Ann', 'ann'));
  });

  it('gives an Administrator no rules of its own (they are not consulted)', () => {
    expect(newUser(ADMINISTRATOR, context()).record.detail.authorization.rules).toEqual([]);
  });

  it('keeps the settings given', () => {
    const body = {
      ...STANDARD,
      isActive: false,
      authorization: { rules: ['email-validations', '-email-validations:delete'] },
      captcha: { isEnabled: true, providers: { turnstile: { secretKey: 't-secret' }, reCaptchaV3: { secretKey: 'r3', minScore: 0.7 } } },
      defaults: { retention: '0:5:0' },
      firewall: { isEnabled: true, rules: [{ addressFamily: 'IPv6', displayName: 'office', startIP: '2001:db8::', endIP: '2001:db8::ffff' }] },
      throttling: { maxEntriesPerJob: 1000, rules: [{ limit: 5, period: 'Minute', scope: 'IPAddress' }] },
    };
    const { detail } = newUser(body, context()).record;
    expect(detail.isActive).toBe(false);
    expect(detail.authorization.rules).toEqual(['email-validations', '-email-validations:delete']);
    expect(detail.captcha).toEqual({ isEnabled: true, providers: { turnstile: { secretKey: 't-secret' }, reCaptchaV3: { secretKey: 'r3', minScore: 0.7 } } });
    expect(detail.firewall.rules).toHaveLength(1);
    expect(detail.throttling).toEqual({ maxEntriesPerJob: 1000, rules: [{ limit: 5, period: 'Minute', scope: 'IPAddress' }] });
  });

  it.each([
    ['0:5:0', '00:05:00'],
    ['1.02:03:04', '1.02:03:04'],
    ['30.0:0:0', '30.00:00:00'],
  ])('reads a default retention of %s back as %s', (given, shown) => {
    expect(newUser(withField(STANDARD, 'defaults.retention', given), context()).record.detail.defaults).toEqual({ retention: shown });
  });

  it('makes a BrowserApp passwordless, with a generated key and the two fixed rules', () => {
    const { record, password } = newUser(BROWSER_APP, context());
    expect(password).toBeUndefined();
    expect(record.detail.authentication.password).toEqual({ isEnabled: true, isMfaRequired: false, username: KEY });
    expect(record.detail.authorization.rules).toEqual(['email-validations:write:my', 'email-validations:read:my']);
  });

  it('lets a BrowserApp enable trusted origins and a Standard user certificates', () => {
    const app = newUser({ ...BROWSER_APP, trustedOrigin: { isEnabled: true, expressions: ['https://*.example.com'] } }, context());
    expect(app.record.detail.trustedOrigin).toEqual({ isEnabled: true, expressions: ['https://*.example.com'] });
    const user = newUser(withField(STANDARD, 'authentication.certificate.isEnabled', true), context());
    expect(user.record.detail.authentication.certificate.isEnabled).toBe(true);
  });

  it('needs no username or password when password authentication is disabled', () => {
    const body = { type: 'Standard', displayName: 'Batch', authentication: { password: { isEnabled: false } } };
    const { record, password } = newUser(body, context());
    expect(password).toBeUndefined();
    expect(record.detail.authentication.password).toEqual({ isEnabled: false, isMfaRequired: false });
  });
});

describe('newUser: a body that is accepted at the limits', () => {
  it.each<[string, Json]>([
    ['a display name of 256 characters', withField(STANDARD, 'displayName', 'é'.repeat(256))],
    ['a username of 256 printable characters', withField(STANDARD, 'authentication.password.username', '~ a!'.repeat(64))],
    ['a password of 8 characters', withField(STANDARD, 'authentication.password.password', '12345678')],
    ['a password of 256 characters', withField(STANDARD, 'authentication.password.password', 'p'.repeat(256))],
    ['a firewall range of one address', withField(STANDARD, 'firewall.rules', [{ addressFamily: 'IPv4', displayName: 'x', startIP: '10.0.0.1', endIP: '10.0.0.1' }])],
    ['an IPv6 range with a dotted tail', withField(STANDARD, 'firewall.rules', [{ addressFamily: 'IPv6', displayName: 'x', startIP: '::ffff:10.0.0.1', endIP: '::ffff:10.0.0.9' }])],
    ['minScore 0 and 1', withField(STANDARD, 'captcha.providers', { reCaptchaV3: { secretKey: 's', minScore: 0 } })],
    ['an hCaptcha provider', withField(STANDARD, 'captcha.providers', { hCaptcha: { secretKey: 's', siteKey: 'site' } })],
    ['maxEntriesPerJob 1', withField(STANDARD, 'throttling.maxEntriesPerJob', 1)],
    ['rules with aliases and wildcards', withField(STANDARD, 'authorization.rules', ['email-verifications:read:own', '*', '-users:delete'])],
    ['null for an optional setting', withField(STANDARD, 'captcha', null)],
  ])('%s', (_name, body) => {
    expect(() => newUser(body, context())).not.toThrow();
  });
});

describe('newUser: refusals name the field by its full JSON path', () => {
  const firewallRule = { addressFamily: 'IPv4', displayName: 'office', startIP: '192.0.2.1', endIP: '192.0.2.9' };
  const throttlingRule = { limit: 10, period: 'Hour', scope: 'Global' };
  // [what is wrong, body, the field named]
  const CASES: ReadonlyArray<readonly [string, unknown, string]> = [
    ['a body that is not an object', [STANDARD], ''],
    ['no type', withField(STANDARD, 'type', undefined), 'type'],
    ['a type of another case', withField(STANDARD, 'type', 'standard'), 'type'],
    ['an unknown type', withField(STANDARD, 'type', 'Owner'), 'type'],
    ['no display name', withField(STANDARD, 'displayName', undefined), 'displayName'],
    ['an empty display name', withField(STANDARD, 'displayName', ''), 'displayName'],
    ['a display name of 257 characters', withField(STANDARD, 'displayName', 'x'.repeat(257)), 'displayName'],
    ['a display name that is not a string', withField(STANDARD, 'displayName', 7), 'displayName'],
    ['isActive as a string', withField(STANDARD, 'isActive', 'true'), 'isActive'],
    ['an unknown top-level field', withField(STANDARD, 'id', 'x'), 'id'],
    ['an unknown nested field (a typo of a security setting)', withField(STANDARD, 'firewall.isEnabeld', true), 'firewall.isEnabeld'],
    ['an unknown field in authentication.password', withField(STANDARD, 'authentication.password.mfa', true), 'authentication.password.mfa'],
    ['preferredContactMethod', withField(STANDARD, 'preferredContactMethod', 'c1'), 'preferredContactMethod'],
    ['recoveryContactMethod', withField(STANDARD, 'authentication.recoveryContactMethod', 'c1'), 'authentication.recoveryContactMethod'],
    ['an object that is an array', withField(STANDARD, 'captcha', []), 'captcha'],
    // Credentials of a user with password authentication.
    ['no username', withField(STANDARD, 'authentication.password.username', undefined), 'authentication.password.username'],
    ['an empty username', withField(STANDARD, 'authentication.password.username', ''), 'authentication.password.username'],
    ['a username of 257 characters', withField(STANDARD, 'authentication.password.username', 'u'.repeat(257)), 'authentication.password.username'],
    ['a username with a colon', withField(STANDARD, 'authentication.password.username', 'ann:1'), 'authentication.password.username'],
    ['a username beyond ASCII', withField(STANDARD, 'authentication.password.username', 'anné'), 'authentication.password.username'],
    ['a username with a control character', withField(STANDARD, 'authentication.password.username', 'ann\t'), 'authentication.password.username'],
    ['root\'s username in another case', withField(STANDARD, 'authentication.password.username', 'rOOT'), 'authentication.password.username'],
    ['no password', withField(STANDARD, 'authentication.password.password', undefined), 'authentication.password.password'],
    ['a password of 7 characters', withField(STANDARD, 'authentication.password.password', '1234567'), 'authentication.password.password'],
    ['a password of 257 characters', withField(STANDARD, 'authentication.password.password', 'p'.repeat(257)), 'authentication.password.password'],
    ['a password that is not a string', withField(STANDARD, 'authentication.password.password', 12345678), 'authentication.password.password'],
    ['isMfaRequired with no TOTP enrolled', withField(STANDARD, 'authentication.password.isMfaRequired', true), 'authentication.password.isMfaRequired'],
    ['a certificate for an Administrator', withField(ADMINISTRATOR, 'authentication.certificate.isEnabled', true), 'authentication.certificate.isEnabled'],
    ['a certificate for a BrowserApp', withField(BROWSER_APP, 'authentication.certificate.isEnabled', true), 'authentication.certificate.isEnabled'],
    ['a certificate with no username', { type: 'Standard', displayName: 'C', authentication: { password: { isEnabled: false }, certificate: { isEnabled: true } } }, 'authentication.password.username'],
    // BrowserApp.
    ['a username for a BrowserApp', withField(BROWSER_APP, 'authentication.password.username', 'mykey'), 'authentication.password.username'],
    ['a password for a BrowserApp', withField(BROWSER_APP, 'authentication.password.password', 'secret-password'), 'authentication.password.password'],
    ['rules for a BrowserApp', withField(BROWSER_APP, 'authorization.rules', [...BROWSER_APP_RULES]), 'authorization.rules'],
    ['trusted origins for a Standard user', withField(STANDARD, 'trustedOrigin.isEnabled', true), 'trustedOrigin.isEnabled'],
    ['an empty trusted origin expression', withField(BROWSER_APP, 'trustedOrigin.expressions', ['https://a.example', '']), 'trustedOrigin.expressions[1]'],
    // Rules.
    ['rules that are not an array', withField(STANDARD, 'authorization.rules', 'users'), 'authorization.rules'],
    ['a rule that is not a string', withField(STANDARD, 'authorization.rules', ['users', 3]), 'authorization.rules[1]'],
    ['a malformed rule', withField(STANDARD, 'authorization.rules', ['users', 'email-validations::my']), 'authorization.rules[1]'],
    ['an unknown resource', withField(STANDARD, 'authorization.rules', ['accounts']), 'authorization.rules[0]'],
    ['an unknown scope', withField(STANDARD, 'authorization.rules', ['users:read:team']), 'authorization.rules[0]'],
    // Firewall.
    ['firewall rules that are not an array', withField(STANDARD, 'firewall.rules', {}), 'firewall.rules'],
    ['an unknown address family', withField(STANDARD, 'firewall.rules', [{ ...firewallRule, addressFamily: 'ipv4' }]), 'firewall.rules[0].addressFamily'],
    ['an IPv6 start in an IPv4 rule', withField(STANDARD, 'firewall.rules', [{ ...firewallRule, startIP: '::1' }]), 'firewall.rules[0].startIP'],
    ['an IPv4 end in an IPv6 rule', withField(STANDARD, 'firewall.rules', [{ ...firewallRule, addressFamily: 'IPv6', startIP: '::1', endIP: '192.0.2.9' }]), 'firewall.rules[0].endIP'],
    ['an address that is not one', withField(STANDARD, 'firewall.rules', [{ ...firewallRule, endIP: '192.0.2.256' }]), 'firewall.rules[0].endIP'],
    ['an IPv6 address with a zone', withField(STANDARD, 'firewall.rules', [{ ...firewallRule, addressFamily: 'IPv6', startIP: 'fe80::1%eth0', endIP: 'fe80::2' }]), 'firewall.rules[0].startIP'],
    ['no start address', withField(STANDARD, 'firewall.rules', [{ ...firewallRule, startIP: undefined }]), 'firewall.rules[0].startIP'],
    ['an IPv4 start above its end', withField(STANDARD, 'firewall.rules', [firewallRule, { ...firewallRule, startIP: '192.0.2.10' }]), 'firewall.rules[1].endIP'],
    ['an IPv6 start above its end', withField(STANDARD, 'firewall.rules', [{ ...firewallRule, addressFamily: 'IPv6', startIP: '2001:db8::1:0', endIP: '2001:db8::ffff' }]), 'firewall.rules[0].endIP'],
    ['an unknown field of a firewall rule', withField(STANDARD, 'firewall.rules', [{ ...firewallRule, action: 'allow' }]), 'firewall.rules[0].action'],
    // Throttling.
    ['a limit of 0', withField(STANDARD, 'throttling.rules', [{ ...throttlingRule, limit: 0 }]), 'throttling.rules[0].limit'],
    ['a limit that is not an integer', withField(STANDARD, 'throttling.rules', [{ ...throttlingRule, limit: 1.5 }]), 'throttling.rules[0].limit'],
    ['a limit as a string', withField(STANDARD, 'throttling.rules', [{ ...throttlingRule, limit: '10' }]), 'throttling.rules[0].limit'],
    ['an unknown period', withField(STANDARD, 'throttling.rules', [{ ...throttlingRule, period: 'Week' }]), 'throttling.rules[0].period'],
    ['a period of another case', withField(STANDARD, 'throttling.rules', [{ ...throttlingRule, period: 'hour' }]), 'throttling.rules[0].period'],
    ['an unknown scope', withField(STANDARD, 'throttling.rules', [throttlingRule, { ...throttlingRule, scope: 'User' }]), 'throttling.rules[1].scope'],
    ['a throttling rule that is not an object', withField(STANDARD, 'throttling.rules', [5]), 'throttling.rules[0]'],
    ['maxEntriesPerJob 0', withField(STANDARD, 'throttling.maxEntriesPerJob', 0), 'throttling.maxEntriesPerJob'],
    ['maxEntriesPerJob not an integer', withField(STANDARD, 'throttling.maxEntriesPerJob', 2.5), 'throttling.maxEntriesPerJob'],
    // Captcha.
    ['an unknown captcha provider', withField(STANDARD, 'captcha.providers', { friendlyCaptcha: { secretKey: 's' } }), 'captcha.providers.friendlyCaptcha'],
    ['a provider with no secret key', withField(STANDARD, 'captcha.providers', { turnstile: {} }), 'captcha.providers.turnstile.secretKey'],
    ['a secret key that is not a string', withField(STANDARD, 'captcha.providers', { reCaptchaV2: { secretKey: 1 } }), 'captcha.providers.reCaptchaV2.secretKey'],
    ['an hCaptcha with no site key', withField(STANDARD, 'captcha.providers', { hCaptcha: { secretKey: 's' } }), 'captcha.providers.hCaptcha.siteKey'],
    ['a minScore above 1', withField(STANDARD, 'captcha.providers', { reCaptchaV3: { secretKey: 's', minScore: 1.5 } }), 'captcha.providers.reCaptchaV3.minScore'],
    ['a negative minScore', withField(STANDARD, 'captcha.providers', { reCaptchaV3: { secretKey: 's', minScore: -0.1 } }), 'captcha.providers.reCaptchaV3.minScore'],
    ['a minScore as a string', withField(STANDARD, 'captcha.providers', { reCaptchaV3: { secretKey: 's', minScore: '0.5' } }), 'captcha.providers.reCaptchaV3.minScore'],
    ['an unknown field of a provider', withField(STANDARD, 'captcha.providers', { turnstile: { secretKey: 's', siteKey: 'x' } }), 'captcha.providers.turnstile.siteKey'],
    ['captcha.isEnabled as a number', withField(STANDARD, 'captcha.isEnabled', 1), 'captcha.isEnabled'],
    // Retention.
    ['a retention below 5 minutes', withField(STANDARD, 'defaults.retention', '0:4:59'), 'defaults.retention'],
    ['a retention above 30 days', withField(STANDARD, 'defaults.retention', '30.0:0:1'), 'defaults.retention'],
    ['a retention that is not a duration', withField(STANDARD, 'defaults.retention', '5 minutes'), 'defaults.retention'],
    ['a retention as a number', withField(STANDARD, 'defaults.retention', 300), 'defaults.retention'],
    ['an unknown default', withField(STANDARD, 'defaults.quality', 'High'), 'defaults.quality'],
  ];
  it.each(CASES)('%s', (_name, body, field) => {
    expect(fieldOf(() => newUser(body, context()))).toBe(field);
  });

  it('says contact methods are not supported', () => {
    expect(() => newUser(withField(STANDARD, 'preferredContactMethod', 'c1'), context())).toThrow(/not supported/);
    expect(() => newUser(withField(STANDARD, 'authentication.recoveryContactMethod', 'c1'), context())).toThrow(/not supported/);
  });

  it('names the field in the error message', () => {
    expect(() => newUser(withField(STANDARD, 'authentication.password.username', 'a:b'), context())).toThrow(/^authentication\.password\.username: /);
  });
});

describe('newUser: administrators and no escalation', () => {
  it('lets only root and administrators create an administrator', () => {
    expect(newUser(ADMINISTRATOR, context(ROOT)).record.detail.type).toBe('Administrator');
    expect(newUser(ADMINISTRATOR, context(ADMIN)).record.detail.type).toBe('Administrator');
    expect(() => newUser(ADMINISTRATOR, context(standardCaller('*')))).toThrow(UserForbiddenError);
  });

  // [the caller's rules, the new user's rules (undefined: the defaults), allowed]
  const CASES: ReadonlyArray<readonly [readonly string[], readonly string[] | undefined, boolean]> = [
    // Account-wide read reaches beyond the caller's own jobs.
    [['users:write', 'email-validations:*:my'], ['email-validations:read'], false],
    [['users:write', 'email-validations:*:my'], ['email-validations:read:my'], true],
    [['users:write', 'email-validations'], ['email-validations:read'], true],
    // The defaults count as given by the caller.
    [['users:write', 'email-validations:*:my'], undefined, true],
    [['users:write', 'email-validations:read:my', 'email-validations:write:my'], undefined, false],
    [['users:write'], undefined, false],
    // A denial never escalates, and a grant the caller's own denial removes does.
    [['users:write'], ['-email-validations', '-users'], true],
    [['users:write', 'email-validations', '-email-validations:delete'], ['email-validations:read', 'email-validations:write'], true],
    [['users:write', 'email-validations', '-email-validations:delete'], ['email-validations'], false],
    [['users:write', 'email-validations', '-email-validations:delete:my'], ['email-validations:delete:my'], false],
    // Wildcards reach every operation (or resource) they match.
    [['users:write', 'email-validations:*:my'], ['*:*:my'], false],
    [['*'], ['*'], true],
    [['users'], ['users:read:my', 'users:write'], true],
    [['users:write'], ['users:*'], false],
    // A `:my` credits rule reaches nothing (credits are account-wide).
    [['users:write'], ['credits:read-balance:my'], true],
    [['users:write'], ['credits:read-balance'], false],
  ];
  it.each(CASES)('a caller with %j creating a user with rules %j: allowed %s', (callerRules, rules, allowed) => {
    const body = rules === undefined ? STANDARD : withField(STANDARD, 'authorization.rules', [...rules]);
    const create = (): unknown => newUser(body, context(standardCaller(...callerRules)));
    if (allowed) expect(create).not.toThrow();
    else expect(create).toThrow(UserForbiddenError);
  });

  it("counts a BrowserApp's fixed rules as given by its creator", () => {
    expect(() => newUser(BROWSER_APP, context(standardCaller('users:write')))).toThrow(UserForbiddenError);
    expect(() => newUser(BROWSER_APP, context(MANAGER))).not.toThrow();
  });

  it('lets an administrator give any rules, whatever its own', () => {
    expect(() => newUser(withField(STANDARD, 'authorization.rules', ['*']), context(ADMIN))).not.toThrow();
  });

  it('validates before it authorizes: a malformed rule is 400 even for a caller without rights', () => {
    expect(fieldOf(() => newUser(withField(STANDARD, 'authorization.rules', ['nope']), context(standardCaller())))).toBe('authorization.rules[0]');
  });
});

describe('grantReach and checkNoEscalation', () => {
  it('expands a grant to every request it allows, and a denial to none', () => {
    const [rule] = parseRules(['email-validations:*:my']);
    expect(grantReach(rule!).map((r) => `${r.operation}:${r.scope}`)).toEqual(['read:my', 'write:my', 'delete:my']);
    const [accountWide] = parseRules(['*:read']);
    expect(grantReach(accountWide!)).toEqual([
      { resource: 'email-validations', operation: 'read', scope: 'my' },
      { resource: 'email-validations', operation: 'read', scope: 'account' },
      { resource: 'users', operation: 'read', scope: 'my' },
      { resource: 'users', operation: 'read', scope: 'account' },
    ]);
    expect(grantReach(parseRules(['-*'])[0]!)).toEqual([]);
  });

  it("names the rule and the request beyond the caller's rules", () => {
    expect(() => checkNoEscalation(standardCaller('email-validations:*:my'), ['email-validations:read'], [])).toThrow(
      /email-validations:read.*grants email-validations:read, which/,
    );
  });

  it('checks only the rules added, and refuses removing a denial that widens beyond the caller', () => {
    // The target already holds `users`: keeping it is no escalation by the caller.
    expect(() => checkNoEscalation(standardCaller('users:write:my'), ['users', '-users:delete'], ['users'])).not.toThrow();
    expect(() => checkNoEscalation(standardCaller('users:write:my'), ['users'], ['users', '-users:delete'])).toThrow(UserForbiddenError);
  });
});

/** A stored user as the store gives it back (a password hash, a TOTP maybe). */
function storedUser(body: Json = STANDARD, extra: Partial<UserRecord> = {}): UserRecord {
  const { record } = newUser(body, context());
  return { ...record, passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA', passwordVersion: 3, ...extra };
}

describe('patchUser', () => {
  it('applies operations to the public document and keeps the record as it was', () => {
    const record = storedUser();
    const before = structuredClone(record);
    const { detail, password, changed } = patchUser(
      record,
      [
        { op: 'test', path: '/displayName', value: 'Ann' },
        { op: 'replace', path: '/displayName', value: 'Ann B.' },
        { op: 'add', path: '/authorization/rules/-', value: '-email-validations:delete:my' },
        { op: 'add', path: '/defaults/retention', value: '1.0:0:0' },
        { op: 'add', path: '/throttling/maxEntriesPerJob', value: 500 },
      ],
      { caller: ROOT, rootUsername: 'Root' },
    );
    expect(password).toBeUndefined();
    expect(changed).toBe(true);
    expect(detail.displayName).toBe('Ann B.');
    expect(detail.authorization.rules).toEqual(['email-validations:*:my', '-email-validations:delete:my']);
    expect(detail.defaults).toEqual({ retention: '1.00:00:00' });
    expect(detail.throttling.maxEntriesPerJob).toBe(500);
    expect(record).toEqual(before);
  });

  it.each(['add', 'replace'])('sets the write-only password with %s', (op) => {
    const { detail, password } = patchUser(storedUser(), [{ op, path: '/authentication/password/password', value: 'a new password' }], { caller: ROOT, rootUsername: 'Root' });
    expect(password).toBe('a new password');
    expect(detail.authentication.password).not.toHaveProperty('password');
  });

  it('validates a new password as a creation does', () => {
    const change = (): unknown => patchUser(storedUser(), [{ op: 'add', path: '/authentication/password/password', value: 'short' }], { caller: ROOT, rootUsername: 'Root' });
    expect(fieldOf(change)).toBe('authentication.password.password');
  });

  it('needs a password to enable password authentication for a user that has none', () => {
    const record = storedUser({ type: 'Standard', displayName: 'Batch', authentication: { password: { isEnabled: false } } }, { passwordHash: undefined });
    const enable = [
      { op: 'replace', path: '/authentication/password/isEnabled', value: true },
      { op: 'add', path: '/authentication/password/username', value: 'batch' },
    ];
    expect(fieldOf(() => patchUser(record, enable, { caller: ROOT, rootUsername: 'Root' }))).toBe('authentication.password.password');
    const withPassword = [...enable, { op: 'add', path: '/authentication/password/password', value: 'long enough' }];
    expect(patchUser(record, withPassword, { caller: ROOT, rootUsername: 'Root' }).password).toBe('long enough');
  });

  it('keeps the stored captcha secret keys, which the document never shows, and takes new ones', () => {
    const record = storedUser(withField(STANDARD, 'captcha', { isEnabled: false, providers: { turnstile: { secretKey: 't-old' }, hCaptcha: { secretKey: 'h-old', siteKey: 'site' } } }));
    const kept = patchUser(record, [{ op: 'replace', path: '/captcha/isEnabled', value: true }], { caller: ROOT, rootUsername: 'Root' });
    expect(kept.detail.captcha).toEqual({ isEnabled: true, providers: { hCaptcha: { secretKey: 'h-old', siteKey: 'site' }, turnstile: { secretKey: 't-old' } } });
    const replaced = patchUser(record, [{ op: 'replace', path: '/captcha/providers/turnstile/secretKey', value: 't-new' }], { caller: ROOT, rootUsername: 'Root' });
    expect(replaced.detail.captcha.providers?.turnstile?.secretKey).toBe('t-new');
    // A provider added by a patch needs its secret key.
    const added = (): unknown => patchUser(record, [{ op: 'add', path: '/captcha/providers/reCaptchaV2', value: {} }], { caller: ROOT, rootUsername: 'Root' });
    expect(fieldOf(added)).toBe('captcha.providers.reCaptchaV2.secretKey');
  });

  it('answers a failed test with PatchTestFailedError and changes nothing', () => {
    const record = storedUser();
    const operations = [
      { op: 'replace', path: '/displayName', value: 'Changed' },
      { op: 'test', path: '/displayName', value: 'Ann' },
    ];
    expect(() => patchUser(record, operations, { caller: ROOT, rootUsername: 'Root' })).toThrow(PatchTestFailedError);
    expect(record.detail.displayName).toBe('Ann');
  });

  it('never confirms a secret through a test operation', () => {
    const record = storedUser(withField(STANDARD, 'captcha.providers', { turnstile: { secretKey: 't-secret' } }));
    for (const [path, value] of [['/captcha/providers/turnstile/secretKey', 't-secret'], ['/authentication/password/password', 'correct horse']] as const) {
      expect(() => patchUser(record, [{ op: 'test', path, value }], { caller: ROOT, rootUsername: 'Root' })).toThrow(PatchTestFailedError);
    }
  });

  // [what is wrong, operations, the field named]
  const REFUSED: ReadonlyArray<readonly [string, unknown, string]> = [
    ['a body that is not an array', { op: 'add', path: '/displayName', value: 'x' }, ''],
    ['an operation that is not an object', ['replace'], '[0]'],
    ['an unknown op', [{ op: 'merge', path: '/displayName', value: 'x' }], '[0].op'],
    ['a path that is not a pointer', [{ op: 'replace', path: 'displayName', value: 'x' }], '[0].path'],
    ['no value', [{ op: 'test', path: '/displayName', value: 'Ann' }, { op: 'replace', path: '/displayName' }], '[1].value'],
    ['a move with no from', [{ op: 'move', path: '/displayName' }], '[0].from'],
    ['a replace of a field not in the document', [{ op: 'replace', path: '/defaults/retention', value: '1:0:0' }], '[0].path'],
    ['an add under a missing parent', [{ op: 'add', path: '/nothing/here', value: 1 }], '[0].path'],
    ['a copy from a write-only field', [{ op: 'test', path: '/isActive', value: true }, { op: 'copy', from: '/authentication/password/password', path: '/displayName' }], '[1].from'],
    ['a replace, second, of a field not in the document', [{ op: 'replace', path: '/isActive', value: false }, { op: 'replace', path: '/nothing', value: 1 }], '[1].path'],
    ['an add of an unknown field', [{ op: 'add', path: '/firewall/isEnabeld', value: true }], 'firewall.isEnabeld'],
    ['an add of a contact method', [{ op: 'add', path: '/preferredContactMethod', value: 'c' }], 'preferredContactMethod'],
    ['a removed display name', [{ op: 'remove', path: '/displayName' }], 'displayName'],
    ['a type of BrowserApp', [{ op: 'replace', path: '/type', value: 'BrowserApp' }], 'type'],
    ['a malformed rule added', [{ op: 'add', path: '/authorization/rules/0', value: 'users:' }], 'authorization.rules[0]'],
    ["root's username", [{ op: 'replace', path: '/authentication/password/username', value: 'ROOT' }], 'authentication.password.username'],
    ['isMfaRequired with no TOTP enrolled', [{ op: 'replace', path: '/authentication/password/isMfaRequired', value: true }], 'authentication.password.isMfaRequired'],
    ['a __proto__ path', [{ op: 'add', path: '/__proto__/polluted', value: true }], '[0].path'],
  ];
  it.each(REFUSED)('refuses %s', (_name, operations, field) => {
    expect(fieldOf(() => patchUser(storedUser(), operations, { caller: ROOT, rootUsername: 'Root' }))).toBe(field);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('allows isMfaRequired while a TOTP is enrolled', () => {
    const record = storedUser(STANDARD, { totp: { secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' } });
    const { detail } = patchUser(record, [{ op: 'replace', path: '/authentication/password/isMfaRequired', value: true }], { caller: ROOT, rootUsername: 'Root' });
    expect(detail.authentication.password.isMfaRequired).toBe(true);
    const pending = storedUser(STANDARD, { totp: { pendingSecret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' } });
    expect(() => patchUser(pending, [{ op: 'replace', path: '/authentication/password/isMfaRequired', value: true }], { caller: ROOT, rootUsername: 'Root' })).toThrow(UserFieldError);
  });

  it('lets the type change between Administrator and Standard, for administrators only', () => {
    const toAdmin = [{ op: 'replace', path: '/type', value: 'Administrator' }];
    expect(patchUser(storedUser(), toAdmin, { caller: ADMIN, rootUsername: 'Root' }).detail.type).toBe('Administrator');
    expect(() => patchUser(storedUser(), toAdmin, { caller: standardCaller('users', 'email-validations'), rootUsername: 'Root' })).toThrow(UserForbiddenError);
    const admin = storedUser(ADMINISTRATOR);
    expect(patchUser(admin, [{ op: 'replace', path: '/type', value: 'Standard' }], { caller: ROOT, rootUsername: 'Root' }).detail.type).toBe('Standard');
  });

  it('lets no non-administrator change an administrator, even harmlessly', () => {
    const admin = storedUser(ADMINISTRATOR);
    const rename = [{ op: 'replace', path: '/displayName', value: 'Boss' }];
    expect(() => patchUser(admin, rename, { caller: standardCaller('*'), rootUsername: 'Root' })).toThrow(UserForbiddenError);
    // Nor demote one, nor probe one with a test operation.
    const demote = [{ op: 'replace', path: '/type', value: 'Standard' }];
    expect(() => patchUser(admin, demote, { caller: standardCaller('*'), rootUsername: 'Root' })).toThrow(UserForbiddenError);
    const probe = [{ op: 'test', path: '/displayName', value: 'not it' }];
    expect(() => patchUser(admin, probe, { caller: standardCaller('*'), rootUsername: 'Root' })).toThrow(UserForbiddenError);
    expect(patchUser(admin, rename, { caller: ADMIN, rootUsername: 'Root' }).detail.displayName).toBe('Boss');
  });

  it('refuses a rule added beyond the caller (escalation) and allows one it holds', () => {
    const record = storedUser();
    const add = (rule: string): unknown => patchUser(record, [{ op: 'add', path: '/authorization/rules/-', value: rule }], { caller: MANAGER, rootUsername: 'Root' });
    expect(() => add('email-validations:read')).toThrow(UserForbiddenError);
    expect(() => add('users:write')).not.toThrow();
    expect(() => add('-users')).not.toThrow();
  });

  it('does not count rules the user already held as given by the caller', () => {
    const record = storedUser(withField(STANDARD, 'authorization.rules', ['email-validations', 'credits']));
    const rename = [{ op: 'replace', path: '/displayName', value: 'Ann B.' }];
    expect(patchUser(record, rename, { caller: MANAGER, rootUsername: 'Root' }).detail.displayName).toBe('Ann B.');
  });

  describe('a BrowserApp', () => {
    const app = (): UserRecord => storedUser(BROWSER_APP, { passwordHash: undefined });

    it('shows and keeps its fixed rules, and accepts other changes', () => {
      const { detail } = patchUser(app(), [{ op: 'replace', path: '/trustedOrigin', value: { isEnabled: true, expressions: ['https://shop.example'] } }], { caller: ROOT, rootUsername: 'Root' });
      expect(detail.authorization.rules).toEqual(BROWSER_APP_RULES);
      expect(detail.authentication.password.username).toBe(KEY);
      expect(detail.trustedOrigin.isEnabled).toBe(true);
    });

    it.each<[string, unknown[], string]>([
      ['a type change', [{ op: 'replace', path: '/type', value: 'Standard' }], 'type'],
      ['a key change', [{ op: 'replace', path: '/authentication/password/username', value: 'x'.repeat(32) }], 'authentication.password.username'],
      ['a key removed', [{ op: 'remove', path: '/authentication/password/username' }], 'authentication.password.username'],
      ['a rule added', [{ op: 'add', path: '/authorization/rules/-', value: 'users:read:my' }], 'authorization.rules'],
      ['a rule removed', [{ op: 'remove', path: '/authorization/rules/1' }], 'authorization.rules'],
      ['a password', [{ op: 'add', path: '/authentication/password/password', value: 'a password' }], 'authentication.password.password'],
    ])('refuses %s', (_name, operations, field) => {
      expect(fieldOf(() => patchUser(app(), operations, { caller: ROOT, rootUsername: 'Root' }))).toBe(field);
    });

    it('cannot become one', () => {
      expect(fieldOf(() => patchUser(storedUser(), [{ op: 'replace', path: '/type', value: 'BrowserApp' }], { caller: ROOT, rootUsername: 'Root' }))).toBe('type');
    });
  });

  it('reports no change for a patch that changes nothing', () => {
    expect(patchUser(storedUser(), [{ op: 'test', path: '/isActive', value: true }], { caller: ROOT, rootUsername: 'Root' }).changed).toBe(false);
  });
});

describe('changedUserRecord', () => {
  it('gives a new etag on a change and bumps the password version with a new hash', () => {
    const record = storedUser();
    const change = patchUser(record, [{ op: 'replace', path: '/authentication/password/password', value: 'another password' }], { caller: ROOT, rootUsername: 'Root' });
    const next = changedUserRecord(record, change, '$argon2id$new');
    expect(next.etag).not.toBe(record.etag);
    expect(next).toMatchObject({ passwordHash: '$argon2id$new', passwordVersion: 4 });
    const rename = patchUser(record, [{ op: 'replace', path: '/displayName', value: 'Other' }], { caller: ROOT, rootUsername: 'Root' });
    const renamed = changedUserRecord(record, rename);
    expect(renamed).toMatchObject({ passwordHash: record.passwordHash, passwordVersion: 3 });
    expect(renamed.etag).not.toBe(record.etag);
  });

  it('keeps the etag when nothing changed', () => {
    const record = storedUser();
    const same = patchUser(record, [], { caller: ROOT, rootUsername: 'Root' });
    expect(changedUserRecord(record, same).etag).toBe(record.etag);
  });
});

describe('the documents shown', () => {
  const record = storedUser(
    withField(STANDARD, 'captcha', { isEnabled: true, providers: { hCaptcha: { secretKey: 'H-SECRET', siteKey: 'site' }, reCaptchaV2: { secretKey: 'R2-SECRET' }, reCaptchaV3: { secretKey: 'R3-SECRET', minScore: 0.3 }, turnstile: { secretKey: 'T-SECRET' } } }),
    { totp: { secret: 'TOTPSECRETAAAAAA', pendingSecret: 'PENDINGSECRETBBB', lastStep: 9 } },
  );

  it('never shows a password, its hash, a TOTP secret or a captcha secret key', () => {
    const shown = JSON.stringify([userDetailView(record), userOverviewView(record)]);
    for (const secret of ['H-SECRET', 'R2-SECRET', 'R3-SECRET', 'T-SECRET', 'TOTPSECRET', 'PENDINGSECRET', 'argon2', 'correct horse', 'secretKey', 'totp', '"password":"', 'passwordHash']) {
      expect(shown).not.toContain(secret);
    }
    expect(userDetailView(record).captcha).toEqual({ isEnabled: true, providers: { hCaptcha: { siteKey: 'site' }, reCaptchaV2: {}, reCaptchaV3: { minScore: 0.3 }, turnstile: {} } });
  });

  it('shows the detail in the User detail shape, with defaults {} when empty', () => {
    expect(userDetailView(storedUser())).toEqual(defaultStandardDetail('Ann', 'ann'));
  });

  it("shows a BrowserApp's two fixed rules whatever is stored", () => {
    const app = storedUser(BROWSER_APP);
    const tampered: UserRecord = { ...app, detail: { ...app.detail, authorization: { rules: ['*'] } } };
    expect(userDetailView(tampered).authorization.rules).toEqual(['email-validations:write:my', 'email-validations:read:my']);
  });

  it('gives a fresh document each time: changing it changes no record', () => {
    const view = userDetailView(record) as unknown as { authorization: { rules: string[] } };
    view.authorization.rules.push('*');
    expect(record.detail.authorization.rules).toEqual(['email-validations:*:my']);
  });

  it('shows the overview, with isDeleted only for a deleted user', () => {
    expect(userOverviewView(record)).toEqual({ id: record.id, displayName: 'Ann', etag: record.etag, isActive: true, type: 'Standard' });
    expect(userOverviewView({ ...record, deletedOn: '2026-02-01T00:00:00.000Z' })).toMatchObject({ isDeleted: true });
  });
});

describe('helpers', () => {
  it('tells administrators: root and the Administrator type', () => {
    expect([ROOT, ADMIN, MANAGER, standardCaller('*')].map(isAdministrator)).toEqual([true, true, false, false]);
  });

  it('makes 32-character alphanumeric keys and distinct etags', () => {
    expect(newBrowserAppKey()).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(newBrowserAppKey()).not.toBe(newBrowserAppKey());
    expect(userEtag()).not.toBe(userEtag());
  });
});
