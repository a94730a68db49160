import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Api } from '../api.js';
import { ProblemMessage, problemText } from '../components/problem.js';
import { navigate } from '../router.js';
import { may, isAdministrator, type Caller } from './access.js';
import { useAction, useAnswer } from './hooks.js';
import { DraftError, PROVIDERS, draftOf, patchOf, type Draft, type ProviderName } from './draft.js';
import { KeyField } from './key-field.js';
import { RulesHint } from './new-user.js';
import { TotpPanel } from './totp.js';
import type { UserDetail, UserOverview } from './types.js';

interface Loaded {
  readonly detail: UserDetail;
  readonly etag: string;
  /** Changed by the page itself (its TOTP), not read again: the form keeps what was edited and not saved. */
  readonly keepEdits?: boolean;
}

/** The user after a TOTP change: its new ETag, and whether a code is still required (a removal turns it off). */
function totpChanged(loaded: Loaded, etag: string, mfaRequired: boolean): Loaded {
  const { authentication } = loaded.detail;
  const detail = { ...loaded.detail, authentication: { ...authentication, password: { ...authentication.password, isMfaRequired: mfaRequired } } };
  return { detail, etag, keepEdits: true };
}

/** One user (`#/users/<id>`): every setting it has, saved as one JSON Patch with If-Match; its TOTP; its deletion. */
export function UserPage({ api, caller, id, own }: { api: Api; caller: Caller; id: string; own: boolean }) {
  const [notice, setNotice] = useState<unknown>(null);
  const [reloads, setReloads] = useState(0);
  const path = `/users/${encodeURIComponent(id)}`;
  const answer = useAnswer<Loaded>(async (signal) => {
    const { body, etag } = await api.request<UserDetail>('GET', path, { signal });
    return { detail: body, etag: etag ?? '' };
  }, [api, path, reloads]);
  const loaded = answer.value;

  const reload = () => setReloads((count) => count + 1);
  const scope = own ? 'my' : 'account';
  const detail = loaded?.detail;
  // Only administrators change or delete an administrator, and manage someone else's second factor.
  const administers = caller.kind !== 'user' || isAdministrator(caller);
  const mayTouch = administers || detail?.type !== 'Administrator';

  return (
    <section class="user-page" aria-labelledby="page-title">
      <p class="crumbs">
        <a href="#/users">Users</a>
      </p>
      <h1 id="page-title" tabIndex={-1}>{detail?.displayName ?? 'User'}</h1>
      <ProblemMessage error={answer.error} />
      {notice !== null && (
        <p class="problem" role="alert">
          {problemText(notice)} The user is shown as it is now.
        </p>
      )}
      {loaded !== null && detail !== undefined && caller.kind !== 'loading' && (
        <>
          <p class="lede">
            {detail.type} · {detail.isActive ? 'Active' : 'Inactive'} · <span class="mono">{id}</span>
          </p>
          {detail.type === 'BrowserApp' && detail.authentication.password.username !== undefined && <KeyField value={detail.authentication.password.username} />}
          <UserForm
            api={api}
            path={path}
            loaded={loaded}
            readOnly={!mayTouch || !may(caller, 'users', 'write', scope)}
            mayMakeAdministrators={administers}
            onSaved={() => {
              setNotice(null);
              reload();
            }}
            onConflict={(caught) => {
              setNotice(caught);
              reload();
            }}
          />
          {detail.type !== 'BrowserApp' && (own || administers) && <TotpPanel api={api} path={path} mfaRequired={detail.authentication.password.isMfaRequired} onChanged={(etag, mfaRequired) => answer.set(totpChanged(loaded, etag, mfaRequired))} />}
          {mayTouch && may(caller, 'users', 'delete', scope) && <DeleteUser api={api} path={path} etag={loaded.etag} name={detail.displayName} onConflict={(caught) => { setNotice(caught); reload(); }} />}
        </>
      )}
    </section>
  );
}

/** `current` (edited from `previous`) on top of `next`: what was edited stays, the rest is `next`'s. */
function rebased(previous: Draft, current: Draft, next: Draft): Draft {
  const merged: Record<string, unknown> = { ...next };
  for (const key of Object.keys(current) as (keyof Draft)[]) {
    if (JSON.stringify(current[key]) !== JSON.stringify(previous[key])) merged[key] = current[key];
  }
  return merged as unknown as Draft;
}

interface UserFormProps {
  readonly api: Api;
  readonly path: string;
  readonly loaded: Loaded;
  readonly readOnly: boolean;
  readonly mayMakeAdministrators: boolean;
  readonly onSaved: () => void;
  readonly onConflict: (error: unknown) => void;
}

function UserForm({ api, path, loaded, readOnly, mayMakeAdministrators, onSaved, onConflict }: UserFormProps) {
  const read = loaded.detail;
  const [draft, setDraft] = useState<Draft>(() => draftOf(read));
  const base = useRef(draft);
  const { busy, error, setError, run } = useAction();
  const [saved, setSaved] = useState<string | null>(null);
  /** Set by a save: the user read again after it keeps what was edited since (the form is open while it is read). */
  const rebaseNext = useRef(false);
  // The user as read again (after a save, a TOTP change or a conflict) is what the form shows.
  useEffect(() => {
    const next = draftOf(read);
    const previous = base.current;
    base.current = next;
    const keep = loaded.keepEdits === true || rebaseNext.current;
    rebaseNext.current = false;
    setDraft((current) => (keep ? rebased(previous, current, next) : next));
  }, [read]);
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => {
    setSaved(null);
    setDraft((current) => ({ ...current, [name]: value }));
  };
  const text = (name: keyof Draft) => (event: Event) => set(name, (event.currentTarget as HTMLInputElement).value as never);
  const check = (name: keyof Draft) => (event: Event) => set(name, (event.currentTarget as HTMLInputElement).checked as never);
  const setProvider = (name: ProviderName, change: Partial<Draft['providers'][ProviderName]>) =>
    set('providers', { ...draft.providers, [name]: { ...draft.providers[name], ...change } });
  const isBrowserApp = read.type === 'BrowserApp';

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    let operations;
    try {
      operations = patchOf(read, draft);
    } catch (caught) {
      if (caught instanceof DraftError) return setError(caught);
      throw caught;
    }
    if (operations.length === 0) return setSaved('Nothing changed.');
    const sent = draft;
    await run(async () => {
      try {
        await api.request<UserOverview>('PATCH', path, { patch: operations, ifMatch: loaded.etag });
      } catch (caught) {
        if (!(caught instanceof ApiError && caught.status === 412)) throw caught;
        return onConflict(caught);
      }
      // What was sent is the base of the next read: an edit made after it stays, a secret sent is cleared.
      base.current = sent;
      rebaseNext.current = true;
      setSaved('Saved.');
      onSaved();
    });
  };

  return (
    <form class="user-form" onSubmit={submit} aria-label="Settings of the user" noValidate>
      <fieldset disabled={readOnly || busy} class="bare">
        {readOnly && <p class="notice">You may read this user's settings, not change them.</p>}
        <fieldset>
          <legend>Profile</legend>
          <label for="user-display-name">Display name</label>
          <input id="user-display-name" value={draft.displayName} onInput={text('displayName')} maxLength={256} required />
          <label for="user-type">Type</label>
          {isBrowserApp ? (
            <input id="user-type" value="BrowserApp" readOnly aria-describedby="user-type-hint" />
          ) : (
            <select id="user-type" value={draft.type} onChange={text('type')} aria-describedby="user-type-hint">
              {(mayMakeAdministrators || read.type === 'Administrator' ? ['Administrator', 'Standard'] : ['Standard']).map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          )}
          <p class="hint" id="user-type-hint">
            {isBrowserApp ? 'A BrowserApp stays one.' : 'Administrator (every permission) or Standard (what its rules grant).'}
          </p>
          <label class="check">
            <input id="user-active" type="checkbox" checked={draft.isActive} onChange={check('isActive')} aria-describedby="user-active-hint" />
            Active
          </label>
          <p class="hint" id="user-active-hint">An inactive user cannot sign in or use the service; its tokens stop working.</p>
        </fieldset>

        {draft.type === 'Standard' && (
          <fieldset>
            <legend>Permissions</legend>
            <label for="user-rules">Rules</label>
            <textarea id="user-rules" class="short" value={draft.rules} onInput={text('rules')} spellcheck={false} aria-describedby="user-rules-hint" />
            <RulesHint id="user-rules-hint" />
          </fieldset>
        )}
        {draft.type !== 'Standard' && (
          <p class="hint">
            {isBrowserApp ? `A BrowserApp's rules are fixed: ${read.authorization.rules.join(', ')}.` : 'An administrator has every permission: rules are not consulted.'}
          </p>
        )}

        {!isBrowserApp && (
          <fieldset>
            <legend>Sign-in</legend>
            <label for="user-username">Username</label>
            <input id="user-username" value={draft.username} onInput={text('username')} autocomplete="off" spellcheck={false} maxLength={256} />
            <label for="user-new-password">New password</label>
            <input id="user-new-password" type="password" value={draft.newPassword} onInput={text('newPassword')} autocomplete="new-password" aria-describedby="user-new-password-hint" />
            <p class="hint" id="user-new-password-hint">8 to 256 characters; leave it empty to keep the current one. Tokens issued before the change stop working.</p>
            <label class="check">
              <input type="checkbox" checked={draft.passwordEnabled} onChange={check('passwordEnabled')} />
              Username sign-in
            </label>
            <label class="check">
              <input id="user-mfa" type="checkbox" checked={draft.mfaRequired} onChange={check('mfaRequired')} aria-describedby="user-mfa-hint" />
              Require a TOTP code
            </label>
            <p class="hint" id="user-mfa-hint">Only while a TOTP is enrolled (below); then a Basic sign-in with the password alone is refused.</p>
            {draft.type === 'Standard' && (
              <>
                <label class="check">
                  <input type="checkbox" checked={draft.certificate} onChange={check('certificate')} aria-describedby="user-certificate-hint" />
                  Client certificate sign-in
                </label>
                <p class="hint" id="user-certificate-hint">A TLS client certificate whose subject CN is the username signs this user in.</p>
              </>
            )}
          </fieldset>
        )}

        {isBrowserApp && (
          <fieldset>
            <legend>Trusted origins</legend>
            <label class="check">
              <input type="checkbox" checked={draft.originsEnabled} onChange={check('originsEnabled')} />
              Check the origin of each request
            </label>
            <label for="user-origins">Origin expressions</label>
            <textarea id="user-origins" class="short" value={draft.origins} onInput={text('origins')} spellcheck={false} aria-describedby="user-origins-hint" />
            <p class="hint" id="user-origins-hint">
              One per line, the whole origin: <code>https://shop.example.com</code>, <code>https://*.example.com</code>; <code>*</code> any run of
              characters, <code>?</code> one.
            </p>
          </fieldset>
        )}

        <fieldset>
          <legend>CAPTCHA</legend>
          <label class="check">
            <input type="checkbox" checked={draft.captchaEnabled} onChange={check('captchaEnabled')} />
            Require a CAPTCHA token with each submission
          </label>
          <p class="hint">Secret keys are never shown: leave one empty to keep it.</p>
          <div class="providers">
            {PROVIDERS.map(({ name, label }) => {
              const provider = draft.providers[name];
              return (
                <div key={name} class="provider">
                  <label class="check">
                    <input type="checkbox" checked={provider.on} onChange={(event) => setProvider(name, { on: (event.currentTarget as HTMLInputElement).checked })} />
                    Use {label}
                  </label>
                  {provider.on && (
                    <>
                      <label for={`user-${name}-secret`}>{label} secret</label>
                      <input id={`user-${name}-secret`} type="password" autocomplete="off" value={provider.secret} onInput={(event) => setProvider(name, { secret: (event.currentTarget as HTMLInputElement).value })} />
                      {name === 'hCaptcha' && (
                        <>
                          <label for="user-hCaptcha-site">hCaptcha site ID</label>
                          <input id="user-hCaptcha-site" value={provider.siteKey} onInput={(event) => setProvider(name, { siteKey: (event.currentTarget as HTMLInputElement).value })} spellcheck={false} />
                        </>
                      )}
                      {name === 'reCaptchaV3' && (
                        <>
                          <label for="user-reCaptchaV3-score">reCAPTCHA v3 minimum score</label>
                          <input id="user-reCaptchaV3-score" inputMode="decimal" placeholder="0.5" value={provider.minScore} onInput={(event) => setProvider(name, { minScore: (event.currentTarget as HTMLInputElement).value })} />
                        </>
                      )}
                    </>
                  )}
                </div>
              );
            })}
          </div>
        </fieldset>

        <fieldset>
          <legend>Firewall</legend>
          <label class="check">
            <input type="checkbox" checked={draft.firewallEnabled} onChange={check('firewallEnabled')} aria-describedby="user-firewall-hint" />
            Only allow requests from these addresses
          </label>
          <label for="user-firewall">Allowed address ranges</label>
          <textarea id="user-firewall" class="short" value={draft.firewall} onInput={text('firewall')} spellcheck={false} aria-describedby="user-firewall-hint" />
          <p class="hint" id="user-firewall-hint">
            One per line: an address or a range <code>start-end</code>, then a name, such as <code>203.0.113.0-203.0.113.255 Office</code>. On with no
            range, every request is refused.
          </p>
        </fieldset>

        <fieldset>
          <legend>Throttling</legend>
          <label for="user-throttling">Submission limits</label>
          <textarea id="user-throttling" class="short" value={draft.throttling} onInput={text('throttling')} spellcheck={false} aria-describedby="user-throttling-hint" />
          <p class="hint" id="user-throttling-hint">
            One per line: <code>10 per hour</code>, <code>100 per day</code>, or <code>3 per minute per IP address</code>.
          </p>
          <label for="user-max-entries">Most entries per job</label>
          <input id="user-max-entries" inputMode="numeric" value={draft.maxEntriesPerJob} onInput={text('maxEntriesPerJob')} aria-describedby="user-max-entries-hint" />
          <p class="hint" id="user-max-entries-hint">Empty: no limit.</p>
        </fieldset>

        <fieldset>
          <legend>Defaults</legend>
          <label for="user-retention">Default retention</label>
          <input id="user-retention" value={draft.retention} onInput={text('retention')} placeholder="30.00:00:00" aria-describedby="user-retention-hint" />
          <p class="hint" id="user-retention-hint">How long its jobs are kept after they complete, [d.]hh:mm:ss from 0:05:00 to 30.00:00:00; empty: the account's default.</p>
        </fieldset>

        <ProblemMessage error={error} />
        {!readOnly && (
          <div class="actions">
            <button type="submit">Save changes</button>
            <button type="button" class="secondary" onClick={() => { setDraft(base.current); setError(null); setSaved(null); }}>
              Undo changes
            </button>
            <span role="status">{saved}</span>
          </div>
        )}
      </fieldset>
    </form>
  );
}

/** Deletion, after a confirmation in a modal dialog. */
function DeleteUser({ api, path, etag, name, onConflict }: { api: Api; path: string; etag: string; name: string; onConflict: (error: unknown) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const { busy, error, run } = useAction();
  const remove = () =>
    run(async () => {
      try {
        await api.del(path, etag);
      } catch (caught) {
        if (!(caught instanceof ApiError && caught.status === 412)) throw caught;
        return onConflict(caught);
      } finally {
        dialog.current?.close();
      }
      navigate('#/users');
    });
  return (
    <section class="danger-zone" aria-labelledby="delete-title">
      <h2 id="delete-title">Deletion</h2>
      <p>A deleted user can no longer sign in, and its username is free again. Its jobs stay until their retention ends.</p>
      <ProblemMessage error={error} />
      <button type="button" class="danger" onClick={() => dialog.current?.showModal()}>
        Delete user
      </button>
      <dialog ref={dialog} aria-labelledby="confirm-delete-title" aria-describedby="confirm-delete-text">
        <h2 id="confirm-delete-title">Delete {name}?</h2>
        <p id="confirm-delete-text">This cannot be undone.</p>
        <div class="actions">
          <button type="button" class="danger" disabled={busy} onClick={remove}>
            Delete
          </button>
          <button type="button" class="secondary" onClick={() => dialog.current?.close()} autoFocus>
            Cancel
          </button>
        </div>
      </dialog>
    </section>
  );
}
