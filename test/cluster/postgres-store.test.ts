// The PostgreSQL job store on the PostgreSQL server of the cluster suite, each store in a schema of its own: the shared
// JobStore suite (test/jobs/job-store-suite.ts), then what is PostgreSQL's own: migrations under concurrent starts,
// what an opening finishes after a stopped process, the schema option.
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../packages/server/src/jobs/postgres-store.js';
import { createAnswered, describeJobStore, inputsOf, newJob } from '../jobs/job-store-suite.js';
import { POSTGRES_URL, postgresSchemas, sql } from './postgres.js';

const schemas = postgresSchemas();

describeJobStore('the PostgreSQL store', {
  fresh: schemas.fresh,
  open: (schema) => openPostgresStore({ connectionString: POSTGRES_URL, schema, max: 4 }),
  duplicateId: /duplicate key value violates unique constraint "jobs_id_key"/,
});

describe('migrations', () => {
  it('brings a fresh schema to the current version once when four processes open it at the same time', async () => {
    const schema = schemas.fresh();
    // Four pools (as four processes would have), opening together.
    const stores = await Promise.all([1, 2, 3, 4].map(() => schemas.open(schema, 2)));
    expect(await sql(schema, 'SELECT version FROM mailverify_migrations ORDER BY version')).toEqual([{ version: 1 }, { version: 2 }]);
    // Every one of them works on the same tables.
    await stores[0]!.createJob(newJob('shared'), inputsOf(3));
    for (const store of stores) expect((await store.getJob('shared'))?.noOfEntries).toBe(3);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('refuses a schema of a newer version, and a schema name it would have to quote', async () => {
    const schema = schemas.fresh();
    await (await schemas.open(schema)).close();
    await sql(schema, 'INSERT INTO mailverify_migrations (version) VALUES (3)');
    await expect(openPostgresStore({ connectionString: POSTGRES_URL, schema })).rejects.toThrow(/schema version 3/);
    await expect(openPostgresStore({ connectionString: POSTGRES_URL, schema: 'Jobs; DROP' })).rejects.toThrow(TypeError);
  });
});

describe('an opening after a stopped process', () => {
  it('removes drafts left untouched for an hour, keeps the drafts of processes still filling them', async () => {
    const schema = schemas.fresh();
    const store = await schemas.open(schema);
    const stale = await store.draftJob();
    await stale.add(inputsOf(30_000));
    const live = await store.draftJob();
    await live.add(inputsOf(2));
    await sql(schema, `UPDATE jobs SET touched_at = now() - interval '61 minutes' WHERE sequence = (SELECT MIN(sequence) FROM jobs)`);
    // Another process starting meanwhile.
    await (await schemas.open(schema)).close();
    expect(await sql(schema, 'SELECT job, COUNT(*)::integer AS n FROM entries GROUP BY job')).toEqual([
      { job: expect.anything(), n: 2 },
    ]);
    await expect(stale.commit(newJob('stale'))).rejects.toThrow(/removed/);
    expect(await live.commit(newJob('live'))).toMatchObject({ noOfEntries: 2 });
    expect((await store.unfinishedJobs()).map((job) => job.id)).toEqual(['live']);
  });

  it('finishes ending a job whose entries were left when the process stopped', async () => {
    const schema = schemas.fresh();
    const store = await schemas.open(schema);
    await createAnswered(store, 'job-a', 30, (i) => i < 10);
    await createAnswered(store, 'job-b', 5);
    // The state endJob leaves between its two steps: a tombstone that still has entries.
    await sql(schema, `UPDATE jobs SET status = 'Deleted', ended_on = '2025-03-02T00:00:00.000Z' WHERE id = 'job-a'`);
    expect(await store.saveResults('job-a', [])).toBe(0);
    await (await schemas.open(schema)).close();
    expect(await sql(schema, 'SELECT COUNT(*)::integer AS n FROM entries')).toEqual([{ n: 5 }]);
    expect(await store.getJob('job-a')).toMatchObject({ status: 'Deleted', noOfCompleted: 10 });
  });
});
