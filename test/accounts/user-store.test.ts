// Users and credits in the SQLite store, on real database files: the shared UserStore and CreditStore suites
// (user-store-suite.ts, credit-store-suite.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import { describeCreditStore } from './credit-store-suite.js';
import { describeUserStore } from './user-store-suite.js';

const dir = mkdtempSync(join(tmpdir(), 'mailverify-accounts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const subject = { fresh: () => join(dir, `accounts-${++files}.db`), open: (path: string) => openSqliteStore(path) };

describeUserStore('users in the SQLite store', subject);
describeCreditStore('credits in the SQLite store', subject);
