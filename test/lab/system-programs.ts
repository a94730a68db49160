// The system programs some tests drive as real parts (microsocks, Chromium, LibreOffice): found on the PATH, or
// absent. On a machine without one, `npm test` still passes: the tests that need it are skipped (LibreOffice's are not
// defined), and a note on standard error says what was not run and how to install it. `.ci/run` installs them and sets
// REQUIRE_TEST_PROGRAMS=1, so that there a missing program is an error instead.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { it } from 'vitest';

/** The first of `names` that is an executable on the PATH (or `path` itself when it is given), or null. */
export function findProgram(names: readonly string[], path?: string): string | null {
  // HIDE_TEST_PROGRAMS=microsocks,chromium: as on a machine without them (to try the notes).
  const hidden = (process.env['HIDE_TEST_PROGRAMS'] ?? '').split(',');
  if (names.some((name) => hidden.includes(name))) return null;
  const candidates = path !== undefined && path !== '' ? [path] : (process.env['PATH'] ?? '').split(delimiter).flatMap((dir) => names.map((name) => join(dir, name)));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not this one
    }
  }
  return null;
}

export interface SystemProgram {
  /** The names it goes by on the PATH. */
  readonly names: readonly string[];
  /** The Debian package that installs it. */
  readonly debianPackage: string;
  /** An environment variable that names the executable instead of the PATH (CHROMIUM_PATH). */
  readonly pathVariable?: string;
  /** Whether `.ci/run`'s REQUIRE_TEST_PROGRAMS=1 requires it (LibreOffice stays optional). */
  readonly required?: boolean;
}

export const MICROSOCKS: SystemProgram = { names: ['microsocks'], debianPackage: 'microsocks', required: true };
export const CHROMIUM: SystemProgram = { names: ['chromium', 'chromium-browser'], debianPackage: 'chromium', pathVariable: 'CHROMIUM_PATH', required: true };

/**
 * The program for the tests that need it, or null when it is missing: then they are not defined, and a note says
 * `what` was not run. Required (and missing) under REQUIRE_TEST_PROGRAMS=1: an error.
 */
export function programForTests(program: SystemProgram, what: string): string | null {
  const found = findProgram(program.names, program.pathVariable === undefined ? undefined : process.env[program.pathVariable]);
  if (found !== null) return found;
  if (program.required === true && process.env['REQUIRE_TEST_PROGRAMS'] === '1') {
    throw new Error(`REQUIRE_TEST_PROGRAMS=1, but ${program.names[0]} is not installed (apt-get install -y ${program.debianPackage})`);
  }
  process.stderr.write(`NOTE: ${program.names[0]} is not installed, so these were not run: ${what}; install Debian's ${program.debianPackage} to run them (.ci/run does).\n`);
  return null;
}

/**
 * The program, and `it` for the tests that need it: when it is missing (see programForTests), `it.skip`, so that the
 * run reports them as skipped beside the note (and a file whose tests all need it still has its tests).
 */
export function needing(program: SystemProgram, what: string): { readonly path: string | null; readonly it: typeof it } {
  const path = programForTests(program, what);
  return { path, it: path === null ? (it.skip as unknown as typeof it) : it };
}
