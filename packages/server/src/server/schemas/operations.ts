/**
 * The Fastify route schemas of every operation: parameters, request bodies and every answer (status, media type,
 * headers, body), written from the service's interface and from what the handlers do. They document; they do not
 * check: the handlers read requests themselves and answer a 400 problem that names the JSON path (src/server/schemas/
 * index.ts turns Fastify's validation and serialization off for these routes).
 */
import { EXPORT_TYPES } from '../export/negotiate.js';
import { JOB_STATUSES, MAX_PAGE_LIMIT, DEFAULT_PAGE_LIMIT } from '../shapes.js';
import { MAX_WAIT_TIME_MS } from '../submission.js';
import { ref, type JsonSchema } from './components.js';

/** One answer of an operation: a description, optional headers, and a body per media type (none when `type: 'null'`). */
type Answer = JsonSchema;

/** An answer with a JSON body. */
export function json(description: string, schema: JsonSchema, headers?: Record<string, JsonSchema>): Answer {
  return content(description, { 'application/json': schema }, headers);
}

/** An answer with a body of each of the given media types. */
export function content(description: string, media: Record<string, JsonSchema>, headers?: Record<string, JsonSchema>): Answer {
  const bodies = Object.fromEntries(Object.entries(media).map(([type, schema]) => [type, { schema }]));
  return { description, ...(headers !== undefined && { headers }), content: bodies };
}

/** An answer without a body. */
export function empty(description: string, headers?: Record<string, JsonSchema>): Answer {
  return { type: 'null', description, ...(headers !== undefined && { headers }) };
}

/** An answer with a problem document. */
export function problem(description: string, headers?: Record<string, JsonSchema>): Answer {
  return content(description, { 'application/problem+json': ref('Problem') }, headers);
}

/**
 * An operation of the server itself (API reference, health, metrics), without credentials unless `security` names
 * them (`[{ basicAuth: [] }]`): `app.get('/health', { schema: serverOperation({ operationId: 'health', summary:
 * 'Liveness' }, { 200: json('Alive.', { type: 'object' }) }) }, handler)`.
 */
export function serverOperation(
  about: { operationId: string; summary: string; description?: string; security?: JsonSchema[] },
  response: Record<string, Answer>,
): JsonSchema {
  return { security: [], ...about, tags: ['Server'], response: { ...response, '5xx': FAILED } };
}

const FAILED = problem('The server failed to answer (nothing internal is said).');
const LOCATION = { Location: { type: 'string', description: 'The path of the job, to poll.' } };
const CHALLENGE = { 'WWW-Authenticate': { type: 'string', description: '`Basic realm="mailverify"`.' } };

const RETRY_AFTER = { 'Retry-After': { type: 'string', description: 'Seconds to wait before trying again.' } };
/** The answers every operation with credentials may give. */
const GUARDED = {
  401: problem('No credentials, wrong ones, or an expired token.', CHALLENGE),
  403: problem(
    'The caller\'s permissions do not allow this, or its user\'s firewall does not admit the client\'s address, or (a ' +
      'BrowserApp with trusted origins) the `Origin` is not trusted.',
  ),
  429: problem(
    'Too many requests: failed sign-ins with this username or from this address, requests from this address (when ' +
      'the server limits their rate), or, for a submission, more than the user\'s throttling rules allow: wait for ' +
      '`Retry-After`.',
    RETRY_AFTER,
  ),
  '5xx': FAILED,
};
/** The answers of a request with a body. */
const WITH_BODY = {
  413: problem(
    'The body is larger than the server takes (the file of an import: its upload limit, a workbook\'s inflated size, ' +
      'its shared string table, or a text, tag or shared string in it longer than a cell may be).',
  ),
  415: problem('A body that is neither JSON nor multipart/form-data; for an import, a file type it does not read.'),
};
/** The refusals of a submission's CAPTCHA (src/server/admission.ts), besides those of any request with credentials. */
const CAPTCHA = {
  401: problem(
    'No credentials, wrong ones, or an expired token (challenge `Basic`); or, type `/problems/captcha-validation-failed`, ' +
      'the CAPTCHA of a user who submits with one is missing, of a provider the user has not, refused by the provider, ' +
      'or already used (challenge `Captcha`).',
    { 'WWW-Authenticate': { type: 'string', description: '`Basic realm="mailverify"`, or `Captcha realm="mailverify"` for a CAPTCHA.' } },
  ),
  503: problem('Type `/problems/captcha-provider-unavailable`: the CAPTCHA provider could not be asked; nothing was stored, send it again after `Retry-After`.', RETRY_AFTER),
};
/** A submission refused for credit (credits accounted only). */
const NO_CREDIT = {
  402: problem(
    'Credits are accounted and the job costs more than the free credits left today and the credit packs ' +
      '(`/problems/insufficient-credit`), or would take the month past its maximum (`/problems/monthly-maximum-exceeded`).',
  ),
};
/** A submission refused for a full disk (nothing stored). */
const DISK_FULL = { 507: problem('The disk holding the data is full: nothing was stored; try again after `Retry-After`.', RETRY_AFTER) };
/** A deletion refused for a full disk (the job is as it was). */
const DISK_FULL_DELETE = { 503: problem('The disk holding the data is full: the job is as it was; try again after `Retry-After`.', RETRY_AFTER) };
/** The answers about one job of the caller. */
const ONE_JOB = {
  400: problem('A query parameter is not valid; `detail` names it.'),
  404: problem('No job of the caller has this id.'),
  410: problem('The job is deleted or expired.'),
};

const waitTime: JsonSchema = {
  type: 'integer',
  minimum: 0,
  maximum: MAX_WAIT_TIME_MS,
  default: 0,
  description: 'Milliseconds to wait for the job to complete before answering.',
};
const limit: JsonSchema = {
  type: 'integer',
  minimum: 1,
  maximum: MAX_PAGE_LIMIT,
  description: `Items of a page (default ${DEFAULT_PAGE_LIMIT}; with a cursor, the cursor's).`,
};
const paging: Record<string, JsonSchema> = {
  limit,
  cursor: { type: 'string', description: '`meta.cursor` of a page: the page after it.' },
  'cursor:prev': { type: 'string', description: '`meta.cursor` of a page: the page before it.' },
};
const statusFilter = (what: string): Record<string, JsonSchema> => ({
  status: { type: 'string', description: `Comma-separated ${what}: only these.` },
  'status:include': { type: 'string', description: 'The same as `status` (both: their union).' },
  'status:exclude': { type: 'string', description: `Comma-separated ${what}: not these.` },
});
const query = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: 'object', properties });
const jobId: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid', description: 'The job\'s id.' } } };

/** A shared schema narrowed: `allOf` keeps the reference, the extra keywords say what this answer adds. */
const narrowed = (name: string, extra: JsonSchema): JsonSchema => ({ allOf: [ref(name), extra] });
const withStatus = (status: string): JsonSchema => ({ properties: { status: { const: status } } });
const completedSnapshot = narrowed('JobSnapshot', { required: ['entries'], properties: { overview: withStatus('Completed') } });
const runningSnapshot = narrowed('JobSnapshot', { not: { required: ['entries'] }, properties: { overview: withStatus('InProgress') } });
const legacyRunning = narrowed('LegacySnapshot', { not: { required: ['entries'] } });
const RUNNING = json('The job is still running: its overview, without entries.', runningSnapshot);

/** The operations of the 2.x interface (under /v2.7 and /v2.6), by method and path as routes.ts registers them. */
export const V2_OPERATIONS = {
  createToken: {
    operationId: 'createToken',
    summary: 'A bearer token for a user name and password',
    security: [],
    body: ref('Credentials'),
    response: {
      200: json('The token.', ref('AccessToken')),
      400: problem('A missing or malformed field; `detail` names it.'),
      401: problem('Wrong user name or password.', CHALLENGE),
      429: GUARDED[429],
      ...WITH_BODY,
      '5xx': FAILED,
    },
  },
  submitJob: {
    operationId: 'submitJob',
    summary: 'Submit a job: a JSON list of entries or a file',
    description:
      'Answers 200 with the job and its first page of entries when it completes within `waitTime`, else 202 with its ' +
      'overview and `Location`.',
    querystring: query({ waitTime }),
    body: { content: { 'application/json': { schema: ref('Submission') }, 'multipart/form-data': { schema: ref('FileImport') } } },
    response: {
      200: json('The job completed within waitTime.', completedSnapshot),
      202: json('The job runs: poll `Location`.', runningSnapshot, LOCATION),
      400: problem('A field is missing or not valid (`detail` names its JSON path), the JSON is malformed, or the file holds no entry.'),
      ...WITH_BODY,
      ...DISK_FULL,
      ...NO_CREDIT,
      ...GUARDED,
      401: CAPTCHA[401],
      503: problem(
        'A workbook import while the server reads as many workbooks as it may at once, or (type ' +
          '`/problems/captcha-provider-unavailable`) the CAPTCHA provider could not be asked: retry after `Retry-After`.',
        RETRY_AFTER,
      ),
    },
  },
  listJobs: {
    operationId: 'listJobs',
    summary: 'The caller\'s jobs, page by page',
    querystring: query({
      sort: { enum: ['createdOn', '-createdOn'], default: '-createdOn', description: 'By creation time: oldest or (default) newest first.' },
      ...statusFilter(`job statuses (${JOB_STATUSES.join(', ')})`),
      createdOn: { type: 'string', format: 'date', description: 'Jobs created on this day (UTC).' },
      'createdOn:since': { type: 'string', description: 'Created on or after: a day (yyyy-mm-dd) or an ISO 8601 time.' },
      'createdOn:until': { type: 'string', description: 'Created on or before: a day (yyyy-mm-dd, the whole day) or an ISO 8601 time.' },
      ...paging,
    }),
    response: {
      200: json('A page of jobs.', ref('JobPage')),
      400: problem('A query parameter is not valid, or a cursor of another listing; `detail` names it.'),
      ...GUARDED,
    },
  },
  getJob: {
    operationId: 'getJob',
    summary: 'A job: its overview, and its first page of entries once complete',
    params: jobId,
    querystring: query({ waitTime }),
    response: { 200: json('The job is complete.', completedSnapshot), 202: RUNNING, ...ONE_JOB, ...GUARDED },
  },
  deleteJob: {
    operationId: 'deleteJob',
    summary: 'Delete a job (a running one stops)',
    params: jobId,
    response: { 200: empty('Deleted.'), 404: ONE_JOB[404], 410: ONE_JOB[410], ...DISK_FULL_DELETE, ...GUARDED },
  },
  getOverview: {
    operationId: 'getOverview',
    summary: 'A job\'s overview',
    params: jobId,
    querystring: query({ waitTime }),
    response: {
      200: json('The job is complete.', narrowed('Overview', withStatus('Completed'))),
      202: json('The job is still running.', narrowed('Overview', withStatus('InProgress'))),
      ...ONE_JOB,
      ...GUARDED,
    },
  },
  listEntries: {
    operationId: 'listEntries',
    summary: 'A job\'s entries: a JSON page, or an export by Accept',
    description:
      `\`Accept\` chooses: application/json (pages), ${EXPORT_TYPES.csv} (UTF-8), ${EXPORT_TYPES.xlsx}, ${EXPORT_TYPES.xls}. ` +
      'An export holds every entry the status filter selects; `limit` and the cursors apply to JSON pages only.',
    params: jobId,
    querystring: query({ ...statusFilter('status codes'), ...paging, waitTime }),
    response: {
      200: content(
        'The entries.',
        {
          'application/json': ref('EntryPage'),
          [EXPORT_TYPES.csv]: { type: 'string', description: 'A header row of the entry\'s field names, then a row per entry.' },
          [EXPORT_TYPES.xlsx]: { contentMediaType: EXPORT_TYPES.xlsx },
          [EXPORT_TYPES.xls]: { contentMediaType: EXPORT_TYPES.xls },
        },
        { 'Content-Disposition': { type: 'string', description: 'Exports: `attachment; filename="<id>.<csv|xlsx|xls>"`.' } },
      ),
      202: RUNNING,
      ...ONE_JOB,
      406: problem('`Accept` allows none of the formats.'),
      415: problem('The export has more rows than the spreadsheet format holds.'),
      ...GUARDED,
    },
  },
  locateEntry: {
    operationId: 'locateEntry',
    summary: 'The page that holds an entry',
    params: {
      type: 'object',
      required: ['id', 'index'],
      properties: { ...(jobId['properties'] as object), index: { type: 'integer', minimum: 0, description: 'The entry\'s zero-based index.' } },
    },
    querystring: query({ limit, waitTime }),
    response: {
      202: RUNNING,
      303: empty('The page of entries that holds it (pages of `limit` entries from index 0).', {
        Location: { type: 'string', description: 'The entries page.' },
      }),
      ...ONE_JOB,
      404: problem('No job of the caller has this id, or the job has no entry at this index.'),
      ...GUARDED,
    },
  },
} as const;

/** The operations of the legacy 1.4 interface (under /v1.4). */
export const LEGACY_OPERATIONS = {
  submitJob: {
    operationId: 'submitJob',
    summary: 'Submit a job (1.4)',
    body: ref('LegacySubmission'),
    response: {
      202: json('The job, even when it is already complete: poll `Location`.', legacyRunning, LOCATION),
      400: problem('A field is missing or not valid (`detail` names its JSON path), or the JSON is malformed.'),
      ...WITH_BODY,
      ...DISK_FULL,
      ...NO_CREDIT,
      ...GUARDED,
      ...CAPTCHA,
    },
  },
  getJob: {
    operationId: 'getJob',
    summary: 'A job (1.4): every entry once it is complete',
    params: jobId,
    response: {
      200: json('The job is complete: every entry.', narrowed('LegacySnapshot', { required: ['entries', 'completedOn'] })),
      202: json('The job is still running.', legacyRunning),
      404: ONE_JOB[404],
      410: ONE_JOB[410],
      ...GUARDED,
    },
  },
  deleteJob: {
    operationId: 'deleteJob',
    summary: 'Delete a complete job (1.4)',
    params: jobId,
    response: {
      200: empty('Deleted.'),
      404: ONE_JOB[404],
      406: problem('The job is still running: delete it once it is complete.'),
      410: ONE_JOB[410],
      ...DISK_FULL_DELETE,
      ...GUARDED,
    },
  },
} as const;

const userId: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid', description: 'The user\'s id.' } } };
const ETAG = { ETag: { type: 'string', description: 'The user\'s `etag`, quoted: give it in `If-Match` to change the user only as read.' } };
const ONE_USER = {
  404: problem('No user of this id, or one the caller may not see.'),
  410: problem('The user is deleted.'),
};
const IF_MATCH: JsonSchema = {
  type: 'object',
  properties: { 'if-match': { type: 'string', description: 'Entity tags (quoted or bare, a list, or `*`): 412 when none is the user\'s.' } },
};
const PRECONDITION = { 412: problem('`If-Match` names none of the user\'s entity tags (it changed since it was read).') };

/** The users of the account and the TOTP second factor (under /v2.7 only). */
export const USER_OPERATIONS = {
  listUsers: {
    operationId: 'listUsers',
    summary: 'The account\'s users (needs account-wide users:read)',
    querystring: query({
      includeDeleted: { type: 'string', enum: ['true', 'false'], default: 'false', description: 'true: the deleted users too.' },
      type: { type: 'string', enum: ['Administrator', 'Standard', 'BrowserApp'] },
      sort: { type: 'string', enum: ['createdOn', '-createdOn', 'displayName', '-displayName'], default: 'createdOn' },
      ...paging,
    }),
    response: { 200: json('A page of users.', ref('UserPage')), 400: problem('A query parameter is not valid; `detail` names it.'), ...GUARDED },
  },
  createUser: {
    operationId: 'createUser',
    summary: 'Create a user',
    body: ref('UserDetail'),
    response: {
      200: json('The new user.', ref('UserOverview'), { Location: { type: 'string', description: 'The path of the user.' }, ...ETAG }),
      400: problem('A field is missing or not valid, or the username is taken; `detail` names its JSON path.'),
      ...WITH_BODY,
      ...GUARDED,
    },
  },
  getUser: {
    operationId: 'getUser',
    summary: 'A user\'s settings',
    params: userId,
    response: { 200: json('The user.', ref('UserDetail'), ETAG), ...ONE_USER, ...GUARDED },
  },
  patchUser: {
    operationId: 'patchUser',
    summary: 'Change a user with a JSON Patch (RFC 6902), all or nothing',
    params: userId,
    headers: IF_MATCH,
    body: { content: { 'application/json-patch+json': { schema: { type: 'array', items: { type: 'object', required: ['op', 'path'] } } } } },
    response: {
      200: json('The changed user.', ref('UserOverview'), ETAG),
      400: problem('An operation is malformed, or the result is not a valid user; `detail` names the JSON path.'),
      409: problem('A `test` operation failed: nothing was changed.'),
      ...PRECONDITION,
      ...ONE_USER,
      ...WITH_BODY,
      ...GUARDED,
    },
  },
  deleteUser: {
    operationId: 'deleteUser',
    summary: 'Delete a user (its jobs stay until their retention ends)',
    params: userId,
    headers: IF_MATCH,
    response: { 200: empty('Deleted.'), ...PRECONDITION, ...ONE_USER, ...GUARDED },
  },
  enrolTotp: {
    operationId: 'enrolTotp',
    summary: 'Start a TOTP enrolment (the user itself, administrators and root)',
    description: 'The secret waits for its confirmation; an enrolled one stays in use until then.',
    params: userId,
    response: { 200: json('The new secret and its otpauth URI.', ref('TotpEnrolment')), 400: problem('A BrowserApp has no second factor.'), ...ONE_USER, ...GUARDED },
  },
  confirmTotp: {
    operationId: 'confirmTotp',
    summary: 'Confirm a TOTP enrolment with a code of the new secret',
    params: userId,
    body: ref('PassCode'),
    response: {
      200: json('Enrolled: the user.', ref('UserOverview'), ETAG),
      400: problem('`passCode` is missing.'),
      409: problem('No enrolment waits for its confirmation.'),
      ...ONE_USER,
      ...WITH_BODY,
      ...GUARDED,
    },
  },
  removeTotp: {
    operationId: 'removeTotp',
    summary: 'Remove a user\'s TOTP (and its isMfaRequired)',
    params: userId,
    response: { 200: json('The user.', ref('UserOverview'), ETAG), ...ONE_USER, ...GUARDED },
  },
  verifyTotp: {
    operationId: 'verifyTotp',
    summary: 'The TOTP step of a sign-in: a code for a full token',
    description:
      'Sent with the first-factor bearer token of POST /auth/tokens (no other credentials). A wrong or used code is 403; ' +
      'the fifth revokes the token (401).',
    body: ref('PassCode'),
    response: {
      200: json('The token.', ref('AccessToken')),
      400: problem('`passCode` is missing.'),
      401: problem('No first-factor token, a wrong or revoked one.', CHALLENGE),
      403: problem('The code is wrong or was used already, or the user\'s firewall does not admit the client\'s address.'),
      429: GUARDED[429],
      ...WITH_BODY,
      '5xx': FAILED,
    },
  },
} as const;

const NOT_ACCOUNTED = problem('Credits are not accounted on this server.');

/** Credits and quality levels (the 2.x versions; packs under /v2.7 only) and the 1.4 account balance. */
export const CREDIT_OPERATIONS = {
  listQualityLevels: {
    operationId: 'listQualityLevels',
    summary: 'The quality levels and their unit prices (whether or not credits are accounted)',
    response: { 200: json('The quality levels.', ref('QualityLevels')), ...GUARDED },
  },
  getBalance: {
    operationId: 'getCreditBalance',
    summary: 'The account\'s credit balance (needs credits:read-balance, account-wide)',
    response: { 200: json('The balance.', ref('CreditBalance')), 404: NOT_ACCOUNTED, ...GUARDED },
  },
  listDailyUsage: {
    operationId: 'listCreditDailyUsage',
    summary: 'Credits consumed per UTC day, oldest first (needs credits:read-usage, account-wide)',
    querystring: query({
      date: { type: 'string', format: 'date', description: 'This day only (UTC).' },
      'date:since': { type: 'string', format: 'date', description: 'From this day on (yyyy-mm-dd).' },
      'date:until': { type: 'string', format: 'date', description: 'Up to this day (yyyy-mm-dd).' },
      ...paging,
    }),
    response: {
      200: json('A page of days.', ref('DailyUsagePage')),
      400: problem('A query parameter is not valid, or a cursor of another listing; `detail` names it.'),
      404: NOT_ACCOUNTED,
      ...GUARDED,
    },
  },
  addCreditPacks: {
    operationId: 'addCreditPacks',
    summary: 'Add credit packs to the balance (root and administrators)',
    body: ref('CreditPack'),
    response: {
      200: json('The new balance.', ref('CreditBalance')),
      400: problem('`credits` is missing, not above 0, or has more than six decimal places.'),
      404: NOT_ACCOUNTED,
      ...WITH_BODY,
      ...GUARDED,
    },
  },
  getLegacyBalance: {
    operationId: 'getAccountBalance',
    summary: 'The account balance (needs credits:read-balance, account-wide)',
    response: { 200: json('The balance.', ref('LegacyAccountBalance')), 404: NOT_ACCOUNTED, ...GUARDED },
  },
} as const;

/** The account's classifier override rules (mailverify's own, under /v2.7; root and administrators). */
export const OVERRIDE_OPERATIONS = {
  getOverrides: {
    operationId: 'getOverrideRules',
    summary: 'The account\'s classifier override rules, in order (root and administrators)',
    response: { 200: json('The rules (an empty array without any).', ref('OverrideRules')), ...GUARDED },
  },
  replaceOverrides: {
    operationId: 'replaceOverrideRules',
    summary: 'Replace the account\'s classifier override rules (root and administrators): they apply to the jobs submitted from now on',
    body: {
      oneOf: [
        ref('OverrideRules'),
        { type: 'object', required: ['overrides'], properties: { overrides: ref('OverrideRules') }, description: 'The rules as a member (also read).' },
      ],
    },
    response: {
      200: json('The rules now kept.', ref('OverrideRules')),
      400: problem('A rule is malformed (`detail` names it: `overrides[2].classification`), more than 10,000 rules, or a body that is no array of rules.'),
      ...WITH_BODY,
      ...GUARDED,
    },
  },
} as const;
