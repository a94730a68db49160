// Every row of the project's own syntax corpus (corpus/syntax-cases.jsonl, written from the policy of
// decisions.md §3 by corpus/build-syntax-cases.mjs).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { STATUS_CODES, isInGroup, parseAddress } from '../../packages/mailverify/src/index.js';

interface CorpusRow {
  input: string;
  status: string;
  index: number | null;
  parts?: Record<string, unknown>;
  note: string;
}

const rows: CorpusRow[] = readFileSync(new URL('../../corpus/syntax-cases.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as CorpusRow);

describe('corpus/syntax-cases.jsonl', () => {
  it('has at least 400 rows and every syntax status at least 10 times', () => {
    expect(rows.length).toBeGreaterThanOrEqual(400);
    const counts = new Map<string, number>();
    for (const row of rows) counts.set(row.status, (counts.get(row.status) ?? 0) + 1);
    for (const status of STATUS_CODES.filter((s) => isInGroup(s, 'syntax'))) {
      expect([status, (counts.get(status) ?? 0) >= 10]).toEqual([status, true]);
    }
    expect(counts.get('Success') ?? 0).toBeGreaterThanOrEqual(100);
  });

  it.each(rows.map((row, line) => [line + 1, JSON.stringify(row.input).slice(0, 70), row] as const))(
    'row %i: %s',
    (_line, _label, row) => {
      const result = parseAddress(row.input);
      if (row.status === 'Success') {
        expect(result.ok).toBe(true);
        if (result.ok && row.parts) {
          expect({
            emailAddress: result.emailAddress,
            localPart: result.localPart,
            domainPart: result.domainPart,
            asciiDomainPart: result.asciiDomainPart,
            hasInternationalMailboxName: result.hasInternationalMailboxName,
            hasInternationalDomainName: result.hasInternationalDomainName,
          }).toEqual(row.parts);
        }
      } else {
        expect(result).toEqual({ ok: false, status: row.status, syntaxFailureIndex: row.index });
      }
    },
  );
});
