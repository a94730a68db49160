import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { ProblemMessage } from '../components/problem.js';
import { isAdministrator, type Caller } from './access.js';
import { useAction } from './hooks.js';
import { USER_TYPES, linesOf, type UserDetail, type UserOverview, type UserType } from './types.js';

/** The rules a Standard user gets when none are given: everything on its own jobs. */
const DEFAULT_RULES = 'email-validations:*:my';

export interface Created {
  readonly user: UserOverview;
  /** A BrowserApp's publishable key. */
  readonly key?: string;
}

interface NewUserProps {
  readonly api: Api;
  readonly caller: Caller;
  readonly onCreated: (created: Created) => void;
  readonly onCancel: () => void;
}

/** The creation form: display name, type, and for people a username, a password and (Standard) rules. */
export function NewUserForm({ api, caller, onCreated, onCancel }: NewUserProps) {
  const [type, setType] = useState<UserType>('Standard');
  const [rules, setRules] = useState(DEFAULT_RULES);
  const { busy, error, run } = useAction();
  const first = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => first.current?.focus(), []);
  // Only administrators (and root) make administrators: a user the console knows is none is not offered the type.
  const types = USER_TYPES.filter((option) => option !== 'Administrator' || caller.kind !== 'user' || isAdministrator(caller));

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '');
    const body: Record<string, unknown> = { type, displayName: text('displayName').trim() };
    if (type !== 'BrowserApp') body['authentication'] = { password: { username: text('username'), password: text('password') } };
    if (type === 'Standard') body['authorization'] = { rules: linesOf(rules) };
    await run(async () => {
      const user = await api.post<UserOverview>('/users', body);
      // The key is the BrowserApp's username, made by the server: its detail shows it.
      const key = type === 'BrowserApp' ? (await api.get<UserDetail>(`/users/${user.id}`)).authentication.password.username : undefined;
      onCreated({ user, ...(key !== undefined && { key }) });
    });
  };

  return (
    <form class="panel" onSubmit={submit} aria-labelledby="new-user-title" noValidate>
      <h2 id="new-user-title">New user</h2>
      <label for="new-display-name">Display name</label>
      <input id="new-display-name" ref={first} name="displayName" required maxLength={256} />
      <label for="new-type">Type</label>
      <select id="new-type" name="type" value={type} onChange={(event) => setType((event.currentTarget as HTMLSelectElement).value as UserType)} aria-describedby="new-type-hint">
        {types.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
      <p class="hint" id="new-type-hint">
        {type === 'Administrator' && 'Every permission: its rules are not consulted.'}
        {type === 'Standard' && 'What its rules grant.'}
        {type === 'BrowserApp' && 'For the sign-up form widget: no password; its username is a key the server makes, and it may only submit and read its own jobs.'}
      </p>
      {type !== 'BrowserApp' && (
        <>
          <label for="new-username">Username</label>
          <input id="new-username" name="username" autocomplete="off" required maxLength={256} spellcheck={false} />
          <label for="new-password">Password</label>
          <input id="new-password" name="password" type="password" autocomplete="new-password" required minLength={8} aria-describedby="new-password-hint" />
          <p class="hint" id="new-password-hint">8 to 256 characters.</p>
        </>
      )}
      {type === 'Standard' && (
        <>
          <label for="new-rules">Rules</label>
          <textarea
            id="new-rules"
            rows={4}
            spellcheck={false}
            aria-describedby="new-rules-hint"
            class="short"
            value={rules}
            onInput={(event) => setRules((event.currentTarget as HTMLTextAreaElement).value)}
          />
          <RulesHint id="new-rules-hint" />
        </>
      )}
      <ProblemMessage error={error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Create user
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** How a permission rule is written. */
export function RulesHint({ id }: { id: string }) {
  return (
    <p class="hint" id={id}>
      One rule per line: <code>[-]resource[:operation[:scope]]</code>, such as <code>email-validations:*:my</code>,{' '}
      <code>users:read</code> or <code>credits:read-balance</code>. A leading <code>-</code> denies; no scope means the
      whole account.
    </p>
  );
}
