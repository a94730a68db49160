/**
 * Option names are checked, never ignored: a misspelt name would otherwise fall back to a default silently (a
 * `check: 'syntax'` that leaves the default `'smtp'` in force sends queries and probes nobody asked for). An unknown
 * name throws a TypeError that gives its path and, when one is close, the name that was probably meant.
 */

/** The names an options object may have; a nested tree for a nested object, `true` for a value checked elsewhere. */
export interface OptionNames {
  readonly [name: string]: true | OptionNames;
}

/**
 * Throws a TypeError for the first name in `options` (and in its nested objects that `names` describes) that is not
 * an option. `where` names the function (`createVerifier`), `path` the object checked (`smtp.`).
 */
export function checkOptionNames(options: object, names: OptionNames, where: string, path = ''): void {
  for (const name of Object.keys(options)) {
    const known = Object.hasOwn(names, name) ? names[name] : undefined;
    if (known === undefined) {
      const near = closestName(name, Object.keys(names));
      const hint = near === null ? '' : ` (did you mean ${path}${near}?)`;
      throw new TypeError(`${where}: unknown option ${path}${name}${hint}`);
    }
    const value = (options as Record<string, unknown>)[name];
    if (known !== true && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      checkOptionNames(value, known, where, `${path}${name}.`);
    }
  }
}

/** The known name a misspelt one most likely meant: one is the other plus a suffix, or they are two edits apart. */
export function closestName(name: string, known: readonly string[]): string | null {
  const lower = name.toLowerCase();
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const other = candidate.toLowerCase();
    const distance = other.startsWith(lower) || lower.startsWith(other) ? Math.abs(other.length - lower.length) / 10 : editDistance(lower, other);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= 2 ? best : null;
}

/** Levenshtein distance, two rows. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
