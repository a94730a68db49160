/**
 * What a request's URL says: its path, the route the router chose, its query parameters one string each, and the
 * paging, status filters and date ranges of listings (§13).
 */
import type { FastifyRequest } from 'fastify';
import type { EntryFilter } from '../jobs/types.js';
import type { StatusCode } from 'mailverify/internal';
import type { Cursors, CursorState } from './cursor.js';
import { invalidField } from './problems.js';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './shapes.js';

export type Query = Record<string, string | undefined>;

/**
 * The path of the request's URL, without its query. A request target in absolute form (`POST http://host/v2.7/...`,
 * RFC 9112 §3.2.2) names a host of the client's choosing: only its path is ever echoed (a `Location` is a path).
 */
export function pathOf(request: FastifyRequest): string {
  const url = request.url;
  const path = url.startsWith('/') ? url : new URL(url, 'http://localhost').pathname;
  const query = path.indexOf('?');
  return query < 0 ? path : path.slice(0, query);
}

/**
 * The path that decides what a request is (which limits count it): the pattern of the route the router chose, base path
 * and version included (`/api/v2.7/email-validations/:id`), which no spelling of the client's changes; for a request
 * that no route matched, its path percent-decoded (RFC 3986 §2.1) as the router decodes it, or as sent when it does
 * not decode. The raw path is what the client wrote, not what is served: `/v2%2E7/...` is served by the routes of `/v2.7`.
 */
export function routedPath(request: FastifyRequest): string {
  const route = request.routeOptions.url;
  if (route !== undefined) return route;
  const path = pathOf(request);
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The parameters that may be given more than once: their values are one comma-separated list. */
const LIST_PARAMETERS = new Set(['status', 'status:include', 'status:exclude']);

/**
 * The query of a request, one string per parameter: a list parameter given several times is the union of its
 * values; any other parameter given twice is ambiguous, 400 naming it.
 */
export function queryOf(request: FastifyRequest): Query {
  const query: Query = {};
  for (const [name, value] of Object.entries(request.query as Record<string, string | string[] | undefined>)) {
    if (!Array.isArray(value)) {
      query[name] = value;
    } else if (LIST_PARAMETERS.has(name)) {
      query[name] = value.join(',');
    } else {
      throw invalidField(name, 'given more than once');
    }
  }
  return query;
}

export function readLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > MAX_PAGE_LIMIT) {
    throw invalidField('limit', `must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
  }
  return Number(value);
}

/**
 * `status` (or `status:include`; both: their union) and `status:exclude`: comma-separated exact names. Null when
 * none is given.
 */
export function readStatusFilter(query: Query, known: (name: string) => boolean, what: string): EntryFilter | null {
  const list = (parameter: string): string[] | undefined => {
    const value = query[parameter];
    if (value === undefined) return undefined;
    const names = value.split(',').map((name) => name.trim()).filter((name) => name !== '');
    const unknown = names.find((name) => !known(name));
    if (unknown !== undefined) throw invalidField(parameter, `${JSON.stringify(unknown)} is not a ${what}`);
    return names;
  };
  const included = [...(list('status') ?? []), ...(list('status:include') ?? [])];
  const excluded = list('status:exclude');
  const hasInclude = query['status'] !== undefined || query['status:include'] !== undefined;
  if (!hasInclude && excluded === undefined) return null;
  return {
    ...(hasInclude && { include: [...new Set(included)].sort() as StatusCode[] }),
    ...(excluded !== undefined && { exclude: [...new Set(excluded)].sort() as StatusCode[] }),
  };
}

/** A filter in a canonical text form, kept in cursors. */
export function filterKey(filter: EntryFilter): string {
  return `${filter.include?.join(',') ?? '*'};${filter.exclude?.join(',') ?? ''}`;
}

export function parseFilterKey(key: string): EntryFilter {
  if (key === '') return {};
  const [include = '*', exclude = ''] = key.split(';');
  return {
    ...(include !== '*' && { include: (include === '' ? [] : include.split(',')) as StatusCode[] }),
    ...(exclude !== '' && { exclude: exclude.split(',') as StatusCode[] }),
  };
}

/**
 * `<name>`, `<name>:since`, `<name>:until` (`createdOn` by default) as `since~until` (inclusive ISO bounds), '' when
 * none. `daysOnly`: each a day (yyyy-mm-dd), not a time.
 */
export function readDates(query: Query, name = 'createdOn', daysOnly = false): string {
  const day = /^\d{4}-\d{2}-\d{2}$/;
  const read = (parameter: string, end: boolean): string | undefined => {
    const value = query[parameter];
    if (value === undefined) return undefined;
    if (day.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
      return `${value}T${end ? '23:59:59.999' : '00:00:00.000'}Z`;
    }
    const time = Date.parse(value);
    if (daysOnly || Number.isNaN(time) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
      throw invalidField(parameter, daysOnly ? 'must be a date (yyyy-mm-dd)' : 'must be a date (yyyy-mm-dd) or an ISO 8601 time');
    }
    const iso = new Date(time).toISOString();
    // A time zone can carry the last day of year 9999 into year 10000, which no timestamp of a job can reach.
    if (!/^\d{4}-/.test(iso)) throw invalidField(parameter, 'must be a time from year 0000 to 9999 (UTC)');
    return iso;
  };
  const on = query[name];
  if (on !== undefined && !day.test(on)) throw invalidField(name, 'must be a date (yyyy-mm-dd)');
  const since = [read(name, false), read(`${name}:since`, false)].filter(Boolean).sort().at(-1);
  const until = [read(name, true), read(`${name}:until`, true)].filter(Boolean).sort().at(0);
  return since === undefined && until === undefined ? '' : `${since ?? ''}~${until ?? ''}`;
}

/** A page with its `meta`: `isTruncated` in the direction of travel, a cursor while another page exists. */
export function pageOf<T>(cursors: Cursors, data: T[], more: boolean, paging: Paging, keyOf: (item: T) => number, listing: string) {
  const cameFromPage = paging.after !== undefined || paging.before !== undefined;
  const meta: { cursor?: string; isTruncated: boolean } = { isTruncated: more };
  if (data.length > 0 && (more || cameFromPage)) {
    meta.cursor = cursors.encode({
      listing,
      filter: paging.filter,
      limit: paging.limit,
      first: keyOf(data[0]!),
      last: keyOf(data[data.length - 1]!),
    });
  }
  return { meta, data };
}

export interface Paging {
  readonly after?: number;
  readonly before?: number;
  readonly limit: number;
  readonly filter: string;
}

/**
 * `limit`, `cursor` and `cursor:prev` of a listing (§13 paging). A cursor brings the limit and filter of the listing
 * it came from: a limit given again replaces it; a filter given again must be the same (400 otherwise).
 */
export function readPaging(cursors: Cursors, query: Query, listing: string, givenFilter: string | null): Paging {
  const limit = readLimit(query['limit']);
  const next = query['cursor'];
  const previous = query['cursor:prev'];
  if (next !== undefined && previous !== undefined) throw invalidField('cursor', 'give cursor or cursor:prev, not both');
  const parameter = next !== undefined ? 'cursor' : 'cursor:prev';
  const cursor = next ?? previous;
  if (cursor === undefined) return { limit: limit ?? DEFAULT_PAGE_LIMIT, filter: givenFilter ?? '' };
  const state: CursorState = cursors.decode(cursor, listing, parameter);
  if (givenFilter !== null && givenFilter !== state.filter) {
    throw invalidField(parameter, 'the cursor belongs to a listing with another filter');
  }
  const common = { limit: limit ?? state.limit, filter: state.filter };
  return next !== undefined ? { ...common, after: state.last } : { ...common, before: state.first };
}
