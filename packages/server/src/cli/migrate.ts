/**
 * `mailverify migrate`: copies the data of an embedded server (the SQLite store of its data folder) into a PostgreSQL
 * store, for servers that share one database. The target schema must hold no jobs, users or credits; the copy is one
 * transaction there, so a failed copy leaves it as it was.
 *
 *   mailverify migrate --from DIR --store postgres://user@host:5432/db [--store-schema NAME]
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError, parseFlags } from 'mailverify/internal';

export const MIGRATE_USAGE = `Usage: mailverify migrate --from DIR --store postgres://USER@HOST:PORT/DATABASE [--store-schema NAME]

Copies everything a server keeps in its data folder (mailverify serve --data-dir) into a PostgreSQL
database: jobs of every status with their entries, users, credits (packs, daily usage, open
reservations), settings (the root account's id, the token secret, override lists) and callbacks
waiting to be delivered. Stop the server first: what it writes during the copy is not copied.

The schema must be new or hold no jobs, users or credits (a schema a server has only started on is
fine: its settings are replaced). The copy is one transaction: if it fails, the schema is left as it
was, and the command can be run again. A line on standard output says what was copied.

Options:
  --from DIR              the data folder of the SQLite store (holding mailverify.db)
  --store URL             the PostgreSQL database, postgres://USER@HOST:PORT/DATABASE; give the
                          password in PGPASSWORD (or ~/.pgpass) rather than in the URL, which other
                          users of the machine can read in the process list
  --store-schema NAME     the schema of the store, made if missing (default public): lower-case
                          letters, digits and _
  -h, --help              this text`;

/** Runs the copy; resolves with the exit code. */
export async function migrate(argv: string[]): Promise<number> {
  const { values } = parseFlags({
    args: argv,
    allowPositionals: false,
    options: {
      from: { type: 'string' },
      store: { type: 'string' },
      'store-schema': { type: 'string', default: 'public' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(MIGRATE_USAGE + '\n');
    return 0;
  }
  if (values.from === undefined) throw new UsageError('--from: the data folder to copy from is missing');
  if (values.store === undefined) throw new UsageError('--store: the PostgreSQL database to copy into is missing');
  if (!/^postgres(ql)?:\/\//.test(values.store)) throw new UsageError('--store: a postgres:// or postgresql:// URL');
  const { DATA_FILE } = await import('../server/defaults.js');
  const file = join(values.from, DATA_FILE);
  // Opening a missing file would make a new, empty database: a wrong folder is said instead.
  const size = fileSize(file);
  if (size === null) throw new Error(`${values.from}: not the data folder of a server (no ${DATA_FILE} in it)`);
  if (size === 0) throw new Error(`${file}: the database file is empty (0 bytes): nothing to copy`);

  // Loaded here: `mailverify check` needs none of the stores' code.
  const [{ openSqliteStore }, { openPostgresStore }, { copyStore, summaryLine }] = await Promise.all([
    import('../jobs/sqlite-store.js'),
    import('../jobs/postgres-store.js'),
    import('../jobs/migrate.js'),
  ]);
  const source = await openSqliteStore(file);
  try {
    const target = await openPostgresStore({ connectionString: values.store, schema: values['store-schema'], max: 1 });
    try {
      const summary = await copyStore(source, target).catch((error: unknown) => {
        throw new Error(`copying into the PostgreSQL schema ${values['store-schema']}: ${(error as Error).message}`, { cause: error });
      });
      process.stdout.write(`mailverify: copied ${summaryLine(summary)} into the PostgreSQL schema ${values['store-schema']}\n`);
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
  return 0;
}

function fileSize(file: string): number | null {
  try {
    return statSync(file).size;
  } catch {
    return null;
  }
}
