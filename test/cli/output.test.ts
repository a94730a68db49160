// The CLI's output formatting and batching (packages/mailverify/src/cli/output.ts), on real streams.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ENTRY_FIELDS, type Entry } from '../../packages/mailverify/src/engine/entry.js';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { csvText } from '../../packages/mailverify/src/cli/csv.js';
import { BatchedWriter, csvRecord, jsonLine } from '../../packages/mailverify/src/cli/output.js';

const ordered = (entry: Entry): Entry => {
  const out: Record<string, unknown> = {};
  for (const field of ENTRY_FIELDS) if (entry[field] !== undefined) out[field] = entry[field];
  return out as unknown as Entry;
};

const entries: Entry[] = [
  {
    index: 0,
    inputData: 'a@b.org',
    classification: 'Deliverable',
    status: 'Success',
    emailAddress: 'a@b.org',
    emailAddressLocalPart: 'a',
    emailAddressDomainPart: 'b.org',
    asciiEmailAddressDomainPart: 'b.org',
    hasInternationalMailboxName: false,
    hasInternationalDomainName: false,
    isDisposableEmailAddress: false,
    isRoleAccount: true,
    isFreeEmailAddress: false,
    completedOn: '2026-01-01T00:00:00.000Z',
  },
  {
    index: 12345,
    inputData: '"q\\"uote\\\\"@Bücher.de\t\u0000\u001f\ud800x\udfff\u2028',
    classification: 'Undeliverable',
    status: 'InvalidCharacterInSequence',
    syntaxFailureIndex: 27,
    completedOn: '2026-01-01T00:00:00.000Z',
  },
  {
    index: 2,
    inputData: 'jo@gmial.com',
    classification: 'Deliverable',
    status: 'Success',
    suggestions: ['jo@gmail.com', 'jo@"x".com'],
    custom: 'row "7"',
    duplicateOf: 1,
    completedOn: '2026-01-01T00:00:00.000Z',
  },
  {
    // Every field but the suggestions, each in place in the service order.
    index: 3,
    inputData: 'Zoë <z@x.de>',
    classification: 'Undeliverable',
    status: 'Duplicate',
    emailAddress: 'z@x.de',
    emailAddressLocalPart: 'z',
    emailAddressDomainPart: 'x.de',
    asciiEmailAddressDomainPart: 'x.de',
    hasInternationalMailboxName: true,
    hasInternationalDomainName: false,
    isDisposableEmailAddress: true,
    isRoleAccount: false,
    isFreeEmailAddress: true,
    syntaxFailureIndex: 0,
    custom: 'line\nbreak',
    duplicateOf: 0,
    completedOn: '2026-01-01T00:00:00.000Z',
  },
];

describe('jsonLine', () => {
  it('gives the same text as JSON.stringify of the ordered entry, escapes included', () => {
    for (const entry of entries) {
      expect(jsonLine(entry)).toBe(JSON.stringify(ordered(entry)));
      expect(JSON.parse(jsonLine(entry))).toEqual(ordered(entry));
    }
  });

  it('writes the fields in the service order whatever the order of the object', () => {
    const entry = entries[2]!;
    const reversed = Object.fromEntries(Object.entries(entry).reverse()) as unknown as Entry;
    expect(jsonLine(reversed)).toBe(JSON.stringify(ordered(entry)));
  });
});

describe('BatchedWriter.addJsonLine', () => {
  it('writes the bytes of jsonLine and a line break, escapes and non-ASCII included', async () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const writer = new BatchedWriter(stream);
    const many = Array.from({ length: 3000 }, (_, i) => entries[i % entries.length]!);
    for (const entry of many) await writer.addJsonLine(entry);
    await writer.end();
    expect(Buffer.concat(chunks).toString('utf8')).toBe(many.map((entry) => JSON.stringify(ordered(entry)) + '\n').join(''));
  });
});

describe('CSV output', () => {
  it('is one field per ENTRY_FIELDS column: absent ones empty, lists joined by spaces, booleans as words', () => {
    const expected: Record<string, string> = {
      index: '2',
      inputData: 'jo@gmial.com',
      classification: 'Deliverable',
      status: 'Success',
      suggestions: 'jo@gmail.com jo@"x".com',
      custom: 'row "7"',
      duplicateOf: '1',
      completedOn: '2026-01-01T00:00:00.000Z',
    };
    expect(csvRecord(entries[2]!)).toEqual(ENTRY_FIELDS.map((f) => expected[f] ?? ''));
    expect(csvRecord(entries[0]!)[ENTRY_FIELDS.indexOf('isRoleAccount')]).toBe('true');
    expect(csvRecord(entries[0]!)[ENTRY_FIELDS.indexOf('isFreeEmailAddress')]).toBe('false');
  });

  it('reads back as the same fields with csv-parse: commas, quotes and line breaks quoted, edge spaces kept', () => {
    const tricky = ['plain', 'a,b', 'say "hi"', ' edge ', 'edge\t', 'line\nbreak', 'lone\rcr', 'cr\r\nlf', '', '"', 'Zoë, "Ünï"'];
    const text = csvText([tricky, ['x', 'y']]);
    expect(text).toBe('plain,"a,b","say ""hi""", edge ,edge\t,"line\nbreak","lone\rcr","cr\r\nlf",,"""","Zoë, ""Ünï"""\nx,y\n');
    expect(parse(text, { relax_column_count: true })).toEqual([tricky, ['x', 'y']]);
    // The quoting of csv-stringify's defaults, which wrote this output before.
    expect(text).toBe(stringify([tricky, ['x', 'y']]));
  });

  it('writes TSV with tabs, quoting the fields that hold a tab, a quote or a line break, and not those with a comma', () => {
    const tricky = ['a,b', 'tab\there', 'say "hi"', 'line\nbreak', ' edge '];
    const text = csvText([tricky], '\t');
    expect(text).toBe('a,b\t"tab\there"\t"say ""hi"""\t"line\nbreak"\t edge \n');
    expect(parse(text, { delimiter: '\t' })).toEqual([tricky]);
    expect(text).toBe(stringify([tricky], { delimiter: '\t' }));
  });

  it('writes the entries through BatchedWriter in order, in batches, readable by csv-parse', async () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const writer = new BatchedWriter(stream);
    const many = Array.from({ length: 1300 }, (_, i) => ({ ...entries[i % entries.length]!, index: i }));
    for (const entry of many) await writer.addCsvRecord(entry);
    await writer.end();
    const records = parse(Buffer.concat(chunks).toString('utf8')) as string[][];
    // UTF-8 output: a lone surrogate (in entries[1]) becomes U+FFFD.
    const asUtf8 = (text: string): string => Buffer.from(text, 'utf8').toString('utf8');
    expect(records).toEqual(many.map((entry) => csvRecord(entry).map(asUtf8)));
    expect(records.map((r) => r[0])).toEqual(many.map((e) => String(e.index)));
  });
});

describe('BatchedWriter', () => {
  it('writes every line once, in order, in few writes, waiting for the stream to drain', async () => {
    const stream = new PassThrough({ highWaterMark: 1024 });
    const chunks: Buffer[] = [];
    let writes = 0;
    const write = stream.write.bind(stream);
    stream.write = ((chunk: Buffer) => {
      writes++;
      return write(chunk);
    }) as typeof stream.write;
    const writer = new BatchedWriter(stream);
    const lines = Array.from({ length: 50_000 }, (_, i) => `line ${i} ${'é'.repeat(i % 7)} ${i % 1000 === 0 ? '\ud83d\ude00'.repeat(400_000) : ''}\n`);
    // The reader starts late, so the writer must wait for 'drain' rather than pile up batches.
    let waited = 0;
    setTimeout(() => stream.on('data', (chunk: Buffer) => chunks.push(chunk)), 20);
    for (const line of lines) {
      const wait = writer.add(line);
      if (wait !== undefined) {
        waited++;
        await wait;
      }
    }
    await writer.end();
    stream.end();
    await new Promise((resolve) => stream.on('end', resolve));
    expect(Buffer.concat(chunks).toString('utf8')).toBe(lines.join(''));
    expect(waited).toBeGreaterThan(0);
    expect(writes).toBeLessThan(lines.length / 100);
  });

  it('writes a lone line once the process waits for I/O, before the end', async () => {
    const stream = new PassThrough();
    const writer = new BatchedWriter(stream);
    writer.add('first\n');
    const chunk = await new Promise<Buffer>((resolve) => stream.once('data', resolve));
    expect(chunk.toString()).toBe('first\n');
    await writer.end();
  });
});
