/**
 * What the command tells the person running it, on standard error: a progress line while it runs (on a terminal
 * only) and a summary at the end. Results go to standard output or --out; neither of these mixes with them.
 */
import type { Entry } from '../engine/entry.js';
import { describeDnsServers, describeSkippedExchanger } from '../engine/misconfiguration.js';
import type { DnsQueryEvent, ExchangerSkippedEvent, VerifierObserver } from '../engine/observer.js';

/** How far a run is: kept by the command, read by the progress line at each redraw. */
export interface RunState {
  /** Results written. */
  readonly done: number;
  /** Addresses read from the input. */
  readonly read: number;
  /** The input has been read to its end (or to an error). */
  readonly inputEnded: boolean;
  /** Bytes read from the input file, and its size; undefined for standard input and other streams. */
  readonly bytesRead: number | undefined;
  readonly totalBytes: number | undefined;
}

/** A stream the progress line can be drawn on: a terminal (tty.WriteStream), or a stand-in with the same fields. */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/** Redraws per second. */
const REDRAWS_PER_SECOND = 4;
/** The rate is measured over this recent span, so the time left follows a run that speeds up or slows down. */
const RATE_WINDOW_MS = 10_000;

/** The bar's width in characters, and its filled and empty parts. */
const BAR_SIZE = 16;
const BAR_DONE = '='.repeat(BAR_SIZE);
const BAR_LEFT = '-'.repeat(BAR_SIZE);
/** The width assumed when the terminal does not give its own. */
const DEFAULT_COLUMNS = 80;

// Terminal controls (ECMA-48): to column 1, clear to the end of the line, clear the whole line.
const TO_COLUMN_1 = '\x1b[1G';
const CLEAR_TO_END = '\x1b[0K';
const CLEAR_LINE = '\x1b[2K';

/**
 * A progress line: results written, their rate (addresses per second) and, once the number of addresses is known or
 * can be estimated, a bar and the time left. The total is exact once the input has been read; before that, for a
 * file, it is estimated from the bytes read so far and the file's size (shown with a "~"); for standard input it is
 * unknown until its end. The line is redrawn on a timer, a few times a second, from the run's counters: the run
 * itself only counts. It is cut to the terminal's width, so it never wraps, and the cursor is left alone (a run
 * stopped with Ctrl-C leaves the terminal as it was).
 */
export class ProgressLine {
  private readonly samples: { at: number; done: number }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly stream: ProgressStream,
    private readonly state: RunState,
  ) {}

  start(): void {
    this.draw();
    this.timer = setInterval(() => this.draw(), 1000 / REDRAWS_PER_SECOND);
  }

  /** Draws the line a last time and clears it. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.draw();
    this.stream.write(TO_COLUMN_1 + CLEAR_LINE);
  }

  private draw(): void {
    this.stream.write(TO_COLUMN_1 + this.line(this.stream.columns ?? DEFAULT_COLUMNS) + CLEAR_TO_END);
  }

  /** The line's text, at most `maxWidth` - 1 characters. */
  private line(maxWidth: number): string {
    const now = Date.now();
    const { done } = this.state;
    this.samples.push({ at: now, done });
    while (this.samples.length > 2 && now - this.samples[1]!.at >= RATE_WINDOW_MS) this.samples.shift();
    const first = this.samples[0]!;
    const seconds = (now - first.at) / 1000;
    const rate = seconds > 0 ? (done - first.done) / seconds : 0;
    const parts: string[] = [];
    const total = this.total();
    if (total === undefined) {
      parts.push(`${count(done)} addresses`);
    } else {
      const fraction = total === 0 ? 1 : Math.min(1, done / total);
      const filled = Math.round(fraction * BAR_SIZE);
      parts.push(
        `${BAR_DONE.slice(0, filled)}${BAR_LEFT.slice(0, BAR_SIZE - filled)} ${Math.floor(fraction * 100)}%`,
        `${count(done)}/${this.state.inputEnded ? '' : '~'}${count(total)} addresses`,
      );
    }
    parts.push(`${count(Math.round(rate))}/s`);
    if (total !== undefined && rate > 0) parts.push(`ETA ${timeLeft(Math.round((total - done) / rate))}`);
    const text = parts.join(' | ');
    return text.length < maxWidth ? text : text.slice(0, Math.max(0, maxWidth - 1));
  }

  /** The number of addresses: exact once read, estimated from the share of the file read, else unknown. */
  private total(): number | undefined {
    const { read, inputEnded, bytesRead, totalBytes } = this.state;
    if (inputEnded) return read;
    if (totalBytes === undefined || bytesRead === undefined || bytesRead === 0 || read === 0) return undefined;
    return Math.max(read, Math.round((read * totalBytes) / bytesRead));
  }
}

/** A time left in seconds, as 42s, 3m07s or 2h05m. */
export function timeLeft(seconds: number): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)}h${two(Math.floor((seconds % 3600) / 60))}m`;
  if (seconds >= 60) return `${Math.floor(seconds / 60)}m${two(seconds % 60)}s`;
  return `${seconds}s`;
}

const count = (n: number): string => n.toLocaleString('en');

/** Counts of results by classification and by status, for the summary. */
export class Tally {
  count = 0;
  private readonly classifications = new Map<string, number>();
  private readonly statuses = new Map<string, number>();

  add(entry: Entry): void {
    this.count++;
    this.classifications.set(entry.classification, (this.classifications.get(entry.classification) ?? 0) + 1);
    this.statuses.set(entry.status, (this.statuses.get(entry.status) ?? 0) + 1);
  }

  /** Adds the counts of `count` entries, by classification and by status (an offline worker's chunk). */
  addCounts(count: number, classifications: Iterable<[string, number]>, statuses: Iterable<[string, number]>): void {
    this.count += count;
    for (const [name, n] of classifications) this.classifications.set(name, (this.classifications.get(name) ?? 0) + n);
    for (const [name, n] of statuses) this.statuses.set(name, (this.statuses.get(name) ?? 0) + n);
  }

  /**
   * Two lines: `12 addresses in 0.4 s: 9 Deliverable, 2 Undeliverable, 1 Risky` and
   * `statuses: 9 Success, 2 AtSignNotFound, 1 ServerIsCatchAll`, each by count, largest first; then a `hint:` line for
   * each misconfiguration the results point at (see `hints`).
   */
  summary(seconds: number, seen?: RunObserver): string {
    const head = `${count(this.count)} address${this.count === 1 ? '' : 'es'} in ${seconds.toFixed(1)} s`;
    if (this.count === 0) return head + '\n';
    const hints = seen === undefined ? [] : this.hints(seen);
    return `${head}: ${byCount(this.classifications)}\nstatuses: ${byCount(this.statuses)}\n${hints.map((hint) => `hint: ${hint}\n`).join('')}`;
  }

  /**
   * Causes to look at when the results are dominated by what a setup, rather than the addresses, gives: DNS servers
   * that do not answer (half the results or more are DnsConnectionFailure or DnsQueryTimeout), and exchangers
   * skipped for their non-global addresses behind DomainIsMisconfigured results.
   */
  private hints(seen: RunObserver): string[] {
    const hints: string[] = [];
    const dnsFailures = (this.statuses.get('DnsConnectionFailure') ?? 0) + (this.statuses.get('DnsQueryTimeout') ?? 0);
    if (dnsFailures > 0 && dnsFailures * 2 >= this.count) {
      hints.push(
        `${count(dnsFailures)} of ${count(this.count)} addresses got DnsConnectionFailure or DnsQueryTimeout: ` +
          `${describeDnsServers(seen.dnsServers)} did not answer. Check that this host can reach it, or name another ` +
          'DNS server with --dns-server.',
      );
    }
    const misconfigured = this.statuses.get('DomainIsMisconfigured') ?? 0;
    if (misconfigured > 0 && seen.skippedExample !== undefined) {
      const skipped = seen.skippedExchangers.size;
      hints.push(
        `${count(skipped)} mail exchanger${skipped === 1 ? '' : 's'} skipped: ${skipped === 1 ? 'it resolves' : 'they resolve'} ` +
          `only to non-global addresses (${skipped === 1 ? '' : 'e.g. '}${describeSkippedExchanger(seen.skippedExample)}); a ` +
          `domain with no other exchanger gets DomainIsMisconfigured (${count(misconfigured)} here). ` +
          '--allow-private-addresses allows them.',
      );
    }
    return hints;
  }
}

/** What the verifier's observer saw during a run, for the summary's hints. */
export class RunObserver implements VerifierObserver {
  /** The servers the built-in resolver asked (undefined with a resolver of the host application's). */
  dnsServers: readonly string[] | undefined;
  /** Exchangers skipped for their non-global addresses, by host name, and one of them as an example. */
  readonly skippedExchangers = new Set<string>();
  skippedExample: ExchangerSkippedEvent | undefined;

  dnsQuery(event: DnsQueryEvent): void {
    this.dnsServers = event.servers;
  }

  exchangerSkipped(event: ExchangerSkippedEvent): void {
    this.skippedExchangers.add(event.exchanger);
    this.skippedExample ??= event;
  }
}

/** `9 Success, 2 AtSignNotFound`: largest count first, then by name. */
const byCount = (counts: Map<string, number>): string =>
  [...counts]
    .sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, n]) => `${count(n)} ${name}`)
    .join(', ');
