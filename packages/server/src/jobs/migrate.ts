/**
 * Copying a store into another: an embedded server's SQLite store into a PostgreSQL one, when a server moves to a
 * cluster. Jobs of every status (tombstones included) with their inputs and results, users, credits (balance, daily
 * usage, open reservations), settings (the root account's id, the token secret, override lists) and the callbacks
 * waiting in the outbox, with their attempts and due times. Sequences and ids are kept, so that listing cursors and
 * callbacks go on as before.
 *
 * The source is read from one snapshot, a chunk at a time; the target is written in one transaction, refused when it
 * already holds jobs, users or credits, and left empty if the copy fails.
 */
import { fromMicro } from '../accounts/credits.js';
import type { StoreContents, StoreImport } from './types.js';

/** What a copy wrote. */
export interface CopySummary {
  jobs: number;
  entries: number;
  users: number;
  callbacks: number;
  settings: number;
  /** Micro-credits of packs. */
  packs: number;
  creditDays: number;
  reservations: number;
}

/** A store that can be read whole (SqliteJobStore). */
export interface ExportingStore {
  exportContents<T>(work: (contents: StoreContents) => Promise<T>): Promise<T>;
}

/** A store that can be written whole (PostgresJobStore). */
export interface ImportingStore {
  importContents<T>(work: (target: StoreImport) => Promise<T>): Promise<T>;
}

/** Copies everything `source` keeps into `target` (empty); what was copied. */
export async function copyStore(source: ExportingStore, target: ImportingStore): Promise<CopySummary> {
  return source.exportContents((contents) =>
    target.importContents(async (into) => {
      const summary: CopySummary = { jobs: 0, entries: 0, users: 0, callbacks: 0, settings: 0, packs: 0, creditDays: 0, reservations: 0 };
      // Jobs before what refers to them (entries, callbacks).
      for await (const jobs of contents.jobs()) {
        await into.jobs(jobs);
        summary.jobs += jobs.length;
      }
      for await (const entries of contents.entries()) {
        await into.entries(entries);
        summary.entries += entries.length;
      }
      for await (const callbacks of contents.callbacks()) {
        await into.callbacks(callbacks);
        summary.callbacks += callbacks.length;
      }
      for await (const users of contents.users()) {
        await into.users(users);
        summary.users += users.length;
      }
      const settings = await contents.settings();
      await into.settings(settings);
      summary.settings = settings.size;
      const credits = await contents.credits();
      await into.credits(credits);
      summary.packs = credits.packs;
      summary.creditDays = credits.days.length;
      summary.reservations = credits.reservations.length;
      return summary;
    }),
  );
}

/** The summary as one line: `3 jobs (1,204 entries), 2 users, ...`. */
export function summaryLine(summary: CopySummary): string {
  const count = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
  return [
    `${count(summary.jobs, 'job')} (${count(summary.entries, 'entry', 'entries')})`,
    count(summary.users, 'user'),
    count(summary.callbacks, 'pending callback'),
    count(summary.settings, 'setting'),
    `credits: ${fromMicro(summary.packs).toLocaleString('en', { maximumFractionDigits: 6 })} in packs, ${count(summary.creditDays, 'day')} of usage, ${count(summary.reservations, 'open reservation')}`,
  ].join(', ');
}
