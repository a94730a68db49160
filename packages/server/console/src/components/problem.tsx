import { ApiError } from '../api.js';

/** What went wrong, for people: a problem document's detail (else its title), or the error's message. */
export function problemText(error: unknown): string {
  if (error instanceof ApiError) return error.problem.detail ?? error.problem.title ?? error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** An error shown where it happened, announced to screen readers; nothing when there is none. */
export function ProblemMessage({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p class="problem" role="alert">
      {problemText(error)}
    </p>
  );
}
