import type { PageProps } from './props.js';

export function JobPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>Job</h1>
    </section>
  );
}
