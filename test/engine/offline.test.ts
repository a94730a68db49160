// The synchronous offline path gives the entries verifyMany gives with checks 'syntax' (deduplication Off).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createOfflineCheck, type OfflineOptions } from '../../packages/mailverify/src/engine/offline.js';
import { createVerifier, type BatchInput } from '../../packages/mailverify/src/engine/verifier.js';

const corpus = readFileSync(fileURLToPath(new URL('../../corpus/syntax-cases.jsonl', import.meta.url)), 'utf8')
  .trim()
  .split('\n')
  .map((line) => (JSON.parse(line) as { input: string }).input);
const inputs: BatchInput[] = [
  ...corpus,
  'john@gmial.com',
  'admin@mailinator.com',
  'user@[8.8.8.8]',
  'user@[10.0.0.1]',
  'josé@bücher.de',
  { inputData: 'jane@example.org', custom: 'row 7' },
  { inputData: 'no-at-sign', custom: '' },
];

/** Entries without their completion time, which differs from run to run. */
const timeless = <T extends { completedOn: string }>(entries: T[]) => entries.map(({ completedOn, ...rest }) => ({ ...rest, completedOn: typeof completedOn }));

describe('createOfflineCheck', () => {
  const cases: [string, OfflineOptions][] = [
    ['default options', {}],
    ['refused forms, no provider rules, private literals, own classifications, no suggestions', {
      syntax: { allowQuotedLocalPart: false, allowInternationalLocalPart: false, providerRules: false },
      allowPrivateAddresses: true,
      classifications: { Success: 'Fine', DomainIsWellKnownDea: 'Throwaway' },
      suggestions: false,
    }],
  ];
  for (const [name, options] of cases) {
    it(`gives the entries of verifyMany with checks 'syntax': ${name}`, async () => {
      const verifier = createVerifier({ ...options, checks: 'syntax' });
      const expected = [];
      for await (const entry of verifier.verifyMany(inputs, { order: 'input' })) expected.push(entry);
      await verifier.close();
      const check = createOfflineCheck(options);
      const actual = inputs.map((item, index) => (typeof item === 'string' ? check(index, item) : check(index, item.inputData, item.custom)));
      expect(timeless(actual)).toEqual(timeless(expected));
      // The same fields in the same order (a host may serialize the entry with JSON.stringify).
      expect(actual.map((entry) => Object.keys(entry))).toEqual(expected.map((entry) => Object.keys(entry)));
    });
  }
});
