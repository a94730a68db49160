/**
 * Wildcard patterns, as override rules and trusted origins write them: `*` any run of characters (none included), `?`
 * exactly one, every other character itself.
 */

/**
 * Whether `pattern` matches the whole of `text`, both already in the same case: strings (a character is a UTF-16 code
 * unit) or arrays of characters (a code point each). Greedy, going back only to the last `*` seen: at most pattern
 * length × text length steps, never exponential.
 */
export function wildcardMatches(pattern: ArrayLike<string>, text: ArrayLike<string>): boolean {
  let p = 0;
  let t = 0;
  // Where the last `*` is in the pattern, and the text position it was last tried to stop at.
  let star = -1;
  let starText = 0;
  while (t < text.length) {
    const c = pattern[p];
    if (c === '*') {
      star = p++;
      starText = t;
    } else if (c !== undefined && (c === '?' || c === text[t])) {
      p++;
      t++;
    } else if (star >= 0) {
      // The last `*` takes one more character; what follows it is tried again from there.
      p = star + 1;
      t = ++starText;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/**
 * A pattern made ready for many texts: `?` stands for one code point. A pattern with `*` but no `?` is matched by its
 * literal pieces (the first at the start, the last at the end, the others left to right with indexOf: taking each
 * piece as early as it comes never loses a match), which is what most patterns are and far quicker.
 */
export function compileWildcard(pattern: string): (text: string) => boolean {
  // A lone surrogate in a piece could match half of a pair in the text: such a pattern takes the general path.
  if (!pattern.includes('?') && !/[\uD800-\uDFFF]/.test(pattern)) {
    const pieces = pattern.split('*');
    if (pieces.length === 1) return (text) => text === pattern;
    const first = pieces[0]!;
    const last = pieces.at(-1)!;
    const middle = pieces.slice(1, -1).filter((piece) => piece !== '');
    const fixed = first.length + last.length;
    return (text) => {
      if (text.length < fixed || !text.startsWith(first) || !text.endsWith(last)) return false;
      const end = text.length - last.length;
      let at = first.length;
      for (const piece of middle) {
        const found = text.indexOf(piece, at);
        if (found < 0 || found + piece.length > end) return false;
        at = found + piece.length;
      }
      return true;
    };
  }
  const chars = [...pattern];
  return (text) => wildcardMatches(chars, [...text]);
}
