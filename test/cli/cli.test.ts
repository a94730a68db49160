// The `mailverify` command, run as a child process from the build (`npm test` builds dist/ first).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type LabDnsServer } from '../lab/dns-server.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { CsvRecordReader, csvField } from '../../src/cli/csv.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mailverify-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function mailverify(args: string[], stdin?: string) {
  const r = spawnSync(process.execPath, [cli, ...args], { input: stdin, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** For runs that need this process to keep answering (the lab DNS server lives here). */
function mailverifyAsync(args: string[], stdin: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args]);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

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
    const records = new CsvRecordReader(',').push(stdout).filter((r) => r.length > 1);
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

  it('prints its version', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(mailverify(['--version'])).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
  });

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
    expect(lab.queryCount('mailhost.com', 'MX')).toBe(1);
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
  });
});

describe('CSV reading and writing', () => {
  it('splits records across chunks, with quotes, doubled quotes and line breaks inside fields', () => {
    const reader = new CsvRecordReader(';');
    const records = [...reader.push('a;"b;""c"'), ...reader.push('""\r\n"x\ny";z\rlast'), ...reader.end()];
    expect(records).toEqual([['a', 'b;"c"'], ['x\ny', 'z'], ['last']]);
  });

  it('quotes only what needs quoting', () => {
    expect(['plain', 'a,b', 'say "hi"', ' edge', 'line\nbreak', undefined, 3, true].map((v) => csvField(v))).toEqual([
      'plain',
      '"a,b"',
      '"say ""hi"""',
      '" edge"',
      '"line\nbreak"',
      '',
      '3',
      'true',
    ]);
  });
});
