// The progress line and the summary (packages/mailverify/src/cli/report.ts). A child process cannot easily be given a
// terminal, so the progress line is drawn here on a stand-in terminal: a PassThrough stream that says it is a TTY of a
// given width. The CLI tests check the other side: with standard error a pipe, the command draws no progress line.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/mailverify/src/engine/entry.js';
import { ProgressLine, RunObserver, Tally, timeLeft, type RunState } from '../../packages/mailverify/src/cli/report.js';

function fakeTerminal(columns: number) {
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns });
  let written = '';
  stream.setEncoding('utf8').on('data', (chunk: string) => (written += chunk));
  return { stream, written: () => written };
}

const state = (values: Partial<RunState>): RunState => ({ done: 0, read: 0, inputEnded: false, bytesRead: undefined, totalBytes: undefined, ...values });

/** The lines drawn on the terminal, each from column 1 (ESC [ 1 G) to a clear to its end (ESC [ 0 K). */
const drawn = (text: string): string[] => [...text.matchAll(/\x1b\[1G(.*?)\x1b\[0K/g)].map((match) => match[1]!);

/** Starts a progress line on a terminal, moves the run on after `ms` milliseconds, stops it: what was drawn. */
async function progressOf(columns: number, start: RunState, ms: number, then: Partial<RunState>) {
  const terminal = fakeTerminal(columns);
  const run = { ...start };
  const progress = new ProgressLine(terminal.stream, run);
  progress.start();
  await new Promise((resolve) => setTimeout(resolve, ms));
  Object.assign(run, then);
  progress.stop(); // draws the line a last time, then clears it
  await new Promise((resolve) => setImmediate(resolve));
  return { lines: drawn(terminal.written()), text: terminal.written() };
}

const rateOf = (line: string): number => Number(/\| ([\d,]+)\/s/.exec(line)![1]!.replace(/,/g, ''));

describe('ProgressLine', () => {
  it('counts and gives the rate, without a total or time left while the number of addresses is unknown', async () => {
    const { lines } = await progressOf(200, state({}), 200, { done: 2_000, read: 2_500 });
    expect(lines[0]).toBe('0 addresses | 0/s');
    const last = lines.at(-1)!;
    expect(last).toMatch(/^2,000 addresses \| [\d,]+\/s$/);
    // 2,000 in the 200 ms waited or more (a timer may fire a millisecond early): at most about 10,000 a second.
    expect(rateOf(last)).toBeGreaterThan(0);
    expect(rateOf(last)).toBeLessThanOrEqual(Math.round(2_000 / 0.199));
  });

  it('estimates the total from the share of the file read, and gives the time left', async () => {
    const { lines } = await progressOf(200, state({ totalBytes: 1_000_000 }), 100, { done: 1_000, read: 4_000, bytesRead: 100_000 });
    // 4,000 addresses in a tenth of the file: about 40,000; 2% are done.
    expect(lines.at(-1)).toMatch(/^=?-{15,16} 2% \| 1,000\/~40,000 addresses \| [\d,]+\/s \| ETA \S+$/);
  });

  it('gives the exact total once the input has been read', async () => {
    const { lines } = await progressOf(200, state({ totalBytes: 1_000_000 }), 100, { done: 30, read: 30, inputEnded: true, bytesRead: 1_000_000 });
    expect(lines.at(-1)).toMatch(/^={16} 100% \| 30\/30 addresses \| [\d,]+\/s \| ETA 0s$/);
  });

  it('is cut to the width of the terminal, and cleared when stopped', async () => {
    const { lines, text } = await progressOf(30, state({ done: 123_456, read: 123_456, inputEnded: true }), 0, {});
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.length).toBeLessThan(30);
    expect(lines[0]).toMatch(/^={16} 100% \| 123,4/);
    expect(text.endsWith('\x1b[2K')).toBe(true); // the line cleared, for the summary to take its place
  });

  it('gives the time left in seconds, minutes and seconds, or hours and minutes', () => {
    expect([0, 42, 60, 187, 3599, 3600, 7500].map(timeLeft)).toEqual(['0s', '42s', '1m00s', '3m07s', '59m59s', '1h00m', '2h05m']);
  });

  it('leaves no timer behind once stopped', async () => {
    const terminal = fakeTerminal(80);
    const progress = new ProgressLine(terminal.stream, state({}));
    progress.start();
    progress.stop();
    const before = terminal.written().length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(terminal.written().length).toBe(before);
  });
});

const entry = (classification: string, status: string) => ({ classification, status }) as Entry;

describe('Tally', () => {
  it('sums up the results by classification and by status, largest first', () => {
    const tally = new Tally();
    for (const [c, s, n] of [
      ['Deliverable', 'Success', 9],
      ['Undeliverable', 'AtSignNotFound', 1],
      ['Undeliverable', 'DomainDoesNotExist', 1],
      ['Risky', 'ServerIsCatchAll', 1],
    ] as const) {
      for (let i = 0; i < n; i++) tally.add(entry(c, s));
    }
    expect(tally.summary(0.42)).toBe(
      '12 addresses in 0.4 s: 9 Deliverable, 2 Undeliverable, 1 Risky\nstatuses: 9 Success, 1 AtSignNotFound, 1 DomainDoesNotExist, 1 ServerIsCatchAll\n',
    );
    expect(new Tally().summary(0)).toBe('0 addresses in 0.0 s\n');
    const one = new Tally();
    one.add(entry('Deliverable', 'Success'));
    expect(one.summary(1)).toBe('1 address in 1.0 s: 1 Deliverable\nstatuses: 1 Success\n');
  });

  it('adds a hint when DNS failures are half the results or more, naming the servers asked', () => {
    const seen = new RunObserver();
    seen.dnsQuery({ type: 'MX', name: 'a.com', outcome: 'unreachable', code: 'ECONNREFUSED', durationMs: 1, servers: ['192.0.2.53:53'] });
    const tally = new Tally();
    for (const status of ['DnsConnectionFailure', 'DnsConnectionFailure', 'DnsQueryTimeout', 'AtSignNotFound', 'Success', 'Success']) {
      tally.add(entry('Unknown', status));
    }
    expect(tally.summary(1, seen).split('\n').slice(2)).toEqual([
      'hint: 3 of 6 addresses got DnsConnectionFailure or DnsQueryTimeout: the DNS server(s) 192.0.2.53:53 did not ' +
        'answer. Check that this host can reach it, or name another DNS server with --dns-server.',
      '',
    ]);
    // Fewer than half: the addresses, not the setup, are the likelier cause.
    tally.add(entry('Deliverable', 'Success'));
    expect(tally.summary(1, seen)).not.toMatch(/hint/);
  });

  it('adds a hint for exchangers skipped for their non-global addresses behind DomainIsMisconfigured', () => {
    const seen = new RunObserver();
    const tally = new Tally();
    tally.add(entry('Undeliverable', 'DomainIsMisconfigured'));
    tally.add(entry('Deliverable', 'Success'));
    expect(tally.summary(1, seen)).not.toMatch(/hint/);
    seen.exchangerSkipped({ domain: 'a.com', exchanger: 'mx.a.com', addresses: ['10.0.0.5'] });
    seen.exchangerSkipped({ domain: 'a.com', exchanger: 'mx.a.com', addresses: ['10.0.0.5'] });
    expect(tally.summary(1, seen)).toMatch(
      /\nhint: 1 mail exchanger skipped: it resolves only to non-global addresses \(a\.com: mx\.a\.com → 10\.0\.0\.5\); a domain with no other exchanger gets DomainIsMisconfigured \(1 here\)\. --allow-private-addresses allows them\.\n$/,
    );
    seen.exchangerSkipped({ domain: 'b.com', exchanger: 'b.com', addresses: ['192.168.0.1'] });
    expect(tally.summary(1, seen)).toMatch(/hint: 2 mail exchangers skipped: they resolve only to non-global addresses \(e\.g\. a\.com: mx\.a\.com → 10\.0\.0\.5\)/);
  });
});
