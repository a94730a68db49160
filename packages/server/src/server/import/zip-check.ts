/**
 * An xlsx file is a zip archive (ECMA-376 Part 2). Before a spreadsheet reader inflates one, this check makes sure
 * it cannot inflate to more than a cap (a zip bomb): the central directory's sizes add up to at most the cap, every
 * entry really inflates to its declared size (yauzl stops an entry at the first byte past it), and the local records
 * that a streaming reader walks are exactly the entries of the central directory, back to back, with the same method
 * and sizes (no hidden record, no record that a streaming reader would read with other sizes). The XML parts the reader
 * parses are also bounded one by one: the shared string table (kept whole in the reader's memory) to its own cap,
 * every tag or text in them to `maxXmlTokenBytes`, and every shared string to `maxSharedStringBytes`: the most the
 * reader then builds as one string (a workbook holding one 200 MiB string is refused here, before any reader builds
 * that string).
 * Zip format: PKWARE APPNOTE.TXT 6.3.x, sections 4.3.6 (layout), 4.3.7 (local header), 4.3.9 (data descriptor).
 */
import { open } from 'node:fs/promises';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { ProblemError } from '../problems.js';

export interface ZipLimits {
  /** The most bytes all entries may inflate to. */
  readonly maxInflatedBytes: number;
  /** The most the shared string table (xl/sharedStrings.xml) may inflate to. */
  readonly maxSharedStringsBytes: number;
  /** The longest tag or text (comments, CDATA sections and processing instructions in it included) in a part the reader parses. */
  readonly maxXmlTokenBytes: number;
  /** The longest item of the shared string table (`<si>`, its runs of rich text joined into one string). */
  readonly maxSharedStringBytes: number;
}

/**
 * The parts the reader may parse as XML (spreadsheet-worker.ts: the workbook's relationships and sheet list, the
 * shared string table, a worksheet); it never reads the other entries.
 */
const PARSED_PARTS = [
  /^xl\/_rels\/workbook\.xml\.rels$/,
  /^xl\/workbook\.xml$/,
  /^xl\/sharedStrings\.xml$/,
  /xl\/worksheets\/sheet\d+[.]xml/,
  /xl\/worksheets\/_rels\/sheet\d+[.]xml.rels/,
];
const SHARED_STRINGS = 'xl/sharedStrings.xml';

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
        if (entry.fileName === SHARED_STRINGS && entry.uncompressedSize > limits.maxSharedStringsBytes) throw sharedStringsTooLarge(limits);
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
        const meter = meterOf(entry.fileName, limits);
        for await (const chunk of stream) {
          const overlong = meter?.feed(chunk as Buffer);
          if (overlong !== undefined) {
            stream.destroy();
            throw new ProblemError(
              413,
              overlong === 'an item'
                ? `inputFile: ${entry.fileName} holds a shared string longer than ${limits.maxSharedStringBytes} bytes (text and formatting), more than a cell of a workbook may.`
                : `inputFile: ${entry.fileName} holds a text or tag longer than ${limits.maxXmlTokenBytes} bytes, more than a cell of a workbook may.`,
            );
          }
        }
      } catch (error) {
        throw error instanceof ProblemError ? error : unreadable(`${entry.fileName}: ${(error as Error).message}`);
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

/**
 * The length of XML tokens as bytes stream by (XML 1.0, section 2): a tag from its `<` (attribute values hold no `<`,
 * 3.1) with the text that follows it up to the next tag; comments, CDATA sections and processing instructions (which
 * may hold `<`) are part of that text, since a parser that skips them joins the text around them. With an item
 * element (`si`, a shared string), also the bytes from each of its start tags to the next: its runs of rich text are
 * joined into one string too.
 */
class XmlTokenMeter {
  /** Bytes before the current chunk. */
  private offset = 0;
  /** Where the current token began, and the current item. */
  private tokenStart = 0;
  private itemStart = 0;
  /** Where the last `<` is; after it, `<` (1) or `<!` (2) while its kind is not known yet. */
  private lessThan = 0;
  private opening: 0 | 1 | 2 = 0;
  /** Bytes of the item's name matched after a `<`. */
  private nameAt = -1;
  /** Inside a comment, CDATA section, PI or declaration: the byte its end repeats before `>`, and how many times. */
  private closer: { byte: number; times: number } | undefined;
  private repeats = 0;

  constructor(
    private readonly maxToken: number,
    private readonly item?: { readonly name: string; readonly max: number },
  ) {}

  /** What the bytes so far make longer than its cap, if anything. */
  feed(chunk: Buffer): 'a text or tag' | 'an item' | undefined {
    let at = 0;
    while (at < chunk.length) {
      if (this.closer !== undefined) {
        const { byte, times } = this.closer;
        for (; at < chunk.length; at++) {
          const next = chunk[at]!;
          if (next === 0x3e && this.repeats >= times) {
            this.closer = undefined;
            at++;
            break;
          }
          this.repeats = next === byte ? this.repeats + 1 : 0;
        }
      } else if (this.opening !== 0) {
        const next = chunk[at++]!;
        // `<!--` ends at `-->`, `<![CDATA[` at `]]>`, `<?` at `?>`, another `<!` at `>`; any other `<` opens a tag.
        if (this.opening === 1 && next === 0x21) this.opening = 2;
        else if (this.opening === 1 && next === 0x3f) this.skip(0x3f, 1);
        else if (this.opening === 2) this.skip(next === 0x2d ? 0x2d : next === 0x5b ? 0x5d : 0x3e, next === 0x2d || next === 0x5b ? 2 : 0);
        else {
          this.opening = 0;
          this.tokenStart = this.lessThan;
          this.nameAt = this.item !== undefined && next === this.item.name.charCodeAt(0) ? 1 : -1;
        }
      } else if (this.nameAt > 0) {
        const next = chunk[at++]!;
        const name = this.item!.name;
        if (this.nameAt < name.length) {
          this.nameAt = next === name.charCodeAt(this.nameAt) ? this.nameAt + 1 : -1;
        } else {
          // The name ends at `>`, `/` or white space (XML 1.0, 3.1): `<si>`, not `<sik>`.
          if (next === 0x3e || next === 0x2f || next === 0x20 || next === 0x09 || next === 0x0a || next === 0x0d) this.itemStart = this.lessThan;
          this.nameAt = -1;
        }
      } else {
        // Tags and text, the bulk of the bytes: a plain loop (an indexOf per tag costs more than it saves).
        for (; at < chunk.length; at++) {
          if (chunk[at] !== 0x3c) continue;
          const position = this.offset + at;
          if (position - this.tokenStart > this.maxToken) return 'a text or tag';
          const next = at + 1 < chunk.length ? chunk[at + 1]! : -1;
          if (next === -1 || next === 0x21 || next === 0x3f || (this.item !== undefined && next === this.item.name.charCodeAt(0))) {
            // Its kind is in the bytes to come: byte by byte.
            this.lessThan = position;
            this.opening = 1;
            at++;
            break;
          }
          this.tokenStart = position;
          at++;
        }
      }
      const position = this.offset + at;
      if (position - this.tokenStart > this.maxToken) return 'a text or tag';
      if (this.item !== undefined && position - this.itemStart > this.item.max) return 'an item';
    }
    this.offset += chunk.length;
    return undefined;
  }

  private skip(byte: number, times: number): void {
    this.opening = 0;
    this.closer = { byte, times };
    this.repeats = 0;
  }
}

/** The meter of an entry the reader parses as XML; none for the others. */
function meterOf(name: string, limits: ZipLimits): XmlTokenMeter | undefined {
  if (!PARSED_PARTS.some((part) => part.test(name))) return undefined;
  return new XmlTokenMeter(limits.maxXmlTokenBytes, name === SHARED_STRINGS ? { name: 'si', max: limits.maxSharedStringBytes } : undefined);
}

function sharedStringsTooLarge(limits: ZipLimits): ProblemError {
  return new ProblemError(413, `inputFile: the workbook's shared string table (${SHARED_STRINGS}) inflates to more than ${limits.maxSharedStringsBytes} bytes.`);
}

function tooLarge(limits: ZipLimits): ProblemError {
  return new ProblemError(413, `inputFile: the workbook inflates to more than ${limits.maxInflatedBytes} bytes.`);
}
