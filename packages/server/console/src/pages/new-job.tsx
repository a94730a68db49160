import type { PageProps } from './props.js';

export function NewJobPage(_props: PageProps) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>New job</h1>
    </section>
  );
}
