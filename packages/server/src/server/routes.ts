/**
 * The 2.x interface (registered under /v2.7 and /v2.6): jobs submitted, read page by page, listed and deleted; bearer
 * tokens. Handlers translate between HTTP and the jobs layer; no SQL and no scheduling here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CreditSettings } from '../accounts/credits.js';
import type { JobRunner } from '../jobs/jobs.js';
import type { UserStore } from '../accounts/types.js';
import type { EntryFilter, JobRecord, JobStatus } from '../jobs/types.js';
import { isStatusCode, type StatusCode } from 'mailverify/internal';
import { clientAddress, type Authenticator } from './auth.js';
import { admit, storeAdmitted, type Admitted } from './admission.js';
import type { ServerContext } from './context.js';
import { filterKey, pageOf, parseFilterKey, queryOf, readDates, readLimit, readPaging, readStatusFilter, type Query } from './query.js';
import { checkRequestProtection } from './protection.js';
import { accessibleJob, permits, principalOf, requirePermission, type Principal } from './access.js';
import type { Cursors, CursorState } from './cursor.js';
import { entriesFormat, sendExport } from './export/index.js';
import { isMultipart, readFileImport, type ResolvedImportOptions } from './import/index.js';
import { ProblemError, excerpt, invalidField } from './problems.js';
import { DEFAULT_PAGE_LIMIT, JOB_STATUSES, MAX_PAGE_LIMIT, overviewOf } from './shapes.js';
import { V2_OPERATIONS } from './schemas/index.js';
import type { CustomQualityLevel } from './quality-levels.js';
import { TOTP_STEP_PATHS, totpStepRoute, USER_PATHS, userRoutes } from './users.js';
import { StreamedBody } from './json-body.js';
import { CREDIT_PACK_PATHS, CREDIT_PATHS, creditRoutes } from './credits.js';
import { OVERRIDE_PATHS, overrideRoutes } from './overrides.js';
import {
  invalidBody,
  readStreamedSubmission,
  readWaitTime,
  receiveSubmission,
  type StreamedSubmission,
  type Submission,
} from './submission.js';

/** Every path of this interface, with its methods: another method on one of them is 405 with `Allow`. */
const PATHS: Record<string, readonly string[]> = {
  '/auth/tokens': ['POST'],
  '/email-validations': ['GET', 'POST'],
  '/email-validations/:id': ['GET', 'DELETE'],
  '/email-validations/:id/overview': ['GET'],
  '/email-validations/:id/entries': ['GET'],
  '/email-validations/:id/entries/:index': ['GET'],
};
const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Every route of `app` but POST /auth/tokens needs credentials: the request's user, or a 401 problem; then the user's
 * firewall and trusted origins (403).
 */
export function requireCredentials(app: FastifyInstance, { auth }: ServerContext): void {
  app.addHook('onRequest', async (request, reply) => {
    const url = request.routeOptions.url;
    // Sign-in itself, and its TOTP step (which reads its first-factor token itself).
    if (url?.endsWith('/auth/tokens') || url?.endsWith('/auth/totp/verifications')) return;
    const principal = await auth.authenticate(request);
    checkRequestProtection(request, reply, principal);
    request.user = principal;
  });
}

/** A known path asked with another method than its own: 405 with `Allow`. */
export function addMethodNotAllowed(app: FastifyInstance, paths: Record<string, readonly string[]>): void {
  for (const [path, methods] of Object.entries(paths)) {
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
    app.route({
      method: ALL_METHODS.filter((m) => !methods.includes(m)),
      url: path,
      // Not an operation of the interface: left out of the OpenAPI document.
      schema: { hide: true },
      handler: async () => {
        throw new ProblemError(405, `This resource accepts ${allow}.`, undefined, { Allow: allow });
      },
    });
  }
}

export async function v2Routes(app: FastifyInstance, { context, users }: { context: ServerContext; users: boolean }): Promise<void> {
  const { jobs, auth } = context;
  requireCredentials(app, context);
  addMethodNotAllowed(app, PATHS);
  // The quality levels, the balance and the daily usage: every 2.x version; credit packs: 2.7 only.
  addMethodNotAllowed(app, CREDIT_PATHS);
  if (users) addMethodNotAllowed(app, CREDIT_PACK_PATHS);
  await creditRoutes(app, context, users);
  // The TOTP step of sign-in: every 2.x version (multi-factor sign-in exists since 2.6). The users: 2.7 only.
  addMethodNotAllowed(app, TOTP_STEP_PATHS);
  await totpStepRoute(app, context);
  if (users) {
    addMethodNotAllowed(app, USER_PATHS);
    await userRoutes(app, context);
    // The account's override rules: mailverify's own, 2.7 only (as the users).
    addMethodNotAllowed(app, OVERRIDE_PATHS);
    await overrideRoutes(app, context);
  }

  app.post('/auth/tokens', { schema: V2_OPERATIONS.createToken }, async (request) => {
    const body = request.body as Record<string, unknown> | null;
    const username = body?.['username'];
    const password = body?.['password'];
    if (typeof username !== 'string') throw invalidField('username', 'required, a string');
    if (typeof password !== 'string') throw invalidField('password', 'required, a string');
    return { accessToken: await auth.issueToken(await auth.signIn(username, password, clientAddress(request))) };
  });

  await streamedJsonRoutes(app, (routes) => {
    routes.post('/email-validations', { schema: V2_OPERATIONS.submitJob }, async (request, reply) => {
      requirePermission(principalOf(request), 'email-validations', 'write', 'my');
      const contentType = request.headers['content-type'];
      if (isMultipart(contentType)) {
        const waitTime = readWaitTime(queryOf(request)['waitTime']);
        const upload = (request.body as StreamedBody | undefined)?.payload ?? request.raw;
        const { inputs, ...settings } = await readFileImport(upload, contentType, context, context.fileImport, request.log);
        const admitted = await admit(request, context, settings, inputs.length, 'v2');
        const job = await storeAdmitted(admitted, (newJob) => jobs.submit(newJob, inputs));
        return snapshot(request, reply, job.id, waitTime, true);
      }
      let waitTime = 0;
      const job = await storeSubmission(request, context, JOB_SETTINGS, (received) => {
        // The order of the buffered body's refusals: the body, then the query, then the fields.
        waitTime = readWaitTime(queryOf(request)['waitTime']);
        if (received.body.root !== 'object') throw invalidBody();
        return admit(request, context, readStreamedSubmission(received, context), received.count, 'v2');
      });
      return snapshot(request, reply, job.id, waitTime, true);
    });
  });

  app.get('/email-validations', { schema: V2_OPERATIONS.listJobs }, async (request) => listJobs(request, queryOf(request)));

  app.get('/email-validations/:id', { schema: V2_OPERATIONS.getJob }, async (request, reply) => {
    const { id } = request.params as { id: string };
    return snapshot(request, reply, id, readWaitTime(queryOf(request)['waitTime']), false);
  });

  app.get('/email-validations/:id/overview', { schema: V2_OPERATIONS.getOverview }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const job = await settled(request, id, readWaitTime(queryOf(request)['waitTime']));
    return reply.code(job.status === 'InProgress' ? 202 : 200).send(overview(job));
  });

  app.get('/email-validations/:id/entries', { schema: V2_OPERATIONS.listEntries }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const query = queryOf(request);
    // JSON pages, or an export (CSV, xlsx, xls) by Accept: src/server/export/.
    const format = entriesFormat(request.headers.accept);
    const job = await settled(request, id, readWaitTime(query['waitTime']));
    if (job.status === 'InProgress') return reply.code(202).send({ overview: overview(job) });
    if (format === 'json') return entriesPage(job, query);
    const filter = readStatusFilter(query, (name) => isStatusCode(name), 'status code') ?? {};
    return sendExport(reply, jobs.options.store, job, filter, format);
  });

  app.get('/email-validations/:id/entries/:index', { schema: V2_OPERATIONS.locateEntry }, async (request, reply) => {
    const { id, index: indexText } = request.params as { id: string; index: string };
    const query = queryOf(request);
    const job = await settled(request, id, readWaitTime(query['waitTime']));
    if (job.status === 'InProgress') return reply.code(202).send({ overview: overview(job) });
    const index = /^\d{1,10}$/.test(indexText) ? Number(indexText) : -1;
    if (index < 0 || index >= job.noOfEntries) {
      throw new ProblemError(404, `The job has no entry ${excerpt(indexText)}.`);
    }
    const limit = readLimit(query['limit']) ?? DEFAULT_PAGE_LIMIT;
    // Pages are aligned on multiples of the limit from index 0.
    const start = Math.floor(index / limit) * limit;
    const page = new URLSearchParams({ limit: String(limit) });
    if (start > 0) page.set('cursor', context.cursors.encode({ listing: `entries:${job.id}`, filter: '', limit, first: start - 1, last: start - 1 }));
    return reply.code(303).header('Location', `${request.server.prefix}/email-validations/${job.id}/entries?${page}`).send();
  });

  app.delete('/email-validations/:id', { schema: V2_OPERATIONS.deleteJob }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const job = await accessibleJob(jobs, request, id, 'delete');
    if (job.status === 'Deleted' || job.status === 'Expired') throw gone(job);
    await jobs.delete(job.id);
    return reply.code(200).send();
  });

  /** The caller's job after waiting up to `waitTime` for it to complete; 404 or 410 when there is none. */
  async function settled(request: FastifyRequest, id: string, waitTime: number): Promise<JobRecord> {
    let job = await accessibleJob(jobs, request, id, 'read');
    if (job.status === 'InProgress' && waitTime > 0) {
      await jobs.waitForEnd(job.id, waitTime);
      job = await accessibleJob(jobs, request, id, 'read');
    }
    if (job.status === 'Deleted' || job.status === 'Expired') throw gone(job);
    return job;
  }

  async function snapshot(request: FastifyRequest, reply: FastifyReply, id: string, waitTime: number, submitted: boolean) {
    if (submitted && !permits(principalOf(request), 'email-validations', 'read', 'my')) {
      // A submitter that may write but not read its jobs: its job is accepted (never a 403 for a stored job, which a
      // client would submit again), answered as 1.4 answers it: where it is and its overview, no results, no waiting.
      const job = (await jobs.get(id))!;
      reply.header('Location', `${request.server.prefix}/email-validations/${job.id}`);
      return reply.code(202).send({ overview: overview(job) });
    }
    const job = await settled(request, id, waitTime);
    if (job.status === 'InProgress') {
      if (submitted) reply.header('Location', `${request.server.prefix}/email-validations/${job.id}`);
      return reply.code(202).send({ overview: overview(job) });
    }
    return reply.code(200).send({ overview: overview(job), entries: await entriesPage(job, {}) });
  }

  function overview(job: JobRecord) {
    return overviewOf(job, context.defaultRetentionMs, jobs.progress(job.id));
  }

  async function entriesPage(job: JobRecord, query: Query) {
    const listing = `entries:${job.id}`;
    const given = readStatusFilter(query, (name) => isStatusCode(name), 'status code') as EntryFilter | null;
    const paging = readPaging(context.cursors, query, listing, given === null ? null : filterKey(given));
    const filter = given ?? parseFilterKey(paging.filter);
    const page = await jobs.options.store.entries(job.id, {
      ...(paging.after !== undefined && { after: paging.after }),
      ...(paging.before !== undefined && { before: paging.before }),
      limit: paging.limit,
      ...filter,
    });
    return pageOf(context.cursors, page.data, page.more, paging, (e) => e.index, listing);
  }

  async function listJobs(request: FastifyRequest, query: Query) {
    const principal = principalOf(request);
    requirePermission(principal, 'email-validations', 'read', 'my');
    const sort = query['sort'] ?? '-createdOn';
    if (sort !== 'createdOn' && sort !== '-createdOn') throw invalidField('sort', 'must be createdOn or -createdOn');
    // The caller's jobs; with account-wide read, another user's (`owner=<id>`) or every job of the account (`owner=*`).
    // User ids are UUIDs, read in either case as job ids are (RFC 9562, section 4); stored in lower case.
    const owner = (query['owner'] ?? principal.id).toLowerCase();
    if (owner !== principal.id) requirePermission(principal, 'email-validations', 'read', 'account');
    const listing = `jobs:${owner}:${sort}`;
    const statuses = readStatusFilter(query, (name) => (JOB_STATUSES as readonly string[]).includes(name), 'job status');
    const dates = readDates(query);
    const given = statuses === null && dates === '' ? null : `${filterKey(statuses ?? {})}|${dates}`;
    const paging = readPaging(context.cursors, query, listing, given);
    const [statusKey = '', dateKey = ''] = paging.filter.split('|');
    const filter = statuses ?? parseFilterKey(statusKey);
    const [since, until] = dateKey.split('~');
    const page = await jobs.options.store.listJobs({
      ...(owner !== '*' && { owner }),
      sort,
      ...(since && { createdSince: since }),
      ...(until && { createdUntil: until }),
      ...(filter.include !== undefined && { include: filter.include as unknown as JobStatus[] }),
      ...(filter.exclude !== undefined && { exclude: filter.exclude as unknown as JobStatus[] }),
      ...(paging.after !== undefined && { afterSequence: paging.after }),
      ...(paging.before !== undefined && { beforeSequence: paging.before }),
      limit: paging.limit,
    });
    const data = page.data.map((job) => ({ job, overview: overview(job) }));
    const result = pageOf(context.cursors, data, page.more, paging, (item) => item.job.sequence, listing);
    return { meta: result.meta, data: result.data.map((item) => item.overview) };
  }
}

/** The members of a JSON submission besides `entries` that the 2.x interface reads. */
const JOB_SETTINGS = ['quality', 'deduplication', 'priority', 'name', 'retention', 'callback', 'captcha'];

/**
 * Routes whose JSON body the handler reads as a stream: `request.body` is a StreamedBody (undefined without a body).
 * Their own context, so that the buffered JSON parser of every other route stays as it is.
 */
export async function streamedJsonRoutes(app: FastifyInstance, routes: (app: FastifyInstance) => void): Promise<void> {
  await app.register(async (child) => {
    child.removeContentTypeParser('application/json');
    child.addContentTypeParser('application/json', (request, payload, done) => {
      const length = Number(request.headers['content-length']);
      done(null, new StreamedBody(payload, Number.isNaN(length) ? undefined : length));
    });
    routes(child);
  });
}

/**
 * A JSON submission stored as it arrives, in a job draft that `accept` checks and admits (throwing a refusal
 * otherwise): the job is started and returned, or nothing of it is left.
 */
export async function storeSubmission(
  request: FastifyRequest,
  context: ServerContext,
  members: readonly string[],
  accept: (received: StreamedSubmission) => Promise<Admitted>,
): Promise<JobRecord> {
  const draft = context.jobs.draft();
  try {
    const body = request.body as StreamedBody | undefined;
    const received = await receiveSubmission(body, request.routeOptions.bodyLimit, members, context, draft);
    return await storeAdmitted(await accept(received), (job) => draft.commit(job));
  } catch (error) {
    await draft.discard();
    throw error;
  }
}

export function gone(job: JobRecord): ProblemError {
  return new ProblemError(410, `The job ${job.id} is ${job.status === 'Expired' ? 'expired' : 'deleted'}.`);
}
