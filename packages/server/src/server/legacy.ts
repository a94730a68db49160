/**
 * The legacy 1.4 interface (under /v1.4): submit, read and delete a job in the older shapes. A job is one job
 * whichever interface submitted it: 1.4 jobs are listed and read through 2.x too, and the other way round.
 *
 * - POST answers 202 with `Location` and the snapshot, even when the job is already done (1.4 has no waitTime).
 * - GET answers 200 with the snapshot and every entry once the job is complete (streamed, page by page from the
 *   store), 202 without entries while it runs.
 * - DELETE answers 200, 410 when already deleted or expired, 406 while the job runs.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { VERSION, toLegacyEntry } from 'mailverify/internal';
import type { JobRecord } from '../jobs/types.js';
import { formatDuration } from '../jobs/duration.js';
import { entryPages } from '../jobs/pages.js';
import { ProblemError, invalidField } from './problems.js';
import { accessibleJob, principalOf, requirePermission } from './access.js';
import { admit } from './admission.js';
import { LEGACY_CREDIT_PATHS, legacyCreditRoutes } from './credits.js';
import type { ServerContext } from './context.js';
import { addMethodNotAllowed, gone, requireCredentials, storeSubmission, streamedJsonRoutes } from './routes.js';
import { LEGACY_OPERATIONS } from './schemas/index.js';
import { canonical, invalidBody, readStreamedSubmission } from './submission.js';

const PATHS: Record<string, readonly string[]> = {
  '/email-validations': ['POST'],
  '/email-validations/:id': ['GET', 'DELETE'],
};
const PAGE = 1000;
const NORMAL_PRIORITY = 127;

interface LegacySnapshot {
  uniqueID: string;
  engineVersion: string;
  submittedOn: string;
  completedOn?: string;
  priority?: number;
  progress: { noOfTotalEntries: number; noOfCompletedEntries: number; estimatedRemainingTime?: string };
}

export async function legacyRoutes(app: FastifyInstance, { context }: { context: ServerContext }): Promise<void> {
  const { jobs } = context;
  requireCredentials(app, context);
  addMethodNotAllowed(app, PATHS);
  addMethodNotAllowed(app, LEGACY_CREDIT_PATHS);
  await legacyCreditRoutes(app, context);

  await streamedJsonRoutes(app, (routes) => {
    routes.post('/email-validations', { schema: LEGACY_OPERATIONS.submitJob }, async (request, reply) => {
      requirePermission(principalOf(request), 'email-validations', 'write', 'my');
      // 1.4 knows Off and Safe only; the other 2.x fields do not exist in it and are ignored, but for `captcha`: a user
      // who submits with a CAPTCHA does so on every interface.
      const job = await storeSubmission(request, context, ['quality', 'priority', 'deduplication', 'captcha'], (received) => {
        if (received.body.root !== 'object') throw invalidBody();
        const { deduplication } = received.body.members;
        if (deduplication != null && canonical(deduplication, ['Off', 'Safe']) === null) {
          throw invalidField('deduplication', 'must be off or safe');
        }
        return admit(request, context, readStreamedSubmission(received, context), received.count, 'v1.4');
      });
      // The route's own prefix, not the path as sent: a Location is a canonical path, never the client's spelling.
      return reply.code(202).header('Location', `${request.server.prefix}/email-validations/${job.id}`).send(snapshotOf(job));
    });
  });

  app.get('/email-validations/:id', { schema: LEGACY_OPERATIONS.getJob }, async (request, reply) => {
    const job = await owned(request, 'read');
    if (job.status === 'InProgress') return reply.code(202).send(snapshotOf(job));
    reply.code(200).type('application/json; charset=utf-8');
    return reply.send(Readable.from(withEntries(job)));
  });

  app.delete('/email-validations/:id', { schema: LEGACY_OPERATIONS.deleteJob }, async (request, reply) => {
    const job = await owned(request, 'delete');
    if (job.status === 'InProgress') {
      throw new ProblemError(406, `The job ${job.id} is still in progress: delete it once it is complete.`);
    }
    await jobs.delete(job.id);
    return reply.code(200).send();
  });

  /** The job if the caller may `operation` it: 404 when there is none, 410 when it is deleted or expired. */
  async function owned(request: FastifyRequest, operation: 'read' | 'delete'): Promise<JobRecord> {
    const job = await accessibleJob(jobs, request, (request.params as { id: string }).id, operation);
    if (job.status === 'Deleted' || job.status === 'Expired') throw gone(job);
    return job;
  }

  function snapshotOf(job: JobRecord): LegacySnapshot {
    const running = job.status === 'InProgress';
    const progress = running ? jobs.progress(job.id) : undefined;
    const completed = running ? Math.max(job.noOfCompleted, Math.floor((progress?.percentage ?? 0) * job.noOfEntries)) : job.noOfEntries;
    const remaining = progress?.estimatedTimeRemainingMs;
    return {
      uniqueID: job.id,
      engineVersion: VERSION,
      submittedOn: job.createdOn,
      ...(job.completedOn !== undefined && { completedOn: job.completedOn }),
      ...(job.priority !== undefined && job.priority !== NORMAL_PRIORITY && { priority: job.priority }),
      progress: {
        noOfTotalEntries: job.noOfEntries,
        noOfCompletedEntries: completed,
        ...(remaining !== undefined && { estimatedRemainingTime: formatDuration(remaining) }),
      },
    };
  }

  /** The snapshot of a complete job with every entry, as JSON text a page of entries at a time. */
  async function* withEntries(job: JobRecord): AsyncGenerator<string> {
    const head = JSON.stringify(snapshotOf(job));
    yield `${head.slice(0, -1)},"entries":[`;
    let separator = '';
    for await (const page of entryPages(jobs.options.store, job.id, PAGE, {}, { whole: true })) {
      let text = '';
      for (const entry of page) {
        text += separator + JSON.stringify(toLegacyEntry(entry));
        separator = ',';
      }
      yield text;
    }
    yield ']}';
  }
}
