import { Fragment } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { createApi } from '../api.js';
import { ProblemMessage } from '../components/problem.js';
import { signIn, verifyCode } from '../session.js';

interface SignInProps {
  readonly basePath: string;
  /** Why the user is here again (signed out, or the session ended). */
  readonly notice: string | null;
  readonly onSignedIn: (token: string) => void;
}

/** Username and password, then a TOTP code when the user has one enrolled. */
export function SignInPage({ basePath, notice, onSignedIn }: SignInProps) {
  const api = useMemo(() => createApi({ basePath, token: () => null }), [basePath]);
  const [firstFactor, setFirstFactor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const username = useRef<HTMLInputElement>(null);
  const password = useRef<HTMLInputElement>(null);
  const code = useRef<HTMLInputElement>(null);
  // The first field takes the focus whenever the page is shown (at load, and after signing out).
  useEffect(() => username.current?.focus(), []);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (firstFactor === null) {
        const step = await signIn(api, username.current!.value, password.current!.value);
        if (step.kind === 'signed-in') onSignedIn(step.token);
        else {
          setFirstFactor(step.firstFactor);
          // The code field appears with this render: focus it once it is there.
          queueMicrotask(() => code.current?.focus());
        }
      } else {
        onSignedIn(await verifyCode(api, firstFactor, code.current!.value));
      }
    } catch (caught) {
      // A first-factor token that is no longer good (five wrong codes, or its five minutes): start again.
      if (firstFactor !== null && (caught as { status?: number }).status === 401) setFirstFactor(null);
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="sign-in" aria-labelledby="page-title">
      <h1 id="page-title">Sign in to mailverify</h1>
      {notice !== null && <p class="notice" role="status">{notice}</p>}
      <form onSubmit={submit} noValidate>
        {/* Keyed, so that the code field is a new element, never the password field with its value. */}
        {firstFactor === null ? (
          <Fragment key="password">
            <label for="username">Username</label>
            <input id="username" ref={username} name="username" autocomplete="username" required />
            <label for="password">Password</label>
            <input id="password" ref={password} name="password" type="password" autocomplete="current-password" required />
          </Fragment>
        ) : (
          <Fragment key="code">
            <p id="code-help">Enter the 6-digit code of your authenticator app.</p>
            <label for="code">Code</label>
            <input id="code" ref={code} name="code" inputMode="numeric" autocomplete="one-time-code" aria-describedby="code-help" required />
          </Fragment>
        )}
        <ProblemMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          {firstFactor !== null && (
            <button type="button" class="secondary" onClick={() => { setFirstFactor(null); setError(null); }}>
              Start over
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
