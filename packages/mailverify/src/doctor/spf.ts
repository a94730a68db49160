/**
 * The `spf` check: the SPF result (RFC 7208) of the envelope sender's domain for the public address, by mailauth's
 * SPF module, asking our resolver (so that `--dns-server` and test servers answer). Loaded on first use only: the
 * engine's import does not pay for it. mailauth is an optional peer dependency (it brings some 45 packages, which a
 * library that only parses and verifies should not carry): without it the row says how to install it.
 */
import { isIPv4 } from 'node:net';
import type { DoctorResolver } from './dns.js';
import { fail, ok, oneLine, warn, type Finding } from './rows.js';

type SpfFunction = (options: {
  ip: string;
  sender: string;
  helo: string;
  mta: string;
  resolver: (name: string, type: string) => Promise<unknown>;
}) => Promise<{ rr?: string; status: { result: string; comment?: string } }>;

let loaded: Promise<SpfFunction | null> | undefined;

/** The version the package is tested with (its optional peer dependency). */
export const MAILAUTH_VERSION = '4.13.3';

/** mailauth's `spf`, or null when the package is not installed. */
function spfFunction(): Promise<SpfFunction | null> {
  // A CommonJS module: its namespace has `spf`, or `default.spf` where the export names were not detected.
  loaded ??= import('mailauth/lib/spf/index.js').then((module: Record<string, unknown>) => {
    const spf = (module.spf ?? (module.default as Record<string, unknown> | undefined)?.spf) as SpfFunction | undefined;
    if (typeof spf !== 'function') throw new Error('mailauth/lib/spf has no spf function');
    return spf;
  }, (error: unknown) => {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return null;
    throw error;
  });
  return loaded;
}

/** mailauth's resolver interface: `dns.promises.resolve(name, type)`'s answers, from our resolver. */
function spfResolver(resolver: DoctorResolver): (name: string, type: string) => Promise<unknown> {
  return async (name, type) => {
    switch (type) {
      case 'TXT':
        return resolver.resolveTxt(name);
      case 'A':
        return (await resolver.resolve4(name, { ttl: true })).map((record) => record.address);
      case 'AAAA':
        return (await resolver.resolve6(name, { ttl: true })).map((record) => record.address);
      case 'MX':
        return (await resolver.resolveMx(name)).map(({ exchange, priority }) => ({ exchange, priority }));
      case 'PTR':
        return resolver.resolvePtr(name);
      default:
        throw Object.assign(new Error(`no ${type} lookups`), { code: 'ENOTIMP' });
    }
  };
}

export async function checkSpf(resolver: DoctorResolver, address: string, mailFrom: string, heloName: string): Promise<Finding> {
  const domain = mailFrom.slice(mailFrom.lastIndexOf('@') + 1);
  const mechanism = `${isIPv4(address) ? 'ip4' : 'ip6'}:${address}`;
  let result: Awaited<ReturnType<SpfFunction>>;
  try {
    const spf = await spfFunction();
    if (spf === null) {
      return warn(
        'not checked: the SPF check uses the mailauth package, which is not installed',
        `npm install mailauth@${MAILAUTH_VERSION} beside mailverify (an optional dependency, left out of the engine's install)`,
      );
    }
    result = await spf({ ip: address, sender: mailFrom, helo: heloName, mta: heloName, resolver: spfResolver(resolver) });
  } catch (error) {
    return warn(`the SPF record of ${domain} could not be evaluated: ${oneLine((error as Error).message)}`, 'check the DNS server (--dns-server) and try again');
  }
  const verdict = result.status.result;
  const record = result.rr !== undefined && result.rr !== '' ? `"${result.rr}"` : verdict === 'temperror' ? 'its SPF record could not be looked up' : 'no SPF record';
  const seen = `${verdict} for ${address} from ${domain} (${record})`;
  const allow = `add ${mechanism} to the SPF record of ${domain} (TXT "v=spf1 ${mechanism} … -all", RFC 7208), or use a sender (--mail-from) on a domain whose SPF allows ${address}`;
  switch (verdict) {
    case 'pass':
      return ok(seen);
    case 'none':
    case 'neutral':
      return warn(seen, allow);
    case 'softfail':
    case 'fail':
    case 'permerror':
      return fail(seen, verdict === 'permerror' ? `correct the SPF record of ${domain} (RFC 7208 §4.6), then ${allow}` : allow);
    default:
      return warn(seen, 'check the DNS server (--dns-server) and try again');
  }
}
