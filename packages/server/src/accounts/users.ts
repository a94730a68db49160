/**
 * The users of an account, as plain functions: a new user from the body of its creation, a change from a JSON Patch
 * (RFC 6902) on its public document, the documents shown (detail and overview), and who may do what to whom
 * (administrators, no escalation of rules). No HTTP and no store here: errors are classes the server turns into 400,
 * 403 and 409 answers, and the caller stores the records.
 */
import { randomBytes, randomInt } from 'node:crypto';
import jsonPatch from 'fast-json-patch';
import { formatDuration, parseDuration } from '../jobs/duration.js';
import { usernameKey } from './usernames.js';
import { addressValue } from './firewall.js';
import {
  PermissionRuleError,
  RESOURCE_OPERATIONS,
  isAllowed,
  parseRules,
  type Operation,
  type PermissionRequest,
  type PermissionRule,
  type Resource,
} from './permissions.js';
import {
  USER_TYPES,
  type CaptchaProviders,
  type FirewallRule,
  type ThrottlingRule,
  type UserDetail,
  type UserRecord,
  type UserType,
} from './types.js';

/** The fixed rules of a BrowserApp: it submits jobs and reads its own, nothing else. */
export const BROWSER_APP_RULES: readonly string[] = ['email-validations:write:my', 'email-validations:read:my'];
/** The rules of a Standard user created without any: everything on its own jobs. */
export const STANDARD_DEFAULT_RULES: readonly string[] = ['email-validations:*:my'];

/** Length of a BrowserApp's publishable key (its username). */
export const BROWSER_APP_KEY_LENGTH = 32;
const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const MAX_TEXT = 256;
const MIN_PASSWORD = 8;
const MIN_RETENTION_MS = 5 * 60_000;
const MAX_RETENTION_MS = 30 * 86_400_000;

/** Who makes a request: root, or a user with its type and current rules. */
export interface Caller {
  readonly isRoot: boolean;
  readonly type?: UserType;
  readonly rules: readonly string[];
  readonly userId?: string;
}

/** A field of the document that is wrong: 400 naming its full JSON path (`authentication.password.username`). */
export class UserFieldError extends Error {
  constructor(
    /** The JSON path of the field (`firewall.rules[0].startIP`, `[1].path` for a patch operation); '' for the whole body. */
    readonly field: string,
    readonly problem: string,
  ) {
    super(field === '' ? problem : `${field}: ${problem}`);
    this.name = 'UserFieldError';
  }
}

/** The caller may not do this to this user (an administrator, an escalation of rules): 403. */
export class UserForbiddenError extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = 'UserForbiddenError';
  }
}

/** A `test` operation of a patch failed (RFC 6902 §4.6), so nothing was changed: 409. */
export class PatchTestFailedError extends Error {
  constructor(readonly index: number) {
    super(`the test operation at [${index}] failed: nothing was changed`);
    this.name = 'PatchTestFailedError';
  }
}

/** Root and administrators may do anything; the rules of an administrator are not consulted. */
export function isAdministrator(caller: Caller): boolean {
  return caller.isRoot || caller.type === 'Administrator';
}

/** A fresh entity tag for a user: random, so it differs after every change, and stored, so it survives restarts. */
export function userEtag(): string {
  return randomBytes(16).toString('hex');
}

/** A BrowserApp's publishable key: 32 characters of `[A-Za-z0-9]`, uniformly random. */
export function newBrowserAppKey(): string {
  let key = '';
  for (let i = 0; i < BROWSER_APP_KEY_LENGTH; i++) key += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return key;
}

// ---------------------------------------------------------------------------------------------------------------
// Documents shown

/** A captcha provider as shown: its settings without the `secretKey`. */
export interface PublicCaptchaProviders {
  readonly hCaptcha?: { readonly siteKey: string };
  readonly reCaptchaV2?: Record<string, never>;
  readonly reCaptchaV3?: { readonly minScore?: number };
  readonly turnstile?: Record<string, never>;
}

/** The User detail as answered: the stored detail without secrets. */
export type UserDetailView = Omit<UserDetail, 'captcha'> & {
  readonly captcha: { readonly isEnabled: boolean; readonly providers?: PublicCaptchaProviders };
};

export interface UserOverview {
  readonly id: string;
  readonly displayName: string;
  readonly etag: string;
  readonly isActive: boolean;
  /** Present (true) only for a deleted user. */
  readonly isDeleted?: true;
  readonly type: UserType;
}

/**
 * The User detail of `record`, a fresh object: never the password, its hash, TOTP secrets or captcha secret keys. A
 * BrowserApp shows its two fixed rules.
 */
export function userDetailView(record: UserRecord): UserDetailView {
  const d = record.detail;
  const password = d.authentication.password;
  const providers = d.captcha.providers === undefined ? undefined : publicProviders(d.captcha.providers);
  return {
    type: d.type,
    displayName: d.displayName,
    isActive: d.isActive,
    authentication: {
      password: {
        isEnabled: password.isEnabled,
        isMfaRequired: password.isMfaRequired,
        ...(password.username !== undefined && { username: password.username }),
      },
      certificate: { isEnabled: d.authentication.certificate.isEnabled },
    },
    authorization: { rules: d.type === 'BrowserApp' ? [...BROWSER_APP_RULES] : [...d.authorization.rules] },
    captcha: { isEnabled: d.captcha.isEnabled, ...(providers !== undefined && { providers }) },
    defaults: d.defaults.retention === undefined ? {} : { retention: d.defaults.retention },
    firewall: { isEnabled: d.firewall.isEnabled, rules: d.firewall.rules.map((rule) => ({ ...rule })) },
    throttling: {
      ...(d.throttling.maxEntriesPerJob !== undefined && { maxEntriesPerJob: d.throttling.maxEntriesPerJob }),
      rules: d.throttling.rules.map((rule) => ({ ...rule })),
    },
    trustedOrigin: { isEnabled: d.trustedOrigin.isEnabled, expressions: [...d.trustedOrigin.expressions] },
  };
}

function publicProviders(providers: CaptchaProviders): PublicCaptchaProviders | undefined {
  const shown: { -readonly [K in keyof PublicCaptchaProviders]: PublicCaptchaProviders[K] } = {};
  if (providers.hCaptcha) shown.hCaptcha = { siteKey: providers.hCaptcha.siteKey };
  if (providers.reCaptchaV2) shown.reCaptchaV2 = {};
  if (providers.reCaptchaV3) {
    const { minScore } = providers.reCaptchaV3;
    shown.reCaptchaV3 = minScore === undefined ? {} : { minScore };
  }
  if (providers.turnstile) shown.turnstile = {};
  return Object.keys(shown).length === 0 ? undefined : shown;
}

/** The User overview of `record` (listings, and the answer of a creation or change). */
export function userOverviewView(record: UserRecord): UserOverview {
  return {
    id: record.id,
    displayName: record.detail.displayName,
    etag: record.etag,
    isActive: record.detail.isActive,
    ...(record.deletedOn !== undefined && { isDeleted: true as const }),
    type: record.detail.type,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Creation

export interface NewUserContext {
  /** The new user's id (a random lower-case UUID). */
  readonly id: string;
  /** ISO 8601 creation time. */
  readonly now: string;
  readonly caller: Caller;
  /** Root's username: no user may take it (compared case-insensitively). */
  readonly rootUsername: string;
  /** Makes a BrowserApp's key (default: newBrowserAppKey). */
  readonly makeKey?: () => string;
}

export interface NewUser {
  /** The record to store once the password's hash is added (`passwordHash`), when `password` is present. */
  readonly record: Omit<UserRecord, 'passwordHash'>;
  /** The password given, to hash; absent for a BrowserApp or a user created without password authentication. */
  readonly password?: string;
}

/**
 * A new user from the body of its creation (the User detail shape plus `authentication.password.password`), with the
 * defaults of absent settings. UserFieldError for a body that is not valid; UserForbiddenError when a
 * non-administrator creates an administrator or gives rules beyond its own. Username uniqueness is the store's.
 */
export function newUser(body: unknown, ctx: NewUserContext): NewUser {
  const { detail, password } = readUserDocument(body, {
    creating: true,
    rootUsername: ctx.rootUsername,
    hasPassword: false,
    totpEnrolled: false,
  });
  if (!isAdministrator(ctx.caller)) {
    if (detail.type === 'Administrator') throw new UserForbiddenError('Only administrators may create an administrator.');
    // Defaults and a BrowserApp's fixed rules count as given by the caller.
    checkNoEscalation(ctx.caller, detail.authorization.rules, []);
  }
  const finalDetail: UserDetail =
    detail.type === 'BrowserApp'
      ? { ...detail, authentication: { ...detail.authentication, password: { ...detail.authentication.password, username: (ctx.makeKey ?? newBrowserAppKey)() } } }
      : detail;
  return {
    record: { id: ctx.id, createdOn: ctx.now, etag: userEtag(), detail: finalDetail, passwordVersion: 0 },
    ...(password !== undefined && { password }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Change

export interface PatchContext {
  readonly caller: Caller;
  readonly rootUsername: string;
}

export interface PatchedUser {
  /** The user's new detail, to store (captcha secret keys kept where the patch did not give new ones). */
  readonly detail: UserDetail;
  /** A new password, to hash (the password's version then changes). */
  readonly password?: string;
  /** Whether anything changed: the detail or the password. */
  readonly changed: boolean;
}

const PATCH_OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);
const CAPTCHA_PROVIDER_NAMES = ['hCaptcha', 'reCaptchaV2', 'reCaptchaV3', 'turnstile'] as const;
/** Paths that may be written but are never shown: `replace` on them sets them as `add` does. */
const WRITE_ONLY_PATHS = new Set([
  '/authentication/password/password',
  ...CAPTCHA_PROVIDER_NAMES.map((name) => `/captcha/providers/${name}/secretKey`),
]);

/**
 * Applies RFC 6902 `operations` to the user's public document (its User detail, where the write-only password and
 * captcha secret keys may also be set), all or nothing, and validates the result as a creation body is. Errors as
 * newUser's, and PatchTestFailedError for a failed `test`. `record` is not changed.
 */
export function patchUser(record: UserRecord, operations: unknown, ctx: PatchContext): PatchedUser {
  const admin = isAdministrator(ctx.caller);
  if (!admin && record.detail.type === 'Administrator') throw new UserForbiddenError('Only administrators may change an administrator.');

  const patched = applyOperations(userDetailView(record), readOperations(operations));
  const stored = record.detail;
  const { detail: read, password } = readUserDocument(patched, {
    creating: false,
    rootUsername: ctx.rootUsername,
    hasPassword: record.passwordHash !== undefined,
    totpEnrolled: record.totp?.secret !== undefined,
    storedType: stored.type,
    ...(stored.type === 'BrowserApp' && stored.authentication.password.username !== undefined && { browserAppKey: stored.authentication.password.username }),
    ...(stored.captcha.providers !== undefined && { storedProviders: stored.captcha.providers }),
  });

  if (!admin) {
    if (read.type === 'Administrator') throw new UserForbiddenError('Only administrators may make a user an administrator.');
    checkNoEscalation(ctx.caller, read.authorization.rules, stored.authorization.rules);
  }
  // A BrowserApp keeps its stored rules (the fixed ones), whatever the document showed.
  const detail: UserDetail = read.type === 'BrowserApp' ? { ...read, authorization: { rules: [...BROWSER_APP_RULES] } } : read;
  if (!admin && record.id !== ctx.caller.userId) checkNoTakeover(ctx.caller, stored, detail, password !== undefined);
  const changed = password !== undefined || JSON.stringify(detail) !== JSON.stringify(stored);
  return { detail, ...(password !== undefined && { password }), changed };
}

/** The record of a user after a change: the new detail and etag; a new password's hash bumps its version. */
export function changedUserRecord(record: UserRecord, change: PatchedUser, passwordHash?: string): UserRecord {
  const newPassword = passwordHash !== undefined;
  return {
    ...record,
    detail: change.detail,
    etag: change.changed || newPassword ? userEtag() : record.etag,
    ...(newPassword && { passwordHash, passwordVersion: record.passwordVersion + 1 }),
  };
}

type PatchOperation = Parameters<typeof jsonPatch.applyPatch>[1][number];

/** The operations of a patch, checked for their shape (RFC 6902 §4) before any is applied. */
function readOperations(operations: unknown): PatchOperation[] {
  if (!Array.isArray(operations)) throw new UserFieldError('', 'the body must be an array of JSON Patch operations (RFC 6902)');
  return operations.map((operation: unknown, index): PatchOperation => {
    const at = `[${index}]`;
    if (!isPlainObject(operation)) throw new UserFieldError(at, 'must be an object');
    const { op, path } = operation;
    if (typeof op !== 'string' || !PATCH_OPS.has(op)) throw new UserFieldError(`${at}.op`, 'must be add, remove, replace, move, copy or test');
    if (typeof path !== 'string' || (path !== '' && !path.startsWith('/'))) throw new UserFieldError(`${at}.path`, 'must be a JSON Pointer (RFC 6901)');
    if ((op === 'move' || op === 'copy') && typeof operation['from'] !== 'string') throw new UserFieldError(`${at}.from`, 'is required');
    if ((op === 'add' || op === 'replace' || op === 'test') && !Object.hasOwn(operation, 'value')) throw new UserFieldError(`${at}.value`, 'is required');
    // A write-only field is absent from the document: `replace` sets it as `add` does.
    const effectiveOp = op === 'replace' && WRITE_ONLY_PATHS.has(path) ? 'add' : op;
    return { ...operation, op: effectiveOp } as PatchOperation;
  });
}

/**
 * The document after every operation, or an error and nothing applied: they are applied one by one to a copy (the
 * library's own errors do not always tell which operation failed).
 */
function applyOperations(document: UserDetailView, operations: PatchOperation[]): unknown {
  let patched: unknown = jsonPatch.deepClone(document);
  operations.forEach((operation, index) => {
    for (const field of ['path', 'from'] as const) {
      const pointer = (operation as { path: string; from?: string })[field];
      if (pointer !== undefined && !arrayIndicesValid(patched, pointer)) {
        throw new UserFieldError(`[${index}].${field}`, 'names an array element by an index with a leading zero (RFC 6901 §4: 0, or digits from 1 to 9 first)');
      }
    }
    try {
      patched = jsonPatch.applyOperation(patched, operation, true, true, true, index).newDocument;
    } catch (error) {
      if (error instanceof jsonPatch.JsonPatchError) {
        if (error.name === 'TEST_OPERATION_FAILED') throw new PatchTestFailedError(index);
        const field = error.name === 'OPERATION_FROM_UNRESOLVABLE' ? 'from' : 'path';
        throw new UserFieldError(`[${index}].${field}`, patchProblem(error.name));
      }
      // The library refuses `__proto__` and `constructor/prototype` with a TypeError.
      if (error instanceof TypeError) throw new UserFieldError(`[${index}].path`, 'may not name __proto__ or constructor/prototype');
      throw error;
    }
  });
  return patched;
}

/** RFC 6901 §4: an array index is `0` or digits without a leading zero (`-`, past the end, is for `add`). */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*|-)$/;

/**
 * Whether every segment of the JSON Pointer `pointer` that names an element of an array of `document` is an index as
 * RFC 6901 writes one. Only the leading zero is judged here: the library refuses what is not a number, or too large.
 */
function arrayIndicesValid(document: unknown, pointer: string): boolean {
  let node: unknown = document;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      if (/^0[0-9]/.test(segment)) return false;
      node = ARRAY_INDEX.test(segment) ? node[Number(segment)] : undefined;
    } else if (typeof node === 'object' && node !== null && Object.hasOwn(node, segment)) {
      node = (node as Record<string, unknown>)[segment];
    } else {
      return true;
    }
  }
  return true;
}

function patchProblem(code: string): string {
  switch (code) {
    case 'OPERATION_PATH_UNRESOLVABLE':
      return 'names a field that is not in the document';
    case 'OPERATION_FROM_UNRESOLVABLE':
      return 'names a field that is not in the document';
    case 'OPERATION_PATH_CANNOT_ADD':
      return 'cannot be added: its parent is not in the document';
    case 'OPERATION_PATH_ILLEGAL_ARRAY_INDEX':
      return 'names an array element by something other than an index';
    case 'OPERATION_VALUE_OUT_OF_BOUNDS':
      return 'names an array index past its end';
    default:
      return 'cannot be applied';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// No escalation

const ALL_RESOURCES = Object.keys(RESOURCE_OPERATIONS) as Resource[];

/** Every request a grant allows. Credits are account-wide only, so a `:my` credits grant reaches nothing. */
export function grantReach(rule: PermissionRule): PermissionRequest[] {
  if (rule.deny) return [];
  const reached: PermissionRequest[] = [];
  for (const resource of rule.resource === '*' ? ALL_RESOURCES : [rule.resource]) {
    const operations: readonly Operation[] = RESOURCE_OPERATIONS[resource];
    for (const operation of operations) {
      if (rule.operation !== undefined && rule.operation !== '*' && rule.operation !== operation) continue;
      // An omitted scope is the whole account, which includes `my`.
      for (const scope of rule.scope === undefined ? (['my', 'account'] as const) : (['my'] as const)) {
        if (resource === 'credits' && scope === 'my') continue;
        reached.push({ resource, operation, scope });
      }
    }
  }
  return reached;
}

/** Every request there is, to compare what two sets of rules allow. */
const ALL_REQUESTS: readonly PermissionRequest[] = grantReach({ deny: false, resource: '*', operation: undefined, scope: undefined });

const requestText = (request: PermissionRequest): string => `${request.resource}:${request.operation}${request.scope === 'my' ? ':my' : ''}`;

/**
 * No escalation by a non-administrator: every request a grant it adds reaches, and every request the new rules allow
 * that the previous ones did not (a denial it removes), must be allowed by its own rules. Adding a denial never
 * escalates. UserForbiddenError naming the first request beyond the caller's rules.
 */
export function checkNoEscalation(caller: Caller, newRules: readonly string[], previousRules: readonly string[]): void {
  const own = parseRules(caller.rules);
  const granted = parseRules(newRules);
  const previous = new Set(previousRules);
  granted.forEach((rule, index) => {
    if (previous.has(newRules[index]!)) return;
    for (const request of grantReach(rule)) {
      if (!isAllowed(own, request)) {
        throw new UserForbiddenError(`The rule ${JSON.stringify(newRules[index])} grants ${requestText(request)}, which the caller's own rules do not.`);
      }
    }
  });
  const before = parseRules(previousRules);
  for (const request of ALL_REQUESTS) {
    if (isAllowed(granted, request) && !isAllowed(before, request) && !isAllowed(own, request)) {
      throw new UserForbiddenError(`The new rules grant ${requestText(request)}, which the caller's own rules do not.`);
    }
  }
}

/**
 * What decides who signs in as a user. A caller whose rules are narrower than that user's changes none of these on it
 * (nor its password): it could then sign in as that user, with more than its own rules.
 */
const SIGN_IN_SETTINGS: readonly { readonly field: string; readonly of: (detail: UserDetail) => unknown }[] = [
  // The name a password signs in with, and the CN a client certificate must carry.
  { field: 'authentication.password.username', of: (detail) => detail.authentication.password.username },
  { field: 'authentication.password.isEnabled', of: (detail) => detail.authentication.password.isEnabled },
  // Turned off, the password alone signs in again.
  { field: 'authentication.password.isMfaRequired', of: (detail) => detail.authentication.password.isMfaRequired },
  { field: 'authentication.certificate.isEnabled', of: (detail) => detail.authentication.certificate.isEnabled },
  { field: 'isActive', of: (detail) => detail.isActive },
];

/** Whether every request `rules` allow is allowed by the caller's own rules. */
function withinRules(caller: Caller, rules: readonly string[]): boolean {
  try {
    checkNoEscalation(caller, rules, []);
    return true;
  } catch (error) {
    if (error instanceof UserForbiddenError) return false;
    throw error;
  }
}

/**
 * A non-administrator changing another user: when that user's rules, before or after the change, go beyond the
 * caller's, no setting that decides who signs in as the user may change (UserForbiddenError naming it).
 */
function checkNoTakeover(caller: Caller, stored: UserDetail, changed: UserDetail, newPassword: boolean): void {
  if (withinRules(caller, stored.authorization.rules) && withinRules(caller, changed.authorization.rules)) return;
  const field = newPassword
    ? 'authentication.password.password'
    : SIGN_IN_SETTINGS.find((setting) => setting.of(stored) !== setting.of(changed))?.field;
  if (field !== undefined) {
    throw new UserForbiddenError(`This user may not change ${field} of a user whose rules go beyond its own: it decides who signs in as that user.`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Validation of a user document

interface ReadOptions {
  /** A creation body (a BrowserApp's key and rules are then never given), or the result of a patch. */
  readonly creating: boolean;
  readonly rootUsername: string;
  /** The user has a password already (a patch need not give one). */
  readonly hasPassword: boolean;
  /** The user has an enrolled TOTP (isMfaRequired may then be true). */
  readonly totpEnrolled: boolean;
  /** The type before a patch. */
  readonly storedType?: UserType;
  /** A BrowserApp's key before a patch, which cannot change. */
  readonly browserAppKey?: string;
  /** The stored captcha providers, whose secret keys a patch keeps when it gives no new ones. */
  readonly storedProviders?: CaptchaProviders;
}

interface ReadDocument {
  readonly detail: UserDetail;
  readonly password?: string;
}

type Json = Record<string, unknown>;

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** The object at `path`, absent as undefined (null counts as absent), its fields limited to `known`. */
function readObject(value: unknown, path: string, known: readonly string[]): Json | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) throw new UserFieldError(path, 'must be an object');
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new UserFieldError(join(path, key), 'is not a field of the user');
  }
  return value;
}

function readBoolean(value: unknown, path: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw new UserFieldError(path, 'must be true or false');
  return value;
}

function readString(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new UserFieldError(path, 'must be a string');
  return value;
}

function readArray(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new UserFieldError(path, 'must be an array');
  return value;
}

/** Characters as code points, so an astral character counts once. */
const lengthOf = (text: string): number => [...text].length;

/** ASCII lower case (usernames compare case-insensitively in ASCII only, as the store does). */

const CONTACT_METHODS = ['preferredContactMethod', 'recoveryContactMethod'];

function readUserDocument(body: unknown, options: ReadOptions): ReadDocument {
  if (!isPlainObject(body)) throw new UserFieldError('', 'the body must be a JSON object, the User detail');
  for (const key of CONTACT_METHODS) {
    if (Object.hasOwn(body, key)) throw new UserFieldError(key, 'contact methods are not supported');
  }
  const doc = readObject(body, '', [
    'type',
    'displayName',
    'isActive',
    'authentication',
    'authorization',
    'captcha',
    'defaults',
    'firewall',
    'throttling',
    'trustedOrigin',
  ])!;

  const type = doc['type'];
  if (type === undefined || type === null) throw new UserFieldError('type', 'is required');
  if (typeof type !== 'string' || !(USER_TYPES as readonly string[]).includes(type)) throw new UserFieldError('type', 'must be Administrator, Standard or BrowserApp');
  const userType = type as UserType;
  if (options.storedType !== undefined && userType !== options.storedType && (userType === 'BrowserApp' || options.storedType === 'BrowserApp')) {
    throw new UserFieldError('type', 'may change between Administrator and Standard only, never to or from BrowserApp');
  }

  const displayName = readString(doc['displayName'], 'displayName');
  if (displayName === undefined) throw new UserFieldError('displayName', 'is required');
  if (lengthOf(displayName) < 1 || lengthOf(displayName) > MAX_TEXT) throw new UserFieldError('displayName', `must have 1 to ${MAX_TEXT} characters`);

  const isActive = readBoolean(doc['isActive'], 'isActive', true);
  const { authentication, password } = readAuthentication(doc['authentication'], userType, options);
  const rules = readAuthorization(doc['authorization'], userType, options);

  return {
    detail: {
      type: userType,
      displayName,
      isActive,
      authentication,
      authorization: { rules },
      captcha: readCaptcha(doc['captcha'], options.storedProviders),
      defaults: readDefaults(doc['defaults']),
      firewall: readFirewall(doc['firewall']),
      throttling: readThrottling(doc['throttling']),
      trustedOrigin: readTrustedOrigin(doc['trustedOrigin'], userType),
    },
    ...(password !== undefined && { password }),
  };
}

function readAuthentication(value: unknown, type: UserType, options: ReadOptions): { authentication: UserDetail['authentication']; password?: string } {
  if (isPlainObject(value) && Object.hasOwn(value, 'recoveryContactMethod')) {
    throw new UserFieldError('authentication.recoveryContactMethod', 'contact methods are not supported');
  }
  const auth = readObject(value, 'authentication', ['password', 'certificate']);
  const passwordObject = readObject(auth?.['password'], 'authentication.password', ['isEnabled', 'isMfaRequired', 'username', 'password']);
  const certificateObject = readObject(auth?.['certificate'], 'authentication.certificate', ['isEnabled']);

  const isEnabled = readBoolean(passwordObject?.['isEnabled'], 'authentication.password.isEnabled', true);
  const isMfaRequired = readBoolean(passwordObject?.['isMfaRequired'], 'authentication.password.isMfaRequired', false);
  if (isMfaRequired && !options.totpEnrolled) {
    throw new UserFieldError('authentication.password.isMfaRequired', 'may be true only while a TOTP is enrolled');
  }
  const certificate = readBoolean(certificateObject?.['isEnabled'], 'authentication.certificate.isEnabled', false);
  if (certificate && type !== 'Standard') throw new UserFieldError('authentication.certificate.isEnabled', 'only Standard users may authenticate with a certificate');

  const usernamePath = 'authentication.password.username';
  const passwordPath = 'authentication.password.password';
  let username = readString(passwordObject?.['username'], usernamePath);
  const password = readString(passwordObject?.['password'], passwordPath);

  if (type === 'BrowserApp') {
    // Its username is its publishable key, made by the server; it is passwordless.
    if (options.creating ? username !== undefined : username !== options.browserAppKey) {
      throw new UserFieldError(usernamePath, "a BrowserApp's key is made by the server and cannot be given or changed");
    }
    if (password !== undefined) throw new UserFieldError(passwordPath, 'a BrowserApp has no password');
    username = options.browserAppKey;
  } else {
    if (username !== undefined) checkUsername(username, options.rootUsername);
    else if (isEnabled || certificate) throw new UserFieldError(usernamePath, 'is required');
    if (password !== undefined) {
      const length = lengthOf(password);
      if (length < MIN_PASSWORD || length > MAX_TEXT) throw new UserFieldError(passwordPath, `must have ${MIN_PASSWORD} to ${MAX_TEXT} characters`);
    } else if (isEnabled && !options.hasPassword) {
      throw new UserFieldError(passwordPath, 'is required');
    }
  }

  return {
    authentication: {
      password: { isEnabled, isMfaRequired, ...(username !== undefined && { username }) },
      certificate: { isEnabled: certificate },
    },
    ...(password !== undefined && { password }),
  };
}

/** 1 to 256 printable ASCII characters without `:` (RFC 7617 §2: a user-id cannot hold one), never root's. */
function checkUsername(username: string, rootUsername: string): void {
  const path = 'authentication.password.username';
  if (username.length < 1 || username.length > MAX_TEXT) throw new UserFieldError(path, `must have 1 to ${MAX_TEXT} characters`);
  if (!/^[\x20-\x7e]+$/.test(username)) throw new UserFieldError(path, 'must be printable ASCII characters');
  if (username.includes(':')) throw new UserFieldError(path, 'must not contain ":"');
  if (usernameKey(username) === usernameKey(rootUsername)) throw new UserFieldError(path, 'is taken');
}

function readAuthorization(value: unknown, type: UserType, options: ReadOptions): string[] {
  const authorization = readObject(value, 'authorization', ['rules']);
  const given = authorization?.['rules'];
  const rulesGiven = given !== undefined && given !== null;
  if (type === 'BrowserApp') {
    // Its rules are fixed: a creation gives none, a patch leaves the two shown as they are.
    const fixed = options.creating ? !rulesGiven : sameRules(given, BROWSER_APP_RULES);
    if (!fixed) throw new UserFieldError('authorization.rules', "a BrowserApp's rules are fixed and cannot be given");
    return [...BROWSER_APP_RULES];
  }
  if (!rulesGiven) return type === 'Standard' ? [...STANDARD_DEFAULT_RULES] : [];
  const rules = readArray(given, 'authorization.rules').map((rule, index) => {
    if (typeof rule !== 'string') throw new UserFieldError(`authorization.rules[${index}]`, 'must be a string');
    return rule;
  });
  try {
    parseRules(rules);
  } catch (error) {
    if (error instanceof PermissionRuleError) throw new UserFieldError(`authorization.rules[${error.index}]`, `${JSON.stringify(error.rule)} ${error.problem}`);
    throw error;
  }
  return rules;
}

function sameRules(given: unknown, expected: readonly string[]): boolean {
  return Array.isArray(given) && given.length === expected.length && given.every((rule, index) => rule === expected[index]);
}

function readCaptcha(value: unknown, storedProviders: CaptchaProviders | undefined): UserDetail['captcha'] {
  const captcha = readObject(value, 'captcha', ['isEnabled', 'providers']);
  const isEnabled = readBoolean(captcha?.['isEnabled'], 'captcha.isEnabled', false);
  const providersObject = readObject(captcha?.['providers'], 'captcha.providers', CAPTCHA_PROVIDER_NAMES);
  if (providersObject === undefined) return { isEnabled };

  const providers: { -readonly [K in keyof CaptchaProviders]: CaptchaProviders[K] } = {};
  const secretOf = (name: (typeof CAPTCHA_PROVIDER_NAMES)[number], provider: Json): string => {
    const path = `captcha.providers.${name}.secretKey`;
    // A patch shows no secret key: one it does not give is the stored one.
    const secretKey = readString(provider['secretKey'], path) ?? storedProviders?.[name]?.secretKey;
    if (secretKey === undefined) throw new UserFieldError(path, 'is required');
    if (secretKey === '') throw new UserFieldError(path, 'must not be empty');
    return secretKey;
  };
  const hCaptcha = readObject(providersObject['hCaptcha'], 'captcha.providers.hCaptcha', ['secretKey', 'siteKey']);
  if (hCaptcha) {
    const siteKey = readString(hCaptcha['siteKey'], 'captcha.providers.hCaptcha.siteKey');
    if (siteKey === undefined || siteKey === '') throw new UserFieldError('captcha.providers.hCaptcha.siteKey', 'is required');
    providers.hCaptcha = { secretKey: secretOf('hCaptcha', hCaptcha), siteKey };
  }
  const reCaptchaV2 = readObject(providersObject['reCaptchaV2'], 'captcha.providers.reCaptchaV2', ['secretKey']);
  if (reCaptchaV2) providers.reCaptchaV2 = { secretKey: secretOf('reCaptchaV2', reCaptchaV2) };
  const reCaptchaV3 = readObject(providersObject['reCaptchaV3'], 'captcha.providers.reCaptchaV3', ['secretKey', 'minScore']);
  if (reCaptchaV3) {
    const minScore = reCaptchaV3['minScore'];
    if (minScore !== undefined && minScore !== null && (typeof minScore !== 'number' || !(minScore >= 0 && minScore <= 1))) {
      throw new UserFieldError('captcha.providers.reCaptchaV3.minScore', 'must be a number from 0 to 1');
    }
    providers.reCaptchaV3 = { secretKey: secretOf('reCaptchaV3', reCaptchaV3), ...(typeof minScore === 'number' && { minScore }) };
  }
  const turnstile = readObject(providersObject['turnstile'], 'captcha.providers.turnstile', ['secretKey']);
  if (turnstile) providers.turnstile = { secretKey: secretOf('turnstile', turnstile) };
  return Object.keys(providers).length === 0 ? { isEnabled } : { isEnabled, providers };
}

/** `retention` from 0:05:00 to 30.00:00:00, kept in the form it is read back in (`00:05:00`, `30.00:00:00`). */
function readDefaults(value: unknown): UserDetail['defaults'] {
  const defaults = readObject(value, 'defaults', ['retention']);
  const retention = defaults?.['retention'];
  if (retention === undefined || retention === null) return {};
  const ms = typeof retention === 'string' ? parseDuration(retention) : null;
  if (ms === null) throw new UserFieldError('defaults.retention', 'must be a duration [d.]hh:mm:ss');
  if (ms < MIN_RETENTION_MS || ms > MAX_RETENTION_MS) throw new UserFieldError('defaults.retention', 'must be from 0:05:00 to 30.00:00:00');
  return { retention: formatDuration(ms) };
}

function readFirewall(value: unknown): UserDetail['firewall'] {
  const firewall = readObject(value, 'firewall', ['isEnabled', 'rules']);
  const isEnabled = readBoolean(firewall?.['isEnabled'], 'firewall.isEnabled', false);
  const rules = readArray(firewall?.['rules'], 'firewall.rules').map((item, index): FirewallRule => {
    const path = `firewall.rules[${index}]`;
    const rule = readObject(item, path, ['addressFamily', 'displayName', 'startIP', 'endIP']);
    if (rule === undefined) throw new UserFieldError(path, 'must be an object');
    const family = rule['addressFamily'];
    if (family !== 'IPv4' && family !== 'IPv6') throw new UserFieldError(`${path}.addressFamily`, 'must be IPv4 or IPv6');
    const displayName = readString(rule['displayName'], `${path}.displayName`) ?? '';
    if (lengthOf(displayName) > MAX_TEXT) throw new UserFieldError(`${path}.displayName`, `must have at most ${MAX_TEXT} characters`);
    const start = readAddress(rule['startIP'], family, `${path}.startIP`);
    const end = readAddress(rule['endIP'], family, `${path}.endIP`);
    if (start.value > end.value) throw new UserFieldError(`${path}.endIP`, 'must not be below startIP');
    return { addressFamily: family, displayName, startIP: start.text, endIP: end.text };
  });
  return { isEnabled, rules };
}

/** An address of the rule's family, as a number to compare range ends. Zones (`%eth0`) are not addresses of a client. */
function readAddress(value: unknown, family: 'IPv4' | 'IPv6', path: string): { text: string; value: bigint } {
  const text = readString(value, path);
  if (text === undefined) throw new UserFieldError(path, 'is required');
  const number = addressValue(text, family);
  if (number === null) throw new UserFieldError(path, `must be an ${family} address`);
  return { text, value: number };
}

function readThrottling(value: unknown): UserDetail['throttling'] {
  const throttling = readObject(value, 'throttling', ['maxEntriesPerJob', 'rules']);
  const max = throttling?.['maxEntriesPerJob'];
  if (max !== undefined && max !== null && !(Number.isSafeInteger(max) && (max as number) >= 1)) {
    throw new UserFieldError('throttling.maxEntriesPerJob', 'must be an integer of at least 1');
  }
  const rules = readArray(throttling?.['rules'], 'throttling.rules').map((item, index): ThrottlingRule => {
    const path = `throttling.rules[${index}]`;
    const rule = readObject(item, path, ['limit', 'period', 'scope']);
    if (rule === undefined) throw new UserFieldError(path, 'must be an object');
    const { limit, period, scope } = rule;
    if (!(Number.isSafeInteger(limit) && (limit as number) >= 1)) throw new UserFieldError(`${path}.limit`, 'must be an integer of at least 1');
    if (period !== 'Minute' && period !== 'Hour' && period !== 'Day') throw new UserFieldError(`${path}.period`, 'must be Minute, Hour or Day');
    if (scope !== 'Global' && scope !== 'IPAddress') throw new UserFieldError(`${path}.scope`, 'must be Global or IPAddress');
    return { limit: limit as number, period, scope };
  });
  return { ...(typeof max === 'number' && { maxEntriesPerJob: max }), rules };
}

function readTrustedOrigin(value: unknown, type: UserType): UserDetail['trustedOrigin'] {
  const trustedOrigin = readObject(value, 'trustedOrigin', ['isEnabled', 'expressions']);
  const isEnabled = readBoolean(trustedOrigin?.['isEnabled'], 'trustedOrigin.isEnabled', false);
  if (isEnabled && type !== 'BrowserApp') throw new UserFieldError('trustedOrigin.isEnabled', 'only BrowserApp users may enable trusted origins');
  const expressions = readArray(trustedOrigin?.['expressions'], 'trustedOrigin.expressions').map((expression, index) => {
    const path = `trustedOrigin.expressions[${index}]`;
    if (typeof expression !== 'string') throw new UserFieldError(path, 'must be a string');
    if (expression === '' || lengthOf(expression) > MAX_TEXT) throw new UserFieldError(path, `must have 1 to ${MAX_TEXT} characters`);
    return expression;
  });
  return { isEnabled, expressions };
}
