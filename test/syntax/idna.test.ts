// Internationalized domain names: UTS-46 through the tr46 package with the flags of docs/syntax.md#domains, so the
// verdicts are the same on every Node.js version. The runtime's URL parser gave other answers: Node 24 judged each
// character of a right-to-left label by the Bidi rule as if it were a label of its own (`test@مثال.com` failed at 5),
// Node 20 let labels through that break the Bidi rule and knew fewer characters.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAddress } from '../../packages/mailverify/src/index.js';
import { normalizeDomain } from '../../packages/mailverify/src/lists/domain-set.js';

const verdict = (input: string): string => {
  const r = parseAddress(input);
  return r.ok ? r.asciiDomainPart : `${r.status}@${r.syntaxFailureIndex}`;
};

describe('parseAddress: internationalized domains, the same on every Node.js', () => {
  it('takes test@مثال.com as the A-label xn--mgbh0fb.com', () => {
    expect(parseAddress('test@مثال.com')).toEqual({
      ok: true,
      emailAddress: 'test@مثال.com',
      localPart: 'test',
      domainPart: 'مثال.com',
      asciiDomainPart: 'xn--mgbh0fb.com',
      hasInternationalMailboxName: false,
      hasInternationalDomainName: true,
    });
  });

  // Right-to-left labels: the Bidi rule (RFC 5893 §2) judges each label as a whole, at the end of the label.
  it.each([
    ['test@مثال.إختبار', 'xn--mgbh0fb.xn--kgbechtv'], // Arabic labels, Arabic top-level label
    ['a@שלום.co.il', 'xn--9dbne9b.co.il'], // Hebrew
    ['a@مثال.example.com', 'xn--mgbh0fb.example.com'], // each label is judged alone
    ['a@مثال1.com', 'xn--1-ymcl5hc.com'], // rule 3: an RTL label may end in a digit
    ['a@مثال١.com', 'xn--mgbh0fb7l.com'], // Arabic-Indic digit (AN) in an RTL label
    ['a@א-ב.com', 'xn----zhce.com'], // rule 2: a hyphen (ES) inside an RTL label
    ['a@ﭏ.com', 'xn--4dby.com'], // U+FB4F maps to two Hebrew letters
    ['a@aמ.com', 'DomainPartCompliancyFailure@4'], // rule 5: no R character in an LTR label
    ['a@aא.com', 'DomainPartCompliancyFailure@4'],
    ['a@מa.com', 'DomainPartCompliancyFailure@4'], // rule 2: no L character in an RTL label
    ['a@مثالexample.com', 'DomainPartCompliancyFailure@13'],
    ['a@1مثال.com', 'DomainPartCompliancyFailure@7'], // rule 1: the first character is L, R or AL
    ['a@١٢٣.com', 'DomainPartCompliancyFailure@5'], // rule 1: an Arabic-Indic digit (AN) first
    ['a@٠.com', 'DomainPartCompliancyFailure@3'],
    ['a@ب١۱.com', 'DomainPartCompliancyFailure@5'], // rule 4: AN and EN digits together
    ['test@مثال', 'DomainPartCompliancyFailure@9'], // a single label, as for any domain
  ])('%j → %s', (input, expected) => {
    expect(verdict(input)).toBe(expected);
  });

  // ZWNJ and ZWJ only in their contexts (RFC 5892 Appendix A.1, A.2), judged with the whole label.
  it.each([
    ['a@क्\u200dष.com', 'xn--11b2ezcw70k.com'], // ZWJ after a virama
    ['a@क्\u200cष.com', 'xn--11b2ezcs70k.com'], // ZWNJ after a virama
    ['a@ب\u200cب.com', 'xn--ngba799q.com'], // ZWNJ between two joining Arabic letters
    ['a@a\u200cb.com', 'DomainPartCompliancyFailure@5'],
    ['a@a\u200db.com', 'DomainPartCompliancyFailure@5'],
    ['a@\u200c.com', 'DomainPartCompliancyFailure@3'],
  ])('%j → %s', (input, expected) => {
    expect(verdict(input)).toBe(expected);
  });

  // The hyphen rule applies to the mapped Unicode label, its A-label and the label an `xn--` label decodes to; `--`
  // in the third and fourth positions is allowed, as in ASCII labels (docs/syntax.md#domains).
  it.each([
    ['a@é-.com', 'DomainPartCompliancyFailure@4'], // at the end of the label
    ['a@-é.com', 'DomainPartCompliancyFailure@2'], // at the hyphen
    ['a@é－.com', 'DomainPartCompliancyFailure@4'], // a full-width hyphen maps to `-`
    ['a@xn----bga.com', 'DomainPartCompliancyFailure@11'], // decodes to `-é`
    ['a@xn----9fa.com', 'DomainPartCompliancyFailure@11'], // decodes to `é-`
    ['a@é--ab.com', 'xn----ab-9oa.com'],
    ['a@ab--é.com', 'xn--ab---epa.com'],
    ['me@yy－－0.tld', 'yy--0.tld'], // as `me@yy--0.tld`
  ])('%j → %s', (input, expected) => {
    expect(verdict(input)).toBe(expected);
  });

  // Mapping and code point status of UTS-46 as of Unicode 17 (tr46 6.0.0).
  it.each([
    ['a@ẞ.de', 'xn--zca.de'], // U+1E9E maps to ß (UTS-46 15.1), no longer to `ss`
    ['a@Ⴀ.ge', 'xn--rkj.ge'], // Georgian capitals map to lower case (UTS-46 15.1)
    ['a@a\u3164b.kr', 'ab.kr'], // Hangul fillers are ignored (UTS-46 15.1)
    ['a@\u3164.kr', 'DomainPartCompliancyFailure@3'], // and a label of ignored characters is empty
    ['a@².com', '2.com'], // a label that maps to digits is a label, not part of an IPv4 address
    ['a@iana.²', 'DomainPartCompliancyFailure@8'], // but not a top-level label
    ['a@\u0301b.com', 'DomainPartCompliancyFailure@4'], // a leading combining mark
    ['a@a\u0301b.com', 'xn--b-tfa.com'], // composes to á
    ['a@a⒈com', 'InvalidCharacterInSequence@3'], // U+2488 maps to `1.`, not to LDH characters
    ['a@a＿b.com', 'InvalidCharacterInSequence@3'],
    ['a@a\ufffdb.com', 'InvalidCharacterInSequence@3'], // disallowed
  ])('%j → %s', (input, expected) => {
    expect(verdict(input)).toBe(expected);
  });
});

describe('normalizeDomain: list data through the same UTS-46 mapping', () => {
  it('stores U-labels as A-labels and refuses a disallowed character', () => {
    expect(normalizeDomain('مثال.com')).toBe('xn--mgbh0fb.com');
    expect(normalizeDomain('ẞ.de')).toBe('xn--zca.de');
    expect(normalizeDomain('a\ufffdb.com')).toBeNull();
  });
});

describe('the engine', () => {
  it("maps domains with tr46 alone: no use of the runtime's UTS-46 (node:url, punycode)", () => {
    const src = fileURLToPath(new URL('../../packages/mailverify/src', import.meta.url));
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(20);
    const offenders = files.filter((file) =>
      /\bdomainTo(?:ASCII|Unicode)\b|from '(?:node:)?punycode/.test(readFileSync(join(src, file), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });
});
