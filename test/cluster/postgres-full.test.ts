// The PostgreSQL store on a full disk: its entries table moved to a tablespace on a small tmpfs, a job too large for
// it is refused with StorageFullError (PostgreSQL's SQLSTATE 53100, disk_full) and leaves nothing; the same job is
// accepted once the table has room again. The PostgreSQL server runs on this machine (its tablespace directory is a
// local path) and mounting needs root, as for the SQLite store's full-disk tests.
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageFullError } from '../../packages/server/src/jobs/types.js';
import { inputsOf, newJob } from '../jobs/job-store-suite.js';
import { mountTmpfs, tmpfsForTests, unmountTmpfs } from '../lab/full-disk.js';
import { postgresSchemas, sql } from './postgres.js';

const schemas = postgresSchemas();
let dir: string;
let mountPoint: string;
let mounted = false;
let tablespace: string | undefined;
const schema = schemas.fresh();

const tmpfs = tmpfsForTests('the full-disk test of the PostgreSQL store');

beforeAll(async () => {
  if (!tmpfs.available) return;
  dir = mkdtempSync(join(tmpdir(), 'mailverify-pg-full-'));
  chmodSync(dir, 0o755);
  mountPoint = join(dir, 'tablespace');
  mountTmpfs(mountPoint, '4M');
  mounted = true;
  // The server's own user owns a tablespace's directory.
  const idOf = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
  chownSync(mountPoint, idOf('-u'), idOf('-g'));
  tablespace = `${schema}_space`;
  await sql('public', `CREATE TABLESPACE ${tablespace} LOCATION '${mountPoint}'`);
});

afterAll(async () => {
  if (tablespace !== undefined) {
    // The store's schema first: a tablespace is dropped only once empty.
    await sql('public', `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await sql('public', `DROP TABLESPACE IF EXISTS ${tablespace}`);
  }
  if (mounted) unmountTmpfs(mountPoint);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

tmpfs.describe('a full disk', () => {
  it('refuses a job that does not fit with StorageFullError, keeps nothing of it, and takes it once there is room', async () => {
    const store = await schemas.open(schema);
    await store.createJob(newJob('small'), inputsOf(10));
    await sql(schema, `ALTER TABLE entries SET TABLESPACE ${tablespace}`);
    const error = await store.createJob(newJob('large'), inputsOf(200_000)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StorageFullError);
    expect((error as StorageFullError).cause).toMatchObject({ code: '53100' });
    expect(await store.getJob('large')).toBeNull();
    expect((await store.listJobs({ sort: 'createdOn', limit: 10 })).data.map((job) => job.id)).toEqual(['small']);
    expect(await store.pendingInputs('small', -1, 100)).toHaveLength(10);
    await sql(schema, 'ALTER TABLE entries SET TABLESPACE pg_default');
    expect(await store.createJob(newJob('large'), inputsOf(200_000))).toMatchObject({ noOfEntries: 200_000 });
  });
});
