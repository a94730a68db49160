// The detail a Standard user has when its creation gives nothing but its type, name and credentials: what the tests
// of the user documents, of the store and of the users endpoints expect alike.
import type { UserDetail } from '../../packages/server/src/accounts/types.js';

export function defaultStandardDetail(displayName: string, username?: string): UserDetail {
  return {
    type: 'Standard',
    displayName,
    isActive: true,
    authentication: { password: { isEnabled: true, isMfaRequired: false, ...(username !== undefined && { username }) }, certificate: { isEnabled: false } },
    authorization: { rules: ['email-validations:*:my'] },
    captcha: { isEnabled: false },
    defaults: {},
    firewall: { isEnabled: false, rules: [] },
    throttling: { rules: [] },
    trustedOrigin: { isEnabled: false, expressions: [] },
  };
}
