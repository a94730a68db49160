/**
 * Classifier override rules (docs/verification.md#override-rules): an ordered list of `{ match, classification }`. An
 * address that parses and matches a rule gets the status OverrideMatch and the rule's classification, with no DNS or
 * SMTP work; the first matching rule decides.
 *
 * `match` is a wildcard pattern over the whole address as Safe deduplication compares it (dedupe.ts: no CFWS, needless
 * quoting removed, the domain in lower-case ASCII, the ASCII letters of the local part in lower case): `*` is any run
 * of characters (none included), `?` exactly one character, every other character stands for itself. A pattern is
 * brought to that same form, so that it is written as an address would be: its ASCII letters are compared without
 * case, an international domain label is compared in its A-label form (`*@bücher.de` matches `x@xn--bcher-kva.de`),
 * and a pattern without wildcards that is an address matches exactly the addresses Safe deduplication counts as it.
 */
import { parseAddress } from '../syntax/parse.js';
import { mapDomainToAscii } from '../syntax/idna.js';
import { deduplicationKey } from './dedupe.js';
import { compileWildcard } from '../text/wildcard.js';

export interface OverrideRule {
  /** A wildcard pattern over the address (`*` any run of characters, `?` one character). */
  readonly match: string;
  /** The classification the matching addresses get: Deliverable, Risky, Undeliverable, Unknown, or a custom name. */
  readonly classification: string;
}

/** The longest pattern and classification name. */
export const MAX_PATTERN_LENGTH = 1024;
export const MAX_CLASSIFICATION_LENGTH = 100;

/**
 * The rules, checked: an array of `{ match, classification }`, each a non-empty string without control characters,
 * and no other key. A malformed rule is a TypeError naming it (`where[2].match`). Returns a copy.
 */
export function checkOverrideRules(rules: unknown, where: string): OverrideRule[] {
  if (!Array.isArray(rules)) throw new TypeError(`${where} must be an array of { match, classification } rules, got ${describe(rules)}`);
  return rules.map((rule: unknown, index) => {
    const name = `${where}[${index}]`;
    if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) throw new TypeError(`${name} must be an object { match, classification }, got ${describe(rule)}`);
    for (const key of Object.keys(rule)) {
      if (key !== 'match' && key !== 'classification') throw new TypeError(`${name} has an unknown key ${JSON.stringify(key)} (a rule has match and classification)`);
    }
    const { match, classification } = rule as Record<string, unknown>;
    checkText(match, `${name}.match`, MAX_PATTERN_LENGTH);
    checkText(classification, `${name}.classification`, MAX_CLASSIFICATION_LENGTH);
    normalPattern(match as string, `${name}.match`);
    return { match: match as string, classification: classification as string };
  });
}

function checkText(value: unknown, name: string, maxLength: number): void {
  if (typeof value !== 'string' || value === '') throw new TypeError(`${name} must be a non-empty string, got ${describe(value)}`);
  if (value.length > maxLength) throw new TypeError(`${name} must be at most ${maxLength} characters long, got ${value.length}`);
  // No address holds a control character outside quotes, and none inside them without a backslash: such a pattern
  // could never match, so it is refused as the mistake it is.
  // eslint-disable-next-line no-control-regex
  const control = /[\u0000-\u001f\u007f-\u009f]/.exec(value);
  if (control !== null) throw new TypeError(`${name} must not hold control characters, found U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} at ${control.index}`);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'function') return 'a function';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const WILDCARD = /[*?]/;

/**
 * A pattern in the form of the keys it is compared with. Without wildcards, an address is its Safe key; otherwise
 * ASCII letters go to lower case and each label of the domain (after the last `@`) that has non-ASCII characters
 * becomes its A-label, which a label holding a wildcard cannot: that is a malformed rule.
 */
function normalPattern(pattern: string, name: string): string {
  if (!WILDCARD.test(pattern)) {
    const parsed = parseAddress(pattern);
    if (parsed.ok) return deduplicationKey(pattern, parsed, 'Safe');
  }
  const lowered = pattern.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
  const at = lowered.lastIndexOf('@');
  if (at < 0) return lowered;
  const labels = lowered.slice(at + 1).split('.').map((label) => {
    if (!/[^\x00-\x7f]/.test(label)) return label;
    if (WILDCARD.test(label)) throw new TypeError(`${name}: the domain label ${JSON.stringify(label)} has both a wildcard and non-ASCII characters; write the label in full or in its xn-- form`);
    const ascii = mapDomainToAscii(label);
    if (ascii === null || ascii === '' || ascii.includes('.')) throw new TypeError(`${name}: the domain label ${JSON.stringify(label)} is not a valid international label`);
    return ascii;
  });
  return `${lowered.slice(0, at + 1)}${labels.join('.')}`;
}

/** A compiled rule. */
interface Compiled {
  /** Position of the rule in its list (lists tried one after the other count on). */
  readonly order: number;
  readonly classification: string;
  readonly matches: (key: string) => boolean;
}

/**
 * Finds the classification of the first rule that matches an address key (deduplicationKey(..., 'Safe')), or null.
 * Rules are indexed so that a long list costs little per address: patterns without wildcards by their key, patterns
 * whose domain has none by that domain; the others are tried in order, only as far as the best match found so far.
 */
export type OverrideMatcher = (key: string) => string | null;

export function compileOverrides(...lists: readonly (readonly OverrideRule[])[]): OverrideMatcher | null {
  const exact = new Map<string, Compiled>();
  const byDomain = new Map<string, Compiled[]>();
  const general: Compiled[] = [];
  let order = 0;
  for (const list of lists) {
    for (const rule of list) {
      const pattern = normalPattern(rule.match, 'override rule');
      const compiled: Compiled = { order: order++, classification: rule.classification, matches: compileWildcard(pattern) };
      if (!WILDCARD.test(pattern)) {
        if (!exact.has(pattern)) exact.set(pattern, compiled);
        continue;
      }
      const at = pattern.lastIndexOf('@');
      const domain = at < 0 ? null : pattern.slice(at + 1);
      if (domain !== null && !WILDCARD.test(domain)) {
        const bucket = byDomain.get(domain);
        if (bucket === undefined) byDomain.set(domain, [compiled]);
        else bucket.push(compiled);
      } else {
        general.push(compiled);
      }
    }
  }
  if (order === 0) return null;
  return (key) => {
    let best = exact.get(key);
    const at = key.lastIndexOf('@');
    const bucket = at < 0 ? undefined : byDomain.get(key.slice(at + 1));
    if (bucket !== undefined) {
      for (const rule of bucket) {
        if (best !== undefined && rule.order > best.order) break;
        if (rule.matches(key)) {
          best = rule;
          break;
        }
      }
    }
    for (const rule of general) {
      if (best !== undefined && rule.order > best.order) break;
      if (rule.matches(key)) {
        best = rule;
        break;
      }
    }
    return best?.classification ?? null;
  };
}
