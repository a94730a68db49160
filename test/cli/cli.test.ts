// The `mailverify` command, run as a child process from the build (`npm test` builds dist/ first).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type LabDnsServer } from '../lab/dns-server.js';
import { libreOfficeForTests, openCsvInLibreOffice } from '../lab/libreoffice.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { unreachableDnsServer } from '../lab/closed-port.js';
import { runCli } from '../lab/serve-process.js';
import { parse } from 'csv-parse/sync';
import { ENTRY_FIELDS } from '../../packages/mailverify/src/engine/entry.js';

const cli = fileURLToPath(new URL('../../packages/mailverify/bin/mailverify.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mailverify-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function mailverify(args: string[], stdin?: string) {
  const r = spawnSync(process.execPath, [cli, ...args], { input: stdin, encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** For runs that need this process to keep answering (the lab DNS server lives here). */
const mailverifyAsync = (args: string[], stdin: string) => runCli(args, stdin);

const jsonLines = (text: string) => text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

describe('mailverify check --checks syntax', () => {
  it('writes one JSON line per input line, in order, with the syntax fields of the entry', () => {
    const { code, stdout } = mailverify(['check', '-', '--checks', 'syntax'], 'first.last@iana.org\r\ntest@io\n\n(c)"a b"@Bücher.de\n');
    expect(code).toBe(0);
    const entries = jsonLines(stdout);
    expect(entries.map((e) => [e.index, e.inputData, e.status, e.classification])).toEqual([
      [0, 'first.last@iana.org', 'Success', 'Deliverable'],
      [1, 'test@io', 'DomainPartCompliancyFailure', 'Undeliverable'],
      [2, '', 'AtSignNotFound', 'Undeliverable'],
      [3, '(c)"a b"@Bücher.de', 'Success', 'Deliverable'],
    ]);
    expect(entries[1]!.syntaxFailureIndex).toBe(7);
    expect(entries[3]).toMatchObject({
      emailAddress: '"a b"@Bücher.de',
      emailAddressLocalPart: '"a b"',
      emailAddressDomainPart: 'Bücher.de',
      asciiEmailAddressDomainPart: 'xn--bcher-kva.de',
      hasInternationalDomainName: true,
      hasInternationalMailboxName: false,
    });
    expect(Date.parse(entries[0]!.completedOn as string)).not.toBeNaN();
    expect(entries[0]).not.toHaveProperty('syntaxFailureIndex');
  });

  it('reads one column of a CSV file, quoted fields included, and writes CSV', () => {
    const file = join(dir, 'people.csv');
    writeFileSync(file, 'name,email\r\n"Doe, Jo","jo@example.org"\r\nAl,"al@@example.org"\r\n"Multi\nline",x@y.org');
    const { code, stdout } = mailverify(['check', file, '--column', '1', '--header', '--output', 'csv']);
    expect(code).toBe(0);
    const records = parse(stdout) as string[][];
    expect(records[0]!.slice(0, 4)).toEqual(['index', 'inputData', 'classification', 'status']);
    expect(records.slice(1).map((r) => [r[0], r[1], r[3]])).toEqual([
      ['0', 'jo@example.org', 'Success'],
      ['1', 'al@@example.org', 'InvalidCharacterInSequence'],
      ['2', 'x@y.org', 'Success'],
    ]);
  });

  it('checks the shipped sample', () => {
    const { code, stdout } = mailverify(['check', fileURLToPath(new URL('../../corpus/sample.txt', import.meta.url))]);
    expect(code).toBe(0);
    expect(jsonLines(stdout).length).toBeGreaterThan(10);
  });

  it('gives every line of a large input its result, in order, written in batches', () => {
    const file = join(dir, 'many.txt');
    const lines = Array.from({ length: 2_000 }, (_, i) => (i % 7 === 0 ? `bad ${i}` : `user${i}@example${i % 50}.org`));
    writeFileSync(file, lines.join('\r\n') + '\r\n');
    const { code, stdout } = mailverify(['check', file]);
    expect(code).toBe(0);
    const entries = jsonLines(stdout);
    expect(entries.map((e) => e.inputData)).toEqual(lines);
    expect(entries.map((e) => e.index)).toEqual(lines.map((_, i) => i));
  });

  it('stops quietly when the reader of its output goes away (`| head`)', async () => {
    const child = spawn(process.execPath, [cli, 'check', '-']);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdout.once('data', () => child.stdout.destroy());
    child.stdin.on('error', () => {}); // the child may stop reading before all of it is written
    child.stdin.end(Array.from({ length: 200_000 }, (_, i) => `user${i}@example.org\n`).join(''));
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
  });

  it('refuses forms of address on request: --refuse quoted|literal|international, --no-provider-rules', () => {
    const input = '"john doe"@example.com\nuser@[8.8.8.8]\njosé@example.com\njo@gmail.com\n';
    const statuses = (args: string[]) =>
      mailverify(['check', '-', '-q', ...args], input).stdout.trim().split('\n').map((line) => {
        const entry = JSON.parse(line) as { status: string; syntaxFailureIndex?: number };
        return `${entry.status}${entry.syntaxFailureIndex === undefined ? '' : `@${entry.syntaxFailureIndex}`}`;
      });
    expect(statuses([])).toEqual(['Success', 'Success', 'Success', 'IspSpecificSyntaxFailure@2']);
    expect(statuses(['--refuse', 'quoted', '--refuse', 'literal', '--refuse', 'international', '--no-provider-rules'])).toEqual([
      'InvalidCharacterInSequence@0',
      'UnacceptableDomainLiteral@5',
      'InvalidCharacterInSequence@3',
      'Success',
    ]);
    expect(mailverify(['check', '--refuse', 'comments'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--refuse takes quoted, literal, international/) });
  });

  it('applies override rules from --overrides FILE, in one thread or several, and names a malformed rule', () => {
    const rules = join(dir, 'rules.json');
    writeFileSync(rules, JSON.stringify([{ match: '*@our-company.com', classification: 'Deliverable' }, { match: 'info@*', classification: 'Unwanted' }]));
    const input = 'Jane@Our-Company.com\ninfo@example.org\njane@example.org\nbad..dot@our-company.com\n'.repeat(3000);
    for (const threads of ['1', '2']) {
      const { code, stdout } = mailverify(['check', '-', '-q', '--overrides', rules, '--threads', threads], input);
      expect(code).toBe(0);
      const entries = jsonLines(stdout);
      expect(entries).toHaveLength(12_000);
      expect(entries.slice(0, 4).map((e) => [e.status, e.classification])).toEqual([
        ['OverrideMatch', 'Deliverable'],
        ['OverrideMatch', 'Unwanted'],
        ['Success', 'Deliverable'],
        ['DoubleDotSequence', 'Undeliverable'],
      ]);
      expect(entries.filter((e) => e.status === 'OverrideMatch')).toHaveLength(6000);
    }
    writeFileSync(rules, JSON.stringify([{ match: '*@x.com', classification: 'A' }, { match: '*@y.com' }]));
    expect(mailverify(['check', '-', '--overrides', rules], 'a@x.com\n')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(`--overrides ${rules}: overrides[1].classification must be a non-empty string`),
    });
    writeFileSync(rules, '[{');
    expect(mailverify(['check', '-', '--overrides', rules], 'a@x.com\n')).toMatchObject({ code: 2, stderr: expect.stringContaining('is not JSON') });
  });

  it('refuses what it cannot do with a clear message and exit code 2', () => {
    expect(mailverify(['check', '--checks', 'all'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--checks must be syntax, dns or smtp/) });
    expect(mailverify(['check', '--checks', 'smtp', '--mail-from', 'nobody'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/mailFrom/) });
    expect(mailverify(['check', '--smtp-port', '70000'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--smtp-port/) });
    expect(mailverify(['check', '--deduplication', 'Loose'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/Off, Safe, Relaxed/) });
    expect(mailverify(['check', '--max-connections', '0'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--max-connections/) });
    expect(mailverify(['verify'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown command "verify"/) });
    expect(mailverify(['check', '--column', '-1'], '')).toMatchObject({ code: 2 });
    expect(mailverify(['check', '--bogus'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/bogus/) });
    expect(mailverify(['check', join(dir, 'missing.txt')])).toMatchObject({ code: 1, stderr: expect.stringMatching(/ENOENT/) });
    expect(mailverify(['--help'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/Usage: mailverify check/) });
    expect(mailverify(['check', '--passes', '0'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--passes must be a whole number from 1/) });
    expect(mailverify(['check', '--pass-delay', 'soon'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--pass-delay/) });
    expect(mailverify(['check', '--dns-timeout', '1.5'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--dns-timeout/) });
    expect(mailverify(['check', '--delimiter', ';;'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--delimiter/) });
  });

  it('drops the byte order mark at the start of a file, text or CSV', () => {
    const text = join(dir, 'bom.txt');
    writeFileSync(text, '\uFEFFjane@example.org\r\n\uFEFFjoe@example.org\r\n');
    // Only the first character of the input is a byte order mark; elsewhere U+FEFF is part of the line.
    expect(jsonLines(mailverify(['check', text]).stdout).map((e) => e.inputData)).toEqual(['jane@example.org', '\uFEFFjoe@example.org']);
    const csv = join(dir, 'bom.csv');
    writeFileSync(csv, '\uFEFFemail,name\njane@example.org,Jane\n');
    expect(jsonLines(mailverify(['check', csv, '--header']).stdout).map((e) => e.inputData)).toEqual(['jane@example.org']);
    expect(jsonLines(mailverify(['check', '-'], '\uFEFFjane@example.org\n').stdout).map((e) => e.inputData)).toEqual(['jane@example.org']);
  });

  it('writes to --out FILE instead of standard output', () => {
    const out = join(dir, 'results.jsonl');
    const { code, stdout } = mailverify(['check', '-', '--out', out], 'jane@example.org\nbad\n');
    expect([code, stdout]).toEqual([0, '']);
    expect(jsonLines(readFileSync(out, 'utf8')).map((e) => [e.index, e.status])).toEqual([
      [0, 'Success'],
      [1, 'AtSignNotFound'],
    ]);
    expect(mailverify(['check', '-', '--out', join(dir, 'no-such-dir', 'x.jsonl')], 'a@b.org\n')).toMatchObject({ code: 1, stderr: expect.stringMatching(/ENOENT/) });
  });

  it('reads JSON Lines: addresses, or items with custom data that comes back in the result', () => {
    const file = join(dir, 'items.jsonl');
    writeFileSync(file, '"jane@example.org"\n{"inputData": "joe@example.org", "custom": "row 7"}\n');
    const { code, stdout } = mailverify(['check', file]);
    expect(code).toBe(0);
    expect(jsonLines(stdout).map((e) => [e.inputData, e.status, e.custom])).toEqual([
      ['jane@example.org', 'Success', undefined],
      ['joe@example.org', 'Success', 'row 7'],
    ]);
    const broken = mailverify(['check', '-', '--input', 'jsonl'], '"a@example.org"\n{"inputData": 5}\n');
    expect(broken).toMatchObject({ code: 1, stderr: expect.stringMatching(/line 2 of the input is neither an address nor/) });
    expect(mailverify(['check', '-', '--input', 'jsonl'], 'a@example.org\n')).toMatchObject({ code: 1, stderr: expect.stringMatching(/line 1 of the input is not JSON/) });
  });

  it('gives a huge line its one result, cut at 65,536 characters, without holding the line', () => {
    const file = join(dir, 'huge.txt');
    writeFileSync(file, `first@example.org\r\n${'a'.repeat(5_000_000)}@example.org\r\nlast@example.org\r\n`);
    const { code, stdout } = mailverify(['check', file]);
    expect(code).toBe(0);
    const entries = jsonLines(stdout);
    expect(entries.map((e) => [e.index, (e.inputData as string).length, e.status])).toEqual([
      [0, 17, 'Success'],
      [1, 65_536, 'InvalidLocalPartLength'],
      [2, 16, 'Success'],
    ]);
    // A line split across reads, with its CRLF across two of them, is joined as usual.
    const split = `${'b'.repeat(70_000)}\r`;
    const piped = mailverify(['check', '-'], `${split}\nx@example.org`);
    expect(jsonLines(piped.stdout).map((e) => [(e.inputData as string).length, e.inputData === 'x@example.org'])).toEqual([
      [65_536, false],
      [13, true],
    ]);
  });

  it('prints its version: mailverify --version, check --version (its help lists it), serve --version', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const printed = { code: 0, stdout: `${manifest.version}\n`, stderr: '' };
    expect(mailverify(['--version'])).toMatchObject(printed);
    expect(mailverify(['check', '--help']).stdout).toMatch(/^  --version /m);
    expect(mailverify(['check', '--version'])).toMatchObject(printed);
    expect(mailverify(['check', 'list.txt', '--checks', 'dns', '--version'])).toMatchObject(printed);
    // Before any other check of the server's options (no password needed to ask for the version).
    expect(mailverify(['serve', '--version'])).toMatchObject(printed);
  });

  it('suggests the flag or command that was probably meant', () => {
    const unknown = (args: string[]) => {
      const result = mailverify(args, '');
      expect(result.code).toBe(2);
      return result.stderr.split('\n')[0];
    };
    expect(unknown(['check', '--dns-sever', '9.9.9.9'])).toBe('mailverify: unknown option --dns-sever (did you mean --dns-server?)');
    expect(unknown(['check', '-', '--ouptut', 'csv'])).toBe('mailverify: unknown option --ouptut (did you mean --output?)');
    expect(unknown(['check', '--dedup', 'Safe'])).toBe('mailverify: unknown option --dedup (did you mean --deduplication?)');
    expect(unknown(['check', '--colum', '1'])).toBe('mailverify: unknown option --colum (did you mean --column?)');
    expect(unknown(['check', '--frobnicate'])).toBe('mailverify: unknown option --frobnicate');
    expect(unknown(['check', '-x'])).toBe('mailverify: unknown option -x');
    expect(unknown(['chek', 'list.txt'])).toBe('mailverify: unknown command "chek" (did you mean check?)');
    // After "--", a name that starts with "-" is a file, not a flag.
    expect(mailverify(['check', '--', '--dns-sever'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/ENOENT/) });
  });

  it('names the flag and the value of a bad --dns-server, for check and serve', () => {
    const message = (value: string) => `mailverify: --dns-server must be an IP address with an optional port (9.9.9.9, [2620:fe::fe]:53), got ${value}\n`;
    for (const value of ['999.1.1.1', 'dns.example', '1.1.1.1:99999', '[::1]']) {
      const result = mailverify(['check', '-', '--checks', 'dns', '--dns-server', '9.9.9.9', '--dns-server', value], 'a@example.org\n');
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr.split('\n')[0] + '\n').toBe(message(value));
      expect(result.stderr).not.toMatch(/dns\.servers/);
    }
    const env = { ...process.env, MAILVERIFY_ROOT_PASSWORD: 'secret' };
    const serve = spawnSync(process.execPath, [cli, 'serve', '--port', '0', '--dns-server', 'nope'], { encoding: 'utf8', env, timeout: 30_000 });
    expect(serve.status).toBe(2);
    expect(serve.stderr.split('\n')[0]).toMatch(/^mailverify: --dns-server must be an IP address with an optional port\b.*, got nope$/);
  });

  it('warns that DNS and SMTP flags have no effect below their checks level, and runs', () => {
    const input = 'jane@example.org\n=1+1@example.org\nuser@[10.0.0.1]\n';
    const plain = mailverify(['check', '-', '-q'], input);
    const given = mailverify(['check', '-', '-q', '--dns-server', '9.9.9.9', '--dns-timeout', '100', '--helo-name', 'probe.example.org'], input);
    expect(given.code).toBe(0);
    expect(given.stderr).toBe(
      'mailverify: warning: --dns-server, --dns-timeout and --helo-name have no effect with --checks syntax, which uses no network; add --checks dns or --checks smtp to use them\n',
    );
    // The results are those of a run without the flags.
    const statuses = (stdout: string) => jsonLines(stdout).map((e) => e.status);
    expect(statuses(given.stdout)).toEqual(statuses(plain.stdout));
    expect(mailverify(['check', '-', '-q', '--smtp-port', '2525', '--checks', 'syntax'], input).stderr).toBe(
      'mailverify: warning: --smtp-port has no effect with --checks syntax, which uses no network; add --checks dns or --checks smtp to use it\n',
    );
    // Flags that act offline get no warning: --allow-private-addresses lets a literal on a private address pass.
    const literal = mailverify(['check', '-', '-q', '--allow-private-addresses', '--refuse', 'quoted', '--no-provider-rules'], input);
    expect(literal.stderr).toBe('');
    expect(statuses(literal.stdout)[2]).toBe('Success');
    expect(statuses(plain.stdout)[2]).toBe('UnacceptableDomainLiteral');
    expect(mailverify(['check', '--help']).stdout).toMatch(/given with a lower level,\s+they have no effect and a warning on standard error says so/);
  });

  it("keeps a CSV or TSV input's own columns after the result's, in one thread or several, unless --input-columns drop", () => {
    const rows = ['jane@example.com,Jane,Acme,active', '"bad@",Bob "B",=1+1', 'no-at-sign,Zoë'];
    const people = join(dir, 'people.csv');
    writeFileSync(people, `email,name,company,status\n${rows.join('\n')}\n`);
    const resultFields = ENTRY_FIELDS.length;
    for (const threads of ['1', '3']) {
      const result = mailverify(['check', people, '-q', '--column', 'email', '--output', 'csv', '--threads', threads]);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const [header, ...records] = parse(result.stdout, { relax_column_count: true }) as string[][];
      // The result's fields first, as without the input's columns; a name taken by a result field gets "input.".
      expect(header).toEqual([...ENTRY_FIELDS, 'email', 'name', 'company', 'input.status']);
      expect(records.map((record) => [record[0], record[3], ...record.slice(resultFields)])).toEqual([
        ['0', 'Success', 'jane@example.com', 'Jane', 'Acme', 'active'],
        ['1', 'DomainPartCompliancyFailure', 'bad@', 'Bob "B"', "'=1+1"], // shorter records stay as they are
        ['2', 'AtSignNotFound', 'no-at-sign', 'Zoë'],
      ]);
    }
    // TSV out, without a header in: the columns are named by their zero-based index, from the first record.
    const tsv = mailverify(['check', '-', '-q', '--input', 'csv', '--output', 'tsv', '--csv-formulas', 'keep'], 'a@example.com,x\nno-at,"y\tz",w\n');
    expect(tsv).toMatchObject({ code: 0, stderr: '' });
    const [tsvHeader, ...tsvRecords] = parse(tsv.stdout, { delimiter: '\t', relax_column_count: true }) as string[][];
    expect(tsvHeader).toEqual([...ENTRY_FIELDS, 'column0', 'column1']);
    expect(tsvRecords.map((record) => record.slice(resultFields))).toEqual([['a@example.com', 'x'], ['no-at', 'y\tz', 'w']]);
    // An input of a header alone: the header row names its columns.
    const empty = mailverify(['check', '-', '-q', '--input', 'csv', '--header', '--output', 'csv'], 'email,name\n');
    expect(empty).toMatchObject({ code: 0, stdout: `${[...ENTRY_FIELDS, 'email', 'name'].join(',')}\n` });
    const dropped = mailverify(['check', people, '-q', '--column', 'email', '--output', 'csv', '--input-columns', 'drop']);
    expect((parse(dropped.stdout) as string[][]).map((record) => record.length)).toEqual([resultFields, resultFields, resultFields, resultFields]);
    // JSON lines carry no columns of the input (their index joins them), and text input has none: refused, not ignored.
    expect(mailverify(['check', people, '--input-columns', 'keep'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--input-columns applies to CSV and TSV input written as --output csv or tsv/) });
    expect(mailverify(['check', '-', '--output', 'csv', '--input-columns', 'keep'], '')).toMatchObject({ code: 2 });
    expect(mailverify(['check', people, '--output', 'csv', '--input-columns', 'all'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--input-columns must be keep or drop, got all/) });
    expect(mailverify(['check', '-', '--output', 'xml'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--output must be jsonl, csv or tsv, got xml/) });
  });

  it('writes CSV text that starts like a formula after a quote, unless --csv-formulas keep', () => {
    const input = ['=1+1', '=HYPERLINK("http://x","y")', '+1@example.com', '-john@example.com', '@example.com', '\t=1@example.com', 'john@example.com'];
    const jsonl = input.map((inputData) => JSON.stringify({ inputData, custom: `${inputData.slice(0, 2)}x` })).join('\n') + '\n';
    const run = (extra: string[]) => {
      const result = mailverify(['check', '-', '-q', '--input', 'jsonl', '--output', 'csv', ...extra], jsonl);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const [header, ...records] = parse(result.stdout) as string[][];
      return (field: string) => records.map((r) => r[header!.indexOf(field)]);
    };
    const escaped = run([]);
    expect(escaped('inputData')).toEqual(["'=1+1", `'=HYPERLINK("http://x","y")`, "'+1@example.com", "'-john@example.com", "'@example.com", "'\t=1@example.com", 'john@example.com']);
    expect(escaped('custom')).toEqual(["'=1x", "'=Hx", "'+1x", "'-jx", "'@ex", "'\t=x", 'jox']);
    // The tab before an address is white space around it: the address itself starts with =.
    expect(escaped('emailAddress')).toEqual(['', '', "'+1@example.com", "'-john@example.com", '', "'=1@example.com", 'john@example.com']);
    expect(escaped('index')).toEqual(['0', '1', '2', '3', '4', '5', '6']);
    expect(escaped('status')[3]).toBe('Success'); // the address that starts with - is valid, and stays so
    const kept = run(['--csv-formulas', 'keep']);
    expect(kept('inputData')).toEqual(input);
    expect(run(['--csv-formulas', 'escape'])('inputData')).toEqual(escaped('inputData'));
    expect(mailverify(['check', '-', '--csv-formulas', 'keep'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--csv-formulas applies to --output csv/) });
    expect(mailverify(['check', '-', '--output', 'csv', '--csv-formulas', 'off'], '')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--csv-formulas must be escape or keep, got off/) });
  });

  const soffice = libreOfficeForTests("the CLI's CSV output");
  if (soffice !== null) {
    it('writes CSV that LibreOffice, evaluating formulas, opens as text; with --csv-formulas keep, as formulas', async () => {
      const input = '=1+1\n=HYPERLINK("http://x","y")\n';
      const opened = async (extra: string[]) => {
        const result = mailverify(['check', '-', '-q', '--output', 'csv', ...extra], input);
        const cells = await openCsvInLibreOffice(soffice, result.stdout);
        return cells.slice(1).map((row) => [row[1]!.value, row[1]!.formula]);
      };
      expect(await opened([])).toEqual([
        ["'=1+1", undefined],
        [`'=HYPERLINK("http://x","y")`, undefined],
      ]);
      expect(await opened(['--csv-formulas', 'keep'])).toEqual([
        [2, '1+1'],
        ['y', 'HYPERLINK("http://x","y")'],
      ]);
    });
  }

  it('reads tab-separated columns with --delimiter tab or "\\t"', () => {
    const file = join(dir, 'people.tsv');
    writeFileSync(file, 'name\temail\nJane\tjane@example.org\nJoe\tnot-an-address\n');
    for (const delimiter of ['tab', '\\t']) {
      const { code, stdout } = mailverify(['check', file, '--input', 'csv', '--delimiter', delimiter, '--column', '1', '--header']);
      expect(code).toBe(0);
      expect(jsonLines(stdout).map((e) => [e.inputData, e.status])).toEqual([
        ['jane@example.org', 'Success'],
        ['not-an-address', 'AtSignNotFound'],
      ]);
    }
  });
});

describe('mailverify check: CSV and TSV input', () => {
  const addresses = (stdout: string) => jsonLines(stdout).map((e) => e.inputData);

  it('reads any file or standard input as CSV or TSV with --input, and .csv and .tsv files by their name', () => {
    const csv = join(dir, 'people-csv.txt');
    writeFileSync(csv, 'name,email\nJane,jane@example.org\n');
    expect(addresses(mailverify(['check', csv, '--input', 'csv', '--column', '1', '--header']).stdout)).toEqual(['jane@example.org']);
    expect(addresses(mailverify(['check', '-', '--input', 'csv', '--column', '1', '--header'], 'name,email\nJoe,joe@example.org\n').stdout)).toEqual(['joe@example.org']);
    expect(addresses(mailverify(['check', '-', '--input', 'tsv', '--column', '1'], 'Joe\tjoe@example.org\n').stdout)).toEqual(['joe@example.org']);
    const tsv = join(dir, 'people.TSV');
    writeFileSync(tsv, 'Jane\t"jane,doe@example.org"\r\n');
    expect(addresses(mailverify(['check', tsv, '--column', '1']).stdout)).toEqual(['jane,doe@example.org']);
    expect(mailverify(['check', tsv, '--delimiter', ';'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/TSV input is tab-separated; use --input csv --delimiter ;/) });
  });

  it('refuses --column, --header and --delimiter for text and JSON Lines input, rather than ignore them', () => {
    const text = join(dir, 'plain.txt');
    writeFileSync(text, 'name,email\n');
    for (const extra of [['--column', '1'], ['--header'], ['--delimiter', ';']]) {
      const refused = mailverify(['check', text, ...extra]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`${extra[0]} applies to CSV and TSV input, "${text}" is read as text; add --input csv or --input tsv`);
      expect(refused.stdout).toBe('');
    }
    expect(mailverify(['check', '-', '--column', 'email'], 'a@b.org\n')).toMatchObject({ code: 2, stderr: expect.stringMatching(/standard input is read as text/) });
    expect(mailverify(['check', '-', '--input', 'jsonl', '--header'], '"a@b.org"\n')).toMatchObject({ code: 2, stderr: expect.stringMatching(/--header applies to CSV and TSV input, not to --input jsonl/) });
  });

  it('selects the column by its name in the header: as written, else ignoring case', () => {
    const input = 'id,Name,E-mail Address\n1,Jane,jane@example.org\n2,"Doe, Joe",joe@example.org\n';
    for (const name of ['E-mail Address', 'e-mail address']) {
      const { code, stdout } = mailverify(['check', '-', '--input', 'csv', '--column', name], input);
      expect(code).toBe(0);
      expect(addresses(stdout)).toEqual(['jane@example.org', 'joe@example.org']);
    }
    // A number is an index (zero-based); the header is then read only with --header.
    expect(addresses(mailverify(['check', '-', '--input', 'csv', '--column', '2', '--header'], input).stdout)).toEqual(['jane@example.org', 'joe@example.org']);
  });

  it('reports a header without the named column, listing its columns', () => {
    const result = mailverify(['check', '-', '--input', 'csv', '--column', 'email'], 'id,Name,E-mail Address\n1,Jane,jane@example.org\n');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('mailverify: the header (line 1 of the input) has no column "email"; its columns are "id", "Name", "E-mail Address"\n');
    expect(result.stdout).toBe('');
  });

  it('reports a record without the address column by its line, after the results of the records before it', () => {
    // A quoted field over two CRLF lines, a blank line, then a record of one field.
    const input = 'a,jane@example.org\r\n"multi\r\nline",joe@example.org\r\n\r\nshort\r\nz,never@example.org\r\n';
    const result = mailverify(['check', '-', '--input', 'csv', '--column', '1'], input);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('mailverify: line 5 of the input has 1 field, no column 1 (zero-based)\n');
    expect(addresses(result.stdout)).toEqual(['jane@example.org', 'joe@example.org']);
  });

  it('reports a quote never closed by its line, after the results of the records before it', () => {
    const file = join(dir, 'broken.csv');
    const good = Array.from({ length: 3_000 }, (_, i) => `${i},user${i}@example.org`);
    writeFileSync(file, [...good, '3000,"unclosed@example.org', ...good].join('\n') + '\n');
    const result = mailverify(['check', file, '--column', '1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('mailverify: line 3001 of the input opens a quoted CSV field that is not closed by the end of the input\n');
    expect(addresses(result.stdout)).toEqual(good.map((line) => line.split(',')[1]));
  });

  it('stops at a record over 1 MiB with an error naming its line, holding no more of it', () => {
    const file = join(dir, 'huge.csv');
    writeFileSync(file, `email\nfirst@example.org\n${'a'.repeat(5_000_000)}@example.org\nlast@example.org\n`);
    const result = mailverify(['check', file, '--header']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('mailverify: line 3 of the input starts a CSV record longer than 1,048,576 characters (is a quote not closed?)\n');
    expect(addresses(result.stdout)).toEqual(['first@example.org']);
  });

  it('keeps quotes inside unquoted fields, and reads CR, LF and CRLF line ends in one file', () => {
    const result = mailverify(['check', '-', '--input', 'csv'], '"john doe"@example.org\rjane@example.org\nab"c@example.org\r\nx@example.org');
    expect(result.code).toBe(0);
    expect(addresses(result.stdout)).toEqual(['"john doe"@example.org', 'jane@example.org', 'ab"c@example.org', 'x@example.org']);
  });

  it('writes CSV that reads back field for field: commas, quotes and line breaks in the input', () => {
    const tricky = ['"a,b"@example.org', '"say ""hi"""@example.org', ' lead@example.org', 'two\nlines@example.org', 'plain@example.org'];
    const input = tricky.map((address) => `"${address.replace(/"/g, '""')}"`).join('\r\n') + '\r\n';
    const { code, stdout } = mailverify(['check', '-', '--input', 'csv', '--output', 'csv'], input);
    expect(code).toBe(0);
    const [header, ...records] = parse(stdout) as string[][];
    expect(header).toEqual([...ENTRY_FIELDS, 'column0']);
    expect(records.map((r) => r[1])).toEqual(tricky);
    expect(records.map((r) => r[ENTRY_FIELDS.length])).toEqual(tricky); // the input's own column, as it was
    expect(records.map((r) => r[0])).toEqual(['0', '1', '2', '3', '4']);
    expect(records[0]![header!.indexOf('emailAddressLocalPart')]).toBe('"a,b"');
  });
});

describe('mailverify check: what it says on standard error', () => {
  it('prints a summary by classification and by status, and no progress line when standard error is not a terminal', () => {
    const { code, stdout, stderr } = mailverify(['check', '-'], 'jane@example.org\njoe@example.org\nnot-an-address\n@example.org\n');
    expect(code).toBe(0);
    expect(jsonLines(stdout)).toHaveLength(4);
    expect(stderr).toMatch(/^4 addresses in \d+\.\d s: 2 Deliverable, 2 Undeliverable\nstatuses: 2 Success, 1 AtSignNotFound, 1 \w+\n$/);
  });

  it('says nothing with --quiet, but still reports errors', () => {
    expect(mailverify(['check', '-', '-q'], 'jane@example.org\n')).toMatchObject({ code: 0, stderr: '' });
    expect(mailverify(['check', '-', '--quiet', '--input', 'jsonl'], 'x\n')).toMatchObject({ code: 1, stderr: expect.stringMatching(/line 1 of the input is not JSON/) });
  });

  it('gives no summary after an input error, and a summary of none for an empty input', () => {
    expect(mailverify(['check', '-', '--input', 'jsonl'], '"a@example.org"\n5\n').stderr).toBe(
      'mailverify: line 2 of the input is neither an address nor {"inputData": ..., "custom": ...}\n',
    );
    expect(mailverify(['check', '-'], '')).toMatchObject({ code: 0, stdout: '', stderr: expect.stringMatching(/^0 addresses in \d+\.\d s\n$/) });
  });
});

describe('mailverify check --checks dns', () => {
  let lab: LabDnsServer;
  beforeAll(async () => {
    lab = await startDnsServer({
      'mailhost.com': { mx: [{ priority: 10, exchange: 'mx.mailhost.com' }] },
      'mx.mailhost.com': { a: ['1.2.3.4'] },
      'nullmx.com': { mx: [{ priority: 0, exchange: '' }] },
      'slowdns.com': { mx: [{ priority: 10, exchange: 'mx.mailhost.com' }], delayMs: 1000 },
    });
  });
  afterAll(() => lab.close());

  it('asks the given DNS server, flags and deduplicates, one result per input in order', async () => {
    const input = 'info@mailhost.com\nInfo@MAILHOST.com\nx@nullmx.com\nx@nowhere.com\nx@outlok.com\n';
    const args = ['check', '-', '--checks', 'dns', '--dns-server', lab.address, '--deduplication', 'Safe'];
    const result = await mailverifyAsync(args, input);
    expect(result.code).toBe(0);
    const entries = jsonLines(result.stdout);
    expect(entries.map((e) => [e.index, e.status, e.classification])).toEqual([
      [0, 'Success', 'Deliverable'],
      [1, 'Duplicate', 'Deliverable'],
      [2, 'DomainHasNullMx', 'Undeliverable'],
      [3, 'DomainDoesNotExist', 'Undeliverable'],
      [4, 'DomainDoesNotExist', 'Undeliverable'],
    ]);
    expect(entries[0]).toMatchObject({ isRoleAccount: true, isFreeEmailAddress: false });
    expect(entries[1]).toMatchObject({ duplicateOf: 0 });
    expect(entries[4]).toMatchObject({ suggestions: ['x@outlook.com'] });
    expect(lab.exchangeCount('mailhost.com', 'MX')).toBe(1);
  });

  it('finishes the addresses read before an input error, then reports it', async () => {
    // The slow domain's answer comes a second after the input has failed.
    const result = await mailverifyAsync(['check', '-', '--input', 'csv', '--checks', 'dns', '--dns-server', lab.address], 'a@slowdns.com\n"b@mailhost.com\n');
    expect(result.code).toBe(1);
    expect(jsonLines(result.stdout).map((e) => [e.inputData, e.status])).toEqual([['a@slowdns.com', 'Success']]);
    expect(result.stderr).toBe('mailverify: line 2 of the input opens a quoted CSV field that is not closed by the end of the input\n');
  });

  it('hints at the DNS server when it cannot be reached', async () => {
    const dead = await unreachableDnsServer();
    const result = await mailverifyAsync(['check', '-', '--checks', 'dns', '--dns-server', dead], 'a@mailhost.com\nb@example.com\n');
    expect(jsonLines(result.stdout).map((e) => e.status)).toEqual(['DnsConnectionFailure', 'DnsConnectionFailure']);
    expect(result.stderr).toMatch(
      new RegExp(`\\nhint: 2 of 2 addresses got DnsConnectionFailure or DnsQueryTimeout: the DNS server\\(s\\) ${dead.replace(/\./g, '\\.')} did not answer\\. .*--dns-server\\.\\n$`),
    );
    const working = await mailverifyAsync(['check', '-', '--checks', 'dns', '--dns-server', lab.address], 'a@mailhost.com\nb@nowhere.com\n');
    expect(working.stderr).not.toMatch(/hint/);
  });

  it('caps each query at --dns-timeout', async () => {
    const args = ['check', '-', '--checks', 'dns', '--dns-server', lab.address];
    const capped = await mailverifyAsync([...args, '--dns-timeout', '300'], 'a@slowdns.com\n');
    expect(jsonLines(capped.stdout).map((e) => e.status)).toEqual(['DnsQueryTimeout']);
    const patient = await mailverifyAsync(args, 'a@slowdns.com\n');
    expect(jsonLines(patient.stdout).map((e) => e.status)).toEqual(['Success']);
  });
});

describe('mailverify check --checks smtp', () => {
  let mailLab: MailLab;
  beforeAll(async () => {
    mailLab = await startMailLab({
      servers: { strict: { mailboxes: ['alice'] }, catchall: { acceptAll: true }, grey: { mailboxes: ['alice'], greylist: 2 } },
      domains: { 'strict-lab.com': ['strict'], 'catchall-lab.com': ['catchall'], 'grey-lab.com': ['grey'] },
    });
  });
  afterAll(() => mailLab.close());

  it('tries transient results again as --passes and --pass-delay say', async () => {
    const args = ['check', '-', '--checks', 'smtp', '--dns-server', mailLab.dnsAddress, '--smtp-port', String(mailLab.port), '--allow-private-addresses'];
    mailLab.reset();
    const once = await mailverifyAsync(args, 'alice@grey-lab.com\n');
    expect(jsonLines(once.stdout).map((e) => e.status)).toEqual(['MailboxTemporarilyUnavailable']);
    mailLab.reset();
    const thrice = await mailverifyAsync([...args, '--passes', '3', '--pass-delay', '10'], 'alice@grey-lab.com\n');
    expect(jsonLines(thrice.stdout).map((e) => e.status)).toEqual(['Success']);
  });

  it('probes the mailboxes, and connects to loopback exchangers only when allowed', async () => {
    const input = 'alice@strict-lab.com\nnobody@strict-lab.com\nanyone@catchall-lab.com\n';
    const args = ['check', '-', '--checks', 'smtp', '--dns-server', mailLab.dnsAddress, '--smtp-port', String(mailLab.port)];
    const named = ['--helo-name', 'probe.example.org', '--mail-from', 'bounce@example.org'];
    const allowed = await mailverifyAsync([...args, ...named, '--allow-private-addresses'], input);
    expect(allowed.code).toBe(0);
    expect(jsonLines(allowed.stdout).map((e) => e.status)).toEqual(['Success', 'MailboxDoesNotExist', 'ServerIsCatchAll']);
    expect(mailLab.transcript('strict').flat()).toContain('EHLO probe.example.org');
    mailLab.reset();
    const refused = await mailverifyAsync([...args, ...named], input);
    expect(jsonLines(refused.stdout).map((e) => e.status)).toEqual(Array(3).fill('DomainIsMisconfigured'));
    expect(mailLab.stats().connections).toBe(0);
    expect(refused.stderr).toMatch(/\nhint: 2 mail exchangers skipped: they resolve only to non-global addresses \(e\.g\. \S+-lab\.com: \w+\.mx\.lab\.test → 127\.0\.0\.\d+\); .*\(3 here\)\. --allow-private-addresses allows them\.\n$/);
    expect(allowed.stderr).not.toMatch(/hint/);
  });
});
