import type { Pager as PagerLinks, PageRequest } from '../jobs/paging.js';

/** "Previous page" and "Next page", each disabled when there is no such page. */
export function Pager({ pager, onPage, label }: { pager: PagerLinks; onPage: (request: PageRequest) => void; label: string }) {
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="secondary" disabled={pager.previous === null} onClick={() => pager.previous !== null && onPage(pager.previous)}>
        Previous page
      </button>
      <button type="button" class="secondary" disabled={pager.next === null} onClick={() => pager.next !== null && onPage(pager.next)}>
        Next page
      </button>
    </nav>
  );
}
