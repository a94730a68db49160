// bench/suggest/run.ts of this tree against the same script in another tree (--base=DIR, a checkout with its
// node_modules), each bundled once, then run in turns, each run its own process, --rounds rounds with the order
// swapped every round; prints each run and the medians. Then, with --base, both suggesters in one process
// (same-process.ts).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { base: { type: 'string' }, rounds: { type: 'string', default: '7' }, lines: { type: 'string', default: '200000' } } });
const here = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const trees = [['current', here]];
if (values.base !== undefined) trees.push(['base', resolve(values.base)]);

const bundles = trees.map(([name, tree]) => {
  mkdirSync(join(tree, 'bench', 'suggest'), { recursive: true });
  if (tree !== here) {
    mkdirSync(join(tree, 'bench', 'offline'), { recursive: true });
    for (const file of ['suggest/run.ts', 'offline/best-of.ts']) copyFileSync(join(here, 'bench', file), join(tree, 'bench', file));
  }
  const out = join(here, 'bench', '.out', `suggest-${name}.mjs`);
  execFileSync(join(here, 'node_modules', '.bin', 'esbuild'), [join(tree, 'bench', 'suggest', 'run.ts'), '--bundle', '--platform=node', '--format=esm', '--packages=external', `--outfile=${out}`, '--log-level=warning'], { cwd: tree, stdio: 'inherit' });
  return [name, out, tree];
});

const results = new Map(bundles.map(([name]) => [name, []]));
for (let round = 0; round < Number(values.rounds); round++) {
  const order = round % 2 === 0 ? bundles : [...bundles].reverse();
  for (const [name, out, tree] of order) {
    const line = execFileSync(process.execPath, [out, `--lines=${values.lines}`], { cwd: tree, encoding: 'utf8' }).trim().split('\n').at(-1);
    const result = JSON.parse(line);
    results.get(name).push(result);
    console.log(`round ${round + 1} ${name}: ${JSON.stringify(result)}`);
  }
}
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
for (const [name, runs] of results) {
  const flag = runs[0].mixedScriptNs === null ? '' : `, mixed-script check median ${median(runs.map((r) => r.mixedScriptNs)).toFixed(1)} ns`;
  console.log(`${name}: suggester.suggest median ${median(runs.map((r) => r.suggestNs)).toFixed(1)} ns per address (min ${Math.min(...runs.map((r) => r.suggestNs)).toFixed(1)})${flag}; ${runs[0].suggested} of ${runs[0].addresses} suggested`);
}

if (values.base !== undefined) {
  const suggestModule = (tree) => JSON.stringify(join(tree, 'packages', 'mailverify', 'src', 'suggest', 'suggest.ts'));
  const entry = join(here, 'bench', '.out', 'suggest-same-process-entry.ts');
  writeFileSync(
    entry,
    [
      `import { createSuggester as current } from ${suggestModule(here)};`,
      `import { createSuggester as base } from ${suggestModule(resolve(values.base))};`,
      `import { runSameProcess } from ${JSON.stringify(join(here, 'bench', 'suggest', 'same-process.ts'))};`,
      `runSameProcess({ base: base(), current: current() }, ${Number(values.lines)});`,
      '',
    ].join('\n'),
  );
  const out = join(here, 'bench', '.out', 'suggest-same-process.mjs');
  execFileSync(join(here, 'node_modules', '.bin', 'esbuild'), [entry, '--bundle', '--platform=node', '--format=esm', '--packages=external', `--outfile=${out}`, '--log-level=warning'], { cwd: here, stdio: 'inherit' });
  execFileSync(process.execPath, [out], { cwd: here, stdio: 'inherit' });
}
