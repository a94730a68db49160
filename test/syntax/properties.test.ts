import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAddress } from '../../packages/mailverify/src/index.js';

// Pieces that exercise every state of the parser, lone surrogates and controls included.
const PIECES = [
  'a', 'Z', '0', 'é', '用', '😆', '.', '..', '@', '"', '\\', '(', ')', '[', ']', ' ', '\t', '\r', '\n', '\r\n ',
  '\u0000', '\u0007', '\u007f', '\u0085', '\ud800', '\udc00', '-', '_', '+', ',', ':', 'xn--', 'IPv6:', '::',
  '1.2.3.4', 'iana.org', 'gmail.com', 'ｉａｎａ', '。', '＿', '\u0301', '\u200c', 'test', '(c)',
];
const piece = fc.constantFrom(...PIECES);
const addressLike = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(''));
const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 80 }),
  addressLike,
);

// Mostly valid addresses: an atom or quoted local part, then labels.
const atom = fc.stringMatching(/^[a-zA-Z0-9!#$%&'*+\/=?^_`{|}~-]{1,12}$/);
const localPart = fc.oneof(
  fc.array(atom, { minLength: 1, maxLength: 3 }).map((a) => a.join('.')),
  fc.stringMatching(/^[a-z ]{1,10}$/).map((s) => `"${s}"`),
  fc.constantFrom('josé', '用户', 'Ω.ω'),
);
const label = fc.oneof(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/), fc.constantFrom('bücher', 'пример', 'ｉａｎａ'));
const domain = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom('com', 'org', 'de', 'рф', 'co.uk'))
  .map(([labels, tld]) => [...labels, tld].join('.'));
const validish = fc.tuple(localPart, domain).map(([l, d]) => `${l}@${d}`);
const cfws = fc.constantFrom('', ' ', '\t', '(comment)', ' (a (nested) comment) ', '\r\n ', ' \r\n\t', '(x)\r\n (y)');

const RUNS = { numRuns: 3000 };

describe('parseAddress properties', () => {
  it('never throws and keeps the index within the input', () => {
    fc.assert(
      fc.property(fc.oneof(anyString, validish), (input) => {
        const r = parseAddress(input);
        if (!r.ok) {
          expect(r.syntaxFailureIndex).toBeGreaterThanOrEqual(0);
          expect(r.syntaxFailureIndex).toBeLessThanOrEqual(input.length);
        }
      }),
      RUNS,
    );
  });

  it('gives a valid address that parses again to itself, without CR, LF or NUL', () => {
    fc.assert(
      fc.property(fc.oneof(anyString, validish, fc.tuple(cfws, validish, cfws).map((t) => t.join(''))), (input) => {
        const r = parseAddress(input);
        if (!r.ok) return;
        for (const part of [r.emailAddress, r.localPart, r.domainPart, r.asciiDomainPart]) {
          expect(part).not.toMatch(/[\r\n\u0000]/);
        }
        expect(parseAddress(r.emailAddress)).toEqual({ ...r });
      }),
      RUNS,
    );
  });

  it('gives the same validity with and without CFWS at the edges', () => {
    const core = fc.oneof(validish, addressLike).filter((s) => s !== '' && !/^[\s()\\]|[\s()\\]$/.test(s));
    fc.assert(
      fc.property(cfws, core, cfws, (before, address, after) => {
        expect(parseAddress(before + address + after).ok).toBe(parseAddress(address).ok);
      }),
      RUNS,
    );
  });

  it('answers 100 kB inputs of every shape', () => {
    const big = 100_000;
    const cases: Array<[string, string]> = [
      ['a'.repeat(big) + '@iana.org', 'InvalidLocalPartLength'],
      ['a@' + 'b.'.repeat(big / 2) + 'org', 'DomainPartCompliancyFailure'],
      ['('.repeat(big), 'UnbalancedCommentParenthesis'],
      ['"' + 'a'.repeat(big), 'UnmatchedQuotedPair'],
      [' '.repeat(big), 'AtSignNotFound'],
      ['x@[' + '1'.repeat(big) + ']', 'UnacceptableDomainLiteral'],
      ['é'.repeat(big), 'InvalidLocalPartLength'],
      ['x@' + 'é'.repeat(big) + '.com', 'DomainPartCompliancyFailure'],
      ['\ud800'.repeat(big), 'InvalidCharacterInSequence'],
    ];
    for (const [input, status] of cases) {
      const r = parseAddress(input);
      expect([input.slice(0, 8), r.ok ? 'Success' : r.status]).toEqual([input.slice(0, 8), status]);
    }
  });
});
