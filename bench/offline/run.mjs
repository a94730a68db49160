// Offline throughput: `mailverify check FILE` (default options: syntax, lists, suggestions, no network) over a
// generated file of realistic lines, against a floor that only reads the lines and writes one small JSON object per
// line (floor.mjs). Runs are interleaved, each in its own process; wall time and peak RSS per run. The check runs
// with its default threads (one worker per core) and with --threads 1 (the engine's verifyMany on the main thread);
// --base=DIR adds the dist/cli.js of another build (an older commit's) to the same rounds.
//
//   node bench/offline/run.mjs [--lines=1000000[,5000000]] [--runs=5] [--base=DIR]
//
// The input is generated from a fixed seed into the system's temporary directory (kept for later runs); the outputs
// written to a file go there too and are removed.

import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync, openSync, closeSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LARGE_MIX, SEED, realisticCorpus } from '../syntax/corpus.mjs';

const HERE = (path) => fileURLToPath(new URL(path, import.meta.url));
const CLI = HERE('../../packages/mailverify/bin/mailverify.js');
const FLOOR = HERE('./floor.mjs');
const LAST_RUN = HERE('./last-run.md');
const TIME = '/usr/bin/time';

const { values: flags } = parseArgs({
  options: { lines: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '5' }, base: { type: 'string' } },
});
const lineCounts = flags.lines.split(',').map(Number);
const runs = Number(flags.runs);
if (!(lineCounts.every((n) => Number.isInteger(n) && n > 0) && Number.isInteger(runs) && runs > 0)) {
  console.error('run.mjs: --lines (a comma-separated list) and --runs must be positive integers');
  process.exit(2);
}
const BASE_CLI = flags.base === undefined ? undefined : join(flags.base, 'dist', 'cli.js');
for (const cli of [CLI, BASE_CLI]) {
  if (cli !== undefined && !existsSync(cli)) {
    console.error(`run.mjs: ${cli} is missing (run npm run build)`);
    process.exit(2);
  }
}

/** 40,000 company domains: a million lines reach some 56,000 distinct domain parts, as a large real list would. */
const COMPANIES = 40_000;

function inputFile(lineCount) {
  const file = join(os.tmpdir(), `mailverify-offline-${SEED + 3}-${lineCount}.txt`);
  if (existsSync(file)) return file;
  process.stderr.write(`generating ${lineCount.toLocaleString('en')} lines into ${file}...\n`);
  // In slices of a million lines: one string of five million would pass the longest string V8 makes.
  const part = `${file}.part`;
  writeFileSync(part, '');
  for (let done = 0; done < lineCount; done += 1_000_000) {
    const lines = realisticCorpus(Math.min(1_000_000, lineCount - done), SEED + 3 + done, { companies: COMPANIES, mix: LARGE_MIX });
    writeFileSync(part, lines.join('\n') + '\n', { flag: 'a' });
  }
  renameSync(part, file);
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

/** Checks that the output holds one result per input line, in input order, reading it in chunks. */
async function checkOutput(path, lineCount) {
  let expected = 0;
  let pending = '';
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    const text = pending + chunk;
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      if (!text.startsWith(`{"index":${expected},`, start)) throw new Error(`result ${expected} is missing or out of order`);
      expected++;
      start = end + 1;
    }
    pending = text.slice(start);
  }
  if (expected !== lineCount || pending !== '') throw new Error(`${expected} results for ${lineCount} lines`);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const load = () => os.loadavg().map((n) => n.toFixed(2)).join(', ');

const outFile = join(os.tmpdir(), `mailverify-offline-out-${process.pid}.jsonl`);
const sections = [
  `Machine: ${os.cpus()[0]?.model.trim()}, ${os.cpus().length} cores, Node ${process.version} (${process.platform}-${process.arch})  `,
  `Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; load average at the start ${load()}  `,
  `Method: ${runs} interleaved rounds, each run its own process; wall time and peak RSS (of the whole process, its threads included) from ${hasTime ? '/usr/bin/time' : 'process.resourceUsage()'}. The comparison is wall time on ${os.cpus().length} cores.`,
  '',
];
try {
  for (const lineCount of lineCounts) {
    const file = inputFile(lineCount);
    const variants = [
      { name: 'floor > /dev/null', script: FLOOR, args: [file], out: '/dev/null' },
      { name: 'mailverify check > /dev/null', script: CLI, args: ['check', file, '--quiet'], out: '/dev/null' },
      { name: 'mailverify check --threads 1 > /dev/null', script: CLI, args: ['check', file, '--quiet', '--threads', '1'], out: '/dev/null' },
      ...(BASE_CLI === undefined ? [] : [{ name: 'base build: mailverify check > /dev/null', script: BASE_CLI, args: ['check', file, '--quiet'], out: '/dev/null' }]),
      { name: 'floor > file', script: FLOOR, args: [file], out: outFile },
      { name: 'mailverify check > file', script: CLI, args: ['check', file, '--quiet'], out: outFile, check: true },
    ];
    const results = new Map(variants.map((v) => [v.name, []]));
    let outputBytes = 0;
    for (let round = 0; round < runs; round++) {
      for (let k = 0; k < variants.length; k++) {
        const variant = variants[(k + round) % variants.length];
        const result = measure(variant.script, variant.args, variant.out);
        if (variant.check) {
          await checkOutput(outFile, lineCount);
          outputBytes = statSync(outFile).size;
        }
        results.get(variant.name).push(result);
        process.stderr.write(`${lineCount} lines, round ${round + 1}: ${variant.name}: ${result.seconds.toFixed(2)} s, ${result.rssMb.toFixed(0)} MB\n`);
      }
    }
    const stat = (name, key) => results.get(name).map((r) => r[key]);
    const rows = variants.map(({ name }) => {
      const seconds = stat(name, 'seconds');
      const floorName = name.endsWith('/dev/null') ? 'floor > /dev/null' : 'floor > file';
      return `| ${name} | ${median(seconds).toFixed(2)} | ${Math.min(...seconds).toFixed(2)} | ${(median(seconds) / median(stat(floorName, 'seconds'))).toFixed(2)}× | ${Math.round(lineCount / median(seconds)).toLocaleString('en')} | ${median(stat(name, 'rssMb')).toFixed(0)} | ${Math.max(...stat(name, 'rssMb')).toFixed(0)} |`;
    });
    sections.push(
      `Input: ${lineCount.toLocaleString('en')} lines, ${(statSync(file).size / 1e6).toFixed(1)} MB; mailverify's output ${(outputBytes / 1e6).toFixed(0)} MB; load average after ${load()}`,
      '',
      '| Run | Median s | Best s | Median vs floor | Lines/s (median) | Peak RSS MB (median) | Peak RSS MB (max) |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...rows,
      '',
    );
  }
} finally {
  rmSync(outFile, { force: true });
}

const report = sections.join('\n');
process.stdout.write(report);
writeFileSync(LAST_RUN, report);
process.stderr.write(`written to ${LAST_RUN}\n`);
