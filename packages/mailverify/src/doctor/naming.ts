/**
 * The `public-address`, `ptr` and `helo` checks: which address exchangers see, whether its reverse DNS names a host
 * that resolves back to it (RFC 1912 §2.1, "forward-confirmed"), and whether the EHLO name is that host (RFC 5321
 * §4.1.1.1: the fully qualified domain name of the client).
 */
import { isIPv4 } from 'node:net';
import { isGlobalAddress } from '../net/ip-ranges.js';
import type { Egress } from '../smtp/egress/egresses.js';
import { addressesLike, answer, isAbsence, isDomainName, reverseName, sameAddress, type DoctorResolver } from './dns.js';
import type { Probe } from './port25.js';
import { fail, ok, warn, type Finding } from './rows.js';

export interface PublicAddress {
  readonly finding: Finding;
  /** Undefined when it is not known: the checks that need it are warnings. */
  readonly address?: string;
}

/** `publicAddress`, else the address an exchanger's EHLO reply named, else `localAddress`; private ones only if allowed. */
export function publicAddressOf(egress: Egress, seen: Probe['seen'], allowPrivateAddresses: boolean): PublicAddress {
  const usable = (address: string): boolean => allowPrivateAddresses || isGlobalAddress(address);
  const candidates = [
    ...(egress.publicAddress === undefined ? [] : [{ address: egress.publicAddress, source: "the egress's publicAddress" }]),
    ...(seen === undefined ? [] : [{ address: seen.address, source: `as ${seen.exchanger} saw it in its EHLO reply` }]),
    ...(egress.localAddress === undefined ? [] : [{ address: egress.localAddress, source: "the egress's localAddress" }]),
  ];
  const chosen = candidates.find((candidate) => usable(candidate.address));
  if (chosen !== undefined) {
    if (egress.publicAddress !== undefined && seen !== undefined && usable(seen.address) && !sameAddress(seen.address, chosen.address)) {
      return {
        address: chosen.address,
        finding: warn(
          `${chosen.address} (${chosen.source}), but ${seen.exchanger} saw ${seen.address} in its EHLO reply`,
          `set publicAddress (--public-address) to the address exchangers see, ${seen.address}, or route this egress out of ${chosen.address}`,
        ),
      };
    }
    return { address: chosen.address, finding: ok(`${chosen.address} (${chosen.source})`) };
  }
  if (candidates.length > 0) {
    const known = candidates.map((candidate) => `${candidate.address} (${candidate.source})`).join(', ');
    return {
      finding: warn(
        `unknown: only ${known}, not a public address`,
        'private and loopback addresses are only used with --allow-private-addresses; give the address exchangers see (--public-address)',
      ),
    };
  }
  return {
    finding: warn(
      'unknown: no publicAddress, no localAddress, and no exchanger named the address it saw',
      "give the address exchangers see this egress come from (--public-address, the egress's publicAddress)",
    ),
  };
}

export interface PtrCheck {
  readonly finding: Finding;
  /** The names the PTR records give (confirmed or not), for the `helo` check. */
  readonly names: readonly string[];
}

export async function checkPtr(resolver: DoctorResolver, address: string, heloName: string): Promise<PtrCheck> {
  const reverse = reverseName(address);
  const ptr = await answer(resolver.resolvePtr(reverse));
  const setIt = `ask whoever holds ${address} (the hosting provider) to set its reverse DNS to the HELO name ${heloName}, whose ${recordType(address)} record must give ${address} back`;
  if (!ptr.ok && !isAbsence(ptr.code)) {
    return { names: [], finding: warn(`the PTR record of ${address} (${reverse}) could not be looked up: ${ptr.code}`, 'check the DNS server (--dns-server) and try again') };
  }
  const names = ptr.ok ? ptr.records : [];
  if (names.length === 0) return { names, finding: fail(`no PTR record for ${address} (${reverse})`, setIt) };
  const forward = await Promise.all(names.map((name) => addressesLike(resolver, name, address)));
  const confirmed = names.find((_, i) => { const f = forward[i]!; return f.ok && f.records.some((a) => sameAddress(a, address)); });
  if (confirmed !== undefined) return { names, finding: ok(`${address} → ${confirmed} → ${address}`) };
  const gives = names.map((name, i) => { const f = forward[i]!; return `${name} → ${f.ok ? f.records.join(' ') || 'nothing' : f.code}`; }).join(', ');
  return {
    names,
    finding: fail(
      `the PTR name of ${address} does not resolve back to it (${gives})`,
      `give ${names[0]} the ${recordType(address)} record ${address} (forward-confirmed reverse DNS), or point the PTR record at a name that has it`,
    ),
  };
}

/** `ptrNames`: the names of the `ptr` check, when it ran. */
export async function checkHelo(resolver: DoctorResolver, heloName: string, address: string, ptrNames: readonly string[]): Promise<Finding> {
  const hint = ptrNames.length > 0 ? ` (such as the PTR name ${ptrNames[0]})` : '';
  if (!isDomainName(heloName) || !heloName.replace(/\.$/u, '').includes('.')) {
    return fail(`${heloName} is not a fully qualified domain name (RFC 5321 §4.1.1.1)`, `use the host's full name as the HELO name (--helo-name)${hint}`);
  }
  const forward = await addressesLike(resolver, heloName, address);
  const fix = `give ${heloName} the ${recordType(address)} record ${address}, or use a HELO name (--helo-name) that has it${hint}`;
  if (!forward.ok && !isAbsence(forward.code)) {
    return warn(`the addresses of ${heloName} could not be looked up: ${forward.code}`, 'check the DNS server (--dns-server) and try again');
  }
  const addresses = forward.ok ? forward.records : [];
  if (addresses.length === 0) return fail(`${heloName} has no ${recordType(address)} record`, fix);
  if (!addresses.some((a) => sameAddress(a, address))) return fail(`${heloName} resolves to ${addresses.join(' ')}, not to ${address}`, fix);
  const bare = heloName.replace(/\.$/u, '').toLowerCase();
  if (ptrNames.length > 0 && !ptrNames.some((name) => name.toLowerCase() === bare)) {
    return warn(
      `${heloName} resolves to ${address}, but the PTR name of ${address} is ${ptrNames.join(', ')}`,
      `use ${ptrNames[0]} as the HELO name (--helo-name), or point the PTR record at ${heloName}`,
    );
  }
  return ok(`${heloName} resolves to ${address}${ptrNames.length > 0 ? ', and is its PTR name' : ''}`);
}

function recordType(address: string): 'A' | 'AAAA' {
  return isIPv4(address) ? 'A' : 'AAAA';
}
