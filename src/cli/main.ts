/**
 * The `mailverify` command.
 *
 *   mailverify check [file|-] [--checks syntax|dns|smtp] [--dns-server IP[:PORT]]... [--max-connections N]
 *                    [--helo-name NAME] [--mail-from ADDRESS] [--smtp-port N] [--quality Standard|High|Extreme]
 *                    [--deduplication Off|Safe|Relaxed] [--input text|csv|jsonl] [--column N] [--delimiter C]
 *                    [--header] [--output jsonl|csv] [--out FILE]
 *
 * Reads one address per line (or one CSV column) and writes one result per input, in input order.
 */
import { createReadStream, createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEDUPLICATION_MODES, type Deduplication } from '../engine/dedupe.js';
import { ENTRY_FIELDS } from '../engine/entry.js';
import { createVerifier, type BatchInput, type Quality } from '../engine/verifier.js';
import { CsvRecordReader } from './csv.js';
import { BatchedWriter, csvLine } from './output.js';

const USAGE = `Usage: mailverify check [file|-] [options]

Verifies the addresses of a file (one per line, or one column of a CSV file) or of standard input,
and writes one result per input, in order.

Options:
  --checks syntax|dns|smtp
                          how far to verify (default syntax): "syntax" is offline (syntax, lists,
                          suggestions); "dns" adds the DNS/MX checks; "smtp" probes the mailboxes
  --helo-name NAME        EHLO name for SMTP probes (default: this host's name); use a name whose
                          address and reverse DNS match the address you connect from
  --mail-from ADDRESS     envelope sender of SMTP probes (default verify@<helo name>)
  --smtp-port N           SMTP port (default 25)
  --quality LEVEL         Standard (default), High or Extreme: passes over transient results, timeouts
  --passes N              passes over transient results, instead of the quality level's (1, 3, 9)
  --pass-delay MS         the wait between two passes (default 300000, 5 minutes)
  --dns-timeout MS        the cap on each DNS query (default 5000)
  --allow-private-addresses
                          let exchangers and literals on private, loopback or link-local addresses be
                          used (off by default: a hostile MX record could point inside your network)
  --dns-server IP[:PORT]  DNS server to ask instead of the system's (repeatable)
  --max-connections N     SMTP connections open at once (default 50); addresses are grouped by mail
                          exchanger, so one connection serves many of them
  --deduplication MODE    Off (default), Safe or Relaxed: later copies of an address are Duplicate
  --input text|csv|jsonl  input format (default: csv for *.csv files, jsonl for *.jsonl files, text
                          otherwise); jsonl: one JSON value per line, an address or
                          {"inputData": ADDRESS, "custom": TEXT}, whose custom text comes back in its result
  --column N              zero-based CSV column holding the address (default 0)
  --delimiter C           CSV delimiter (default ","); "\t" or "tab" for tabs
  --header                the first CSV record is a header, not an address
  --output jsonl|csv      output format (default jsonl)
  --out FILE              write the results to FILE instead of standard output
  -h, --help              this text
  --version               the version of mailverify

In text input each line is one address; a trailing CR (CRLF line ending) is removed and the final
line break does not start an entry. Every other line, blank ones included, gets a result; a line
longer than 65,536 characters is cut there. A byte order mark at the start of the input is dropped.`;

class UsageError extends Error {}

/** A bad option value that createVerifier refuses is the user's to fix: a usage error. */
function usage<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

interface CheckOptions {
  source: string;
  checks: 'syntax' | 'dns' | 'smtp';
  heloName: string | undefined;
  mailFrom: string | undefined;
  smtpPort: number | undefined;
  quality: Quality | undefined;
  allowPrivateAddresses: boolean;
  dnsServers: string[] | undefined;
  maxConnections: number | undefined;
  passes: number | undefined;
  passDelayMs: number | undefined;
  dnsTimeoutMs: number | undefined;
  deduplication: Deduplication;
  input: 'text' | 'csv' | 'jsonl';
  out: string | undefined;
  column: number;
  delimiter: string;
  header: boolean;
  output: 'jsonl' | 'csv';
}

function parseCheckOptions(argv: string[]): CheckOptions | null {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      checks: { type: 'string', default: 'syntax' },
      'dns-server': { type: 'string', multiple: true },
      'helo-name': { type: 'string' },
      'mail-from': { type: 'string' },
      'smtp-port': { type: 'string' },
      quality: { type: 'string' },
      'allow-private-addresses': { type: 'boolean', default: false },
      'max-connections': { type: 'string' },
      passes: { type: 'string' },
      'pass-delay': { type: 'string' },
      'dns-timeout': { type: 'string' },
      deduplication: { type: 'string', default: 'Off' },
      input: { type: 'string' },
      column: { type: 'string', default: '0' },
      delimiter: { type: 'string', default: ',' },
      header: { type: 'boolean', default: false },
      output: { type: 'string', default: 'jsonl' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return null;
  if (positionals.length > 1) throw new UsageError(`expected at most one input file, got ${positionals.length}`);
  const source = positionals[0] ?? '-';
  const checks = values.checks;
  if (checks !== 'syntax' && checks !== 'dns' && checks !== 'smtp') {
    throw new UsageError(`--checks must be syntax, dns or smtp, got ${checks}`);
  }
  const smtpPort = values['smtp-port'] === undefined ? undefined : Number(values['smtp-port']);
  if (smtpPort !== undefined && !(Number.isInteger(smtpPort) && smtpPort > 0 && smtpPort < 65536)) {
    throw new UsageError(`--smtp-port must be a TCP port number, got ${values['smtp-port']}`);
  }
  const quality = values.quality as Quality | undefined;
  if (quality !== undefined && !['Standard', 'High', 'Extreme'].includes(quality)) {
    throw new UsageError(`--quality must be Standard, High or Extreme, got ${quality}`);
  }
  const maxConnections = wholeNumber(values['max-connections'], '--max-connections', 1);
  const passes = wholeNumber(values.passes, '--passes', 1);
  const passDelayMs = wholeNumber(values['pass-delay'], '--pass-delay', 0);
  const dnsTimeoutMs = wholeNumber(values['dns-timeout'], '--dns-timeout', 1);
  const deduplication = values.deduplication as Deduplication;
  if (!DEDUPLICATION_MODES.includes(deduplication)) {
    throw new UsageError(`--deduplication must be one of ${DEDUPLICATION_MODES.join(', ')}, got ${values.deduplication}`);
  }
  const lowerSource = source.toLowerCase();
  const input = values.input ?? (lowerSource.endsWith('.csv') ? 'csv' : lowerSource.endsWith('.jsonl') ? 'jsonl' : 'text');
  if (input !== 'text' && input !== 'csv' && input !== 'jsonl') throw new UsageError(`--input must be text, csv or jsonl, got ${input}`);
  const column = Number(values.column);
  if (!Number.isInteger(column) || column < 0) throw new UsageError(`--column must be a zero-based integer, got ${values.column}`);
  if (values.output !== 'jsonl' && values.output !== 'csv') {
    throw new UsageError(`--output must be jsonl or csv, got ${values.output}`);
  }
  const delimiter = values.delimiter === '\\t' || values.delimiter.toLowerCase() === 'tab' ? '\t' : values.delimiter;
  if (delimiter.length !== 1) throw new UsageError(`--delimiter must be one character, "\\t" or "tab"`);
  const dnsServers = values['dns-server'];
  return { source, checks, heloName: values['helo-name'], mailFrom: values['mail-from'], smtpPort, quality, allowPrivateAddresses: values['allow-private-addresses'], dnsServers, maxConnections, passes, passDelayMs, dnsTimeoutMs, deduplication, input, out: values.out, column, delimiter, header: values.header, output: values.output };
}

/** A flag's whole number from `min` up, or undefined when the flag is absent. */
function wholeNumber(text: string | undefined, flag: string, min: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!(text.trim() !== '' && Number.isInteger(value) && value >= min)) {
    throw new UsageError(`${flag} must be a whole number${min > 0 ? ` from ${min}` : ''}, got ${text}`);
  }
  return value;
}

/** The addresses of the input, in order: lines of a text file, or one column of each CSV record. */
function readAddresses(options: CheckOptions): AsyncIterableIterator<BatchInput> {
  const lines = itemsOf(readBatches(options));
  return options.input === 'jsonl' ? jsonItems(lines) : lines;
}

/**
 * The inputs of JSON Lines: each line an address or `{ "inputData": ADDRESS, "custom": TEXT }`. A line that is not
 * one of those is an input error naming it (blank lines are inputs too, in every format: here they are not JSON).
 */
function jsonItems(lines: AsyncIterableIterator<string>): AsyncIterableIterator<BatchInput> {
  let number = 0;
  const items: AsyncIterableIterator<BatchInput> = {
    next: async () => {
      const line = await lines.next();
      if (line.done === true) return line;
      number++;
      let value: unknown;
      try {
        value = JSON.parse(line.value);
      } catch {
        throw new Error(`line ${number} of the input is not JSON: ${JSON.stringify(line.value.slice(0, 80))}`);
      }
      const item = value as { inputData?: unknown; custom?: unknown } | null;
      const isItem =
        typeof value === 'string' ||
        (typeof item === 'object' && item !== null && typeof item.inputData === 'string' && (item.custom === undefined || typeof item.custom === 'string'));
      if (!isItem) throw new Error(`line ${number} of the input is neither an address nor {"inputData": ..., "custom": ...}`);
      return { done: false, value: value as BatchInput };
    },
    return: async () => {
      await lines.return?.();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]: () => items,
  };
  return items;
}

/** The addresses of the input, a batch per chunk read. */
async function* readBatches(options: CheckOptions): AsyncGenerator<string[]> {
  const stream = options.source === '-' ? process.stdin : createReadStream(options.source);
  stream.setEncoding('utf8');
  const chunks = withoutByteOrderMark(stream);
  if (options.input === 'csv') {
    const reader = new CsvRecordReader(options.delimiter);
    let skipHeader = options.header;
    const columns = (records: string[][]): string[] => {
      if (skipHeader && records.length > 0) {
        skipHeader = false;
        records = records.slice(1);
      }
      return records.map((record) => record[options.column] ?? '');
    };
    for await (const chunk of chunks) yield columns(reader.push(chunk));
    yield columns(reader.end());
    return;
  }
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

/**
 * The longest line read whole (64 Ki characters, far beyond the 254 octets of an address); a longer one is cut
 * there, and its result is that of the cut text.
 */
const MAX_LINE = 65_536;

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

/**
 * The items of the batches one by one. An item of the batch at hand is served at once, without resuming a
 * generator (a million resumptions cost more than the lists and suggestions of a million addresses).
 */
function itemsOf<T>(batches: AsyncGenerator<T[]>): AsyncIterableIterator<T> {
  let batch: T[] = [];
  let at = 0;
  const refill = async (): Promise<IteratorResult<T>> => {
    for (;;) {
      const next = await batches.next();
      if (next.done === true) return { done: true, value: undefined };
      batch = next.value;
      at = 0;
      if (batch.length > 0) return { done: false, value: batch[at++]! };
    }
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
  if (options.output === 'csv') out.write(ENTRY_FIELDS.join(',') + '\n');
  const verifier = usage(() =>
    createVerifier({
      checks: options.checks,
      dns: { servers: options.dnsServers, timeoutMs: options.dnsTimeoutMs },
      passes: options.passes,
      passDelayMs: options.passDelayMs,
      heloName: options.heloName,
      mailFrom: options.mailFrom,
      quality: options.quality,
      allowPrivateAddresses: options.allowPrivateAddresses,
      smtp: { port: options.smtpPort, maxConnections: options.maxConnections },
    }),
  );
  const entries = verifier.verifyMany(readAddresses(options), {
    deduplication: options.deduplication,
    // A file's results line up with its lines.
    order: 'input',
  });
  const writer = new BatchedWriter(out);
  const jsonl = options.output === 'jsonl';
  for await (const entry of entries) {
    const wait = jsonl ? writer.addJsonLine(entry) : writer.add(csvLine(entry) + '\n');
    if (wait !== undefined) await wait;
    if (writer.error !== undefined) break; // stops reading the input too
  }
  await writer.end();
  await verifier.close();
  if (out !== process.stdout) await new Promise<void>((resolve) => (out as WriteStream).end(resolve));
  // The reader of a pipe that went away (`| head`) wanted no more: not an error.
  if (writer.error !== undefined && writer.error.code !== 'EPIPE') throw writer.error;
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
    if (command !== 'check') throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    const options = parseCheckOptions(rest);
    if (options === null) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    await check(options);
    return 0;
  } catch (error) {
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`mailverify: ${(error as Error).message}\n`);
    if (usage) process.stderr.write(`Run "mailverify --help" for usage.\n`);
    return usage ? 2 : 1;
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
