/**
 * Every option of `mailverify serve`, defined once in SERVE_OPTIONS: one row per option with its flag, environment
 * variable, config file key, type, default, description and the server option it sets. From the table come the
 * `serve` flags (parseArgs), the `MAILVERIFY_*` variables, the keys of the JSON config file (`--config`), `serve
 * --help` and the reference table of docs/options.md (`npm run docs:options`), so that none of them can drift from the code.
 *
 * Precedence: a flag, else its environment variable, else the config file's key, else the default. A bad value is a
 * usage error that names where it came from (`--port`, `MAILVERIFY_PORT`, `mailverify.json: port`); an unknown key
 * of the config file is one too, with the key that was probably meant. Secrets are never printed.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { DEFAULT_SITEVERIFY_URLS, isHttpUrl } from '../accounts/captcha.js';
import {
  EgressOptionError,
  QUALITIES,
  REFUSABLE,
  STATUS_CODES,
  UsageError,
  checkOverrideRules,
  closestName,
  egressFile,
  egressList,
  findQuality,
  isStatusCode,
  localAddressEgress,
  parseFlags,
  parseServers,
  providerList,
  providersFile,
  proxyEgress,
  proxyUrlFromFile,
  qualityName,
  type OverrideRule,
  type ProviderProfile,
  type SmtpEgress,
} from 'mailverify/internal';
import { checkQualityLevels, type CustomQualityLevel } from '../server/quality-levels.js';
import { DEFAULT_CALLBACK_TIMEOUT_MS } from '../jobs/callbacks.js';
import { MAX_OVERRIDE_RULES } from '../jobs/overrides.js';
import { formatDuration, parseDuration } from '../jobs/duration.js';
import type { StandaloneOptions } from '../server/app.js';
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_BODY_RATE_GRACE_MS,
  DEFAULT_BURST,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_LEGACY_IN_FLIGHT,
  DEFAULT_RATE_PER_SECOND,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_DATA_DIR,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  DEFAULT_MAX_ENTRIES_PER_JOB,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MIN_BODY_RATE,
  DEFAULT_MAX_INFLATED_BYTES,
  DEFAULT_MAX_SPREADSHEET_READERS,
  DEFAULT_MAX_XLS_BYTES,
  DEFAULT_RETENTION_MS,
  DEFAULT_SPREADSHEET_HEAP_MB,
  DEFAULT_SPREADSHEET_TIMEOUT_MS,
  DEFAULT_TOKEN_LIFETIME_MS,
} from '../server/defaults.js';
import { MAX_RETENTION_MS, MIN_RETENTION_MS } from '../server/submission.js';
import { DEFAULT_UNIT_PRICES, MAX_CREDITS, toMicro } from '../accounts/credits.js';

/**
 * A value a kind cannot read. `reason` replaces "must be <expected>, got <value>" when given (a file that cannot be
 * read); `part` names the item of a list that is wrong, with what an item must be.
 */
class BadValue extends Error {
  constructor(
    readonly reason?: string,
    readonly part?: { readonly expected: string; readonly value: unknown },
    /** The reason goes right after the key, without a space: it names a part of the value (`[1].passes must be ...`). */
    readonly attached?: true,
  ) {
    super(reason);
  }
}

/** How a type of value is read from a flag or variable (text) and from the config file (JSON), and written. */
export interface Kind<T> {
  /** The type in words: "a whole number from 0 to 65535". */
  readonly expected: string;
  /** A flag without a value (`--allow-private-addresses`). */
  readonly switch?: true;
  /** The flag may be repeated; its values are read as one comma-separated list. */
  readonly repeatable?: true;
  fromText(text: string): T;
  /** `base`: the config file's folder, against which relative paths are resolved. */
  fromJson(value: unknown, base: string): T;
  show(value: T): string;
}

const text: Kind<string> = {
  expected: 'a non-empty string',
  fromText: (value) => (value === '' ? fail() : value),
  fromJson: (value) => (typeof value === 'string' && value !== '' ? value : fail()),
  show: (value) => value,
};

/** A path: relative to the working folder in a flag or variable, to the config file's folder in the file. */
const path: Kind<string> = { ...text, expected: 'a path', fromJson: (value, base) => resolve(base, text.fromJson(value, base)) };

/** A file's content, read at start (PEM files, secrets); a final line break is dropped. */
const fileContent: Kind<string> = {
  expected: 'a readable file',
  fromText: (file) => readContent(path.fromText(file)),
  fromJson: (file, base) => readContent(path.fromJson(file, base)),
  show: () => '',
};

function readContent(file: string): string {
  let content: string;
  try {
    content = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new BadValue(`cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message} (${file})`);
  }
  if (content === '') throw new BadValue(`is an empty file (${file})`);
  return content;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * CA certificates (PEM), one or more, read at start. Each must parse and be a CA: TLS would take a wrong file (a
 * client's own certificate, a key) without a word and then verify no client at all.
 */
const caCertificates: Kind<string> = {
  ...fileContent,
  expected: 'a PEM file of CA certificates',
  fromText: (file) => checkCaCertificates(fileContent.fromText(file), file),
  fromJson: (file, base) => checkCaCertificates(fileContent.fromJson(file, base), path.fromJson(file, base)),
};

function checkCaCertificates(pem: string, file: string): string {
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) throw new BadValue(`holds no PEM certificate (${file})`);
  for (const [block, label] of blocks) {
    if (label !== 'CERTIFICATE') throw new BadValue(`must hold only certificates, not a ${label} (${file})`);
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(block);
    } catch {
      throw new BadValue(`holds a certificate that cannot be read (${file})`);
    }
    // RFC 5280 §4.2.1.9: only a certificate whose basic constraints say CA may sign others.
    if (!certificate.ca) throw new BadValue(`holds a certificate that is not a CA (${certificate.subject.replaceAll('\n', ', ')}) (${file})`);
  }
  return pem;
}

function choice<T extends string>(values: readonly T[]): Kind<T> {
  const read = (value: unknown): T => (values.includes(value as T) ? (value as T) : fail());
  return { expected: `one of ${values.join(', ')}`, fromText: read, fromJson: read, show: (value) => value };
}

function integer(min: number, max = Number.MAX_SAFE_INTEGER, what = 'a whole number'): Kind<number> {
  const read = (value: unknown): number => (Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max ? (value as number) : fail());
  return {
    expected: max === Number.MAX_SAFE_INTEGER ? `${what} from ${min}` : `${what} from ${min} to ${max}`,
    fromText: (value) => read(/^\d+$/.test(value) ? Number(value) : NaN),
    fromJson: read,
    show: (value) => String(value),
  };
}

const TRUE = ['true', '1', 'yes'];
const FALSE = ['false', '0', 'no'];
const boolean: Kind<boolean> = {
  expected: 'true or false',
  switch: true,
  fromText: (value) => (TRUE.includes(value.toLowerCase()) ? true : FALSE.includes(value.toLowerCase()) ? false : fail()),
  fromJson: (value) => (typeof value === 'boolean' ? value : fail()),
  show: (value) => String(value),
};

const UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };
/** A size in bytes: a whole number, or one with a unit (`64MiB`, `512 KiB`, `1GiB`). */
const bytes: Kind<number> = {
  expected: 'a size: bytes, or a whole number with KiB, MiB or GiB',
  fromText: (value) => {
    const match = /^(\d+)\s*([a-z]*)$/i.exec(value.trim());
    const unit = UNITS[match?.[2]?.toLowerCase() ?? 'none'];
    const size = match === null || unit === undefined ? NaN : Number(match[1]) * unit;
    return Number.isSafeInteger(size) && size > 0 ? size : fail();
  },
  fromJson: (value) => (typeof value === 'string' || (Number.isSafeInteger(value) && (value as number) > 0) ? bytes.fromText(String(value)) : fail()),
  show: (value) => {
    const unit = ['GiB', 'MiB', 'KiB'].find((name) => value % UNITS[name.toLowerCase()]! === 0);
    return unit === undefined ? String(value) : `${value / UNITS[unit.toLowerCase()]!} ${unit}`;
  },
};

/** A duration as the service writes them (src/jobs/duration.ts): `[d.]hh:mm:ss`, from `min` to `max`. */
function duration(min: number, max: number): Kind<number> {
  const read = (value: unknown): number => {
    const ms = typeof value === 'string' ? parseDuration(value) : null;
    return ms !== null && ms >= min && ms <= max ? ms : fail();
  };
  return { expected: `a duration [d.]hh:mm:ss from ${formatDuration(min)} to ${formatDuration(max)}`, fromText: read, fromJson: read, show: formatDuration };
}

/** Several values: repeated flags, a comma-separated variable, a JSON array. */
function list<T>(item: Kind<T>, expected: string): Kind<T[]> {
  return {
    expected,
    repeatable: true,
    fromText: (value) => value.split(',').map((part) => part.trim()).filter((part) => part !== '').map((part) => itemOf(item, part, () => item.fromText(part))),
    fromJson: (value, base) => (Array.isArray(value) ? value.map((part) => itemOf(item, part, () => item.fromJson(part, base))) : fail()),
    show: (values) => values.map((value) => item.show(value)).join(', '),
  };
}

/** An item of a list, read by `read`; a bad one names itself. */
function itemOf<T>(item: Kind<T>, part: unknown, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof BadValue && error.reason === undefined) throw new BadValue(undefined, { expected: item.expected, value: part });
    throw error;
  }
}

/** An absolute http or https URL. */
const httpUrl: Kind<string> = {
  ...text,
  expected: 'an absolute http or https URL',
  fromText: (value) => (isHttpUrl(value) ? value : fail()),
  fromJson: (value) => (typeof value === 'string' ? httpUrl.fromText(value) : fail()),
};

/**
 * A URL of one of `protocols`. It may hold a password: never echoed (an error names the source and what was expected),
 * and shown without it.
 */
function serviceUrl(protocols: readonly string[], expected: string): Kind<string> {
  const check = (value: string): string => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new BadValue(`must be ${expected}`);
    }
    if (!protocols.includes(url.protocol) || url.hostname === '') throw new BadValue(`must be ${expected}`);
    return value;
  };
  return {
    expected,
    fromText: check,
    fromJson: (value) => (typeof value === 'string' ? check(value) : fail()),
    show: (value) => {
      const url = new URL(value);
      if (url.password !== '') url.password = '***';
      return url.href;
    },
  };
}

const postgresUrl = serviceUrl(['postgres:', 'postgresql:'], 'a PostgreSQL URL (postgres://user:password@host:port/database)');
const redisUrl = serviceUrl(['redis:', 'rediss:'], 'a Redis URL (redis://[user:password@]host:port[/db], rediss:// for TLS)');

/** A DNS server, `ip` or `ip:port` (`[ipv6]:port`), as the resolver reads it. */
const dnsServer: Kind<string> = {
  ...text,
  expected: 'an IP address with an optional port (9.9.9.9, [2620:fe::fe]:53)',
  fromText: (value) => {
    try {
      parseServers([value]);
      return value;
    } catch {
      return fail();
    }
  },
  fromJson: (value) => (typeof value === 'string' ? dnsServer.fromText(value) : fail()),
};

/** Names of ranges proxy-addr knows (Fastify's trustProxy), besides addresses and CIDR ranges. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
type TrustProxy = boolean | number | string[];

/** Fastify's trustProxy: true (every proxy), a hop count, or the proxies' addresses and CIDR ranges. */
const trustProxy: Kind<TrustProxy> = {
  expected: 'true, false, a hop count, or addresses and CIDR ranges (comma-separated)',
  fromText: (value) => {
    if (/^\d+$/.test(value)) return integer(1, 100).fromText(value);
    if (TRUE.includes(value) || FALSE.includes(value)) return boolean.fromText(value);
    const proxies = value.split(',').map((part) => part.trim());
    return proxies.every(isProxyRange) ? proxies : fail();
  },
  fromJson: (value) => {
    if (typeof value === 'boolean') return value;
    if (typeof value === 'number') return integer(1, 100).fromJson(value, '');
    if (typeof value === 'string') return trustProxy.fromText(value);
    return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string' && isProxyRange(item)) ? value : fail();
  },
  show: (value) => (Array.isArray(value) ? value.join(',') : String(value)),
};

function isProxyRange(range: string): boolean {
  if (PROXY_RANGE_NAMES.includes(range)) return true;
  const [address = '', prefix, ...rest] = range.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/** An amount of credits as given (decimals allowed, at most six places, never rounded). */
const creditAmount: Kind<number> = {
  expected: `a number of credits from 0 to ${MAX_CREDITS}, decimals allowed (at most six places)`,
  fromText: (value) => (/^\d+(\.\d+)?$/.test(value) && toMicro(value) !== null ? Number(value) : fail()),
  fromJson: (value) => (typeof value === 'number' && toMicro(value) !== null ? value : fail()),
  show: (value) => String(value),
};

/** A rate per second: a positive number, decimals allowed (at most a million). */
const rate: Kind<number> = {
  expected: 'a number above 0 and at most 1000000, decimals allowed',
  fromText: (value) => (/^\d+(\.\d+)?$/.test(value) ? rate.fromJson(Number(value), '') : fail()),
  fromJson: (value) => (typeof value === 'number' && value > 0 && value <= 1_000_000 ? value : fail()),
  show: (value) => String(value),
};

/** Config file only: a JSON value has no text form. */
const noText = (): never => fail();

/** Override rules, in the config file only (a JSON array of { match, classification }): checked as the engine does. */
const overrideRules: Kind<OverrideRule[]> = {
  expected: `a JSON array of at most ${MAX_OVERRIDE_RULES} { match, classification } rules (config file only)`,
  fromText: noText,
  fromJson: (value) => {
    let rules: OverrideRule[];
    try {
      rules = checkOverrideRules(value, '');
    } catch (error) {
      if (error instanceof TypeError) throw new BadValue(error.message, undefined, true);
      throw error;
    }
    if (rules.length > MAX_OVERRIDE_RULES) throw new BadValue(`has ${rules.length} rules, more than ${MAX_OVERRIDE_RULES}`);
    return rules;
  },
  show: (rules) => `${rules.length} rule${rules.length === 1 ? '' : 's'}`,
};

/**
 * An egress option's value (packages/mailverify/src/cli/egress-options.ts reads it); a bad one is its reason after the
 * source, `: ` put between when `colon` (a proxy's reason is a sentence of its own).
 */
function egressKind(expected: string, readText: (text: string) => SmtpEgress[], colon: boolean, isPath = false): Kind<SmtpEgress[]> {
  const read = (text: string): SmtpEgress[] => {
    try {
      return readText(text);
    } catch (error) {
      if (error instanceof EgressOptionError) throw colon ? new BadValue(`: ${error.message}`, undefined, true) : new BadValue(error.message);
      throw error;
    }
  };
  return {
    expected,
    fromText: (value) => (value === '' ? fail() : read(value)),
    fromJson: (value, base) => (typeof value === 'string' && value !== '' ? read(isPath ? resolve(base, value) : value) : fail()),
    show: (egresses) => egresses.map((egress) => egress.id).join(', '),
  };
}

const socksProxy = egressKind('a socks5:// URL', proxyEgress, true);
const socksProxyFile = egressKind('a readable file holding a socks5:// URL', (file) => proxyEgress(proxyUrlFromFile(file)), true, true);
const sourceAddress = egressKind('an IP address', localAddressEgress, false);
const egressesFile = egressKind('a JSON file of an array of egresses', egressFile, false, true);

/** Egresses in the config file (a JSON array), checked as the engine checks them. */
const egresses: Kind<SmtpEgress[]> = {
  expected: 'an array of egresses { id, localAddress or proxy, heloName, mailFrom, maxConnections, publicAddress } (config file only)',
  fromText: noText,
  fromJson: (value) => {
    try {
      return egressList(value);
    } catch (error) {
      if (error instanceof EgressOptionError) throw new BadValue(error.message.startsWith('[') ? error.message : ` ${error.message}`, undefined, true);
      throw error;
    }
  },
  show: (list) => list.map((egress) => egress.id).join(', '),
};

/** Provider profiles: a JSON file of them (`file`; a path in the config file too), or the array itself (config file). */
function providersKind(file: boolean): Kind<ProviderProfile[]> {
  const read = (get: () => ProviderProfile[]): ProviderProfile[] => {
    try {
      return get();
    } catch (error) {
      if (error instanceof EgressOptionError) throw new BadValue(error.message.startsWith('[') ? error.message : `: ${error.message}`, undefined, true);
      throw error;
    }
  };
  return {
    expected: file ? 'a JSON file of an array of provider profiles' : 'an array of provider profiles { id, match, egress, maxConnectionsPerEgress, recipientsPerMinute, recipientsPerDay } (config file only)',
    fromText: file ? (path) => read(() => providersFile(path)) : noText,
    fromJson: (value, base) => {
      if (!file) return read(() => providerList(value));
      return typeof value === 'string' && value !== '' ? read(() => providersFile(resolve(base, value))) : fail();
    },
    show: (profiles) => profiles.map((profile) => profile.id).join(', '),
  };
}

/** Custom quality levels (JSON only), checked as createServer checks them; a bad one names its item and field. */
const qualityLevels: Kind<CustomQualityLevel[]> = {
  expected: 'an array of quality levels { id, displayName, passes, passDelay, connectTimeout, commandTimeout, unitPrice }',
  fromText: noText,
  fromJson: (value) => {
    try {
      return checkQualityLevels(value, '');
    } catch (error) {
      if (error instanceof TypeError) throw new BadValue(error.message, undefined, true);
      throw error;
    }
  },
  show: (levels) => levels.map((level) => level.id).join(', '),
};

/** Classification names by status code (JSON only), checked as createVerifier checks its classifications option. */
const classifications: Kind<Record<string, string>> = {
  expected: 'an object mapping status codes to classification names',
  fromText: noText,
  fromJson: (value) => {
    if (!isPlainObject(value)) return fail();
    for (const [status, name] of Object.entries(value)) {
      if (!isStatusCode(status)) {
        const near = closestName(status, STATUS_CODES);
        throw new BadValue(` has ${JSON.stringify(status)}, which is not a status code${near === null ? '' : ` (did you mean "${near}"?)`}`, undefined, true);
      }
      if (typeof name !== 'string' || name === '') throw new BadValue(`.${status} must be a non-empty string, got ${JSON.stringify(name)}`, undefined, true);
    }
    return { ...(value as Record<string, string>) };
  },
  show: (value) => Object.entries(value).map(([status, name]) => `${status}: ${name}`).join(', '),
};

/** A quality level's name: checked against the standard names and the custom levels once every option is read. */
const levelName: Kind<string> = { ...text, expected: `${QUALITIES.join(', ')} or the id of one of qualityLevels` };

function fail(): never {
  throw new BadValue();
}

export type Section = 'Configuration' | 'Listening' | 'Access' | 'Jobs' | 'Cluster' | 'Credits' | 'Verification' | 'Callbacks' | 'File import' | 'Logging and monitoring';

/** One option. A row without `flag`, `env` or `key` cannot be set that way. */
export interface ServeOption<T = any> {
  /** The flag without its dashes. */
  readonly flag?: string;
  /** The value a switch flag sets (default true): `--no-provider-rules` sets providerRules to false. */
  readonly flagSets?: T;
  /** The name of the flag's value in the help: `N`, `DIR`. */
  readonly placeholder?: string;
  readonly env?: string;
  /** The key in the config file. */
  readonly key?: string;
  readonly kind: Kind<T>;
  /** Applied when no source gives a value; else `defaultText` tells what the server or the engine does. */
  readonly default?: T;
  readonly defaultText?: string;
  readonly description: string;
  readonly section: Section;
  /** Never printed, not even in an error. */
  readonly secret?: true;
  /**
   * Where the value goes: `server.<path>` in the server's options (StandaloneOptions), `listen.<host|port>`, or
   * `logLevel`. Rows with the same target are alternatives: giving both is an error.
   */
  readonly target: string;
  /** Turns the value into what the target takes. */
  readonly convert?: (value: T) => unknown;
}

/**
 * Every option of `serve`. The server's own defaults come from src/server/defaults.ts, the engine's are its own
 * (createVerifier) and are only described here.
 */
export const SERVE_OPTIONS: readonly ServeOption[] = [
  {
    flag: 'config',
    placeholder: 'FILE',
    env: 'MAILVERIFY_CONFIG',
    kind: path,
    description: 'a JSON file: an object of options by their keys; relative paths in it are read from its folder',
    section: 'Configuration',
    target: 'configFile',
  },
  { flag: 'host', placeholder: 'ADDRESS', env: 'MAILVERIFY_HOST', key: 'host', kind: text, default: '127.0.0.1', description: 'the address to listen on; 0.0.0.0 (or ::) for every interface', section: 'Listening', target: 'listen.host' },
  { flag: 'port', placeholder: 'N', env: 'MAILVERIFY_PORT', key: 'port', kind: integer(0, 65535, 'a TCP port number'), default: 8080, description: 'the port; 0 picks a free one', section: 'Listening', target: 'listen.port' },
  { flag: 'base-path', placeholder: 'PATH', env: 'MAILVERIFY_BASE_PATH', key: 'basePath', kind: text, default: '/', description: 'a path prefix for every route', section: 'Listening', target: 'server.basePath' },
  { flag: 'no-console', flagSets: false, env: 'MAILVERIFY_CONSOLE', key: 'console', kind: boolean, default: true, description: 'the web console at <base-path>/console/, where <base-path>/ redirects (docs/console.md); the flag turns it off, and those paths answer 404', section: 'Listening', target: 'server.console' },
  { flag: 'tls-cert', placeholder: 'FILE', env: 'MAILVERIFY_TLS_CERT', key: 'tlsCert', kind: fileContent, defaultText: 'plain HTTP', description: 'serve HTTPS with this certificate chain (PEM), with --tls-key', section: 'Listening', target: 'server.https.cert' },
  { flag: 'tls-key', placeholder: 'FILE', env: 'MAILVERIFY_TLS_KEY', key: 'tlsKey', kind: fileContent, secret: true, description: 'the private key (PEM) of --tls-cert', section: 'Listening', target: 'server.https.key' },
  {
    flag: 'tls-client-ca',
    placeholder: 'FILE',
    env: 'MAILVERIFY_TLS_CLIENT_CA',
    key: 'tlsClientCa',
    kind: caCertificates,
    defaultText: 'no client certificates',
    description:
      'CA certificates (PEM, one or more): HTTPS clients are asked for a certificate (not required), and one these CAs signed signs in the user whose username is its subject CN, if that user allows certificates; with --tls-cert and --tls-key',
    section: 'Listening',
    target: 'server.https.clientCa',
  },
  {
    flag: 'trust-proxy',
    placeholder: 'PROXIES',
    env: 'MAILVERIFY_TRUST_PROXY',
    key: 'trustProxy',
    kind: trustProxy,
    default: false,
    description:
      "trust the X-Forwarded-For and X-Forwarded-Proto of these proxies (a job's clientIP is then the client's): true for any, a number of hops, or addresses and CIDR ranges, comma-separated (loopback, linklocal and uniquelocal name those ranges)",
    section: 'Listening',
    target: 'server.trustProxy',
  },
  {
    flag: 'rate-limits',
    env: 'MAILVERIFY_RATE_LIMITS',
    key: 'rateLimits',
    kind: boolean,
    default: false,
    description:
      'request rate limits per client IP: 6 requests per second with bursts of 15 under /v2.x, 5 requests in flight under /v1.4; beyond, 429 with Retry-After. Behind a reverse proxy turn it on only with --trust-proxy naming that proxy, or every client shares the proxy\'s address',
    section: 'Listening',
    target: 'server.rateLimits',
    convert: (on: boolean) => (on ? {} : undefined),
  },
  { flag: 'rate-limit-per-second', placeholder: 'N', env: 'MAILVERIFY_RATE_LIMIT_PER_SECOND', key: 'rateLimitPerSecond', kind: rate, defaultText: String(DEFAULT_RATE_PER_SECOND), description: "tokens added to a client IP's bucket each second, for requests under /v2.x (decimals allowed: 0.5 is one every 2 seconds); with --rate-limits", section: 'Listening', target: 'server.rateLimits.perSecond' },
  { flag: 'rate-limit-burst', placeholder: 'N', env: 'MAILVERIFY_RATE_LIMIT_BURST', key: 'rateLimitBurst', kind: integer(1), defaultText: String(DEFAULT_BURST), description: "the most tokens a client IP's bucket holds: the requests under /v2.x an idle client may send at once; with --rate-limits", section: 'Listening', target: 'server.rateLimits.burst' },
  { flag: 'rate-limit-in-flight', placeholder: 'N', env: 'MAILVERIFY_RATE_LIMIT_IN_FLIGHT', key: 'rateLimitInFlight', kind: integer(1), defaultText: String(DEFAULT_LEGACY_IN_FLIGHT), description: 'the most requests of a client IP in flight under /v1.4; with --rate-limits', section: 'Listening', target: 'server.rateLimits.legacyInFlight' },
  { flag: 'max-body-size', placeholder: 'SIZE', env: 'MAILVERIFY_MAX_BODY_SIZE', key: 'maxBodySize', kind: bytes, default: DEFAULT_BODY_LIMIT, description: 'the largest request body; a larger one is 413', section: 'Listening', target: 'server.bodyLimit' },
  { flag: 'request-timeout', placeholder: 'MS', env: 'MAILVERIFY_REQUEST_TIMEOUT', key: 'requestTimeout', kind: integer(1), default: DEFAULT_REQUEST_TIMEOUT_MS, description: 'the time a client has to send a whole request, headers and body, in milliseconds; then 408 and the connection is closed', section: 'Listening', target: 'server.requestTimeoutMs' },
  { flag: 'headers-timeout', placeholder: 'MS', env: 'MAILVERIFY_HEADERS_TIMEOUT', key: 'headersTimeout', kind: integer(1), default: DEFAULT_HEADERS_TIMEOUT_MS, description: 'the time a client has to send the header fields, in milliseconds (at most the request timeout); then 408', section: 'Listening', target: 'server.headersTimeoutMs' },
  { flag: 'idle-timeout', placeholder: 'MS', env: 'MAILVERIFY_IDLE_TIMEOUT', key: 'idleTimeout', kind: integer(1), default: DEFAULT_IDLE_TIMEOUT_MS, description: 'the time a connection may go without a byte read or written (a client that stops reading an export, an idle keep-alive connection) before it is closed, in milliseconds', section: 'Listening', target: 'server.idleTimeoutMs' },
  { flag: 'min-body-rate', placeholder: 'BYTES', env: 'MAILVERIFY_MIN_BODY_RATE', key: 'minBodyRate', kind: integer(0), default: DEFAULT_MIN_BODY_RATE, description: 'the least average rate of a request body in bytes per second once --body-rate-grace has passed; a slower body (one trickled a byte at a time) is answered 408 and its connection closed; 0 for none', section: 'Listening', target: 'server.minBodyRate' },
  { flag: 'body-rate-grace', placeholder: 'MS', env: 'MAILVERIFY_BODY_RATE_GRACE', key: 'bodyRateGrace', kind: integer(0), default: DEFAULT_BODY_RATE_GRACE_MS, description: 'the time a request body has before its rate counts, in milliseconds: by then it needs none of its bytes, then one per 1/rate second', section: 'Listening', target: 'server.bodyRateGraceMs' },
  { flag: 'max-connections-per-address', placeholder: 'N', env: 'MAILVERIFY_MAX_CONNECTIONS_PER_ADDRESS', key: 'maxConnectionsPerAddress', kind: integer(0), default: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS, description: 'the most open connections from one client address; more are closed as they are accepted. The proxies --trust-proxy trusts are not capped (name your reverse proxy there); 0 for no cap', section: 'Listening', target: 'server.maxConnectionsPerAddress' },
  { flag: 'max-client-connections', placeholder: 'N', env: 'MAILVERIFY_MAX_CLIENT_CONNECTIONS', key: 'maxClientConnections', kind: integer(0), defaultText: 'the open-file limit less a tenth of it (at least 256, at most half)', description: 'the most open client connections in all; more are closed as they are accepted, so that the server keeps file descriptors for its store, DNS and SMTP; 0 for no cap', section: 'Listening', target: 'server.maxClientConnections' },

  { flag: 'root-username', placeholder: 'NAME', env: 'MAILVERIFY_ROOT_USERNAME', key: 'rootUsername', kind: text, default: 'root', description: 'the user name of the root account', section: 'Access', target: 'server.rootUsername' },
  { env: 'MAILVERIFY_ROOT_PASSWORD', kind: text, secret: true, description: 'the password of the root account: required (or the file below), there is no default', section: 'Access', target: 'server.rootPassword' },
  { flag: 'root-password-file', placeholder: 'FILE', env: 'MAILVERIFY_ROOT_PASSWORD_FILE', key: 'rootPasswordFile', kind: fileContent, secret: true, description: 'a file holding the root password (a final line break is dropped)', section: 'Access', target: 'server.rootPassword' },
  { env: 'MAILVERIFY_TOKEN_SECRET', kind: text, secret: true, defaultText: 'generated once, kept in the data folder', description: 'the secret that signs bearer tokens and cursors', section: 'Access', target: 'server.tokenSecret' },
  { flag: 'token-secret-file', placeholder: 'FILE', env: 'MAILVERIFY_TOKEN_SECRET_FILE', key: 'tokenSecretFile', kind: fileContent, secret: true, description: 'a file holding that secret', section: 'Access', target: 'server.tokenSecret' },
  { flag: 'token-lifetime', placeholder: 'DURATION', env: 'MAILVERIFY_TOKEN_LIFETIME', key: 'tokenLifetime', kind: duration(1000, MAX_RETENTION_MS), default: DEFAULT_TOKEN_LIFETIME_MS, description: 'how long a bearer token is valid', section: 'Access', target: 'server.tokenLifetimeMs' },
  { flag: 'turnstile-siteverify-url', placeholder: 'URL', env: 'MAILVERIFY_TURNSTILE_SITEVERIFY_URL', key: 'turnstileSiteverifyUrl', kind: httpUrl, default: DEFAULT_SITEVERIFY_URLS.turnstile, description: "where Cloudflare Turnstile tokens of users' submissions are checked (loopback and private addresses allowed: this is your configuration)", section: 'Access', target: 'server.captcha.siteverifyUrls.turnstile' },
  { flag: 'recaptcha-v2-siteverify-url', placeholder: 'URL', env: 'MAILVERIFY_RECAPTCHA_V2_SITEVERIFY_URL', key: 'recaptchaV2SiteverifyUrl', kind: httpUrl, default: DEFAULT_SITEVERIFY_URLS.reCaptchaV2, description: 'where reCAPTCHA v2 tokens are checked', section: 'Access', target: 'server.captcha.siteverifyUrls.reCaptchaV2' },
  { flag: 'recaptcha-v3-siteverify-url', placeholder: 'URL', env: 'MAILVERIFY_RECAPTCHA_V3_SITEVERIFY_URL', key: 'recaptchaV3SiteverifyUrl', kind: httpUrl, default: DEFAULT_SITEVERIFY_URLS.reCaptchaV3, description: 'where reCAPTCHA v3 tokens are checked', section: 'Access', target: 'server.captcha.siteverifyUrls.reCaptchaV3' },
  { flag: 'hcaptcha-siteverify-url', placeholder: 'URL', env: 'MAILVERIFY_HCAPTCHA_SITEVERIFY_URL', key: 'hcaptchaSiteverifyUrl', kind: httpUrl, default: DEFAULT_SITEVERIFY_URLS.hCaptcha, description: 'where hCaptcha tokens are checked', section: 'Access', target: 'server.captcha.siteverifyUrls.hCaptcha' },

  { flag: 'data-dir', placeholder: 'DIR', env: 'MAILVERIFY_DATA_DIR', key: 'dataDir', kind: path, default: DEFAULT_DATA_DIR, description: 'the folder of the database, made if missing', section: 'Jobs', target: 'server.dataDir' },
  { flag: 'retention', placeholder: 'DURATION', env: 'MAILVERIFY_RETENTION', key: 'retention', kind: duration(MIN_RETENTION_MS, MAX_RETENTION_MS), default: DEFAULT_RETENTION_MS, description: 'how long a job that sets no retention is kept after it completes', section: 'Jobs', target: 'server.defaultRetentionMs' },
  { flag: 'max-entries-per-job', placeholder: 'N', env: 'MAILVERIFY_MAX_ENTRIES_PER_JOB', key: 'maxEntriesPerJob', kind: integer(1), default: DEFAULT_MAX_ENTRIES_PER_JOB, description: 'the most entries of one job', section: 'Jobs', target: 'server.maxEntriesPerJob' },

  { flag: 'store', placeholder: 'URL', env: 'MAILVERIFY_STORE', key: 'store', kind: postgresUrl, defaultText: 'the SQLite database in the data folder', description: 'a PostgreSQL store instead (postgres://user:password@host:port/database), which every process of a cluster shares; without --queue, jobs run in this process on it', section: 'Cluster', target: 'store.url' },
  { flag: 'store-schema', placeholder: 'NAME', env: 'MAILVERIFY_STORE_SCHEMA', key: 'storeSchema', kind: text, default: 'public', description: "the PostgreSQL schema of the store's tables, made if missing; with --store", section: 'Cluster', target: 'store.schema' },
  { flag: 'queue', placeholder: 'URL', env: 'MAILVERIFY_QUEUE', key: 'queue', kind: redisUrl, defaultText: 'none: jobs run in this process', description: 'cluster mode: the Redis of the work queue (BullMQ), the connection leases and the shared counters (redis://[user:password@]host:port[/db], rediss:// for TLS); jobs are verified by workers (mailverify worker, --workers); needs --store', section: 'Cluster', target: 'server.cluster.queue' },
  { flag: 'cluster-prefix', placeholder: 'NAME', env: 'MAILVERIFY_CLUSTER_PREFIX', key: 'clusterPrefix', kind: text, defaultText: 'default', description: 'the Redis keys of the cluster are mailverify:<prefix>:…; the same in every process of one cluster, another for another cluster on the same Redis; with --queue', section: 'Cluster', target: 'server.cluster.prefix' },
  { flag: 'workers', placeholder: 'N', env: 'MAILVERIFY_WORKERS', key: 'workers', kind: integer(0), defaultText: '0', description: 'workers run in this process besides answering HTTP; with --queue', section: 'Cluster', target: 'server.cluster.workers' },
  { flag: 'worker-concurrency', placeholder: 'N', env: 'MAILVERIFY_WORKER_CONCURRENCY', key: 'workerConcurrency', kind: integer(1), defaultText: '8', description: "tasks one worker runs at once, sharing its verifier's connections and caches; with --queue", section: 'Cluster', target: 'server.cluster.concurrency' },
  { flag: 'lease', placeholder: 'MS', env: 'MAILVERIFY_LEASE', key: 'lease', kind: integer(1000), defaultText: '30000', description: "how long a running task and an SMTP connection hold their lease without its holder renewing it: a dead worker's work is taken up again after it; with --queue", section: 'Cluster', target: 'server.cluster.leaseMs' },
  { flag: 'chunk-size', placeholder: 'N', env: 'MAILVERIFY_CHUNK_SIZE', key: 'chunkSize', kind: integer(1), defaultText: '1000', description: "inputs per task (the inputs of one mail exchanger stay in one task, whatever their number); with --queue", section: 'Cluster', target: 'server.cluster.chunkSize' },
  { flag: 'reconcile-interval', placeholder: 'MS', env: 'MAILVERIFY_RECONCILE_INTERVAL', key: 'reconcileInterval', kind: integer(100), defaultText: '5000', description: 'the time between rounds of the reconciler, which plans again the jobs whose tasks Redis lost; with --queue', section: 'Cluster', target: 'server.cluster.reconcileIntervalMs' },

  {
    flag: 'credits',
    env: 'MAILVERIFY_CREDITS',
    key: 'credits',
    kind: boolean,
    default: false,
    description:
      'account credits: each job reserves entries × the unit price of its quality at submission (402 when the free credits left today and the credit packs are too few, or the month would pass its maximum), and consumes the cost of the entries it verified; off: nothing is refused for credit and the balance endpoints answer 404',
    section: 'Credits',
    target: 'server.credits',
    convert: (on: boolean) => (on ? {} : undefined),
  },
  { flag: 'free-daily-credits', placeholder: 'N', env: 'MAILVERIFY_FREE_DAILY_CREDITS', key: 'freeDailyCredits', kind: creditAmount, defaultText: 'none', description: 'the credits consumed each UTC day that are free (used before credit packs); with --credits', section: 'Credits', target: 'server.credits.freeDailyCredits' },
  { flag: 'monthly-max-credits', placeholder: 'N', env: 'MAILVERIFY_MONTHLY_MAX_CREDITS', key: 'monthlyMaxCredits', kind: creditAmount, defaultText: 'no maximum', description: 'the most credits consumed in a UTC calendar month, free credits and reservations included; beyond, a submission is 402; with --credits', section: 'Credits', target: 'server.credits.monthlyMaxCredits' },
  { flag: 'unit-price-standard', placeholder: 'N', env: 'MAILVERIFY_UNIT_PRICE_STANDARD', key: 'unitPriceStandard', kind: creditAmount, defaultText: String(DEFAULT_UNIT_PRICES.Standard), description: 'credits per entry of a Standard job; with --credits', section: 'Credits', target: 'server.credits.unitPrices.Standard' },
  { flag: 'unit-price-high', placeholder: 'N', env: 'MAILVERIFY_UNIT_PRICE_HIGH', key: 'unitPriceHigh', kind: creditAmount, defaultText: String(DEFAULT_UNIT_PRICES.High), description: 'credits per entry of a High job; with --credits', section: 'Credits', target: 'server.credits.unitPrices.High' },
  { flag: 'unit-price-extreme', placeholder: 'N', env: 'MAILVERIFY_UNIT_PRICE_EXTREME', key: 'unitPriceExtreme', kind: creditAmount, defaultText: String(DEFAULT_UNIT_PRICES.Extreme), description: 'credits per entry of an Extreme job; with --credits', section: 'Credits', target: 'server.credits.unitPrices.Extreme' },
  { flag: 'quality', placeholder: 'LEVEL', env: 'MAILVERIFY_QUALITY', key: 'quality', kind: levelName, default: 'Standard', description: "Standard, High, Extreme or the id of a custom level (without case): the quality of jobs that name none, and the verifier's own level (its timeouts, and the level of a job whose custom level is no longer configured)", section: 'Jobs', target: 'server.defaultQuality' },
  {
    key: 'qualityLevels',
    kind: qualityLevels,
    defaultText: 'none',
    description:
      'custom quality levels (config file only): [{ "id", "displayName", "passes", "passDelay", "connectTimeout", "commandTimeout", "unitPrice" }], durations in milliseconds; jobs name one by id in quality (without case); a figure left out is the verifier\'s option, else Standard\'s; unitPrice defaults to the Standard unit price',
    section: 'Jobs',
    target: 'server.qualityLevels',
  },

  { flag: 'checks', placeholder: 'LEVEL', env: 'MAILVERIFY_CHECKS', key: 'checks', kind: choice(['syntax', 'dns', 'smtp'] as const), default: 'smtp', description: 'how far jobs are verified: syntax (offline: syntax, lists, suggestions), dns (adds the DNS/MX checks) or smtp (probes the mailboxes)', section: 'Verification', target: 'server.verifier.checks' },
  { flag: 'dns-server', placeholder: 'IP[:PORT]', env: 'MAILVERIFY_DNS_SERVERS', key: 'dnsServers', kind: list(dnsServer, 'IP addresses with optional ports'), defaultText: "the system's", description: 'DNS servers to ask (the flag repeated, or comma-separated)', section: 'Verification', target: 'server.verifier.dns.servers' },
  { flag: 'dns-timeout', placeholder: 'MS', env: 'MAILVERIFY_DNS_TIMEOUT', key: 'dnsTimeout', kind: integer(1), defaultText: '5000', description: 'the cap on each DNS query, in milliseconds', section: 'Verification', target: 'server.verifier.dns.timeoutMs' },
  { flag: 'smtp-port', placeholder: 'N', env: 'MAILVERIFY_SMTP_PORT', key: 'smtpPort', kind: integer(1, 65535, 'a TCP port number'), defaultText: '25', description: 'the SMTP port of mail exchangers', section: 'Verification', target: 'server.verifier.smtp.port' },
  { flag: 'helo-name', placeholder: 'NAME', env: 'MAILVERIFY_HELO_NAME', key: 'heloName', kind: text, defaultText: "this host's name", description: 'the EHLO name of SMTP probes: a name whose address and reverse DNS match the address probes come from', section: 'Verification', target: 'server.verifier.heloName' },
  { flag: 'mail-from', placeholder: 'ADDRESS', env: 'MAILVERIFY_MAIL_FROM', key: 'mailFrom', kind: text, defaultText: 'verify@<helo name>', description: 'the envelope sender of SMTP probes', section: 'Verification', target: 'server.verifier.mailFrom' },
  { flag: 'max-connections', placeholder: 'N', env: 'MAILVERIFY_MAX_CONNECTIONS', key: 'maxConnections', kind: integer(1), defaultText: '50', description: 'SMTP connections open at once, over all jobs', section: 'Verification', target: 'server.verifier.smtp.maxConnections' },
  { flag: 'smtp-proxy', placeholder: 'URL', env: 'MAILVERIFY_SMTP_PROXY', key: 'smtpProxy', kind: socksProxy, secret: true, defaultText: "none: the system's route", description: 'SMTP probes leave through this SOCKS5 proxy, socks5://[user[:password]@]host[:port] (port 1080 by default): one that can reach port 25 where this host cannot; it makes the one egress "default" (docs/egress.md)', section: 'Verification', target: 'server.verifier.smtp.egress' },
  { flag: 'smtp-proxy-file', placeholder: 'FILE', env: 'MAILVERIFY_SMTP_PROXY_FILE', key: 'smtpProxyFile', kind: socksProxyFile, secret: true, description: 'a file holding that URL, so that its password is in no process list nor environment', section: 'Verification', target: 'server.verifier.smtp.egress' },
  { flag: 'smtp-local-address', placeholder: 'ADDRESS', env: 'MAILVERIFY_SMTP_LOCAL_ADDRESS', key: 'smtpLocalAddress', kind: sourceAddress, description: 'SMTP probes leave from this source address of the host\'s (the one egress "default")', section: 'Verification', target: 'server.verifier.smtp.egress' },
  { flag: 'smtp-egress-file', placeholder: 'FILE', env: 'MAILVERIFY_SMTP_EGRESS_FILE', key: 'smtpEgressFile', kind: egressesFile, description: 'several ways out: a JSON array of egresses (as the key smtpEgress); each connection takes the one with the fewest open connections', section: 'Verification', target: 'server.verifier.smtp.egress' },
  { flag: 'smtp-providers-file', placeholder: 'FILE', env: 'MAILVERIFY_SMTP_PROVIDERS_FILE', key: 'smtpProvidersFile', kind: providersKind(true), defaultText: 'the built-in PROVIDER_PROFILES only', description: 'provider profiles tried before the built-in ones: which exchangers are one provider\'s, the egresses it may use, its connections per egress and recipients per minute and per day per egress (a JSON array, as the key smtpProviders)', section: 'Verification', target: 'server.verifier.smtp.providers' },
  { key: 'smtpProviders', kind: providersKind(false), description: 'the provider profiles in the config file: [{ "id", "match", "egress", "maxConnectionsPerEgress", "recipientsPerMinute", "recipientsPerDay" }]', section: 'Verification', target: 'server.verifier.smtp.providers' },
  { key: 'smtpEgress', kind: egresses, description: 'the egresses in the config file: [{ "id", "localAddress" or "proxy", "heloName", "mailFrom", "maxConnections", "publicAddress" }]; one of these five options at most', section: 'Verification', target: 'server.verifier.smtp.egress' },
  { flag: 'passes', placeholder: 'N', env: 'MAILVERIFY_PASSES', key: 'passes', kind: integer(1), defaultText: 'by quality: 1, 3, 9', description: 'passes over transient results', section: 'Verification', target: 'server.verifier.passes' },
  { flag: 'pass-delay', placeholder: 'MS', env: 'MAILVERIFY_PASS_DELAY', key: 'passDelay', kind: integer(0), defaultText: '300000', description: 'the wait between two passes, in milliseconds', section: 'Verification', target: 'server.verifier.passDelayMs' },
  {
    key: 'classifications',
    kind: classifications,
    defaultText: 'Deliverable, Undeliverable, Risky, Unknown',
    description: 'classification names by status code (config file only), replacing the standard ones in entries, status filters and exports: { "MailboxIsDea": "Disposable" }',
    section: 'Verification',
    target: 'server.verifier.classifications',
  },
  { flag: 'evidence', env: 'MAILVERIFY_EVIDENCE', key: 'evidence', kind: boolean, default: false, description: 'each 2.x JSON entry that reached DNS or SMTP gets "evidence", mailverify\'s own field: the exchangers, the one asked, the egress, the deciding replies and the rule that read them (never in exports or 1.4)', section: 'Verification', target: 'server.verifier.evidence' },
  { flag: 'allow-private-addresses', env: 'MAILVERIFY_ALLOW_PRIVATE_ADDRESSES', key: 'allowPrivateAddresses', kind: boolean, default: false, description: 'let exchangers, literals and callback URLs on private, loopback or link-local addresses be used; off, a hostile MX record cannot point inside your network', section: 'Verification', target: 'server.verifier.allowPrivateAddresses' },
  {
    flag: 'refuse',
    placeholder: 'FORM',
    env: 'MAILVERIFY_REFUSE',
    key: 'refuse',
    kind: list(choice(Object.keys(REFUSABLE) as (keyof typeof REFUSABLE)[]), `forms among ${Object.keys(REFUSABLE).join(', ')}`),
    defaultText: 'none',
    description: 'forms the RFCs allow that are refused: quoted (quoted local parts), literal (address literals), international (non-ASCII local parts)',
    section: 'Verification',
    target: 'server.verifier.syntax',
    convert: (forms: (keyof typeof REFUSABLE)[]) => Object.fromEntries(forms.map((form) => [REFUSABLE[form], false])),
  },
  {
    key: 'overrides',
    kind: overrideRules,
    defaultText: 'the list kept in the data folder (none at first)',
    description:
      'classifier override rules, in order: an address that matches a rule gets the status OverrideMatch and its classification, without DNS or SMTP work; given, the list replaces at each start the one kept in the data folder (set with PUT /v2.7/settings/overrides); jobs keep the rules they were submitted with',
    section: 'Verification',
    target: 'server.overrides',
  },
  { flag: 'no-provider-rules', flagSets: false, env: 'MAILVERIFY_PROVIDER_RULES', key: 'providerRules', kind: boolean, default: true, description: "the big providers' sign-up rules (IspSpecificSyntaxFailure); the flag turns them off", section: 'Verification', target: 'server.verifier.syntax.providerRules' },

  { flag: 'callback-timeout', placeholder: 'MS', env: 'MAILVERIFY_CALLBACK_TIMEOUT', key: 'callbackTimeout', kind: integer(1), default: DEFAULT_CALLBACK_TIMEOUT_MS, description: "how long a completion callback's receiver has to answer with a 2xx, in milliseconds", section: 'Callbacks', target: 'server.callbackTimeoutMs' },

  { flag: 'max-upload-size', placeholder: 'SIZE', env: 'MAILVERIFY_MAX_UPLOAD_SIZE', key: 'maxUploadSize', kind: bytes, default: DEFAULT_MAX_FILE_BYTES, description: 'the largest imported file; a larger one is 413', section: 'File import', target: 'server.fileImport.maxFileBytes' },
  { flag: 'max-inflated-size', placeholder: 'SIZE', env: 'MAILVERIFY_MAX_INFLATED_SIZE', key: 'maxInflatedSize', kind: bytes, default: DEFAULT_MAX_INFLATED_BYTES, description: 'the most an xlsx workbook may inflate to; more is 413', section: 'File import', target: 'server.fileImport.maxInflatedBytes' },
  { flag: 'max-xls-size', placeholder: 'SIZE', env: 'MAILVERIFY_MAX_XLS_SIZE', key: 'maxXlsSize', kind: bytes, default: DEFAULT_MAX_XLS_BYTES, description: 'the largest xls file, which is read whole', section: 'File import', target: 'server.fileImport.maxXlsBytes' },
  { flag: 'spreadsheet-timeout', placeholder: 'MS', env: 'MAILVERIFY_SPREADSHEET_TIMEOUT', key: 'spreadsheetTimeout', kind: integer(1), default: DEFAULT_SPREADSHEET_TIMEOUT_MS, description: 'the time a workbook may take to read, in milliseconds', section: 'File import', target: 'server.fileImport.spreadsheetTimeoutMs' },
  { flag: 'spreadsheet-heap', placeholder: 'MIB', env: 'MAILVERIFY_SPREADSHEET_HEAP', key: 'spreadsheetHeap', kind: integer(16), default: DEFAULT_SPREADSHEET_HEAP_MB, description: 'the heap of the thread that reads a workbook, in MiB', section: 'File import', target: 'server.fileImport.spreadsheetHeapMb' },
  { flag: 'max-spreadsheet-readers', placeholder: 'N', env: 'MAILVERIFY_MAX_SPREADSHEET_READERS', key: 'maxSpreadsheetReaders', kind: integer(1), default: DEFAULT_MAX_SPREADSHEET_READERS, description: 'the workbooks read at once, each in its own thread with the heap above; one more upload is 503 with Retry-After', section: 'File import', target: 'server.fileImport.maxSpreadsheetReaders' },
  { flag: 'temp-dir', placeholder: 'DIR', env: 'MAILVERIFY_TEMP_DIR', key: 'tempDir', kind: path, defaultText: "the system's temporary folder", description: 'where uploads are kept while they are read', section: 'File import', target: 'server.fileImport.tempDir' },

  { flag: 'log-level', placeholder: 'LEVEL', env: 'MAILVERIFY_LOG_LEVEL', key: 'logLevel', kind: choice(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const), default: 'info', description: 'fatal, error, warn, info, debug, trace or silent: the log on standard error, JSON lines with the request id (reqId) of each request', section: 'Logging and monitoring', target: 'logLevel' },
  { flag: 'metrics', env: 'MAILVERIFY_METRICS', key: 'metrics', kind: boolean, default: false, description: 'Prometheus metrics at GET /metrics, for root and administrators', section: 'Logging and monitoring', target: 'server.metrics' },
];

/** What `serve` starts: the server's options, where it listens, and its log level. */
export interface ServeSettings {
  readonly server: Omit<StandaloneOptions, 'logger' | 'rootPassword'> & { rootPassword?: string };
  readonly listen: { readonly host: string; readonly port: number };
  readonly logLevel: string;
  /** A PostgreSQL store (--store) instead of the data folder's SQLite database. */
  readonly store?: { readonly url: string; readonly schema: string };
  /** Where each option set came from (`--port`, `MAILVERIFY_PORT`, `mailverify.json: port`), by target. */
  readonly sources: ReadonlyMap<string, string>;
  /** Things to tell the operator without stopping: unknown MAILVERIFY_* variables. */
  readonly warnings: readonly string[];
}

/**
 * The settings of a command that takes serve's options (`serve`, `worker`) from its arguments and the environment, with
 * the warnings written to standard error; null when it was asked for its help, which `usage` is (written out).
 */
export function commandSettings(argv: string[], env: NodeJS.ProcessEnv, usage: string): ServeSettings | null {
  const { values } = parseFlags({
    args: argv,
    allowPositionals: false,
    options: { ...serveFlags(), help: { type: 'boolean', short: 'h', default: false } },
  });
  if (values.help) {
    process.stdout.write(usage + '\n');
    return null;
  }
  const settings = resolveServeSettings(values as FlagValues, env);
  for (const warning of settings.warnings) process.stderr.write(`mailverify: ${warning}\n`);
  return settings;
}

/** The parseArgs options of every flag of the table. */
export function serveFlags(): Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> {
  const flags: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const option of SERVE_OPTIONS) {
    if (option.flag === undefined) continue;
    flags[option.flag] = option.kind.switch ? { type: 'boolean' } : { type: 'string', ...(option.kind.repeatable && { multiple: true }) };
  }
  return flags;
}

type FlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

interface Given {
  readonly source: string;
  readonly value: unknown;
}

/**
 * Switches whose options (targets under the switch's) count only when it is on; `off` is what the server is given
 * when it is not (absent when undefined).
 */
const SWITCHES: readonly { readonly target: string; readonly reason: string; readonly off?: unknown }[] = [
  { target: 'server.credits', reason: 'credits are not accounted without it' },
  { target: 'server.rateLimits', reason: 'there are no rate limits without it', off: false },
];

/** The settings of flags (parseArgs values), environment and config file, with the precedence above. */
export function resolveServeSettings(flags: FlagValues, env: NodeJS.ProcessEnv): ServeSettings {
  const configOption = SERVE_OPTIONS.find((option) => option.target === 'configFile')!;
  const configGiven = fromFlagOrEnv(configOption, flags, env);
  const config = configGiven === undefined ? undefined : readConfigFile(configGiven.value as string, configGiven.source);
  const result: Record<string, unknown> = { server: {}, listen: {} };
  const sources = new Map<string, string>();
  const switchedOn = new Set<string>();
  for (const option of SERVE_OPTIONS) {
    if (option === configOption) continue;
    const given = fromFlagOrEnv(option, flags, env) ?? fromConfig(option, config);
    if (given?.value === true && SWITCHES.some(({ target }) => target === option.target)) switchedOn.add(option.target);
    if (given !== undefined) {
      const earlier = sources.get(option.target);
      if (earlier !== undefined) throw new UsageError(`${earlier} and ${given.source} set the same option: give one of them`);
      sources.set(option.target, given.source);
    }
    const value = given?.value ?? option.default;
    if (value !== undefined && !(given === undefined && sources.has(option.target))) {
      setPath(result, option.target, option.convert === undefined ? value : option.convert(value));
    }
  }
  const server = result['server'] as { https?: { cert?: string; key?: string; clientCa?: string } };
  if (server.https?.clientCa !== undefined && server.https.cert === undefined && server.https.key === undefined) {
    throw new UsageError(`${sources.get('server.https.clientCa')} needs --tls-cert and --tls-key (or their variables or keys): client certificates are asked for over HTTPS only`);
  }
  if (server.https !== undefined && (server.https.cert === undefined || server.https.key === undefined)) {
    throw new UsageError('--tls-cert and --tls-key (or their variables or keys) go together');
  }
  // Cluster settings count only with --queue, and a queue only with a shared store.
  const cluster = (result['server'] as { cluster?: Record<string, unknown> }).cluster;
  if (cluster !== undefined && cluster['queue'] === undefined) {
    const source = [...sources].find(([target]) => target.startsWith('server.cluster.'))![1];
    throw new UsageError(`${source} needs --queue (or MAILVERIFY_QUEUE, or the key queue): it is a setting of cluster mode`);
  }
  const store = result['store'] as { url?: string; schema?: string } | undefined;
  if (cluster !== undefined && store?.url === undefined) {
    throw new UsageError(`${sources.get('server.cluster.queue')} needs --store (or MAILVERIFY_STORE, or the key store): the processes of a cluster share a PostgreSQL store`);
  }
  if (store?.url === undefined && sources.has('store.schema')) {
    throw new UsageError(`${sources.get('store.schema')} needs --store (or MAILVERIFY_STORE, or the key store)`);
  }
  // The options of a switch count only with it: without it, one of them is a mistake, not a setting to drop.
  for (const { target, reason, off } of SWITCHES) {
    if (switchedOn.has(target)) continue;
    const name = target.slice('server.'.length);
    const server = result['server'] as Record<string, unknown>;
    if (server[name] !== undefined) {
      const source = [...sources].find(([given]) => given.startsWith(`${target}.`))![1];
      const option = SERVE_OPTIONS.find((row) => row.target === target)!;
      throw new UsageError(`${source} needs --${option.flag} (or ${option.env}, or the key ${option.key}): ${reason}`);
    }
    if (off === undefined) delete server[name];
    else server[name] = off;
  }
  // The quality of jobs that name none, a standard or a custom level, is also the verifier's, which sets its timeouts.
  const levels = (result['server'] as StandaloneOptions).qualityLevels ?? [];
  const defaultQuality = (result['server'] as StandaloneOptions).defaultQuality!;
  const level = findQuality(defaultQuality, levels);
  if (level === null) {
    const names = [...QUALITIES, ...levels.map((custom) => custom.id!)].join(', ');
    throw new UsageError(`${sources.get('server.defaultQuality')} must be one of ${names}, got ${defaultQuality}`);
  }
  setPath(result, 'server.defaultQuality', qualityName(level));
  setPath(result, 'server.verifier.quality', level);
  return {
    server: result['server'] as ServeSettings['server'],
    listen: result['listen'] as ServeSettings['listen'],
    logLevel: result['logLevel'] as string,
    ...(store?.url !== undefined && { store: { url: store.url, schema: store.schema ?? 'public' } }),
    sources,
    warnings: unknownVariables(env),
  };
}

function fromFlagOrEnv(option: ServeOption, flags: FlagValues, env: NodeJS.ProcessEnv): Given | undefined {
  const flag = option.flag === undefined ? undefined : flags[option.flag];
  if (flag !== undefined && flag !== false) {
    const source = `--${option.flag}`;
    if (flag === true) return { source, value: option.flagSets ?? true };
    return read(option, source, Array.isArray(flag) ? flag.join(',') : flag);
  }
  // An empty variable is an unset one (`MAILVERIFY_PORT=` in a unit file clears it).
  const variable = option.env === undefined ? undefined : env[option.env];
  if (variable !== undefined && variable !== '') return read(option, option.env!, variable);
  return undefined;
}

interface ConfigFile {
  readonly name: string;
  readonly folder: string;
  readonly values: Record<string, unknown>;
}

function fromConfig(option: ServeOption, config: ConfigFile | undefined): Given | undefined {
  if (config === undefined || option.key === undefined || !Object.hasOwn(config.values, option.key)) return undefined;
  return read(option, `${config.name}: ${option.key}`, config.values[option.key], config);
}

/** The value of `raw`, text from a flag or variable, else JSON from `config`; a bad one is a UsageError naming `source`. */
function read(option: ServeOption, source: string, raw: unknown, config?: ConfigFile): Given {
  try {
    return { source, value: config === undefined ? option.kind.fromText(raw as string) : option.kind.fromJson(raw, config.folder) };
  } catch (error) {
    if (!(error instanceof BadValue)) throw error;
    if (error.reason !== undefined) throw new UsageError(`${source}${error.attached ? '' : ' '}${error.reason}`);
    const value = error.part === undefined ? raw : error.part.value;
    // Text as it was written; JSON as JSON, so that "8080" and 8080 differ.
    const got = option.secret ? '' : `, got ${config === undefined ? String(value) : JSON.stringify(value)}`;
    throw new UsageError(`${source} must be ${error.part?.expected ?? option.kind.expected}${got}`);
  }
}

/** The config file: a JSON object whose keys are the table's. */
function readConfigFile(file: string, source: string): ConfigFile {
  let values: unknown;
  try {
    values = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = error instanceof SyntaxError ? `is not JSON: ${error.message}` : `cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
    throw new UsageError(`${source} ${file} ${reason}`);
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values)) throw new UsageError(`${file}: must be a JSON object of options`);
  const keys = SERVE_OPTIONS.flatMap((option) => (option.key === undefined ? [] : [option.key]));
  for (const key of Object.keys(values)) {
    if (keys.includes(key)) continue;
    const near = closestName(key, keys);
    throw new UsageError(`${file}: unknown key "${key}"${near === null ? '' : ` (did you mean "${near}"?)`}`);
  }
  return { name: file, folder: dirname(resolve(file)), values: values as Record<string, unknown> };
}

/** MAILVERIFY_* variables that are no option, each with the one probably meant. */
function unknownVariables(env: NodeJS.ProcessEnv): string[] {
  const known = SERVE_OPTIONS.flatMap((option) => (option.env === undefined ? [] : [option.env]));
  return Object.keys(env)
    .filter((name) => name.startsWith('MAILVERIFY_') && !known.includes(name))
    .map((name) => {
      const near = closestName(name, known);
      return `the environment variable ${name} is no option of serve${near === null ? '' : ` (did you mean ${near}?)`}; it is ignored`;
    });
}

/** Sets `target` (a dotted path) in `object`, making the objects on the way; objects are merged. */
function setPath(object: Record<string, unknown>, target: string, value: unknown): void {
  const names = target.split('.');
  const last = names.pop()!;
  let at = object;
  for (const name of names) at = (at[name] ??= {}) as Record<string, unknown>;
  const before = at[last];
  at[last] = isPlainObject(before) && isPlainObject(value) ? { ...before, ...value } : value;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);

/** The default as written in the docs. */
function defaultOf(option: ServeOption): string {
  return option.default === undefined ? (option.defaultText ?? '') : option.kind.show(option.default);
}

/** The option in the server's options (createServer), or what serve does with it. */
function codeNameOf(option: ServeOption): string {
  if (option.target.startsWith('server.')) return option.target.slice('server.'.length);
  if (option.target.startsWith('listen.')) return `listen({ ${option.target.slice('listen.'.length)} })`;
  if (option.target === 'logLevel') return 'logger.level';
  if (option.target.startsWith('store.')) return `store: openPostgresStore({ ${option.target === 'store.url' ? 'connectionString' : 'schema'} })`;
  return '';
}

const SECTIONS: readonly Section[] = ['Configuration', 'Listening', 'Access', 'Jobs', 'Cluster', 'Credits', 'Verification', 'Callbacks', 'File import', 'Logging and monitoring'];

/** The reference table of docs/options.md (Markdown), between its markers. */
export function optionsTable(): string {
  const cell = (value: string): string => value.replaceAll('|', '\\|');
  const code = (value: string | undefined): string => (value === undefined || value === '' ? '' : `\`${cell(value)}\``);
  const lines = ['| Flag | Environment variable | Config key | Value | Default | Description | In `createServer` |', '|---|---|---|---|---|---|---|'];
  for (const section of SECTIONS) {
    lines.push(`| **${section}** | | | | | | |`);
    for (const option of SERVE_OPTIONS.filter((row) => row.section === section)) {
      const flag = option.flag === undefined ? '' : `--${option.flag}${option.placeholder === undefined ? '' : ` ${option.placeholder}`}`;
      lines.push(
        `| ${code(flag)} | ${code(option.env)} | ${code(option.key)} | ${cell(option.kind.expected)} | ${cell(defaultOf(option))} | ${cell(option.description)} | ${code(codeNameOf(option))} |`,
      );
    }
  }
  return lines.join('\n');
}

const HELP_INDENT = 26;
const HELP_WIDTH = 100;

/** The options part of `serve --help`, by section: each flag, its description, default, variable and key. */
export function optionsHelp(): string {
  const out: string[] = [];
  for (const section of SECTIONS) {
    out.push('', `${section}:`);
    for (const option of SERVE_OPTIONS.filter((row) => row.section === section)) {
      const name = option.flag === undefined ? (option.env ?? option.key!) : `--${option.flag}${option.placeholder === undefined ? '' : ` ${option.placeholder}`}`;
      const fallback = defaultOf(option);
      const also = [option.flag === undefined ? undefined : option.env, option.key === name ? undefined : option.key].filter((part) => part !== undefined);
      const notes = [fallback === '' ? undefined : `default ${fallback}`, also.length === 0 ? undefined : also.join(', ')].filter((part) => part !== undefined);
      const text = `${option.description}${notes.length === 0 ? '' : ` (${notes.join('; ')})`}`;
      const first = `  ${name}`;
      const lines = wrap(text, HELP_WIDTH - HELP_INDENT);
      if (first.length < HELP_INDENT - 1) {
        out.push(first.padEnd(HELP_INDENT) + lines[0]!, ...lines.slice(1).map((line) => ' '.repeat(HELP_INDENT) + line));
      } else {
        out.push(first, ...lines.map((line) => ' '.repeat(HELP_INDENT) + line));
      }
    }
  }
  return out.join('\n');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

const TABLE_START = '<!-- serve-options:start (generated by npm run docs:options from packages/server/src/cli/serve-options.ts) -->';
const TABLE_END = '<!-- serve-options:end -->';

/** `readme` with the reference table between its markers made anew. */
export function withOptionsTable(readme: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start === -1 || end < start) throw new Error(`docs/options.md: the markers ${TABLE_START} and ${TABLE_END} are missing`);
  return `${readme.slice(0, start + TABLE_START.length)}\n${optionsTable()}\n${readme.slice(end)}`;
}
