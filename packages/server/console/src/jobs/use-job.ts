/**
 * A job as the job page follows it: its overview, asked again with a `waitTime` while it is in progress (the server
 * answers as soon as it completes), and once it has completed the count of its entries by classification and by
 * status, read page by page. Everything in flight stops when the page goes away.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import type { JobEntry, JobOverview, Paged } from './types.js';

/** How long one request waits for the job to complete: progress shows at least this often. */
const WAIT_MS = 2000;

export interface JobState {
  readonly job: JobOverview | null;
  readonly error: unknown;
}

export function useJob(api: Api, id: string): JobState {
  const [state, setState] = useState<JobState>({ job: null, error: null });
  useEffect(() => {
    const controller = new AbortController();
    const follow = async () => {
      let waitTime = 0;
      for (;;) {
        const job = await api.get<JobOverview>(`/email-validations/${id}/overview`, { waitTime }, controller.signal);
        setState({ job, error: null });
        if (job.status !== 'InProgress') return;
        waitTime = WAIT_MS;
      }
    };
    follow().catch((error: unknown) => {
      if (!controller.signal.aborted) setState((before) => ({ job: before.job, error }));
    });
    return () => controller.abort();
  }, [api, id]);
  return state;
}

export interface StatusCount {
  readonly status: string;
  readonly classification: string;
  readonly count: number;
}

export interface Counts {
  /** Classification → entries, in the order first met. */
  readonly classifications: ReadonlyMap<string, number>;
  /** By status and classification, most entries first. */
  readonly statuses: readonly StatusCount[];
  readonly counted: number;
  readonly done: boolean;
}

const COUNT_PAGE = 1000;

/** The counts of a completed job's entries; null until it has completed. */
export function useCounts(api: Api, job: JobOverview | null): { counts: Counts | null; error: unknown } {
  const completed = job?.status === 'Completed';
  const [state, setState] = useState<{ counts: Counts | null; error: unknown }>({ counts: null, error: null });
  useEffect(() => {
    if (!completed || job === null) return;
    const controller = new AbortController();
    const classifications = new Map<string, number>();
    const statuses = new Map<string, StatusCount>();
    let counted = 0;
    const publish = (done: boolean) =>
      setState({
        counts: { classifications: new Map(classifications), statuses: [...statuses.values()].sort((a, b) => b.count - a.count), counted, done },
        error: null,
      });
    const count = async () => {
      let cursor: string | undefined;
      for (;;) {
        const page = await api.get<Paged<JobEntry>>(`/email-validations/${job.id}/entries`, { limit: COUNT_PAGE, cursor }, controller.signal);
        for (const entry of page.data) {
          classifications.set(entry.classification, (classifications.get(entry.classification) ?? 0) + 1);
          // Duplicates take the classification of what they duplicate: one row per status and classification.
          const key = `${entry.status}\u0000${entry.classification}`;
          const before = statuses.get(key);
          statuses.set(key, { status: entry.status, classification: entry.classification, count: (before?.count ?? 0) + 1 });
        }
        counted += page.data.length;
        cursor = page.meta?.cursor;
        const more = page.meta?.isTruncated === true && cursor !== undefined;
        publish(!more);
        if (!more) return;
      }
    };
    count().catch((error: unknown) => {
      if (!controller.signal.aborted) setState((before) => ({ counts: before.counts, error }));
    });
    return () => controller.abort();
  }, [api, job?.id, completed]);
  return state;
}
