// Offline throughput: `mailverify check FILE` (default options: syntax, lists, suggestions, no network) over a
// generated file of realistic lines, against a floor that only reads the lines and writes one small JSON object per
// line (floor.mjs). Runs are interleaved, each in its own process; wall time and peak RSS per run.
//
//   node bench/offline/run.mjs [--lines=1000000] [--runs=5]
//
// The input is generated from a fixed seed into the system's temporary directory (kept for later runs); the outputs
// written to a file go there too and are removed.

import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, openSync, closeSync, renameSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LARGE_MIX, SEED, realisticCorpus } from '../syntax/corpus.mjs';

const HERE = (path) => fileURLToPath(new URL(path, import.meta.url));
const CLI = HERE('../../dist/cli.js');
const FLOOR = HERE('./floor.mjs');
const LAST_RUN = HERE('./last-run.md');
const TIME = '/usr/bin/time';

const { values: flags } = parseArgs({ options: { lines: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '5' } } });
const lineCount = Number(flags.lines);
const runs = Number(flags.runs);
if (!(Number.isInteger(lineCount) && lineCount > 0 && Number.isInteger(runs) && runs > 0)) {
  console.error('run.mjs: --lines and --runs must be positive integers');
  process.exit(2);
}
if (!existsSync(CLI)) {
  console.error(`run.mjs: ${CLI} is missing (run npm run build)`);
  process.exit(2);
}

/** 40,000 company domains: a million lines reach some 56,000 distinct domain parts, as a large real list would. */
const COMPANIES = 40_000;

function inputFile() {
  const file = join(os.tmpdir(), `mailverify-offline-${SEED + 3}-${lineCount}.txt`);
  if (existsSync(file)) return file;
  process.stderr.write(`generating ${lineCount.toLocaleString('en')} lines into ${file}...\n`);
  const lines = realisticCorpus(lineCount, SEED + 3, { companies: COMPANIES, mix: LARGE_MIX });
  writeFileSync(`${file}.part`, lines.join('\n') + '\n');
  renameSync(`${file}.part`, file);
  return file;
}

const hasTime = existsSync(TIME);
const WRAPPER = HERE('./measure.mjs');

/** Runs `node script args` with stdout to `outPath`; wall seconds and peak RSS in MB. */
function measure(script, args, outPath) {
  const out = openSync(outPath, 'w');
  try {
    const command = hasTime
      ? [TIME, ['-f', '%e %M', process.execPath, script, ...args]]
      : [process.execPath, [WRAPPER, script, ...args]];
    const child = spawnSync(command[0], command[1], { stdio: ['ignore', out, 'pipe'], encoding: 'utf8', maxBuffer: 1 << 26 });
    if (child.status !== 0) throw new Error(`${script} failed (${child.status ?? child.signal}):\n${child.stderr}`);
    const [seconds, kilobytes] = child.stderr.trim().split('\n').pop().split(' ').map(Number);
    return { seconds, rssMb: kilobytes / 1024 };
  } finally {
    closeSync(out);
  }
}

const file = inputFile();
const outFile = join(os.tmpdir(), `mailverify-offline-out-${process.pid}.jsonl`);
const variants = [
  { name: 'floor > /dev/null', script: FLOOR, args: [file], out: '/dev/null' },
  { name: 'mailverify check > /dev/null', script: CLI, args: ['check', file], out: '/dev/null' },
  { name: 'floor > file', script: FLOOR, args: [file], out: outFile },
  { name: 'mailverify check > file', script: CLI, args: ['check', file], out: outFile, check: true },
];
const results = new Map(variants.map((v) => [v.name, []]));
try {
  for (let round = 0; round < runs; round++) {
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(k + round) % variants.length];
      const result = measure(variant.script, variant.args, variant.out);
      if (variant.check) {
        // One result per input, in input order.
        const text = readFileSync(outFile, 'utf8');
        let expected = 0;
        for (let start = 0; start < text.length; ) {
          const end = text.indexOf('\n', start);
          const at = text.indexOf(',', start);
          if (text.slice(start, at) !== `{"index":${expected}`) throw new Error(`result ${expected} is missing or out of order`);
          expected++;
          start = end + 1;
        }
        if (expected !== lineCount) throw new Error(`${expected} results for ${lineCount} lines`);
        result.bytes = statSync(outFile).size;
      }
      results.get(variant.name).push(result);
      process.stderr.write(`round ${round + 1}: ${variant.name}: ${result.seconds.toFixed(2)} s, ${result.rssMb.toFixed(0)} MB\n`);
    }
  }
} finally {
  rmSync(outFile, { force: true });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const stat = (name, key) => results.get(name).map((r) => r[key]);
const rows = variants.map(({ name }) => {
  const seconds = stat(name, 'seconds');
  const floorName = name.endsWith('/dev/null') ? 'floor > /dev/null' : 'floor > file';
  return `| ${name} | ${median(seconds).toFixed(2)} | ${Math.min(...seconds).toFixed(2)} | ${(median(seconds) / median(stat(floorName, 'seconds'))).toFixed(2)}× | ${Math.round(lineCount / median(seconds)).toLocaleString('en')} | ${Math.max(...stat(name, 'rssMb')).toFixed(0)} |`;
});
const outputBytes = results.get('mailverify check > file')[0].bytes;
const report = [
  `Machine: ${os.cpus()[0]?.model.trim()}, ${os.cpus().length} cores, Node ${process.version} (${process.platform}-${process.arch})  `,
  `Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC  `,
  `Input: ${lineCount.toLocaleString('en')} lines, ${(statSync(file).size / 1e6).toFixed(1)} MB; mailverify's output ${(outputBytes / 1e6).toFixed(0)} MB  `,
  `Method: ${runs} interleaved rounds, each run its own process; wall time and peak RSS from ${hasTime ? '/usr/bin/time' : 'process.resourceUsage()'}.`,
  '',
  '| Run | Median s | Best s | Median vs floor | Lines/s (median) | Peak RSS MB (max) |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  ...rows,
  '',
].join('\n');
process.stdout.write(report);
writeFileSync(LAST_RUN, report);
process.stderr.write(`written to ${LAST_RUN}\n`);
