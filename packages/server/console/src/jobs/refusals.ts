/**
 * What the server refused the signed-in user (a 403), remembered for the session so that it is no longer offered:
 * rules are the server's to read, so the console learns them from its answers. Kept per `Api`, which is made anew at
 * each sign-in.
 */
import { ApiError, type Api } from '../api.js';

export type Refusable = 'delete' | 'retention';

const refusals = new WeakMap<Api, Set<Refusable>>();

export function isRefused(api: Api, what: Refusable): boolean {
  return refusals.get(api)?.has(what) === true;
}

/** Remembers `what` as refused when `error` is a 403. */
export function noteRefusal(api: Api, what: Refusable, error: unknown): void {
  if (!(error instanceof ApiError) || error.status !== 403) return;
  const set = refusals.get(api) ?? new Set<Refusable>();
  set.add(what);
  refusals.set(api, set);
}
