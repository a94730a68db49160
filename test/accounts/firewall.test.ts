// The firewall's pure matching: the client's address read (IPv4-mapped IPv6 as IPv4, zones dropped) and held, or not,
// by a rule's inclusive range of its own family.
import { describe, expect, it } from 'vitest';
import { clientAddressValue, firewallAdmits, ipv6Value, ruleHolds } from '../../packages/server/src/accounts/firewall.js';
import type { FirewallRule } from '../../packages/server/src/accounts/types.js';

const v4 = (startIP: string, endIP: string): FirewallRule => ({ addressFamily: 'IPv4', displayName: 'v4', startIP, endIP });
const v6 = (startIP: string, endIP: string): FirewallRule => ({ addressFamily: 'IPv6', displayName: 'v6', startIP, endIP });
const enabled = (...rules: FirewallRule[]) => ({ isEnabled: true, rules });

describe('clientAddressValue', () => {
  it('reads IPv4, IPv6 and IPv4-mapped IPv6 (either spelling) as the IPv4 address it maps', () => {
    expect(clientAddressValue('10.0.0.5')).toEqual({ family: 'IPv4', value: 0x0a000005n });
    expect(clientAddressValue('::ffff:10.0.0.5')).toEqual({ family: 'IPv4', value: 0x0a000005n });
    expect(clientAddressValue('::FFFF:a00:5')).toEqual({ family: 'IPv4', value: 0x0a000005n });
    expect(clientAddressValue('::1')).toEqual({ family: 'IPv6', value: 1n });
    expect(clientAddressValue('fe80::1%eth0')).toEqual({ family: 'IPv6', value: (0xfe80n << 112n) | 1n });
    // An IPv4-compatible (deprecated, ::a.b.c.d) or NAT64 address is not a mapped one: it stays IPv6.
    expect(clientAddressValue('::10.0.0.5')?.family).toBe('IPv6');
    expect(clientAddressValue('64:ff9b::10.0.0.5')?.family).toBe('IPv6');
    expect(clientAddressValue('not an address')).toBeNull();
    expect(clientAddressValue('')).toBeNull();
  });

  it('ipv6Value: every spelling of one address is one number', () => {
    const one = ipv6Value('2001:db8::1');
    for (const spelling of ['2001:DB8::1', '2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8:0:0:0:0:0:1', '2001:db8::0.0.0.1']) {
      expect(ipv6Value(spelling)).toBe(one);
    }
    expect(ipv6Value('2001:db8::1%eth0')).toBeNull();
    expect(ipv6Value('192.0.2.1')).toBeNull();
  });
});

describe('ruleHolds', () => {
  it('an inclusive range: both ends are in, their neighbours out', () => {
    const rule = v4('192.0.2.10', '192.0.2.20');
    const at = (ip: string) => ruleHolds(rule, clientAddressValue(ip)!);
    expect([at('192.0.2.9'), at('192.0.2.10'), at('192.0.2.15'), at('192.0.2.20'), at('192.0.2.21')]).toEqual([false, true, true, true, false]);
    expect(ruleHolds(v4('0.0.0.0', '255.255.255.255'), clientAddressValue('255.255.255.255')!)).toBe(true);
    expect(ruleHolds(v4('198.51.100.7', '198.51.100.7'), clientAddressValue('198.51.100.7')!)).toBe(true);
  });

  it('IPv6 ranges compare all 128 bits', () => {
    const rule = v6('2001:db8::', '2001:db8::ffff:ffff:ffff:ffff');
    expect(ruleHolds(rule, clientAddressValue('2001:db8::abcd')!)).toBe(true);
    expect(ruleHolds(rule, clientAddressValue('2001:db8:0:1::')!)).toBe(false);
    expect(ruleHolds(v6('::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), clientAddressValue('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')!)).toBe(true);
  });

  it('a rule of the other family never holds an address: an IPv4-mapped client is an IPv4 one', () => {
    const everyV6 = v6('::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff');
    expect(ruleHolds(everyV6, clientAddressValue('10.0.0.5')!)).toBe(false);
    expect(ruleHolds(everyV6, clientAddressValue('::ffff:10.0.0.5')!)).toBe(false);
    expect(ruleHolds(v4('10.0.0.0', '10.0.0.255'), clientAddressValue('::ffff:10.0.0.5')!)).toBe(true);
    expect(ruleHolds(v4('0.0.0.0', '255.255.255.255'), clientAddressValue('::1')!)).toBe(false);
  });
});

describe('firewallAdmits', () => {
  it('disabled: every address, rules or not, even an unreadable one', () => {
    expect(firewallAdmits({ isEnabled: false, rules: [] }, '203.0.113.1')).toBe(true);
    expect(firewallAdmits({ isEnabled: false, rules: [v4('10.0.0.0', '10.0.0.1')] }, '203.0.113.1')).toBe(true);
  });

  it('enabled: an address some rule holds; with no rule, none', () => {
    const firewall = enabled(v4('10.0.0.0', '10.0.0.255'), v6('::1', '::1'));
    expect(firewallAdmits(firewall, '10.0.0.7')).toBe(true);
    expect(firewallAdmits(firewall, '::ffff:10.0.0.7')).toBe(true);
    expect(firewallAdmits(firewall, '::1')).toBe(true);
    expect(firewallAdmits(firewall, '10.0.1.0')).toBe(false);
    expect(firewallAdmits(firewall, '::2')).toBe(false);
    expect(firewallAdmits(firewall, 'garbage')).toBe(false);
    expect(firewallAdmits(enabled(), '10.0.0.7')).toBe(false);
    expect(firewallAdmits(enabled(), '::1')).toBe(false);
  });
});
