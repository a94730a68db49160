/**
 * Conformance with the field: every row of the eight public test suites in test/fixtures/corpora is either checked
 * against our parser or listed in deviations.jsonl with a reason (expectations.ts decides which, from the policy of
 * decisions.md §3). Rows where the parser contradicts the policy are kept in suspected-bugs.jsonl and must stay broken
 * until fixed. AGREEMENT.md holds the per-suite figures.
 *
 * After a deliberate change (parser, rules or corpora), regenerate the three files and review their diff:
 *   CONFORMANCE_UPDATE=1 npx vitest run test/conformance
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAddress, type ParseResult } from '../../src/index.js';
import { SUITES, expectationFor, rowsOf, type Fact, type Row, type Suite } from './expectations.js';

const REGENERATE = 'CONFORMANCE_UPDATE=1 npx vitest run test/conformance';
const UPDATE = process.env['CONFORMANCE_UPDATE'] === '1';
const here = (name: string): URL => new URL(name, import.meta.url);
const DEVIATIONS_FILE = here('./deviations.jsonl');
const BUGS_FILE = here('./suspected-bugs.jsonl');
const AGREEMENT_FILE = here('./AGREEMENT.md');

/** One line of deviations.jsonl. */
interface Deviation {
  suite: Suite;
  key: string | number;
  address: string;
  suite_says: string;
  we_say: string;
  reason: string;
}

/** One line of suspected-bugs.jsonl: the parser contradicts what decisions §3 says about this row. */
interface SuspectedBug {
  suite: Suite;
  key: string | number;
  address: string;
  suite_says: string;
  we_say: string;
  policy_says: string;
  rule: string;
}

type Outcome =
  | { kind: 'agree' }
  | { kind: 'deviation'; entry: Deviation; differs: () => boolean }
  | { kind: 'bug'; entry: SuspectedBug; broken: () => boolean };

interface Evaluated {
  row: Row;
  id: string;
  outcome: Outcome;
}

const idOf = (suite: string, key: string | number): string => `${suite}#${key}`;
const weSay = (r: ParseResult): string => (r.ok ? 'Success' : `${r.status}@${r.syntaxFailureIndex}`);
const validity = (valid: boolean): string => (valid ? 'valid' : 'invalid');
const factText = (f: Fact): string => `${f.name}=${JSON.stringify(f.suiteValue)}`;

/** Decides one row: agreement, a listed deviation, or a suspected bug. */
function evaluate(row: Row): Outcome {
  const { data } = row;
  const result = parseAddress(data.address);
  const base = { suite: row.suite, key: row.key, address: data.address, we_say: weSay(result) };
  const expectation = expectationFor(row);

  if (expectation.kind === 'undecidable') {
    const entry = { ...base, suite_says: expectation.suiteSays, reason: expectation.reason };
    return { kind: 'deviation', entry, differs: () => expectationFor(row).kind === 'undecidable' };
  }
  const { suiteValid, valid, reason } = expectation;
  if (result.ok !== valid) {
    const entry = {
      ...base,
      suite_says: validity(suiteValid),
      policy_says: validity(valid),
      rule: reason ?? 'no deliberate difference: decisions §3 agrees with the suite here',
    };
    return { kind: 'bug', entry, broken: () => parseAddress(data.address).ok !== valid };
  }
  if (valid !== suiteValid) {
    const entry = { ...base, suite_says: validity(suiteValid), reason: reason! };
    return { kind: 'deviation', entry, differs: () => parseAddress(data.address).ok !== suiteValid };
  }
  if (!result.ok) return { kind: 'agree' };

  // Both sides accept: compare the suite's extra facts with ours.
  const ours = (f: Fact): string | boolean => result[f.field];
  const wrong = expectation.facts.filter((f) => f.reason === null && ours(f) !== f.suiteValue);
  if (wrong.length > 0) {
    const entry = {
      ...base,
      suite_says: ['valid', ...wrong.map(factText)].join(', '),
      policy_says: ['valid', ...wrong.map((f) => `${f.field}=${JSON.stringify(f.suiteValue)}`)].join(', '),
      rule: 'decisions §3 Output gives the same value as the suite here',
    };
    return { kind: 'bug', entry, broken: () => true };
  }
  const transformed = expectation.facts.filter((f) => f.reason !== null);
  if (transformed.length === 0) return { kind: 'agree' };
  const entry = {
    ...base,
    suite_says: ['valid', ...transformed.map(factText)].join(', '),
    reason: [...new Set(transformed.map((f) => f.reason!))].join('; '),
  };
  // A fact listed as transformed must still come out differently from ours (as written).
  const differs = (): boolean => {
    const again = parseAddress(data.address);
    return again.ok && transformed.every((f) => again[f.field] !== f.suiteValue);
  };
  return { kind: 'deviation', entry, differs };
}

const rows: Row[] = SUITES.flatMap((suite) =>
  rowsOf(suite, readFileSync(new URL(`../fixtures/corpora/${suite}-tests.jsonl`, import.meta.url), 'utf8')),
);
const evaluated: Evaluated[] = rows.map((row) => ({ row, id: idOf(row.suite, row.key), outcome: evaluate(row) }));
const computedDeviations = evaluated.flatMap((e) => (e.outcome.kind === 'deviation' ? [e.outcome.entry] : []));
const computedBugs = evaluated.flatMap((e) => (e.outcome.kind === 'bug' ? [e.outcome.entry] : []));

// ---------------------------------------------------------------------------------------------------------------
// Figures

interface Figures {
  rows: number;
  checked: number;
  agree: number;
  deviations: number;
}

function figuresOf(list: readonly Evaluated[]): Figures {
  const deviations = list.filter((e) => e.outcome.kind === 'deviation').length;
  const bugs = list.filter((e) => e.outcome.kind === 'bug').length;
  return { rows: list.length, checked: list.length - deviations, agree: list.length - deviations - bugs, deviations };
}

function countBy<T>(items: readonly T[], keyOf: (item: T) => string): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

function agreementMarkdown(): string {
  const line = (cells: Array<string | number>): string => `| ${cells.join(' | ')} |`;
  const table = SUITES.map((suite) => {
    const f = figuresOf(evaluated.filter((e) => e.row.suite === suite));
    return line([suite, f.rows, f.checked, f.agree, f.deviations]);
  });
  const total = figuresOf(evaluated);
  const reasons = countBy(computedDeviations, (d) => d.reason).map(([reason, count]) => {
    const suites = countBy(
      computedDeviations.filter((d) => d.reason === reason),
      (d) => d.suite,
    ).map(([suite, n]) => `${suite} ${n}`);
    return line([count, reason, suites.join(', ')]);
  });
  const perSuite = SUITES.map((suite) => {
    const top = countBy(
      computedDeviations.filter((d) => d.suite === suite),
      (d) => d.reason,
    ).map(([reason, n]) => `  - ${n} × ${reason}`);
    return [`- **${suite}**`, ...(top.length > 0 ? top : ['  - none'])].join('\n');
  });
  return [
    '# Conformance with the field: agreement per suite',
    '',
    'Generated by `test/conformance/conformance.test.ts`; the test fails when this file is stale. Regenerate with',
    `\`${REGENERATE}\` and review the diff.`,
    '',
    '- **rows**: rows of `test/fixtures/corpora/<suite>-tests.jsonl`.',
    '- **checked**: rows whose validity, and every extra fact the suite asserts that means the same as ours, are',
    '  compared with `parseAddress` (python `asciiDomain`/`domain`/`localPart`/`normalized`/`smtputf8`, email-addresses',
    '  `localPart`/`domain`/`normalized`, Go `expected[0].address`).',
    '- **agree**: checked rows where the parser matches; the others are in `suspected-bugs.jsonl`.',
    '- **deviations**: rows in `deviations.jsonl`: our policy (decisions.md §3) deliberately differs, the suite asks',
    '  another question (an option we do not have), or the suite reports a fact in another form (these rows keep',
    '  their validity check). Header-syntax rows a suite rejects (display names, lists) count as agreeing: we reject',
    '  them too.',
    '',
    line(['suite', 'rows', 'checked', 'agree', 'deviations']),
    line(['---', '---:', '---:', '---:', '---:']),
    ...table,
    line(['**total**', total.rows, total.checked, total.agree, total.deviations]),
    '',
    '## Deviations by reason',
    '',
    line(['rows', 'reason', 'suites']),
    line(['---:', '---', '---']),
    ...reasons,
    '',
    '## Deviations per suite',
    '',
    ...perSuite,
    '',
    `Suspected parser bugs: ${computedBugs.length} (see \`suspected-bugs.jsonl\`).`,
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// The files under test

const toJsonl = (items: readonly object[]): string => items.map((item) => `${JSON.stringify(item)}\n`).join('');
const readJsonl = <T>(url: URL): T[] =>
  existsSync(url)
    ? readFileSync(url, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as T)
    : [];

if (UPDATE) {
  writeFileSync(DEVIATIONS_FILE, toJsonl(computedDeviations));
  writeFileSync(BUGS_FILE, toJsonl(computedBugs));
  writeFileSync(AGREEMENT_FILE, agreementMarkdown());
}

const listedDeviations = readJsonl<Deviation>(DEVIATIONS_FILE);
const listedBugs = readJsonl<SuspectedBug>(BUGS_FILE);
const byId = new Map(evaluated.map((e) => [e.id, e]));
const stale = `out of date: regenerate with \`${REGENERATE}\` and review the diff`;

describe('conformance with the field: the corpora', () => {
  it('has 2,100 rows with unique keys in 8 suites', () => {
    expect(rows).toHaveLength(2100);
    expect(byId.size).toBe(rows.length);
  });

  it.each(SUITES)('%s: every checked row agrees with the parser, except the suspected bugs', (suite) => {
    const disagreements = evaluated.filter((e) => e.row.suite === suite && e.outcome.kind === 'bug').map((e) => e.id);
    const expectedBugs = listedBugs.filter((b) => b.suite === suite).map((b) => idOf(b.suite, b.key));
    expect(disagreements).toEqual(expectedBugs);
  });
});

describe('conformance with the field: deviations.jsonl', () => {
  const listedIds = listedDeviations.map((d) => idOf(d.suite, d.key));

  it('has no entries for rows that do not exist, and no duplicates', () => {
    expect(listedIds.filter((id) => !byId.has(id))).toEqual([]);
    expect(new Set(listedIds).size).toBe(listedIds.length);
  });

  it('lists every row that is not checked (no row is skipped silently)', () => {
    const listed = new Set(listedIds);
    const missing = computedDeviations.filter((d) => !listed.has(idOf(d.suite, d.key)));
    expect(missing, `unlisted deviations; ${stale}`).toEqual([]);
  });

  it('lists only rows that still differ from the suite or cannot be decided against it', () => {
    const notDeviating = listedIds.filter((id) => {
      const outcome = byId.get(id)?.outcome;
      return outcome === undefined || outcome.kind !== 'deviation' || !outcome.differs();
    });
    expect(notDeviating, `listed rows that no longer deviate; ${stale}`).toEqual([]);
  });

  it('records the current result and reason of every deviation', () => {
    expect(listedDeviations, stale).toEqual(computedDeviations);
  });
});

describe('conformance with the field: suspected-bugs.jsonl', () => {
  it('lists exactly the rows where the parser contradicts the policy, all still broken', () => {
    const stillBroken = evaluated.filter((e) => e.outcome.kind === 'bug' && e.outcome.broken()).map((e) => e.id);
    expect(stillBroken).toEqual(listedBugs.map((b) => idOf(b.suite, b.key)));
    expect(listedBugs, stale).toEqual(computedBugs);
  });
});

describe('conformance with the field: AGREEMENT.md', () => {
  it('holds the current figures', () => {
    const current = existsSync(AGREEMENT_FILE) ? readFileSync(AGREEMENT_FILE, 'utf8') : '';
    expect(current, `AGREEMENT.md is ${stale}`).toBe(agreementMarkdown());
  });
});
