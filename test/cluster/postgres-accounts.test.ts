// Users and credits in the PostgreSQL store, each store in a schema of its own: the shared UserStore and CreditStore
// suites (test/accounts/), then what several processes sharing one database bring: stores on the same schema racing
// to take a username, to update a user from the same etag, to reserve against a small balance, free credits or a
// monthly maximum, and to reserve while others give back; the schema of version 1 gaining the tables.
import { describe, expect, it } from 'vitest';
import { MICRO } from '../../packages/server/src/accounts/credits.js';
import { UsernameTakenError } from '../../packages/server/src/accounts/types.js';
import { openPostgresStore, type PostgresJobStore } from '../../packages/server/src/jobs/postgres-store.js';
import { describeCreditStore, reservation } from '../accounts/credit-store-suite.js';
import { describeUserStore, userRecord } from '../accounts/user-store-suite.js';
import { inputsOf, newJob } from '../jobs/job-store-suite.js';
import { POSTGRES_URL, postgresSchemas, sql } from './postgres.js';

const schemas = postgresSchemas();
const subject = {
  fresh: schemas.fresh,
  open: (schema: string) => openPostgresStore({ connectionString: POSTGRES_URL, schema, max: 4 }),
  // A reservation of a job never stored is given back once it is an hour old (another process may be storing it).
  ageReservations: async (schema: string) => {
    await sql(schema, `UPDATE credit_reservations SET reserved_at = now() - interval '61 minutes'`);
  },
};

describeUserStore('users in the PostgreSQL store', subject);
describeCreditStore('credits in the PostgreSQL store', subject);

/** `count` stores on one new schema, as `count` processes would have (each its own pool). */
async function processes(count: number, max = 4): Promise<{ schema: string; stores: PostgresJobStore[] }> {
  const schema = schemas.fresh();
  const stores: PostgresJobStore[] = [];
  for (let i = 0; i < count; i++) stores.push(await schemas.open(schema, max));
  return { schema, stores };
}

describe('users shared by several processes', () => {
  it('one of two processes creating the same username (in another case) at the same time gets it, the other UsernameTakenError', async () => {
    const { stores } = await processes(2);
    for (let round = 0; round < 20; round++) {
      const outcomes = await Promise.allSettled([
        stores[0]!.createUser(userRecord(`a${round}`, `name${round}`)),
        stores[1]!.createUser(userRecord(`b${round}`, `NAME${round}`)),
      ]);
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      const [refused] = outcomes.filter((outcome) => outcome.status === 'rejected');
      expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(UsernameTakenError);
    }
    expect((await stores[0]!.listUsers({ includeDeleted: true, sort: 'createdOn', offset: 0, limit: 100 })).data).toHaveLength(20);
  });

  it('of updates made from the same etag at the same time, exactly one is applied', async () => {
    const { stores } = await processes(3);
    await stores[0]!.createUser(userRecord('u1', 'alice'));
    let etag = 'u1-1';
    for (let round = 1; round <= 10; round++) {
      const updates = Array.from({ length: 9 }, (_, i) =>
        stores[i % 3]!.updateUser(userRecord('u1', 'alice', { etag: `u1-${round + 1}-${i}` }, `name ${i}`), etag),
      );
      const applied = await Promise.all(updates);
      expect(applied.filter(Boolean)).toHaveLength(1);
      const winner = applied.indexOf(true);
      etag = `u1-${round + 1}-${winner}`;
      expect(await stores[1]!.getUser('u1')).toMatchObject({ etag, detail: { displayName: `name ${winner}` } });
    }
  });
});

describe('credits shared by several processes', () => {
  it('never overdraw: of 60 reservations of 3 credits against 10, made by three processes at once, exactly 3 are taken', async () => {
    const { schema, stores } = await processes(3, 8);
    await stores[0]!.addCreditPacks(10 * MICRO);
    const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => stores[i % 3]!.reserveCredits(reservation(`job-${i}`, 3))));
    expect(outcomes.filter((outcome) => outcome === 'reserved')).toHaveLength(3);
    expect(outcomes.filter((outcome) => outcome === 'insufficient-credit')).toHaveLength(57);
    expect(await stores[1]!.creditBalance('2026-03-10')).toEqual({ packs: MICRO, freeUsed: 0 });
    expect(await sql(schema, 'SELECT COUNT(*)::integer AS n, SUM(packs)::integer AS packs FROM credit_reservations')).toEqual([{ n: 3, packs: 9 * MICRO }]);
  });

  it('keep to the free credits of the day and the monthly maximum under concurrent reservations', async () => {
    const { stores } = await processes(3, 8);
    // Free credits only (no packs): 5 a day.
    const free = await Promise.all(
      Array.from({ length: 30 }, (_, i) => stores[i % 3]!.reserveCredits(reservation(`free-${i}`, 1, { freeDaily: 5 * MICRO }))),
    );
    expect(free.filter((outcome) => outcome === 'reserved')).toHaveLength(5);
    expect(await stores[0]!.creditBalance('2026-03-10')).toEqual({ packs: 0, freeUsed: 5 * MICRO });
    // Packs aplenty, 10 a month, reservations spread over the days of April.
    await stores[0]!.addCreditPacks(1000 * MICRO);
    const monthly = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        stores[i % 3]!.reserveCredits(reservation(`month-${i}`, 1, { monthlyMax: 10 * MICRO, day: `2026-04-${String((i % 28) + 1).padStart(2, '0')}` })),
      ),
    );
    expect(monthly.filter((outcome) => outcome === 'reserved')).toHaveLength(10);
    expect(monthly.filter((outcome) => outcome === 'monthly-maximum-exceeded')).toHaveLength(30);
    const april = await stores[2]!.dailyUsage({ since: '2026-04-01', until: '2026-04-30', limit: 100 });
    expect(april.data.reduce((sum, day) => sum + day.creditPacks + day.freeCredits, 0)).toBe(10 * MICRO);
  });

  it('lose no update when reservations, give-backs, settlements and packs run at the same time', async () => {
    const { schema, stores } = await processes(3, 8);
    await stores[0]!.addCreditPacks(50 * MICRO);
    // 20 reservations to give back, 20 jobs to complete (each verifies nothing: all given back at completion).
    for (let i = 0; i < 40; i++) expect(await stores[0]!.reserveCredits(reservation(`r-${i}`, 1))).toBe('reserved');
    for (let i = 20; i < 40; i++) await stores[0]!.createJob(newJob(`r-${i}`), inputsOf(1));
    expect((await stores[0]!.creditBalance('2026-03-10')).packs).toBe(10 * MICRO);
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) work.push(stores[i % 3]!.releaseReservation(`r-${i}`));
    for (let i = 20; i < 40; i++) work.push(stores[i % 3]!.completeJob(`r-${i}`, '2025-03-01T10:06:00.000Z'));
    for (let i = 0; i < 10; i++) work.push(stores[i % 3]!.addCreditPacks(MICRO));
    const reserved = Array.from({ length: 30 }, (_, i) => stores[i % 3]!.reserveCredits(reservation(`n-${i}`, 2)));
    work.push(...reserved);
    await Promise.all(work);
    const taken = (await Promise.all(reserved)).filter((outcome) => outcome === 'reserved').length;
    // Whatever the order, every credit is accounted for: the balance and what the open reservations hold make 60.
    const [open] = await sql(schema, 'SELECT COUNT(*)::integer AS n, COALESCE(SUM(packs), 0)::bigint AS packs FROM credit_reservations');
    expect(open).toEqual({ n: taken, packs: String(taken * 2 * MICRO) });
    expect((await stores[1]!.creditBalance('2026-03-10')).packs).toBe(60 * MICRO - taken * 2 * MICRO);
    expect((await stores[2]!.dailyUsage({ limit: 10 })).data).toEqual([{ date: '2026-03-10', freeCredits: 0, creditPacks: taken * 2 * MICRO }]);
  });

  it('a reservation of a job not yet stored stays while another process may still be storing it', async () => {
    const { stores } = await processes(2);
    await stores[0]!.addCreditPacks(5 * MICRO);
    expect(await stores[0]!.reserveCredits(reservation('on-its-way', 2))).toBe('reserved');
    // Another process starting meanwhile.
    expect(await stores[1]!.settleReservations()).toBe(0);
    await stores[0]!.createJob(newJob('on-its-way'), inputsOf(2));
    await stores[0]!.endJob('on-its-way', 'Deleted', '2025-03-01T10:06:00.000Z');
    expect((await stores[1]!.creditBalance('2026-03-10')).packs).toBe(5 * MICRO);
  });
});

describe('the migration to version 2', () => {
  it('gives a schema of version 1 the user and credit tables, its jobs kept', async () => {
    const schema = schemas.fresh();
    const old = await schemas.open(schema);
    await old.createJob(newJob('kept-v1'), inputsOf(1));
    await old.close();
    await sql(schema, 'DROP TABLE users, credit_balance, credit_days, credit_reservations; DELETE FROM mailverify_migrations WHERE version = 2');
    const store = await schemas.open(schema);
    expect((await store.getJob('kept-v1'))?.noOfEntries).toBe(1);
    expect(await store.creditBalance('2026-01-01')).toEqual({ packs: 0, freeUsed: 0 });
    await store.createUser(userRecord('u1', 'alice'));
    expect(await sql(schema, 'SELECT version FROM mailverify_migrations ORDER BY version')).toEqual([{ version: 1 }, { version: 2 }]);
  });
});
