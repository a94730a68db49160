// Cluster mode needs a PostgreSQL store shared by the processes: without a store, or with the SQLite one, the server
// refuses to start, saying so, before it opens anything (no queue connection is tried).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import { createServer } from '../../packages/server/src/server/app.js';

const dir = mkdtempSync(join(tmpdir(), 'mailverify-cluster-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A port where nothing listens: were a connection tried, the error would be a refused connection, not these.
const cluster = { queue: 'redis://127.0.0.1:9/0' };

describe('createServer({ cluster })', () => {
  it('without a store: a TypeError naming the option, and no data folder made', async () => {
    const dataDir = join(dir, 'never-made');
    await expect(createServer({ rootUsername: 'root', rootPassword: 'secret', dataDir, cluster })).rejects.toThrow(
      /option cluster needs a PostgreSQL store/,
    );
    await expect(import('node:fs/promises').then((fs) => fs.stat(dataDir))).rejects.toThrow(/ENOENT/);
  });

  it('with the SQLite store: a TypeError naming the option', async () => {
    const store = await openSqliteStore(join(dir, 'jobs.db'));
    try {
      await expect(createServer({ store, rootUsername: 'root', rootPassword: 'secret', cluster })).rejects.toThrow(/option cluster needs a PostgreSQL store/);
    } finally {
      await store.close();
    }
  });
});
