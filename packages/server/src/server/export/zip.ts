/**
 * A zip file (PKWARE APPNOTE.TXT 6.3) written as a stream: small parts known in advance, deflated whole, then one
 * part streamed through deflate as it comes, its CRC-32 and sizes in a data descriptor after it (APPNOTE 4.3.9).
 * Zip64 records (APPNOTE 4.3.14, 4.5.3) are written only where a size or an offset needs them, as yazl does.
 *
 * The project's own rather than yazl, which it replaced for the xlsx export: yazl computes the CRC-32 in JavaScript
 * (buffer-crc32) and deflates at zlib's default level; here the CRC is zlib's (`zlib.crc32`, Node >= 20.15) and the
 * level is the caller's.
 */
import { Readable, pipeline } from 'node:stream';
import { createDeflateRaw, crc32, deflateRawSync } from 'node:zlib';

/** A part known in advance. */
export interface ZipPart {
  readonly name: string;
  readonly data: Buffer;
}

const LOCAL_HEADER = 0x04034b50;
const DATA_DESCRIPTOR = 0x08074b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const ZIP64_END_OF_CENTRAL_DIRECTORY = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;
const DEFLATE = 8;
/** General purpose flag bit 3: CRC-32 and sizes follow the data (APPNOTE 4.4.4). */
const SIZES_AFTER = 1 << 3;
const VERSION = 20;
const VERSION_ZIP64 = 45;
/** Past this, a size or an offset is written in a Zip64 record (0xFFFFFFFF itself means "see Zip64"). */
const MAX_32 = 0xfffffffe;

interface Written {
  readonly name: Buffer;
  readonly flags: number;
  readonly crc: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly offset: number;
}

/**
 * The zip file of `parts` followed by a part named `name` whose bytes are `chunks`, deflated at `level`. An error
 * of `chunks` destroys the returned stream with it; destroying the stream stops reading `chunks`. `zip64Above`
 * lowers the size or offset past which Zip64 records are written, for tests.
 */
export function zipStream(
  parts: readonly ZipPart[],
  name: string,
  chunks: AsyncIterable<Buffer>,
  level: number,
  { zip64Above = MAX_32 }: { readonly zip64Above?: number } = {},
): Readable {
  return Readable.from(zipChunks(parts, name, chunks, level, zip64Above), { objectMode: false, highWaterMark: 1 });
}

async function* zipChunks(parts: readonly ZipPart[], name: string, chunks: AsyncIterable<Buffer>, level: number, zip64Above: number): AsyncGenerator<Buffer> {
  const time = dosTime(new Date());
  const written: Written[] = [];
  let offset = 0;
  for (const part of parts) {
    const compressed = deflateRawSync(part.data, { level });
    const entry = { name: Buffer.from(part.name), flags: 0, crc: crc32(part.data), compressedSize: compressed.length, size: part.data.length, offset };
    const header = localHeader(entry, time);
    written.push(entry);
    offset += header.length + compressed.length;
    yield header;
    yield compressed;
  }

  let crc = 0;
  let size = 0;
  let compressedSize = 0;
  async function* measured(): AsyncGenerator<Buffer> {
    for await (const chunk of chunks) {
      crc = crc32(chunk, crc);
      size += chunk.length;
      yield chunk;
    }
  }
  const streamed = { name: Buffer.from(name), flags: SIZES_AFTER, crc: 0, compressedSize: 0, size: 0, offset };
  const header = localHeader(streamed, time);
  offset += header.length;
  yield header;
  const deflate = createDeflateRaw({ level, chunkSize: 64 * 1024 });
  // An error of either side reaches the loop below through `deflate`; leaving the loop destroys both.
  pipeline(Readable.from(measured(), { objectMode: false, highWaterMark: 1 }), deflate, () => {});
  for await (const compressed of deflate as AsyncIterable<Buffer>) {
    compressedSize += compressed.length;
    yield compressed;
  }
  const entry = { ...streamed, crc, size, compressedSize };
  written.push(entry);
  const descriptor = dataDescriptor(entry, zip64Above);
  offset += compressedSize + descriptor.length;
  yield descriptor;

  const directory = Buffer.concat(written.map((each) => centralHeader(each, time, zip64Above)));
  yield directory;
  yield endOfCentralDirectory(written.length, directory.length, offset, zip64Above);
}

/** APPNOTE 4.3.7. Sizes after the data are written as 0 here. */
function localHeader(entry: Written, time: { time: number; date: number }): Buffer {
  const header = Buffer.alloc(30);
  const known = (entry.flags & SIZES_AFTER) === 0;
  header.writeUInt32LE(LOCAL_HEADER, 0);
  header.writeUInt16LE(VERSION, 4);
  header.writeUInt16LE(entry.flags, 6);
  header.writeUInt16LE(DEFLATE, 8);
  header.writeUInt16LE(time.time, 10);
  header.writeUInt16LE(time.date, 12);
  header.writeUInt32LE(known ? entry.crc : 0, 14);
  header.writeUInt32LE(known ? entry.compressedSize : 0, 18);
  header.writeUInt32LE(known ? entry.size : 0, 22);
  header.writeUInt16LE(entry.name.length, 26);
  header.writeUInt16LE(0, 28);
  return Buffer.concat([header, entry.name]);
}

/** APPNOTE 4.3.9: with 8-byte sizes once a size is past 32 bits. */
function dataDescriptor(entry: Written, zip64Above: number): Buffer {
  const wide = entry.size > zip64Above || entry.compressedSize > zip64Above;
  const descriptor = Buffer.alloc(wide ? 24 : 16);
  descriptor.writeUInt32LE(DATA_DESCRIPTOR, 0);
  descriptor.writeUInt32LE(entry.crc, 4);
  if (wide) {
    descriptor.writeBigUInt64LE(BigInt(entry.compressedSize), 8);
    descriptor.writeBigUInt64LE(BigInt(entry.size), 16);
  } else {
    descriptor.writeUInt32LE(entry.compressedSize, 8);
    descriptor.writeUInt32LE(entry.size, 12);
  }
  return descriptor;
}

/** APPNOTE 4.3.12, with the Zip64 extended information extra field (4.5.3) where a size or the offset needs it. */
function centralHeader(entry: Written, time: { time: number; date: number }, zip64Above: number): Buffer {
  const wide = entry.size > zip64Above || entry.compressedSize > zip64Above || entry.offset > zip64Above;
  const header = Buffer.alloc(46);
  header.writeUInt32LE(CENTRAL_HEADER, 0);
  header.writeUInt16LE(wide ? VERSION_ZIP64 : VERSION, 4); // made by: MS-DOS (upper byte 0)
  header.writeUInt16LE(wide ? VERSION_ZIP64 : VERSION, 6);
  header.writeUInt16LE(entry.flags, 8);
  header.writeUInt16LE(DEFLATE, 10);
  header.writeUInt16LE(time.time, 12);
  header.writeUInt16LE(time.date, 14);
  header.writeUInt32LE(entry.crc, 16);
  header.writeUInt32LE(wide ? 0xffffffff : entry.compressedSize, 20);
  header.writeUInt32LE(wide ? 0xffffffff : entry.size, 24);
  header.writeUInt16LE(entry.name.length, 28);
  header.writeUInt16LE(wide ? 28 : 0, 30);
  // comment length, disk number, internal and external attributes: 0
  header.writeUInt32LE(wide ? 0xffffffff : entry.offset, 42);
  if (!wide) return Buffer.concat([header, entry.name]);
  const extra = Buffer.alloc(28);
  extra.writeUInt16LE(0x0001, 0);
  extra.writeUInt16LE(24, 2);
  extra.writeBigUInt64LE(BigInt(entry.size), 4);
  extra.writeBigUInt64LE(BigInt(entry.compressedSize), 12);
  extra.writeBigUInt64LE(BigInt(entry.offset), 20);
  return Buffer.concat([header, entry.name, extra]);
}

/** APPNOTE 4.3.16, after the Zip64 end record and its locator (4.3.14, 4.3.15) when the directory starts past 32 bits. */
function endOfCentralDirectory(entries: number, directorySize: number, directoryOffset: number, zip64Above: number): Buffer {
  const end = Buffer.alloc(22);
  const wide = directoryOffset > zip64Above || directorySize > zip64Above;
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(entries, 8);
  end.writeUInt16LE(entries, 10);
  end.writeUInt32LE(wide ? 0xffffffff : directorySize, 12);
  end.writeUInt32LE(wide ? 0xffffffff : directoryOffset, 16);
  if (!wide) return end;
  const record = Buffer.alloc(56);
  record.writeUInt32LE(ZIP64_END_OF_CENTRAL_DIRECTORY, 0);
  record.writeBigUInt64LE(44n, 4); // the size of the rest of this record
  record.writeUInt16LE(VERSION_ZIP64, 12);
  record.writeUInt16LE(VERSION_ZIP64, 14);
  record.writeBigUInt64LE(BigInt(entries), 24);
  record.writeBigUInt64LE(BigInt(entries), 32);
  record.writeBigUInt64LE(BigInt(directorySize), 40);
  record.writeBigUInt64LE(BigInt(directoryOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(ZIP64_LOCATOR, 0);
  locator.writeBigUInt64LE(BigInt(directoryOffset + directorySize), 8);
  locator.writeUInt32LE(1, 16); // total number of disks
  return Buffer.concat([record, locator, end]);
}

/** MS-DOS date and time (APPNOTE 4.4.6), in UTC, two-second steps. */
function dosTime(date: Date): { time: number; date: number } {
  return {
    time: (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | (date.getUTCSeconds() >> 1),
    date: ((Math.max(date.getUTCFullYear(), 1980) - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate(),
  };
}
