/**
 * The checks a valid submission goes through before its job is stored (protection, throttling, credits...): what a
 * stage sees, and what it may take and give back.
 */
import type { FastifyRequest } from 'fastify';
import type { JobRecord, NewJob } from '../jobs/types.js';
import type { Principal } from './access.js';
import type { Submission } from './submission.js';

/** A submission's settings as read (its entries are counted, or already stored in a draft). */
export type SubmissionSettings = Omit<Submission, 'inputs'>;

/** The submission an admission stage looks at. */
export interface Candidate {
  readonly request: FastifyRequest;
  readonly principal: Principal;
  /** The job as it will be stored: its id, owner, quality, client IP... */
  readonly job: NewJob;
  /** How many entries it has. */
  readonly entries: number;
  readonly settings: SubmissionSettings;
}

/** What a stage took for a submission it let through. */
export interface Taken {
  /** The job was stored: what was taken stays taken. */
  readonly kept?: (job: JobRecord) => void | Promise<void>;
  /** A later stage refused, or the job could not be stored: give it back. */
  readonly giveBack?: () => void | Promise<void>;
}

/** One check of a submission: throws its refusal (a ProblemError), else says what it took, if anything. */
export interface AdmissionStage {
  readonly name: string;
  admit(candidate: Candidate): Promise<Taken | void> | Taken | void;
}
