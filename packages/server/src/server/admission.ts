/**
 * What a submission passes once it is read and valid, before its job is stored (2.x JSON, file import and 1.4 alike),
 * in this order, the first refusal answering: the user's `maxEntriesPerJob` (400), the permission a `retention` needs
 * (403), then the server's admission stages: CAPTCHA (401/503), throttling (429), credit (402). A stage may take
 * something (a throttling slot, a credit reservation) that is given back when a later stage refuses or the job is not
 * stored after all.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { isoTime } from '../jobs/clock.js';
import { parseDuration } from '../jobs/duration.js';
import { accountOverridesKey } from '../jobs/overrides.js';
import type { JobInterface, JobRecord, NewJob } from '../jobs/types.js';
import { principalOf, requirePermission, type Principal } from './access.js';
import { clientAddress } from './auth.js';
import { invalidField } from './problems.js';
import type { AdmissionStage, SubmissionSettings, Taken } from './admission-stage.js';
import type { ServerContext } from './context.js';
import type { Submission } from './submission.js';

/** A submission let through every stage: its job, and what to do once the job is stored or was not. */
export interface Admitted {
  readonly job: NewJob;
  kept(job: JobRecord): Promise<void>;
  giveBack(): Promise<void>;
}

/**
 * Runs the checks of a valid submission with `entries` entries, in order; the job to store, or the first refusal
 * (with everything taken by earlier stages given back).
 */
export async function admit(
  request: FastifyRequest,
  context: ServerContext,
  settings: SubmissionSettings,
  entries: number,
  api: JobInterface,
): Promise<Admitted> {
  const principal = principalOf(request);
  const max = principal.user?.detail.throttling.maxEntriesPerJob;
  if (max !== undefined && entries > max) throw invalidField('entries', `at most ${max} entries per job for this user, got ${entries}`);
  // The account's override rules as they are now: the job keeps them whatever they become (src/jobs/overrides.ts).
  const overrides = await accountOverridesKey(context.jobs.options.store);
  const job = newJob(request, settings, context, api, overrides);
  const taken: Taken[] = [];
  const giveBack = async (): Promise<void> => {
    for (const item of taken.splice(0).reverse()) await item.giveBack?.();
  };
  try {
    for (const stage of context.admission) {
      const took = await stage.admit({ request, principal, job, entries, settings });
      if (took !== undefined) taken.push(took);
    }
  } catch (error) {
    await giveBack();
    throw error;
  }
  return {
    job,
    kept: async (record) => {
      for (const item of taken.splice(0)) await item.kept?.(record);
    },
    giveBack,
  };
}

/**
 * The job a submission makes: the caller's, with the user's defaults and then the server's for what the submission
 * leaves out, and the key of the account's current override rules. A retention given at submission needs the
 * permission to delete (the job ends when its retention does).
 */
function newJob(request: FastifyRequest, submission: SubmissionSettings, context: ServerContext, api: JobInterface, overrides: string | undefined): NewJob {
  const principal = principalOf(request);
  if (submission.retentionMs !== undefined) requirePermission(principal, 'email-validations', 'delete', 'my');
  const userRetention = principal.user?.detail.defaults.retention;
  const retentionMs = submission.retentionMs ?? (userRetention === undefined ? undefined : (parseDuration(userRetention) ?? undefined));
  return {
    id: randomUUID(),
    owner: principal.id,
    clientIP: clientAddress(request),
    ...(submission.name !== undefined && { name: submission.name }),
    quality: submission.quality ?? context.defaultQuality,
    deduplication: submission.deduplication ?? 'Off',
    ...(submission.priority !== undefined && { priority: submission.priority }),
    ...(retentionMs !== undefined && { retentionMs }),
    ...(submission.callback !== undefined && { callback: submission.callback }),
    interface: api,
    ...(overrides !== undefined && { overrides }),
    createdOn: isoTime(context.jobs.clock),
  };
}

/**
 * Stores an admitted job: `store` makes it (from a draft or its inputs); when that fails, what the stages took is
 * given back and the failure thrown.
 */
export async function storeAdmitted(admitted: Admitted, store: (job: NewJob) => Promise<JobRecord>): Promise<JobRecord> {
  let record: JobRecord;
  try {
    record = await store(admitted.job);
  } catch (error) {
    await admitted.giveBack();
    throw error;
  }
  await admitted.kept(record);
  return record;
}
