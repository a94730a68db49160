/**
 * A small writer of Excel 97-2003 workbooks (.xls): BIFF8 records ([MS-XLS]) in the `Workbook` stream of a compound
 * file ([MS-CFB], written by the `cfb` library). One sheet of typed cells: strings through the shared-string table
 * (SST + LABELSST, as Excel writes them; LABEL is limited to 255 characters), integers as RK, other numbers as NUMBER,
 * booleans as BOOLERR; an absent value is no record at all (an empty cell). No styles beyond the default ones.
 *
 * The whole file is built in memory: a sheet holds at most 65,536 rows, a few tens of megabytes at most.
 * Record layouts are those of [MS-XLS] section 2.4; the section of each is cited where it is written.
 */
import CFB from 'cfb';

/** Rows of a BIFF8 sheet ([MS-XLS] 2.4.90 Dimensions: rwMac at most 0x10000), the header row included. */
export const XLS_MAX_ROWS = 65_536;
/** Columns of a BIFF8 sheet (colMac at most 0x100). */
const MAX_COLUMNS = 256;
/** Characters of one cell (Excel's limit); longer text is cut. */
const MAX_CELL_CHARS = 32_767;
/** The most data one record carries; more goes on in CONTINUE records ([MS-XLS] 2.1.4). */
const MAX_RECORD_DATA = 8224;
/** The cell XF: index 15, after the 15 style XFs, as Excel numbers them ([MS-XLS] 2.4.353). */
const CELL_XF = 15;

const RECORD = {
  EOF: 0x000a,
  CALCCOUNT: 0x000c,
  CALCMODE: 0x000d,
  PRECISION: 0x000e,
  REFMODE: 0x000f,
  DELTA: 0x0010,
  ITERATION: 0x0011,
  PROTECT: 0x0012,
  PASSWORD: 0x0013,
  WINDOWPROTECT: 0x0019,
  DATEMODE: 0x0022,
  FONT: 0x0031,
  CONTINUE: 0x003c,
  WINDOW1: 0x003d,
  BACKUP: 0x0040,
  CODEPAGE: 0x0042,
  WRITEACCESS: 0x005c,
  SAVERECALC: 0x005f,
  PRINTHEADERS: 0x002a,
  PRINTGRIDLINES: 0x002b,
  GUTS: 0x0080,
  WSBOOL: 0x0081,
  GRIDSET: 0x0082,
  HCENTER: 0x0083,
  VCENTER: 0x0084,
  BOUNDSHEET: 0x0085,
  COUNTRY: 0x008c,
  HIDEOBJ: 0x008d,
  FNGROUPCOUNT: 0x009c,
  MMS: 0x00c1,
  BOOKBOOL: 0x00da,
  XF: 0x00e0,
  INTERFACEHDR: 0x00e1,
  INTERFACEEND: 0x00e2,
  SST: 0x00fc,
  EXTSST: 0x00ff,
  LABELSST: 0x00fd,
  USESELFS: 0x0160,
  DSF: 0x0161,
  TABID: 0x013d,
  REFRESHALL: 0x01b7,
  PROT4REV: 0x01af,
  PROT4REVPASS: 0x01bc,
  DIMENSIONS: 0x0200,
  NUMBER: 0x0203,
  BOOLERR: 0x0205,
  WINDOW2: 0x023e,
  RK: 0x027e,
  STYLE: 0x0293,
  DEFAULTROWHEIGHT: 0x0225,
  BOF: 0x0809,
} as const;

/** Bytes appended to chunks of a fixed size, so that a large stream never needs one large contiguous copy while built. */
class ByteSink {
  readonly #chunks: Buffer[] = [];
  #chunk: Buffer;
  #used = 0;
  #flushed = 0;

  constructor(readonly chunkSize: number) {
    this.#chunk = Buffer.allocUnsafe(chunkSize);
  }

  get length(): number {
    return this.#flushed + this.#used;
  }

  /** Room for `size` more bytes in the current chunk; returns the chunk and the offset to write at. */
  reserve(size: number): [Buffer, number] {
    if (this.#used + size > this.#chunk.length) {
      this.#chunks.push(this.#chunk.subarray(0, this.#used));
      this.#flushed += this.#used;
      this.#chunk = Buffer.allocUnsafe(Math.max(this.chunkSize, size));
      this.#used = 0;
    }
    const at = this.#used;
    this.#used += size;
    return [this.#chunk, at];
  }

  /** A record: its type, its length, then its data ([MS-XLS] 2.1.4). */
  record(type: number, data: Buffer | readonly number[] = []): void {
    const [chunk, at] = this.reserve(4 + data.length);
    chunk.writeUInt16LE(type, at);
    chunk.writeUInt16LE(data.length, at + 2);
    if (Buffer.isBuffer(data)) data.copy(chunk, at + 4);
    else for (let i = 0; i < data.length; i++) chunk[at + 4 + i] = data[i]!;
  }

  buffers(): Buffer[] {
    return [...this.#chunks, this.#chunk.subarray(0, this.#used)];
  }
}

function uint16(...values: number[]): Buffer {
  const buffer = Buffer.alloc(2 * values.length);
  values.forEach((value, i) => buffer.writeUInt16LE(value, 2 * i));
  return buffer;
}

/** Text as BIFF8 writes it: one byte per character when every one is below U+0100, else UTF-16LE. */
function encodeText(text: string): { bytes: Buffer; wide: boolean } {
  const wide = /[^\u0000-\u00ff]/.test(text);
  return { bytes: Buffer.from(text, wide ? 'utf16le' : 'latin1'), wide };
}

/** An XLUnicodeString with a 16-bit length ([MS-XLS] 2.5.294). */
function unicodeString(text: string): Buffer {
  const { bytes, wide } = encodeText(text);
  return Buffer.concat([uint16(text.length), Buffer.from([wide ? 1 : 0]), bytes]);
}

/** A sheet of typed cells, added row by row; `toFile()` gives the .xls file. */
export class Biff8Sheet {
  readonly #cells = new ByteSink(1 << 20);
  readonly #strings = new Map<string, number>();
  #stringCells = 0;
  #rows = 0;
  #columns = 0;

  constructor(readonly name: string) {}

  get rows(): number {
    return this.#rows;
  }

  /** The next row; `undefined` leaves a cell empty. */
  addRow(cells: readonly (string | number | boolean | undefined)[]): void {
    if (this.#rows >= XLS_MAX_ROWS) throw new RangeError(`an .xls sheet holds at most ${XLS_MAX_ROWS} rows`);
    if (cells.length > MAX_COLUMNS) throw new RangeError(`an .xls sheet holds at most ${MAX_COLUMNS} columns`);
    const row = this.#rows++;
    this.#columns = Math.max(this.#columns, cells.length);
    for (let column = 0; column < cells.length; column++) {
      const value = cells[column];
      if (value === undefined) continue;
      if (typeof value === 'string') this.#label(row, column, value);
      else if (typeof value === 'boolean') this.#boolean(row, column, value);
      else this.#number(row, column, value);
    }
  }

  /** [MS-XLS] 2.4.149 LabelSst: the cell's string by its index in the SST. */
  #label(row: number, column: number, text: string): void {
    const value = text.length > MAX_CELL_CHARS ? text.slice(0, MAX_CELL_CHARS) : text;
    let index = this.#strings.get(value);
    if (index === undefined) {
      index = this.#strings.size;
      this.#strings.set(value, index);
    }
    this.#stringCells++;
    const [chunk, at] = this.#cells.reserve(14);
    chunk.writeUInt16LE(RECORD.LABELSST, at);
    chunk.writeUInt16LE(10, at + 2);
    this.#cellHeader(chunk, at + 4, row, column);
    chunk.writeUInt32LE(index, at + 10);
  }

  /** [MS-XLS] 2.4.24 BoolErr with fError 0. */
  #boolean(row: number, column: number, value: boolean): void {
    const [chunk, at] = this.#cells.reserve(12);
    chunk.writeUInt16LE(RECORD.BOOLERR, at);
    chunk.writeUInt16LE(8, at + 2);
    this.#cellHeader(chunk, at + 4, row, column);
    chunk[at + 10] = value ? 1 : 0;
    chunk[at + 11] = 0;
  }

  /** [MS-XLS] 2.4.220 RK for integers of 30 bits (2.5.217 RkNumber, fInt), else 2.4.180 Number. */
  #number(row: number, column: number, value: number): void {
    if (Number.isInteger(value) && value >= -(2 ** 29) && value < 2 ** 29) {
      const [chunk, at] = this.#cells.reserve(14);
      chunk.writeUInt16LE(RECORD.RK, at);
      chunk.writeUInt16LE(10, at + 2);
      this.#cellHeader(chunk, at + 4, row, column);
      chunk.writeInt32LE((value << 2) | 0x2, at + 10);
      return;
    }
    const [chunk, at] = this.#cells.reserve(18);
    chunk.writeUInt16LE(RECORD.NUMBER, at);
    chunk.writeUInt16LE(14, at + 2);
    this.#cellHeader(chunk, at + 4, row, column);
    chunk.writeDoubleLE(value, at + 10);
  }

  /** [MS-XLS] 2.5.19 Cell: row, column, XF. */
  #cellHeader(chunk: Buffer, at: number, row: number, column: number): void {
    chunk.writeUInt16LE(row, at);
    chunk.writeUInt16LE(column, at + 2);
    chunk.writeUInt16LE(CELL_XF, at + 4);
  }

  /** The .xls file: a compound file whose `Workbook` stream holds the globals, then the sheet. */
  toFile(): Buffer {
    const workbook = Buffer.concat([...this.#globals().buffers(), ...this.#sheet()]);
    const container = CFB.utils.cfb_new();
    CFB.utils.cfb_add(container, '/Workbook', workbook);
    // The library also puts a 4-byte placeholder stream of its own in every container it makes (it cannot be left
    // out); readers look for the Workbook stream by name and pass over it.
    return CFB.write(container, { type: 'buffer' }) as Buffer;
  }

  /** The workbook globals substream ([MS-XLS] 2.1.7.20.3), in the order its grammar gives. */
  #globals(): ByteSink {
    const out = new ByteSink(64 * 1024);
    out.record(RECORD.BOF, bof(0x0005));
    out.record(RECORD.INTERFACEHDR, uint16(1200)); // code page of the user interface: UTF-16
    out.record(RECORD.MMS, [0, 0]);
    out.record(RECORD.INTERFACEEND);
    out.record(RECORD.WRITEACCESS, writeAccess('mailverify'));
    out.record(RECORD.CODEPAGE, uint16(1200));
    out.record(RECORD.DSF, uint16(0));
    out.record(RECORD.TABID, uint16(1));
    out.record(RECORD.FNGROUPCOUNT, uint16(0x0e));
    out.record(RECORD.WINDOWPROTECT, uint16(0));
    out.record(RECORD.PROTECT, uint16(0));
    out.record(RECORD.PASSWORD, uint16(0));
    out.record(RECORD.PROT4REV, uint16(0));
    out.record(RECORD.PROT4REVPASS, uint16(0));
    // [MS-XLS] 2.4.345 Window1: position, size, flags (horizontal scroll and tabs shown), first tab, tab ratio.
    out.record(RECORD.WINDOW1, uint16(0x0168, 0x001e, 0x4000, 0x2500, 0x0038, 0, 0, 1, 0x0258));
    out.record(RECORD.BACKUP, uint16(0));
    out.record(RECORD.HIDEOBJ, uint16(0));
    out.record(RECORD.DATEMODE, uint16(0));
    out.record(RECORD.PRECISION, uint16(1));
    out.record(RECORD.REFRESHALL, uint16(0));
    out.record(RECORD.BOOKBOOL, uint16(0));
    // Four fonts (index 4 does not exist in BIFF; Excel writes at least four).
    for (let i = 0; i < 4; i++) out.record(RECORD.FONT, font('Arial'));
    // 15 style XFs, then the cell XF that every cell uses ([MS-XLS] 2.4.353).
    for (let i = 0; i < CELL_XF; i++) out.record(RECORD.XF, xf(true));
    out.record(RECORD.XF, xf(false));
    // [MS-XLS] 2.4.269 Style: the built-in Normal style on XF 0.
    out.record(RECORD.STYLE, [0x00, 0x80, 0x00, 0xff]);
    out.record(RECORD.USESELFS, uint16(0));
    // [MS-XLS] 2.4.28 BoundSheet8: the sheet's BOF position, patched once the globals' length is known.
    const name = unicodeStringShort(this.name);
    const boundSheet = Buffer.concat([Buffer.alloc(4), Buffer.from([0, 0]), name]);
    const [boundChunk, boundAt] = out.reserve(4 + boundSheet.length);
    out.record(RECORD.COUNTRY, uint16(1, 1));
    this.#sharedStrings(out);
    out.record(RECORD.EOF);
    boundSheet.writeUInt32LE(out.length, 0);
    boundChunk.writeUInt16LE(RECORD.BOUNDSHEET, boundAt);
    boundChunk.writeUInt16LE(boundSheet.length, boundAt + 2);
    boundSheet.copy(boundChunk, boundAt + 4);
    return out;
  }

  /**
   * [MS-XLS] 2.4.265 SST and 2.4.107 ExtSST. A string that does not fit in the record goes on in a CONTINUE record,
   * which then starts with the byte that says how its characters are stored (2.5.293 XLUnicodeRichExtendedString).
   */
  #sharedStrings(out: ByteSink): void {
    const unique = this.#strings.size;
    const perBucket = Math.max(8, Math.ceil(unique / 128));
    const buckets: Array<[position: number, offset: number]> = [];
    let recordStart = out.length;
    let parts: Buffer[] = [];
    let used = 0;
    let type: number = RECORD.SST;
    const flush = (): void => {
      out.record(type, Buffer.concat(parts));
      recordStart = out.length;
      parts = [];
      used = 0;
      type = RECORD.CONTINUE;
    };
    const header = Buffer.alloc(8);
    header.writeUInt32LE(this.#stringCells, 0);
    header.writeUInt32LE(unique, 4);
    parts.push(header);
    used = 8;
    let index = 0;
    for (const text of this.#strings.keys()) {
      const { bytes, wide } = encodeText(text);
      const charSize = wide ? 2 : 1;
      // The string's header and its first character stay together.
      if (used + 3 + charSize > MAX_RECORD_DATA) flush();
      if (index % perBucket === 0) buckets.push([recordStart + 4 + used, 4 + used]);
      parts.push(Buffer.concat([uint16(text.length), Buffer.from([wide ? 1 : 0])]));
      used += 3;
      let from = 0;
      for (;;) {
        const room = Math.floor((MAX_RECORD_DATA - used) / charSize) * charSize;
        const take = Math.min(room, bytes.length - from);
        parts.push(bytes.subarray(from, from + take));
        used += take;
        from += take;
        if (from >= bytes.length) break;
        flush();
        parts.push(Buffer.from([wide ? 1 : 0]));
        used = 1;
      }
      index++;
    }
    flush();
    const extSst = Buffer.alloc(2 + 8 * buckets.length);
    extSst.writeUInt16LE(perBucket, 0);
    buckets.forEach(([position, offset], i) => {
      extSst.writeUInt32LE(position, 2 + 8 * i);
      extSst.writeUInt16LE(offset, 6 + 8 * i);
    });
    out.record(RECORD.EXTSST, extSst);
  }

  /** The worksheet substream ([MS-XLS] 2.1.7.20.5): settings, dimensions, the cells, the window, EOF. */
  #sheet(): Buffer[] {
    const out = new ByteSink(1024);
    out.record(RECORD.BOF, bof(0x0010));
    out.record(RECORD.CALCMODE, uint16(1));
    out.record(RECORD.CALCCOUNT, uint16(100));
    out.record(RECORD.REFMODE, uint16(1));
    out.record(RECORD.ITERATION, uint16(0));
    const delta = Buffer.alloc(8);
    delta.writeDoubleLE(0.001);
    out.record(RECORD.DELTA, delta);
    out.record(RECORD.SAVERECALC, uint16(1));
    out.record(RECORD.PRINTHEADERS, uint16(0));
    out.record(RECORD.PRINTGRIDLINES, uint16(0));
    out.record(RECORD.GRIDSET, uint16(1));
    out.record(RECORD.GUTS, uint16(0, 0, 0, 0));
    out.record(RECORD.DEFAULTROWHEIGHT, uint16(0, 0x00ff));
    out.record(RECORD.WSBOOL, uint16(0x04c1));
    out.record(RECORD.HCENTER, uint16(0));
    out.record(RECORD.VCENTER, uint16(0));
    // [MS-XLS] 2.4.90 Dimensions: first row, last row + 1 (32 bits), first column, last column + 1, reserved.
    const dimensions = Buffer.alloc(14);
    dimensions.writeUInt32LE(0, 0);
    dimensions.writeUInt32LE(this.#rows, 4);
    dimensions.writeUInt16LE(0, 8);
    dimensions.writeUInt16LE(this.#columns, 10);
    out.record(RECORD.DIMENSIONS, dimensions);
    const end = new ByteSink(64);
    // [MS-XLS] 2.4.346 Window2: gridlines, headers, zeros, default colours, outline symbols shown; the tab selected.
    end.record(RECORD.WINDOW2, uint16(0x06b6, 0, 0, 0x0040, 0, 0, 0, 0, 0));
    end.record(RECORD.EOF);
    return [...out.buffers(), ...this.#cells.buffers(), ...end.buffers()];
  }
}

/** [MS-XLS] 2.4.21 BOF of a BIFF8 substream (0x0005 workbook globals, 0x0010 worksheet), as Excel 97 writes it. */
function bof(type: number): Buffer {
  const data = Buffer.alloc(16);
  data.writeUInt16LE(0x0600, 0);
  data.writeUInt16LE(type, 2);
  data.writeUInt16LE(0x0dbb, 4); // build
  data.writeUInt16LE(0x07cc, 6); // year
  data.writeUInt32LE(0x00000041, 8); // file history: saved on Windows
  data.writeUInt32LE(0x00000006, 12); // lowest BIFF version that can read it: 8
  return data;
}

/** [MS-XLS] 2.4.349 WriteAccess: the user name, padded with spaces to 112 bytes. */
function writeAccess(user: string): Buffer {
  const data = Buffer.alloc(112, 0x20);
  unicodeString(user).copy(data);
  return data;
}

/** An XLUnicodeString with an 8-bit length ([MS-XLS] 2.5.240 ShortXLUnicodeString), for a sheet name. */
function unicodeStringShort(text: string): Buffer {
  const { bytes, wide } = encodeText(text.slice(0, 31));
  return Buffer.concat([Buffer.from([Math.min(text.length, 31), wide ? 1 : 0]), bytes]);
}

/** [MS-XLS] 2.4.122 Font: 10 points, normal weight, automatic colour, the given face. */
function font(name: string): Buffer {
  const face = unicodeStringShort(name);
  const data = Buffer.alloc(14);
  data.writeUInt16LE(200, 0); // height in twentieths of a point
  data.writeUInt16LE(0, 2); // flags
  data.writeUInt16LE(0x7fff, 4); // colour: automatic
  data.writeUInt16LE(400, 6); // weight: normal
  data.writeUInt16LE(0, 8); // escapement
  data[10] = 0; // underline
  data[11] = 0; // family
  data[12] = 0; // character set
  data[13] = 0; // reserved
  return Buffer.concat([data, face]);
}

/**
 * [MS-XLS] 2.4.353 XF: font 0, format 0 (General), locked; a style XF has no parent (0xFFF), a cell XF has the
 * Normal style (XF 0). Bottom-aligned, no borders, the default pattern colours (64 and 65).
 */
function xf(style: boolean): Buffer {
  const data = Buffer.alloc(20);
  data.writeUInt16LE(0, 0); // font
  data.writeUInt16LE(0, 2); // number format
  data.writeUInt16LE(style ? 0xfff5 : 0x0001, 4); // locked, style flag, parent
  data[6] = 0x20; // alignment: general, bottom
  data[7] = 0; // rotation
  data[8] = 0; // indent, shrink, reading order
  data[9] = style ? 0xf4 : 0; // attributes that differ from the parent
  data.writeUInt32LE(0, 10); // borders
  data.writeUInt32LE(0, 14); // border colours, fill pattern
  data.writeUInt16LE(0x20c0, 18); // pattern colours: foreground 64, background 65
  return data;
}
