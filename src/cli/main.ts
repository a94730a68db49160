/**
 * The `mailverify` command.
 *
 *   mailverify check [file|-] --checks syntax [--input text|csv] [--column N] [--delimiter C] [--header]
 *                              [--output jsonl|csv]
 *
 * Reads one address per line (or one CSV column) and writes one result per input, in input order.
 */
import { createReadStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { ENTRY_FIELDS, entryFromParse, type Entry } from '../engine/entry.js';
import { parseAddress } from '../syntax/parse.js';
import { CsvRecordReader, csvField } from './csv.js';

const USAGE = `Usage: mailverify check [file|-] [options]

Verifies the addresses of a file (one per line, or one column of a CSV file) or of standard input,
and writes one result per input, in order.

Options:
  --checks syntax         how far to verify; this version runs the offline syntax check ("syntax")
  --input text|csv        input format (default: csv for *.csv files, text otherwise)
  --column N              zero-based CSV column holding the address (default 0)
  --delimiter C           CSV delimiter (default ",")
  --header                the first CSV record is a header, not an address
  --output jsonl|csv      output format (default jsonl)
  -h, --help              this text

In text input each line is one address; a trailing CR (CRLF line ending) is removed and the final
line break does not start an entry. Every other line, blank ones included, gets a result.`;

class UsageError extends Error {}

interface CheckOptions {
  source: string;
  checks: 'syntax';
  input: 'text' | 'csv';
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
      input: { type: 'string' },
      column: { type: 'string', default: '0' },
      delimiter: { type: 'string', default: ',' },
      header: { type: 'boolean', default: false },
      output: { type: 'string', default: 'jsonl' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return null;
  if (positionals.length > 1) throw new UsageError(`expected at most one input file, got ${positionals.length}`);
  const source = positionals[0] ?? '-';
  if (values.checks !== 'syntax') {
    throw new UsageError(`--checks ${values.checks}: this version of the command runs the syntax check only (--checks syntax)`);
  }
  const input = values.input ?? (source.toLowerCase().endsWith('.csv') ? 'csv' : 'text');
  if (input !== 'text' && input !== 'csv') throw new UsageError(`--input must be text or csv, got ${input}`);
  const column = Number(values.column);
  if (!Number.isInteger(column) || column < 0) throw new UsageError(`--column must be a zero-based integer, got ${values.column}`);
  if (values.output !== 'jsonl' && values.output !== 'csv') {
    throw new UsageError(`--output must be jsonl or csv, got ${values.output}`);
  }
  if (values.delimiter.length !== 1) throw new UsageError(`--delimiter must be one character`);
  return { source, checks: 'syntax', input, column, delimiter: values.delimiter, header: values.header, output: values.output };
}

/** The addresses of the input, in order: lines of a text file, or one column of each CSV record. */
async function* readAddresses(options: CheckOptions): AsyncGenerator<string> {
  const stream = options.source === '-' ? process.stdin : createReadStream(options.source);
  stream.setEncoding('utf8');
  if (options.input === 'csv') {
    const reader = new CsvRecordReader(options.delimiter);
    let skipHeader = options.header;
    const column = (record: string[]): string => record[options.column] ?? '';
    for await (const chunk of stream) {
      for (const record of reader.push(chunk as string)) {
        if (skipHeader) skipHeader = false;
        else yield column(record);
      }
    }
    for (const record of reader.end()) if (skipHeader) skipHeader = false; else yield column(record);
    return;
  }
  let pending = '';
  for await (const chunk of stream) {
    pending += chunk as string;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      yield stripCr(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
    }
  }
  if (pending !== '') yield stripCr(pending);
}

const stripCr = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);

function formatEntry(entry: Entry, output: CheckOptions['output']): string {
  if (output === 'jsonl') return JSON.stringify(entry);
  return ENTRY_FIELDS.map((field) => csvField(entry[field])).join(',');
}

async function check(options: CheckOptions): Promise<void> {
  const out = process.stdout;
  if (options.output === 'csv') out.write(ENTRY_FIELDS.join(',') + '\n');
  let index = 0;
  for await (const address of readAddresses(options)) {
    const line = formatEntry(entryFromParse(index++, address, parseAddress(address)), options.output) + '\n';
    if (!out.write(line)) await new Promise((resolve) => out.once('drain', resolve));
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
      process.stdout.write(USAGE + '\n');
      return command === undefined ? 2 : 0;
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
