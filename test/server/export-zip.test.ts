// The export's streaming zip writer, read back by an independent reader (yauzl, which checks every entry's sizes):
// the names, bytes and CRC-32s of the parts, the data descriptor after the streamed part, Zip64 records where they are
// asked for, and a failure or a stop of the streamed part's source passed on.
import { randomBytes } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import { describe, expect, it } from 'vitest';
import { zipStream } from '../../packages/server/src/server/export/zip.js';

interface ReadEntry {
  name: string;
  crc32: number;
  compressedSize: number;
  offset: number;
  data: Buffer;
}

/** Every entry of the zip file, with its bytes, as yauzl reads them from the central directory. */
function readZip(file: Buffer): Promise<ReadEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(file, { lazyEntries: true }, (error, zip) => {
      if (error !== null) return reject(error);
      const entries: ReadEntry[] = [];
      zip.on('error', reject);
      zip.on('end', () => resolve(entries));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (openError, stream) => {
          if (openError !== null) return reject(openError);
          buffer(stream).then((data) => {
            entries.push({ name: entry.fileName, crc32: entry.crc32, compressedSize: entry.compressedSize, offset: entry.relativeOffsetOfLocalHeader, data });
            zip.readEntry();
          }, reject);
        });
      });
      zip.readEntry();
    });
  });
}

const PARTS = [
  { name: '[Content_Types].xml', data: Buffer.from('<Types/>') },
  { name: 'xl/workbook.xml', data: Buffer.from('<workbook>ü</workbook>') },
];

/** Chunks of text that repeats and of random bytes that does not compress: about 3 MB in all. */
function sheetChunks(): Buffer[] {
  return Array.from({ length: 12 }, (_, i) => (i % 3 === 2 ? randomBytes(100_000) : Buffer.from(`<row r="${i}"><c><v>${i}</v></c></row>`.repeat(8000))));
}

async function* from(chunks: readonly Buffer[]): AsyncGenerator<Buffer> {
  yield* chunks;
}

/** The data descriptor after the streamed entry's data: its CRC-32 and sizes, 4 or 8 bytes each. */
function descriptorAfter(file: Buffer, entry: ReadEntry, wide: boolean): { crc: number; compressed: number; size: number } {
  const nameLength = file.readUInt16LE(entry.offset + 26);
  const at = entry.offset + 30 + nameLength + entry.compressedSize;
  expect(file.readUInt32LE(at)).toBe(0x08074b50);
  return wide
    ? { crc: file.readUInt32LE(at + 4), compressed: Number(file.readBigUInt64LE(at + 8)), size: Number(file.readBigUInt64LE(at + 16)) }
    : { crc: file.readUInt32LE(at + 4), compressed: file.readUInt32LE(at + 8), size: file.readUInt32LE(at + 12) };
}

describe('the export zip writer', () => {
  it('writes the parts and the streamed part with their bytes, CRC-32s and sizes, and a data descriptor after the streamed one', async () => {
    const chunks = sheetChunks();
    const sheet = Buffer.concat(chunks);
    const file = await buffer(zipStream(PARTS, 'xl/worksheets/sheet1.xml', from(chunks), 1));
    const entries = await readZip(file);
    expect(entries.map((e) => e.name)).toEqual(['[Content_Types].xml', 'xl/workbook.xml', 'xl/worksheets/sheet1.xml']);
    expect(entries.map((e, i) => e.data.equals([PARTS[0]!.data, PARTS[1]!.data, sheet][i]!))).toEqual([true, true, true]);
    expect(entries.map((e) => e.crc32)).toEqual([crc32(PARTS[0]!.data), crc32(PARTS[1]!.data), crc32(sheet)]);
    expect(descriptorAfter(file, entries[2]!, false)).toEqual({ crc: crc32(sheet), compressed: entries[2]!.compressedSize, size: sheet.length });
    // No Zip64 end record where nothing needs one.
    expect(file.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBe(false);
  });

  it('writes Zip64 records (central directory, data descriptor, end of central directory) where sizes or offsets need them', async () => {
    const chunks = sheetChunks();
    const sheet = Buffer.concat(chunks);
    const file = await buffer(zipStream(PARTS, 'xl/worksheets/sheet1.xml', from(chunks), 1, { zip64Above: 0 }));
    const entries = await readZip(file);
    expect(entries.map((e, i) => e.data.equals([PARTS[0]!.data, PARTS[1]!.data, sheet][i]!))).toEqual([true, true, true]);
    expect(descriptorAfter(file, entries[2]!, true)).toEqual({ crc: crc32(sheet), compressed: entries[2]!.compressedSize, size: sheet.length });
    // The end of central directory points to Zip64's, through the locator just before it.
    const end = file.length - 22;
    expect(file.readUInt32LE(end)).toBe(0x06054b50);
    expect(file.readUInt32LE(end + 16)).toBe(0xffffffff);
    expect(file.readUInt32LE(end - 20)).toBe(0x07064b50);
    expect(file.readUInt32LE(Number(file.readBigUInt64LE(end - 20 + 8)))).toBe(0x06064b50);
  });

  it('ends the file with the error of the streamed part\'s source, and stops reading the source once destroyed', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('<row/>');
      throw new Error('the store failed');
    }
    await expect(buffer(zipStream(PARTS, 'sheet.xml', failing(), 1))).rejects.toThrow('the store failed');

    let read = 0;
    let finished = false;
    async function* endless(): AsyncGenerator<Buffer> {
      try {
        for (;;) {
          read++;
          yield randomBytes(64 * 1024);
        }
      } finally {
        finished = true;
      }
    }
    const stream = zipStream(PARTS, 'sheet.xml', endless(), 1);
    for await (const _chunk of stream) {
      if (read > 10) break; // destroys the stream
    }
    // The source is closed once the stream's destruction has reached it (the test's time limit bounds the wait).
    while (!finished) await new Promise((resolve) => setTimeout(resolve, 10));
    const readThen = read;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(read).toBe(readThen);
  });
});
