/** Reading a job's answered entries through, a page at a time. */
import { nextTurn, type Entry } from 'mailverify/internal';
import type { EntryFilter, JobStore } from './types.js';

/**
 * The job's answered entries that pass `filter`, a page of at most `pageSize` at a time, in index order. The store
 * answers at once and a loopback reader takes every byte at once: without a turn of the event loop between pages, a
 * million entries read through would hold the process (timers, other requests) until the end.
 */
export async function* entryPages(
  store: JobStore,
  jobId: string,
  pageSize: number,
  filter: EntryFilter = {},
  { whole = false }: { readonly whole?: boolean } = {},
): AsyncGenerator<Entry[]> {
  let after: number | undefined;
  for (;;) {
    const page = await store.entries(jobId, { ...filter, ...(after !== undefined && { after }), limit: pageSize });
    if (page.data.length > 0) yield page.data;
    if (!page.more || page.data.length === 0) {
      // A job deleted or expired while it was read ends its entries early: a reader that promised all of them (an
      // export, a snapshot) must fail, not end as if they were all there.
      if (whole && !(await stillThere(store, jobId))) throw new JobGoneError(jobId);
      return;
    }
    after = page.data[page.data.length - 1]!.index;
    await nextTurn();
  }
}

/** A job that was deleted or has expired while its entries were read through. */
export class JobGoneError extends Error {
  constructor(readonly jobId: string) {
    super(`job ${jobId} was deleted or has expired while its entries were read`);
    this.name = 'JobGoneError';
  }
}

async function stillThere(store: JobStore, jobId: string): Promise<boolean> {
  const job = await store.getJob(jobId);
  return job !== null && job.status !== 'Deleted' && job.status !== 'Expired';
}
