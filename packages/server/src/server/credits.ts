/**
 * Credits over HTTP: the admission stage that reserves a submission's cost (402 when it cannot), the balance and
 * daily usage (2.x), credit packs (2.7, root and administrators), the 1.4 account balance, and the quality levels
 * with their unit prices (answered whether or not credits are accounted). The rules and the arithmetic are in
 * src/accounts/credits.ts; the store keeps the balance.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  fromMicro,
  toMicro,
  unitPriceOf,
  untilNextUtcMidnight,
  utcDay,
  dayKey,
  MAX_CREDITS,
  type CreditAccounting,
  type CreditSettings,
} from '../accounts/credits.js';
import { QUALITIES } from 'mailverify/internal';
import type { Clock } from '../jobs/clock.js';
import { formatDuration } from '../jobs/duration.js';
import { forbidden, principalOf, requirePermission } from './access.js';
import type { AdmissionStage } from './admission-stage.js';
import { ProblemError, invalidField } from './problems.js';
import type { ServerContext } from './context.js';
import { pageOf, queryOf, readDates, readPaging } from './query.js';
import { CREDIT_OPERATIONS } from './schemas/index.js';

/** The credit paths of every 2.x version, of 2.7 only, and of 1.4, with their methods (another method: 405). */
export const CREDIT_PATHS: Record<string, readonly string[]> = {
  '/email-validations/quality-levels': ['GET'],
  '/credits/balance': ['GET'],
  '/credits/daily-usage': ['GET'],
};
export const CREDIT_PACK_PATHS: Record<string, readonly string[]> = { '/credits/packs': ['POST'] };
export const LEGACY_CREDIT_PATHS: Record<string, readonly string[]> = { '/account-balance': ['GET'] };

const credits = (micro: number): string => String(fromMicro(micro));

/**
 * The last admission stage: reserves the job's cost (entries × the unit price of its quality) in one operation of the
 * store, so that concurrent submissions never overdraw; given back when the job is not stored after all.
 */
export function creditStage(accounting: CreditAccounting, clock: Clock): AdmissionStage {
  const { settings, store } = accounting;
  return {
    name: 'credit',
    async admit({ job, entries }) {
      const unitPrice = unitPriceOf(settings, job.quality);
      const cost = entries * unitPrice;
      if (cost === 0) return;
      const outcome = await store.reserveCredits({
        jobId: job.id,
        day: utcDay(clock.now()),
        entries,
        unitPrice,
        freeDaily: settings.freeDaily,
        monthlyMax: settings.monthlyMax,
      });
      const costs = `The job costs ${credits(cost)} credits (${entries} entries at ${credits(unitPrice)} for ${job.quality})`;
      if (outcome === 'insufficient-credit') {
        throw new ProblemError(402, `${costs}, more than the free credits left today and the credit packs.`, '/problems/insufficient-credit');
      }
      if (outcome === 'monthly-maximum-exceeded') {
        throw new ProblemError(
          402,
          `${costs}, which would take this month's consumption past its maximum of ${credits(settings.monthlyMax ?? 0)} credits.`,
          '/problems/monthly-maximum-exceeded',
        );
      }
      return { giveBack: () => store.releaseReservation(job.id) };
    },
  };
}

/** The credits of the server, or a 404 saying that they are not accounted. */
function accounted(context: ServerContext): CreditAccounting {
  if (context.credits === null) throw new ProblemError(404, 'Credits are not accounted on this server.');
  return context.credits;
}

/** The balance now: packs, free credits left today and the time to their reset (null without free daily credits). */
async function balanceOf(accounting: CreditAccounting, clock: Clock) {
  const now = clock.now();
  const { packs, freeUsed } = await accounting.store.creditBalance(utcDay(now));
  const { freeDaily } = accounting.settings;
  return {
    packs: fromMicro(packs),
    freeCredits: freeDaily === null ? null : fromMicro(Math.max(0, freeDaily - freeUsed)),
    freeCreditsResetIn: freeDaily === null ? null : formatDuration(untilNextUtcMidnight(now)),
  };
}

/** The 2.x credit routes; `packs`: also POST /credits/packs (2.7). */
export async function creditRoutes(app: FastifyInstance, context: ServerContext, packs: boolean): Promise<void> {
  const { clock } = context.jobs;

  // The standard levels, then the custom ones in the order of the configuration.
  app.get('/email-validations/quality-levels', { schema: CREDIT_OPERATIONS.listQualityLevels }, async () => ({
    data: [
      ...QUALITIES.map((quality) => ({ id: quality, displayName: quality, isCustom: false })),
      ...context.qualityLevels.map(({ id, displayName }) => ({ id, displayName, isCustom: true })),
    ].map(({ id, displayName, isCustom }) => ({
      id,
      displayName,
      isDefault: id === context.defaultQuality,
      isCustom,
      unitPrice: fromMicro(unitPriceOf(context.prices, id)),
      isUnavailable: false,
    })),
  }));

  app.get('/credits/balance', { schema: CREDIT_OPERATIONS.getBalance }, async (request) => {
    const accounting = accounted(context);
    requirePermission(principalOf(request), 'credits', 'read-balance', 'account');
    const { packs: creditPacks, ...free } = await balanceOf(accounting, clock);
    return { creditPacks, ...free };
  });

  app.get('/credits/daily-usage', { schema: CREDIT_OPERATIONS.listDailyUsage }, async (request) => {
    const accounting = accounted(context);
    requirePermission(principalOf(request), 'credits', 'read-usage', 'account');
    const query = queryOf(request);
    const listing = 'credits:daily-usage';
    const dates = readDates(query, 'date', true);
    const paging = readPaging(context.cursors, query, listing, dates === '' ? null : dates);
    const [since = '', until = ''] = paging.filter.split('~');
    const page = await accounting.store.dailyUsage({
      ...(since !== '' && { since: since.slice(0, 10) }),
      ...(until !== '' && { until: until.slice(0, 10) }),
      ...(paging.after !== undefined && { after: paging.after }),
      ...(paging.before !== undefined && { before: paging.before }),
      limit: paging.limit,
    });
    const data = page.data.map((day) => ({ date: day.date, freeCredits: fromMicro(day.freeCredits), creditPacks: fromMicro(day.creditPacks) }));
    return pageOf(context.cursors, data, page.more, paging, (day) => dayKey(day.date), listing);
  });

  if (!packs) return;
  app.post('/credits/packs', { schema: CREDIT_OPERATIONS.addCreditPacks }, async (request: FastifyRequest) => {
    const accounting = accounted(context);
    const principal = principalOf(request);
    if (!principal.isRoot && principal.user?.detail.type !== 'Administrator') {
      throw forbidden('Only root and administrators add credit packs.');
    }
    const given = (request.body as Record<string, unknown> | null | undefined)?.['credits'];
    const micro = typeof given === 'number' ? toMicro(given) : null;
    if (micro === null || micro === 0) {
      throw invalidField('credits', `required, a number of credits above 0 and at most ${MAX_CREDITS}, with at most six decimal places`);
    }
    try {
      await accounting.store.addCreditPacks(micro);
    } catch (error) {
      if (error instanceof RangeError) throw invalidField('credits', 'the credit packs balance would pass its largest value');
      throw error;
    }
    const { packs: creditPacks, ...free } = await balanceOf(accounting, clock);
    return { creditPacks, ...free };
  });
}

/** GET /v1.4/account-balance: the balance in the legacy shape. */
export async function legacyCreditRoutes(app: FastifyInstance, context: ServerContext): Promise<void> {
  app.get('/account-balance', { schema: CREDIT_OPERATIONS.getLegacyBalance }, async (request) => {
    const accounting = accounted(context);
    requirePermission(principalOf(request), 'credits', 'read-balance', 'account');
    const { packs, ...free } = await balanceOf(accounting, context.jobs.clock);
    return { credits: packs, ...free };
  });
}
