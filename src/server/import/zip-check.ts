/**
 * An xlsx file is a zip archive (ECMA-376 Part 2). Before a spreadsheet reader inflates one, this check makes sure
 * it cannot inflate to more than a cap (a zip bomb): the central directory's sizes add up to at most the cap, every
 * entry really inflates to its declared size (yauzl stops an entry at the first byte past it), and the local records
 * that a streaming reader walks are exactly the entries of the central directory, back to back, with the same method
 * and sizes (no hidden record, no record that a streaming reader would read with other sizes).
 * Zip format: PKWARE APPNOTE.TXT 6.3.x, sections 4.3.6 (layout), 4.3.7 (local header), 4.3.9 (data descriptor).
 */
import { open } from 'node:fs/promises';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { ProblemError } from '../problems.js';

export interface ZipLimits {
  /** The most bytes all entries may inflate to. */
  readonly maxInflatedBytes: number;
}

/** Entries of a workbook: a few dozen in practice; thousands only in a crafted file. */
const MAX_ENTRIES = 10_000;
const DATA_DESCRIPTOR_SIGNATURE = 0x08074b50; // APPNOTE 4.3.9.3
const CENTRAL_HEADER_SIGNATURE = 0x02014b50; // APPNOTE 4.3.12
const HAS_DATA_DESCRIPTOR = 0x08; // general purpose bit 3, APPNOTE 4.4.4
const STORED = 0;
const DEFLATED = 8;

const unreadable = (detail: string): ProblemError =>
  new ProblemError(415, `inputFile: not a readable xlsx workbook (${detail}).`);

/** Resolves when the archive is safe to stream; else a 415 (not a well-formed archive) or 413 (inflates too much). */
export async function checkXlsxArchive(path: string, limits: ZipLimits): Promise<void> {
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false });
  } catch (error) {
    throw unreadable((error as Error).message);
  }
  const file = await open(path, 'r');
  try {
    const entries: Entry[] = [];
    let declared = 0;
    try {
      for await (const entry of zip.eachEntry()) {
        if (entries.length >= MAX_ENTRIES) throw unreadable(`more than ${MAX_ENTRIES} entries`);
        if (entry.isEncrypted()) throw unreadable('an entry is encrypted');
        if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
          throw unreadable(`compression method ${entry.compressionMethod}`);
        }
        declared += entry.uncompressedSize;
        if (declared > limits.maxInflatedBytes) throw tooLarge(limits);
        entries.push(entry);
      }
    } catch (error) {
      throw error instanceof ProblemError ? error : unreadable((error as Error).message);
    }
    await checkLayout(zip, file, entries);
    // Every entry inflated, counted against its declared size by yauzl: the total is at most `declared`.
    for (const entry of entries) {
      try {
        const stream = await zip.openReadStreamPromise(entry);
        for await (const chunk of stream) void chunk;
      } catch (error) {
        throw unreadable(`${entry.fileName}: ${(error as Error).message}`);
      }
    }
  } finally {
    zip.close();
    await file.close();
  }
}

/** The local records tile the archive from offset 0 up to the central directory, each as its directory entry says. */
async function checkLayout(zip: ZipFile, file: import('node:fs/promises').FileHandle, entries: readonly Entry[]): Promise<void> {
  const word = Buffer.alloc(4);
  const readWord = async (at: number): Promise<number> => {
    const { bytesRead } = await file.read(word, 0, 4, at);
    return bytesRead === 4 ? word.readUInt32LE(0) : -1;
  };
  let expected = 0;
  for (const entry of [...entries].sort((a, b) => a.relativeOffsetOfLocalHeader - b.relativeOffsetOfLocalHeader)) {
    if (entry.relativeOffsetOfLocalHeader !== expected) throw unreadable('the archive has data outside its entries');
    let local;
    try {
      local = await zip.readLocalFileHeaderPromise(entry);
    } catch (error) {
      throw unreadable((error as Error).message);
    }
    const descriptor = (local.generalPurposeBitFlag & HAS_DATA_DESCRIPTOR) !== 0;
    const sizesInHeader = !descriptor || local.compressedSize !== 0;
    if (
      local.compressionMethod !== entry.compressionMethod ||
      descriptor !== ((entry.generalPurposeBitFlag & HAS_DATA_DESCRIPTOR) !== 0) ||
      (sizesInHeader && (local.compressedSize !== entry.compressedSize || local.uncompressedSize !== entry.uncompressedSize))
    ) {
      throw unreadable(`${entry.fileName}: its local header differs from the central directory`);
    }
    const dataEnd = local.fileDataStart + entry.compressedSize;
    // A data descriptor: CRC-32 and both sizes, 32-bit (ZIP64 is not needed under the caps), with or without its signature.
    expected = descriptor ? dataEnd + ((await readWord(dataEnd)) === DATA_DESCRIPTOR_SIGNATURE ? 16 : 12) : dataEnd;
  }
  if ((await readWord(expected)) !== CENTRAL_HEADER_SIGNATURE) throw unreadable('the archive has data outside its entries');
}

function tooLarge(limits: ZipLimits): ProblemError {
  return new ProblemError(413, `inputFile: the workbook inflates to more than ${limits.maxInflatedBytes} bytes.`);
}
