/**
 * What the command tells the person running it, on standard error: a progress line while it runs (on a terminal
 * only) and a summary at the end. Results go to standard output or --out; neither of these mixes with them.
 */
import cliProgress, { type Options as BarOptions } from 'cli-progress';
import type { Entry } from '../engine/entry.js';

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

/**
 * A progress line: results written, their rate (addresses per second) and, once the number of addresses is known or
 * can be estimated, a bar and the time left. The total is exact once the input has been read; before that, for a
 * file, it is estimated from the bytes read so far and the file's size (shown with a "~"); for standard input it is
 * unknown until its end. The line is redrawn by cli-progress on a timer, a few times a second, from the run's
 * counters: the run itself only counts.
 */
export class ProgressLine {
  private readonly bar: cliProgress.SingleBar;
  private readonly samples: { at: number; done: number }[] = [];

  constructor(
    stream: ProgressStream,
    private readonly state: RunState,
  ) {
    const options: BarOptions = {
      stream: stream as NodeJS.WritableStream,
      fps: REDRAWS_PER_SECOND,
      format: (barOptions, params) => this.line(barOptions, params.maxWidth),
      barsize: 16,
      // The line is cut to the terminal's width here, so wrapping is left on (a run killed with Ctrl-C leaves the
      // terminal as it was) and the cursor shown.
      linewrap: true,
      hideCursor: false,
      clearOnComplete: true,
    };
    this.bar = new SingleBar(options);
  }

  start(): void {
    this.bar.start(1, 0);
  }

  /** Draws the line a last time and clears it. */
  stop(): void {
    this.bar.stop();
  }

  /** The line's text, at most `maxWidth` - 1 characters. */
  private line(options: BarOptions, maxWidth: number): string {
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
      parts.push(
        `${Format.BarFormat(fraction, options)} ${Math.floor(fraction * 100)}%`,
        `${count(done)}/${this.state.inputEnded ? '' : '~'}${count(total)} addresses`,
      );
    }
    parts.push(`${count(Math.round(rate))}/s`);
    if (total !== undefined && rate > 0) parts.push(`ETA ${Format.TimeFormat(Math.round((total - done) / rate), options, 1)}`);
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

// A CommonJS module: its classes come through the default export.
const { Format, SingleBar } = cliProgress;

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

  /**
   * Two lines: `12 addresses in 0.4 s: 9 Deliverable, 2 Undeliverable, 1 Risky` and
   * `statuses: 9 Success, 2 AtSignNotFound, 1 ServerIsCatchAll`, each by count, largest first.
   */
  summary(seconds: number): string {
    const head = `${count(this.count)} address${this.count === 1 ? '' : 'es'} in ${seconds.toFixed(1)} s`;
    if (this.count === 0) return head + '\n';
    return `${head}: ${byCount(this.classifications)}\nstatuses: ${byCount(this.statuses)}\n`;
  }
}

/** `9 Success, 2 AtSignNotFound`: largest count first, then by name. */
const byCount = (counts: Map<string, number>): string =>
  [...counts]
    .sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, n]) => `${count(n)} ${name}`)
    .join(', ');
