/**
 * The IP address an address literal names (RFC 5321 §4.1.3), in the canonical text form that `node:net` connects to and
 * `classifyAddress` reads: the literal's own spelling may have IPv4 parts with leading zeros (README, "Syntax policy"),
 * which Node reads as no address at all, or an IPv4-mapped IPv6 address standing for an IPv4 one.
 */

const IPV6_TAG = /^ipv6:/i;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const HEX_GROUP = /^[0-9a-f]{1,4}$/i;

/**
 * The IP address of the domain part of an address, brackets included (`[192.0.2.1]`, `[IPv6:2001:db8::1]`, tag in
 * any case), or null when it is not an IPv4 or IPv6 address literal.
 *
 * - IPv4 parts are read as decimal whatever their leading zeros: `[010.0.0.1]` is `10.0.0.1`.
 * - IPv6 comes out in the form of RFC 5952 §4 (lower case, no leading zeros, the first longest run of two or more
 *   zero groups as `::`), an embedded IPv4 tail as its two groups: `[IPv6:2001:4860::008.008.008.008]` is
 *   `2001:4860::808:808`.
 * - An IPv4-mapped address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) is the IPv4 address it maps: connecting to it is
 *   connecting there, and its category is that address's.
 */
export function literalIpAddress(domainPart: string): string | null {
  if (!domainPart.startsWith('[') || !domainPart.endsWith(']') || domainPart.length < 3) return null;
  const inner = domainPart.slice(1, -1);
  if (!IPV6_TAG.test(inner)) return ipv4Octets(inner)?.join('.') ?? null;
  const groups = ipv6Groups(inner.slice('IPv6:'.length));
  if (groups === null) return null;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return formatIpv6(groups);
}

/** RFC 5321 §4.1.3 IPv4-address-literal: four Snum (1 to 3 digits, 0 to 255), as numbers; or null. */
function ipv4Octets(text: string): number[] | null {
  const match = IPV4.exec(text);
  if (match === null) return null;
  const octets = match.slice(1).map(Number);
  return octets.every((octet) => octet <= 255) ? octets : null;
}

/**
 * RFC 5321 §4.1.3 IPv6-addr (RFC 4291 §2.2): eight groups of 1 to 4 hex digits, or fewer around one `::` standing for
 * one or more zero groups, the last two of either form possibly written as an IPv4 address. The eight groups, or null.
 */
function ipv6Groups(text: string): number[] | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const compressed = halves.length === 2;
  const head = groupsOf(halves[0]!, !compressed);
  const tail = compressed ? groupsOf(halves[1]!, true) : [];
  if (head === null || tail === null) return null;
  const written = head.length + tail.length;
  if (compressed ? written > 7 : written !== 8) return null;
  return [...head, ...new Array<number>(8 - written).fill(0), ...tail];
}

/** The groups of a colon-separated run; `endsAddress`: its last piece may be an IPv4 address (two groups). */
function groupsOf(run: string, endsAddress: boolean): number[] | null {
  if (run === '') return [];
  const pieces = run.split(':');
  const groups: number[] = [];
  for (const [i, piece] of pieces.entries()) {
    if (endsAddress && i === pieces.length - 1 && piece.includes('.')) {
      const octets = ipv4Octets(piece);
      if (octets === null) return null;
      groups.push((octets[0]! << 8) | octets[1]!, (octets[2]! << 8) | octets[3]!);
    } else if (HEX_GROUP.test(piece)) {
      groups.push(parseInt(piece, 16));
    } else {
      return null;
    }
  }
  return groups;
}

/** RFC 5952 §4: the recommended text form of eight groups. */
function formatIpv6(groups: readonly number[]): string {
  let runStart = -1;
  let runLength = 1; // §4.2.2: a single zero group is not shortened
  for (let i = 0; i < groups.length; ) {
    let end = i;
    while (end < groups.length && groups[end] === 0) end++;
    if (end - i > runLength) [runStart, runLength] = [i, end - i];
    i = Math.max(end, i + 1);
  }
  const hex = groups.map((group) => group.toString(16));
  if (runStart < 0) return hex.join(':');
  return `${hex.slice(0, runStart).join(':')}::${hex.slice(runStart + runLength).join(':')}`;
}
