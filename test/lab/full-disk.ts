// A disk that fills up, for the tests of what a full disk does: a size-limited tmpfs (mounting needs root; CI runs the
// tests as root), a ballast file that takes all its room, and reads of a SQLite file from a child process.
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { describe } from 'vitest';

/** Mounts a tmpfs of `size` (`8M`) on `mountPoint` (made if missing); throws, saying why, where it cannot. */
export function mountTmpfs(mountPoint: string, size: string): void {
  mkdirSync(mountPoint, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', mountPoint], { stdio: 'pipe' });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`this test needs a size-limited tmpfs (run it as root): mount -t tmpfs failed: ${stderr || String(error)}`);
  }
}

/**
 * Unmounts it. A SQLite connection of the test process, closed, may hold its files until it is collected: then the
 * tmpfs is detached at once and freed when they go (`umount -l`).
 */
export function unmountTmpfs(mountPoint: string): void {
  try {
    execFileSync('umount', [mountPoint], { stdio: 'pipe' });
  } catch {
    execFileSync('umount', ['-l', mountPoint]);
  }
}

/** Writes `path` until the file system has no room left (ENOSPC), then frees `leaveBytes` of it (0: none left). */
export function fillDisk(path: string, leaveBytes = 0): void {
  const fd = openSync(path, 'w');
  let size = 0;
  try {
    // Large pieces, then ever smaller ones into what is left (tmpfs gives room a page at a time).
    for (const pieceSize of [1 << 20, 4096, 512]) {
      const piece = Buffer.alloc(pieceSize, 0x55);
      try {
        for (;;) size += writeSync(fd, piece);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    }
    if (leaveBytes > 0) ftruncateSync(fd, Math.max(0, size - leaveBytes));
  } finally {
    closeSync(fd);
  }
}

/**
 * What `body` (CommonJS, with `db`, the SQLite database `file`, and `args`) writes with `answer(value)`, run in a
 * child process: no connection of the test process is left holding the file (the tmpfs can be unmounted).
 */
export function readDatabase<T>(file: string, body: string, args: readonly string[] = []): T {
  const script = `
    const Database = require('libsql');
    const [file, ...args] = process.argv.slice(1);
    const db = new Database(file);
    const answer = (value) => process.stdout.write(JSON.stringify(value));
    try { ${body} } finally { db.close(); }`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script, file, ...args], { encoding: 'utf8' })) as T;
}

/**
 * Whether this process may mount a tmpfs (it runs as root), for the full-disk tests: `describe`, or `describe.skip`
 * with a note saying which tests were not run when it is not root. Under `.ci/run` (REQUIRE_TEST_PROGRAMS=1, run as
 * root) not being root is an error instead.
 */
export function tmpfsForTests(what: string): { readonly available: boolean; readonly describe: typeof describe } {
  if (process.getuid?.() === 0) return { available: true, describe };
  if (process.env['REQUIRE_TEST_PROGRAMS'] === '1') throw new Error(`REQUIRE_TEST_PROGRAMS=1, but ${what} need root (to mount a tmpfs)`);
  process.stderr.write(`NOTE: not root, so these were not run: ${what} (they mount a size-limited tmpfs); run the suite as root to run them (.ci/run does).\n`);
  return { available: false, describe: describe.skip as unknown as typeof describe };
}
