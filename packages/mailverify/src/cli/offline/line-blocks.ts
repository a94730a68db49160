/**
 * Lines of text as bytes, for the offline worker threads: the main thread cuts the input into blocks of whole lines
 * without decoding it (no string per line, nothing for its collector), and a worker decodes and splits its block.
 * The lines are those the main thread's reader gives (main.ts: a BOM at the start dropped, a trailing CR dropped, a
 * line longer than MAX_LINE characters cut there), and UTF-8 decodes the same line by line as in one stream: a line
 * break (0x0A) is never part of a multi-byte sequence.
 */

/**
 * The longest line read whole (64 Ki characters, far beyond the 254 octets of an address); a longer one is cut
 * there, and its result is that of the cut text.
 */
export const MAX_LINE = 65_536;

/**
 * The bytes of a line kept before it is known to be too long: MAX_LINE characters take at most 3 bytes each (a
 * surrogate pair, two characters, takes 4), and 3 more bytes decode to at least one more character, so a line cut
 * here still decodes past MAX_LINE and is cut at exactly the characters a whole read gives.
 */
const MAX_LINE_BYTES = 3 * MAX_LINE + 3;

/** Bytes of input per block at most (a line split across reads aside): a block's garbage fits a small young generation. */
const BLOCK_BYTES = 16 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const BYTE_ORDER_MARK = Uint8Array.of(0xef, 0xbb, 0xbf);

/** Whole lines, each ending with a line break, and how many. */
export interface LineBlock {
  readonly bytes: Uint8Array;
  readonly lines: number;
}

/** The part of a line read so far, kept up to MAX_LINE_BYTES. */
class PartialLine {
  private parts: Uint8Array[] = [];
  private size = 0;

  get empty(): boolean {
    return this.size === 0;
  }

  get length(): number {
    return this.size;
  }

  add(bytes: Uint8Array): void {
    const room = MAX_LINE_BYTES - this.size;
    if (room <= 0 || bytes.length === 0) return;
    // A copy: the read's buffer is not held for a few bytes of it.
    const kept = bytes.slice(0, Math.min(room, bytes.length));
    this.parts.push(kept);
    this.size += kept.length;
  }

  /** Copies the line into `target` at `offset`, then forgets it; the offset after it. */
  moveTo(target: Uint8Array, offset: number): number {
    for (const part of this.parts) {
      target.set(part, offset);
      offset += part.length;
    }
    this.parts = [];
    this.size = 0;
    return offset;
  }
}

function countLineBreaks(bytes: Uint8Array, from: number, to: number): number {
  let count = 0;
  for (let at = from; at < to; at++) if (bytes[at] === LF) count++;
  return count;
}

/** The input's lines in blocks of whole lines, read as bytes; a final line without a line break gets one. */
export async function* lineBlocks(stream: AsyncIterable<Uint8Array>): AsyncGenerator<LineBlock> {
  const partial = new PartialLine();
  /** The first bytes, until there are enough to tell whether they start with a byte order mark. */
  let head: Uint8Array | null = new Uint8Array(0);

  /** Blocks of the piece's lines up to its last line break (the first one ending the line read before it). */
  function* blocksOf(piece: Uint8Array): Generator<LineBlock> {
    for (let from = 0; from < piece.length; from += BLOCK_BYTES) {
      const to = Math.min(from + BLOCK_BYTES, piece.length);
      const lastBreak = piece.lastIndexOf(LF, to - 1);
      if (lastBreak < from) {
        partial.add(piece.subarray(from, to));
        continue;
      }
      let bytes: Uint8Array;
      let offset = 0;
      let rest = from;
      if (partial.empty) {
        bytes = new Uint8Array(lastBreak + 1 - from);
      } else {
        // The line begun before ends at the first line break here: it comes first, as it was kept.
        const firstBreak = piece.indexOf(LF, from);
        partial.add(piece.subarray(from, firstBreak));
        bytes = new Uint8Array(partial.length + 1 + lastBreak - firstBreak);
        offset = partial.moveTo(bytes, 0);
        bytes[offset++] = LF;
        rest = firstBreak + 1;
      }
      bytes.set(piece.subarray(rest, lastBreak + 1), offset);
      partial.add(piece.subarray(lastBreak + 1, to));
      yield { bytes, lines: countLineBreaks(piece, from, lastBreak + 1) };
    }
  }

  for await (const chunk of stream) {
    let piece = chunk;
    if (head !== null) {
      const start: Uint8Array = head.length === 0 ? chunk : concat(head, chunk);
      if (start.length < BYTE_ORDER_MARK.length && startsWith(BYTE_ORDER_MARK, start)) {
        head = start;
        continue;
      }
      head = null;
      piece = startsWith(start, BYTE_ORDER_MARK) ? start.subarray(BYTE_ORDER_MARK.length) : start;
    }
    yield* blocksOf(piece);
  }
  if (head !== null && head.length > 0) yield* blocksOf(head);
  if (!partial.empty) {
    const bytes = new Uint8Array(partial.length + 1);
    bytes[partial.moveTo(bytes, 0)] = LF;
    yield { bytes, lines: 1 };
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

/** Whether `bytes` starts with `prefix` (its whole length). */
function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (bytes[k] !== prefix[k]) return false;
  return true;
}

/**
 * The lines of a block as the main thread's reader gives them: decoded, a line longer than MAX_LINE characters cut
 * there, else without a trailing CR. (Decoding the block at once gives the same text as line by line, see above; a
 * byte order mark inside the input is kept, as the stream's decoder keeps it.)
 */
export function linesOfBlock(block: Uint8Array): string[] {
  const lines = Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('utf8').split('\n');
  lines.pop(); // the text after the block's last line break: none
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!;
    if (line.length > MAX_LINE) lines[k] = line.slice(0, MAX_LINE);
    else if (line.charCodeAt(line.length - 1) === CR) lines[k] = line.slice(0, -1);
  }
  return lines;
}
