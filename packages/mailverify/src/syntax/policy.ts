/**
 * Syntax policy options: forms that RFC 5321 and RFC 6531 allow but that some users refuse (python-email-validator
 * and validator.js have the same switches). Every form is accepted by default; a refused form fails with the status
 * of the nearest syntax failure (docs/syntax.md#policy-options):
 * - a quoted local part: InvalidCharacterInSequence at the opening quote;
 * - an address literal: UnacceptableDomainLiteral at the `[` (as the verifier answers a non-global literal);
 * - a non-ASCII character in the local part, escaped or not: InvalidCharacterInSequence at that character;
 * - provider rules off: no IspSpecificSyntaxFailure.
 */
import { checkOptionNames, type OptionNames } from '../options/names.js';

export interface SyntaxOptions {
  /** Accept a quoted local part, `"john doe"@example.com` (RFC 5321 §4.1.2 Quoted-string). Default true. */
  allowQuotedLocalPart?: boolean;
  /** Accept an address literal as the domain, `user@[192.0.2.1]` (RFC 5321 §4.1.3). Default true. */
  allowAddressLiteral?: boolean;
  /** Accept non-ASCII characters in the local part (RFC 6531 §3.3; such mail needs SMTPUTF8). Default true. */
  allowInternationalLocalPart?: boolean;
  /** Apply the sign-up rules of well-known providers (IspSpecificSyntaxFailure, `PROVIDER_RULES`). Default true. */
  providerRules?: boolean;
}

/** Syntax options with every switch set. */
export type SyntaxPolicy = Readonly<Required<SyntaxOptions>>;

const SWITCHES = ['allowQuotedLocalPart', 'allowAddressLiteral', 'allowInternationalLocalPart', 'providerRules'] as const;

export const SYNTAX_OPTION_NAMES: OptionNames = Object.fromEntries(SWITCHES.map((name) => [name, true]));

export const DEFAULT_SYNTAX_POLICY: SyntaxPolicy = Object.freeze({
  allowQuotedLocalPart: true,
  allowAddressLiteral: true,
  allowInternationalLocalPart: true,
  providerRules: true,
});

/**
 * The policy that `options` describes, defaults filled in. Throws a TypeError, naming `where` and the option's path,
 * for anything but an object of known names with boolean values.
 */
export function syntaxPolicyOf(options: unknown, where: string, path = ''): SyntaxPolicy {
  if (options === undefined) return DEFAULT_SYNTAX_POLICY;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`${where}: ${path === '' ? 'options' : `option ${path.slice(0, -1)}`} must be an object, got ${describe(options)}`);
  }
  checkOptionNames(options, SYNTAX_OPTION_NAMES, where, path);
  const given = options as SyntaxOptions;
  let policy: SyntaxPolicy | null = null;
  for (const name of SWITCHES) {
    const value = given[name];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw new TypeError(`${where}: option ${path}${name} must be true or false, got ${describe(value)}`);
    if (value !== DEFAULT_SYNTAX_POLICY[name]) policy = { ...(policy ?? DEFAULT_SYNTAX_POLICY), [name]: value };
  }
  return policy ?? DEFAULT_SYNTAX_POLICY;
}

const describe = (value: unknown): string => JSON.stringify(value) ?? String(value);
