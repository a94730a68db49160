import { describe, expect, it } from 'vitest';
import { parseAddress, PROVIDER_RULES } from '../../packages/mailverify/src/index.js';

const failure = (input: string) => {
  const r = parseAddress(input);
  return r.ok ? 'Success' : `${r.status}@${r.syntaxFailureIndex}`;
};

// decisions.md §3: every example of the policy text and of its status table.
const POLICY_EXAMPLES: Array<[string, string]> = [
  ['test', 'AtSignNotFound@4'],
  ['', 'AtSignNotFound@0'],
  ['"a@b"', 'AtSignNotFound@5'],
  ['john.doe.example.com', 'AtSignNotFound@20'],
  ['test.', 'InvalidWordBoundaryStart@5'],
  ['"abc', 'UnmatchedQuotedPair@4'],
  ['test@io)', 'UnbalancedCommentParenthesis@7'],
  ['@iana.org', 'InvalidLocalPartLength@0'],
  ['a'.repeat(65) + '@iana.org', 'InvalidLocalPartLength@65'],
  ['test..x@iana.org', 'DoubleDotSequence@5'],
  ['a@iana..org', 'DoubleDotSequence@7'],
  ['.test@iana.org', 'InvalidWordBoundaryStart@0'],
  ['test.@iana.org', 'InvalidWordBoundaryStart@5'],
  ['"test"test@iana.org', 'InvalidWordBoundaryStart@6'],
  ['"john".doe@iana.org', 'InvalidWordBoundaryStart@6'],
  ['first."x".last@iana.org', 'InvalidWordBoundaryStart@6'],
  ['test(c)test@iana.org', 'InvalidWordBoundaryStart@7'],
  ['test\\@test@iana.org', 'InvalidCharacterInSequence@4'],
  ['a@sub.do,com', 'InvalidCharacterInSequence@8'],
  ['""@iana.org', 'InvalidEmptyQuotedWord@1'],
  ['test@iana.org\r', 'InvalidFoldingWhiteSpaceSequence@14'],
  ['\r\njohn@iana.org', 'InvalidFoldingWhiteSpaceSequence@2'],
  ['"a\tb"@iana.org', 'InvalidCharacterInSequence@2'],
  ['(comment test@iana.org', 'UnbalancedCommentParenthesis@22'],
  ['"test@iana.org', 'UnmatchedQuotedPair@14'],
  ['"test\\', 'UnmatchedQuotedPair@6'],
  ['"test\\\u0000"@iana.org', 'UnexpectedQuotedPairSequence@6'],
  ['test@', 'DomainPartCompliancyFailure@5'],
  ['test@.iana.org', 'DomainPartCompliancyFailure@5'],
  ['test@iana.org.', 'DomainPartCompliancyFailure@14'],
  ['test@-iana.org', 'DomainPartCompliancyFailure@5'],
  ['test@iana-.com', 'DomainPartCompliancyFailure@10'],
  ['test@io', 'DomainPartCompliancyFailure@7'],
  ['test@[1.2.3]', 'UnacceptableDomainLiteral@11'],
  ['x@é-.com', 'DomainPartCompliancyFailure@4'],
  ['x@a＿b.com', 'InvalidCharacterInSequence@3'],
  ['test@iana_org.com', 'InvalidCharacterInSequence@9'],
  ['test@\ud800iana.org', 'InvalidCharacterInSequence@5'],
  ['te\ud800st@iana.org', 'InvalidCharacterInSequence@2'],
  ['test@iana.org\n', 'InvalidCharacterInSequence@13'],
  ['test@iana.org(comment\\', 'UnbalancedCommentParenthesis@22'],
  ['test\\', 'InvalidCharacterInSequence@4'],
  ['a\u0085b@iana.org', 'InvalidCharacterInSequence@1'],
];

describe('parseAddress: the policy examples of decisions.md §3', () => {
  it.each(POLICY_EXAMPLES)('%j → %s', (input, expected) => {
    expect(failure(input)).toBe(expected);
  });

  it('accepts the forms the policy accepts', () => {
    for (const input of [
      '"test\\©"@iana.org',
      '"Fred Bloggs"@iana.org',
      'test@[001.2.3.4]',
      'test@[IPv6:2001:db8::1]',
      'test@[ipv6:1111:2222:3333:4444:5555:6666::8888]', // `::` for one group
      'test@[IPv6:::ffff:192.0.2.1]',
      ' (comment) test (c) @ (c) iana.org (c) ',
      '\r\n test@iana.org',
      'test@bücher.de',
      'ｉａｎａ@ｉａｎａ.org',
      'test@iana。org',
      'test@xn--bcher-kva.de',
      'josé@example.com',
    ]) {
      expect([input, failure(input)]).toEqual([input, 'Success']);
    }
  });
});

describe('parseAddress: unsafe Unicode in the local part', () => {
  const fails = (input: string, index: number) =>
    expect(parseAddress(input)).toEqual({ ok: false, status: 'InvalidCharacterInSequence', syntaxFailureIndex: index });

  it('refuses format characters, controls, separators, private use, unassigned and U+FFFD, at the character', () => {
    fails('a\u200B@example.com', 1); // zero-width space (Cf)
    fails('a\u202Eb@example.com', 1); // right-to-left override (Cf)
    fails('\uFEFFa@example.com', 0); // a byte order mark is no exception
    fails('a\u2028@example.com', 1); // line separator (Zl)
    fails('a\u2029@example.com', 1); // paragraph separator (Zp)
    fails('ab\uE000@example.com', 2); // private use (Co)
    fails('a\u0378@example.com', 1); // unassigned (Cn)
    fails('\uFFFD\uFFFD@b.com', 0); // what broken decoding leaves
    fails('a\u{E0001}@example.com', 1); // a language tag (Cf), outside the Basic Multilingual Plane
    fails('a\u{F0000}@example.com', 1); // supplementary private use
  });

  it('refuses a non-ASCII space outside quotes and accepts it inside, where other unsafe characters stay refused', () => {
    fails('a\u00A0b@example.com', 1);
    fails('a\u3000b@example.com', 1);
    expect(parseAddress('"a\u00A0b"@example.com')).toMatchObject({ ok: true, localPart: '"a\u00A0b"' });
    fails('"a\u200Bb"@example.com', 2);
    fails('"a\\\u200Bb"@example.com', 3); // escaping does not make it safe
  });

  it('refuses a combining mark that begins the local part, and accepts one after a letter', () => {
    fails('\u0301a@example.com', 0);
    expect(parseAddress('a\u0301@example.com').ok).toBe(true);
    expect(parseAddress('jörg@example.com').ok).toBe(true);
    expect(parseAddress('a\u{1F600}@example.com').ok).toBe(true);
    expect(parseAddress('用户@例子.广告').ok).toBe(true);
  });

  it('leaves comments alone: they are not part of the local part', () => {
    expect(parseAddress('(\u00A0note)a@example.com')).toMatchObject({ ok: true, emailAddress: 'a@example.com' });
  });
});

describe('parseAddress: lengths in exact units', () => {
  const label63 = 'b'.repeat(63);
  it('local part: 64 UTF-8 octets, quotes and backslashes included', () => {
    expect(failure('a'.repeat(64) + '@iana.org')).toBe('Success');
    expect(failure('é'.repeat(32) + '@iana.org')).toBe('Success'); // 64 octets
    expect(failure('é'.repeat(32) + 'a@iana.org')).toBe('InvalidLocalPartLength@33');
    expect(failure('😆'.repeat(17) + '@iana.org')).toBe('InvalidLocalPartLength@34'); // 68 octets, UTF-16 index 34
    expect(failure('"' + 'a'.repeat(62) + '"@iana.org')).toBe('Success');
    expect(failure('"' + 'a'.repeat(63) + '"@iana.org')).toBe('InvalidLocalPartLength@65');
    expect(failure('"' + 'a'.repeat(60) + '\\""@iana.org')).toBe('Success');
    expect(failure('"' + 'a'.repeat(61) + '\\""@iana.org')).toBe('InvalidLocalPartLength@65');
  });

  it('labels: 63 octets in A-label form', () => {
    expect(failure(`a@${label63}.org`)).toBe('Success');
    expect(failure(`a@${label63}b.org`)).toBe('DomainPartCompliancyFailure@66');
    // Judged on the A-label: 64 × U+044A is longer than 63 octets there, 40 are not.
    expect(failure(`a@${'ъ'.repeat(64)}.org`)).toBe(`DomainPartCompliancyFailure@66`);
    expect(failure(`a@${'ъ'.repeat(40)}.org`)).toBe('Success');
  });

  it('domain: 253 octets; whole address: 254 octets', () => {
    const domain253 = `${label63}.${label63}.${label63}.${'c'.repeat(61)}`;
    expect(domain253.length).toBe(253);
    expect(failure(`a@${domain253}`)).toBe('InvalidAddressLength@255');
    const domain252 = domain253.slice(1);
    expect(failure(`a@${domain252}`)).toBe('Success'); // 1 + 1 + 252 = 254
    expect(failure(`ab@${domain252}`)).toBe('InvalidAddressLength@255');
    expect(failure(`ab@${domain252} (comment)`)).toBe('InvalidAddressLength@265');
    // A 254-octet domain is the domain's failure, at the same position as the whole-address one.
    expect(failure(`a@${domain253}c`)).toBe('DomainPartCompliancyFailure@256');
    expect(failure(`a@${label63}.${label63}.${label63}.${label63}.org`)).toBe('DomainPartCompliancyFailure@261');
  });
});

describe('parseAddress: output', () => {
  it('strips CFWS, keeps quotes and case, maps the domain to lower-case A-labels', () => {
    expect(parseAddress(' (c) "Joe Q"@(x) Bücher.DE ')).toEqual({
      ok: true,
      emailAddress: '"Joe Q"@Bücher.DE',
      localPart: '"Joe Q"',
      domainPart: 'Bücher.DE',
      asciiDomainPart: 'xn--bcher-kva.de',
      hasInternationalMailboxName: false,
      hasInternationalDomainName: true,
    });
    const fullwidth = parseAddress('ｉａｎａ@ｉａｎａ.org');
    expect(fullwidth.ok && fullwidth.asciiDomainPart).toBe('iana.org');
    const ideographic = parseAddress('user@iana。org');
    expect(ideographic.ok && [ideographic.asciiDomainPart, ideographic.hasInternationalDomainName]).toEqual(['iana.org', true]);
    const aLabel = parseAddress('user@XN--BCHER-KVA.de');
    expect(aLabel.ok && [aLabel.asciiDomainPart, aLabel.hasInternationalDomainName]).toEqual(['xn--bcher-kva.de', true]);
    const intl = parseAddress('用户@例子.广告');
    expect(intl.ok && [intl.hasInternationalMailboxName, intl.asciiDomainPart]).toEqual([true, 'xn--fsqu00a.xn--4rr70v']);
    const literal = parseAddress('x@[IPv6:2001:DB8::1]');
    expect(literal.ok && [literal.domainPart, literal.asciiDomainPart]).toEqual(['[IPv6:2001:DB8::1]', '[IPv6:2001:DB8::1]']);
  });

  it('returns the input itself when there is nothing to strip', () => {
    const input = 'first.last@iana.org';
    const r = parseAddress(input);
    expect(r.ok && r.emailAddress).toBe(input);
  });

  it('throws a TypeError naming what it expected for a non-string', () => {
    for (const value of [undefined, null, 42, {}, ['a@b.c']]) {
      expect(() => parseAddress(value as unknown as string)).toThrow(/expects a string/);
    }
  });
});

describe('parseAddress: domain names and IDNA', () => {
  it.each([
    ['test@xn--example.com', 'DomainPartCompliancyFailure@16'], // does not decode to a valid U-label
    ['test@xn--a.com', 'DomainPartCompliancyFailure@10'],
    ['test@xn--invalid-.com', 'DomainPartCompliancyFailure@17'], // decodes to ASCII and ends in a hyphen
    ['test@a.xn--ls8h', 'Success'],
    ['test@iana.123', 'DomainPartCompliancyFailure@13'],
    ['test@255.255.255.255', 'DomainPartCompliancyFailure@20'],
    ['test@iana.１２３', 'DomainPartCompliancyFailure@13'], // full-width digits map to a numeric top-level label
    ['test@－iana.org', 'DomainPartCompliancyFailure@5'], // a full-width hyphen maps to a leading hyphen
    ['test@a⒈com', 'InvalidCharacterInSequence@6'], // U+2488 is disallowed (it maps to "1.")
    ['test@a\u0301b.com', 'Success'],
    ['test@\u0301b.com', 'DomainPartCompliancyFailure@7'], // leading combining mark: the label as a whole
    ['test@a\u200cb.com', 'DomainPartCompliancyFailure@8'], // ZWNJ outside its context (RFC 5892 CONTEXTJ)
    ['test@ab--cd.com', 'Success'],
    ['test@test@iana.org', 'InvalidCharacterInSequence@9'],
    ['test@a[1.2.3.4]', 'InvalidCharacterInSequence@6'],
  ])('%j → %s', (input, expected) => {
    expect(failure(input)).toBe(expected);
  });
});

describe('parseAddress: address literals', () => {
  it.each([
    ['x@[192.0.2.1]', 'Success'],
    ['x@[256.0.2.1]', 'UnacceptableDomainLiteral@12'],
    ['x@[1.2.3.4.5]', 'UnacceptableDomainLiteral@12'],
    ['x@[0001.2.3.4]', 'UnacceptableDomainLiteral@13'],
    ['x@[IPv6:1:2:3:4:5:6:7:8]', 'Success'],
    ['x@[IPv6:1:2:3:4:5:6:7]', 'UnacceptableDomainLiteral@21'],
    ['x@[IPv6:1:2:3:4:5:6:7:8:9]', 'UnacceptableDomainLiteral@25'],
    ['x@[IPv6:1::2::3]', 'UnacceptableDomainLiteral@15'],
    ['x@[IPv6:12345::1]', 'UnacceptableDomainLiteral@16'],
    ['x@[IPv6::1]', 'UnacceptableDomainLiteral@10'],
    ['x@[IPv6:1:]', 'UnacceptableDomainLiteral@10'],
    ['x@[IPv6:::]', 'Success'],
    ['x@[IPv6:1:2:3:4:5:6:1.2.3.4]', 'Success'],
    ['x@[IPv6:1:2:3:4:5:1.2.3.4]', 'UnacceptableDomainLiteral@25'],
    ['x@[IPv6:1::1.2.3.4]', 'Success'],
    ['x@[IPv6:g::1]', 'UnacceptableDomainLiteral@12'],
    ['x@[tag:content]', 'UnacceptableDomainLiteral@14'],
    ['x@[1.2.3.4', 'UnacceptableDomainLiteral@10'],
    ['x@[1.2.3.4 ]', 'InvalidCharacterInSequence@10'],
    ['x@[1.2[3.4]', 'InvalidCharacterInSequence@6'],
    ['x@[1.2\\3.4]', 'InvalidCharacterInSequence@6'],
    ['x@[1.2.3.4].org', 'InvalidWordBoundaryStart@11'],
    ['x@[1.2.3.4]x', 'InvalidWordBoundaryStart@11'],
    ['x@[1.2.3.4],', 'InvalidCharacterInSequence@11'],
    ['x@[1.2.3.4] (c)', 'Success'],
  ])('%j → %s', (input, expected) => {
    expect(failure(input)).toBe(expected);
  });
});

describe('parseAddress: CFWS', () => {
  it.each([
    ['\r\n \r\n test@iana.org', 'InvalidFoldingWhiteSpaceSequence@3'], // obs-FWS: a second fold
    ['\r\n\r\n test@iana.org', 'InvalidFoldingWhiteSpaceSequence@2'], // CRLF not followed by WSP
    ['\r\n (c)\r\n test@iana.org', 'Success'], // one fold on each side of a comment
    ['test@iana.org\r\n', 'InvalidFoldingWhiteSpaceSequence@15'],
    ['test\rx@iana.org', 'InvalidFoldingWhiteSpaceSequence@5'],
    ['(a(b)c)test@iana.org', 'Success'],
    ['((a)test@iana.org', 'UnbalancedCommentParenthesis@17'],
    ['(a\\)test@iana.org', 'UnbalancedCommentParenthesis@17'],
    ['(a\\\u0007)test@iana.org', 'UnexpectedQuotedPairSequence@3'],
    ['(a\u0007)test@iana.org', 'InvalidCharacterInSequence@2'],
    ['(a\nb)test@iana.org', 'InvalidCharacterInSequence@2'],
    ['test (c) test@iana.org', 'InvalidWordBoundaryStart@9'],
    ['hello world@iana.org', 'InvalidWordBoundaryStart@6'],
    ['test.(c)test@iana.org', 'InvalidWordBoundaryStart@5'],
    ['test@iana.org (c) x', 'InvalidWordBoundaryStart@18'],
    ['test (c)', 'AtSignNotFound@8'],
    ['  ', 'AtSignNotFound@2'],
    [' @iana.org', 'InvalidLocalPartLength@1'],
    ['test@ ', 'DomainPartCompliancyFailure@6'],
  ])('%j → %s', (input, expected) => {
    expect(failure(input)).toBe(expected);
  });
});

describe('provider rules (IspSpecificSyntaxFailure)', () => {
  it.each([
    // Gmail: letters, digits and dots; 6 to 30 letters and digits; "+" sub-addresses.
    ['john.doe@gmail.com', 'Success'],
    ['j.o.h.n.d.o.e+news_2024@googlemail.com', 'Success'],
    ['john_doe@gmail.com', 'IspSpecificSyntaxFailure@4'],
    ['jo.hn@gmail.com', 'IspSpecificSyntaxFailure@5'],
    ['a'.repeat(31) + '@gmail.com', 'IspSpecificSyntaxFailure@31'],
    ['"john.doe"@gmail.com', 'IspSpecificSyntaxFailure@0'],
    ['jöhndoe@gmail.com', 'IspSpecificSyntaxFailure@1'],
    ['JohnDoe1@GMAIL.COM', 'Success'],
    // Yahoo: starts with a letter; letters, digits, "_", one "."; 4 to 32; "-keyword" disposable addresses.
    ['john_doe@yahoo.com', 'Success'],
    ['john.doe-shopping@yahoo.co.uk', 'Success'],
    ['1john@yahoo.fr', 'IspSpecificSyntaxFailure@0'],
    ['j.o.hn@yahoo.com', 'IspSpecificSyntaxFailure@3'],
    ['joe@ymail.com', 'IspSpecificSyntaxFailure@3'],
    ['yahoo@yahoo.example.org', 'Success'], // not a Yahoo domain
    // Outlook/Hotmail/Live: starts with a letter; letters, digits, ".", "_", "-".
    ['john-doe_1@hotmail.co.uk', 'Success'],
    ['john+tag@outlook.com', 'Success'],
    ['_john@live.com', 'IspSpecificSyntaxFailure@0'],
    ['jo!hn@msn.com', 'IspSpecificSyntaxFailure@2'],
    ['+john@outlook.com', 'IspSpecificSyntaxFailure@0'],
    ['+johndoe@gmail.com', 'IspSpecificSyntaxFailure@8'],
    // AOL: 3 to 32, one dot.
    ['jd@aol.com', 'IspSpecificSyntaxFailure@2'],
    ['j.d.x@aol.com', 'IspSpecificSyntaxFailure@3'],
    ['john.doe@aol.com', 'Success'],
    // iCloud: 3 to 20, letters, digits, ".", "_".
    ['john_doe@icloud.com', 'Success'],
    ['j'.repeat(21) + '@me.com', 'IspSpecificSyntaxFailure@21'],
    ['john-doe@mac.com', 'IspSpecificSyntaxFailure@4'],
    // Only after the RFC checks.
    ['john..doe@gmail.com', 'DoubleDotSequence@5'],
  ])('%j → %s', (input, expected) => {
    expect(failure(input)).toBe(expected);
  });

  it('keeps every rule as data with a source', () => {
    for (const rule of PROVIDER_RULES) expect(rule.source).toMatch(/^https:\/\//);
  });
});
