// Syntax benchmark driver: runs every implementation on every corpus, each run in a fresh worker
// process, and prints one markdown table per corpus (also written to bench/syntax/last-run.md).
//
//   node bench/syntax/run.mjs [--runs=5] [--ms=1500] [--only=validator,mailverify] [--corpus=realistic]
//                             [--baseline=DIR]
//
// --baseline adds the row `baseline`: mailverify built in another checkout (DIR/dist/index.js), measured in the
// same rounds, e.g. the parent commit: git archive HEAD~1 | tar -x -C DIR, then npm ci and npm run build in DIR.
//
// `npm run bench:syntax` builds dist/ first; mailverify is skipped with a warning if dist/ is missing.

import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CORPORA } from './corpus.mjs';

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));
const LAST_RUN = fileURLToPath(new URL('./last-run.md', import.meta.url));
const DIST = new URL('../../packages/mailverify/dist/index.js', import.meta.url);
const OURS = 'mailverify';
const BASELINE = 'baseline';
const PEERS = ['validator', '@hapi/address', 'email-addresses', 'isemail', 'email-validator'];

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    ms: { type: 'string', default: '1500' },
    only: { type: 'string' },
    corpus: { type: 'string' },
    baseline: { type: 'string' },
  },
});

/** Usage errors: a message, not a stack trace. */
function fail(message) {
  console.error(`run.mjs: ${message}`);
  process.exit(2);
}

const runs = Number(flags.runs);
const ms = Number(flags.ms);
if (!(Number.isInteger(runs) && runs >= 1 && ms > 0)) fail('--runs must be an integer >= 1 and --ms > 0');

const requested = flags.only ? flags.only.split(',').map((s) => s.trim()) : [OURS, ...PEERS];
for (const name of requested) {
  if (name !== OURS && !PEERS.includes(name)) fail(`unknown implementation "${name}" (known: ${[OURS, ...PEERS]})`);
}
if (flags.baseline !== undefined) {
  if (!existsSync(path.join(flags.baseline, 'dist/index.js'))) fail(`--baseline: no ${path.join(flags.baseline, 'dist/index.js')}`);
  requested.unshift(BASELINE);
}
const corpora = flags.corpus ? flags.corpus.split(',') : Object.keys(CORPORA);
for (const name of corpora) if (!CORPORA[name]) fail(`unknown corpus "${name}" (known: ${Object.keys(CORPORA)})`);

/** mailverify is measured only if the build exports parseAddress. */
async function oursAvailable() {
  if (!existsSync(DIST)) return false;
  try {
    return typeof (await import(DIST.href)).parseAddress === 'function';
  } catch {
    return false;
  }
}

let impls = requested;
if (impls.includes(OURS) && !(await oursAvailable())) {
  const missing = `${fileURLToPath(DIST)} does not export parseAddress (run npm run build)`;
  if (flags.only) fail(`${OURS} requested but ${missing}`);
  console.error(`warning: ${missing}; measuring the peers only`);
  impls = impls.filter((name) => name !== OURS);
}

function runWorker(impl, corpus) {
  const args = [WORKER, impl, corpus, String(ms), ...(impl === BASELINE ? [path.resolve(flags.baseline)] : [])];
  const child = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    timeout: ms + 120_000, // generous: slow peers spend a while in warm-up
  });
  if (child.status !== 0) {
    throw new Error(`worker ${impl}/${corpus} failed (${child.status ?? child.signal}):\n${child.stderr}`);
  }
  return JSON.parse(child.stdout.trim().split('\n').pop());
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const int = (n) => Math.round(n).toLocaleString('en-US');
const percent = (n) => `${(n * 100).toFixed(1)}%`;

function measure(corpus) {
  const samples = new Map(impls.map((impl) => [impl, []]));
  for (let round = 0; round < runs; round++) {
    // Round robin, starting one place later each round, so that a slow spell of the machine and
    // the position in the sequence hit every implementation alike.
    for (let k = 0; k < impls.length; k++) {
      const impl = impls[(round + k) % impls.length];
      const result = runWorker(impl, corpus);
      samples.get(impl).push(result);
      console.error(`  ${corpus} run ${round + 1}/${runs} ${impl}: ${int(result.addressesPerSecond)} addr/s`);
    }
  }
  return impls.map((impl) => {
    const results = samples.get(impl);
    const rates = results.map((r) => r.addressesPerSecond);
    const bestPass = median(results.map((r) => r.bestPassAddressesPerSecond));
    const { accepted, total } = results[0];
    return { impl, median: median(rates), min: Math.min(...rates), max: Math.max(...rates), bestPass, accepted, total };
  });
}

function table(corpus, rows) {
  const peers = rows.filter((r) => r.impl !== OURS && r.impl !== BASELINE);
  const fastestPeer = peers.length ? Math.max(...peers.map((r) => r.median)) : NaN;
  const fastestPeerBestPass = peers.length ? Math.max(...peers.map((r) => r.bestPass)) : NaN;
  const ratio = (n, of) => (Number.isNaN(of) ? '–' : `${(n / of).toFixed(2)}×`);
  const lines = [
    `### ${corpus} (${int(rows[0].total)} addresses)`,
    '',
    '| Implementation | Median addr/s | Min–max addr/s | Best pass addr/s | Accepted | vs fastest peer | vs fastest peer, best pass |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of [...rows].sort((a, b) => b.median - a.median)) {
    const name = r.impl === OURS ? `**${OURS}**` : r.impl === BASELINE ? `${BASELINE} (${flags.baseline})` : r.impl;
    lines.push(
      `| ${name} | ${int(r.median)} | ${int(r.min)}–${int(r.max)} | ${int(r.bestPass)} | ${percent(r.accepted / r.total)} | ` +
        `${ratio(r.median, fastestPeer)} | ${ratio(r.bestPass, fastestPeerBestPass)} |`,
    );
  }
  return lines.join('\n');
}

const cpus = os.cpus();
const cpu = cpus[0]?.model.trim() ?? 'unknown CPU';
const plural = runs === 1 ? '' : 's';
const header = [
  `Machine: ${cpu}, ${cpus.length} cores, Node ${process.version} (${process.platform}-${process.arch})`,
  `Date: ${new Date().toISOString().replace('T', ' ').slice(0, 16)} UTC`,
  `Method: ${runs} run${plural} × ${ms} ms per implementation and corpus, each in its own process, ` +
    'round robin; median shown (of the loop rates, and of each run\'s fastest complete pass).',
  `Load average at the start: ${os.loadavg().map((n) => n.toFixed(2)).join(', ')}`,
].join('  \n'); // two trailing spaces: markdown line break

const sections = [header];
for (const corpus of corpora) {
  console.error(`measuring ${corpus}: ${impls.join(', ')}`);
  sections.push(table(corpus, measure(corpus)));
}
const report = `${sections.join('\n\n')}\n`;

process.stdout.write(`\n${report}`);
writeFileSync(LAST_RUN, report);
console.error(`\nwritten to ${LAST_RUN}`);
