// The sign-in attacks of sign-in-attacks.ts against one embedded `mailverify serve` process (the built CLI).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { signInAttacks } from './sign-in-attacks.js';

const ROOT_PASSWORD = 'sign-in attacks root password';
let dir: string;
let server: ServeProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-sign-in-attacks-'));
  server = await startServe(['--data-dir', join(dir, 'data'), '--log-level', 'silent', '--checks', 'syntax'], { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD });
});

afterAll(async () => {
  await server?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

signInAttacks(() => ({ origins: [server.origin], rootPassword: ROOT_PASSWORD }));
