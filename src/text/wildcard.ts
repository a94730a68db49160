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
