// The offline workers' input: lines cut from bytes on the main thread (lineBlocks) and decoded in a worker
// (linesOfBlock) give the lines of the decoded text, whatever the sizes of the reads.
import { describe, expect, it } from 'vitest';
import { MAX_LINE, lineBlocks, linesOfBlock } from '../../packages/mailverify/src/cli/offline/line-blocks.js';

/** The lines as the main thread's reader gives them: the text decoded at once, BOM dropped, CR dropped, cut at MAX_LINE. */
function expectedLines(bytes: Buffer): string[] {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line) => (line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** The bytes read in pieces of the given sizes, in turn. */
async function* reads(bytes: Buffer, sizes: number[]): AsyncGenerator<Buffer> {
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const size = sizes[k % sizes.length]!;
    yield bytes.subarray(at, at + size);
    at += size;
  }
}

async function linesThroughBlocks(bytes: Buffer, sizes: number[]): Promise<{ lines: string[]; counted: number; largest: number }> {
  const lines: string[] = [];
  let counted = 0;
  let largest = 0;
  for await (const block of lineBlocks(reads(bytes, sizes))) {
    const decoded = linesOfBlock(block.bytes);
    expect(decoded).toHaveLength(block.lines);
    counted += block.lines;
    largest = Math.max(largest, block.bytes.length);
    lines.push(...decoded);
  }
  return { lines, counted, largest };
}

const mixed = [
  'john@example.org',
  'josé@bücher.de',
  '用户@例子.广告',
  '😀@example.com',
  '',
  'crlf@example.org\r',
  '\r',
  'x\ufeffy@example.org',
  ' spaced @example.org',
];

describe('lines as bytes for the offline workers', () => {
  it.each([[[1]], [[2, 3, 5]], [[7, 64 * 1024]], [[64 * 1024]], [[1 << 20]]])(
    'gives the lines of the text read in pieces of %j bytes',
    async (sizes) => {
      const text = '\ufeff' + Array.from({ length: 400 }, (_, i) => mixed[i % mixed.length]).join('\n') + '\nlast line without a break';
      const bytes = Buffer.from(text, 'utf8');
      const { lines, counted } = await linesThroughBlocks(bytes, sizes);
      expect(lines).toEqual(expectedLines(bytes));
      expect(counted).toBe(401);
    },
  );

  it('cuts lines longer than MAX_LINE characters as the text reader does, multi-byte ones too', async () => {
    const long = [
      'a'.repeat(MAX_LINE + 1),
      'é'.repeat(MAX_LINE) + 'z', // 2 bytes each
      '€'.repeat(3 * MAX_LINE), // 3 bytes each: far past the bytes kept of a line
      '😀'.repeat(MAX_LINE), // a surrogate pair each: cut inside one
      'b'.repeat(MAX_LINE) + '\r',
      'c'.repeat(MAX_LINE - 1) + '\r',
    ];
    const bytes = Buffer.from(long.join('\n') + '\nafter@example.org\n' + '€'.repeat(MAX_LINE * 2), 'utf8');
    for (const sizes of [[1000], [64 * 1024], [bytes.length]]) {
      const { lines } = await linesThroughBlocks(bytes, sizes);
      expect(lines).toEqual(expectedLines(bytes));
      expect(lines.map((line) => line.length)).toEqual([MAX_LINE, MAX_LINE, MAX_LINE, MAX_LINE, MAX_LINE, MAX_LINE - 1, 17, MAX_LINE]);
    }
  });

  it('decodes bytes that are not UTF-8 as a whole read does', async () => {
    const bytes = Buffer.concat([
      Buffer.from('ok@example.org\n'),
      Buffer.from([0xe2, 0x82, 0x0a]), // a sequence cut by the line break
      Buffer.from([0xff, 0x61, 0x40, 0x62, 0x0a, 0xc3]), // a byte never in UTF-8; the input ends inside a sequence
    ]);
    for (const sizes of [[1], [2], [4], [64]]) expect((await linesThroughBlocks(bytes, sizes)).lines).toEqual(expectedLines(bytes));
  });

  it('drops a byte order mark only at the start, also when it arrives in pieces', async () => {
    const bytes = Buffer.from('\ufeffa@example.org\n\ufeffb@example.org\n', 'utf8');
    expect((await linesThroughBlocks(bytes, [1])).lines).toEqual(['a@example.org', '\ufeffb@example.org']);
    expect((await linesThroughBlocks(Buffer.from('\ufeff', 'utf8'), [1])).lines).toEqual([]);
    expect((await linesThroughBlocks(Buffer.from([0xef, 0xbb]), [1])).lines).toEqual(['\ufffd']);
    expect((await linesThroughBlocks(Buffer.from(''), [1])).lines).toEqual([]);
  });

  it('keeps blocks small however the input is read', async () => {
    const bytes = Buffer.from(Array.from({ length: 50_000 }, (_, i) => `user${i}@example.org`).join('\n'), 'utf8');
    const { lines, largest } = await linesThroughBlocks(bytes, [4 << 20]);
    expect(lines).toHaveLength(50_000);
    // 16 KiB of a read, and the line begun in the one before.
    expect(largest).toBeLessThanOrEqual(16 * 1024 + 'user49999@example.org\n'.length);
  });
});
