// `mailverify check --checks syntax` on worker threads: the same bytes as on the main thread (`--threads 1`, the
// engine's verifyMany), for every input and output format, run from the build (`npm test` builds dist/ first).
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../packages/mailverify/bin/mailverify.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mailverify-threads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function mailverify(args: string[], stdin?: string | Buffer): Run {
  const r = spawnSync(process.execPath, [cli, ...args], { input: stdin, encoding: 'utf8', maxBuffer: 1 << 28 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The run without what differs from run to run: completion times, and the seconds in the summary. */
const comparable = ({ code, stdout, stderr }: Run): Run => ({
  code,
  stdout: stdout.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, 'TIME'),
  stderr: stderr.replace(/ in \d+\.\d s/, ' in S s'),
});

/** Runs on the main thread and on two worker threads; both runs, comparable. */
function bothWays(args: string[], stdin?: string | Buffer): [Run, Run] {
  return [comparable(mailverify([...args, '--threads', '1'], stdin)), comparable(mailverify([...args, '--threads', '2'], stdin))];
}

// Every input of the syntax corpus, suggestions (typos of well-known domains), address literals, non-ASCII text, a
// lone surrogate's replacement, and CSV formula starts: repeated into several read chunks.
const corpusInputs = readFileSync(fileURLToPath(new URL('../../corpus/syntax-cases.jsonl', import.meta.url)), 'utf8')
  .trim()
  .split('\n')
  .map((line) => (JSON.parse(line) as { input: string }).input);
const extras = ['john@gmial.com', 'jane@hotmial.co', 'user@[8.8.8.8]', 'user@[127.0.0.1]', 'admin@mailinator.com', 'josé@bücher.de', '=cmd@example.com', '+1@example.org', '\ud800@example.org', ' spaced @example.org'];
// (Inputs with a line break would be several lines of text: left out.)
const addresses = [...corpusInputs, ...extras].filter((address) => !/[\r\n]/.test(address));
const many = Array.from({ length: 12 }, () => addresses).flat();

describe('mailverify check --checks syntax on worker threads', () => {
  it('writes the same JSON lines as the main thread: corpus, BOM, CRLF, blank lines, a huge line, no final line break', () => {
    const huge = 'x'.repeat(70_000) + '@example.org';
    const text = '\ufeff' + many.slice(0, 3000).join('\r\n') + '\n\n\n' + huge + '\r\n' + many.slice(3000).join('\n') + '\nlast@example.org';
    const file = join(dir, 'varied.txt');
    writeFileSync(file, text);
    const [main, workers] = bothWays(['check', file]);
    expect(main.code).toBe(0);
    const lines = main.stdout.split('\n');
    // Every line one result (the final line break starts none), the huge line cut at 65,536 characters.
    expect(lines.length - 1).toBe(many.length + 4);
    expect(lines.map((line) => (line === '' ? -1 : (JSON.parse(line) as { index: number }).index)).slice(0, -1)).toEqual(lines.slice(0, -1).map((_, i) => i));
    expect(main.stdout).toContain('"inputData":"' + 'x'.repeat(65_536) + '"');
    expect(workers).toEqual(main);
  });

  const text = many.join('\n') + '\n';
  it.each([
    [[]],
    [['--refuse', 'quoted', '--refuse', 'international', '--no-provider-rules']],
    [['--allow-private-addresses']],
    [['--output', 'csv']],
    [['--output', 'csv', '--csv-formulas', 'keep']],
  ])('writes the same from standard input with %j', (args) => {
    const [main, workers] = bothWays(['check', '-', ...args], text);
    expect(main.code).toBe(0);
    expect(main.stdout.split('\n').length - 1).toBe(many.length + (args.includes('csv') ? 1 : 0));
    expect(workers).toEqual(main);
  });

  it('reads a CSV column as on the main thread', () => {
    const file = join(dir, 'list.csv');
    writeFileSync(file, 'name,email\n' + many.map((address, i) => `"row ${i}","${address.replace(/"/g, '""')}"`).join('\r\n') + '\n');
    const [main, workers] = bothWays(['check', file, '--column', 'email']);
    expect(main.code).toBe(0);
    expect(main.stdout.split('\n').length - 1).toBe(many.length);
    expect(workers).toEqual(main);
  });

  it('reads TSV as on the main thread', () => {
    const file = join(dir, 'list.tsv');
    writeFileSync(file, many.map((address, i) => `${i}\t"${address.replace(/"/g, '""')}"`).join('\n'));
    const [main, workers] = bothWays(['check', file, '--column', '1', '--output', 'csv']);
    expect(main.code).toBe(0);
    expect(workers).toEqual(main);
  });

  it('reads JSON lines with custom data as on the main thread', () => {
    const jsonl = many.map((address, i) => JSON.stringify(i % 3 === 0 ? { inputData: address, custom: `row ${i}` } : address)).join('\n');
    const [main, workers] = bothWays(['check', '-', '--input', 'jsonl'], jsonl);
    expect(main.code).toBe(0);
    expect(main.stdout).toContain('"custom":"row 3"');
    expect(workers).toEqual(main);
  });

  it('stops at a JSON lines error after the results before it, as on the main thread', () => {
    const jsonl = many.map((address) => JSON.stringify(address));
    jsonl.splice(5_000, 0, '{not json');
    const [main, workers] = bothWays(['check', '-', '--input', 'jsonl'], jsonl.join('\n'));
    expect(main.code).toBe(1);
    expect(main.stderr).toMatch(/line 5001 of the input is not JSON/);
    expect(main.stdout.trim().split('\n')).toHaveLength(5_000);
    expect(workers).toEqual(main);
  });

  it('stops at a CSV error after the results before it, as on the main thread', () => {

    // A quote never closed: the record grows past the longest the reader takes.
    const csv = 'email\n' + many.slice(0, 4_000).join('\n') + '\n"never closed\n' + 'x@example.org\n'.repeat(90_000);
    const [csvMain, csvWorkers] = bothWays(['check', '-', '--input', 'csv', '--header'], csv);
    expect(csvMain.code).toBe(1);
    expect(csvMain.stderr).toMatch(/line 4002 of the input starts a CSV record longer than/);
    expect(csvWorkers).toEqual(csvMain);
  });

  it('writes the same for bytes that are not UTF-8 and for long lines of multi-byte characters', () => {
    const file = join(dir, 'bytes.txt');
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from(many.slice(0, 2000).join('\n') + '\n', 'utf8'),
        Buffer.from([0xe2, 0x82, 0x0a, 0xff, 0x61, 0x40, 0x62, 0x0a]),
        Buffer.from('€'.repeat(200_000) + '@example.org\n' + '😀'.repeat(40_000) + '\r\n' + many.slice(2000).join('\r\n'), 'utf8'),
        Buffer.from([0x0a, 0xc3]),
      ]),
    );
    const [main, workers] = bothWays(['check', file]);
    expect(main.code).toBe(0);
    expect(main.stdout.split('\n').length - 1).toBe(many.length + 5);
    expect(workers).toEqual(main);
  });

  it('reads no further than a slow reader takes its output, and gives it every result once, in order', async () => {
    const lineCount = 300_000;
    const child = spawn(process.execPath, [cli, 'check', '-', '--threads', '2', '--quiet']);
    let pulled = 0;
    let next = 0;
    const source = new Readable({
      highWaterMark: 16 * 1024,
      read() {
        let text = '';
        for (; next < lineCount && text.length < 16 * 1024; next++) text += `user${next}@example.org\n`;
        pulled += text.length;
        this.push(text === '' ? null : text);
      },
    });
    source.pipe(child.stdin);
    const exited = once(child, 'close');
    // Results are coming; then nothing is read from the output until the input stops being read.
    await once(child.stdout, 'readable');
    for (let last = -1, steady = 0; steady < 5; ) {
      await sleep(100);
      steady = pulled === last ? steady + 1 : 0;
      last = pulled;
    }
    // Of 6.8 MB: what the pipes, the chunks under way and the unread output hold (some 250 kB), not the input.
    expect(pulled).toBeLessThan(1 << 20);

    let expected = 0;
    let pending = '';
    let misplaced: string | undefined;
    for await (const chunk of child.stdout.setEncoding('utf8') as AsyncIterable<string>) {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith(`{"index":${expected},"inputData":"user${expected}@example.org"`)) misplaced ??= line.slice(0, 60);
        expected++;
      }
    }
    expect(misplaced).toBeUndefined();
    expect(pending).toBe('');
    expect(expected).toBe(lineCount);
    expect(await exited).toEqual([0, null]);
  });

  it('stops quietly when the reader of its output goes away', async () => {
    const child = spawn(process.execPath, [cli, 'check', '-', '--threads', '2']);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdout.once('data', () => child.stdout.destroy());
    child.stdin.on('error', () => {}); // the child may stop reading before all of it is written
    child.stdin.end(Array.from({ length: 300_000 }, (_, i) => `user${i}@example.org\n`).join(''));
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
  });

  it('refuses a thread count it cannot use', () => {
    expect(mailverify(['check', '--threads', '0'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--threads/) });
    expect(mailverify(['check', '--threads', '65'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--threads must be from 1 to 64/) });
  });
});
