// The parser against its reference (test/syntax/reference/, the parser before it was tuned for speed): the same
// result, field for field, for every input and every policy. Inputs: the benchmark corpora, the project's syntax
// corpus, and generated strings built from the pieces that steer the parser (provider domains and local parts with
// the symbols their rules judge, CFWS, quotes, literals, international labels) and mutations of corpus addresses.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript module
import { getCorpus } from '../../bench/syntax/corpus.mjs';
import { parseAddress, parseWithPositions } from '../../packages/mailverify/src/syntax/parse.js';
import type { SyntaxPolicy } from '../../packages/mailverify/src/syntax/policy.js';
import { parseAddress as referenceParseAddress, parseWithPositions as referenceParseWithPositions } from './reference/parse.js';

const SWITCHES = ['allowQuotedLocalPart', 'allowAddressLiteral', 'allowInternationalLocalPart', 'providerRules'] as const;

/** Every combination of the four switches. */
const POLICIES: SyntaxPolicy[] = Array.from({ length: 16 }, (_, bits) =>
  Object.fromEntries(SWITCHES.map((name, i) => [name, (bits & (1 << i)) === 0])) as unknown as SyntaxPolicy,
);

/** The first input (with the policy) where the two parsers differ, or null. */
function firstDifference(inputs: readonly string[], policy: SyntaxPolicy): unknown {
  for (const input of inputs) {
    const ours = parseWithPositions(input, policy);
    const reference = referenceParseWithPositions(input, policy);
    const same =
      JSON.stringify(ours.result) === JSON.stringify(reference.result) &&
      (!ours.result.ok || ours.domainStart === reference.domainStart);
    if (!same) return { input, policy, ours, reference };
  }
  return null;
}

const syntaxCases: string[] = readFileSync(new URL('../../corpus/syntax-cases.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => (JSON.parse(line) as { input: string }).input);

describe('parser against its reference', () => {
  it.each(['realistic', 'realistic200k', 'simple-valid'])('agrees on every address of the %s benchmark corpus', (name) => {
    const corpus = getCorpus(name) as string[];
    expect(firstDifference(corpus, POLICIES[0]!)).toBeNull();
    // The other policies on a slice: they change only what the switches refuse.
    for (const policy of POLICIES.slice(1)) expect(firstDifference(corpus.slice(0, 4000), policy)).toBeNull();
  });

  it('agrees on every row of corpus/syntax-cases.jsonl, under every policy', () => {
    for (const policy of POLICIES) expect(firstDifference(syntaxCases, policy)).toBeNull();
  });

  it('agrees through parseAddress, options given or not', () => {
    for (const input of syntaxCases) {
      expect(parseAddress(input)).toEqual(referenceParseAddress(input));
      expect(parseAddress(input, { providerRules: false })).toEqual(referenceParseAddress(input, { providerRules: false }));
    }
  });

  const PIECES = [
    'a', 'b', 'Z', 'x', '0', '7', '.', '..', '@', '@', '"', '\\', '(', ')', '[', ']', ' ', '\t', '\r\n ', '\r', '\n',
    '-', '_', '+', '=', '!', '#', '%', '~', '/', "'", ',', ';', ':', 'é', 'ü', '用', '😆', '\u00a0', '\u0301',
    '\u200b', '\u200c', '\ud800', '\u0085', '\u0000', 'ｉ', '。', '．', 'xn--', 'XN--', 'xn--bcher-kva', 'IPv6:',
    '::', '1.2.3.4', '[1.2.3.4]', 'gmail', 'googlemail', 'yahoo', 'ymail', 'rocketmail', 'hotmail', 'outlook', 'msn',
    'live', 'aol', 'icloud', 'me', 'mac', 'com', 'co.uk', 'fr', 'com.br', 'org', 'de', 'рф', 'bücher', 'GMAIL',
    'Yahoo', '.com', '.co.jp', 'john', 'john.doe', 'j_d', 'abc-tag', 'a+tag', '(c)', 'a'.repeat(30), '1'.repeat(20),
  ];
  const piece = fc.constantFrom(...PIECES);
  const text = (max: number) => fc.array(piece, { maxLength: max }).map((parts) => parts.join(''));
  const PROVIDER_DOMAINS = [
    'gmail.com', 'googlemail.com', 'yahoo.com', 'yahoo.co.uk', 'yahoo.fr', 'yahoo.example', 'ymail.com',
    'rocketmail.com', 'hotmail.com', 'hotmail.co.jp', 'live.com', 'live.nl', 'outlook.com', 'msn.com', 'aol.com',
    'icloud.com', 'me.com', 'mac.com', 'Gmail.Com', 'YAHOO.DE', 'ｇｍａｉｌ.com', 'gmail。com', 'gmail.com.', 'gmail.co',
    'gmail.comx', 'mail.gmail.com', 'xgmail.com',
  ];
  const localChars = fc.constantFrom(
    ...'abcxyzABZ0189._-+=!#$%&\'*/?^`{|}~'.split(''), 'é', '用', '..', '"', ' ', '(x)', '\\',
  );
  const localPart = fc.array(localChars, { minLength: 0, maxLength: 40 }).map((parts) => parts.join(''));
  const providerAddress = fc
    .tuple(localPart, fc.constantFrom(...PROVIDER_DOMAINS))
    .map(([local, domain]) => `${local}@${domain}`);
  const cfws = fc.constantFrom('', '', '', ' ', '(c)', ' (a (b) c) ', '\r\n ', '\t');
  const wrapped = fc.tuple(cfws, fc.oneof(providerAddress, text(16)), cfws).map((parts) => parts.join(''));
  const ADDRESS_POOL = getCorpus('realistic').slice(0, 3000) as string[];
  const mutated = fc
    .tuple(
      fc.constantFrom(...ADDRESS_POOL),
      fc.array(fc.tuple(fc.nat(), fc.nat(3), fc.oneof(piece, fc.string({ maxLength: 2 }))), { maxLength: 3 }),
    )
    .map(([address, edits]) => {
      let s = address;
      for (const [at, cut, insert] of edits) {
        const i = at % (s.length + 1);
        s = s.slice(0, i) + insert + s.slice(i + cut);
      }
      return s;
    });
  const anyInput = fc.oneof(
    providerAddress,
    wrapped,
    mutated,
    text(24),
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
  );

  it('agrees on generated inputs, under every policy', () => {
    fc.assert(
      fc.property(anyInput, fc.constantFrom(...POLICIES), (input, policy) => {
        expect(firstDifference([input], policy)).toBeNull();
      }),
      { numRuns: 40_000 },
    );
  });
});
