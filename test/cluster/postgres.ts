// PostgreSQL for the cluster suite: the server of MAILVERIFY_TEST_POSTGRES_URL (default: the loopback one of the
// development and CI machines), and a schema of its own for each store a test file opens, all dropped at the end of
// the file, so that runs never see each other's data.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import { openPostgresStore, type PostgresJobStore } from '../../packages/server/src/jobs/postgres-store.js';

export const POSTGRES_URL = process.env['MAILVERIFY_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Schemas for one test file: `fresh()` names a new one (created by the store that opens it), `open(schema)` opens a
 * store on it (closed at the end of the file), `sql` runs a statement on a connection of its own with the schema as
 * search path. Every schema named is dropped after the file's tests.
 */
export function postgresSchemas() {
  const prefix = `mv_test_${randomBytes(5).toString('hex')}`;
  const schemas: string[] = [];
  const stores: PostgresJobStore[] = [];
  afterAll(async () => {
    for (const store of stores.splice(0)) await store.close();
    if (schemas.length > 0) await sql('public', `DROP SCHEMA IF EXISTS ${schemas.join(', ')} CASCADE`);
  });
  const fresh = (): string => {
    const schema = `${prefix}_${schemas.length + 1}`;
    schemas.push(schema);
    return schema;
  };
  const open = async (schema: string, max?: number): Promise<PostgresJobStore> => {
    const store = await openPostgresStore({ connectionString: POSTGRES_URL, schema, ...(max === undefined ? {} : { max }) });
    stores.push(store);
    return store;
  };
  return { fresh, open, sql };
}

/** Runs one statement on a connection of its own, with `schema` as search path; answers the rows. */
export async function sql(schema: string, statement: string, parameters: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query(statement, parameters)).rows;
  } finally {
    await client.end();
  }
}
