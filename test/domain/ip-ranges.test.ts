import { describe, expect, it } from 'vitest';
import { classifyAddress, isGlobalAddress } from '../../packages/mailverify/src/net/ip-ranges.js';

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'global'],
    ['1.1.1.1', 'global'],
    ['93.184.216.34', 'global'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['11.0.0.1', 'global'],
    ['100.64.0.1', 'sharedAddressSpace'],
    ['100.127.255.255', 'sharedAddressSpace'],
    ['100.128.0.1', 'global'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'linkLocal'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'global'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.20.0.1', 'global'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['2606:4700:4700::1111', 'global'],
    ['2a00:1450:4001:80b::200e', 'global'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:8.8.8.8', 'global'],
    ['::ffff:10.1.2.3', 'private'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['64:ff9b::8.8.8.8', 'global'],
    ['64:ff9b:1::1', 'private'],
    ['100::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['2001:db8::1', 'documentation'],
    ['2002:c000:0204::1', 'reserved'],
    ['3fff::1', 'documentation'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['4000::1', 'reserved'],
    ['::2', 'reserved'],
    ['not-an-ip', 'invalid'],
    ['256.1.1.1', 'invalid'],
    ['1.2.3', 'invalid'],
    ['', 'invalid'],
  ])('%s is %s', (address, category) => {
    expect(classifyAddress(address)).toBe(category);
  });

  it('calls only global addresses global', () => {
    expect(isGlobalAddress('8.8.4.4')).toBe(true);
    expect(isGlobalAddress('127.0.0.1')).toBe(false);
    expect(isGlobalAddress('::ffff:169.254.1.1')).toBe(false);
  });
});
