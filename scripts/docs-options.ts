// Writes the reference table of `mailverify serve`'s options into docs/options.md (npm run docs:options, from the
// package's folder); test/cli/serve-options.test.ts fails while the table there differs from it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withOptionsTable } from '../packages/server/src/cli/serve-options.js';

const readme = join(process.cwd(), 'docs', 'options.md');
const before = readFileSync(readme, 'utf8');
const after = withOptionsTable(before);
if (after === before) {
  process.stdout.write('docs/options.md: the options table is up to date\n');
} else {
  writeFileSync(readme, after);
  process.stdout.write('docs/options.md: the options table is written\n');
}
