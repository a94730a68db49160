/**
 * Classification of IP addresses by the IANA special-purpose address registries (RFC 6890 and its updates): which
 * addresses are global, i.e. may be resolved to or connected to by default (docs/verification.md#safety-defaults). Used
 * for DNS answers, mail exchangers and domain literals alike.
 */
import { isIPv4, isIPv6 } from 'node:net';

export type AddressCategory =
  | 'global'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'sharedAddressSpace'
  | 'linkLocal'
  | 'multicast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'invalid';

interface Range {
  readonly prefix: string;
  readonly bits: number;
  readonly category: Exclude<AddressCategory, 'global' | 'invalid'>;
  /** IPv6 ranges that embed an IPv4 address in their last 32 bits: that address decides. */
  readonly embedsIpv4?: boolean;
  readonly source: string;
}

// IANA IPv4 Special-Purpose Address Registry.
const IPV4_RANGES: readonly Range[] = [
  { prefix: '0.0.0.0', bits: 8, category: 'unspecified', source: 'RFC 791 "this network"' },
  { prefix: '10.0.0.0', bits: 8, category: 'private', source: 'RFC 1918' },
  { prefix: '100.64.0.0', bits: 10, category: 'sharedAddressSpace', source: 'RFC 6598 (CGNAT)' },
  { prefix: '127.0.0.0', bits: 8, category: 'loopback', source: 'RFC 1122' },
  { prefix: '169.254.0.0', bits: 16, category: 'linkLocal', source: 'RFC 3927' },
  { prefix: '172.16.0.0', bits: 12, category: 'private', source: 'RFC 1918' },
  { prefix: '192.0.0.0', bits: 24, category: 'reserved', source: 'RFC 6890 IETF protocol assignments' },
  { prefix: '192.0.2.0', bits: 24, category: 'documentation', source: 'RFC 5737 TEST-NET-1' },
  { prefix: '192.88.99.0', bits: 24, category: 'reserved', source: 'RFC 7526 deprecated 6to4 relay anycast' },
  { prefix: '192.168.0.0', bits: 16, category: 'private', source: 'RFC 1918' },
  { prefix: '198.18.0.0', bits: 15, category: 'benchmarking', source: 'RFC 2544' },
  { prefix: '198.51.100.0', bits: 24, category: 'documentation', source: 'RFC 5737 TEST-NET-2' },
  { prefix: '203.0.113.0', bits: 24, category: 'documentation', source: 'RFC 5737 TEST-NET-3' },
  { prefix: '224.0.0.0', bits: 4, category: 'multicast', source: 'RFC 5771' },
  { prefix: '240.0.0.0', bits: 4, category: 'reserved', source: 'RFC 1112 (includes 255.255.255.255 broadcast, RFC 919)' },
];

// IANA IPv6 Special-Purpose Address Registry; everything outside 2000::/3 is not global unicast (RFC 4291 §2.4).
const IPV6_RANGES: readonly Range[] = [
  { prefix: '::', bits: 128, category: 'unspecified', source: 'RFC 4291' },
  { prefix: '::1', bits: 128, category: 'loopback', source: 'RFC 4291' },
  { prefix: '::ffff:0:0', bits: 96, category: 'reserved', embedsIpv4: true, source: 'RFC 4291 IPv4-mapped' },
  { prefix: '64:ff9b::', bits: 96, category: 'reserved', embedsIpv4: true, source: 'RFC 6052 NAT64 well-known prefix' },
  { prefix: '64:ff9b:1::', bits: 48, category: 'private', source: 'RFC 8215 local-use NAT64' },
  { prefix: '100::', bits: 64, category: 'reserved', source: 'RFC 6666 discard-only' },
  { prefix: '2001::', bits: 23, category: 'reserved', source: 'RFC 2928 IETF protocol assignments (Teredo, ORCHID...)' },
  { prefix: '2001:db8::', bits: 32, category: 'documentation', source: 'RFC 3849' },
  { prefix: '2002::', bits: 16, category: 'reserved', source: 'RFC 3056 6to4' },
  { prefix: '3fff::', bits: 20, category: 'documentation', source: 'RFC 9637' },
  { prefix: '5f00::', bits: 16, category: 'reserved', source: 'RFC 9602 SRv6 SIDs' },
  { prefix: 'fc00::', bits: 7, category: 'private', source: 'RFC 4193 unique local' },
  { prefix: 'fe80::', bits: 10, category: 'linkLocal', source: 'RFC 4291' },
  { prefix: 'fec0::', bits: 10, category: 'private', source: 'RFC 3879 deprecated site-local' },
  { prefix: 'ff00::', bits: 8, category: 'multicast', source: 'RFC 4291' },
];

/** An IPv4 address as an unsigned 32-bit number, or null. */
function ipv4ToNumber(address: string): number | null {
  if (!isIPv4(address)) return null;
  const parts = address.split('.');
  return (((Number(parts[0]) << 24) | (Number(parts[1]) << 16) | (Number(parts[2]) << 8) | Number(parts[3])) >>> 0);
}

/** An IPv6 address as eight 16-bit groups (an embedded dotted IPv4 tail included), or null. */
export function ipv6ToGroups(address: string): number[] | null {
  if (!isIPv6(address)) return null;
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  if (text.includes('.')) {
    // Rewrite a dotted IPv4 tail (`::ffff:192.0.2.1`) as its two hexadecimal groups.
    const lastColon = text.lastIndexOf(':');
    const v4 = ipv4ToNumber(text.slice(lastColon + 1));
    if (v4 === null) return null;
    text = `${text.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groupsOf = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const zeros = 8 - left.length - right.length;
  if (zeros < 0 || (tail === undefined && zeros !== 0)) return null;
  return [...left, ...new Array<number>(zeros).fill(0), ...right];
}

const parsedV4 = IPV4_RANGES.map((r) => ({ ...r, value: ipv4ToNumber(r.prefix)! }));
const parsedV6 = IPV6_RANGES.map((r) => ({ ...r, groups: ipv6ToGroups(r.prefix)! }));

function inV4Range(value: number, prefix: number, bits: number): boolean {
  if (bits === 0) return true;
  const mask = bits === 32 ? 0xffffffff : (~0 << (32 - bits)) >>> 0;
  return ((value & mask) >>> 0) === ((prefix & mask) >>> 0);
}

function inV6Range(groups: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const take = Math.min(16, bits);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if ((groups[i]! & mask) !== (prefix[i]! & mask)) return false;
  }
  return true;
}

function classifyIpv4(value: number): AddressCategory {
  // The most specific (longest) matching prefix decides.
  let best: (typeof parsedV4)[number] | undefined;
  for (const range of parsedV4) {
    if (inV4Range(value, range.value, range.bits) && (best === undefined || range.bits > best.bits)) best = range;
  }
  return best?.category ?? 'global';
}

/** The category of an IPv4 or IPv6 address (text form); 'invalid' when it is neither. */
export function classifyAddress(address: string): AddressCategory {
  const v4 = ipv4ToNumber(address);
  if (v4 !== null) return classifyIpv4(v4);
  const groups = ipv6ToGroups(address);
  if (groups === null) return 'invalid';
  let best: (typeof parsedV6)[number] | undefined;
  for (const range of parsedV6) {
    if (inV6Range(groups, range.groups, range.bits) && (best === undefined || range.bits > best.bits)) best = range;
  }
  if (best?.embedsIpv4) return classifyIpv4(((groups[6]! << 16) | groups[7]!) >>> 0);
  if (best !== undefined) return best.category;
  // RFC 4291 §2.4: global unicast is 2000::/3; the rest of the space is unassigned.
  return (groups[0]! & 0xe000) === 0x2000 ? 'global' : 'reserved';
}

/** True when the address may be resolved to or connected to by default. */
export function isGlobalAddress(address: string): boolean {
  return classifyAddress(address) === 'global';
}
