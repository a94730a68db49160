/**
 * What every job store shares: the row format of jobs and entries (an entry's result as a JSON array in
 * RESULT_LAYOUT order), status filters and the checks of arguments, so that the stores answer alike.
 */
import { ENTRY_FIELDS, type Deduplication, type Entry } from 'mailverify/internal';
import type {
  CallbackDelivery,
  CallbackEvent,
  CallbackSettings,
  JobInterface,
  JobListQuery,
  JobRecord,
  JobStatus,
  NewJob,
  Page,
  PendingInput,
} from './types.js';

/** A row as a driver gives it, its columns by name. */
export type Row = Record<string, unknown>;

/** The status of a job row being created: invisible to every call but the draft's own. */
export const CREATING = 'Creating';

/** The timestamps the store compares as text: ISO 8601 UTC with milliseconds, as Date.prototype.toISOString writes. */
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const TOMBSTONE_STATUSES: readonly JobStatus[] = ['Deleted', 'Expired'];
export const LIVE_STATUSES: readonly JobStatus[] = ['InProgress', 'Completed'];
export const JOB_STATUSES: readonly JobStatus[] = [...LIVE_STATUSES, ...TOMBSTONE_STATUSES];

/**
 * An entry's result is stored as a JSON array of these fields, null where the entry has none (index and status are
 * columns). Half the size of a JSON object. This is a storage format: a field the entry gains is added at the end,
 * and older rows, shorter, simply lack it. inputData is null when it is the input's own (the usual case).
 */
export const RESULT_LAYOUT = [
  'inputData',
  'classification',
  'emailAddress',
  'emailAddressLocalPart',
  'emailAddressDomainPart',
  'asciiEmailAddressDomainPart',
  'hasInternationalMailboxName',
  'hasInternationalDomainName',
  'isDisposableEmailAddress',
  'isRoleAccount',
  'isFreeEmailAddress',
  'syntaxFailureIndex',
  'suggestions',
  'custom',
  'duplicateOf',
  'completedOn',
  'evidence',
  'hasMixedScriptDomainName',
] as const satisfies readonly Exclude<keyof Entry, 'index' | 'status'>[];

/** For each field of ENTRY_FIELDS from the fifth on (the first four are always present), its place in the layout. */
const LAYOUT_POSITIONS = ENTRY_FIELDS.slice(4).map((field) => {
  const position = (RESULT_LAYOUT as readonly string[]).indexOf(field);
  if (position < 0) throw new Error(`RESULT_LAYOUT lacks the entry field ${field}`);
  return [field, position] as const;
});
const CLASSIFICATION = RESULT_LAYOUT.indexOf('classification');
const EVIDENCE = RESULT_LAYOUT.indexOf('evidence');
const MIXED_SCRIPT = RESULT_LAYOUT.indexOf('hasMixedScriptDomainName');

export function toRecord(row: Row): JobRecord {
  const record: Record<string, unknown> = {
    id: row['id'],
    owner: row['owner'],
    clientIP: row['client_ip'],
  };
  if (row['name'] !== null) record['name'] = row['name'];
  record['quality'] = row['quality'];
  record['deduplication'] = row['deduplication'] as Deduplication;
  if (row['priority'] !== null) record['priority'] = row['priority'];
  if (row['retention_ms'] !== null) record['retentionMs'] = row['retention_ms'];
  if (row['callback'] !== null) record['callback'] = JSON.parse(row['callback'] as string) as CallbackSettings;
  record['interface'] = row['interface'] as JobInterface;
  if (row['overrides'] !== null) record['overrides'] = row['overrides'];
  record['createdOn'] = row['created_on'];
  record['status'] = row['status'] as JobStatus;
  record['noOfEntries'] = row['no_of_entries'];
  record['noOfCompleted'] = row['no_of_completed'];
  if (row['completed_on'] !== null) record['completedOn'] = row['completed_on'];
  if (row['ended_on'] !== null) record['endedOn'] = row['ended_on'];
  record['sequence'] = row['sequence'];
  return record as unknown as JobRecord;
}

/** The values of RESULT_LAYOUT for an entry. */
export function resultValues(entry: Entry): unknown[] {
  // mailverify's own fields, the last ones, are rare: without them the array ends before them, as an older row does.
  const length = entry.hasMixedScriptDomainName !== undefined ? RESULT_LAYOUT.length : entry.evidence !== undefined ? EVIDENCE + 1 : EVIDENCE;
  const values = new Array<unknown>(length);
  for (let position = 0; position < length; position++) {
    values[position] = entry[RESULT_LAYOUT[position]!] ?? null;
  }
  return values;
}

/** The entry of a row, its fields in ENTRY_FIELDS order. */
export function toEntry(row: Row): Entry {
  const values = JSON.parse(row['result'] as string) as unknown[];
  const entry: Record<string, unknown> = {
    index: row['idx'],
    inputData: values[0] ?? row['input_data'],
    classification: values[CLASSIFICATION],
    status: row['status'],
  };
  for (const [field, position] of LAYOUT_POSITIONS) {
    const value = values[position];
    if (value !== null && value !== undefined) entry[field] = value;
  }
  // mailverify's own fields, outside the service's order (older rows lack them).
  const mixedScript = values[MIXED_SCRIPT];
  if (mixedScript !== null && mixedScript !== undefined) entry['hasMixedScriptDomainName'] = mixedScript;
  const evidence = values[EVIDENCE];
  if (evidence !== null && evidence !== undefined) entry['evidence'] = evidence;
  return entry as unknown as Entry;
}

/**
 * The statuses a filter selects: `include` (else `byDefault`) less `exclude`. An empty include list counts as none.
 */
export function selectedStatuses<S extends string>(
  include: readonly S[] | undefined,
  exclude: readonly S[] | undefined,
  all: readonly S[],
  byDefault: readonly S[],
): S[] {
  const excluded = new Set(exclude ?? []);
  const included = include !== undefined && include.length > 0 ? include : byDefault;
  return [...new Set(included)].filter((status) => !excluded.has(status) && (all as readonly string[]).includes(status));
}

export function checkIso(name: string, value: string): void {
  if (typeof value !== 'string' || !ISO_UTC_MS.test(value) || Number.isNaN(Date.parse(value))) {
    throw new RangeError(`${name}: an ISO 8601 UTC time with milliseconds (YYYY-MM-DDTHH:MM:SS.sssZ), not ${String(value)}`);
  }
}

export function checkCallbackEvent(event: CallbackEvent, jobId: string): void {
  if (event.jobId !== jobId) throw new RangeError(`the callback event is for job ${event.jobId}, not ${jobId}`);
  if (!Number.isSafeInteger(event.dueAt)) throw new RangeError('callback dueAt: milliseconds since the epoch, an integer');
}

export function checkLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit: a positive integer, not ${String(limit)}`);
}

/** The columns of a job a submission fixes, in the order the stores write them: id, owner, client_ip, name, quality,
 * deduplication, priority, retention_ms, callback, interface, overrides, created_on. */
export function jobValues(job: NewJob): unknown[] {
  return [
    job.id,
    job.owner,
    job.clientIP,
    job.name ?? null,
    job.quality,
    job.deduplication,
    job.priority ?? null,
    job.retentionMs ?? null,
    job.callback === undefined ? null : JSON.stringify(job.callback),
    job.interface,
    job.overrides ?? null,
    job.createdOn,
  ];
}

/** An input without a result, from its row (idx, input_data, custom). */
export function toPendingInput(row: Row): PendingInput {
  const input: { index: number; inputData: string; custom?: string } = {
    index: row['idx'] as number,
    inputData: row['input_data'] as string,
  };
  if (row['custom'] !== null) input.custom = row['custom'] as string;
  return input;
}

/** An outbox event from its row and its job's id (job_id); 64-bit integers may come as strings, booleans as 0/1. */
export function toCallbackDelivery(row: Row): CallbackDelivery {
  const delivery: CallbackDelivery = {
    id: Number(row['id']),
    jobId: row['job_id'] as string,
    url: row['url'] as string,
    skipServerCertificateValidation: row['skip_certificate_validation'] === 1 || row['skip_certificate_validation'] === true,
    idempotencyKey: row['idempotency_key'] as string,
    body: row['body'] as string,
    dueAt: Number(row['due_at']),
    attempts: Number(row['attempts']),
  };
  return row['first_attempt_at'] === null ? delivery : { ...delivery, firstAttemptAt: Number(row['first_attempt_at']) };
}

/** A page from rows read up to limit + 1 in the direction of travel, turned round when read backwards. */
export function pageOf<T>(rows: T[], limit: number, backwards: boolean): Page<T> {
  const more = rows.length > limit;
  if (more) rows.length = limit;
  if (backwards) rows.reverse();
  return { data: rows, more };
}

/** The checks of a job list query the stores share. */
export function checkListQuery(query: JobListQuery): void {
  checkLimit(query.limit);
  if (query.createdSince !== undefined) checkIso('createdSince', query.createdSince);
  if (query.createdUntil !== undefined) checkIso('createdUntil', query.createdUntil);
  if (query.afterSequence !== undefined && query.beforeSequence !== undefined) {
    throw new RangeError('afterSequence and beforeSequence together');
  }
}

export function checkEnding(status: string, endedOn: string): void {
  if (status !== 'Deleted' && status !== 'Expired') {
    throw new RangeError(`a job ends Deleted or Expired, not ${String(status)}`);
  }
  checkIso('endedOn', endedOn);
}

export function checkRetention(now: string, defaultRetentionMs: number): void {
  checkIso('now', now);
  if (!Number.isSafeInteger(defaultRetentionMs) || defaultRetentionMs < 0) {
    throw new RangeError('defaultRetentionMs: a non-negative integer');
  }
}

export function checkAttemptTimes(firstAttemptAt: number, dueAt: number): void {
  if (!Number.isSafeInteger(firstAttemptAt) || !Number.isSafeInteger(dueAt)) {
    throw new RangeError('firstAttemptAt and dueAt: milliseconds since the epoch, integers');
  }
}
