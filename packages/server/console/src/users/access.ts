/**
 * What the signed-in user may do, learned from the server: its own User detail (type and rules) when it may read it.
 * Root is not a user, so its own id answers 404; a user that may not read its own detail answers 403 (it is no
 * administrator: they read everything). The rules are read as the server reads them, to leave out buttons it would
 * refuse; the server still decides every request.
 */
import { ApiError, type Api } from '../api.js';
import { useAnswer } from './hooks.js';
import type { UserDetail } from './types.js';

export type Caller =
  | { readonly kind: 'loading' }
  | { readonly kind: 'root' }
  | { readonly kind: 'user'; readonly detail: UserDetail }
  /** A user whose rules the console cannot read: no administrator. */
  | { readonly kind: 'unknown' };

export function useCaller(api: Api, userId: string): Caller {
  const answer = useAnswer<Caller>(
    (signal) =>
      api.get<UserDetail>(`/users/${encodeURIComponent(userId)}`, undefined, signal).then(
        (detail): Caller => ({ kind: 'user', detail }),
        (error: unknown): Caller => (error instanceof ApiError && error.status === 404 ? { kind: 'root' } : { kind: 'unknown' }),
      ),
    [api, userId],
  );
  return answer.value ?? { kind: 'loading' };
}

/** Root or an administrator (false while not known). */
export function isAdministrator(caller: Caller): boolean {
  return caller.kind === 'root' || (caller.kind === 'user' && caller.detail.type === 'Administrator');
}

export type Scope = 'my' | 'account';

/**
 * Whether the caller may do `operation` on `resource` in `scope`, as the server's rules say: any matching denial
 * refuses, else any matching grant allows. True when the rules are not known (the server's answer then tells).
 */
export function may(caller: Caller, resource: string, operation: string, scope: Scope): boolean {
  if (caller.kind !== 'user') return caller.kind !== 'loading';
  if (caller.detail.type === 'Administrator') return true;
  let granted = false;
  for (const text of caller.detail.authorization.rules) {
    const deny = text.startsWith('-');
    const [ruleResource, ruleOperation, ruleScope] = (deny ? text.slice(1) : text).split(':');
    const named = ruleResource === 'email-verifications' ? 'email-validations' : ruleResource;
    if (named !== '*' && named !== resource) continue;
    if (ruleOperation !== undefined && ruleOperation !== '*' && ruleOperation !== operation) continue;
    // An omitted scope is the whole account, which includes `my`; a given one (`my`, `own`, `*`) is only `my`.
    if (ruleScope !== undefined && scope !== 'my') continue;
    if (deny) return false;
    granted = true;
  }
  return granted;
}
