/**
 * What the console offers the signed-in user, learned from the server's answers rather than from its rules: a part
 * whose listing answers 403 or 404 is not offered.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, type Api } from './api.js';

export interface Offers {
  /** `GET /users` answers: the user may list users. */
  readonly users: boolean;
  /** `GET /credits/balance` answers: credits are accounted and the user may read the balance. */
  readonly credits: boolean;
  /** `GET /settings/overrides` answers: the user may read the override rules (quality levels are readable by all). */
  readonly overrides: boolean;
  /** True once the server's answers are in (until then nothing optional is offered). */
  readonly probed?: boolean;
}

export const NOTHING_OFFERED: Offers = { users: false, credits: false, overrides: false };

/** Whether `path` answers the user (false for 403, 404 and any other refusal). */
async function answers(api: Api, path: string, signal: AbortSignal): Promise<boolean> {
  try {
    await api.get(path, { limit: path === '/users' ? 1 : undefined }, signal);
    return true;
  } catch (error) {
    if (error instanceof ApiError) return false;
    throw error;
  }
}

export async function probeOffers(api: Api, signal: AbortSignal): Promise<Offers> {
  const [users, credits, overrides] = await Promise.all([
    answers(api, '/users', signal),
    answers(api, '/credits/balance', signal),
    answers(api, '/settings/overrides', signal),
  ]);
  return { users, credits, overrides, probed: true };
}

/** The offers for a session, probed once per sign-in; null until the answers are in. */
export function useOffers(api: Api): Offers | null {
  const [offers, setOffers] = useState<Offers | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    probeOffers(api, controller.signal).then(setOffers, () => {
      if (!controller.signal.aborted) setOffers({ ...NOTHING_OFFERED, probed: true });
    });
    return () => controller.abort();
  }, [api]);
  return offers;
}
