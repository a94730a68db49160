/**
 * A user's firewall: the client addresses it may be used from, as inclusive ranges `startIP`–`endIP` of one address
 * family. Plain functions over the stored settings; the server calls `firewallAdmits` with the request's address.
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { FirewallRule, UserDetail } from './types.js';

export type AddressFamily = FirewallRule['addressFamily'];

/** An IPv4 address (dotted quad) as a number, or null. */
export function ipv4Value(text: string): bigint | null {
  if (!isIPv4(text)) return null;
  return text.split('.').reduce((sum, part) => (sum << 8n) + BigInt(part), 0n);
}

/** An IPv6 address (any RFC 4291 §2.2 form, a dotted IPv4 tail included; no zone) as a 128-bit number, or null. */
export function ipv6Value(text: string): bigint | null {
  if (!isIPv6(text) || text.includes('%')) return null;
  let address = text.toLowerCase();
  if (address.includes('.')) {
    // A dotted IPv4 tail (`::ffff:192.0.2.1`) becomes its two hexadecimal groups.
    const lastColon = address.lastIndexOf(':');
    const v4 = ipv4Value(address.slice(lastColon + 1));
    if (v4 === null) return null;
    address = `${address.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = address.split('::');
  const groupsOf = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const groups = [...left, ...new Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((sum, group) => (sum << 16n) + BigInt(parseInt(group, 16)), 0n);
}

/** An address of `family` as a number, or null when it is not one. */
export function addressValue(text: string, family: AddressFamily): bigint | null {
  return family === 'IPv4' ? ipv4Value(text) : ipv6Value(text);
}

/** ::ffff:0:0/96 (RFC 4291 §2.5.5.2). */
const MAPPED_PREFIX = 0xffffn << 32n;
const MAPPED_MASK = ~0xffffffffn & ((1n << 128n) - 1n);

/**
 * A client's address as the firewall reads it: its family and number. An IPv4-mapped IPv6 address (in either
 * spelling, `::ffff:10.0.0.5` or `::ffff:a00:5`) is the IPv4 address it maps, and a zone (`fe80::1%eth0`) is dropped.
 * Null for anything else.
 */
export function clientAddressValue(text: string): { family: AddressFamily; value: bigint } | null {
  const v4 = ipv4Value(text);
  if (v4 !== null) return { family: 'IPv4', value: v4 };
  const zone = text.indexOf('%');
  const v6 = ipv6Value(zone < 0 ? text : text.slice(0, zone));
  if (v6 === null) return null;
  if ((v6 & MAPPED_MASK) === MAPPED_PREFIX) return { family: 'IPv4', value: v6 & 0xffffffffn };
  return { family: 'IPv6', value: v6 };
}

/** Whether the address lies in the rule's inclusive range (a rule of the other family never holds it). */
export function ruleHolds(rule: FirewallRule, client: { family: AddressFamily; value: bigint }): boolean {
  if (rule.addressFamily !== client.family) return false;
  const start = addressValue(rule.startIP, rule.addressFamily);
  const end = addressValue(rule.endIP, rule.addressFamily);
  return start !== null && end !== null && start <= client.value && client.value <= end;
}

/**
 * Whether the firewall lets a request from `clientIp` through: always when it is disabled; when it is enabled, only
 * from an address some rule holds (enabled with no rule: from nowhere). An address that cannot be read is refused.
 */
export function firewallAdmits(firewall: UserDetail['firewall'], clientIp: string): boolean {
  if (!firewall.isEnabled) return true;
  const client = clientAddressValue(clientIp);
  return client !== null && firewall.rules.some((rule) => ruleHolds(rule, client));
}
