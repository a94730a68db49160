// The export's own CSV writer against csv-stringify, the library it replaced, with the options the export gave it:
// the same rows, byte for byte, for every kind of cell that quoting rules are about (quotes, separators, CR, LF, white
// space at an edge, formula prefixes, empty, Unicode) and for many random cells made of those characters.
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { stringify } from 'csv-stringify/sync';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { ENTRY_FIELDS, type Entry } from '../../packages/mailverify/src/engine/entry.js';
import { csvRecord, csvStream, csvText } from '../../packages/server/src/server/export/csv.js';
import { HEADER, cellsOf, type Cell } from '../../packages/server/src/server/export/rows.js';

/** What the export wrote before its own writer: csv-stringify with these options, every cell through csvText. */
function byCsvStringify(rows: readonly (readonly Cell[])[]): string {
  return stringify(
    rows.map((cells) => cells.map(csvText)),
    { record_delimiter: 'windows', quoted_match: /[\r\n]|^\s|\s$/ },
  );
}

const byOwnWriter = (rows: readonly (readonly Cell[])[]): string => rows.map(csvRecord).join('');

const TRICKY: Cell[] = [
  '',
  'plain@example.com',
  'comma, inside',
  ',',
  '"',
  '""',
  'say "hi"',
  '"quoted at both ends"',
  'line\nfeed',
  'carriage\rreturn',
  'crlf\r\nboth',
  'ends with CR\r',
  'ends with LF\n',
  '\nstarts with LF',
  ' leading space',
  'trailing space ',
  '  both  ',
  ' ',
  '\ttab at start',
  'tab at end\t',
  '\u00a0no-break space at start',
  'no-break space at end\u00a0',
  '\u2028line separator',
  '\ufeffbyte order mark',
  'ideographic space\u3000',
  'inner spaces stay unquoted',
  '=1+1',
  '+1',
  '-1',
  '@SUM(A1)',
  '\t=1+1',
  '\r=1+1',
  '=HYPERLINK("http://x","y")',
  "'=already quoted",
  'jörg@bücher.de',
  'ünïcødé ✓ 日本',
  '😀 emoji',
  'e\u0301 combining',
  'semi; colon',
  0,
  -5,
  0.5,
  1e21,
  true,
  false,
  undefined,
];

/** A seeded generator (mulberry32): the same random cells in every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the export CSV writer writes what csv-stringify wrote', () => {
  it('for each tricky cell alone, and all of them in one record', () => {
    const rows = [...TRICKY.map((cell) => [cell]), TRICKY, [...HEADER]];
    for (const row of rows) expect(byOwnWriter([row]), JSON.stringify(row)).toBe(byCsvStringify([row]));
  });

  it('for 20,000 random cells of quotes, separators, line breaks, spaces, formula starts and Unicode', () => {
    const alphabet = ['"', ',', '\r', '\n', ' ', '\t', '\u00a0', '\u2028', '=', '+', '-', '@', "'", 'a', 'Z', '7', ';', 'ü', '日', '😀', '\u0000'];
    const next = random(20_261_126);
    const rows: Cell[][] = [];
    for (let r = 0; r < 1000; r++) {
      const row: Cell[] = [];
      for (let c = 0; c < 20; c++) {
        let cell = '';
        const length = Math.floor(next() * 6);
        for (let i = 0; i < length; i++) cell += alphabet[Math.floor(next() * alphabet.length)];
        row.push(cell);
      }
      rows.push(row);
    }
    expect(byOwnWriter(rows)).toBe(byCsvStringify(rows));
    // And a reader gets the cells back (formula starts with their quote).
    expect(parse(byOwnWriter(rows), { record_delimiter: '\r\n', relax_column_count: false })).toEqual(rows.map((row) => row.map(csvText)));
  });

  it('as a stream of pages: the header, then every entry, the same bytes', async () => {
    const entry = (index: number, inputData: string, custom?: string): Entry =>
      ({ index, inputData, classification: 'Undeliverable', status: 'DomainDoesNotExist', ...(custom !== undefined && { custom }), completedOn: '2026-11-26T00:00:00.000Z' }) as Entry;
    const pages: Entry[][] = [
      [entry(0, 'a@b.com', 'x, "y"'), entry(1, ' =1+1 ', 'line\r\nbreak')],
      [entry(2, 'jörg@bücher.de'), { ...entry(3, 'c@d.com'), suggestions: ['c@gmail.com', 'c@hotmail.com'], isRoleAccount: true } as Entry],
    ];
    async function* source(): AsyncGenerator<Entry[]> {
      yield* pages;
    }
    const written = await text(csvStream(source()));
    expect(written).toBe(byCsvStringify([[...ENTRY_FIELDS], ...pages.flat().map(cellsOf)]));
    expect(await text(csvStream(Readable.from([])))).toBe(`${ENTRY_FIELDS.join(',')}\r\n`);
  });
});
