import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ClassificationsFigure } from '../components/classifications.js';
import { Entries } from '../components/entries.js';
import { formatDuration, formatTime, jobTitle } from '../components/format.js';
import { ProblemMessage } from '../components/problem.js';
import { isRefused, noteRefusal } from '../jobs/refusals.js';
import type { JobOverview } from '../jobs/types.js';
import { useCounts, useJob, type StatusCount } from '../jobs/use-job.js';
import { navigate } from '../router.js';
import { JobProgress } from './jobs.js';
import type { PageProps } from './props.js';
import { TableWrap } from '../components/table-wrap.js';

/** A job (`#/jobs/<id>`): its settings and progress, then its results: chart, breakdown, entries, exports. */
export function JobPage({ api, route }: PageProps) {
  const id = route[1]!;
  const { job, error } = useJob(api, id);
  const { counts, error: countError } = useCounts(api, job);
  const [deleteError, setDeleteError] = useState<unknown>(null);
  const [deleting, setDeleting] = useState(false);

  const remove = async () => {
    // No confirmation dialog: the button says what it does (its description), and a browser's own confirm() would be
    // dismissed unseen by automation driving the console.
    if (job === null) return;
    setDeleting(true);
    setDeleteError(null);
    try {
      await api.del(`/email-validations/${job.id}`);
      navigate('#/jobs');
    } catch (caught) {
      noteRefusal(api, 'delete', caught);
      setDeleteError(caught);
      setDeleting(false);
    }
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        {job === null ? 'Job' : jobTitle(job)}
      </h1>
      <ProblemMessage error={error} />
      {job !== null && (
        <>
          <dl class="summary">
            {summaryOf(job).map(([term, value]) => (
              <div key={term}>
                <dt>{term}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
          {job.status === 'InProgress' && <p class="hint">The results show here once every entry is verified.</p>}
          <ProblemMessage error={countError} />
          {counts !== null && (
            <div class="results">
              <ClassificationsFigure counts={counts.classifications} total={job.noOfEntries} />
              <Breakdown statuses={counts.statuses} done={counts.done} />
            </div>
          )}
          {job.status === 'Completed' && <Entries api={api} jobId={job.id} statuses={counts?.statuses ?? null} />}
          <ProblemMessage error={deleteError} />
          {!isRefused(api, 'delete') && (
            <div class="actions">
              <button type="button" class="danger" disabled={deleting} onClick={remove} aria-describedby="delete-hint">
                Delete
              </button>
              <p id="delete-hint" class="hint">
                Deletes the job and its results at once; this cannot be undone.
              </p>
            </div>
          )}
        </>
      )}
    </section>
  );
}

/** What the summary of a job says, term by term. */
function summaryOf(job: JobOverview): readonly (readonly [string, ComponentChildren])[] {
  return [
    ['State', <JobProgress job={job} />],
    ['Entries', job.noOfEntries],
    ['Quality', job.quality],
    ['Deduplication', job.deduplication],
    ['Priority', job.priority ?? 'normal'],
    ['Retention', formatDuration(job.retention)],
    ['Created', formatTime(job.createdOn)],
    ['Completed', formatTime(job.completedOn)],
  ];
}

/** The entries by status (and classification, which a Duplicate takes from what it duplicates). */
function Breakdown({ statuses, done }: { statuses: readonly StatusCount[]; done: boolean }) {
  return (
    <TableWrap label="Breakdown">
      <table class="breakdown">
        <caption>Breakdown{done ? '' : ' (counting…)'}</caption>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Classification</th>
            <th scope="col" class="number">Count</th>
          </tr>
        </thead>
        <tbody>
          {statuses.map((row) => (
            <tr key={`${row.status} ${row.classification}`}>
              <td>{row.status}</td>
              <td>{row.classification}</td>
              <td class="number">{row.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
