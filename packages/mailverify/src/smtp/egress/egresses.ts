/**
 * Egresses: the ways out a prober's connections take. Each is the system's route from a source
 * address of the host's (`localAddress`), or a SOCKS5 proxy (`proxy`, RFC 1928 with RFC 1929 user/password), with its
 * own identity (EHLO name, envelope sender) and connection cap. Without any there is one implicit egress, `default`.
 *
 * A proxy's password is a secret: it is kept apart from the URL as soon as the URL is read, and nothing here (errors
 * included) ever shows it; `shown` is the URL without it.
 */
import { isIP } from 'node:net';
import { isHeloName, isMailFrom } from '../identity.js';

/** An egress as it is given (engine option `smtp.egress`, a file of `--smtp-egress-file`, the config key `smtpEgress`). */
export interface SmtpEgress {
  /** 1–64 characters of `[A-Za-z0-9._-]`, unique among the egresses. */
  readonly id: string;
  /** The source address of its connections (an IP address the host can bind). */
  readonly localAddress?: string;
  /** `socks5://[user[:password]@]host[:port]` (port 1080 by default; user and password percent-encoded). */
  readonly proxy?: string;
  /** The EHLO name of its sessions (default the verifier's). */
  readonly heloName?: string;
  /** The envelope sender of its sessions (default the verifier's). */
  readonly mailFrom?: string;
  /** Connections open through it at once (default the verifier's total). */
  readonly maxConnections?: number;
  /** The address exchangers see it come from, when the host cannot tell (behind NAT, a proxy); for the doctor. */
  readonly publicAddress?: string;
}

/** A SOCKS5 proxy as read from its URL. */
export interface SocksProxy {
  readonly host: string;
  readonly port: number;
  readonly username?: string;
  readonly password?: string;
  /** The URL without its password, to be shown (logs, warnings, the doctor). */
  readonly shown: string;
}

/** An egress checked and with its defaults, as the prober uses it. */
export interface Egress {
  readonly id: string;
  readonly localAddress?: string;
  readonly proxy?: SocksProxy;
  readonly heloName: string;
  readonly mailFrom: string;
  readonly maxConnections: number;
  readonly publicAddress?: string;
}

export const DEFAULT_EGRESS_ID = 'default';

/** What a transport needs of an egress to open a connection by it: its id, and its source address or proxy. */
export function routeOf(egress: Egress): Pick<Egress, 'id' | 'localAddress' | 'proxy'> {
  return { id: egress.id, ...(egress.localAddress !== undefined && { localAddress: egress.localAddress }), ...(egress.proxy !== undefined && { proxy: egress.proxy }) };
}

const EGRESS_ID = /^[A-Za-z0-9._-]{1,64}$/;
const SOCKS_DEFAULT_PORT = 1080;
const EGRESS_KEYS = new Set(['id', 'localAddress', 'proxy', 'heloName', 'mailFrom', 'maxConnections', 'publicAddress']);

/** A proxy URL that cannot be used; its message names the problem, never the URL's password. */
export class ProxyUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProxyUrlError';
  }
}

/** Reads a SOCKS5 URL. Throws a `ProxyUrlError` whose message holds no part of the URL's user information. */
export function parseSocksUrl(text: string): SocksProxy {
  if (typeof text !== 'string' || text.length === 0) throw new ProxyUrlError('a proxy must be a socks5:// URL');
  if (/[\u0000-\u001f\u007f\s]/u.test(text)) throw new ProxyUrlError('a proxy URL holds white space or a control character');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // WHATWG URL's own error holds the whole input, password included: not passed on.
    throw new ProxyUrlError(`a proxy must be a URL of the form socks5://[user[:password]@]host[:port], and ${showUrl(text)} is not one`);
  }
  if (url.protocol !== 'socks5:') throw new ProxyUrlError(`a proxy URL must begin with socks5://, not ${url.protocol}//`);
  if (url.hostname === '') throw new ProxyUrlError(`the proxy URL ${showUrl(text)} names no host`);
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    throw new ProxyUrlError(`the proxy URL ${showUrl(text)} has a path, query or fragment; it takes only socks5://[user[:password]@]host[:port]`);
  }
  // A non-special scheme's URL keeps an explicit port as written (digits, at most 65535); 0 connects nowhere.
  const port = url.port === '' ? SOCKS_DEFAULT_PORT : Number(url.port);
  if (port === 0) throw new ProxyUrlError(`the proxy URL ${showUrl(text)} has port 0`);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let username: string | undefined;
  let password: string | undefined;
  try {
    username = url.username === '' ? undefined : decodeURIComponent(url.username);
    password = url.password === '' ? undefined : decodeURIComponent(url.password);
  } catch {
    throw new ProxyUrlError(`the user or password of the proxy URL ${showUrl(text)} is not percent-encoded UTF-8`);
  }
  // RFC 1929 §2: user and password are 1–255 bytes each.
  if (username !== undefined && Buffer.byteLength(username) > 255) throw new ProxyUrlError('a proxy user is at most 255 bytes (RFC 1929)');
  if (password !== undefined && Buffer.byteLength(password) > 255) throw new ProxyUrlError('a proxy password is at most 255 bytes (RFC 1929)');
  if (password !== undefined && username === undefined) throw new ProxyUrlError(`the proxy URL ${showUrl(text)} has a password but no user`);
  const shown = `socks5://${username === undefined ? '' : `${url.username}@`}${url.host}${url.port === '' ? `:${SOCKS_DEFAULT_PORT}` : ''}`;
  return { host, port, ...(username !== undefined && { username }), ...(password !== undefined && { password }), shown };
}

/**
 * A URL as it may be shown: whatever stands between `//` and the last `@` is cut to the user alone (a password may
 * hold an unencoded `/` or `@`), and a text that does not look like a URL is not shown at all.
 */
export function showUrl(text: string): string {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)(.*)$/su.exec(text);
  if (scheme === null) return '(a text that is not a URL)';
  const rest = scheme[2]!;
  const at = rest.lastIndexOf('@');
  if (at === -1) return JSON.stringify(text);
  const user = rest.slice(0, at).split(/[:/?#]/u)[0]!;
  return JSON.stringify(`${scheme[1]}${user}@${rest.slice(at + 1)}`);
}

/** The defaults an egress takes from its verifier. */
export interface EgressDefaults {
  readonly heloName: string;
  readonly mailFrom: string;
  readonly maxConnections: number;
}

/**
 * Checks the egresses given as `name` (e.g. `createVerifier: option smtp.egress`) and gives them their defaults.
 * An empty or missing list is the one implicit egress `default`. A malformed egress is a `TypeError` naming the
 * field (`...smtp.egress[1].proxy: ...`); no message holds a proxy's password.
 */
export function readEgresses(value: unknown, defaults: EgressDefaults, name: string): Egress[] {
  const given = checkedEgresses(value, name);
  if (given.length === 0) return [defaultEgress(defaults)];
  return given.map(({ egress, proxy }) => ({
    id: egress.id,
    ...(egress.localAddress !== undefined && { localAddress: egress.localAddress }),
    ...(proxy !== undefined && { proxy }),
    heloName: egress.heloName ?? defaults.heloName,
    mailFrom: egress.mailFrom ?? defaults.mailFrom,
    maxConnections: egress.maxConnections ?? defaults.maxConnections,
    ...(egress.publicAddress !== undefined && { publicAddress: egress.publicAddress }),
  }));
}

/** Checks egresses as `readEgresses` does, and gives them back as given (for options passed on to a verifier later). */
export function checkEgresses(value: unknown, name: string): SmtpEgress[] {
  return checkedEgresses(value, name).map(({ egress }) => egress);
}

function checkedEgresses(value: unknown, name: string): { egress: SmtpEgress; proxy?: SocksProxy }[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`${name} must be an array of egresses, got ${typeof value}`);
  const seen = new Set<string>();
  return value.map((given: unknown, index) => {
    const at = `${name}[${index}]`;
    if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new TypeError(`${at} must be an object, got ${describeValue(given)}`);
    const egress = given as Record<string, unknown>;
    for (const key of Object.keys(egress)) {
      if (!EGRESS_KEYS.has(key)) throw new TypeError(`${at} has an unknown key ${JSON.stringify(key)}`);
    }
    const { id } = egress;
    if (typeof id !== 'string' || !EGRESS_ID.test(id)) throw new TypeError(`${at}.id must be 1–64 characters of A-Z a-z 0-9 . _ -, got ${describeValue(id)}`);
    if (seen.has(id)) throw new TypeError(`${at}.id ${JSON.stringify(id)} is the id of an egress before it`);
    seen.add(id);
    if (egress.localAddress !== undefined && egress.proxy !== undefined) {
      throw new TypeError(`${at} has both localAddress and proxy: an egress is one or the other`);
    }
    for (const key of ['localAddress', 'publicAddress'] as const) {
      const address = egress[key];
      if (address !== undefined && (typeof address !== 'string' || isIP(address) === 0)) {
        throw new TypeError(`${at}.${key} must be an IP address, got ${describeValue(address)}`);
      }
    }
    let proxy: SocksProxy | undefined;
    if (egress.proxy !== undefined) {
      if (typeof egress.proxy !== 'string') throw new TypeError(`${at}.proxy must be a socks5:// URL, got ${typeof egress.proxy}`);
      try {
        proxy = parseSocksUrl(egress.proxy);
      } catch (error) {
        throw new TypeError(`${at}.proxy: ${(error as Error).message}`);
      }
    }
    if (egress.heloName !== undefined && !isHeloName(egress.heloName)) {
      throw new TypeError(`${at}.heloName must be a host name (printable ASCII, no spaces), got ${describeValue(egress.heloName)}`);
    }
    if (egress.mailFrom !== undefined && !isMailFrom(egress.mailFrom)) {
      throw new TypeError(`${at}.mailFrom must be an address (local@domain), got ${describeValue(egress.mailFrom)}`);
    }
    const { maxConnections } = egress;
    if (maxConnections !== undefined && !(Number.isInteger(maxConnections) && (maxConnections as number) > 0)) {
      throw new TypeError(`${at}.maxConnections must be a whole number from 1, got ${describeValue(maxConnections)}`);
    }
    return { egress: egress as unknown as SmtpEgress, ...(proxy !== undefined && { proxy }) };
  });
}

function defaultEgress(defaults: EgressDefaults): Egress {
  return { id: DEFAULT_EGRESS_ID, heloName: defaults.heloName, mailFrom: defaults.mailFrom, maxConnections: defaults.maxConnections };
}

/** A value as an option's error shows it: a string quoted and cut at 80 characters, else its kind. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : typeof value;
}
