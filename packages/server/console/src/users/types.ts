/** The users of the REST interface as the console reads them (User overview and User detail, 2.7). */

// The user types and the firewall and throttling rules are the server's own shapes: one definition for both sides.
import type { FirewallRule, ThrottlingRule, UserType } from '../../../src/accounts/types.js';

export { USER_TYPES, type FirewallRule, type ThrottlingRule, type UserType } from '../../../src/accounts/types.js';

export interface UserOverview {
  readonly id: string;
  readonly displayName: string;
  readonly etag: string;
  readonly isActive: boolean;
  readonly isDeleted?: boolean;
  readonly type: UserType;
}

/** The CAPTCHA providers as shown: their settings without secret keys (those are write-only). */
export interface CaptchaProviders {
  readonly hCaptcha?: { readonly siteKey?: string; readonly secretKey?: string };
  readonly reCaptchaV2?: { readonly secretKey?: string };
  readonly reCaptchaV3?: { readonly minScore?: number; readonly secretKey?: string };
  readonly turnstile?: { readonly secretKey?: string };
}

export interface UserDetail {
  readonly type: UserType;
  readonly displayName: string;
  readonly isActive: boolean;
  readonly authentication: {
    readonly password: { readonly isEnabled: boolean; readonly isMfaRequired: boolean; readonly username?: string; readonly password?: string };
    readonly certificate: { readonly isEnabled: boolean };
  };
  readonly authorization: { readonly rules: readonly string[] };
  readonly captcha: { readonly isEnabled: boolean; readonly providers?: CaptchaProviders };
  readonly defaults: { readonly retention?: string };
  readonly firewall: { readonly isEnabled: boolean; readonly rules: readonly FirewallRule[] };
  readonly throttling: { readonly maxEntriesPerJob?: number; readonly rules: readonly ThrottlingRule[] };
  readonly trustedOrigin: { readonly isEnabled: boolean; readonly expressions: readonly string[] };
}

/** A page of a listing (§13 paging). */
export interface Paged<T> {
  readonly meta: { readonly cursor?: string; readonly isTruncated: boolean };
  readonly data: readonly T[];
}

/** The lines of a text area, trimmed, blank ones left out. */
export function linesOf(text: string): string[] {
  return text.split('\n').map((line) => line.trim()).filter((line) => line !== '');
}
