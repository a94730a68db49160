/**
 * The signed-in session: a bearer token from `/auth/tokens`, kept in memory and in `sessionStorage` (so that a reload
 * of the tab keeps it, and closing the tab forgets it), never in `localStorage` or a cookie.
 *
 * - `loadToken()` / `saveToken(token)` / `forgetToken()`: the stored full token (an expired one is not loaded).
 * - `signIn(api, username, password)` → `{ kind: 'signed-in', token }` or `{ kind: 'code', firstFactor }` when the
 *   user has a TOTP enrolled; then `verifyCode(api, firstFactor, code)` → the full token.
 */
import { createApi, type Api } from './api.js';

const KEY = 'mailverify.console.token';

let current: string | null = null;

interface Claims {
  readonly sub?: string;
  readonly exp?: number;
  readonly 'service:mfa'?: readonly string[];
}

/** The claims of a JWT, read without checking it (the server checks it on every request). */
export function claimsOf(token: string): Claims {
  try {
    const part = token.split('.')[1] ?? '';
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='));
    return JSON.parse(json) as Claims;
  } catch {
    return {};
  }
}

function expired(token: string): boolean {
  const exp = claimsOf(token).exp;
  return exp !== undefined && exp * 1000 <= Date.now();
}

export function loadToken(): string | null {
  if (current === null) {
    try {
      current = sessionStorage.getItem(KEY);
    } catch {
      current = null;
    }
  }
  if (current !== null && expired(current)) forgetToken();
  return current;
}

export function saveToken(token: string): void {
  current = token;
  try {
    sessionStorage.setItem(KEY, token);
  } catch {
    // storage refused (a private window's quota): the token stays in memory for this page
  }
}

export function forgetToken(): void {
  current = null;
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // nothing stored
  }
}

export type SignInStep = { readonly kind: 'signed-in'; readonly token: string } | { readonly kind: 'code'; readonly firstFactor: string };

/** The first factor: a full token, or a first-factor token that needs a TOTP code. */
export async function signIn(api: Api, username: string, password: string): Promise<SignInStep> {
  const { accessToken } = await api.post<{ accessToken: string }>('/auth/tokens', { username, password });
  const factors = claimsOf(accessToken)['service:mfa'];
  return Array.isArray(factors) && factors.includes('totp') ? { kind: 'code', firstFactor: accessToken } : { kind: 'signed-in', token: accessToken };
}

/** The TOTP step, with the first-factor token: the full token. */
export async function verifyCode(api: Api, firstFactor: string, code: string): Promise<string> {
  const withFirstFactor = createApi({ basePath: api.basePath, token: () => firstFactor });
  const { accessToken } = await withFirstFactor.post<{ accessToken: string }>('/auth/totp/verifications', { passCode: code.trim() });
  return accessToken;
}
