import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { literalIpAddress } from '../../packages/mailverify/src/net/literal-address.js';
import { classifyAddress } from '../../packages/mailverify/src/net/ip-ranges.js';
import { isAddressLiteral } from '../../packages/mailverify/src/syntax/literal.js';

describe('literalIpAddress', () => {
  it.each([
    // IPv4: leading zeros are decimal, never octal.
    ['[192.0.2.1]', '192.0.2.1'],
    ['[010.0.0.1]', '10.0.0.1'],
    ['[001.002.003.004]', '1.2.3.4'],
    ['[127.000.000.001]', '127.0.0.1'],
    ['[0.0.0.0]', '0.0.0.0'],
    ['[255.255.255.255]', '255.255.255.255'],
    ['[008.008.008.008]', '8.8.8.8'],
    // IPv6, in the form of RFC 5952 §4.
    ['[IPv6:2001:db8::1]', '2001:db8::1'],
    ['[ipv6:2001:DB8::1]', '2001:db8::1'],
    ['[IPV6:2001:0db8:0000:0000:0000:0000:0000:0001]', '2001:db8::1'],
    ['[IPv6:2001:db8:0:0:1:0:0:1]', '2001:db8::1:0:0:1'], // the first of two equal runs
    ['[IPv6:2001:db8:0:1:0:0:0:1]', '2001:db8:0:1::1'], // the longest run, not the first
    ['[IPv6:2001:db8:0:1:1:1:1:1]', '2001:db8:0:1:1:1:1:1'], // one zero group stays
    ['[IPv6:2001:db8::1:1:1:1:1]', '2001:db8:0:1:1:1:1:1'], // `::` for a single group
    ['[IPv6:::]', '::'],
    ['[IPv6:::1]', '::1'],
    ['[IPv6:1::]', '1::'],
    ['[IPv6:fe80::1]', 'fe80::1'],
    // An embedded IPv4 tail becomes two groups.
    ['[IPv6:2001:4860::008.008.008.008]', '2001:4860::808:808'],
    ['[IPv6:2001:4860::8.8.8.8]', '2001:4860::808:808'],
    ['[IPv6:64:ff9b::192.0.2.33]', '64:ff9b::c000:221'],
    ['[IPv6:1:2:3:4:5:6:1.2.3.4]', '1:2:3:4:5:6:102:304'],
    ['[IPv6:::1.2.3.4]', '::102:304'], // IPv4-compatible (deprecated): stays IPv6
    // IPv4-mapped: the IPv4 address itself, whichever way it is written.
    ['[IPv6:::ffff:127.000.000.001]', '127.0.0.1'],
    ['[IPv6:::ffff:127.0.0.1]', '127.0.0.1'],
    ['[IPv6:::FFFF:7f00:1]', '127.0.0.1'],
    ['[IPv6:0:0:0:0:0:ffff:8.8.8.8]', '8.8.8.8'],
    ['[IPv6:0000:0000:0000:0000:0000:FFFF:0808:0808]', '8.8.8.8'],
  ])('%s is %s', (literal, address) => {
    expect(literalIpAddress(literal)).toBe(address);
    expect(isIP(address)).not.toBe(0);
  });

  it.each([
    '',
    '[]',
    '192.0.2.1', // no brackets
    '[192.0.2.1',
    '192.0.2.1]',
    '[ 192.0.2.1]',
    '[192.0.2.256]',
    '[192.0.2]',
    '[192.0.2.1.5]',
    '[0192.0.2.1]', // 4 digits (RFC 5321 Snum is 1*3DIGIT)
    '[192.0.2.-1]',
    '[0x7f.0.0.1]',
    '[IPv6:192.0.2.1]',
    '[IPv6:]',
    '[IPv6:1:2:3:4:5:6:7]', // 7 groups without `::`
    '[IPv6:1:2:3:4:5:6:7:8:9]',
    '[IPv6:1:2:3:4::5:6:7:8]', // `::` with 8 groups written
    '[IPv6:1::2::3]',
    '[IPv6::1]',
    '[IPv6:1:]',
    '[IPv6:1::2:]',
    '[IPv6:12345::1]',
    '[IPv6:g::1]',
    '[IPv6:1:2:3:4:5:6:7:1.2.3.4]', // an IPv4 tail after 7 groups
    '[IPv6:1:2:3:4:5::6:1.2.3.4]', // `::` with 8 groups' worth written
    '[IPv6:1.2.3.4::1]',
    '[IPv6:::ffff:1.2.3.256]',
    '[IPv6:fe80::1%eth0]', // no zones in a literal
    '[IPv6 ::1]',
    '[tag:content]', // a general address literal
    '[IPv4:192.0.2.1]',
  ])('%j is not an IP address', (literal) => {
    expect(literalIpAddress(literal)).toBeNull();
  });

  it('gives what classifyAddress reads right: the mapped loopback is loopback, 2001:4860::/32 is global', () => {
    const categoryOf = (literal: string) => classifyAddress(literalIpAddress(literal) ?? '');
    expect(categoryOf('[IPv6:::ffff:127.000.000.001]')).toBe('loopback');
    expect(categoryOf('[IPv6:::ffff:010.001.002.003]')).toBe('private');
    expect(categoryOf('[IPv6:::ffff:169.254.169.254]')).toBe('linkLocal');
    expect(categoryOf('[IPv6:2001:4860::008.008.008.008]')).toBe('global');
    expect(categoryOf('[IPv6:64:ff9b::010.0.0.1]')).toBe('private'); // NAT64 of a private address
    expect(categoryOf('[127.000.000.001]')).toBe('loopback');
    expect(categoryOf('[008.008.008.008]')).toBe('global');
  });

  const group = fc.integer({ min: 0, max: 0xffff });
  const groups = fc.array(fc.oneof(group, fc.constant(0)), { minLength: 8, maxLength: 8 });
  const notMapped = (g: number[]) => !(g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff);

  it('writes IPv6 as the WHATWG URL serializer does (also RFC 5952), from the full form in any case and padding', () => {
    fc.assert(
      fc.property(groups.filter(notMapped), fc.boolean(), fc.boolean(), (g, upper, pad) => {
        let written = g.map((x) => (pad ? x.toString(16).padStart(4, '0') : x.toString(16))).join(':');
        if (upper) written = written.toUpperCase();
        const expected = new URL(`http://[${written}]/`).hostname.slice(1, -1);
        expect(literalIpAddress(`[IPv6:${written}]`)).toBe(expected);
      }),
    );
  });

  it('reads back its own output, and any `::` or IPv4-tail spelling of the same groups, as the same address', () => {
    fc.assert(
      fc.property(groups.filter(notMapped), fc.integer({ min: 0, max: 7 }), fc.integer({ min: 1, max: 8 }), (g, start, length) => {
        const canonical = literalIpAddress(`[IPv6:${g.map((x) => x.toString(16)).join(':')}]`)!;
        expect(literalIpAddress(`[IPv6:${canonical}]`)).toBe(canonical);
        // Any run of zero groups may be the `::`.
        const end = Math.min(8, start + length);
        if (g.slice(start, end).every((x) => x === 0)) {
          const hex = g.map((x) => x.toString(16));
          expect(literalIpAddress(`[IPv6:${hex.slice(0, start).join(':')}::${hex.slice(end).join(':')}]`)).toBe(canonical);
        }
        // The last two groups as an IPv4 address with leading zeros.
        const octets = [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].map((o) => String(o).padStart(3, '0'));
        const tail = `${g.slice(0, 6).map((x) => x.toString(16)).join(':')}:${octets.join('.')}`;
        expect(literalIpAddress(`[IPv6:${tail}]`)).toBe(canonical);
      }),
    );
  });

  it('reads every IPv4 address, padded or not, as Node does unpadded; mapped into IPv6 it is the same address', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }), fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), (octets, pads) => {
        const plain = octets.join('.');
        const padded = octets.map((o, i) => (pads[i] ? String(o).padStart(3, '0') : String(o))).join('.');
        expect(literalIpAddress(`[${padded}]`)).toBe(plain);
        expect(literalIpAddress(`[IPv6:::ffff:${padded}]`)).toBe(plain);
        expect(isIP(plain)).toBe(4);
        expect(classifyAddress(literalIpAddress(`[IPv6:::FFFF:${padded}]`)!)).toBe(classifyAddress(plain));
      }),
    );
  });

  it('gives an address for exactly the literals the parser accepts', () => {
    // Near-misses and hits alike: groups and octets in and out of range, `::` anywhere, an IPv4 tail or not.
    const hexGroup = fc.oneof(
      fc.integer({ min: 0, max: 0xffff }).map((x) => x.toString(16)),
      fc.constantFrom('0000', 'FFFF', '00000', '12345', 'g', ''),
    );
    const octet = fc.oneof(fc.integer({ min: 0, max: 255 }).map(String), fc.constantFrom('000', '010', '255', '256', '1000', ''));
    const ipv4 = fc.array(octet, { minLength: 3, maxLength: 5 }).map((octets) => octets.join('.'));
    const ipv6 = fc
      .tuple(fc.array(hexGroup, { maxLength: 9 }), fc.option(fc.integer({ min: 0, max: 9 })), fc.option(ipv4))
      .map(([groups, gap, tail]) => {
        let text = gap === null ? groups.join(':') : `${groups.slice(0, gap).join(':')}::${groups.slice(gap).join(':')}`;
        if (tail !== null) text += text === '' || text.endsWith(':') ? tail : `:${tail}`;
        return `IPv6:${text}`;
      });
    const inner = fc.oneof(ipv4, ipv6, ipv6.map((text) => text.toLowerCase()));
    fc.assert(
      fc.property(inner, (text) => {
        expect([text, literalIpAddress(`[${text}]`) !== null]).toEqual([text, isAddressLiteral(text, 0, text.length)]);
      }),
      { numRuns: 20_000 },
    );
  });
});
