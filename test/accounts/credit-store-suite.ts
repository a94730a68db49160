// The behaviour every CreditStore shares, as one suite run against each store: SQLite in the normal suite
// (user-store.test.ts), PostgreSQL in the cluster suite (test/cluster/postgres-accounts.test.ts). Packs added up to
// the largest balance; reservations free credits first, refused for insufficient credit before the monthly maximum,
// taking nothing when refused; given back whole, or settled with the job's completion or end (Duplicate entries and
// entries never answered released); settled at start for finished jobs and jobs never stored; the daily usage paged.
import { describe, expect, it } from 'vitest';
import { MAX_BALANCE_MICRO, MICRO } from '../../packages/server/src/accounts/credits.js';
import type { ServiceStore } from '../../packages/server/src/jobs/types.js';
import { entryFor, inputsOf, newJob } from '../jobs/job-store-suite.js';
import { storeOpener, type ServiceStoreUnderTest } from './user-store-suite.js';

export interface CreditStoreUnderTest extends ServiceStoreUnderTest {
  /**
   * Makes the reservations of `place` old enough for `settleReservations` to give back those of jobs never stored (a
   * store shared by processes waits in case another is still storing its job); absent: they are given back at once.
   */
  ageReservations?(place: string): Promise<void>;
}

type Request = Parameters<ServiceStore['reserveCredits']>[0];
/** A reservation of `entries` entries at one credit each (unless told), no free credits, no maximum. */
export const reservation = (jobId: string, entries: number, overrides: Partial<Request> = {}): Request => ({
  jobId,
  day: '2026-03-10',
  entries,
  unitPrice: MICRO,
  freeDaily: null,
  monthlyMax: null,
  ...overrides,
});

/** The shared tests, in a `describe` named `name`. */
export function describeCreditStore(name: string, subject: CreditStoreUnderTest): void {
  describe(name, () => {
    const openStore = storeOpener(subject);

    it('adds packs to an empty balance up to its largest value, refusing amounts that are not positive integers', async () => {
      const store = await openStore();
      expect(await store.creditBalance('2026-03-10')).toEqual({ packs: 0, freeUsed: 0 });
      expect(await store.addCreditPacks(2_500_000)).toBe(2_500_000);
      expect(await store.addCreditPacks(1)).toBe(2_500_001);
      for (const bad of [0, -1, 1.5, Number.NaN]) await expect(store.addCreditPacks(bad)).rejects.toThrow(RangeError);
      await expect(store.addCreditPacks(MAX_BALANCE_MICRO)).rejects.toThrow(/largest value/);
      expect(await store.addCreditPacks(MAX_BALANCE_MICRO - 2_500_001)).toBe(MAX_BALANCE_MICRO);
      expect(await store.creditBalance('2026-03-10')).toEqual({ packs: MAX_BALANCE_MICRO, freeUsed: 0 });
    });

    it('reserves free credits of the day first, then packs; refuses insufficient credit and takes nothing', async () => {
      const store = await openStore();
      await store.addCreditPacks(5 * MICRO);
      const free = { freeDaily: 3 * MICRO };
      expect(await store.reserveCredits(reservation('j1', 2, free))).toBe('reserved');
      expect(await store.creditBalance('2026-03-10')).toEqual({ packs: 5 * MICRO, freeUsed: 2 * MICRO });
      // 1 free left and 5 of packs: 7 is too much, 6 is not.
      expect(await store.reserveCredits(reservation('j2', 7, free))).toBe('insufficient-credit');
      expect(await store.creditBalance('2026-03-10')).toEqual({ packs: 5 * MICRO, freeUsed: 2 * MICRO });
      expect(await store.reserveCredits(reservation('j2', 6, free))).toBe('reserved');
      expect(await store.creditBalance('2026-03-10')).toEqual({ packs: 0, freeUsed: 3 * MICRO });
      // Another day has its own free credits.
      expect(await store.creditBalance('2026-03-11')).toEqual({ packs: 0, freeUsed: 0 });
      expect(await store.reserveCredits(reservation('j3', 3, { ...free, day: '2026-03-11' }))).toBe('reserved');
      expect((await store.dailyUsage({ limit: 10 })).data).toEqual([
        { date: '2026-03-10', freeCredits: 3 * MICRO, creditPacks: 5 * MICRO },
        { date: '2026-03-11', freeCredits: 3 * MICRO, creditPacks: 0 },
      ]);
      await expect(store.reserveCredits(reservation('j4', 0))).rejects.toThrow(RangeError);
      await expect(store.reserveCredits(reservation('j4', 1, { unitPrice: 0.5 }))).rejects.toThrow(RangeError);
    });

    it('keeps the month under its maximum, free credits and every day of the month counted; insufficient credit answers first', async () => {
      const store = await openStore();
      await store.addCreditPacks(100 * MICRO);
      const capped = { monthlyMax: 10 * MICRO, freeDaily: 2 * MICRO };
      expect(await store.reserveCredits(reservation('j1', 6, { ...capped, day: '2026-01-05' }))).toBe('reserved');
      expect(await store.reserveCredits(reservation('j2', 5, { ...capped, day: '2026-01-31' }))).toBe('monthly-maximum-exceeded');
      expect(await store.reserveCredits(reservation('j2', 200, { ...capped, day: '2026-01-31' }))).toBe('insufficient-credit');
      expect(await store.reserveCredits(reservation('j2', 4, { ...capped, day: '2026-01-31' }))).toBe('reserved');
      expect(await store.reserveCredits(reservation('j3', 1, { ...capped, day: '2026-01-31' }))).toBe('monthly-maximum-exceeded');
      // February is a new month.
      expect(await store.reserveCredits(reservation('j3', 10, { ...capped, day: '2026-02-01' }))).toBe('reserved');
      expect((await store.creditBalance('2026-02-01')).packs).toBe((100 - 4 - 2 - 8) * MICRO);
    });

    it('gives a reservation back whole, once; an unknown one is nothing', async () => {
      const store = await openStore();
      await store.addCreditPacks(5 * MICRO);
      expect(await store.reserveCredits(reservation('j1', 4, { freeDaily: MICRO }))).toBe('reserved');
      await store.releaseReservation('j1');
      await store.releaseReservation('j1');
      await store.releaseReservation('unknown');
      expect(await store.creditBalance('2026-03-10')).toEqual({ packs: 5 * MICRO, freeUsed: 0 });
      // A day whose consumption was all given back is not listed.
      expect(await store.dailyUsage({ limit: 10 })).toEqual({ data: [], more: false });
    });

    it('settles with the completion: Duplicate entries released, packs given back first', async () => {
      const store = await openStore();
      await store.addCreditPacks(10 * MICRO);
      // 5 entries at 2 credits: 3 free, 7 of packs.
      expect(await store.reserveCredits(reservation('job-a', 5, { unitPrice: 2 * MICRO, freeDaily: 3 * MICRO }))).toBe('reserved');
      const inputs = inputsOf(5);
      await store.createJob(newJob('job-a'), inputs);
      await store.saveResults('job-a', inputs.map((input, index) => entryFor(index, input, index >= 3 ? 'Duplicate' : 'Success')));
      await store.completeJob('job-a', '2025-03-01T10:06:00.000Z');
      // 3 verified cost 6: 3 free and 3 of packs; 4 of packs come back.
      expect(await store.creditBalance('2026-03-10')).toEqual({ packs: 7 * MICRO, freeUsed: 3 * MICRO });
      expect((await store.dailyUsage({ limit: 10 })).data).toEqual([{ date: '2026-03-10', freeCredits: 3 * MICRO, creditPacks: 3 * MICRO }]);
      // Nothing left open.
      expect(await store.settleReservations()).toBe(0);
    });

    it('settles with the end of a job: entries never answered released, counted before they go', async () => {
      const store = await openStore();
      await store.addCreditPacks(10 * MICRO);
      expect(await store.reserveCredits(reservation('job-a', 4))).toBe('reserved');
      const inputs = inputsOf(4);
      await store.createJob(newJob('job-a'), inputs);
      await store.saveResults('job-a', [entryFor(0, inputs[0]!)]);
      await store.endJob('job-a', 'Deleted', '2025-03-01T10:06:00.000Z');
      expect((await store.creditBalance('2026-03-10')).packs).toBe(9 * MICRO);
      // A job without a reservation (credits were off) ends as before.
      await store.createJob(newJob('job-b'), inputsOf(2));
      await store.endJob('job-b', 'Deleted', '2025-03-01T10:06:00.000Z');
      expect((await store.creditBalance('2026-03-10')).packs).toBe(9 * MICRO);
    });

    it('settles at start the reservations of finished jobs and of jobs never stored, keeps those of running jobs', async () => {
      const place = subject.fresh();
      const store = await openStore(place);
      await store.addCreditPacks(20 * MICRO);
      const inputs = inputsOf(3);
      // What a crash between the reservation and the settlement leaves: finished jobs whose reservation is open.
      await store.createJob(newJob('completed'), inputs);
      await store.saveResults('completed', [entryFor(0, inputs[0]!), entryFor(1, inputs[1]!, 'Duplicate'), entryFor(2, inputs[2]!)]);
      await store.completeJob('completed', '2025-03-01T10:06:00.000Z');
      expect(await store.reserveCredits(reservation('completed', 3))).toBe('reserved');
      await store.createJob(newJob('deleted'), inputs);
      await store.endJob('deleted', 'Deleted', '2025-03-01T10:06:00.000Z');
      expect(await store.reserveCredits(reservation('deleted', 3))).toBe('reserved');
      expect(await store.reserveCredits(reservation('never-stored', 5))).toBe('reserved');
      expect(await store.reserveCredits(reservation('running', 4))).toBe('reserved');
      await store.createJob(newJob('running'), inputsOf(4));
      expect((await store.creditBalance('2026-03-10')).packs).toBe(5 * MICRO);
      await store.close();

      await subject.ageReservations?.(place);
      const reopened = await openStore(place);
      expect(await reopened.settleReservations()).toBe(3);
      // completed: 2 verified (one Duplicate); deleted: none; never stored: all back; running: 4 still reserved.
      expect((await reopened.creditBalance('2026-03-10')).packs).toBe((20 - 2 - 4) * MICRO);
      expect(await reopened.settleReservations()).toBe(0);
      await reopened.completeJob('running', '2025-03-01T10:07:00.000Z');
      expect((await reopened.creditBalance('2026-03-10')).packs).toBe((20 - 2) * MICRO);
    });

    it('lists the daily usage oldest first, bounded by day, paged forwards and backwards', async () => {
      const store = await openStore();
      await store.addCreditPacks(100 * MICRO);
      const days = ['2026-01-30', '2026-02-01', '2026-02-02', '2026-03-01'];
      for (const [i, day] of days.entries()) expect(await store.reserveCredits(reservation(`j${i}`, i + 1, { day }))).toBe('reserved');
      const usage = days.map((date, i) => ({ date, freeCredits: 0, creditPacks: (i + 1) * MICRO }));
      expect(await store.dailyUsage({ limit: 10 })).toEqual({ data: usage, more: false });
      expect(await store.dailyUsage({ since: '2026-02-01', until: '2026-02-28', limit: 10 })).toEqual({ data: usage.slice(1, 3), more: false });
      const first = await store.dailyUsage({ limit: 2 });
      expect(first).toEqual({ data: usage.slice(0, 2), more: true });
      expect(await store.dailyUsage({ after: 20260201, limit: 2 })).toEqual({ data: usage.slice(2), more: false });
      expect(await store.dailyUsage({ before: 20260301, limit: 2 })).toEqual({ data: usage.slice(1, 3), more: true });
      expect(await store.dailyUsage({ before: 20260201, since: '2026-01-01', limit: 2 })).toEqual({ data: usage.slice(0, 1), more: false });
      await expect(store.dailyUsage({ limit: 0 })).rejects.toThrow(/limit/);
      await expect(store.dailyUsage({ after: 1, before: 2, limit: 1 })).rejects.toThrow(/after and before/);
    });

    it('keeps balance, usage and open reservations across a reopening', async () => {
      const place = subject.fresh();
      const store = await openStore(place);
      await store.addCreditPacks(3 * MICRO);
      expect(await store.reserveCredits(reservation('j1', 2))).toBe('reserved');
      await store.close();
      const reopened = await openStore(place);
      expect(await reopened.creditBalance('2026-03-10')).toEqual({ packs: MICRO, freeUsed: 0 });
      await reopened.releaseReservation('j1');
      expect(await reopened.creditBalance('2026-03-10')).toEqual({ packs: 3 * MICRO, freeUsed: 0 });
    });
  });
}
