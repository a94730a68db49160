/**
 * Cursor paging as the REST interface does it: a page answers `meta.cursor`; `cursor=<c>` asks for the page after
 * it, `cursor:prev=<c>` for the one before, and `meta.isTruncated` says whether there is more in the direction of
 * travel. `usePaged` fetches the page asked for, again every `refreshMs` while `refresh(page)` says so.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Paged } from './types.js';

export interface PageRequest {
  readonly cursor?: string;
  readonly direction: 'next' | 'prev';
  /** 0 for the first page. */
  readonly number: number;
}

export const FIRST_PAGE: PageRequest = { direction: 'next', number: 0 };

export function pageQuery(request: PageRequest): Record<string, string> {
  if (request.cursor === undefined) return {};
  return request.direction === 'next' ? { cursor: request.cursor } : { 'cursor:prev': request.cursor };
}

export interface Pager {
  readonly previous: PageRequest | null;
  readonly next: PageRequest | null;
}

/** Where the buttons lead from a page that answered `page` to `request`. */
export function pagerOf(request: PageRequest, page: Paged<unknown> | null): Pager {
  const cursor = page?.meta?.cursor;
  if (page === null || cursor === undefined) return { previous: null, next: null };
  const more = page.meta?.isTruncated === true;
  const hasNext = request.direction === 'next' ? more : true;
  const hasPrevious = request.number > 0;
  return {
    previous: hasPrevious ? { cursor, direction: 'prev', number: request.number - 1 } : null,
    next: hasNext ? { cursor, direction: 'next', number: request.number + 1 } : null,
  };
}

export interface PagedState<T> {
  readonly page: Paged<T> | null;
  readonly error: unknown;
  readonly loading: boolean;
}

/**
 * The page `load` answers, loaded again when `deps` change, and every `refreshMs` while `refresh` says so of the
 * page; the timer and the request in flight stop when the component goes away.
 */
export function usePaged<T>(load: (signal: AbortSignal) => Promise<Paged<T>>, deps: readonly unknown[], refresh: (page: Paged<T>) => boolean = () => false, refreshMs = 1500): PagedState<T> {
  const [state, setState] = useState<PagedState<T>>({ page: null, error: null, loading: true });
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = () => {
      load(controller.signal).then(
        (page) => {
          if (controller.signal.aborted) return;
          setState({ page, error: null, loading: false });
          if (refresh(page)) timer = setTimeout(run, refreshMs);
        },
        (error: unknown) => {
          if (!controller.signal.aborted) setState((before) => ({ page: before.page, error, loading: false }));
        },
      );
    };
    setState((before) => ({ ...before, loading: true }));
    run();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, deps);
  return state;
}
