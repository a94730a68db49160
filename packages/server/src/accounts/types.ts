/**
 * Users of an account as kept in a store: the document the interface shows (the User detail) and what it never shows
 * (the password hash, TOTP secrets). Plain data, JSON-serializable, the same for every store.
 */

export const USER_TYPES = ['Administrator', 'Standard', 'BrowserApp'] as const;
export type UserType = (typeof USER_TYPES)[number];

export interface FirewallRule {
  readonly addressFamily: 'IPv4' | 'IPv6';
  readonly displayName: string;
  readonly startIP: string;
  readonly endIP: string;
}

export interface ThrottlingRule {
  readonly limit: number;
  readonly period: 'Minute' | 'Hour' | 'Day';
  readonly scope: 'Global' | 'IPAddress';
}

export interface CaptchaProviders {
  readonly hCaptcha?: { readonly secretKey: string; readonly siteKey: string };
  readonly reCaptchaV2?: { readonly secretKey: string };
  readonly reCaptchaV3?: { readonly secretKey: string; readonly minScore?: number };
  readonly turnstile?: { readonly secretKey: string };
}

/**
 * The User detail of the interface, as stored. Captcha providers' `secretKey`s are kept here and left out of every
 * answer (as the password is).
 */
export interface UserDetail {
  readonly type: UserType;
  readonly displayName: string;
  readonly isActive: boolean;
  readonly authentication: {
    readonly password: { readonly isEnabled: boolean; readonly isMfaRequired: boolean; readonly username?: string };
    readonly certificate: { readonly isEnabled: boolean };
  };
  readonly authorization: { readonly rules: readonly string[] };
  readonly captcha: { readonly isEnabled: boolean; readonly providers?: CaptchaProviders };
  /** `retention` in the interface's duration form (`d.hh:mm:ss`). */
  readonly defaults: { readonly retention?: string };
  readonly firewall: { readonly isEnabled: boolean; readonly rules: readonly FirewallRule[] };
  readonly throttling: { readonly maxEntriesPerJob?: number; readonly rules: readonly ThrottlingRule[] };
  readonly trustedOrigin: { readonly isEnabled: boolean; readonly expressions: readonly string[] };
}

/** A TOTP second factor (RFC 6238): the enrolled secret, one waiting for its confirmation, the last step accepted. */
export interface TotpState {
  /** Base32, 160 bits; present once an enrolment is confirmed. */
  readonly secret?: string;
  /** Base32: an enrolment made and not yet confirmed (the enrolled secret, if any, stays until then). */
  readonly pendingSecret?: string;
  /** The last time step accepted for this user: it and those before are never accepted again. */
  readonly lastStep?: number;
}

export interface UserRecord {
  /** A random lower-case UUID. */
  readonly id: string;
  /** ISO 8601. */
  readonly createdOn: string;
  /** ISO 8601, when the user was deleted; absent while it is not. */
  readonly deletedOn?: string;
  /** Changes with every change of the user (an opaque string, the same after a restart). */
  readonly etag: string;
  readonly detail: UserDetail;
  /** The password's hash (PHC string form); absent for a BrowserApp or a user without a password. */
  readonly passwordHash?: string;
  /** Counts the password's changes: a token carries the version it was issued under and is refused under another. */
  readonly passwordVersion: number;
  readonly totp?: TotpState;
}

/** The order of a user listing: by creation (oldest first by default) or by display name, ties in creation order. */
export type UserSort = 'createdOn' | '-createdOn' | 'displayName' | '-displayName';

export interface UserListQuery {
  readonly includeDeleted: boolean;
  readonly type?: UserType;
  readonly sort: UserSort;
  /** Users skipped from the start of the listing. */
  readonly offset: number;
  readonly limit: number;
}

/** The username is someone else's already (case-insensitively, among users not deleted). */
export class UsernameTakenError extends Error {
  constructor() {
    super('the username is taken');
    this.name = 'UsernameTakenError';
  }
}

/**
 * Where users live. Kept with the jobs, in the same store (SQLite now, PostgreSQL next); every method may be
 * asynchronous. Usernames are unique case-insensitively among users not deleted.
 */
export interface UserStore {
  /** Stores a new user; UsernameTakenError when its username is taken. */
  createUser(user: UserRecord): Promise<void>;
  getUser(id: string): Promise<UserRecord | null>;
  /** The user not deleted whose username is `username`, case-insensitively (ASCII). */
  userByUsername(username: string): Promise<UserRecord | null>;
  /**
   * Replaces the user if its stored `etag` is still `expectedEtag` (true), else changes nothing (false);
   * UsernameTakenError when its new username is taken.
   */
  updateUser(user: UserRecord, expectedEtag: string): Promise<boolean>;
  /** A page of the listing and whether more follow it. */
  listUsers(query: UserListQuery): Promise<{ readonly data: UserRecord[]; readonly more: boolean }>;
}
