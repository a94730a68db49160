/**
 * RFC 5321 §4.1.3 address literals: `[IPv4]` and `[IPv6:...]` (tag case-insensitive). An IPv6 `::` that stands for a
 * single group is accepted (docs/syntax.md#accepted-forms, as RFC 4291 §2.2 parsers do), and IPv4 parts may have leading zeros.
 * General-address-literal tags are not accepted.
 */
import { Ch } from './chars.js';

const IPV6_TAG = 'ipv6:';

/** True when `input[from, to)` (the text between `[` and `]`) is a well-formed IPv4 or IPv6 address literal. */
export function isAddressLiteral(input: string, from: number, to: number): boolean {
  if (hasIpv6Tag(input, from, to)) return isIpv6(input, from + IPV6_TAG.length, to);
  return scanIpv4(input, from, to) === to;
}

function hasIpv6Tag(input: string, from: number, to: number): boolean {
  if (to - from < IPV6_TAG.length) return false;
  for (let i = 0; i < IPV6_TAG.length; i++) {
    if ((input.charCodeAt(from + i) | 0x20) !== IPV6_TAG.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * RFC 5321 §4.1.3 IPv4-address-literal = Snum 3("." Snum), Snum = 1*3DIGIT of value 0-255. Returns the index after
 * the address, or -1 when `input[from, to)` does not start with one.
 */
function scanIpv4(input: string, from: number, to: number): number {
  let pos = from;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (input.charCodeAt(pos) !== Ch.DOT) return -1;
      pos++;
    }
    let value = 0;
    const start = pos;
    while (pos < to && pos - start < 3) {
      const c = input.charCodeAt(pos);
      if (c < Ch.DIGIT_0 || c > Ch.DIGIT_9) break;
      value = value * 10 + (c - Ch.DIGIT_0);
      pos++;
    }
    if (pos === start || value > 255) return -1;
  }
  return pos;
}

/**
 * RFC 5321 §4.1.3 IPv6-addr: IPv6-full (8 groups), IPv6-comp (`::`), and the forms ending in an IPv4 address
 * (6 groups, or fewer with `::`), each group 1*4HEXDIG.
 */
function isIpv6(input: string, from: number, to: number): boolean {
  let groups = 0;
  let compressed = false;
  let pos = from;
  if (input.charCodeAt(pos) === Ch.COLON) {
    // A leading colon is only allowed as part of `::`.
    if (input.charCodeAt(pos + 1) !== Ch.COLON) return false;
    compressed = true;
    pos += 2;
    if (pos === to) return true;
  }
  while (pos < to) {
    const start = pos;
    while (pos < to && pos - start < 5 && isHexDigit(input.charCodeAt(pos))) pos++;
    const digits = pos - start;
    if (pos < to && input.charCodeAt(pos) === Ch.DOT) {
      // An IPv4 tail takes the place of two groups and ends the address.
      return scanIpv4(input, start, to) === to && (compressed ? groups <= 5 : groups === 6);
    }
    if (digits === 0 || digits > 4) return false;
    groups++;
    if (pos === to) break;
    if (input.charCodeAt(pos) !== Ch.COLON) return false;
    pos++;
    if (input.charCodeAt(pos) === Ch.COLON) {
      if (compressed) return false; // `::` at most once
      compressed = true;
      pos++;
      if (pos === to) break;
    } else if (pos === to) {
      return false; // a trailing single colon
    }
  }
  return compressed ? groups <= 7 : groups === 8;
}

function isHexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
}
