/**
 * The `dnsbl` check (RFC 5782): the address's reversed labels under each zone, an A query. No such name: not listed;
 * an answer in 127.0.0.0/8: listed, the TXT record at the same name saying why (§2.1). Spamhaus and others answer
 * 127.255.255.0/24 to a resolver they refuse (public resolvers, too many queries): that says nothing of the address.
 */
import { addressesLike, answer, isAbsence, reversedLabels, type DoctorResolver } from './dns.js';
import { fail, ok, oneLine, warn, type Finding } from './rows.js';

export const DEFAULT_DNSBL_ZONES: readonly string[] = ['zen.spamhaus.org', 'b.barracudacentral.org', 'bl.spamcop.net'];

type ZoneAnswer =
  | { readonly kind: 'clear' }
  | { readonly kind: 'listed'; readonly codes: readonly string[]; readonly reason?: string }
  | { readonly kind: 'refused'; readonly codes: readonly string[] }
  | { readonly kind: 'odd'; readonly codes: readonly string[] }
  | { readonly kind: 'error'; readonly code: string };

async function askZone(resolver: DoctorResolver, address: string, zone: string): Promise<ZoneAnswer> {
  const name = `${reversedLabels(address)}.${zone.replace(/\.$/u, '')}`;
  // Always an A query, for an IPv6 address too (RFC 5782 §2.4).
  const found = await addressesLike(resolver, name, '0.0.0.0');
  if (!found.ok) return isAbsence(found.code) ? { kind: 'clear' } : { kind: 'error', code: found.code };
  const codes = found.records;
  if (codes.length === 0) return { kind: 'clear' };
  if (codes.some((code) => code.startsWith('127.255.255.'))) return { kind: 'refused', codes };
  if (!codes.every((code) => code.startsWith('127.'))) return { kind: 'odd', codes };
  const txt = await answer(resolver.resolveTxt(name));
  const reason = txt.ok ? txt.records.map((parts) => parts.join('')).join(' ') : '';
  return { kind: 'listed', codes, ...(reason !== '' && { reason: oneLine(reason) }) };
}

export async function checkDnsbl(resolver: DoctorResolver, address: string, zones: readonly string[]): Promise<Finding> {
  if (zones.length === 0) return warn('no DNSBL zone to ask', 'give zones with --dnsbl (option dnsbl)');
  const answers = await Promise.all(zones.map((zone) => askZone(resolver, address, zone)));
  const each = <K extends ZoneAnswer['kind']>(kind: K) =>
    zones.flatMap((zone, i) => (answers[i]!.kind === kind ? [{ zone, answer: answers[i] as Extract<ZoneAnswer, { kind: K }> }] : []));
  const listed = each('listed');
  if (listed.length > 0) {
    const seen = listed.map(({ zone, answer: a }) => `${zone} (${a.codes.join(' ')}${a.reason === undefined ? '' : `: ${a.reason}`})`).join(', ');
    return fail(`${address} is listed on ${seen}`, "ask each list to delist it (its site says how, often after the cause is gone), or probe from another address");
  }
  const troubles = [
    ...each('refused').map(({ zone, answer: a }) => `${zone} refuses this resolver (${a.codes.join(' ')})`),
    ...each('odd').map(({ zone, answer: a }) => `${zone} answered ${a.codes.join(' ')}, not a DNSBL answer`),
    ...each('error').map(({ zone, answer: a }) => `${zone} could not be asked (${a.code})`),
  ];
  const clear = each('clear').map(({ zone }) => zone);
  if (troubles.length > 0) {
    const rest = clear.length > 0 ? `; not listed on ${clear.join(', ')}` : '';
    const refusedOrOdd = each('refused').length + each('odd').length > 0;
    return warn(
      `${troubles.join(', ')}${rest}`,
      refusedOrOdd
        ? 'ask the lists through a DNS server of your own (--dns-server), not a public resolver, which most lists refuse'
        : 'check the DNS server (--dns-server) and try again',
    );
  }
  return ok(`${address} is not listed on ${clear.join(', ')}`);
}
