import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { ProblemMessage } from '../components/problem.js';
import { may, type Caller } from './access.js';
import { useAnswer } from './hooks.js';
import { KeyField } from './key-field.js';
import { NewUserForm, type Created } from './new-user.js';
import type { Paged, UserOverview } from './types.js';

const PAGE_SIZE = 50;

/** Which page of the listing to ask for: the first, or the one after or before the page that carried `cursor`. */
type PageRequest = { readonly index: number } & ({ readonly cursor?: undefined } | { readonly cursor: string; readonly direction: 'next' | 'prev' });

/** The users of the account, a page at a time, with the creation form. */
export function UsersList({ api, caller }: { api: Api; caller: Caller }) {
  const [includeDeleted, setIncludeDeleted] = useState(false);
  const [request, setRequest] = useState<PageRequest>({ index: 0 });
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const [reloads, setReloads] = useState(0);
  // Where the focus goes when the form closes: back to "New user", or to what was created.
  const [focus, setFocus] = useState<'new' | 'created' | null>(null);
  const newButton = useRef<HTMLButtonElement>(null);
  const createdText = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (focus === 'new') newButton.current?.focus();
    if (focus === 'created') createdText.current?.focus();
    setFocus(null);
  }, [focus]);

  const answer = useAnswer(
    async (signal) => {
      const query: Record<string, string | number | undefined> =
        request.cursor === undefined
          ? { limit: PAGE_SIZE, includeDeleted: includeDeleted ? 'true' : undefined }
          : { [request.direction === 'next' ? 'cursor' : 'cursor:prev']: request.cursor };
      const { meta, data } = await api.get<Paged<UserOverview>>('/users', query, signal);
      // Going back, the page left is after this one; going forward (or first), the answer says.
      const hasNext = request.cursor !== undefined && request.direction === 'prev' ? true : meta.isTruncated;
      return { data, hasNext, ...(meta.cursor !== undefined && { cursor: meta.cursor }) };
    },
    [api, request, includeDeleted, reloads],
  );
  const page = answer.value;

  const mayCreate = may(caller, 'users', 'write', 'account');
  const turn = (direction: 'next' | 'prev') => {
    if (page?.cursor === undefined) return;
    setRequest({ index: request.index + (direction === 'next' ? 1 : -1), cursor: page.cursor, direction });
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>Users</h1>
      {created !== null && (
        <div class="panel created">
          <p role="status" tabIndex={-1} ref={createdText}>
            Created <a href={`#/users/${created.user.id}`}>{created.user.displayName}</a> ({created.user.type}).
          </p>
          {created.key !== undefined && <KeyField value={created.key} />}
        </div>
      )}
      {creating ? (
        <NewUserForm
          api={api}
          caller={caller}
          onCancel={() => {
            setCreating(false);
            setFocus('new');
          }}
          onCreated={(done) => {
            setCreating(false);
            setCreated(done);
            setFocus('created');
            setRequest({ index: 0 });
            setReloads((count) => count + 1);
          }}
        />
      ) : (
        mayCreate && (
          <div class="actions">
            <button type="button" ref={newButton} onClick={() => { setCreated(null); setCreating(true); }}>
              New user
            </button>
          </div>
        )
      )}
      <div class="filters">
        <label class="check">
          <input
            type="checkbox"
            checked={includeDeleted}
            onChange={(event) => {
              setIncludeDeleted((event.currentTarget as HTMLInputElement).checked);
              setRequest({ index: 0 });
            }}
          />
          Show deleted users
        </label>
      </div>
      <ProblemMessage error={answer.error} />
      {page !== null && (
        <>
          <div class="table-wrap">
            <table aria-label="Users">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Id</th>
                </tr>
              </thead>
              <tbody>
                {page.data.length === 0 && (
                  <tr>
                    <td colSpan={4}>No users yet. Root is the account's owner and is not listed.</td>
                  </tr>
                )}
                {page.data.map((user) => (
                  <tr key={user.id}>
                    <td>{user.isDeleted === true ? user.displayName : <a href={`#/users/${user.id}`}>{user.displayName}</a>}</td>
                    <td>{user.type}</td>
                    <td>{user.isDeleted === true ? 'Deleted' : user.isActive ? 'Active' : 'Inactive'}</td>
                    <td class="mono">{user.id}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {(request.index > 0 || page.hasNext) && (
            <div class="pager">
              <button type="button" class="secondary" disabled={request.index === 0} onClick={() => turn('prev')}>
                Previous page
              </button>
              <span>Page {request.index + 1}</span>
              <button type="button" class="secondary" disabled={!page.hasNext} onClick={() => turn('next')}>
                Next page
              </button>
            </div>
          )}
        </>
      )}
    </section>
  );
}
