import type { PageProps } from './props.js';

/** The Users page (`#/users`, and its sub-routes `#/users/...`): a placeholder until it is built. */
export function UsersPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>Users</h1>
      <p>This page is not built yet.</p>
    </section>
  );
}
