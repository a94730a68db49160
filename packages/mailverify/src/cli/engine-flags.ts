/**
 * The engine's flags, shared by `mailverify check` and `mailverify serve`: DNS, SMTP, quality and safety settings of
 * the verifier. A bad value is a usage error (exit 2) naming the flag.
 */
import { parseServers } from '../dns/stub-resolver.js';
import type { Checks, VerifierOptions, Quality } from '../engine/verifier.js';
import type { SyntaxOptions } from '../syntax/policy.js';
import { checkOverrideRules, type OverrideRule } from '../engine/overrides.js';
import { readFileSync } from 'node:fs';
import { EGRESS_FLAGS, EgressOptionError, egressOfFlags, providersFile, type EgressFlagValues } from './egress-options.js';

export class UsageError extends Error {}

/** The commands with a help text of their own (`mailverify COMMAND --help`). */
const COMMANDS_WITH_HELP = ['doctor', 'serve', 'worker', 'migrate'];

/** `--version` among the flags (before a `--` that ends them). */
export function asksForVersion(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).includes('--version');
}

/**
 * Reports a command's failure on stderr and gives its exit code: 2 for a usage error (with the help to read), 1 for
 * anything else.
 */
export function commandFailed(command: string | undefined, error: unknown): number {
  const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true;
  process.stderr.write(`mailverify: ${(error as Error).message}\n`);
  const help = command !== undefined && COMMANDS_WITH_HELP.includes(command) ? `mailverify ${command} --help` : 'mailverify --help';
  if (usage) process.stderr.write(`Run "${help}" for usage.\n`);
  return usage ? 2 : 1;
}

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
  overrides: { type: 'string' },
  ...EGRESS_FLAGS,
  'smtp-providers-file': { type: 'string' },
} as const;

/**
 * The checks level from which each engine flag that uses the network has an effect; the others (--refuse,
 * --no-provider-rules, and --allow-private-addresses, which also governs address literals) act at every level.
 * Sources: src/engine/stages.ts (`checks === 'syntax'` stops before DNS; SMTP only at `smtp`) and
 * src/engine/verifier.ts (no SMTP prober below `smtp`; DNS timeouts are transient results, so passes and quality
 * count from `dns`).
 */
const NETWORK_FLAG_LEVELS: Readonly<Record<string, Exclude<Checks, 'syntax'>>> = {
  'dns-server': 'dns',
  'dns-timeout': 'dns',
  quality: 'dns',
  passes: 'dns',
  'pass-delay': 'dns',
  'smtp-port': 'smtp',
  'helo-name': 'smtp',
  'mail-from': 'smtp',
  'max-connections': 'smtp',
  'smtp-proxy': 'smtp',
  'smtp-proxy-file': 'smtp',
  'smtp-local-address': 'smtp',
  'smtp-egress-file': 'smtp',
  'smtp-providers-file': 'smtp',
  evidence: 'dns',
};

const LEVEL_ORDER: readonly Checks[] = ['syntax', 'dns', 'smtp'];

/**
 * A warning for engine flags given that have no effect at this checks level (`--dns-server` with `--checks syntax`
 * would otherwise pass silently, the run reporting well-formed addresses Deliverable); undefined when all apply.
 */
export function ineffectiveFlagsWarning(values: EngineFlagValues, checks: Checks): string | undefined {
  const level = LEVEL_ORDER.indexOf(checks);
  const given = Object.keys(NETWORK_FLAG_LEVELS).filter(
    (flag) => values[flag as keyof EngineFlagValues] !== undefined && LEVEL_ORDER.indexOf(NETWORK_FLAG_LEVELS[flag]!) > level,
  );
  if (given.length === 0) return undefined;
  const names = given.map((flag) => `--${flag}`);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  const why = checks === 'syntax' ? 'which uses no network' : 'which probes no mailbox';
  const fix = checks === 'syntax' ? '--checks dns or --checks smtp' : '--checks smtp';
  return `warning: ${list} ${names.length === 1 ? 'has' : 'have'} no effect with --checks ${checks}, ${why}; add ${fix} to use ${names.length === 1 ? 'it' : 'them'}`;
}

/** `--refuse FORM`: the syntax policy option each form turns off (docs/syntax.md#policy-options). */
export const REFUSABLE = {
  quoted: 'allowQuotedLocalPart',
  literal: 'allowAddressLiteral',
  international: 'allowInternationalLocalPart',
} as const;

export interface EngineFlagValues extends EgressFlagValues {
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
  overrides?: string;
  'smtp-providers-file'?: string;
  /** `check`'s own (what DNS and SMTP saw), listed here for the checks-level warning. */
  evidence?: boolean;
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
  for (const server of values['dns-server'] ?? []) {
    try {
      parseServers([server]);
    } catch {
      throw new UsageError(`--dns-server must be an IP address with an optional port (9.9.9.9, [2620:fe::fe]:53), got ${server}`);
    }
  }
  return {
    syntax,
    dns: { servers: values['dns-server'], timeoutMs: wholeNumber(values['dns-timeout'], '--dns-timeout', 1) },
    passes: wholeNumber(values.passes, '--passes', 1),
    passDelayMs: wholeNumber(values['pass-delay'], '--pass-delay', 0),
    heloName: values['helo-name'],
    mailFrom: values['mail-from'],
    quality,
    allowPrivateAddresses: values['allow-private-addresses'] === true,
    smtp: {
      port: smtpPort,
      maxConnections: wholeNumber(values['max-connections'], '--max-connections', 1),
      egress: usage(() => egressOfFlags(values)),
      providers: usage(() => providersOfFlag(values['smtp-providers-file'])),
    },
    ...(values.overrides !== undefined && { overrides: overrideRulesOf(values.overrides) }),
  };
}

/** `--overrides FILE`: a JSON array of override rules, checked (a malformed rule is a usage error naming it). */
function overrideRulesOf(file: string): OverrideRule[] {
  let rules: unknown;
  try {
    rules = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = error instanceof SyntaxError ? `is not JSON: ${error.message}` : `cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
    throw new UsageError(`--overrides ${file} ${reason}`);
  }
  return usage(() => checkOverrideRules(rules, `--overrides ${file}: overrides`));
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

/** `--smtp-providers-file FILE`: a JSON array of provider profiles, or undefined without the flag. */
function providersOfFlag(file: string | undefined) {
  if (file === undefined) return undefined;
  try {
    return providersFile(file);
  } catch (error) {
    if (error instanceof EgressOptionError) throw new EgressOptionError(`--smtp-providers-file: ${error.message}`);
    throw error;
  }
}
