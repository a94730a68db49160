/**
 * Duplicate marking in batches (docs/verification.md#deduplication): the key under which two inputs are the same
 * address.
 *
 * - Safe: the address without CFWS and needless quoting, the domain in lower-case ASCII, the local part compared
 *   case-insensitively for ASCII letters only.
 * - Relaxed: Safe, plus `+tag` sub-addresses removed for every domain, and the provider rules' own equivalences
 *   (Gmail: dots ignored, googlemail.com = gmail.com; Yahoo: `-keyword` removed).
 * An input that does not parse is a duplicate only of the very same input.
 */
import { providerRuleFor } from '../syntax/provider-rules.js';
import type { ParseResult } from '../syntax/types.js';
import { ATEXT } from '../syntax/chars.js';
import { mailboxName } from '../syntax/local-part.js';
import type { Deduplication } from './deduplication-modes.js';

export { DEDUPLICATION_MODES, type Deduplication } from './deduplication-modes.js';

/** The key of an input under `mode` ('Safe' or 'Relaxed'). */
export function deduplicationKey(input: string, parsed: ParseResult, mode: Exclude<Deduplication, 'Off'>): string {
  if (!parsed.ok) return `\u0000${input}`;
  let local = unquoted(parsed.localPart).replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
  let domain = parsed.asciiDomainPart.toLowerCase();
  if (mode === 'Relaxed' && !domain.startsWith('[')) {
    const rule = providerRuleFor(domain);
    const separators = new Set(['+', ...(rule?.separator ? [rule.separator] : [])]);
    const cut = [...local].findIndex((ch) => separators.has(ch));
    if (cut > 0) local = [...local].slice(0, cut).join('');
    if (rule?.dotsIgnored) local = local.replace(/\./g, '');
    if (rule?.canonicalDomain) domain = rule.canonicalDomain;
  }
  return `${local}@${domain}`;
}

/**
 * A quoted local part without its quotes when they are needless (RFC 5321 §4.1.2: the content is a dot-string once
 * the quoted pairs are undone); otherwise the local part with the needless escapes removed, still quoted.
 */
function unquoted(localPart: string): string {
  if (!localPart.startsWith('"')) return localPart;
  const content = mailboxName(localPart);
  return isDotString(content) ? content : `"${content.replace(/["\\]/g, '\\$&')}"`;
}

function isDotString(text: string): boolean {
  if (text === '' || text.startsWith('.') || text.endsWith('.') || text.includes('..')) return false;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c < 0x80 && ATEXT[c] !== 1 && ch !== '.') return false;
  }
  return true;
}
