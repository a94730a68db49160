import { useRef, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { ProblemMessage } from '../components/problem.js';
import { useAction } from './hooks.js';

interface TotpPanelProps {
  readonly api: Api;
  /** The user's path, `/users/<id>`. */
  readonly path: string;
  readonly mfaRequired: boolean;
  /** After an enrolment or a removal: the user's new ETag, and whether a code is still required. */
  readonly onChanged?: (etag: string, mfaRequired: boolean) => void;
  readonly title?: string;
}

/**
 * The user's TOTP second factor: a new enrolment (its secret and otpauth URI shown as text, for the authenticator app;
 * no QR code service is asked), its confirmation with a code, and its removal.
 */
export function TotpPanel({ api, path, mfaRequired, onChanged, title = 'Two-factor sign-in (TOTP)' }: TotpPanelProps) {
  const [pending, setPending] = useState<{ secret: string; uri: string } | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const code = useRef<HTMLInputElement>(null);

  const act = (work: () => Promise<void>) => {
    setStatus(null);
    return run(work);
  };
  const enrol = () =>
    act(async () => {
      setPending(await api.post<{ secret: string; uri: string }>(`${path}/authentication/totp`, {}));
      queueMicrotask(() => code.current?.focus());
    });
  const confirm = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      const { etag } = await api.request('POST', `${path}/authentication/totp/confirmations`, { json: { passCode: code.current?.value.trim() ?? '' } });
      setPending(null);
      setStatus('The TOTP is enrolled: sign-in now asks for its code.');
      onChanged?.(etag ?? '', mfaRequired);
    });
  };
  const remove = () =>
    act(async () => {
      const { etag } = await api.request('DELETE', `${path}/authentication/totp`);
      setPending(null);
      setStatus('The TOTP is removed.');
      onChanged?.(etag ?? '', false);
    });

  return (
    <section class="panel" aria-labelledby="totp-title">
      <h2 id="totp-title">{title}</h2>
      <p>
        {mfaRequired
          ? 'A TOTP is enrolled and required at sign-in.'
          : 'With a TOTP enrolled, signing in asks for the 6-digit code of an authenticator app. Setting up a new one replaces the old one once it is confirmed.'}
      </p>
      {pending !== null && (
        <form onSubmit={confirm} aria-label="Confirm the TOTP">
          <p class="hint">Add this to the authenticator app (paste the URI, or type the secret), then enter the code it shows.</p>
          <label for="totp-secret">TOTP secret</label>
          <input id="totp-secret" class="mono" value={pending.secret} readOnly spellcheck={false} />
          <label for="totp-uri">otpauth URI</label>
          <input id="totp-uri" class="mono" value={pending.uri} readOnly spellcheck={false} />
          <label for="totp-code">Code from the app</label>
          <input id="totp-code" ref={code} inputMode="numeric" autocomplete="one-time-code" maxLength={6} />
          <div class="actions">
            <button type="submit" disabled={busy}>
              Confirm TOTP
            </button>
          </div>
        </form>
      )}
      <ProblemMessage error={error} />
      <div class="actions">
        <button type="button" class="secondary" disabled={busy} onClick={enrol}>
          Set up a TOTP
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={remove}>
          Remove the TOTP
        </button>
        <span role="status">{status}</span>
      </div>
    </section>
  );
}
