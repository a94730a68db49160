/**
 * The egress options of the commands (`check`, `doctor`, `serve`, `worker`): `--smtp-proxy URL`, `--smtp-proxy-file
 * FILE` and `--smtp-local-address ADDRESS` make the one egress `default`; `--smtp-egress-file FILE` (and the config
 * key `smtpEgress`) give a JSON array of egresses (docs/egress.md). A proxy URL's password never appears in an error.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { checkEgresses, DEFAULT_EGRESS_ID, parseSocksUrl, type SmtpEgress } from '../smtp/egress/egresses.js';
import { checkProviderProfiles, type ProviderProfile } from '../smtp/egress/providers.js';

/**
 * An egress option that cannot be used. The message is the reason alone, for the caller to put after the option's
 * source (`--smtp-proxy: ...`, `mailverify.json: smtpEgress[1].id ...`); it never holds a password.
 */
export class EgressOptionError extends Error {}

/** A proxy URL (`--smtp-proxy`, or the content of `--smtp-proxy-file`): the egress `default` through that proxy. */
export function proxyEgress(url: string): SmtpEgress[] {
  try {
    parseSocksUrl(url);
  } catch (error) {
    throw new EgressOptionError((error as Error).message);
  }
  return [{ id: DEFAULT_EGRESS_ID, proxy: url }];
}

/** The proxy URL held in a file (surrounding white space dropped), so that its password is not in the process list. */
export function proxyUrlFromFile(file: string): string {
  let content: string;
  try {
    content = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new EgressOptionError(`${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (content === '') throw new EgressOptionError(`${file} is empty`);
  return content;
}

/** A source address (`--smtp-local-address`): the egress `default` from it. */
export function localAddressEgress(address: string): SmtpEgress[] {
  if (isIP(address) === 0) throw new EgressOptionError(`must be an IP address, got ${address}`);
  return [{ id: DEFAULT_EGRESS_ID, localAddress: address }];
}

/**
 * Egresses given as JSON (the config key `smtpEgress`, a file's content), checked as the engine checks them; `name`
 * starts the reasons (`[1].proxy: ...` when empty).
 */
export function egressList(value: unknown, name = ''): SmtpEgress[] {
  try {
    const egresses = checkEgresses(value, name);
    if (egresses.length === 0) throw new TypeError(`${name === '' ? 'the list' : name} holds no egress`);
    return egresses;
  } catch (error) {
    throw new EgressOptionError((error as Error).message);
  }
}

/** A file holding a JSON array of egresses (`--smtp-egress-file`). */
export function egressFile(file: string): SmtpEgress[] {
  return egressList(readJson(file), file);
}

/** Provider profiles given as JSON (the config key `smtpProviders`, a file's content), checked as the engine checks them. */
export function providerList(value: unknown, name = ''): ProviderProfile[] {
  try {
    return checkProviderProfiles(value, name);
  } catch (error) {
    throw new EgressOptionError((error as Error).message);
  }
}

/** A file holding a JSON array of provider profiles (`--smtp-providers-file`). */
export function providersFile(file: string): ProviderProfile[] {
  return providerList(readJson(file), file);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = error instanceof SyntaxError ? `is not JSON: ${error.message}` : `cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
    throw new EgressOptionError(`${file} ${reason}`);
  }
}

/** The four flags' values, as `check` and `doctor` parse them. */
export interface EgressFlagValues {
  'smtp-proxy'?: string;
  'smtp-proxy-file'?: string;
  'smtp-local-address'?: string;
  'smtp-egress-file'?: string;
}

export const EGRESS_FLAGS = {
  'smtp-proxy': { type: 'string' },
  'smtp-proxy-file': { type: 'string' },
  'smtp-local-address': { type: 'string' },
  'smtp-egress-file': { type: 'string' },
} as const;

/** The egresses the flags give, or undefined without any; more than one of them is an error. */
export function egressOfFlags(values: EgressFlagValues): SmtpEgress[] | undefined {
  const given = (Object.keys(EGRESS_FLAGS) as (keyof EgressFlagValues)[]).filter((flag) => values[flag] !== undefined);
  if (given.length > 1) throw new EgressOptionError(`--${given[0]} and --${given[1]} both set the egress: give one of them`);
  const flag = given[0];
  if (flag === undefined) return undefined;
  const value = values[flag]!;
  try {
    if (flag === 'smtp-proxy') return proxyEgress(value);
    if (flag === 'smtp-proxy-file') return proxyEgress(proxyUrlFromFile(value));
    if (flag === 'smtp-local-address') return localAddressEgress(value);
    return egressFile(value);
  } catch (error) {
    if (error instanceof EgressOptionError) throw new EgressOptionError(`--${flag}${flag === 'smtp-local-address' ? ' ' : ': '}${error.message}`);
    throw error;
  }
}
