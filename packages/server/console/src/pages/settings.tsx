import '../admin.css';
import { OverrideRules } from '../settings/overrides.js';
import { QualityLevels } from '../settings/quality-levels.js';
import { useCaller } from '../users/access.js';
import { TotpPanel } from '../users/totp.js';
import type { PageProps } from './props.js';

/**
 * The Settings page (`#/settings`): what the user may read of the account's settings. Quality levels are readable by
 * all; the override rules only when the server answers their listing (root and administrators). A user (not root,
 * who has no second factor, nor a BrowserApp, which has no password) also manages its own TOTP here.
 */
export function SettingsPage({ api, userId, offers }: PageProps) {
  const caller = useCaller(api, userId);
  const ownTotp = caller.kind === 'unknown' || (caller.kind === 'user' && caller.detail.type !== 'BrowserApp');
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>Settings</h1>
      {offers.overrides && <OverrideRules api={api} />}
      <QualityLevels api={api} />
      {ownTotp && (
        <TotpPanel
          api={api}
          path={`/users/${encodeURIComponent(userId)}`}
          mfaRequired={caller.kind === 'user' && caller.detail.authentication.password.isMfaRequired}
          title="Your two-factor sign-in (TOTP)"
        />
      )}
    </section>
  );
}
