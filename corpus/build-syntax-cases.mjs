#!/usr/bin/env node
// Builds corpus/syntax-cases.jsonl: the expected parseAddress() result for each input, written from the syntax
// policy (spec/decisions.md section 3 plus the team's recorded choices where that section is silent).
//
// Usage: node corpus/build-syntax-cases.mjs            (writes corpus/syntax-cases.jsonl, prints per-status counts)
//
// Row shapes (grouped by status below):
//   failure: [input, where, note]   where = END | 0 | at(sub, nth) | after(sub, nth) | lastAt(sub)
//   success: [input, note] or [input, note, localPart, domainPart]   (the second form when CFWS surrounds the parts)
// Indexes are JavaScript string indexes (UTF-16 code units) and are always computed here, never typed in.
// Success parts: emailAddress = localPart + '@' + domainPart; asciiDomainPart = node:url domainToASCII(domainPart)
// (an address literal is kept exactly as written); the two international flags follow decisions.md section 3 "Output".
// Provider rules (IspSpecificSyntaxFailure) and literal rows are parseAddress-level: a well-formed literal is Success
// here even when the verifier's address policy would later reject it (decisions.md section 3/4).

import { writeFileSync } from 'node:fs';
import { domainToASCII } from 'node:url';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

// ---------------------------------------------------------------------------------------------------------------
// index locators
const END = { end: true }; // the end of the input (input.length)
const at = (sub, nth = 1) => ({ at: sub, nth }); // index of the nth occurrence of sub
const after = (sub, nth = 1) => ({ after: sub, nth }); // index just past the nth occurrence of sub
const lastAt = (sub) => ({ last: sub }); // index of the last occurrence of sub

function nthIndex(input, sub, nth) {
  let i = -1;
  for (let k = 0; k < nth; k++) {
    i = input.indexOf(sub, i + 1);
    if (i < 0) throw new Error(`locator: ${JSON.stringify(sub)} #${nth} not in ${JSON.stringify(input)}`);
  }
  return i;
}
function locate(input, where) {
  if (where === 0) return 0;
  if (where.end) return input.length;
  if ('at' in where) return nthIndex(input, where.at, where.nth);
  if ('after' in where) return nthIndex(input, where.after, where.nth) + where.after.length;
  if ('last' in where) {
    const i = input.lastIndexOf(where.last);
    if (i < 0) throw new Error(`locator: ${JSON.stringify(where.last)} not in ${JSON.stringify(input)}`);
    return i;
  }
  throw new Error('bad locator ' + JSON.stringify(where));
}

// ---------------------------------------------------------------------------------------------------------------
// helpers for long inputs
const rep = (s, n) => s.repeat(n);
const utf8 = (s) => Buffer.byteLength(s, 'utf8');
// an ASCII domain of exactly n octets: labels of at most 63 octets (letters a, b, c, ...), then `.` + tld
function asciiDomain(n, tld = 'com') {
  let rem = n - tld.length; // octets for "label." pieces
  const sizes = [];
  while (rem > 0) {
    let size = Math.min(63, rem - 1);
    if (rem - (size + 1) === 1) size -= 1; // never leave a single octet (it would need an empty label)
    sizes.push(size);
    rem -= size + 1;
  }
  if (rem !== 0) throw new Error('asciiDomain ' + n);
  const d = sizes.map((s, i) => rep('abcdefghijklmnopqrstuvwxyz'[i % 26], s)).join('.') + '.' + tld;
  if (d.length !== n) throw new Error('asciiDomain length ' + n);
  return d;
}
// a label of 63 / 64 octets in A-label form: 'ü' + k × 'a' (k found by search, checked below)
function idnLabelOfAsciiLength(n) {
  for (let k = 1; k < 100; k++) {
    const l = 'ü' + rep('a', k);
    if (domainToASCII(l + '.com').split('.')[0].length === n) return l;
  }
  throw new Error('no IDN label of ' + n);
}
const FW = (s) => [...s].map((c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).join(''); // ASCII → fullwidth

const a64 = rep('a', 64);
const a65 = rep('a', 65);
const D63 = rep('d', 63); // a 63-octet label
const IDN63 = idnLabelOfAsciiLength(63);
const IDN64 = idnLabelOfAsciiLength(64);

// ---------------------------------------------------------------------------------------------------------------
// SUCCESS
const success = [
  // plain ASCII dot-strings
  ['first.last@iana.org', 'plain dot-string'],
  ['test@iana.org', 'plain'],
  ['a@iana.org', 'one-character local part'],
  ['x@a.io', 'short labels, two-letter TLD'],
  ['first.middle.last@iana.org', 'several dots between atoms'],
  ['a.b.c.d.e.f.g.h.i.j@example.com', 'many one-letter atoms'],
  ['user+mailbox@example.com', 'plus in atom'],
  ['customer/department=shipping@example.com', 'slash and equals are atext'],
  ['$A12345@example.com', 'dollar is atext'],
  ['!def!xyz%abc@example.com', 'bang and percent are atext'],
  ['_somename@example.com', 'underscore allowed in the local part'],
  ["!#$%&'*+-/=?^_`{|}~@iana.org", 'every ASCII atext special'],
  ['{test}@iana.org', 'braces are atext'],
  ['test=test@iana.org', 'equals in atom'],
  ['~@iana.org', 'single special atom'],
  ['-test@iana.org', 'leading hyphen in the local part is fine'],
  ['test-@iana.org', 'trailing hyphen in the local part is fine'],
  ["o'reilly@example.ie", 'apostrophe is atext'],
  ['a.b-c_d@example.org', 'mixed atext'],
  ['1234567890@iana.org', 'all-digit local part'],
  ['Test.User@Example.COM', 'case kept in emailAddress, ascii domain lower-cased'],
  ['TEST@IANA.ORG', 'upper-case domain, ascii lower-cased'],
  ['test@sub.domain.iana.org', 'four labels'],
  ['test@iana.co.uk', 'three labels'],
  ['test@a-b.c-d.org', 'inner hyphens in labels'],
  ['test@1-2-3.net', 'digits and hyphens in a label'],
  ['test@123.com', 'all-digit label below the TLD'],
  ['test@1.2.3.com', 'numeric labels, alphabetic TLD'],
  ['test@iana.a1', 'TLD with a digit, not all digits'],
  ['test@iana.1a', 'TLD starting with a digit, not all digits'],
  ['x@x.xx', 'minimal two-label domain'],
  ['test@xn--bcher-kva.de', 'xn-- label that decodes (bücher)'],
  ['test@xn--ls8h.la', 'xn-- label of an emoji'],
  ['test@a.xn--p1ai', 'xn-- TLD (рф)'],
  ['test@xn--hxajbheg2az3al.xn--jxalpdlp', 'two xn-- labels'],
  ['1johnsmith@gmail.com', 'gmail username may start with a digit'],

  // quoted strings
  ['"test"@iana.org', 'unnecessary quotes are kept'],
  ['"\\""@iana.org', 'escaped quote'],
  ['"\\\\"@iana.org', 'escaped backslash'],
  ['"a b"@iana.org', 'space is qtext'],
  ['" "@iana.org', 'single space in quotes'],
  ['"test@test"@iana.org', '@ inside quotes'],
  ['"test\\©"@iana.org', 'escaped non-ASCII is a valid quoted pair (RFC 6532)'],
  ['"\\a"@iana.org', 'escaped ordinary letter'],
  ['"()<>[]:,;@\\\\\\"!#$%&\'*+-/=?^_`{}| ~.a"@example.org', 'all specials inside quotes'],
  ['"Abc\\@def"@example.com', 'escaped @'],
  ['"Fred\\ Bloggs"@example.com', 'escaped space'],
  ['"Joe.\\\\Blow"@example.com', 'escaped backslash after dot'],
  ['"a..b"@iana.org', 'double dot inside quotes'],
  ['".a"@iana.org', 'leading dot inside quotes'],
  ['"a."@iana.org', 'trailing dot inside quotes'],
  ['"john..doe"@example.org', 'double dot inside quotes'],
  ['"very.unusual.@.unusual.com"@example.com', 'dots and @ inside quotes'],
  ['"тест"@iana.org', 'non-ASCII qtext'],
  ['"test"@xn--bcher-kva.de', 'quoted local part, xn-- domain'],
  ['"test"@[1.1.1.1]', 'quoted local part, IPv4 literal'],
  ['"~"@iana.org', 'tilde in quotes (last qtext)'],
  ['"#"@iana.org', 'hash in quotes (first qtext after the quote)'],
  ['"]"@iana.org', 'closing bracket in quotes'],
  ['"\\~"@iana.org', 'escaped tilde (last printable ASCII)'],
  ['"\\ "@iana.org', 'escaped space (first printable ASCII)'],

  // CFWS at the edges
  ['(comment)test@iana.org', 'leading comment', 'test', 'iana.org'],
  ['test(comment)@iana.org', 'comment after the local part', 'test', 'iana.org'],
  ['test@(comment)iana.org', 'comment after the @', 'test', 'iana.org'],
  ['test@iana.org(comment)', 'trailing comment', 'test', 'iana.org'],
  [' test@iana.org ', 'spaces at both edges', 'test', 'iana.org'],
  ['\r\n test@iana.org', 'leading fold', 'test', 'iana.org'],
  ['test@iana.org\r\n ', 'trailing fold', 'test', 'iana.org'],
  ['((nested)comment)test@iana.org', 'nested comment', 'test', 'iana.org'],
  ['(a\\(b)test@iana.org', 'escaped ( in a comment', 'test', 'iana.org'],
  ['(a\\)b)test@iana.org', 'escaped ) in a comment', 'test', 'iana.org'],
  ['(a\\\\)test@iana.org', 'escaped backslash in a comment', 'test', 'iana.org'],
  ['(a\\\tb)test@iana.org', 'backslash + TAB is a valid pair in a comment', 'test', 'iana.org'],
  ['(a\\éb)test@iana.org', 'backslash + non-ASCII in a comment', 'test', 'iana.org'],
  ['(a\tb)test@iana.org', 'TAB inside a comment', 'test', 'iana.org'],
  ['()test@iana.org', 'empty comment', 'test', 'iana.org'],
  ['(ñandú)test@iana.org', 'non-ASCII ctext', 'test', 'iana.org'],
  ['(a@b.org)test@iana.org', '@ inside a comment', 'test', 'iana.org'],
  ['("quoted")test@iana.org', 'quotes are ctext', 'test', 'iana.org'],
  ['\ttest@iana.org\t', 'TABs at the edges', 'test', 'iana.org'],
  ['test\t\t@iana.org', 'TABs before the @', 'test', 'iana.org'],
  ['(c) (d) test@iana.org', 'two comments with white space', 'test', 'iana.org'],
  ['(c)\r\n (d)\r\n test@iana.org', 'two folds separated by a comment (not obs-FWS)', 'test', 'iana.org'],
  ['test (comment) @ (comment) iana.org (comment)', 'CFWS around both parts', 'test', 'iana.org'],
  ['test \r\n @ \r\n iana.org \r\n ', 'one fold in each CFWS run', 'test', 'iana.org'],
  ['"test" (c) @iana.org', 'CFWS after a quoted local part', '"test"', 'iana.org'],
  ['"a"\r\n @iana.org', 'fold after a quoted local part', '"a"', 'iana.org'],
  ['test@iana.org(c)(d)', 'two trailing comments', 'test', 'iana.org'],
  ['test@iana.org (trailing comment with spaces)', 'trailing comment after a space', 'test', 'iana.org'],
  ['test@ [8.8.8.8] (comment)', 'CFWS around an address literal', 'test', '[8.8.8.8]'],
  ['test(c)@iana.org', 'comment right after the local part', 'test', 'iana.org'],

  // international domains
  ['test@ｉａｎａ.org', 'fullwidth letters map to ASCII'],
  ['test@iana。org', 'ideographic full stop is a label separator'],
  ['test@iana．org', 'fullwidth full stop is a label separator'],
  ['test@iana｡org', 'halfwidth ideographic full stop is a label separator'],
  ['test@ｉａｎａ。ｏｒｇ', 'fullwidth labels and separator'],
  ['test@ＥＸＡＭＰＬＥ.ＣＯＭ', 'fullwidth capitals map to lower-case ASCII'],
  ['test@bücher.de', 'U-label'],
  ['test@Bücher.DE', 'U-label with capitals'],
  ['test@münchen.de', 'U-label'],
  ['test@例え.テスト', 'Japanese labels'],
  ['test@пример.рф', 'Cyrillic labels'],
  ['test@ÉCOLE.fr', 'capital accented letter maps to lower case'],
  ['test@faß.de', 'sharp s kept (nontransitional)'],
  ['test@💩.la', 'emoji label'],
  ['test@δοκιμή.gr', 'Greek label'],
  ['test@中国.cn', 'Chinese label'],
  ['test@مثال.com', 'right-to-left label'],
  ['test@ñandú.com', 'two non-ASCII letters in a label'],
  ['test@испытание.com', 'Cyrillic label, ASCII TLD'],
  ['test@ドメイン.テスト', 'Katakana labels'],
  ['test@täst.de', 'U-label'],

  // international local parts
  ['用户@例子.广告', 'Chinese local part and domain'],
  ['jöran@example.se', 'non-ASCII in atom'],
  ['θσερ@εχαμπλε.ψομ', 'Greek local part and domain'],
  ['😆@iana.org', 'astral character in the local part'],
  ['𐐷𤭢@iana.org', 'two astral characters'],
  ['ｔｅｓｔ@iana.org', 'fullwidth letters in the local part stay as written'],
  ['josé.garcía@example.es', 'accented atoms with a dot'],
  ['Pelé@example.com', 'accented local part'],
  ['मेल@उदाहरण.भारत', 'Devanagari local part and domain'],
  ['user＠example@iana.org', 'fullwidth at sign is an ordinary non-ASCII atom character'],

  // address literals
  ['test@[8.8.8.8]', 'IPv4 literal'],
  ['test@[1.1.1.1]', 'IPv4 literal'],
  ['test@[001.2.3.4]', 'IPv4 parts may have leading zeros'],
  ['test@[255.255.255.255]', 'IPv4 parts at 255'],
  ['test@[0.0.0.0]', 'IPv4 parts at 0'],
  ['test@[IPv6:2001:db8::1]', 'IPv6 literal with ::'],
  ['test@[ipv6:2606:4700:4700::1111]', 'IPv6 tag is case-insensitive'],
  ['test@[IPV6:2606:4700:4700::1111]', 'IPv6 tag in capitals'],
  ['test@[IPv6:2606:4700:4700:0:0:0:0:1111]', 'eight IPv6 groups'],
  ['test@[IPv6:0000:0000:0000:0000:0000:0000:0000:0001]', 'eight four-digit groups'],
  ['test@[IPv6:2001:db8:85a3::8a2e:370:7334]', 'IPv6 with :: in the middle'],
  ['test@[IPv6:1:2:3:4:5:6::8]', ':: standing for one group'],
  ['test@[IPv6:1:2:3:4:5:6:7::]', 'trailing :: standing for one group'],
  ['test@[IPv6:::2:3:4:5:6:7:8]', 'leading :: standing for one group'],
  ['test@[IPv6:::1]', 'leading ::'],
  ['test@[IPv6:::]', ':: alone'],
  ['test@[IPv6:2001:DB8::ABCD]', 'upper-case hex kept as written'],
  ['test@[IPv6:::ffff:192.0.2.1]', 'IPv4 tail after ::'],
  ['test@[IPv6:64:ff9b::8.8.8.8]', 'IPv4 tail after groups and ::'],
  ['test@[IPv6:1:2:3:4:5:6:1.2.3.4]', 'six groups + IPv4 tail, no ::'],

  // provider rules, passing side
  ['john.smith@gmail.com', 'gmail: letters and dots, 9 counted'],
  ['JohnSmith@gmail.com', 'gmail: capitals allowed'],
  ['john.smith+news_letter-1@gmail.com', 'gmail: the tag after + is not checked'],
  ['a.b.c.d.e.f@gmail.com', 'gmail: exactly 6 letters (dots not counted)'],
  ['abcdef@googlemail.com', 'googlemail: exactly 6 characters'],
  ['abcdefghijklmnopqrstuvwxyz1234@gmail.com', 'gmail: exactly 30 characters'],
  ['abc@gmail.co', 'not a listed provider domain: no length rule'],
  ['john_doe@yahoo.com', 'yahoo: underscore allowed'],
  ['john.doe@yahoo.co.uk', 'yahoo.co.uk: one dot allowed'],
  ['john-anything.at.all@yahoo.com', 'yahoo: tag after - is not checked'],
  ['abcd@ymail.com', 'ymail: exactly 4 characters'],
  ['abcdefghijklmnopqrstuvwxyz123456@rocketmail.com', 'rocketmail: exactly 32 characters'],
  ['john.doe+news@outlook.com', 'outlook: dot username, tag after +'],
  ['j@outlook.com', 'outlook: no length rule'],
  ['John_Doe-1@hotmail.com', 'hotmail: underscore and hyphen allowed'],
  ['a.b.c.d@live.com', 'live: several dots allowed'],
  ['joe@msn.com', 'msn: letters'],
  ['joe@aol.com', 'aol: exactly 3 characters'],
  ['john.doe@aol.com', 'aol: one dot'],
  ['j_doe1@aol.com', 'aol: underscore and digit'],
  ['abc@icloud.com', 'icloud: exactly 3 characters'],
  ['john.doe+x@me.com', 'me.com: tag after +'],
  ['abcdefghijklmnopqrst@mac.com', 'mac.com: exactly 20 characters'],
  ['jo_hn@icloud.com', 'icloud: underscore'],
  ['johnsmith@GMAIL.COM', 'gmail in capitals, rules pass'],
];

// long successes (lengths exactly at the limits)
const longSuccess = [
  [a64 + '@iana.org', 'local part of exactly 64 octets'],
  ['1234567890123456789012345678901234567890123456789012345678901234@iana.org', '64 digits'],
  [rep('a.', 31) + 'ab@iana.org', '64-octet local part with dots'],
  [rep('é', 32) + '@iana.org', '32 × é = 64 UTF-8 octets'],
  [rep('😆', 16) + '@iana.org', '16 emoji = 64 UTF-8 octets (32 UTF-16 units)'],
  [rep('a', 62) + 'é@iana.org', '62 ASCII + é = 64 octets'],
  ['"' + rep('a', 62) + '"@iana.org', 'quoted local part of 64 octets (quotes counted)'],
  ['"' + rep('\\"', 31) + '"@iana.org', 'quoted local part of 64 octets (backslashes counted)'],
  [' (c) ' + a64 + ' (c) @iana.org', '64-octet local part between CFWS', a64, 'iana.org'],
  ['test@' + D63 + '.com', 'label of exactly 63 octets'],
  ['test@example.' + D63, 'TLD of exactly 63 octets'],
  ['test@' + IDN63 + '.com', 'U-label whose A-label is exactly 63 octets'],
  ['a@' + asciiDomain(252), '1 + 1 + 252 = 254 octets in all'],
  [a64 + '@' + asciiDomain(189), '64 + 1 + 189 = 254 octets in all'],
  [' (comment) ' + a64 + '@' + asciiDomain(189) + ' (comment) ', '254 octets; CFWS is not counted', a64, asciiDomain(189)],
  [rep('é', 32) + '@' + asciiDomain(189), '254 octets with a two-byte local part'],
  ['"' + rep('b', 62) + '"@' + asciiDomain(189), '254 octets with a quoted local part'],
  [a64 + '@bücher.' + asciiDomain(175), '254 octets counting the A-label of bücher'],
  ['x@' + rep('a.', 100) + 'com', '101 labels'],
];

// ---------------------------------------------------------------------------------------------------------------
// FAILURES, grouped by status: [input, where, note]
const failures = {
  AtSignNotFound: [
    ['test', END, 'no @'],
    ['', END, 'empty input'],
    ['"a@b"', END, '@ only inside quotes'],
    ['   ', END, 'only white space'],
    ['(comment)', END, 'only a comment'],
    ['john.doe.example.com', END, 'dots but no @'],
    ['test (c)', END, 'local part and trailing CFWS, no @'],
    ['"abc"', END, 'complete quoted string, no @'],
    ['user＠example.com', END, 'fullwidth at sign is not an @'],
    ['\t', END, 'a TAB only'],
    ['(a@b)', END, '@ only inside a comment'],
    ['test(a@b.org)', END, '@ only inside a trailing comment'],
    ['"a@b" (c)', END, 'quoted @ and a comment'],
    ['jöhn.doe', END, 'non-ASCII local part, no @'],
    ['a\r\n ', END, 'local part and a valid fold, no @'],
    ['user_at_example.com', END, 'spelled-out at'],
    ['😆', END, 'single emoji (index in UTF-16 units)'],
    [a64, END, '64-octet local part without @ (not too long)'],
    [rep('é', 32), END, '64 octets of é without @'],
    ['a.b.c', END, 'three atoms, no @'],
  ],

  InvalidLocalPartLength: [
    ['@iana.org', 0, 'empty local part'],
    [' @iana.org', at('@'), 'empty local part after white space'],
    ['(c)@iana.org', at('@'), 'empty local part after a comment'],
    ['@', 0, 'lone @'],
    ['@@iana.org', 0, 'empty local part before a second @'],
    ['\t@iana.org', at('@'), 'empty local part after a TAB'],
    ['\r\n @iana.org', at('@'), 'empty local part after a fold'],
    [a65 + '@iana.org', at('@'), '65-octet local part'],
    [a65, END, '65 octets and no @: length judged at the end'],
    [a65 + ' @iana.org', at(' '), 'over-long local part ends at white space'],
    [a65 + '(c)@iana.org', at('('), 'over-long local part ends at a comment'],
    [' ' + a65 + '@iana.org', at('@'), 'leading CFWS is not part of the local part'],
    ['"' + rep('a', 63) + '"@iana.org', at('@'), 'quoted local part of 65 octets'],
    ['"' + rep('\\a', 31) + 'b"@iana.org', at('@'), 'quoted: backslashes count (65 octets)'],
    [rep('é', 33) + '@iana.org', at('@'), '33 × é = 66 octets'],
    [rep('😆', 17) + '@iana.org', at('@'), '17 emoji = 68 octets, index in UTF-16 units'],
    [rep('a', 63) + 'é@iana.org', at('@'), '63 ASCII + é = 65 octets'],
    [rep('a.', 32) + 'a@iana.org', at('@'), '65 octets with dots'],
    [rep('a', 100) + '@iana.org', at('@'), '100-octet local part'],
    [a65 + '@gmail.com', at('@'), 'RFC length fails before provider rules'],
  ],

  InvalidAddressLength: [
    ['a@' + asciiDomain(253), END, '253-octet domain after a 1-octet local part = 255'],
    [a64 + '@' + asciiDomain(190), END, '64 + 1 + 190 = 255'],
    [rep('a', 63) + '@' + asciiDomain(191), END, '63 + 1 + 191 = 256'],
    [rep('a', 10) + '@' + asciiDomain(245), END, '10 + 1 + 245 = 256'],
    [a64 + '@' + asciiDomain(253), END, 'every part within its limit, 318 in all'],
    [a64 + '@' + asciiDomain(190) + ' (comment)', END, 'judged at the end, after trailing CFWS'],
    [a64 + '@' + asciiDomain(190) + '\r\n ', END, 'judged after a trailing fold'],
    ['(comment) ' + a64 + '@' + asciiDomain(190), END, 'leading CFWS not counted, still 255'],
    [rep('é', 32) + '@' + asciiDomain(190), END, 'local part counted in UTF-8 octets'],
    [rep('😆', 16) + '@' + asciiDomain(190), END, 'emoji local part: 64 octets'],
    ['"' + rep('b', 62) + '"@' + asciiDomain(190), END, 'quoted local part of 64 octets'],
    [a64 + '@bücher.' + asciiDomain(176), END, 'domain counted in A-label form'],
    [a64 + '@' + asciiDomain(190).replaceAll('.', '。'), END, 'ideographic separators count as one octet'],
    [a64 + '@' + FW(asciiDomain(190)), END, 'fullwidth domain counted after mapping'],
    [a64 + '@' + asciiDomain(250), END, 'long local and long domain'],
  ],

  DoubleDotSequence: [
    ['test..x@iana.org', after('test.'), 'two dots in the local part'],
    ['a@iana..org', after('iana.'), 'two dots in the domain'],
    ['a...b@iana.org', after('a.'), 'three dots: at the second'],
    ['a..@iana.org', after('a.'), 'double dot before the @'],
    ['test..', after('test.'), 'no @: the double dot is seen first'],
    ['(c)a..b@iana.org', after('a.'), 'after a leading comment'],
    ['a.b..c@iana.org', after('b.'), 'second pair of atoms'],
    ['test@iana。。org', at('。', 2), 'two ideographic full stops'],
    ['test@iana.．org', at('．'), 'dot then fullwidth full stop'],
    ['test@iana｡｡org', at('｡', 2), 'two halfwidth ideographic full stops'],
    ['test@a.b..c.org', after('b.'), 'empty label mid-domain'],
    ['test@iana.org..', after('org.'), 'two trailing dots: empty label before the last'],
    ['test@b..', after('b.'), 'empty label after a single label'],
    ['first..last@gmail.com', after('first.'), 'RFC check before provider rules'],
    ['jö..rg@iana.org', after('jö.'), 'index in UTF-16 units'],
    ['a..b..c@iana.org', after('a.'), 'first of two double dots'],
    ['test@sub..iana.org (c)', after('sub.'), 'with trailing comment'],
    ['😆..x@iana.org', after('😆.'), 'after an astral character'],
  ],

  InvalidWordBoundaryStart: [
    ['.test@iana.org', 0, 'leading dot'],
    ['test.@iana.org', at('@'), 'trailing dot, at the @'],
    ['"test"test@iana.org', after('"test"'), 'atom after a closing quote'],
    ['"john".doe@iana.org', after('"john"'), 'dot after a closing quote'],
    ['first."x".last@iana.org', at('"'), 'quote in mid-local-part'],
    ['test(c)test@iana.org', after('(c)'), 'atom after a comment'],
    ['hello world@iana.org', at('w'), 'atom after white space'],
    ['test (c) test@iana.org', after('(c) '), 'atom after trailing CFWS'],
    ['test .x@iana.org', at('.'), 'dot after white space'],
    ['test.(c)x@iana.org', at('('), 'local part ends at ( with a trailing dot'],
    ['test.', END, 'no @: trailing dot at the end'],
    [' .test@iana.org', at('.'), 'leading dot after white space'],
    ['(c).test@iana.org', at('.'), 'leading dot after a comment'],
    ['.@iana.org', 0, 'local part is a dot'],
    ['a.b.@iana.org', at('@'), 'trailing dot after two atoms'],
    ['test. @iana.org', at(' '), 'local part ends at white space with a trailing dot'],
    ['test.\r\n @iana.org', at('\r'), 'local part ends at CR with a trailing dot'],
    ['"a"."b"@iana.org', after('"a"'), 'dot between quoted words'],
    ['"a""b"@iana.org', after('"a"'), 'quote right after a closing quote'],
    ['a"b"@iana.org', at('"'), 'quote after an atom'],
    ['"test" x@iana.org', at('x'), 'atom after a quoted string and white space'],
    ['"test"(c)x@iana.org', at('x'), 'atom after a quoted string and comment'],
    ['test (c)"x"@iana.org', at('"'), 'quote after trailing CFWS'],
    ['té.@iana.org', at('@'), 'trailing dot, UTF-16 index'],
    ['user.name.@gmail.com', at('@'), 'RFC check before provider rules'],
    ['john doe <john@example.com>', at('doe'), 'display name: second word'],
    ['Joe Smith <joe@example.com>', at('Smith'), 'display name'],
    ['test@[8.8.8.8]x', at('x'), 'atom after a domain literal'],
    ['test@[8.8.8.8].com', at('.com'), 'dot after a domain literal'],
    ['test@[8.8.8.8]-x', at('-'), 'hyphen (atom character) after a domain literal'],
    ['test@iana.org (c)x', at('x'), 'atom after the trailing comment'],
    ['test@iana.org x', at('x'), 'atom after trailing white space'],
    ['test@iana.org (c).com', at('.com'), 'dot after the trailing comment'],
    ['"a"\r\n b@iana.org', at('b@'), 'atom after a fold that follows a quoted string'],
  ],

  InvalidCharacterInSequence: [
    ['test\\@test@iana.org', at('\\'), 'backslash outside quotes'],
    ['a@sub.do,com', at(','), 'comma in the domain'],
    ['"a\tb"@iana.org', at('\t'), 'TAB inside quotes'],
    ['"a\rb"@iana.org', at('\r'), 'CR inside quotes'],
    ['"a\nb"@iana.org', at('\n'), 'LF inside quotes'],
    ['"\u0007"@iana.org', at('\u0007'), 'BEL inside quotes'],
    ['"\u007f"@iana.org', at('\u007f'), 'DEL inside quotes'],
    ['"a\u0085b"@iana.org', at('\u0085'), 'C1 control inside quotes'],
    ['"\udc00"@iana.org', at('\udc00'), 'lone surrogate inside quotes'],
    ['"\u0000"@iana.org', at('\u0000'), 'NUL inside quotes'],
    ['test@iana.org\n', at('\n'), 'bare LF at the end'],
    ['\ntest@iana.org', 0, 'bare LF at the start'],
    ['test\n@iana.org', at('\n'), 'bare LF after the local part'],
    ['<test@iana.org>', 0, 'angle bracket'],
    ['test:x@iana.org', at(':'), 'colon in the local part'],
    ['test;x@iana.org', at(';'), 'semicolon in the local part'],
    ['test,x@iana.org', at(','), 'comma in the local part'],
    ['te[st@iana.org', at('['), '[ in the local part'],
    ['test]@iana.org', at(']'), '] in the local part'],
    ['te\u0085st@iana.org', at('\u0085'), 'C1 control in an atom'],
    ['te\ud800st@iana.org', at('\ud800'), 'lone high surrogate in an atom'],
    ['te\u007fst@iana.org', at('\u007f'), 'DEL in an atom'],
    ['test\u0000@iana.org', at('\u0000'), 'NUL after the local part'],
    ['(\u0007)test@iana.org', at('\u0007'), 'BEL inside a comment'],
    ['(\u0000)test@iana.org', at('\u0000'), 'NUL inside a comment'],
    ['(a\u0085b)test@iana.org', at('\u0085'), 'C1 control inside a comment'],
    ['(\udc00)test@iana.org', at('\udc00'), 'lone surrogate inside a comment'],
    ['test@iana.org (\u0001)', at('\u0001'), 'control in a trailing comment'],
    ['"a"\u0001@iana.org', at('\u0001'), 'control after a closing quote'],
    ['"Joe" <joe@example.com>', at('<'), 'angle bracket after a quoted display name'],
    ['mailto:john@example.com', at(':'), 'mailto: prefix'],
    ['a@b@iana.org', at('@', 2), 'second @ in the domain'],
    ['john@@example.com', at('@', 2), '@ right after the @'],
    ['john@example.com;jane@example.com', at(';'), 'semicolon-separated list'],
    ['john@example.com, jane@example.com', at(','), 'comma-separated list'],
    ['test@iana.org,', at(','), 'trailing comma'],
    ['test@iana.org"', at('"'), 'quote after the domain'],
    ['test@iana/icann.org', at('/'), 'slash in the domain'],
    ['test@x_y.com', at('_'), 'underscore in the domain'],
    ['test@a+b.com', at('+'), 'plus in the domain'],
    ['test@\u0000iana.org', at('\u0000'), 'NUL at the start of the domain'],
    ['test@iana.org\u0085', at('\u0085'), 'C1 control after the domain'],
    ['test@a\u0085.com', at('\u0085'), 'C1 control in a label'],
    ['test@iana\ud800.org', at('\ud800'), 'lone surrogate in a label'],
    ['test@ex＿ample.com', at('＿'), 'fullwidth low line maps to _'],
    ['test@⒈.com', at('⒈'), 'U+2488 is disallowed by UTS-46'],
    ['test@a⑴.com', at('⑴'), 'U+2474 maps to "(1)"'],
    ['test@！.com', at('！'), 'fullwidth ! maps to non-LDH'],
    ['test@a＠b.com', at('＠'), 'fullwidth @ maps to @'],
    ['test@a／b.com', at('／'), 'fullwidth solidus maps to /'],
    ['test@℀.com', at('℀'), 'U+2100 maps to "a/c"'],
    ['test@\ufffd.com', at('\ufffd'), 'replacement character is disallowed'],
    ['test@\ue000.com', at('\ue000'), 'private-use character is disallowed'],
    ['test@a[1.2.3.4]', at('['), '[ after a label'],
    ['test@[1.2.3.4 ]', at(' ]'), 'space inside a literal'],
    ['test@[1.2.[3].4]', at('[', 2), '[ inside a literal'],
    ['test@[1.2.3.é]', at('é'), 'non-ASCII inside a literal'],
    ['test@[1.2.3.4\t]', at('\t'), 'TAB inside a literal'],
    ['test@[\u00001.2.3.4]', at('\u0000'), 'NUL inside a literal'],
    ['test@[IPv6:1::1\\]', at('\\'), 'backslash inside a literal'],
    ['test@[RFC-5322-\\\u0007-domain-literal]', at('\\'), 'backslash inside a literal (obs-dtext)'],
    ['test@[1.2.3.4],x', at(','), 'comma after a literal'],
    ['test@[1.2.3.4]]', at(']', 2), '] after a literal'],
    ['test@[8.8.8.8]@x.org', at('@', 2), '@ after a literal'],
  ],

  InvalidEmptyQuotedWord: [
    ['""@iana.org', at('"', 2), 'empty quoted string'],
    [' ""@iana.org', at('"', 2), 'after white space'],
    ['(c)""@iana.org', at('"', 2), 'after a comment'],
    ['""', at('"', 2), 'no @: still judged at the closing quote'],
    ['"" @iana.org', at('"', 2), 'followed by white space'],
    ['""(c)@iana.org', at('"', 2), 'followed by a comment'],
    ['""@', at('"', 2), 'before an empty domain'],
    ['""x@iana.org', at('"', 2), 'before an atom'],
    ['"""@iana.org', at('"', 2), 'third quote comes later'],
    ['""."a"@iana.org', at('"', 2), 'before a dot'],
    ['""\r\n @iana.org', at('"', 2), 'followed by a fold'],
    ['\t""@iana.org', at('"', 2), 'after a TAB'],
    ['""@gmail.com', at('"', 2), 'RFC check before provider rules'],
    ['""@[8.8.8.8]', at('"', 2), 'literal domain'],
    ['\r\n ""@iana.org', at('"', 2), 'after a fold'],
  ],

  InvalidFoldingWhiteSpaceSequence: [
    ['test@iana.org\r', END, 'CR at the end: LF expected at the end'],
    ['\r\njohn@iana.org', at('j'), 'CRLF not followed by WSP'],
    ['\r\n \r\n test@iana.org', at('\r', 2), 'obs-FWS: second fold in one run'],
    ['\r\n\r\n test@iana.org', at('\r', 2), 'CRLF CRLF: WSP expected at the second CR'],
    ['test\r\n@iana.org', at('@'), 'fold before @ without WSP'],
    ['test\rx@iana.org', at('x'), 'CR not followed by LF'],
    ['test@iana.org\r\n', END, 'CRLF at the end'],
    ['test@iana.org \r\n \r\n ', at('\r', 2), 'obs-FWS after the domain'],
    ['test@iana.org\r\n\r\n ', at('\r', 2), 'CRLF CRLF after the domain'],
    [' \rtest@iana.org', at('t'), 'CR not followed by LF at the start'],
    ['test@ \r\n\r\n iana.org', at('\r', 2), 'CRLF CRLF after the @'],
    ['(c)\r\n\r\n test@iana.org', at('\r', 2), 'CRLF CRLF after a comment'],
    ['test@iana.org (c)\r\nx', at('x'), 'CRLF followed by an atom'],
    ['"test"\r\n@iana.org', at('@'), 'fold after a quoted string without WSP'],
    ['test @\r\niana.org', at('iana'), 'fold after the @ without WSP'],
    ['test\r\n \r\n @iana.org', at('\r', 2), 'obs-FWS before the @'],
    ['\t\r\n\t\r\n\ttest@iana.org', at('\r', 2), 'obs-FWS with TABs'],
    ['test@iana.org \r ', after('\r'), 'CR followed by a space'],
    ['test(c)\r\n@iana.org', at('@'), 'fold after a comment without WSP'],
  ],

  UnbalancedCommentParenthesis: [
    ['(comment test@iana.org', END, 'unclosed leading comment'],
    ['((comment)test@iana.org', END, 'nested comment left open'],
    ['(comment\\)test@iana.org', END, 'escaped ) does not close'],
    ['test)@iana.org', at(')'), 'stray ) after the local part'],
    ['test@iana.org)', at(')'), 'stray ) after the domain'],
    ['test@io)', at(')'), 'stray ) beats the single-label check at the same position'],
    [')test@iana.org', 0, 'stray ) at the start'],
    ['test@iana.org(c))', lastAt(')'), 'one ) too many'],
    ['test@iana.org(c', END, 'unclosed trailing comment'],
    ['test@(iana.org', END, 'unclosed comment after the @'],
    ['test(c@iana.org', END, 'unclosed comment after the local part'],
    ['(abc', END, 'no @: unclosed comment is judged first'],
    ['test@iana.org(c\\', END, 'backslash at the end of an open comment'],
    ['test@iana.org (a(b)', END, 'inner comment closed, outer open'],
    ['test@iana)org', at(')'), 'stray ) inside the domain'],
    ['"a")@iana.org', at(')'), 'stray ) after a quoted string'],
    ['te)st@iana.org', at(')'), 'stray ) inside an atom'],
  ],

  UnexpectedQuotedPairSequence: [
    ['"test\\\u0000"@iana.org', at('\u0000'), 'backslash + NUL in quotes'],
    ['"\\\t"@iana.org', at('\t'), 'backslash + TAB in quotes'],
    ['"\\\u007f"@iana.org', at('\u007f'), 'backslash + DEL in quotes'],
    ['"\\\u0085"@iana.org', at('\u0085'), 'backslash + C1 control in quotes'],
    ['"\\\u009f"@iana.org', at('\u009f'), 'backslash + last C1 control in quotes'],
    ['"\\\u0007"@iana.org', at('\u0007'), 'backslash + BEL in quotes'],
    ['"ab\\\u001bcd"@iana.org', at('\u001b'), 'backslash + ESC in quotes'],
    [' "a\\\u0001"@iana.org', at('\u0001'), 'after leading white space'],
    ['"a\\\u0000', at('\u0000'), 'bad pair found before the unclosed quote'],
    ['(\\\u0000)test@iana.org', at('\u0000'), 'backslash + NUL in a comment'],
    ['(\\\u0007)test@iana.org', at('\u0007'), 'backslash + BEL in a comment'],
    ['test@iana.org(\\\u001f)', at('\u001f'), 'backslash + US in a trailing comment'],
    ['test(\\\u007f)@iana.org', at('\u007f'), 'backslash + DEL in a comment'],
    ['test@(\\\u0008)iana.org', at('\u0008'), 'backslash + BS in a comment after the @'],
    ['"\\\u0000"@gmail.com', at('\u0000'), 'RFC check before provider rules'],
  ],

  UnmatchedQuotedPair: [
    ['"test@iana.org', END, 'unclosed quote'],
    ['"test\\', END, 'ends in a backslash'],
    ['"abc', END, 'no @: unclosed quote judged first'],
    ['"', END, 'lone quote'],
    ['"\\"@iana.org', END, 'escaped quote does not close'],
    ['"test\\"', END, 'escaped final quote'],
    [' "test', END, 'after leading white space'],
    ['(c)"abc@iana.org', END, 'after a comment'],
    ['"a b c', END, 'spaces inside'],
    ['"abc\\\\', END, 'escaped backslash then the end'],
    ['"tëst@iana.org', END, 'non-ASCII inside'],
    ['"\\', END, 'quote and backslash only'],
    ['"john.doe@gmail.com', END, 'realistic typo'],
    ['"a\\"b\\"c@iana.org', END, 'two escaped quotes'],
  ],

  UnacceptableDomainLiteral: [
    ['test@[1.2.3]', at(']'), 'three IPv4 parts'],
    ['test@[1.2.3.4', END, 'unclosed literal'],
    ['test@[256.1.1.1]', at(']'), 'IPv4 part over 255'],
    ['test@[1.2.3.4.5]', at(']'), 'five IPv4 parts'],
    ['test@[1.2.3.0004]', at(']'), 'four-digit IPv4 part'],
    ['test@[1.2.3.4:25]', at(']'), 'port in the literal'],
    ['test@[a.b.c.d]', at(']'), 'letters in an IPv4 literal'],
    ['test@[-1.2.3.4]', at(']'), 'sign in an IPv4 part'],
    ['test@[.1.2.3.4]', at(']'), 'leading dot'],
    ['test@[1.2.3.4.]', at(']'), 'trailing dot'],
    ['test@[]', at(']'), 'empty literal'],
    ['test@[IPv6:1:2:3:4:5:6:7]', at(']'), 'seven groups without ::'],
    ['test@[IPv6:1:2:3:4:5:6:7:8:9]', at(']'), 'nine groups'],
    ['test@[IPv6:1::2::3]', at(']'), 'two ::'],
    ['test@[IPv6:12345::1]', at(']'), 'five hex digits in a group'],
    ['test@[IPv6:g::1]', at(']'), 'non-hex digit'],
    ['test@[IPv6::1]', at(']'), 'single leading colon'],
    ['test@[IPv6:1:2:3:4:5:6:7:8::]', at(']'), ':: after eight groups'],
    ['test@[IPv6:1::2:3:4:5:6:7:8]', at(']'), ':: with eight groups'],
    ['test@[IPv6:::1:2:3:4:5:6:7:8]', at(']'), 'leading :: with eight groups'],
    ['test@[IPv6:1:2:3:4:5:6:7:1.2.3.4]', at(']'), 'seven groups + IPv4 tail'],
    ['test@[ipv6:1:2:3:4:5:6:1.2.3.256]', at(']'), 'IPv4 tail part over 255'],
    ['test@[IPv6:::ffff:1.2.3]', at(']'), 'IPv4 tail with three parts'],
    ['test@[IPv6:]', at(']'), 'tag without an address'],
    ['test@[IPv6:1.2.3.4]', at(']'), 'IPv4 address under the IPv6 tag'],
    ['test@[IPv5:1::1]', at(']'), 'unknown tag'],
    ['test@[RFC-5322-domain-literal]', at(']'), 'general literal'],
    ['test@[IPv6:2001:db8::1', END, 'unclosed IPv6 literal'],
    ['test@[8.8.8.8(c)', END, '( is dtext: literal left open'],
    ['test@[::1]', at(']'), 'IPv6 address without the tag'],
  ],

  DomainPartCompliancyFailure: [
    ['test@', END, 'empty domain'],
    ['test@.iana.org', at('.'), 'leading dot'],
    ['test@iana.org.', END, 'trailing dot'],
    ['test@-iana.org', at('-'), 'label starting with a hyphen'],
    ['test@iana-.com', at('.'), 'label ending with a hyphen'],
    ['test@io', END, 'single label'],
    ['test@localhost', END, 'single label'],
    ['test@iana.123', END, 'all-digit TLD'],
    ['test@255.255.255.255', END, 'dotted quad without brackets: numeric TLD'],
    ['test@a.b.c.1234', END, 'all-digit TLD after several labels'],
    ['test@iana.１２３', END, 'fullwidth digits map to an all-digit TLD'],
    ['test@123', END, 'single numeric label'],
    ['test@xn--example.com', at('.'), 'xn-- label that does not decode'],
    ['test@xn--a.com', at('.'), 'xn-- label that does not decode'],
    ['test@xn--.com', at('.'), 'empty xn-- label'],
    ['test@xn--abc-.com', at('.'), 'xn-- label decoding to ASCII, ends with a hyphen'],
    ['x@é-.com', at('.'), 'U-label ending with a hyphen'],
    ['test@a－.com', at('.'), 'fullwidth hyphen maps to a final hyphen'],
    ['test@a.-b.com', at('-'), 'second label starts with a hyphen'],
    ['test@sub.example-.org', at('.org'), 'inner label ends with a hyphen'],
    ['test@a.b-', END, 'TLD ends with a hyphen'],
    ['test@iana。', END, 'trailing ideographic full stop'],
    ['test@。iana.org', at('。'), 'leading ideographic full stop'],
    ['test@iana.org. (c)', at(' '), 'trailing dot, label ends at white space'],
    ['test@\u0301a.com', at('.'), 'label starting with a combining mark'],
    ['test@אa.com', at('.'), 'bidi rule: RTL label with a Latin letter'],
    ['test@a\u200db.com', at('.'), 'ZWJ without context (CONTEXTJ)'],
    ['test@a\u200cb.com', at('.'), 'ZWNJ without context (CONTEXTJ)'],
    ['test@iana(c).org', at('('), 'domain ends at ( after one label'],
    ['test@iana.(c)org', at('('), 'domain ends at ( after a dot'],
    ['test@iana .org', at(' '), 'domain ends at white space after one label'],
    ['test@io (comment)', at(' '), 'single label before a comment'],
    ['test@ (c) .iana.org', at('.'), 'leading dot after CFWS'],
    ['test@ＩＡＮＡ', END, 'single fullwidth label'],
    ['"test"@localhost', END, 'quoted local part, single label'],
    ['test@..iana.org', at('.'), 'leading dot before a double dot'],
    ['test@iana.org.\t', at('\t'), 'trailing dot then TAB'],
    ['test@' + rep('d', 64) + '.com', at('.com'), 'label of 64 octets'],
    ['test@example.' + rep('d', 64), END, 'TLD of 64 octets'],
    ['test@' + IDN64 + '.com', at('.com'), 'U-label whose A-label is 64 octets'],
    ['a@' + asciiDomain(254), END, '254-octet domain (domain beats the whole address)'],
    ['a@' + asciiDomain(254) + ' (c)', at(' (c)'), '254-octet domain ends at white space'],
    ['a@' + 'bücher.' + asciiDomain(241), END, 'domain over 253 octets in A-label form'],
    ['test@' + rep('d', 64) + '.' + asciiDomain(250), at('.'), 'long label judged before the long domain'],
  ],

  IspSpecificSyntaxFailure: [
    // gmail.com, googlemail.com: separator +, [A-Za-z0-9.], 6-30 letters+digits
    ['abc@gmail.com', at('@'), 'gmail: 3 characters (< 6)'],
    ['john_doe@gmail.com', at('_'), 'gmail: underscore'],
    ['john-doe@gmail.com', at('-'), 'gmail: hyphen'],
    ["john'smith@gmail.com", at("'"), 'gmail: apostrophe'],
    ['a.b.c.d.e@gmail.com', at('@'), 'gmail: 5 letters (dots not counted)'],
    ['john+newsletter@gmail.com', at('@'), 'gmail: username before + has 4 letters'],
    ['"johnsmith"@gmail.com', 0, 'gmail: quoted local part'],
    ['jöhnsmith@gmail.com', at('ö'), 'gmail: non-ASCII letter'],
    ['abcdefghijklmnopqrstuvwxyz12345@gmail.com', at('@'), 'gmail: 31 characters'],
    ['abc@GMAIL.COM', at('@'), 'gmail matched case-insensitively'],
    ['abcde@googlemail.com', at('@'), 'googlemail: 5 characters'],
    ['john!smith@gmail.com', at('!'), 'gmail: bang'],
    ['abc@ｇｍａｉｌ.com', at('@'), 'fullwidth domain maps to gmail.com'],
    [' (c) abc@gmail.com', at('@'), 'gmail: after leading CFWS'],
    ['(c)"johnsmith"@gmail.com', at('"'), 'gmail: quoted local part after a comment'],
    ['john.smith-x+tag@gmail.com', at('-'), 'gmail: hyphen before the + separator'],
    // yahoo.*, ymail.com, rocketmail.com: separator -, start with a letter, [A-Za-z0-9_.], one dot, 4-32
    ['1john@yahoo.com', 0, 'yahoo: starts with a digit'],
    ['john.doe.x@yahoo.com', at('.', 2), 'yahoo: second dot'],
    ['joe@yahoo.com', at('@'), 'yahoo: 3 characters (< 4)'],
    ['jo-news@yahoo.co.uk', at('@'), 'yahoo.co.uk: username before - has 2 characters'],
    ['john+doe@yahoo.com', at('+'), 'yahoo: plus is not its separator'],
    ['"john"@ymail.com', 0, 'ymail: quoted local part'],
    ['_john@rocketmail.com', 0, 'rocketmail: starts with underscore'],
    ['abcdefghijklmnopqrstuvwxyz1234567@yahoo.com', at('@'), 'yahoo: 33 characters'],
    ['jöhn@yahoo.fr', at('ö'), 'yahoo.fr: non-ASCII letter'],
    ['john!@yahoo.de', at('!'), 'yahoo.de: bang'],
    // outlook.com, hotmail.*, live.*, msn.com: separator +, start with a letter, [A-Za-z0-9._-]
    ['1john@outlook.com', 0, 'outlook: starts with a digit'],
    ['john!doe@hotmail.com', at('!'), 'hotmail: bang'],
    ['_john@hotmail.co.uk', 0, 'hotmail.co.uk: starts with underscore'],
    ['"john"@live.com', 0, 'live: quoted local part'],
    ["john'o@msn.com", at("'"), 'msn: apostrophe'],
    ['-john@outlook.com', 0, 'outlook: starts with a hyphen'],
    ['jöhn@hotmail.fr', at('ö'), 'hotmail.fr: non-ASCII letter'],
    ['john#x@live.fr', at('#'), 'live.fr: hash'],
    ['john=x+tag@outlook.com', at('='), 'outlook: equals before the separator'],
    // aol.com: no separator, start with a letter, [A-Za-z0-9_.], one dot, 3-32
    ['jo@aol.com', at('@'), 'aol: 2 characters (< 3)'],
    ['john+x@aol.com', at('+'), 'aol: no sub-address separator'],
    ['john-x@aol.com', at('-'), 'aol: hyphen'],
    ['a.b.c@aol.com', at('.', 2), 'aol: second dot'],
    ['1john@aol.com', 0, 'aol: starts with a digit'],
    ['abcdefghijklmnopqrstuvwxyz1234567@aol.com', at('@'), 'aol: 33 characters'],
    // icloud.com, me.com, mac.com: separator +, start with a letter, [A-Za-z0-9._], 3-20
    ['ab@icloud.com', at('@'), 'icloud: 2 characters (< 3)'],
    ['john-doe@me.com', at('-'), 'me.com: hyphen'],
    ['abcdefghijklmnopqrstu@mac.com', at('@'), 'mac.com: 21 characters'],
    ['jo+xyz@icloud.com', at('@'), 'icloud: username before + has 2 characters'],
    ['1john@icloud.com', 0, 'icloud: starts with a digit'],
    ['"john"@me.com', 0, 'me.com: quoted local part'],
    ['john!@mac.com', at('!'), 'mac.com: bang'],
  ],
};

// ---------------------------------------------------------------------------------------------------------------
// build
const STATUSES = ['Success', 'AtSignNotFound', 'DoubleDotSequence', 'DomainPartCompliancyFailure', 'InvalidAddressLength',
  'InvalidCharacterInSequence', 'InvalidEmptyQuotedWord', 'InvalidFoldingWhiteSpaceSequence', 'InvalidLocalPartLength',
  'InvalidWordBoundaryStart', 'IspSpecificSyntaxFailure', 'UnbalancedCommentParenthesis', 'UnexpectedQuotedPairSequence',
  'UnmatchedQuotedPair', 'UnacceptableDomainLiteral'];
const NON_ASCII = /[^\x00-\x7f]/;

function successRow([input, note, localPart, domainPart]) {
  if (localPart === undefined) {
    const k = input.lastIndexOf('@');
    localPart = input.slice(0, k);
    domainPart = input.slice(k + 1);
  }
  const emailAddress = localPart + '@' + domainPart;
  if (!input.includes(localPart) || !input.includes(domainPart)) throw new Error('parts not in input: ' + input);
  const literal = domainPart.startsWith('[');
  const asciiDomainPart = literal ? domainPart : domainToASCII(domainPart);
  if (!asciiDomainPart || asciiDomainPart !== asciiDomainPart.toLowerCase() && !literal) {
    throw new Error('domainToASCII failed for ' + JSON.stringify(domainPart));
  }
  // limits re-checked here so a generator slip cannot produce a wrong Success row
  if (utf8(localPart) > 64 || (!literal && asciiDomainPart.length > 253) || utf8(localPart) + 1 + asciiDomainPart.length > 254) {
    throw new Error('Success row over a limit: ' + input);
  }
  return {
    input,
    status: 'Success',
    index: null,
    parts: {
      emailAddress,
      localPart,
      domainPart,
      asciiDomainPart,
      hasInternationalMailboxName: NON_ASCII.test(localPart),
      hasInternationalDomainName: !literal && (NON_ASCII.test(domainPart) || /(^|[.。．｡])xn--/i.test(domainPart)),
    },
    note,
  };
}

const out = [];
for (const r of [...success, ...longSuccess]) out.push(successRow(r));
for (const [status, rows] of Object.entries(failures)) {
  for (const [input, where, note] of rows) {
    const index = locate(input, where);
    out.push({ input, status, index, note });
  }
}

// checks: known status, index range, unique inputs, minimum counts
const seen = new Map();
const counts = Object.fromEntries(STATUSES.map((s) => [s, 0]));
for (const row of out) {
  if (!STATUSES.includes(row.status)) throw new Error('unknown status ' + row.status);
  if (row.status !== 'Success' && !(Number.isInteger(row.index) && row.index >= 0 && row.index <= row.input.length)) {
    throw new Error('index out of range: ' + JSON.stringify(row));
  }
  if (seen.has(row.input)) throw new Error(`duplicate input ${JSON.stringify(row.input)} (${seen.get(row.input)} / ${row.status})`);
  seen.set(row.input, row.status);
  counts[row.status]++;
}
for (const s of STATUSES) {
  const min = s === 'Success' ? 120 : 12;
  if (counts[s] < min) throw new Error(`${s}: ${counts[s]} rows, need ${min}`);
}
if (out.length < 450) throw new Error('only ' + out.length + ' rows');

const target = join(dirname(fileURLToPath(import.meta.url)), 'syntax-cases.jsonl');
writeFileSync(target, out.map((r) => JSON.stringify(r)).join('\n') + '\n');
for (const s of STATUSES) console.log(s.padEnd(34), counts[s]);
console.log('total'.padEnd(34), out.length, '→', target);
