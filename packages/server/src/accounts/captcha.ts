/**
 * CAPTCHA tokens of a user's submissions, checked with the provider's siteverify endpoint: Cloudflare Turnstile,
 * Google reCAPTCHA v2 and v3, hCaptcha. A form POST (`secret`, `response`, `remoteip`; hCaptcha also `sitekey`) whose
 * JSON answer's `success` decides (and for reCAPTCHA v3 its `score`, against the user's `minScore`).
 *
 * - A token is good once: one accepted is remembered (by a hash of provider and token, never the token itself) for
 *   24 hours, and one being checked cannot be used by another submission meanwhile.
 * - A provider that cannot be reached in time, answers 5xx or something that is not a siteverify answer is
 *   "unavailable": the submission is refused (never accepted unchecked) and the token left unused, to be sent again.
 * - Redirects are not followed: a 307 or 308 would carry the secret key to wherever it points.
 * - The siteverify URLs are the operator's configuration (tests and private deployments point them at loopback), so
 *   unlike mail exchangers and callback URLs they are not held to global addresses.
 *
 * No HTTP server framework here: the server turns the two refusals into its answers (src/server/admission.ts).
 */
import { createHash } from 'node:crypto';
import type { CaptchaProviders } from './types.js';

export type CaptchaProvider = keyof CaptchaProviders;

/** Each provider by its name in a submission's `captcha.provider` (read without case). */
export const CAPTCHA_PROVIDERS: Readonly<Record<CaptchaProvider, string>> = {
  turnstile: 'Turnstile',
  reCaptchaV2: 'reCaptcha_v2',
  reCaptchaV3: 'reCaptcha_v3',
  hCaptcha: 'hCaptcha',
};

/** The providers' public siteverify endpoints. */
export const DEFAULT_SITEVERIFY_URLS: Readonly<Record<CaptchaProvider, string>> = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  reCaptchaV2: 'https://www.google.com/recaptcha/api/siteverify',
  reCaptchaV3: 'https://www.google.com/recaptcha/api/siteverify',
  hCaptcha: 'https://api.hcaptcha.com/siteverify',
};

export const DEFAULT_CAPTCHA_TIMEOUT_MS = 5_000;
/** reCAPTCHA v3's lowest accepted score when the user sets none. */
export const DEFAULT_MIN_SCORE = 0.5;
/** How long an accepted token is remembered: far longer than any provider keeps a token valid (minutes). */
export const REMEMBERED_TOKEN_MS = 24 * 3_600_000;
/** Accepted tokens remembered at most (about 100 bytes each); past it the oldest is forgotten first. */
export const DEFAULT_MAX_REMEMBERED_TOKENS = 200_000;
/** Provider tokens are a few hundred to 2,048 characters; a longer one is no token and is not sent anywhere. */
export const MAX_TOKEN_LENGTH = 8_192;
/** A siteverify answer is a small JSON object; more than this is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface CaptchaOptions {
  /** The siteverify endpoint of each provider (default: its public one). */
  readonly siteverifyUrls?: Partial<Record<CaptchaProvider, string>>;
  /** How long a provider has to answer, in milliseconds (default 5,000). */
  readonly timeoutMs?: number;
  /** Accepted tokens remembered at most (default 200,000), when they are remembered in this process's memory. */
  readonly maxRememberedTokens?: number;
  /** Where used tokens are remembered (default: this process's memory); a cluster shares one (RedisCaptchaTokens). */
  readonly usedTokens?: UsedCaptchaTokens;
}

/** The token was not accepted: no valid `captcha` member, a provider the user has not configured, or the provider said no. */
export class CaptchaRefused extends Error {
  constructor(
    message: string,
    /** What the provider said, for the log (its `error-codes`), when it was asked. */
    readonly providerCodes?: readonly string[],
  ) {
    super(message);
    this.name = 'CaptchaRefused';
  }
}

/** The provider could not say: unreachable, too slow, a 5xx, or an answer that is not a siteverify answer. */
export class CaptchaUnavailable extends Error {
  constructor(
    readonly provider: CaptchaProvider,
    message: string,
  ) {
    super(message);
    this.name = 'CaptchaUnavailable';
  }
}

/** A submission's `captcha` member as read: which provider, and the token. */
export interface CaptchaAnswer {
  readonly provider: CaptchaProvider;
  readonly token: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{ provider, token }` from a submission (the provider's name in any case), else CaptchaRefused saying what is wrong. */
export function readCaptchaAnswer(value: unknown): CaptchaAnswer {
  if (value == null) throw new CaptchaRefused('This user submits with a CAPTCHA: captcha { provider, token } is required.');
  if (!isObject(value)) throw new CaptchaRefused('captcha must be an object { provider, token }.');
  const { provider: name, token } = value;
  const names = Object.values(CAPTCHA_PROVIDERS).join(', ');
  if (typeof name !== 'string') throw new CaptchaRefused(`captcha.provider is required: one of ${names}.`);
  const provider = (Object.keys(CAPTCHA_PROVIDERS) as CaptchaProvider[]).find((key) => CAPTCHA_PROVIDERS[key].toLowerCase() === name.toLowerCase());
  if (provider === undefined) throw new CaptchaRefused(`captcha.provider must be one of ${names}.`);
  if (typeof token !== 'string' || token === '') throw new CaptchaRefused('captcha.token is required: the token the CAPTCHA widget gave.');
  if (token.length > MAX_TOKEN_LENGTH) throw new CaptchaRefused(`captcha.token is longer than any ${CAPTCHA_PROVIDERS[provider]} token.`);
  return { provider, token };
}

/** Tokens used up, by a hash of provider and token: accepted ones for 24 hours, and those being checked right now. */
export interface UsedCaptchaTokens {
  /** Takes `key` for a check, atomically; false when it is being checked or was accepted. */
  take(key: string): boolean | Promise<boolean>;
  /** The check of `key` ended: remembered for 24 hours when the token was accepted, else free again. */
  release(key: string, accepted: boolean): void | Promise<void>;
}

/** Used tokens in this process's memory (accepted ones in insertion order, which is expiry order: oldest go first). */
export class UsedTokens implements UsedCaptchaTokens {
  private readonly accepted = new Map<string, number>();
  private readonly checking = new Set<string>();

  constructor(
    private readonly max: number,
    private readonly now: () => number,
  ) {}

  /** Takes `key` for a check; false when it is being checked or was accepted. */
  take(key: string): boolean {
    this.expire();
    if (this.accepted.has(key) || this.checking.has(key)) return false;
    this.checking.add(key);
    return true;
  }

  /** The check of `key` ended: remembered when the token was accepted, else free again. */
  release(key: string, accepted: boolean): void {
    this.checking.delete(key);
    if (!accepted) return;
    this.accepted.set(key, this.now() + REMEMBERED_TOKEN_MS);
    // The oldest is hours old, long expired at its provider, which would refuse it anyway.
    while (this.accepted.size > this.max) this.accepted.delete(this.accepted.keys().next().value!);
  }

  private expire(): void {
    const now = this.now();
    for (const [key, until] of this.accepted) {
      if (until > now) break;
      this.accepted.delete(key);
    }
  }
}

/** Checks submissions' tokens with the providers; one per server, so that a token is good once across it. */
export class CaptchaVerifier {
  private readonly urls: Readonly<Record<CaptchaProvider, string>>;
  private readonly timeoutMs: number;
  private readonly used: UsedCaptchaTokens;

  constructor(options: CaptchaOptions = {}, now: () => number = Date.now) {
    const urls = { ...DEFAULT_SITEVERIFY_URLS };
    for (const [provider, url] of Object.entries(options.siteverifyUrls ?? {}) as [CaptchaProvider, string | undefined][]) {
      if (!(provider in DEFAULT_SITEVERIFY_URLS)) throw new TypeError(`mailverify: captcha.siteverifyUrls has no provider ${provider}`);
      if (url === undefined) continue;
      if (!isHttpUrl(url)) throw new TypeError(`mailverify: captcha.siteverifyUrls.${provider} must be an absolute http or https URL`);
      urls[provider] = url;
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_CAPTCHA_TIMEOUT_MS;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) throw new TypeError('mailverify: captcha.timeoutMs must be a whole number from 1');
    const max = options.maxRememberedTokens ?? DEFAULT_MAX_REMEMBERED_TOKENS;
    if (!Number.isSafeInteger(max) || max < 1) throw new TypeError('mailverify: captcha.maxRememberedTokens must be a whole number from 1');
    this.urls = urls;
    this.timeoutMs = timeoutMs;
    this.used = options.usedTokens ?? new UsedTokens(max, now);
  }

  /**
   * Checks a submission's `captcha` member for a user with these providers, from `remoteIp`. Resolves when the token
   * is accepted (and from then on used up); throws CaptchaRefused or CaptchaUnavailable.
   */
  async check(value: unknown, providers: CaptchaProviders | undefined, remoteIp: string): Promise<CaptchaAnswer> {
    const answer = readCaptchaAnswer(value);
    const { provider, token } = answer;
    const settings = providers?.[provider];
    if (settings === undefined) throw new CaptchaRefused(`${CAPTCHA_PROVIDERS[provider]} is not a CAPTCHA provider of this user.`);
    const key = createHash('sha256').update(`${provider}\n${token}`).digest('base64url');
    if (!(await this.used.take(key))) throw new CaptchaRefused('This CAPTCHA token was already used: solve the CAPTCHA again.');
    let accepted = false;
    try {
      const form = new URLSearchParams({ secret: settings.secretKey, response: token, remoteip: remoteIp });
      if (provider === 'hCaptcha') form.set('sitekey', (settings as NonNullable<CaptchaProviders['hCaptcha']>).siteKey);
      const result = await this.siteverify(provider, form);
      const codes = errorCodes(result);
      if (result['success'] !== true) throw new CaptchaRefused(`${CAPTCHA_PROVIDERS[provider]} refused the CAPTCHA token.`, codes);
      if (provider === 'reCaptchaV3') {
        const minScore = (settings as NonNullable<CaptchaProviders['reCaptchaV3']>).minScore ?? DEFAULT_MIN_SCORE;
        const score = result['score'];
        if (typeof score !== 'number' || !(score >= minScore)) {
          throw new CaptchaRefused(`The reCAPTCHA v3 score is below this user's minimum (${minScore}).`, codes);
        }
      }
      accepted = true;
      return answer;
    } finally {
      // A token the provider refused is not remembered: it would refuse it again, and remembering what anyone sends
      // would let them push accepted tokens out of the memory.
      await this.used.release(key, accepted);
    }
  }

  /** The provider's JSON answer to `form`, or CaptchaUnavailable. */
  private async siteverify(provider: CaptchaProvider, form: URLSearchParams): Promise<Record<string, unknown>> {
    const name = CAPTCHA_PROVIDERS[provider];
    let status: number;
    let text: string | null;
    // The whole exchange, answer body included, within the timeout; the timer cleared as soon as it is over.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.timeoutMs);
    try {
      const response = await fetch(this.urls[provider], {
        method: 'POST',
        body: form,
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: abort.signal,
      });
      status = response.status;
      text = status >= 500 ? (await response.body?.cancel(), '') : await limitedText(response, MAX_ANSWER_BYTES);
    } catch {
      const reason = abort.signal.aborted ? `did not answer within ${this.timeoutMs} ms` : 'could not be reached';
      throw new CaptchaUnavailable(provider, `${name} ${reason}.`);
    } finally {
      clearTimeout(timer);
    }
    if (status >= 500) throw new CaptchaUnavailable(provider, `${name} answered ${status}.`);
    if (text === null) throw new CaptchaUnavailable(provider, `${name} answered more than a siteverify answer holds.`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    // A 4xx with a siteverify answer is the provider's refusal; anything else is not its answer.
    if (!isObject(parsed) || typeof parsed['success'] !== 'boolean') {
      throw new CaptchaUnavailable(provider, `${name} answered ${status} with no siteverify answer.`);
    }
    if (status < 200 || status > 299) return { ...parsed, success: false };
    return parsed;
  }
}

/** The body of `response` as text; null (the rest left unread) when it is longer than `max` bytes. */
async function limitedText(response: Response, max: number): Promise<string | null> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function errorCodes(result: Record<string, unknown>): readonly string[] | undefined {
  const codes = result['error-codes'];
  return Array.isArray(codes) ? codes.filter((code): code is string => typeof code === 'string').slice(0, 10) : undefined;
}

/** Whether `text` is an absolute http or https URL. */
export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
