import { useState } from 'preact/hooks';
import { formatDuration, formatPercent, formatTime, jobTitle, STATUS_LABELS } from '../components/format.js';
import { Pager } from '../components/pager.js';
import { ProblemMessage } from '../components/problem.js';
import { FIRST_PAGE, pageQuery, pagerOf, usePaged, type PageRequest } from '../jobs/paging.js';
import type { JobOverview } from '../jobs/types.js';
import type { PageProps } from './props.js';
import { TableWrap } from '../components/table-wrap.js';

const PAGE_SIZE = 25;

/** The user's jobs, newest first; while one of the page is in progress, the page is asked again for its progress. */
export function JobsPage({ api }: PageProps) {
  const [request, setRequest] = useState<PageRequest>(FIRST_PAGE);
  const { page, error, loading } = usePaged<JobOverview>(
    (signal) => api.get('/email-validations', { limit: PAGE_SIZE, ...pageQuery(request) }, signal),
    [api, request],
    (answer) => answer.data.some((job) => job.status === 'InProgress'),
  );
  const jobs = page?.data ?? [];
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Jobs
      </h1>
      <ProblemMessage error={error} />
      <TableWrap label="Jobs">
        <table aria-label="Jobs" aria-busy={loading && page === null}>
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Created</th>
              <th scope="col">State</th>
              <th scope="col" class="number">Entries</th>
              <th scope="col">Quality</th>
            </tr>
          </thead>
          <tbody>
            {jobs.map((job) => (
              <tr key={job.id}>
                <td>
                  <a href={`#/jobs/${job.id}`}>{jobTitle(job)}</a>
                </td>
                <td>{formatTime(job.createdOn)}</td>
                <td>
                  <JobProgress job={job} />
                </td>
                <td class="number">{job.noOfEntries}</td>
                <td>{job.quality}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {page !== null && jobs.length === 0 && (
        <p>
          No jobs yet. <a href="#/new">Verify a list</a>.
        </p>
      )}
      <Pager label="Pages of jobs" pager={pagerOf(request, page)} onPage={setRequest} />
    </section>
  );
}

/** A job's state, with a progress bar while it runs. */
export function JobProgress({ job }: { job: JobOverview }) {
  if (job.status !== 'InProgress') return <span class={`status-${job.status}`}>{STATUS_LABELS[job.status] ?? job.status}</span>;
  const share = job.progress?.percentage ?? 0;
  return (
    <span class="progress">
      <progress max={1} value={share} aria-label={`Progress of ${jobTitle(job)}`} /> {STATUS_LABELS['InProgress']}, {formatPercent(share)}
      {job.progress?.estimatedTimeRemaining !== undefined && `, about ${formatDuration(job.progress.estimatedTimeRemaining)} left`}
    </span>
  );
}
