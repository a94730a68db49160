/**
 * Provider sign-up rules (IspSpecificSyntaxFailure, decisions.md §3): the local parts that well-known free providers
 * can ever have issued. Applied after the RFC checks, to plain (unquoted) local parts; a quoted local part fails at
 * its opening quote. The username is the local part up to the provider's sub-address separator. The failure index is
 * the first offending character, or the `@` for a length rule.
 */
import { getPublicSuffix } from 'tldts';

export interface ProviderRule {
  /** Exact ASCII domains. */
  readonly domains: readonly string[];
  /** Second-level names under any ICANN public suffix (`yahoo` matches yahoo.com, yahoo.co.uk, ...). */
  readonly brands?: readonly string[];
  /** The sub-address separator; the username ends before it. */
  readonly separator: string | null;
  /** The first character must be an ASCII letter. */
  readonly startsWithLetter: boolean;
  /** Characters allowed besides ASCII letters and digits. */
  readonly symbols: string;
  /** At most this many dots in the username. */
  readonly maxDots?: number;
  /** Length bounds of the username. */
  readonly length?: { readonly min: number; readonly max: number; readonly counts: 'all' | 'alphanumeric' };
  readonly source: string;
}

export const PROVIDER_RULES: readonly ProviderRule[] = [
  {
    domains: ['gmail.com', 'googlemail.com'],
    separator: '+',
    startsWithLetter: false,
    symbols: '.',
    length: { min: 6, max: 30, counts: 'alphanumeric' },
    // "Choose a username 6–30 characters long"; "letters (a-z), numbers (0-9), and periods (.)"; periods don't
    // matter in Gmail addresses. Sub-addressing with "+".
    source: 'https://support.google.com/mail/answer/9211434',
  },
  {
    domains: ['ymail.com', 'rocketmail.com'],
    brands: ['yahoo'],
    separator: '-',
    startsWithLetter: true,
    symbols: '._',
    maxDots: 1,
    length: { min: 4, max: 32, counts: 'all' },
    // Yahoo ID: 4 to 32 characters, starts with a letter, letters, numbers, underscores and one period;
    // disposable addresses are "base-keyword" (Yahoo Help, "Create and manage disposable email addresses").
    source: 'https://login.yahoo.com/account/create (sign-up form rules); https://help.yahoo.com/kb/SLN28338.html',
  },
  {
    domains: ['outlook.com', 'msn.com'],
    brands: ['hotmail', 'live'],
    separator: '+',
    startsWithLetter: true,
    symbols: '._-',
    // Microsoft account e-mail names: letters, numbers, periods, underscores and hyphens, starting with a letter;
    // plus addressing is supported by Outlook.com.
    source: 'https://signup.live.com (sign-up form rules); https://support.microsoft.com/office/plus-addressing',
  },
  {
    domains: ['aol.com'],
    separator: null,
    startsWithLetter: true,
    symbols: '._',
    maxDots: 1,
    length: { min: 3, max: 32, counts: 'all' },
    // AOL (Yahoo platform): 3 to 32 characters, starts with a letter, letters, numbers, underscores and one period.
    source: 'https://login.aol.com/account/create (sign-up form rules)',
  },
  {
    domains: ['icloud.com', 'me.com', 'mac.com'],
    separator: '+',
    startsWithLetter: true,
    symbols: '._',
    length: { min: 3, max: 20, counts: 'all' },
    // iCloud Mail address: 3 to 20 characters, starts with a letter, letters, numbers, periods and underscores;
    // plus addressing is supported.
    source: 'https://support.apple.com/guide/icloud/create-a-primary-email-address-mm4ff2f1c0a8/icloud',
  },
];

const byDomain = new Map<string, ProviderRule>();
const byBrand = new Map<string, ProviderRule>();
for (const rule of PROVIDER_RULES) {
  for (const domain of rule.domains) byDomain.set(domain, rule);
  for (const brand of rule.brands ?? []) byBrand.set(brand, rule);
}

/** The rule that applies to a lower-case ASCII domain, if any. */
export function providerRuleFor(asciiDomain: string): ProviderRule | undefined {
  const exact = byDomain.get(asciiDomain);
  if (exact !== undefined) return exact;
  const dot = asciiDomain.indexOf('.');
  if (dot <= 0) return undefined;
  const brandRule = byBrand.get(asciiDomain.slice(0, dot));
  if (brandRule === undefined) return undefined;
  const rest = asciiDomain.slice(dot + 1);
  return getPublicSuffix(rest) === rest ? brandRule : undefined;
}

const isLetter = (c: number): boolean => ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * Checks the local part `input[localStart, localEnd)` against the rule of its provider. Returns the failure index,
 * or null when no rule applies or the local part follows it.
 */
export function checkProviderRules(
  input: string,
  localStart: number,
  localEnd: number,
  atIndex: number,
  asciiDomain: string,
): number | null {
  const rule = providerRuleFor(asciiDomain);
  if (rule === undefined) return null;
  const separator = rule.separator === null ? -1 : rule.separator.charCodeAt(0);
  let dots = 0;
  let counted = 0;
  let pos = localStart;
  for (; pos < localEnd; pos++) {
    const c = input.charCodeAt(pos);
    if (c === separator) break;
    if (isLetter(c)) {
      counted++;
      continue;
    }
    if (pos === localStart && rule.startsWithLetter) return pos;
    if (isDigit(c)) {
      counted++;
      continue;
    }
    // Also catches a quoted local part (`"`) and any non-ASCII character.
    if (c >= 0x80 || !rule.symbols.includes(input[pos]!)) return pos;
    if (c === 0x2e && rule.maxDots !== undefined && ++dots > rule.maxDots) return pos;
    if (rule.length?.counts === 'all') counted++;
  }
  if (rule.length !== undefined && (counted < rule.length.min || counted > rule.length.max)) return atIndex;
  return null;
}
