import { readFileSync, writeFileSync } from 'node:fs';
import { it } from 'vitest';
import { parseAddress } from '../../src/index.js';
import { SUITES, expectationFor, rowsOf } from './expectations.js';
it('dump', () => {
  const out: string[] = [];
  for (const suite of SUITES) {
    for (const row of rowsOf(suite, readFileSync(`test/fixtures/corpora/${suite}-tests.jsonl`, 'utf8'))) {
      const e = expectationFor(row);
      const r = parseAddress(row.data.address);
      const we = r.ok ? 'Success' : `${r.status}@${r.syntaxFailureIndex}`;
      out.push(JSON.stringify({ suite, key: row.key, a: row.data.address, v: row.data.valid, e, we }));
    }
  }
  writeFileSync('/tmp/explore/exp.jsonl', out.join('\n'));
});
