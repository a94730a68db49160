import type { PageProps } from './props.js';

/** The Credits page (`#/credits`): a placeholder until it is built. */
export function CreditsPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>Credits</h1>
      <p>This page is not built yet.</p>
    </section>
  );
}
