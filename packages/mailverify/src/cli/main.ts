/**
 * The `mailverify` command.
 *
 *   mailverify check [file|-] [--checks syntax|dns|smtp] [--dns-server IP[:PORT]]... [--max-connections N]
 *                    [--helo-name NAME] [--mail-from ADDRESS] [--smtp-port N] [--quality Standard|High|Extreme]
 *                    [--smtp-proxy URL | --smtp-proxy-file FILE | --smtp-local-address ADDRESS | --smtp-egress-file FILE]
 *                    [--deduplication Off|Safe|Relaxed] [--input text|csv|tsv|jsonl] [--column N|NAME]
 *                    [--delimiter C] [--header] [--output jsonl|csv|tsv] [--input-columns keep|drop]
 *                    [--csv-formulas escape|keep] [--out FILE]
 *                    [--threads N] [--quiet] [--version]
 *
 * Reads one address per line (or one CSV column) and writes one result per input, in input order.
 * `mailverify doctor` checks each egress (./doctor.ts); `serve`, `worker` and `migrate` are the server package's
 * (mailverify-server), run from here when it is installed.
 */
import { createReadStream, createWriteStream, readFileSync, statSync, type ReadStream, type WriteStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Readable } from 'node:stream';
import { escapeFormula } from '../engine/csv-formulas.js';
import { DEDUPLICATION_MODES, type Deduplication } from '../engine/deduplication-modes.js';
import { ENTRY_FIELDS } from '../engine/entry.js';
import type { BatchInput, Verifier, VerifierOptions } from '../engine/verifier.js';
import { closestName } from '../options/names.js';
import { ENGINE_FLAGS, UsageError, asksForVersion, commandFailed, engineOptionsOf, ineffectiveFlagsWarning, usage, wholeNumber } from './engine-flags.js';
import { parseFlags } from './flags.js';
import { csvAddresses, csvText, CSV_FORMULAS, MAX_RECORD_SIZE, type CsvFormulas } from './csv.js';
import { lineBlocks, MAX_LINE } from './offline/line-blocks.js';
import { runOffline } from './offline/pool.js';
import { InputColumns } from './input-columns.js';
import { BatchedWriter, delimiterOf, type OutputFormat } from './output.js';
import { ProgressLine, RunObserver, Tally, type RunState } from './report.js';

const USAGE = `Usage: mailverify check [file|-] [options]
       mailverify doctor [options]     checks each egress as receiving servers judge it (doctor --help)
       mailverify serve [options]      the verification server (mailverify serve --help)
       mailverify worker [options]     a cluster worker (mailverify worker --help)
       mailverify migrate [options]    copy a server's data folder into PostgreSQL (migrate --help)

Verifies the addresses of a file (one per line, or one column of a CSV file) or of standard input,
and writes one result per input, in order.

Options:
  --checks syntax|dns|smtp
                          how far to verify (default syntax): "syntax" is offline (syntax, lists,
                          suggestions), so every well-formed address on a domain that may exist is
                          Deliverable; "dns" adds the DNS/MX checks; "smtp" probes the mailboxes.
                          The DNS flags (--dns-server, --dns-timeout, --quality, --passes,
                          --pass-delay) act from "dns", the SMTP ones (--smtp-port, --helo-name,
                          --mail-from, --max-connections, the egress flags) at "smtp" only: given with a lower level,
                          they have no effect and a warning on standard error says so
  --helo-name NAME        EHLO name for SMTP probes (default: this host's name); use a name whose
                          address and reverse DNS match the address you connect from
  --mail-from ADDRESS     envelope sender of SMTP probes (default verify@<helo name>)
  --smtp-port N           SMTP port (default 25)
  --smtp-proxy URL        probes leave through this SOCKS5 proxy: socks5://[user[:password]@]host[:port]
                          (port 1080 by default); one that can reach port 25, where this host cannot
  --smtp-proxy-file FILE  the same, the URL read from FILE (its password is then not in the process list)
  --smtp-local-address ADDRESS
                          probes leave from this source address of the host's
  --smtp-egress-file FILE several ways out: a JSON array of egresses {"id", "localAddress" or "proxy",
                          "heloName", "mailFrom", "maxConnections"}; a connection takes the one with the
                          fewest open connections (docs/egress.md)
  --smtp-providers-file FILE
                          provider profiles tried before the built-in ones: a JSON array of {"id",
                          "match": [host patterns], "egress", "maxConnectionsPerEgress",
                          "recipientsPerMinute", "recipientsPerDay"} (docs/egress.md#provider-profiles)
  --quality LEVEL         Standard (default), High or Extreme: passes over transient results, timeouts
  --passes N              passes over transient results, instead of the quality level's (1, 3, 9)
  --pass-delay MS         the wait between two passes (default 300000, 5 minutes)
  --dns-timeout MS        the cap on each DNS query (default 5000)
  --allow-private-addresses
                          let exchangers and literals on private, loopback or link-local addresses be
                          used (off by default: a hostile MX record could point inside your network)
  --dns-server IP[:PORT]  DNS server to ask instead of the system's (repeatable)
  --refuse FORM           refuse a form the RFCs allow (repeatable): quoted (quoted local parts),
                          literal (address literals), international (non-ASCII local parts)
  --no-provider-rules     leave out the big providers' sign-up rules (IspSpecificSyntaxFailure)
  --overrides FILE        override rules: a JSON array of {"match": PATTERN, "classification": NAME};
                          the first rule matching an address gives it OverrideMatch and that
                          classification, with no DNS or SMTP work (* any run of characters, ? one)
  --max-connections N     SMTP connections open at once (default 50); addresses are grouped by mail
                          exchanger, so one connection serves many of them
  --evidence              each result that reached DNS or SMTP gets "evidence": the exchangers, the one
                          asked, its address, the egress, the replies that decided and the rule that read
                          them (docs/verification.md#evidence); JSON lines output only
  --deduplication MODE    Off (default), Safe or Relaxed: later copies of an address are Duplicate
  --input FORMAT          text, csv, tsv or jsonl (default: by the file name's ending, .csv, .tsv or
                          .jsonl; text otherwise, and for standard input); tsv is csv with tabs;
                          jsonl: one JSON value per line, an address or
                          {"inputData": ADDRESS, "custom": TEXT}, whose custom text comes back in its result
  --column N|NAME         CSV/TSV: the column holding the addresses, a zero-based index (default 0) or
                          a name in the header (implies --header)
  --delimiter C           CSV: the field delimiter (default ","); "\t" or "tab" for tabs
  --header                CSV/TSV: the first record is a header, not an address
  --output jsonl|csv|tsv  output format (default jsonl); tsv is csv with tabs
  --input-columns keep|drop
                          CSV or TSV input written as CSV or TSV: each result record ends with the
                          input record's own columns (keep, the default: name, company... come back
                          beside their result), or has the result's fields alone (drop). The header
                          names them as the input's header does (one named like a result field gets
                          "input." before its name), or column0, column1... without one
  --csv-formulas escape|keep
                          CSV and TSV output: text cells that a spreadsheet would read as a formula (starting
                          with =, +, -, @, a tab or a CR) get a leading ' (escape, the default), or are
                          written as they are (keep), for programs rather than spreadsheets
  --out FILE              write the results to FILE instead of standard output
  --threads N             worker threads for --checks syntax without deduplication (default: one per
                          CPU core, none for a file under 1 MiB); 1 checks on the main thread. The
                          results are the same either way
  -q, --quiet             no progress line and no summary
  -h, --help              this text
  --version               the version of mailverify (also "mailverify --version", "serve --version")

In text input each line is one address; a trailing CR (CRLF line ending) is removed and the final
line break does not start an entry. Every other line, blank ones included, gets a result; a line
longer than 65,536 characters is cut there. A byte order mark at the start of the input is dropped.

CSV and TSV input follow RFC 4180: quoted fields may hold delimiters, quotes ("") and line breaks;
a quote inside an unquoted field is kept as it is. Blank lines are skipped. Malformed CSV (a quote
never closed), a record over ${MAX_RECORD_SIZE.toLocaleString('en')} characters, a record without the address
column and a header without the named column stop the run with an error naming the line: the
results of the records before it are written, and the exit code is 1.

On standard error: a progress line (count, addresses per second, time left) when standard error is
a terminal and the results go to a file or a pipe; and a summary at the end of a complete run
(counts by classification and by status), also when standard error is not a terminal. --quiet
leaves out both; errors are still reported.

Exit codes: 0 done (or the reader of the output went away), 1 an input or output error, 2 a usage
error.`;

interface CheckOptions {
  source: string;
  checks: 'syntax' | 'dns' | 'smtp';
  /** The verifier's options from the engine flags, shared with `serve`. */
  engine: VerifierOptions;
  deduplication: Deduplication;
  input: InputFormat;
  out: string | undefined;
  /** CSV and TSV: a zero-based index or a header name. */
  column: number | string;
  delimiter: string;
  header: boolean;
  output: OutputFormat;
  /** CSV and TSV output of CSV and TSV input: each record ends with its input record's own columns (the default). */
  inputColumns: boolean;
  csvFormulas: CsvFormulas;
  quiet: boolean;
  /** Worker threads for an offline run (1: none, the engine's verifyMany on the main thread); undefined: by the input. */
  threads: number | undefined;
  /** Flags that have no effect at this checks level, told on standard error before the run. */
  warning: string | undefined;
}

const INPUT_FORMATS = ['text', 'csv', 'tsv', 'jsonl'] as const;
const OUTPUT_FORMATS: readonly OutputFormat[] = ['jsonl', 'csv', 'tsv'];
type InputFormat = (typeof INPUT_FORMATS)[number];

/** The input format a file name's ending implies (standard input, "-", is text). */
function formatOf(source: string): InputFormat {
  const ending = /\.(csv|tsv|jsonl)$/i.exec(source)?.[1]?.toLowerCase();
  return (ending as InputFormat | undefined) ?? 'text';
}

/** The options of `check`, or what to print instead of running: its help or the version. */
function parseCheckOptions(argv: string[]): CheckOptions | 'help' | 'version' {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      checks: { type: 'string', default: 'syntax' },
      ...ENGINE_FLAGS,
      deduplication: { type: 'string', default: 'Off' },
      input: { type: 'string' },
      column: { type: 'string' },
      delimiter: { type: 'string' },
      header: { type: 'boolean' },
      quiet: { type: 'boolean', short: 'q', default: false },
      output: { type: 'string', default: 'jsonl' },
      'csv-formulas': { type: 'string' },
      'input-columns': { type: 'string' },
      out: { type: 'string' },
      threads: { type: 'string' },
      evidence: { type: 'boolean' },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';
  if (values.version) return 'version';
  if (positionals.length > 1) throw new UsageError(`expected at most one input file, got ${positionals.length}`);
  const source = positionals[0] ?? '-';
  const checks = values.checks;
  if (checks !== 'syntax' && checks !== 'dns' && checks !== 'smtp') {
    throw new UsageError(`--checks must be syntax, dns or smtp, got ${checks}`);
  }
  const engine = engineOptionsOf(values);
  if (values.evidence === true) {
    // Evidence is nested data: a JSON line holds it, a CSV record of the service's columns does not.
    if (values.output !== 'jsonl') throw new UsageError('--evidence applies to --output jsonl (evidence is nested JSON)');
    engine.evidence = true;
  }
  const deduplication = values.deduplication as Deduplication;
  if (!DEDUPLICATION_MODES.includes(deduplication)) {
    throw new UsageError(`--deduplication must be one of ${DEDUPLICATION_MODES.join(', ')}, got ${values.deduplication}`);
  }
  const input = (values.input ?? formatOf(source)) as InputFormat;
  if (!INPUT_FORMATS.includes(input)) throw new UsageError(`--input must be text, csv, tsv or jsonl, got ${input}`);
  const tabular = input === 'csv' || input === 'tsv';
  if (!tabular) {
    // The CSV options would be silently ignored: refused instead.
    const csvOnly = (['column', 'header', 'delimiter'] as const).filter((name) => values[name] !== undefined);
    if (csvOnly.length > 0) {
      const why = values.input !== undefined ? `not to --input ${input}` : `${source === '-' ? 'standard input' : JSON.stringify(source)} is read as ${input}`;
      throw new UsageError(`--${csvOnly[0]} applies to CSV and TSV input, ${why}; add --input csv or --input tsv to read it as CSV`);
    }
  }
  const column = values.column === undefined ? 0 : /^\d+$/.test(values.column) ? Number(values.column) : values.column;
  if (typeof column === 'number' && !Number.isSafeInteger(column)) throw new UsageError(`--column ${values.column} is too large`);
  if (column === '' || (typeof column === 'string' && /^\s*-?\d+(\.\d*)?\s*$/.test(column))) {
    throw new UsageError(`--column must be a zero-based index or a header name, got ${JSON.stringify(values.column)}`);
  }
  const output = values.output as OutputFormat;
  if (!OUTPUT_FORMATS.includes(output)) throw new UsageError(`--output must be jsonl, csv or tsv, got ${values.output}`);
  const inputColumnsText = values['input-columns'] ?? 'keep';
  if (inputColumnsText !== 'keep' && inputColumnsText !== 'drop') throw new UsageError(`--input-columns must be keep or drop, got ${inputColumnsText}`);
  if (values['input-columns'] !== undefined && (!tabular || output === 'jsonl')) {
    throw new UsageError('--input-columns applies to CSV and TSV input written as --output csv or tsv');
  }
  const csvFormulas = (values['csv-formulas'] ?? 'escape') as CsvFormulas;
  if (!CSV_FORMULAS.includes(csvFormulas)) throw new UsageError(`--csv-formulas must be escape or keep, got ${csvFormulas}`);
  if (values['csv-formulas'] !== undefined && output === 'jsonl') throw new UsageError('--csv-formulas applies to --output csv and tsv');
  const delimiterText = values.delimiter ?? (input === 'tsv' ? '\t' : ',');
  const delimiter = delimiterText === '\\t' || delimiterText.toLowerCase() === 'tab' ? '\t' : delimiterText;
  if (delimiter.length !== 1 || delimiter === '"' || delimiter === '\r' || delimiter === '\n') {
    throw new UsageError(`--delimiter must be one character other than a quote or a line break, "\\t" or "tab", got ${JSON.stringify(delimiterText)}`);
  }
  if (input === 'tsv' && delimiter !== '\t') throw new UsageError(`TSV input is tab-separated; use --input csv --delimiter ${delimiterText} for another delimiter`);
  return {
    source,
    checks,
    engine,
    deduplication,
    input,
    out: values.out,
    column,
    delimiter,
    header: values.header ?? false,
    output,
    inputColumns: tabular && output !== 'jsonl' && inputColumnsText === 'keep',
    csvFormulas,
    quiet: values.quiet,
    threads: threadCount(values.threads),
    warning: ineffectiveFlagsWarning(values, checks),
  };
}

/** The most worker threads --threads takes. */
const MAX_THREADS = 64;

/** A file smaller than this is checked on the main thread by default: starting the threads would cost more. */
const SMALL_INPUT_BYTES = 1 << 20;

function threadCount(text: string | undefined): number | undefined {
  const threads = wholeNumber(text, '--threads', 1);
  if (threads !== undefined && threads > MAX_THREADS) throw new UsageError(`--threads must be from 1 to ${MAX_THREADS}, got ${text}`);
  return threads;
}

/** The threads of a run: as given, else one per CPU core, but one for a small file. */
function threadsFor(options: CheckOptions): number {
  if (options.threads !== undefined) return options.threads;
  if (options.source !== '-' && (fileSize(options.source) ?? Infinity) < SMALL_INPUT_BYTES) return 1;
  return Math.min(availableParallelism(), MAX_THREADS);
}

/** The size of a regular file; undefined for anything else, or when it cannot be read (its stream reports that). */
function fileSize(path: string): number | undefined {
  try {
    const stats = statSync(path);
    return stats.isFile() ? stats.size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The inputs of the source in batches, in order: lines of text, JSON Lines items, or one column of CSV records (whose
 * records `columns` keeps, when given).
 */
function inputBatches(options: CheckOptions, stream: Readable, columns?: InputColumns): AsyncGenerator<BatchInput[]> {
  switch (options.input) {
    case 'csv':
    case 'tsv':
      return csvAddresses(stream, {
        delimiter: options.delimiter,
        column: options.column,
        header: options.header,
        ...(columns === undefined ? {} : { onHeader: columns.onHeader, onRecords: columns.onRecords }),
      });
    case 'jsonl':
      return jsonBatches(lineBatches(stream));
    default:
      return lineBatches(stream);
  }
}

/**
 * The inputs of JSON Lines: each line an address or `{ "inputData": ADDRESS, "custom": TEXT }`. A line that is not
 * one of those is an input error naming it, after the inputs before it (blank lines are inputs too, in every format:
 * here they are not JSON).
 */
async function* jsonBatches(lines: AsyncGenerator<string[]>): AsyncGenerator<BatchInput[]> {
  let number = 0;
  for await (const batch of lines) {
    const items: BatchInput[] = [];
    for (const line of batch) {
      number++;
      const item = jsonItem(line, number);
      if (item instanceof Error) {
        if (items.length > 0) yield items;
        throw item;
      }
      items.push(item);
    }
    yield items;
  }
}

function jsonItem(line: string, number: number): BatchInput | Error {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return new Error(`line ${number} of the input is not JSON: ${JSON.stringify(line.slice(0, 80))}`);
  }
  const item = value as { inputData?: unknown; custom?: unknown } | null;
  const isItem =
    typeof value === 'string' ||
    (typeof item === 'object' && item !== null && typeof item.inputData === 'string' && (item.custom === undefined || typeof item.custom === 'string'));
  return isItem ? (value as BatchInput) : new Error(`line ${number} of the input is neither an address nor {"inputData": ..., "custom": ...}`);
}

/** The lines of the input, a batch per chunk read. */
async function* lineBatches(stream: Readable): AsyncGenerator<string[]> {
  stream.setEncoding('utf8');
  const chunks = withoutByteOrderMark(stream);
  // Lines are cut from each chunk by index; only a line split across chunks is joined, and only up to MAX_LINE: the
  // rest of a longer line is skipped as it arrives, so a huge line costs neither memory nor repeated searches.
  let pending = '';
  let overlong = false;
  for await (const chunk of chunks) {
    const lines: string[] = [];
    let start = 0;
    let newline = chunk.indexOf('\n');
    if (pending !== '' || overlong) {
      if (newline < 0) {
        if (!overlong) [pending, overlong] = capped(pending + chunk);
        yield lines;
        continue;
      }
      const joined = overlong ? pending : pending + chunk.slice(0, newline);
      lines.push(joined.length > MAX_LINE || overlong ? joined.slice(0, MAX_LINE) : lineAt(joined, 0, joined.length));
      pending = '';
      overlong = false;
      start = newline + 1;
    }
    while ((newline = chunk.indexOf('\n', start)) >= 0) {
      lines.push(newline - start > MAX_LINE ? chunk.slice(start, start + MAX_LINE) : lineAt(chunk, start, newline));
      start = newline + 1;
    }
    [pending, overlong] = capped(chunk.slice(start));
    yield lines;
  }
  if (pending !== '' || overlong) yield [overlong ? pending : lineAt(pending, 0, pending.length)];
}

/** The text, cut at MAX_LINE, and whether it was cut. */
const capped = (text: string): [string, boolean] => (text.length > MAX_LINE ? [text.slice(0, MAX_LINE), true] : [text, false]);

/** The text of a stream, without a byte order mark at its start (a file saved as Excel's "CSV UTF-8" has one). */
async function* withoutByteOrderMark(stream: AsyncIterable<unknown>): AsyncGenerator<string> {
  let first = true;
  for await (const chunk of stream) {
    let text = chunk as string;
    if (first) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    yield text;
  }
}

/** The line `text[start, end)` without a trailing CR (a CRLF line ending). */
const lineAt = (text: string, start: number, end: number): string =>
  text.slice(start, end > start && text.charCodeAt(end - 1) === 0x0d ? end - 1 : end);

/** What the command knows of its input while it runs: the progress line and the end of the run read it. */
class InputState {
  read = 0;
  ended = false;
  /** The input's error (an unreadable file, malformed CSV): the inputs before it are verified, then it is reported. */
  error: Error | undefined;
}

/**
 * The items of the batches one by one. An item of the batch at hand is served at once, without resuming a
 * generator (a million resumptions cost more than the lists and suggestions of a million addresses). An error of the
 * input ends the items; it is kept in `state`, so the items before it still get their results.
 */
function itemsOf<T>(batches: AsyncGenerator<T[]>, state: InputState): AsyncIterableIterator<T> {
  let batch: T[] = [];
  let at = 0;
  const refill = async (): Promise<IteratorResult<T>> => {
    while (!state.ended) {
      let next: IteratorResult<T[]>;
      try {
        next = await batches.next();
      } catch (error) {
        state.error = error as Error;
        break;
      }
      if (next.done === true) break;
      batch = next.value;
      at = 0;
      state.read += batch.length;
      if (batch.length > 0) return { done: false, value: batch[at++]! };
    }
    state.ended = true;
    return { done: true, value: undefined };
  };
  const items: AsyncIterableIterator<T> = {
    next: () => (at < batch.length ? Promise.resolve({ done: false, value: batch[at++]! }) : refill()),
    // A consumer that stops early closes the input.
    return: async () => {
      batch = [];
      await batches.return(undefined);
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]: () => items,
  };
  return items;
}

async function check(options: CheckOptions): Promise<void> {
  const out = options.out === undefined ? process.stdout : await openOutput(options.out);
  const seen = new RunObserver();
  // Offline without duplicate marking, every input's result depends on it alone: chunks go to worker threads.
  const threads = threadsFor(options);
  const onWorkers = options.checks === 'syntax' && options.deduplication === 'Off' && threads > 1;
  // Loaded only when this thread verifies: on worker threads, the main thread only reads and writes.
  const createVerifier = onWorkers ? undefined : (await import('../engine/verifier.js')).createVerifier;
  const verifier = createVerifier === undefined ? undefined : usage(() => createVerifier({ ...options.engine, checks: options.checks, observer: seen }));
  const started = performance.now();
  const source = options.source === '-' ? process.stdin : createReadStream(options.source);
  const input = new InputState();
  const tally = new Tally();
  // On a terminal only, and not on the one the results are printed to (the line would be drawn among them).
  const showProgress = !options.quiet && process.stderr.isTTY === true && !(out === process.stdout && process.stdout.isTTY === true);
  const progress = showProgress ? new ProgressLine(process.stderr, runState(options.source, source, input, tally)) : undefined;
  const delimiter = delimiterOf(options.output);
  const writer = new BatchedWriter(out, options.csvFormulas, delimiter);
  const columns = options.inputColumns ? new InputColumns() : undefined;
  let headerWritten = options.output === 'jsonl';
  // The header row: the result's fields, then the names of the input's columns, once they are known (the input's
  // header or first record has been read), or at the end of an input without records.
  const writeHeader = (): void => {
    if (headerWritten) return;
    headerWritten = true;
    const names = columns?.names() ?? [];
    writer.add(csvText([[...ENTRY_FIELDS, ...names.map((name) => (options.csvFormulas === 'escape' ? escapeFormula(name) : name))]], delimiter));
  };
  const csvBatches = (): AsyncGenerator<BatchInput[]> =>
    columns === undefined ? inputBatches(options, source) : beforeEach(inputBatches(options, source, columns), writeHeader);
  try {
    progress?.start();
    if (columns === undefined) writeHeader();
    if (verifier === undefined) {
      const { syntax, allowPrivateAddresses, overrides } = options.engine;
      await runOffline({
        threads,
        worker: { engine: { syntax, allowPrivateAddresses, overrides }, output: options.output, csvFormulas: options.csvFormulas },
        // Lines of text cross as bytes, cut into lines by the workers; other inputs are read here.
        batches: options.input === 'text' ? lineBlocks(source) : csvBatches(),
        writer,
        tally,
        input,
        columns,
      });
    } else {
      await verifyOnMainThread(options, verifier, itemsOf(csvBatches(), input), writer, tally, columns);
    }
    writeHeader();
    await writer.end();
  } finally {
    progress?.stop();
    await verifier?.close();
    if (out !== process.stdout) await new Promise<void>((resolve) => (out as WriteStream).end(resolve));
  }
  // The reader of a pipe that went away (`| head`) wanted no more: not an error, and nothing more to say.
  if (writer.error !== undefined) {
    if (writer.error.code === 'EPIPE') return;
    throw writer.error;
  }
  if (input.error !== undefined) throw input.error;
  if (!options.quiet) process.stderr.write(tally.summary((performance.now() - started) / 1000, seen));
}

/** The engine's verifyMany on this thread, its entries written in input order. */
async function verifyOnMainThread(
  options: CheckOptions,
  verifier: Verifier,
  items: AsyncIterableIterator<BatchInput>,
  writer: BatchedWriter,
  tally: Tally,
  columns: InputColumns | undefined,
): Promise<void> {
  const entries = verifier.verifyMany(items, {
    deduplication: options.deduplication,
    // A file's results line up with its lines.
    order: 'input',
  });
  const jsonl = options.output === 'jsonl';
  for await (const entry of entries) {
    tally.add(entry);
    const wait = jsonl ? writer.addJsonLine(entry) : writer.addCsvRecord(entry, columns?.next());
    if (wait !== undefined) await wait;
    if (writer.error !== undefined) break; // stops reading the input too
  }
}

/** The batches, `before` called ahead of each one (an error or an early stop passes through). */
async function* beforeEach<T>(batches: AsyncGenerator<T>, before: () => void): AsyncGenerator<T> {
  for await (const batch of batches) {
    before();
    yield batch;
  }
}

/** The run's counters as the progress line reads them; the size of the input when it is a file. */
function runState(path: string, source: Readable, input: InputState, tally: Tally): RunState {
  const totalBytes = path === '-' ? undefined : fileSize(path);
  const file = path === '-' ? undefined : (source as ReadStream);
  return {
    get done() {
      return tally.count;
    },
    get read() {
      return input.read;
    },
    get inputEnded() {
      return input.ended;
    },
    get bytesRead() {
      return file?.bytesRead;
    },
    totalBytes,
  };
}

/** A file for the results, open and ready (an error opening it, such as EACCES, is reported before any work). */
function openOutput(path: string): Promise<WriteStream> {
  return new Promise((resolve, reject) => {
    const stream = createWriteStream(path);
    stream.once('error', reject);
    stream.once('open', () => {
      stream.off('error', reject);
      resolve(stream);
    });
  });
}

/** The package's version, from its package.json (next to dist/). */
function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

const SERVER_COMMANDS = ['serve', 'worker', 'migrate'];
const COMMANDS = ['check', 'doctor', ...SERVER_COMMANDS];

/** What the server package's `mailverify-server/cli` module offers (typed here: the engine does not import it). */
interface ServerPackage {
  run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number>;
}

// A name the bundler leaves alone: the server package is optional, looked up when one of its commands is given.
const SERVER_PACKAGE_CLI: string = 'mailverify-server/cli';

/** The server package's commands, or undefined when the package is not installed beside this one. */
async function serverPackage(): Promise<ServerPackage | undefined> {
  try {
    return (await import(SERVER_PACKAGE_CLI)) as ServerPackage;
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    // Only the package itself missing: a module missing inside it is a broken install, reported as it is.
    if (code === 'ERR_MODULE_NOT_FOUND' && /'mailverify-server(\/cli)?'/.test(message ?? '')) return undefined;
    throw error;
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
      process.stdout.write(USAGE + '\n');
      return command === undefined ? 2 : 0;
    }
    if (command === '--version' || command === '-v' || command === 'version') {
      process.stdout.write(`${version()}\n`);
      return 0;
    }
    if (command === 'doctor' || SERVER_COMMANDS.includes(command)) {
      // The commands' own flags leave --version out: answered here, as for check and the command itself.
      if (asksForVersion(rest)) {
        process.stdout.write(`${version()}\n`);
        return 0;
      }
      if (command === 'doctor') return await (await import('./doctor.js')).doctor(rest);
      const server = await serverPackage();
      if (server === undefined) {
        process.stderr.write(
          `mailverify: "${command}" is a command of the server package, mailverify-server, which is not installed.\n` +
            `Install it beside mailverify: npm install mailverify-server\n`,
        );
        return 2;
      }
      return await server.run(command, rest, process.env);
    }
    if (command !== 'check') {
      const near = closestName(command, COMMANDS);
      throw new UsageError(`unknown command ${JSON.stringify(command)}${near === null ? '' : ` (did you mean ${near}?)`}`);
    }
    const options = parseCheckOptions(rest);
    if (options === 'help' || options === 'version') {
      process.stdout.write(options === 'help' ? USAGE + '\n' : `${version()}\n`);
      return 0;
    }
    // Before the run, and also with --quiet: it is about the command line, not the results.
    if (options.warning !== undefined) process.stderr.write(`mailverify: ${options.warning}\n`);
    await check(options);
    return 0;
  } catch (error) {
    return commandFailed(command, error);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`mailverify: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
