/**
 * What every route of a server shares: its stores, its authenticator, its settings and the checks of a submission.
 * Made once by createServer (src/server/app.ts) and handed to each interface's routes.
 */
import type { CreditAccounting, CreditSettings } from '../accounts/credits.js';
import type { UserStore } from '../accounts/types.js';
import type { JobRunner } from '../jobs/jobs.js';
import type { AdmissionStage } from './admission-stage.js';
import type { Authenticator } from './auth.js';
import type { Cursors } from './cursor.js';
import type { ResolvedImportOptions } from './import/index.js';
import type { CustomQualityLevel } from './quality-levels.js';
import type { SecondFactorState } from './second-factor.js';

export interface ServerContext {
  readonly jobs: JobRunner;
  readonly users: UserStore;
  /** Root's username, which no user may take. */
  readonly rootUsername: string;
  readonly auth: Authenticator;
  readonly cursors: Cursors;
  /** The quality of a job that names none: a standard name, or a custom level's id as configured. */
  readonly defaultQuality: string;
  /** The custom quality levels jobs may name, checked. */
  readonly qualityLevels: readonly CustomQualityLevel[];
  /** The unit prices of every level: the accounted ones, else the defaults (shown whether or not credits are on). */
  readonly prices: CreditSettings;
  readonly defaultRetentionMs: number;
  readonly maxEntriesPerJob: number;
  readonly allowPrivateAddresses: boolean;
  readonly fileImport: ResolvedImportOptions;
  /** Shared by the TOTP routes of every interface version. */
  readonly secondFactor: SecondFactorState;
  /** The checks of a valid submission after the user's own limits, in order (src/server/admission.ts). */
  readonly admission: readonly AdmissionStage[];
  /** Credit accounting; null when credits are not accounted. */
  readonly credits: CreditAccounting | null;
}
