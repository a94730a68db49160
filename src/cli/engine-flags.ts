/**
 * The engine's flags, shared by `mailverify check` and `mailverify serve`: DNS, SMTP, quality and safety settings of
 * the verifier. A bad value is a usage error (exit 2) naming the flag.
 */
import type { VerifierOptions, Quality } from '../engine/verifier.js';
import type { SyntaxOptions } from '../syntax/policy.js';

export class UsageError extends Error {}

/** A bad option value that a constructor refuses is the user's to fix: a usage error. */
export function usage<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** parseArgs specs of the engine flags. */
export const ENGINE_FLAGS = {
  'dns-server': { type: 'string', multiple: true },
  'helo-name': { type: 'string' },
  'mail-from': { type: 'string' },
  'smtp-port': { type: 'string' },
  quality: { type: 'string' },
  'allow-private-addresses': { type: 'boolean', default: false },
  'max-connections': { type: 'string' },
  passes: { type: 'string' },
  'pass-delay': { type: 'string' },
  'dns-timeout': { type: 'string' },
  refuse: { type: 'string', multiple: true },
  'no-provider-rules': { type: 'boolean', default: false },
} as const;

/** `--refuse FORM`: the syntax policy option each form turns off (docs/syntax.md#policy-options). */
export const REFUSABLE = {
  quoted: 'allowQuotedLocalPart',
  literal: 'allowAddressLiteral',
  international: 'allowInternationalLocalPart',
} as const;

export interface EngineFlagValues {
  'dns-server'?: string[];
  'helo-name'?: string;
  'mail-from'?: string;
  'smtp-port'?: string;
  quality?: string;
  'allow-private-addresses'?: boolean;
  'max-connections'?: string;
  passes?: string;
  'pass-delay'?: string;
  'dns-timeout'?: string;
  refuse?: string[];
  'no-provider-rules'?: boolean;
}

/** The verifier's options that the engine flags set (absent flags leave the engine's defaults). */
export function engineOptionsOf(values: EngineFlagValues): VerifierOptions {
  const smtpPort = values['smtp-port'] === undefined ? undefined : Number(values['smtp-port']);
  if (smtpPort !== undefined && !(Number.isInteger(smtpPort) && smtpPort > 0 && smtpPort < 65536)) {
    throw new UsageError(`--smtp-port must be a TCP port number, got ${values['smtp-port']}`);
  }
  const quality = values.quality as Quality | undefined;
  if (quality !== undefined && !['Standard', 'High', 'Extreme'].includes(quality)) {
    throw new UsageError(`--quality must be Standard, High or Extreme, got ${quality}`);
  }
  const syntax: SyntaxOptions = {};
  for (const form of values.refuse ?? []) {
    const option = REFUSABLE[form as keyof typeof REFUSABLE];
    if (option === undefined) throw new UsageError(`--refuse takes ${Object.keys(REFUSABLE).join(', ')}, got ${form}`);
    syntax[option] = false;
  }
  if (values['no-provider-rules'] === true) syntax.providerRules = false;
  return {
    syntax,
    dns: { servers: values['dns-server'], timeoutMs: wholeNumber(values['dns-timeout'], '--dns-timeout', 1) },
    passes: wholeNumber(values.passes, '--passes', 1),
    passDelayMs: wholeNumber(values['pass-delay'], '--pass-delay', 0),
    heloName: values['helo-name'],
    mailFrom: values['mail-from'],
    quality,
    allowPrivateAddresses: values['allow-private-addresses'] === true,
    smtp: { port: smtpPort, maxConnections: wholeNumber(values['max-connections'], '--max-connections', 1) },
  };
}

/** A flag's whole number from `min` up, or undefined when the flag is absent. */
export function wholeNumber(text: string | undefined, flag: string, min: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!(text.trim() !== '' && Number.isInteger(value) && value >= min)) {
    throw new UsageError(`${flag} must be a whole number${min > 0 ? ` from ${min}` : ''}, got ${text}`);
  }
  return value;
}
