// The behaviour every JobStore shares, as one suite run against each store: SQLite in the normal suite
// (sqlite-store.test.ts), PostgreSQL in the cluster suite (test/cluster/postgres-store.test.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENTRY_FIELDS, type Entry } from '../../packages/mailverify/src/engine/entry.js';
import type { CallbackEvent, JobInput, JobStore, NewJob } from '../../packages/server/src/jobs/types.js';
import type { StatusCode } from '../../packages/mailverify/src/status/catalogue.js';

/** A store under test. */
export interface StoreUnderTest {
  /** A new, empty place for a store (a file, a schema). */
  fresh(): string;
  /** Opens a store on a place: opened again after closing, it finds the same data. */
  open(place: string): Promise<JobStore>;
  /** What the store says when refusing a second job with an id already taken. */
  readonly duplicateId: RegExp;
}

export function newJob(id: string, overrides: Partial<NewJob> = {}): NewJob {
  return {
    id,
    owner: 'owner-1',
    clientIP: '192.0.2.7',
    quality: 'Standard',
    deduplication: 'Off',
    interface: 'v2',
    createdOn: '2025-03-01T10:00:00.000Z',
    ...overrides,
  };
}

export const inputsOf = (count: number): JobInput[] =>
  Array.from({ length: count }, (_, i) => (i % 2 === 0 ? { inputData: `user${i}@example.org` } : { inputData: `user${i}@example.org`, custom: `row ${i}` }));

export const STATUSES: StatusCode[] = ['Success', 'MailboxDoesNotExist', 'ServerIsCatchAll', 'DomainDoesNotExist'];
export const statusOf = (index: number): StatusCode => STATUSES[index % STATUSES.length]!;

export function entryFor(index: number, input: JobInput, status: StatusCode = statusOf(index), completedOn = '2025-03-01T10:05:00.000Z'): Entry {
  // Built field by field in ENTRY_FIELDS order, as the engine builds entries.
  const entry = { index, inputData: input.inputData, classification: status === 'Success' ? 'Deliverable' : 'Undeliverable', status } as Entry;
  entry.emailAddress = input.inputData;
  entry.isFreeEmailAddress = false;
  if (input.custom !== undefined) entry.custom = input.custom;
  entry.completedOn = completedOn;
  return entry;
}

export async function createAnswered(store: JobStore, id: string, count: number, answered: (index: number) => boolean = () => true) {
  const inputs = inputsOf(count);
  await store.createJob(newJob(id), inputs);
  const entries = inputs.flatMap((input, index) => (answered(index) ? [entryFor(index, input)] : []));
  await store.saveResults(id, entries);
  return entries;
}

/** The shared tests, in a `describe` named `name`. */
export function describeJobStore(name: string, subject: StoreUnderTest): void {
  describe(name, () => {
    const open: JobStore[] = [];
    async function openStore(place = subject.fresh()): Promise<JobStore> {
      const store = await subject.open(place);
      open.push(store);
      return store;
    }
    afterEach(async () => {
      for (const store of open.splice(0)) await store.close();
    });

    describe('jobs', () => {
      it('creates a job with its inputs and reads it back, optional fields left out when absent', async () => {
        const store = await openStore();
        const plain = await store.createJob(newJob('job-a'), inputsOf(3));
        expect(plain).toEqual({ ...newJob('job-a'), status: 'InProgress', noOfEntries: 3, noOfCompleted: 0, sequence: plain.sequence });
        const stored = await store.getJob('job-a');
        expect(stored).toEqual(plain);
        expect(Object.keys(stored!)).not.toContain('name');
        expect(Object.values(stored!)).not.toContain(undefined);

        const full = newJob('job-b', {
          name: 'spring list',
          priority: 200,
          retentionMs: 3_600_000,
          callback: { url: 'https://hooks.example.org/done', version: '1.0', skipServerCertificateValidation: true },
          interface: 'v1.4',
          deduplication: 'Relaxed',
          quality: 'Extreme',
        });
        const created = await store.createJob(full, [{ inputData: 'x@example.org' }]);
        expect(created.sequence).toBeGreaterThan(plain.sequence);
        expect(await store.getJob('job-b')).toEqual({ ...full, status: 'InProgress', noOfEntries: 1, noOfCompleted: 0, sequence: created.sequence });
        expect(await store.getJob('job-unknown')).toBeNull();
      });

      it('refuses a second job with the same id, with the database’s message, and keeps the first intact', async () => {
        const store = await openStore();
        await store.createJob(newJob('job-a'), inputsOf(2));
        await expect(store.createJob(newJob('job-a'), inputsOf(5))).rejects.toThrow(subject.duplicateId);
        expect((await store.getJob('job-a'))!.noOfEntries).toBe(2);
        expect(await store.pendingInputs('job-a', -1, 10)).toHaveLength(2);
      });

      it('refuses times that are not ISO 8601 UTC with milliseconds, and limits below 1', async () => {
        const store = await openStore();
        await expect(store.createJob(newJob('job-a', { createdOn: '2025-03-01 10:00' }), [])).rejects.toThrow(RangeError);
        await store.createJob(newJob('job-b'), inputsOf(1));
        await expect(store.completeJob('job-b', 'yesterday')).rejects.toThrow(/completedOn/);
        await expect(store.entries('job-b', { limit: 0 })).rejects.toThrow(/limit/);
        await expect(store.listJobs({ owner: 'owner-1', sort: 'createdOn', limit: 1.5 })).rejects.toThrow(/limit/);
      });
    });

    describe('creating a large job', () => {
      it('lets other work run while it stores a large job’s inputs, and shows the job only when whole', async () => {
        const place = subject.fresh();
        const store = await openStore(place);
        let ticks = 0;
        let seenWhileCreating: unknown = 'not looked';
        const timer = setInterval(() => {
          ticks++;
          if (ticks === 1) void store.getJob('big').then((job) => (seenWhileCreating = job));
        }, 0);
        try {
          const job = await store.createJob(newJob('big'), inputsOf(100_000));
          expect(job).toMatchObject({ status: 'InProgress', noOfEntries: 100_000 });
        } finally {
          clearInterval(timer);
        }
        expect(ticks).toBeGreaterThan(0);
        expect(seenWhileCreating).toBeNull();
        expect(await store.getJob('big')).toMatchObject({ status: 'InProgress', noOfEntries: 100_000 });
        expect((await store.pendingInputs('big', 99_990, 100)).map((p) => p.index)).toEqual([...Array(9).keys()].map((i) => 99_991 + i));
      });
    });

    describe('inputs and results', () => {
      it('hands out inputs without a result in index order, from an index on, with their custom data', async () => {
        const store = await openStore();
        const inputs = inputsOf(10);
        await store.createJob(newJob('job-a'), inputs);
        expect(await store.pendingInputs('job-a', -1, 3)).toEqual([
          { index: 0, inputData: 'user0@example.org' },
          { index: 1, inputData: 'user1@example.org', custom: 'row 1' },
          { index: 2, inputData: 'user2@example.org' },
        ]);
        await store.saveResults('job-a', [3, 4, 6].map((i) => entryFor(i, inputs[i]!)));
        expect((await store.pendingInputs('job-a', 2, 100)).map((input) => input.index)).toEqual([5, 7, 8, 9]);
        expect(await store.pendingInputs('job-unknown', -1, 10)).toEqual([]);
      });

      it('keeps the first result of an entry and counts only first results', async () => {
        const store = await openStore();
        const inputs = inputsOf(4);
        await store.createJob(newJob('job-a'), inputs);
        const first = entryFor(1, inputs[1]!, 'Success');
        expect(await store.saveResults('job-a', [first, entryFor(2, inputs[2]!)])).toBe(2);
        const second = entryFor(1, inputs[1]!, 'MailboxDoesNotExist', '2025-03-01T11:00:00.000Z');
        // Entry 1 again (ignored), entry 3 new, entry 3 twice in the same call, and an index the job does not have.
        expect(await store.saveResults('job-a', [second, entryFor(3, inputs[3]!), entryFor(3, inputs[3]!, 'Success'), entryFor(9, { inputData: 'z' })])).toBe(1);
        expect(await store.entry('job-a', 1)).toEqual(first);
        expect((await store.entry('job-a', 3))!.status).toBe(statusOf(3));
        expect((await store.getJob('job-a'))!.noOfCompleted).toBe(3);
        await expect(store.saveResults('job-unknown', [first])).rejects.toThrow(/job-unknown/);
      });

      it('gives entries back with every field, in ENTRY_FIELDS order, as saved', async () => {
        const store = await openStore();
        await store.createJob(newJob('job-a'), [{ inputData: ' Ann@Example.org ', custom: 'c' }, { inputData: 'plain' }]);
        const full: Entry = {
          index: 0,
          inputData: ' Ann@Example.org ',
          classification: 'Deliverable',
          status: 'Success',
          emailAddress: 'Ann@Example.org',
          emailAddressLocalPart: 'Ann',
          emailAddressDomainPart: 'Example.org',
          asciiEmailAddressDomainPart: 'example.org',
          hasInternationalMailboxName: false,
          hasInternationalDomainName: true,
          isDisposableEmailAddress: false,
          isRoleAccount: true,
          isFreeEmailAddress: false,
          syntaxFailureIndex: 0,
          suggestions: ['ann@example.com', 'ann@example.net'],
          custom: 'c',
          duplicateOf: 7,
          completedOn: '2025-03-01T10:05:00.123Z',
        };
        expect(Object.keys(full)).toEqual([...ENTRY_FIELDS]);
        // Fields given out of order, and an inputData that differs from the stored input.
        const shuffled = Object.fromEntries(Object.entries(full).reverse()) as unknown as Entry;
        const other: Entry = { index: 1, inputData: 'plain, rewritten', classification: 'Undeliverable', status: 'AtSignNotFound', syntaxFailureIndex: 5, completedOn: '2025-03-01T10:05:00.124Z' };
        expect(await store.saveResults('job-a', [shuffled, other])).toBe(2);
        const read = await store.entry('job-a', 0);
        expect(read).toEqual(full);
        expect(Object.keys(read!)).toEqual([...ENTRY_FIELDS]);
        const readOther = await store.entry('job-a', 1);
        expect(readOther).toEqual(other);
        expect(Object.keys(readOther!)).toEqual(['index', 'inputData', 'classification', 'status', 'syntaxFailureIndex', 'completedOn']);
      });

      it('keeps an entry’s evidence, after the service’s fields', async () => {
        const store = await openStore();
        await store.createJob(newJob('job-a'), [{ inputData: 'nobody@example.org' }, { inputData: 'who@example.org' }]);
        const evidence = {
          mx: ['mx1.example.org', 'mx2.example.org'],
          exchanger: 'mx1.example.org',
          address: '192.0.2.1',
          egress: 'default',
          replies: [{ phase: 'rcpt' as const, code: 550, enhancedCode: '5.1.1', text: '5.1.1 User unknown' }],
          rule: 'rcpt-user-unknown-code' as const,
        };
        const completedOn = '2025-03-01T10:05:00.123Z';
        const entry: Entry = { index: 0, inputData: 'nobody@example.org', classification: 'Undeliverable', status: 'MailboxDoesNotExist', completedOn, evidence };
        const empty: Entry = { index: 1, inputData: 'who@example.org', classification: 'Undeliverable', status: 'DomainDoesNotExist', completedOn, evidence: {} };
        expect(await store.saveResults('job-a', [entry, empty])).toBe(2);
        const read = await store.entry('job-a', 0);
        expect(read).toEqual(entry);
        expect(Object.keys(read!).at(-1)).toBe('evidence');
        expect(await store.entry('job-a', 1)).toEqual(empty);
      });

      it('keeps the mixed-script flag, after the service’s fields and before the evidence', async () => {
        const store = await openStore();
        await store.createJob(newJob('job-a'), [{ inputData: 'jane@gm\u0430il.com' }, { inputData: 'joe@gm\u0430il.com' }]);
        const completedOn = '2025-03-01T10:05:00.123Z';
        const common = { classification: 'Deliverable', status: 'Success' as const, suggestions: ['jane@gmail.com'], completedOn };
        const flagged: Entry = { index: 0, inputData: 'jane@gm\u0430il.com', ...common, hasMixedScriptDomainName: true };
        const both: Entry = { index: 1, inputData: 'joe@gm\u0430il.com', ...common, hasMixedScriptDomainName: true, evidence: { mx: ['mx.example.org'] } };
        expect(await store.saveResults('job-a', [flagged, both])).toBe(2);
        const read = await store.entry('job-a', 0);
        expect(read).toEqual(flagged);
        expect(Object.keys(read!).at(-1)).toBe('hasMixedScriptDomainName');
        const readBoth = await store.entry('job-a', 1);
        expect(readBoth).toEqual(both);
        expect(Object.keys(readBoth!).slice(-2)).toEqual(['hasMixedScriptDomainName', 'evidence']);
      });

      it('answers null for an entry without a result, outside the job, or of an unknown job', async () => {
        const store = await openStore();
        await createAnswered(store, 'job-a', 4, (i) => i !== 2);
        expect(await store.entry('job-a', 2)).toBeNull();
        expect(await store.entry('job-a', 4)).toBeNull();
        expect(await store.entry('job-a', -1)).toBeNull();
        expect(await store.entry('job-unknown', 0)).toBeNull();
        expect((await store.entry('job-a', 3))!.index).toBe(3);
      });
    });

    describe('entry pages', () => {
      // 60 entries, every fifth without a result; statuses cycle through STATUSES.
      const answered = (i: number) => i % 5 !== 4;
      let store: JobStore;
      let all: Entry[];
      beforeAll(async () => {
        store = await subject.open(subject.fresh());
        all = await createAnswered(store, 'job-a', 60, answered);
      });
      afterAll(() => store.close());

      async function walk(filter: { include?: StatusCode[]; exclude?: StatusCode[] }, limit: number, backwards: boolean) {
        const seen: number[] = [];
        // Backwards from past the last index (the job has 60), forwards from the start.
        let cursor: number | undefined = backwards ? 60 : undefined;
        for (;;) {
          const page = await store.entries('job-a', { ...filter, limit, ...(backwards ? { before: cursor } : { after: cursor }) });
          const indexes = page.data.map((e) => e.index);
          expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
          expect(indexes.length).toBeLessThanOrEqual(limit);
          if (backwards) seen.unshift(...indexes);
          else seen.push(...indexes);
          if (!page.more) return seen;
          expect(indexes).toHaveLength(limit);
          cursor = backwards ? indexes[0] : indexes.at(-1);
        }
      }

      const cases: { name: string; filter: { include?: StatusCode[]; exclude?: StatusCode[] }; keep: (e: Entry) => boolean }[] = [
        { name: 'no filter', filter: {}, keep: () => true },
        { name: 'include', filter: { include: ['MailboxDoesNotExist', 'DomainDoesNotExist'] }, keep: (e) => e.status === 'MailboxDoesNotExist' || e.status === 'DomainDoesNotExist' },
        { name: 'exclude', filter: { exclude: ['Success'] }, keep: (e) => e.status !== 'Success' },
        { name: 'include and exclude', filter: { include: ['Success', 'ServerIsCatchAll'], exclude: ['Success'] }, keep: (e) => e.status === 'ServerIsCatchAll' },
        { name: 'a status no entry has', filter: { include: ['MailboxIsDea'] }, keep: () => false },
      ];
      for (const { name, filter, keep } of cases) {
        it(`walks every answered entry forwards and backwards (${name})`, async () => {
          const expected = all.filter(keep).map((e) => e.index);
          for (const limit of [1, 7, 12, 100]) {
            expect(await walk(filter, limit, false)).toEqual(expected);
            expect(await walk(filter, limit, true)).toEqual(expected);
          }
        });
      }

      it('gives the entries themselves, only those with a result, and `more` exactly when another matches', async () => {
        const page = await store.entries('job-a', { after: 10, limit: 5 });
        expect(page.data).toEqual(all.filter((e) => e.index > 10).slice(0, 5));
        expect(page.data.map((e) => e.index)).toEqual([11, 12, 13, 15, 16]);
        expect(page.more).toBe(true);
        // The last answered entry is 58 (59 has none): a page ending there has no more.
        expect(await store.entries('job-a', { after: 55, limit: 3 })).toEqual({ data: all.filter((e) => e.index > 55), more: false });
        expect((await store.entries('job-a', { after: 55, limit: 2 })).more).toBe(true);
        const back = await store.entries('job-a', { before: 3, limit: 3 });
        expect(back).toEqual({ data: all.slice(0, 3), more: false });
        // 4 has no result: a page before 5 ends at 3 and holds what a page before 4 holds.
        expect(await store.entries('job-a', { before: 5, limit: 4 })).toEqual({ data: all.slice(0, 4), more: false });
        expect(await store.entries('job-a', { before: 6, limit: 4 })).toEqual({ data: [1, 2, 3, 5].map((i) => all.find((e) => e.index === i)), more: true });
        const included = await store.entries('job-a', { include: ['DomainDoesNotExist'], before: 40, limit: 2 });
        expect(included.data.map((e) => [e.index, e.status])).toEqual([[31, 'DomainDoesNotExist'], [35, 'DomainDoesNotExist']]);
        expect(included.more).toBe(true);
        expect(await store.entries('job-unknown', { limit: 5 })).toEqual({ data: [], more: false });
        await expect(store.entries('job-a', { after: 1, before: 9, limit: 5 })).rejects.toThrow(RangeError);
      });
    });

    describe('job lists', () => {
      let store: JobStore;
      // Creation order: a, b, c, d share one time; e is later; f is earlier than all; g belongs to someone else.
      const times: Record<string, string> = {
        a: '2025-03-02T00:00:00.000Z',
        b: '2025-03-02T00:00:00.000Z',
        c: '2025-03-02T00:00:00.000Z',
        d: '2025-03-02T00:00:00.000Z',
        e: '2025-03-03T00:00:00.000Z',
        f: '2025-03-01T00:00:00.000Z',
        g: '2025-03-02T00:00:00.000Z',
      };
      const sequences: Record<string, number> = {};
      beforeAll(async () => {
        store = await subject.open(subject.fresh());
        for (const [id, createdOn] of Object.entries(times)) {
          const job = await store.createJob(newJob(id, { createdOn, owner: id === 'g' ? 'owner-2' : 'owner-1' }), inputsOf(2));
          sequences[id] = job.sequence;
        }
        await store.saveResults('b', inputsOf(2).map((input, i) => entryFor(i, input)));
        await store.completeJob('b', '2025-03-02T01:00:00.000Z');
        await store.endJob('c', 'Deleted', '2025-03-04T00:00:00.000Z');
        await store.endJob('f', 'Expired', '2025-03-04T00:00:00.000Z');
      });
      afterAll(() => store.close());

      /** Every job of the query page by page: forwards from the start, or backwards from the last one (included). */
      async function walk(query: Omit<Parameters<JobStore['listJobs']>[0], 'owner' | 'limit'>, limit: number, backwards = false) {
        const ids: string[] = [];
        let cursor: number | undefined;
        if (backwards) {
          const everything = await store.listJobs({ owner: 'owner-1', limit: 100, ...query });
          const last = everything.data.at(-1);
          if (last === undefined) return ids;
          ids.push(last.id);
          cursor = last.sequence;
        }
        for (;;) {
          const page = await store.listJobs({ owner: 'owner-1', limit, ...query, ...(backwards ? { beforeSequence: cursor } : { afterSequence: cursor }) });
          if (backwards) ids.unshift(...page.data.map((job) => job.id));
          else ids.push(...page.data.map((job) => job.id));
          if (!page.more) return ids;
          cursor = (backwards ? page.data[0] : page.data.at(-1))!.sequence;
        }
      }

      it('lists newest first by default order, equal times in creation order, without tombstones', async () => {
        const page = await store.listJobs({ owner: 'owner-1', sort: '-createdOn', limit: 10 });
        expect(page.data.map((job) => job.id)).toEqual(['e', 'a', 'b', 'd']);
        expect(page.more).toBe(false);
        expect(page.data[1]).toEqual({ ...newJob('a', { createdOn: times['a'] }), status: 'InProgress', noOfEntries: 2, noOfCompleted: 0, sequence: sequences['a'] });
        expect(page.data[2]).toMatchObject({ status: 'Completed', completedOn: '2025-03-02T01:00:00.000Z', noOfCompleted: 2 });
        expect((await store.listJobs({ owner: 'owner-1', sort: 'createdOn', limit: 10 })).data.map((job) => job.id)).toEqual(['a', 'b', 'd', 'e']);
      });

      it('pages through ties in both directions and both orders', async () => {
        const include = ['InProgress', 'Completed', 'Deleted', 'Expired'] as const;
        const newest = ['e', 'a', 'b', 'c', 'd', 'f'];
        const oldest = ['f', 'a', 'b', 'c', 'd', 'e'];
        for (const limit of [1, 2, 3, 4, 6]) {
          expect(await walk({ sort: '-createdOn', include }, limit)).toEqual(newest);
          expect(await walk({ sort: '-createdOn', include }, limit, true)).toEqual(newest);
          expect(await walk({ sort: 'createdOn', include }, limit)).toEqual(oldest);
          expect(await walk({ sort: 'createdOn', include }, limit, true)).toEqual(oldest);
        }
        const afterB = await store.listJobs({ owner: 'owner-1', sort: '-createdOn', include, afterSequence: sequences['b'], limit: 2 });
        expect(afterB.data.map((job) => job.id)).toEqual(['c', 'd']);
        expect(afterB.more).toBe(true);
        const beforeB = await store.listJobs({ owner: 'owner-1', sort: '-createdOn', include, beforeSequence: sequences['b'], limit: 5 });
        expect(beforeB).toMatchObject({ more: false });
        expect(beforeB.data.map((job) => job.id)).toEqual(['e', 'a']);
      });

      it('lists tombstones only when the filter names Deleted or Expired', async () => {
        expect(await walk({ sort: '-createdOn', include: ['Deleted'] }, 10)).toEqual(['c']);
        expect(await walk({ sort: '-createdOn', include: ['Expired', 'InProgress'] }, 10)).toEqual(['e', 'a', 'd', 'f']);
        expect(await walk({ sort: '-createdOn', exclude: ['InProgress'] }, 10)).toEqual(['b']);
        expect(await walk({ sort: '-createdOn', include: ['Deleted', 'Completed'], exclude: ['Deleted'] }, 10)).toEqual(['b']);
        const tombstone = (await store.listJobs({ owner: 'owner-1', sort: '-createdOn', include: ['Deleted'], limit: 1 })).data[0];
        expect(tombstone).toMatchObject({ id: 'c', status: 'Deleted', endedOn: '2025-03-04T00:00:00.000Z' });
      });

      it('bounds createdOn inclusively and keeps to the owner', async () => {
        expect(await walk({ sort: 'createdOn', createdSince: '2025-03-02T00:00:00.000Z' }, 2)).toEqual(['a', 'b', 'd', 'e']);
        expect(await walk({ sort: 'createdOn', createdUntil: '2025-03-02T00:00:00.000Z' }, 2)).toEqual(['a', 'b', 'd']);
        expect(
          await walk({ sort: '-createdOn', createdSince: '2025-03-02T00:00:00.000Z', createdUntil: '2025-03-02T23:59:59.999Z' }, 2, true),
        ).toEqual(['a', 'b', 'd']);
        const other = await store.listJobs({ owner: 'owner-2', sort: '-createdOn', limit: 10 });
        expect(other.data.map((job) => job.id)).toEqual(['g']);
        expect(await store.listJobs({ owner: 'nobody', sort: '-createdOn', limit: 10 })).toEqual({ data: [], more: false });
      });

      it('refuses a cursor that names no job', async () => {
        await expect(store.listJobs({ owner: 'owner-1', sort: '-createdOn', afterSequence: 999, limit: 2 })).rejects.toThrow(/sequence 999/);
      });
    });

    describe('job life', () => {
      it('completes jobs, lists unfinished ones, and keeps a completed job from completing again', async () => {
        const store = await openStore();
        await createAnswered(store, 'job-a', 3);
        await store.createJob(newJob('job-b'), inputsOf(2));
        await store.createJob(newJob('job-c'), inputsOf(2));
        await store.completeJob('job-a', '2025-03-01T11:00:00.000Z');
        expect((await store.unfinishedJobs()).map((job) => job.id)).toEqual(['job-b', 'job-c']);
        await store.completeJob('job-a', '2025-03-09T11:00:00.000Z');
        expect(await store.getJob('job-a')).toMatchObject({ status: 'Completed', completedOn: '2025-03-01T11:00:00.000Z', noOfCompleted: 3 });
        await expect(store.completeJob('job-unknown', '2025-03-01T11:00:00.000Z')).rejects.toThrow(/job-unknown/);
      });

      it('ends a job: its entries go, a tombstone stays, and it never comes back to life', async () => {
        const store = await openStore();
        await createAnswered(store, 'job-a', 50, (i) => i < 30);
        await store.endJob('job-a', 'Deleted', '2025-03-02T00:00:00.000Z');
        const tombstone = await store.getJob('job-a');
        expect(tombstone).toMatchObject({ status: 'Deleted', endedOn: '2025-03-02T00:00:00.000Z', noOfEntries: 50, noOfCompleted: 30 });
        expect(await store.entries('job-a', { limit: 100 })).toEqual({ data: [], more: false });
        expect(await store.pendingInputs('job-a', -1, 100)).toEqual([]);
        await store.completeJob('job-a', '2025-03-02T00:00:01.000Z');
        await store.endJob('job-a', 'Expired', '2025-03-05T00:00:00.000Z');
        expect(await store.saveResults('job-a', [entryFor(40, { inputData: 'user40@example.org' })])).toBe(0);
        expect(await store.getJob('job-a')).toEqual(tombstone);
        expect(await store.unfinishedJobs()).toEqual([]);
        await expect(store.endJob('job-a', 'Completed' as 'Deleted', '2025-03-05T00:00:00.000Z')).rejects.toThrow(RangeError);
      });

      it('finds completed jobs whose own or default retention has ended, the end itself included', async () => {
        const store = await openStore();
        const hour = 3_600_000;
        for (const [id, retentionMs] of [['own-1h', hour], ['own-3h', 3 * hour], ['default', undefined], ['running', hour]] as const) {
          await store.createJob(newJob(id, retentionMs === undefined ? {} : { retentionMs }), inputsOf(1));
          if (id !== 'running') await store.completeJob(id, '2025-03-01T12:00:00.000Z');
        }
        const expired = async (now: string) => (await store.expiredJobs(now, 2 * hour)).map((job) => job.id);
        expect(await expired('2025-03-01T12:59:59.999Z')).toEqual([]);
        expect(await expired('2025-03-01T13:00:00.000Z')).toEqual(['own-1h']);
        expect(await expired('2025-03-01T14:00:00.000Z')).toEqual(['own-1h', 'default']);
        expect(await expired('2025-03-01T15:00:00.000Z')).toEqual(['own-1h', 'own-3h', 'default']);
        await store.endJob('own-1h', 'Expired', '2025-03-01T15:00:00.000Z');
        expect(await expired('2025-03-01T15:00:00.000Z')).toEqual(['own-3h', 'default']);
        expect(await store.expiredJobs('2025-03-01T15:00:00.000Z', 0)).toHaveLength(2);
      });

      it('purges tombstones ended before a time, and nothing else', async () => {
        const store = await openStore();
        for (const id of ['old', 'recent', 'live', 'done']) await createAnswered(store, id, 2);
        await store.completeJob('done', '2025-01-01T00:00:00.000Z');
        await store.endJob('old', 'Expired', '2025-02-01T00:00:00.000Z');
        await store.endJob('recent', 'Deleted', '2025-03-01T00:00:00.000Z');
        expect(await store.purgeTombstones('2025-02-01T00:00:00.000Z')).toBe(0);
        expect(await store.purgeTombstones('2025-02-01T00:00:00.001Z')).toBe(1);
        expect(await store.getJob('old')).toBeNull();
        expect(await store.getJob('recent')).toMatchObject({ status: 'Deleted' });
        expect(await store.purgeTombstones('2030-01-01T00:00:00.000Z')).toBe(1);
        expect((await store.listJobs({ owner: 'owner-1', sort: 'createdOn', include: ['InProgress', 'Completed', 'Deleted', 'Expired'], limit: 10 })).data.map((job) => job.id)).toEqual(['live', 'done']);
      });
    });

    describe('settings and reopening', () => {
      it('keeps settings, replacing a value', async () => {
        const store = await openStore();
        expect(await store.getSetting('root-id')).toBeNull();
        await store.setSetting('root-id', 'a');
        await store.setSetting('root-id', 'b');
        await store.setSetting('secret', '');
        expect(await store.getSetting('root-id')).toBe('b');
        expect(await store.getSetting('secret')).toBe('');
      });

      it('finds everything again after closing and opening the store', async () => {
        const place = subject.fresh();
        const first = await subject.open(place);
        const entries = await createAnswered(first, 'job-a', 20, (i) => i < 15);
        await first.createJob(newJob('job-b', { name: 'second', retentionMs: 600_000 }), inputsOf(1));
        await first.completeJob('job-b', '2025-03-01T12:00:00.000Z');
        await first.setSetting('root-id', 'r');
        const before = [await first.getJob('job-a'), await first.getJob('job-b')];
        await first.close();
        await first.close();
        await expect(first.getJob('job-a')).rejects.toThrow(/closed/);

        const second = await openStore(place);
        expect([await second.getJob('job-a'), await second.getJob('job-b')]).toEqual(before);
        expect((await second.entries('job-a', { limit: 100 })).data).toEqual(entries);
        expect((await second.pendingInputs('job-a', -1, 100)).map((input) => input.index)).toEqual([15, 16, 17, 18, 19]);
        expect(await second.getSetting('root-id')).toBe('r');
        // Sequences are not reused after a purge: a new job comes after every earlier one.
        await second.endJob('job-b', 'Deleted', '2025-03-01T12:00:00.000Z');
        await second.purgeTombstones('2026-01-01T00:00:00.000Z');
        expect((await second.createJob(newJob('job-c'), [])).sequence).toBeGreaterThan(before[1]!.sequence);
      });
    });

    describe('drafts, outbox, totals', () => {
      it('fills a draft batch by batch, unseen until committed; clearing and discarding leave nothing', async () => {
        const store = await openStore();
        const draft = await store.draftJob!();
        await draft.add(inputsOf(3));
        await draft.clear();
        await draft.add(inputsOf(2));
        await draft.add([{ inputData: 'late@example.org', custom: 'c' }]);
        expect(await store.listJobs({ sort: 'createdOn', limit: 10 })).toEqual({ data: [], more: false });
        expect(await store.unfinishedJobs()).toEqual([]);
        expect(await store.jobTotals()).toEqual([]);
        const job = await draft.commit(newJob('drafted', { overrides: 'overrides:abc' }));
        expect(job).toMatchObject({ id: 'drafted', status: 'InProgress', noOfEntries: 3, overrides: 'overrides:abc' });
        expect(await store.getJob('drafted')).toEqual(job);
        expect(await store.pendingInputs('drafted', -1, 10)).toEqual([
          { index: 0, inputData: 'user0@example.org' },
          { index: 1, inputData: 'user1@example.org', custom: 'row 1' },
          { index: 2, inputData: 'late@example.org', custom: 'c' },
        ]);
        await expect(draft.add(inputsOf(1))).rejects.toThrow(/committed or discarded/);

        const dropped = await store.draftJob!();
        await dropped.add(inputsOf(5));
        await dropped.discard();
        await dropped.discard();
        expect((await store.listJobs({ sort: 'createdOn', limit: 10 })).data.map((j) => j.id)).toEqual(['drafted']);
        expect(await store.getJob('no-rules')).toBeNull();
        await store.createJob(newJob('no-rules'), []);
        expect(await store.getJob('no-rules')).not.toHaveProperty('overrides');
      });

      it('keeps a callback event with its job: once per completion, soonest first, dropped when the job ends', async () => {
        const store = await openStore();
        const event = (jobId: string, dueAt: number): CallbackEvent => ({
          jobId,
          url: 'https://hooks.example.com/done',
          skipServerCertificateValidation: jobId === 'b',
          idempotencyKey: `key-${jobId}`,
          body: `{"event":"${jobId}"}`,
          dueAt,
        });
        for (const id of ['a', 'b', 'c', 'ended']) await store.createJob(newJob(id), inputsOf(1));
        await expect(store.completeJob('a', '2030-01-01T00:00:00.000Z', event('other', 1))).rejects.toThrow(/other/);
        expect(await store.nextCallbackAt()).toBeNull();
        await store.completeJob('a', '2030-01-01T00:00:00.000Z', event('a', 3_000));
        await store.completeJob('a', '2030-01-01T00:00:01.000Z', event('a', 1));
        await store.completeJob('b', '2030-01-01T00:00:00.000Z', event('b', 2_000));
        await store.completeJob('c', '2030-01-01T00:00:00.000Z');
        await store.endJob('ended', 'Deleted', '2030-01-01T00:00:00.000Z');
        await store.completeJob('ended', '2030-01-01T00:00:00.000Z', event('ended', 1));
        expect(await store.nextCallbackAt()).toBe(2_000);
        expect(await store.dueCallbacks(1_999, 10)).toEqual([]);
        const due = await store.dueCallbacks(5_000, 10);
        expect(due).toEqual([
          { ...event('b', 2_000), id: due[0]!.id, attempts: 0 },
          { ...event('a', 3_000), id: due[1]!.id, attempts: 0 },
        ]);
        expect(await store.dueCallbacks(5_000, 1)).toEqual([due[0]]);
        await store.callbackAttempted(due[0]!.id, 2_000, 12_000);
        expect(await store.dueCallbacks(20_000, 10)).toEqual([due[1], { ...due[0], attempts: 1, firstAttemptAt: 2_000, dueAt: 12_000 }]);
        await store.removeCallback(due[1]!.id);
        await store.removeCallback(due[1]!.id);
        expect(await store.nextCallbackAt()).toBe(12_000);
        await store.endJob('b', 'Expired', '2030-01-02T00:00:00.000Z');
        expect(await store.nextCallbackAt()).toBeNull();
        expect(await store.dueCallbacks(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
      });

      it('totals jobs and their entries by status', async () => {
        const store = await openStore();
        await createAnswered(store, 'done', 4);
        await store.completeJob('done', '2025-03-01T11:00:00.000Z');
        await createAnswered(store, 'running', 6, (i) => i < 2);
        await createAnswered(store, 'running-too', 1, () => false);
        await createAnswered(store, 'gone', 3, (i) => i < 1);
        await store.endJob('gone', 'Deleted', '2025-03-02T00:00:00.000Z');
        expect(await store.jobTotals()).toEqual([
          { status: 'Completed', jobs: 1, entries: 4, completedEntries: 4 },
          { status: 'Deleted', jobs: 1, entries: 3, completedEntries: 1 },
          { status: 'InProgress', jobs: 2, entries: 7, completedEntries: 2 },
        ]);
      });

      it('stores each entry once when writers race on the same entries', async () => {
        const store = await openStore();
        const inputs = inputsOf(200);
        await store.createJob(newJob('raced'), inputs);
        const writers = (['Success', 'MailboxDoesNotExist', 'DomainDoesNotExist'] as const).map((status) =>
          store.saveResults('raced', inputs.map((input, index) => entryFor(index, input, status))),
        );
        const saved = await Promise.all(writers);
        expect(saved.reduce((sum, n) => sum + n, 0)).toBe(200);
        expect((await store.getJob('raced'))!.noOfCompleted).toBe(200);
        expect(await store.countEntries('raced', {})).toBe(200);
        expect(await store.pendingInputs('raced', -1, 10)).toEqual([]);
      });
    });

    describe('a job of 100,000 inputs', () => {
      it('is created in bulk and read back page by page in index order, inputs then results', async () => {
        const store = await openStore();
        const count = 100_000;
        const inputs = inputsOf(count);
        expect(await store.createJob(newJob('bulk'), inputs)).toMatchObject({ noOfEntries: count });
        let seen = 0;
        for (let after = -1; ; ) {
          const page = await store.pendingInputs('bulk', after, 1000);
          if (page.length === 0) break;
          for (const input of page) {
            expect(input).toEqual({ index: seen, ...inputs[seen] });
            seen++;
          }
          after = page.at(-1)!.index;
        }
        expect(seen).toBe(count);
        for (let start = 0; start < count; start += 5000) {
          const entries = inputs.slice(start, start + 5000).map((input, i) => entryFor(start + i, input));
          expect(await store.saveResults('bulk', entries)).toBe(entries.length);
        }
        seen = 0;
        for (let after = -1; ; ) {
          const page = await store.entries('bulk', { after, limit: 1000 });
          for (const entry of page.data) expect(entry).toEqual(entryFor(seen, inputs[seen++]!));
          if (!page.more) break;
          after = page.data.at(-1)!.index;
        }
        expect(seen).toBe(count);
        expect(await store.countEntries('bulk', { include: ['Success'] })).toBe(count / 4);
      });
    });

  });
}
