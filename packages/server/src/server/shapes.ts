/** The wire shapes of the 2.x interface: the job overview, in the field order of the service's resource tables. */
import { formatDuration } from '../jobs/duration.js';
import type { JobProgress } from '../jobs/jobs.js';
import type { JobRecord } from '../jobs/types.js';

/** A job's states, as the overview's `status` names them and the job list filters them. */
export const JOB_STATUSES: readonly JobRecord['status'][] = ['InProgress', 'Completed', 'Deleted', 'Expired'];

/** Items of one page of a listing (entries, jobs): `limit`'s default and largest value. */
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

export interface Overview {
  id: string;
  status: JobRecord['status'];
  name?: string;
  owner: string;
  clientIP: string;
  quality: string;
  deduplication: string;
  noOfEntries: number;
  createdOn: string;
  submittedOn: string;
  completedOn?: string;
  priority?: number;
  retention: string;
  progress?: { percentage: number; estimatedTimeRemaining?: string };
}

/**
 * The overview of `job`; `progress` only while InProgress: the running batch's when there is one (a fraction 0–1,
 * and the time remaining once it can be estimated), else the stored counts'.
 */
export function overviewOf(job: JobRecord, defaultRetentionMs: number, progress: JobProgress | undefined): Overview {
  return {
    id: job.id,
    status: job.status,
    ...(job.name !== undefined && { name: job.name }),
    owner: job.owner,
    clientIP: job.clientIP,
    quality: job.quality,
    deduplication: job.deduplication,
    noOfEntries: job.noOfEntries,
    createdOn: job.createdOn,
    submittedOn: job.createdOn,
    ...(job.completedOn !== undefined && { completedOn: job.completedOn }),
    ...(job.priority !== undefined && { priority: job.priority }),
    retention: formatDuration(job.retentionMs ?? defaultRetentionMs),
    ...(job.status === 'InProgress' && { progress: progressOf(job, progress) }),
  };
}

function progressOf(job: JobRecord, progress: JobProgress | undefined): NonNullable<Overview['progress']> {
  const percentage = progress?.percentage ?? (job.noOfEntries === 0 ? 0 : job.noOfCompleted / job.noOfEntries);
  const remaining = progress?.estimatedTimeRemainingMs;
  return remaining === undefined ? { percentage } : { percentage, estimatedTimeRemaining: formatDuration(remaining) };
}
