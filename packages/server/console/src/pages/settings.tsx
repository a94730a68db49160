import '../admin.css';
import { OverrideRules } from '../settings/overrides.js';
import { QualityLevels } from '../settings/quality-levels.js';
import type { PageProps } from './props.js';

/**
 * The Settings page (`#/settings`): what the user may read of the account's settings. Quality levels are readable by
 * all; the override rules only when the server answers their listing (root and administrators).
 */
export function SettingsPage({ api, offers }: PageProps) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>Settings</h1>
      {offers.overrides && <OverrideRules api={api} />}
      <QualityLevels api={api} />
    </section>
  );
}
