/**
 * Conformance with the field: every row of the eight public test suites in test/fixtures/corpora is either checked
 * against our parser or listed in deviations.jsonl with a reason; expectations.ts decides which, from the policy of
 * docs/syntax.md. Rows where the parser contradicts that policy are kept in suspected-bugs.jsonl and must stay
 * broken until fixed (then they move out). AGREEMENT.md holds the per-suite figures.
 *
 * After a deliberate change (parser, rules or corpora), regenerate the three files and review their diff:
 *   CONFORMANCE_UPDATE=1 npx vitest run test/conformance
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAddress, type ParseResult } from '../../packages/mailverify/src/index.js';
import { SUITES, expectationFor, rowsOf, syntaxOptionsFor, type Expectation, type Fact, type Row, type Suite } from './expectations.js';

const REGENERATE = 'CONFORMANCE_UPDATE=1 npx vitest run test/conformance';
const STALE = `out of date: regenerate with \`${REGENERATE}\` and review the diff`;
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

/** One line of suspected-bugs.jsonl: the parser contradicts what docs/syntax.md says about this row. */
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
  | { kind: 'deviation'; entry: Deviation }
  | { kind: 'bug'; entry: SuspectedBug };

interface Evaluated {
  row: Row;
  id: string;
  expectation: Expectation;
  result: ParseResult;
  outcome: Outcome;
}

const idOf = (suite: string, key: string | number): string => `${suite}#${key}`;
const weSay = (r: ParseResult): string => (r.ok ? 'Success' : `${r.status}@${r.syntaxFailureIndex}`);
const validity = (valid: boolean): string => (valid ? 'valid' : 'invalid');
const factText = (f: Fact): string => `${f.name}=${JSON.stringify(f.suiteValue)}`;
const ourFact = (r: ParseResult, f: Fact): string | boolean | undefined => (r.ok ? r[f.field] : undefined);

/** The parser agrees with the policy on this row: its validity, and every fact that must be equal. */
function agreesWithPolicy(e: Expectation, r: ParseResult): boolean {
  if (e.kind === 'undecidable') return true;
  return r.ok === e.valid && e.facts.every((f) => f.reason !== null || ourFact(r, f) === f.suiteValue);
}

/** The row still deviates from the suite: the validity differs, a transformed fact differs, or it is undecidable. */
function deviatesFromSuite(e: Expectation, r: ParseResult): boolean {
  if (e.kind === 'undecidable') return true;
  if (r.ok !== e.suiteValid) return true;
  const transformed = e.facts.filter((f) => f.reason !== null);
  return transformed.length > 0 && transformed.every((f) => ourFact(r, f) !== f.suiteValue);
}

/** Decides one row: agreement, a listed deviation, or a suspected bug. */
function evaluate(row: Row): Evaluated {
  const { data } = row;
  const expectation = expectationFor(row);
  const result = parseAddress(data.address, syntaxOptionsFor(row));
  const head = { suite: row.suite, key: row.key, address: data.address };
  const done = (outcome: Outcome): Evaluated => ({ row, id: idOf(row.suite, row.key), expectation, result, outcome });

  if (expectation.kind === 'undecidable') {
    const entry = { ...head, suite_says: expectation.suiteSays, we_say: weSay(result), reason: expectation.reason };
    return done({ kind: 'deviation', entry });
  }
  const { suiteValid, valid, reason, facts } = expectation;
  if (!agreesWithPolicy(expectation, result)) {
    const wrongFacts =
      result.ok === valid ? facts.filter((f) => f.reason === null && ourFact(result, f) !== f.suiteValue) : [];
    const entry = {
      ...head,
      suite_says: [validity(suiteValid), ...wrongFacts.map(factText)].join(', '),
      we_say: [weSay(result), ...wrongFacts.map((f) => `${f.field}=${JSON.stringify(ourFact(result, f))}`)].join(', '),
      policy_says: [validity(valid), ...wrongFacts.map(factText)].join(', '),
      rule: reason ?? (wrongFacts.length > 0 ? 'docs/syntax.md Output' : 'docs/syntax.md agrees with the suite here'),
    };
    return done({ kind: 'bug', entry });
  }
  if (valid !== suiteValid) {
    const entry = { ...head, suite_says: validity(suiteValid), we_say: weSay(result), reason: reason! };
    return done({ kind: 'deviation', entry });
  }
  // Both sides accept: facts the suite reports in another form than ours make the row a (fact) deviation.
  const transformed = facts.filter((f) => f.reason !== null);
  if (transformed.length === 0) return done({ kind: 'agree' });
  const entry = {
    ...head,
    suite_says: ['valid', ...transformed.map(factText)].join(', '),
    we_say: weSay(result),
    reason: [...new Set(transformed.map((f) => f.reason!))].join('; '),
  };
  return done({ kind: 'deviation', entry });
}

const rows: Row[] = SUITES.flatMap((suite) =>
  rowsOf(suite, readFileSync(new URL(`../fixtures/corpora/${suite}-tests.jsonl`, import.meta.url), 'utf8')),
);
const evaluated: Evaluated[] = rows.map(evaluate);
const computedDeviations = evaluated.flatMap((e) => (e.outcome.kind === 'deviation' ? [e.outcome.entry] : []));
const computedBugs = evaluated.flatMap((e) => (e.outcome.kind === 'bug' ? [e.outcome.entry] : []));

// ---------------------------------------------------------------------------------------------------------------
// Figures (AGREEMENT.md)

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
    'Generated by `test/conformance/conformance.test.ts`, which fails when this file is stale. Regenerate with',
    `\`${REGENERATE}\` and review the diff.`,
    '',
    '- **rows**: rows of `test/fixtures/corpora/<suite>-tests.jsonl`.',
    '- **checked**: rows whose validity, and every extra fact the suite asserts with the same meaning as ours, are',
    '  compared with `parseAddress` (python `asciiDomain`/`domain`/`localPart`/`normalized`/`smtputf8`,',
    '  email-addresses `localPart`/`domain`/`normalized`, Go `expected[0].address`).',
    '- **agree**: checked rows where the parser matches; the others are in `suspected-bugs.jsonl`.',
    '- **deviations**: rows in `deviations.jsonl`: our policy (docs/syntax.md) deliberately differs, the suite asks',
    '  another question (an option we do not have), or the suite reports a fact in another form than ours (those',
    '  rows still have their validity checked).',
    '',
    'Header-syntax rows that a suite rejects (display names, angle addresses, lists) count as agreeing: we reject',
    'them too, whatever the suite objected to inside them.',
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

if (process.env['CONFORMANCE_UPDATE'] === '1') {
  writeFileSync(DEVIATIONS_FILE, toJsonl(computedDeviations));
  writeFileSync(BUGS_FILE, toJsonl(computedBugs));
  writeFileSync(AGREEMENT_FILE, agreementMarkdown());
}

const listedDeviations = readJsonl<Deviation>(DEVIATIONS_FILE);
const listedBugs = readJsonl<SuspectedBug>(BUGS_FILE);
const listedDeviationIds = new Set(listedDeviations.map((d) => idOf(d.suite, d.key)));
const listedBugIds = new Set(listedBugs.map((b) => idOf(b.suite, b.key)));
const byId = new Map(evaluated.map((e) => [e.id, e]));

describe('conformance with the field: every row', () => {
  it('has 2,100 rows with unique keys in 8 suites', () => {
    expect(rows).toHaveLength(2100);
    expect(byId.size).toBe(rows.length);
  });

  it.each(SUITES)('%s: each row is checked or listed in deviations.jsonl, never both, never neither', (suite) => {
    const misfiled = evaluated
      .filter((e) => e.row.suite === suite)
      .filter((e) => (e.outcome.kind === 'deviation') !== listedDeviationIds.has(e.id))
      .map((e) => `${e.id} (${e.outcome.kind}, ${listedDeviationIds.has(e.id) ? 'listed' : 'not listed'})`);
    expect(misfiled, `deviations.jsonl is ${STALE}`).toEqual([]);
  });

  it.each(SUITES)('%s: each checked row agrees with the parser, except the listed suspected bugs', (suite) => {
    const disagreeing = evaluated
      .filter((e) => e.row.suite === suite && !listedDeviationIds.has(e.id))
      .filter((e) => !agreesWithPolicy(e.expectation, e.result))
      .map((e) => e.id);
    expect(disagreeing).toEqual([...listedBugIds].filter((id) => id.startsWith(`${suite}#`)));
  });
});

describe('conformance with the field: deviations.jsonl', () => {
  it('has no entries for rows that do not exist, and no duplicates', () => {
    expect([...listedDeviationIds].filter((id) => !byId.has(id))).toEqual([]);
    expect(listedDeviationIds.size).toBe(listedDeviations.length);
  });

  it('lists only rows that still differ from the suite or cannot be decided against it', () => {
    const notDeviating = [...listedDeviationIds].filter((id) => {
      const e = byId.get(id);
      return e === undefined || !deviatesFromSuite(e.expectation, e.result);
    });
    expect(notDeviating, `listed rows that no longer deviate; ${STALE}`).toEqual([]);
  });

  it('records the current result and reason of every deviation', () => {
    expect(listedDeviations, STALE).toEqual(computedDeviations);
  });
});

describe('conformance with the field: suspected-bugs.jsonl', () => {
  it('lists rows that are still broken (move a row out once the parser is fixed)', () => {
    const fixed = listedBugs.filter((b) => {
      const e = byId.get(idOf(b.suite, b.key));
      return e === undefined || agreesWithPolicy(e.expectation, e.result);
    });
    expect(fixed, `fixed or unknown rows; ${STALE}`).toEqual([]);
    expect(listedBugs, STALE).toEqual(computedBugs);
  });
});

describe('conformance with the field: AGREEMENT.md', () => {
  it('holds the current figures', () => {
    const current = existsSync(AGREEMENT_FILE) ? readFileSync(AGREEMENT_FILE, 'utf8') : '';
    expect(current, `AGREEMENT.md is ${STALE}`).toBe(agreementMarkdown());
  });
});
