/** The DNS questions of the doctor: reverse names (RFC 1035 §3.5, RFC 3596 §2.5), and answers read as facts or failures. */
import { isIPv4, isIPv6 } from 'node:net';
import type { Resolver } from '../dns/resolver.js';
import { ipv6ToGroups } from '../net/ip-ranges.js';

/** A resolver that also answers PTR and TXT questions: the built-in one, or an instance of `node:dns`'s `Resolver`. */
export interface DoctorResolver extends Resolver {
  resolvePtr(hostname: string): Promise<string[]>;
  resolveTxt(hostname: string): Promise<string[][]>;
}

/** An answer: the records, or the error code (`ENOTFOUND` NXDOMAIN, `ENODATA` no record of the type, `ETIMEOUT`...). */
export type Answer<T> = { readonly ok: true; readonly records: T } | { readonly ok: false; readonly code: string };

/** The name does not exist, or holds no record of the type: a fact about it, not a failure to ask. */
export const isAbsence = (code: string): boolean => code === 'ENOTFOUND' || code === 'ENODATA';

export async function answer<T>(query: Promise<T>): Promise<Answer<T>> {
  try {
    return { ok: true, records: await query };
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    return { ok: false, code: typeof code === 'string' ? code : 'EUNKNOWN' };
  }
}

/**
 * The labels of an address, least significant first: reversed octets for IPv4, reversed nibbles for IPv6. Both the
 * reverse zone (`…in-addr.arpa`, `…ip6.arpa`) and a DNSBL zone (RFC 5782 §2.1, §2.4) go after them.
 */
export function reversedLabels(address: string): string {
  if (isIPv4(address)) return address.split('.').reverse().join('.');
  if (!isIPv6(address)) throw new TypeError(`${address} is not an IP address`);
  return expandIpv6(address).split('').reverse().join('.');
}

/** The PTR name of an address. */
export function reverseName(address: string): string {
  return `${reversedLabels(address)}.${isIPv4(address) ? 'in-addr.arpa' : 'ip6.arpa'}`;
}

/** The 32 hexadecimal digits of an IPv6 address (a dotted IPv4 tail included). */
function expandIpv6(address: string): string {
  return (ipv6ToGroups(address) ?? []).map((group) => group.toString(16).padStart(4, '0')).join('');
}

/** The addresses of a name of the same family as `address` (A for IPv4, AAAA for IPv6). */
export function addressesLike(resolver: Resolver, name: string, address: string): Promise<Answer<string[]>> {
  const records = isIPv4(address) ? resolver.resolve4(name, { ttl: true }) : resolver.resolve6(name, { ttl: true });
  return answer(records.then((found) => found.map((record) => record.address)));
}

/** Two addresses are one (`::ffff:1.2.3.4` and `1.2.3.4` are not: an exchanger shows one form). */
export function sameAddress(a: string, b: string): boolean {
  if (isIPv6(a) && isIPv6(b)) return expandIpv6(a) === expandIpv6(b);
  return a === b;
}

/** A host name as the doctor can ask about it: dot-separated labels of letters, digits, hyphens and underscores. */
export function isDomainName(name: string): boolean {
  const bare = name.replace(/\.$/u, '');
  return bare.length > 0 && bare.length <= 253 && bare.split('.').every((label) => /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/u.test(label));
}
