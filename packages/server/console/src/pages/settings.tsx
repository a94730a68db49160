import type { PageProps } from './props.js';

/** The Settings page (`#/settings`): a placeholder until it is built. */
export function SettingsPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>Settings</h1>
      <p>This page is not built yet.</p>
    </section>
  );
}
