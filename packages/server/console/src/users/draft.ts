/**
 * A user's settings as the form edits them (texts and switches), and back: the User detail they make, and the JSON
 * Patch that turns the detail read into it. Lists are text areas of one item per line; a line that cannot be read is
 * an error naming it, before anything is sent.
 */
import { linesOf, type CaptchaProviders, type FirewallRule, type ThrottlingRule, type UserDetail, type UserType } from './types.js';

export const PROVIDERS = [
  { name: 'turnstile', label: 'Turnstile' },
  { name: 'reCaptchaV2', label: 'reCAPTCHA v2' },
  { name: 'reCaptchaV3', label: 'reCAPTCHA v3' },
  { name: 'hCaptcha', label: 'hCaptcha' },
] as const;
export type ProviderName = (typeof PROVIDERS)[number]['name'];

export interface ProviderDraft {
  readonly on: boolean;
  /** A new secret key; empty keeps the one configured. */
  readonly secret: string;
  readonly siteKey: string;
  readonly minScore: string;
}

export interface Draft {
  readonly displayName: string;
  readonly type: UserType;
  readonly isActive: boolean;
  readonly username: string;
  readonly newPassword: string;
  readonly passwordEnabled: boolean;
  readonly mfaRequired: boolean;
  readonly certificate: boolean;
  readonly rules: string;
  readonly retention: string;
  readonly firewallEnabled: boolean;
  readonly firewall: string;
  readonly originsEnabled: boolean;
  readonly origins: string;
  readonly captchaEnabled: boolean;
  readonly providers: Readonly<Record<ProviderName, ProviderDraft>>;
  readonly maxEntriesPerJob: string;
  readonly throttling: string;
}

/** A line of the form that cannot be read. */
export class DraftError extends Error {}

export function firewallText(rules: readonly FirewallRule[]): string {
  return rules.map((rule) => `${rule.startIP === rule.endIP ? rule.startIP : `${rule.startIP}-${rule.endIP}`}${rule.displayName === '' ? '' : ` ${rule.displayName}`}`).join('\n');
}

/** `start[-end] [name]`: the family from the address (IPv6 has colons). */
export function firewallRules(text: string): FirewallRule[] {
  return linesOf(text).map((line, index) => {
    const [range = '', ...name] = line.split(/\s+/);
    const [startIP = '', endIP = startIP, extra] = range.split('-');
    if (startIP === '' || endIP === '' || extra !== undefined) throw new DraftError(`Allowed address ranges, line ${index + 1}: write an address, or a range as start-end, then a name if you like.`);
    return { addressFamily: startIP.includes(':') ? 'IPv6' : 'IPv4', displayName: name.join(' '), startIP, endIP };
  });
}

export function throttlingText(rules: readonly ThrottlingRule[]): string {
  return rules.map((rule) => `${rule.limit} per ${rule.period.toLowerCase()}${rule.scope === 'IPAddress' ? ' per IP address' : ''}`).join('\n');
}

const THROTTLING_LINE = /^(\d+)\s+(?:jobs?\s+)?(?:per|an?|each)\s+(minute|hour|day)(\s+per\s+ip(?:\s+address)?)?$/i;

/** `10 per hour`, `3 per minute per IP address`. */
export function throttlingRules(text: string): ThrottlingRule[] {
  return linesOf(text).map((line, index) => {
    const match = THROTTLING_LINE.exec(line);
    if (match === null) throw new DraftError(`Submission limits, line ${index + 1}: write a number of jobs per minute, hour or day, such as "10 per hour" or "3 per minute per IP address".`);
    const period = match[2]!.toLowerCase();
    return {
      limit: Number(match[1]),
      period: period === 'minute' ? 'Minute' : period === 'hour' ? 'Hour' : 'Day',
      scope: match[3] === undefined ? 'Global' : 'IPAddress',
    };
  });
}

export function draftOf(detail: UserDetail): Draft {
  const providers = detail.captcha.providers ?? {};
  const provider = (name: ProviderName): ProviderDraft => {
    const shown = providers[name] as { siteKey?: string; minScore?: number } | undefined;
    return { on: shown !== undefined, secret: '', siteKey: shown?.siteKey ?? '', minScore: shown?.minScore === undefined ? '' : String(shown.minScore) };
  };
  const password = detail.authentication.password;
  return {
    displayName: detail.displayName,
    type: detail.type,
    isActive: detail.isActive,
    username: password.username ?? '',
    newPassword: '',
    passwordEnabled: password.isEnabled,
    mfaRequired: password.isMfaRequired,
    certificate: detail.authentication.certificate.isEnabled,
    rules: detail.authorization.rules.join('\n'),
    retention: detail.defaults.retention ?? '',
    firewallEnabled: detail.firewall.isEnabled,
    firewall: firewallText(detail.firewall.rules),
    originsEnabled: detail.trustedOrigin.isEnabled,
    origins: detail.trustedOrigin.expressions.join('\n'),
    captchaEnabled: detail.captcha.isEnabled,
    providers: { turnstile: provider('turnstile'), reCaptchaV2: provider('reCaptchaV2'), reCaptchaV3: provider('reCaptchaV3'), hCaptcha: provider('hCaptcha') },
    maxEntriesPerJob: detail.throttling.maxEntriesPerJob === undefined ? '' : String(detail.throttling.maxEntriesPerJob),
    throttling: throttlingText(detail.throttling.rules),
  };
}

function providersOf(draft: Draft): CaptchaProviders | undefined {
  const providers: Record<string, Record<string, unknown>> = {};
  for (const { name } of PROVIDERS) {
    const given = draft.providers[name];
    if (!given.on) continue;
    // A secret key left empty is kept by the server; a provider newly turned on needs one (the server says so).
    const settings: Record<string, unknown> = given.secret === '' ? {} : { secretKey: given.secret };
    if (name === 'hCaptcha') settings['siteKey'] = given.siteKey.trim();
    if (name === 'reCaptchaV3' && given.minScore.trim() !== '') {
      const score = Number(given.minScore);
      if (!Number.isFinite(score)) throw new DraftError('reCAPTCHA v3 minimum score: write a number from 0 to 1.');
      settings['minScore'] = score;
    }
    providers[name] = settings;
  }
  return Object.keys(providers).length === 0 ? undefined : (providers as CaptchaProviders);
}

/** The User detail the draft makes (DraftError for a line that cannot be read). */
export function detailOf(draft: Draft, read: UserDetail): UserDetail {
  const maxEntries = draft.maxEntriesPerJob.trim();
  if (maxEntries !== '' && !/^\d+$/.test(maxEntries)) throw new DraftError('Most entries per job: write a whole number, or leave it empty for no limit.');
  const username = draft.username.trim();
  const providers = providersOf(draft);
  return {
    type: draft.type,
    displayName: draft.displayName.trim(),
    isActive: draft.isActive,
    authentication: {
      password: {
        isEnabled: draft.passwordEnabled,
        isMfaRequired: draft.mfaRequired,
        ...(read.type === 'BrowserApp' ? { username: read.authentication.password.username } : username !== '' && { username }),
      },
      certificate: { isEnabled: draft.certificate },
    },
    // Administrators keep their rules (not consulted); a BrowserApp's are fixed.
    authorization: { rules: draft.type === 'Standard' ? linesOf(draft.rules) : read.authorization.rules },
    captcha: { isEnabled: draft.captchaEnabled, ...(providers !== undefined && { providers }) },
    defaults: draft.retention.trim() === '' ? {} : { retention: draft.retention.trim() },
    firewall: { isEnabled: draft.firewallEnabled, rules: firewallRules(draft.firewall) },
    throttling: { ...(maxEntries !== '' && { maxEntriesPerJob: Number(maxEntries) }), rules: throttlingRules(draft.throttling) },
    trustedOrigin: { isEnabled: draft.originsEnabled, expressions: linesOf(draft.origins) },
  };
}

const FIELDS = ['displayName', 'type', 'isActive', 'authentication', 'authorization', 'captcha', 'defaults', 'firewall', 'throttling', 'trustedOrigin'] as const;

/** Same JSON, whatever the order of an object's keys. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) => same((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/** The JSON Patch from the detail read to the draft's: a `replace` of each top-level setting that changed. */
export function patchOf(read: UserDetail, draft: Draft): { op: string; path: string; value: unknown }[] {
  const changed = detailOf(draft, read);
  const operations = FIELDS.filter((field) => !same(read[field], changed[field])).map((field) => ({ op: 'replace', path: `/${field}`, value: changed[field] as unknown }));
  // The password is write-only: added, never shown.
  if (draft.newPassword !== '') operations.push({ op: 'add', path: '/authentication/password/password', value: draft.newPassword });
  return operations;
}
