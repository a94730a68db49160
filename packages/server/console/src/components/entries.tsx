import { useState } from 'preact/hooks';
import { CURRENT_STATUS_CODES } from '../../../../mailverify/src/status/catalogue.js';
import { saveFile, type Api } from '../api.js';
import { FIRST_PAGE, pageQuery, pagerOf, usePaged, type PageRequest } from '../jobs/paging.js';
import type { JobEntry } from '../jobs/types.js';
import type { StatusCount } from '../jobs/use-job.js';
import { Pager } from './pager.js';
import { ProblemMessage } from './problem.js';
import { TableWrap } from './table-wrap.js';

const PAGE_SIZE = 50;
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

interface EntriesProps {
  readonly api: Api;
  readonly jobId: string;
  /** The counts by status, when known: shown beside the statuses of the filter. */
  readonly statuses: readonly StatusCount[] | null;
}

/** The entries of a completed job: a status filter, pages, and the exports of what the filter keeps. */
export function Entries({ api, jobId, statuses }: EntriesProps) {
  const [status, setStatus] = useState('');
  const [request, setRequest] = useState<PageRequest>(FIRST_PAGE);
  const [exportError, setExportError] = useState<unknown>(null);
  const [exporting, setExporting] = useState<string | null>(null);
  const filter = status === '' ? {} : { status };
  const { page, error, loading } = usePaged<JobEntry>(
    (signal) => api.get(`/email-validations/${jobId}/entries`, { limit: PAGE_SIZE, ...filter, ...pageQuery(request) }, signal),
    [api, jobId, status, request],
  );

  const counted = new Map<string, number>();
  for (const row of statuses ?? []) counted.set(row.status, (counted.get(row.status) ?? 0) + row.count);
  const exportAs = async (format: string, accept: string) => {
    setExportError(null);
    setExporting(format);
    try {
      const { blob, fileName } = await api.download(`/email-validations/${jobId}/entries`, accept, filter);
      saveFile(blob, fileName);
    } catch (caught) {
      setExportError(caught);
    } finally {
      setExporting(null);
    }
  };

  return (
    <section aria-labelledby="entries-title">
      <h2 id="entries-title">Entries</h2>
      <div class="filters">
        <div>
          <label for="status-filter">Status</label>
          <select
            id="status-filter"
            value={status}
            onChange={(event) => {
              setStatus((event.currentTarget as HTMLSelectElement).value);
              setRequest(FIRST_PAGE);
            }}
          >
            <option value="">All</option>
            {CURRENT_STATUS_CODES.map((code) => (
              <option key={code} value={code}>
                {counted.has(code) ? `${code} (${counted.get(code)})` : code}
              </option>
            ))}
          </select>
        </div>
        <div class="actions">
          <button type="button" class="secondary" disabled={exporting !== null} onClick={() => exportAs('csv', 'text/csv')}>
            Export CSV
          </button>
          <button type="button" class="secondary" disabled={exporting !== null} onClick={() => exportAs('xlsx', XLSX)}>
            Export Excel
          </button>
        </div>
      </div>
      <p class="hint">The exports hold the entries the filter shows, on every page.</p>
      <ProblemMessage error={exportError} />
      <ProblemMessage error={error} />
      <TableWrap label="Entries">
        <table aria-label="Entries" aria-busy={loading}>
          <thead>
            <tr>
              <th scope="col" class="number">#</th>
              <th scope="col">Input</th>
              <th scope="col">Classification</th>
              <th scope="col">Status</th>
              <th scope="col">Suggestions</th>
              <th scope="col">Notes</th>
            </tr>
          </thead>
          <tbody>
            {(page?.data ?? []).map((entry) => (
              <tr key={entry.index}>
                <td class="number">{entry.index + 1}</td>
                <td class="input">{entry.inputData}</td>
                <td>{entry.classification}</td>
                <td>{entry.status}</td>
                <td>{entry.suggestions !== undefined && entry.suggestions.length > 0 ? `Did you mean ${entry.suggestions.join(' or ')}?` : ''}</td>
                <td>{notesOf(entry)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {page !== null && page.data.length === 0 && <p>No entry has this status.</p>}
      <Pager label="Pages of entries" pager={pagerOf(request, page)} onPage={setRequest} />
    </section>
  );
}

function notesOf(entry: JobEntry): string {
  return [
    entry.duplicateOf !== undefined && `duplicate of #${entry.duplicateOf + 1}`,
    entry.isDisposableEmailAddress === true && 'disposable',
    entry.isRoleAccount === true && 'role account',
    entry.isFreeEmailAddress === true && 'free provider',
    entry.custom !== undefined && entry.custom,
  ]
    .filter((note): note is string => typeof note === 'string' && note !== '')
    .join(', ');
}
