import type { PageProps } from './props.js';

export function JobsPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>Jobs</h1>
    </section>
  );
}
