/**
 * Credits of the account: what a job costs, what it may take, and what it gives back. Plain types and arithmetic
 * here; a store (CreditStore) keeps the balance, the daily ledger and the reservations, and applies the rules below
 * in one transaction each.
 *
 * Amounts are integers of micro-credits (a millionth of a credit) wherever they are kept or added: decimal unit
 * prices (0.1 + 0.2) never drift as binary floating point would, and SQL sums stay exact. An amount is read from its
 * decimal text and refused, never rounded, when it has more than six decimal places; it is written back as the
 * nearest double of micro / 10^6, which JSON prints as the same decimal (division of two exact integers is correctly
 * rounded, and the shortest decimal of that double is the one with at most six places).
 *
 * The model:
 * - A job costs its entries × the unit price of its quality, reserved at submission: first from the free credits
 *   left today (the first N credits consumed each UTC day are free), the rest from the credit packs (a balance that
 *   never expires). Refused when free credits left plus packs are below the cost (insufficient credit), else when the
 *   month's consumption (free credits and reservations included) would go past the monthly maximum.
 * - A reservation counts as consumed (balance, daily usage, month) until it is settled: when its job completes or is
 *   deleted, the cost of the entries not verified (Duplicate entries, entries never answered) is released to the day
 *   and month of the reservation, packs first being given back (the rest is consumed free credits first); a job that
 *   was never stored gives back the whole reservation.
 */
import type { Quality, QualityLevel } from 'mailverify/internal';

/** Micro-credits in one credit. */
export const MICRO = 1_000_000;

/** The largest amount of one option or one pack: a billion credits (its micro-credits, and any sum of a few, stay exact). */
export const MAX_CREDITS = 1_000_000_000;

/** The largest balance of credit packs, in micro-credits: integers stay exact up to 2^53. */
export const MAX_BALANCE_MICRO = 9_000_000_000_000_000;

/** The unit prices when none are configured: Standard 1, High 2, Extreme 4. */
export const DEFAULT_UNIT_PRICES: Readonly<Record<Quality, number>> = { Standard: 1, High: 2, Extreme: 4 };

/** Credit accounting as the server is configured (absent: not accounted). Amounts in credits, decimals allowed. */
export interface CreditOptions {
  /** Per entry, by quality (defaults 1, 2, 4). */
  readonly unitPrices?: Partial<Record<Quality, number>>;
  /** The credits consumed each UTC day that are free (default: none). */
  readonly freeDailyCredits?: number;
  /** The most credits consumed in a UTC calendar month, free ones included (default: no maximum). */
  readonly monthlyMaxCredits?: number;
}

/** CreditOptions checked and in micro-credits. */
export interface CreditSettings {
  readonly unitPrices: Readonly<Record<Quality, number>>;
  /** The unit prices of custom quality levels, by id in lower case: each level's own, else the Standard one. */
  readonly customUnitPrices: ReadonlyMap<string, number>;
  readonly freeDaily: number | null;
  readonly monthlyMax: number | null;
}

/** Decimal text of an amount: digits, optionally a point and up to six decimals. */
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * The micro-credits of an amount written in decimal (`"0.25"`) or given as a number (read from its shortest decimal
 * form, as JSON wrote it); null when it is not a finite non-negative amount of at most MAX_CREDITS with at most six
 * decimal places.
 */
export function toMicro(amount: number | string): number | null {
  const text = typeof amount === 'number' ? (Number.isFinite(amount) ? String(amount) : '') : amount.trim();
  const match = DECIMAL.exec(text);
  if (match === null) return null;
  const [, whole = '', fraction = ''] = match;
  if (fraction.replace(/0+$/, '').length > 6) return null;
  const micro = Number(whole) * MICRO + Number(fraction.replace(/0+$/, '').padEnd(6, '0') || '0');
  return Number.isSafeInteger(micro) && micro <= MAX_CREDITS * MICRO ? micro : null;
}

/** An amount in credits, as written in answers. */
export function fromMicro(micro: number): number {
  return micro / MICRO;
}

/**
 * The options checked and in micro-credits, with the unit prices of the custom quality `levels` (those with an id); a
 * TypeError names the option that is wrong.
 */
export function creditSettings(options: CreditOptions, levels: readonly QualityLevel[] = []): CreditSettings {
  const read = (name: string, value: number | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const micro = typeof value === 'number' ? toMicro(value) : null;
    if (micro === null) {
      throw new TypeError(`credits.${name}: a number of credits from 0 to ${MAX_CREDITS} with at most six decimal places, not ${String(value)}`);
    }
    return micro;
  };
  const known = ['unitPrices', 'freeDailyCredits', 'monthlyMaxCredits'];
  for (const key of Object.keys(options)) if (!known.includes(key)) throw new TypeError(`credits.${key}: no such option`);
  const prices = options.unitPrices ?? {};
  for (const key of Object.keys(prices)) if (!(key in DEFAULT_UNIT_PRICES)) throw new TypeError(`credits.unitPrices.${key}: no such quality`);
  const unitPrices = Object.fromEntries(
    (Object.keys(DEFAULT_UNIT_PRICES) as Quality[]).map((quality) => [quality, read(`unitPrices.${quality}`, prices[quality] ?? DEFAULT_UNIT_PRICES[quality])!]),
  ) as Record<Quality, number>;
  const customUnitPrices = new Map<string, number>();
  levels.forEach((level, index) => {
    if (level.id === undefined) return;
    const micro = level.unitPrice === undefined ? unitPrices.Standard : toMicro(level.unitPrice);
    if (micro === null) throw new TypeError(`qualityLevels[${index}].unitPrice: a number of credits from 0 to ${MAX_CREDITS} with at most six decimal places, not ${String(level.unitPrice)}`);
    customUnitPrices.set(level.id.toLowerCase(), micro);
  });
  return {
    unitPrices,
    customUnitPrices,
    freeDaily: read('freeDailyCredits', options.freeDailyCredits) ?? null,
    monthlyMax: read('monthlyMaxCredits', options.monthlyMaxCredits) ?? null,
  };
}

/**
 * The unit price of a quality (a standard name or a custom level's id) in micro-credits; the defaults when credits are
 * not accounted. A level no longer configured costs what Standard does.
 */
export function unitPriceOf(settings: CreditSettings | null, quality: string): number {
  const { unitPrices, customUnitPrices } = settings ?? creditSettings({});
  return unitPrices[quality as Quality] ?? customUnitPrices.get(quality.toLowerCase()) ?? unitPrices.Standard;
}

/** The UTC day of a time (ms since the epoch): `yyyy-mm-dd`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The first and last day of the UTC calendar month of `day` (`yyyy-mm-dd`), as text bounds. */
export function monthOf(day: string): { readonly first: string; readonly last: string } {
  const month = day.slice(0, 7);
  return { first: `${month}-01`, last: `${month}-31` };
}

/** Milliseconds from `ms` to the next UTC midnight (a full day at midnight itself). */
export function untilNextUtcMidnight(ms: number): number {
  const day = 86_400_000;
  return day - (((ms % day) + day) % day);
}

/** A day as the integer key of listings: 2026-01-31 is 20260131, in the same order as the days. */
export function dayKey(day: string): number {
  return Number(day.replaceAll('-', ''));
}

/** What one UTC day consumed (reservations included), in micro-credits. */
export interface DailyUsage {
  readonly date: string;
  readonly freeCredits: number;
  readonly creditPacks: number;
}

/** The state a reservation is decided on, in micro-credits. */
export interface ReservationState {
  /** Free credits per day; null without free daily credits. */
  readonly freeDaily: number | null;
  /** Free credits already consumed (or reserved) today. */
  readonly freeUsedToday: number;
  readonly packs: number;
  readonly monthlyMax: number | null;
  /** Credits consumed (or reserved) this month, free ones included. */
  readonly usedThisMonth: number;
}

export type ReservationPlan =
  | { readonly outcome: 'reserved'; readonly free: number; readonly packs: number }
  | { readonly outcome: 'insufficient-credit' | 'monthly-maximum-exceeded' };

/**
 * Whether `cost` may be reserved, and from where: free credits first, then packs. Insufficient credit is told before
 * the monthly maximum (when both apply, insufficient credit answers).
 */
export function planReservation(state: ReservationState, cost: number): ReservationPlan {
  const freeLeft = state.freeDaily === null ? 0 : Math.max(0, state.freeDaily - state.freeUsedToday);
  if (freeLeft + state.packs < cost) return { outcome: 'insufficient-credit' };
  if (state.monthlyMax !== null && state.usedThisMonth + cost > state.monthlyMax) return { outcome: 'monthly-maximum-exceeded' };
  const free = Math.min(freeLeft, cost);
  return { outcome: 'reserved', free, packs: cost - free };
}

/** A reservation: what it took from free credits and from packs, in micro-credits, and its unit price. */
export interface Reservation {
  readonly free: number;
  readonly packs: number;
  readonly unitPrice: number;
}

/**
 * What a reservation gives back once `verified` of its entries were verified: their cost is consumed, free credits
 * first; the rest of each part is released.
 */
export function settlement(reservation: Reservation, verified: number): { readonly free: number; readonly packs: number } {
  const consumed = Math.min(reservation.free + reservation.packs, Math.max(0, verified) * reservation.unitPrice);
  const consumedFree = Math.min(reservation.free, consumed);
  return { free: reservation.free - consumedFree, packs: reservation.packs - (consumed - consumedFree) };
}

/** The outcome of a reservation as the store made it. */
export type ReserveOutcome = 'reserved' | 'insufficient-credit' | 'monthly-maximum-exceeded';

/** The daily usage page a listing asks for: days `since`–`until` (inclusive, `yyyy-mm-dd`), keyset paged on dayKey. */
export interface DailyUsageQuery {
  readonly since?: string;
  readonly until?: string;
  /** Exclusive bounds on dayKey: forwards after, or backwards before. */
  readonly after?: number;
  readonly before?: number;
  readonly limit: number;
}

/**
 * Where credits are kept: one balance of packs, a ledger per UTC day (free credits and packs consumed, reservations
 * included) and the open reservations, by job id. Each method is one atomic operation: concurrent reservations never
 * take the balance below zero. A store that keeps credits also settles a job's reservation in the transaction that
 * completes the job (`JobStore.completeJob`) or ends it (`JobStore.endJob`, entries counted before they go), so that
 * no crash can leave a finished job's reservation open.
 */
export interface CreditStore {
  /**
   * Reserves `cost` (micro-credits, > 0) for job `jobId` (not yet stored) on `day` under `settings`, `entries` ×
   * `unitPrice`; or says why not, taking nothing.
   */
  reserveCredits(request: {
    readonly jobId: string;
    readonly day: string;
    readonly entries: number;
    readonly unitPrice: number;
    readonly freeDaily: number | null;
    readonly monthlyMax: number | null;
  }): Promise<ReserveOutcome>;
  /** Gives back the whole reservation of a job that was not stored; none: nothing. */
  releaseReservation(jobId: string): Promise<void>;
  /**
   * Settles the reservations whose job is no longer running: those of finished jobs (as their completion or end
   * would have), and those of jobs never stored (given back whole). Run at start, before jobs run and submissions
   * come. Returns how many were settled.
   */
  settleReservations(): Promise<number>;
  /** Adds `micro` to the packs; the new balance. RangeError when it would pass MAX_BALANCE_MICRO. */
  addCreditPacks(micro: number): Promise<number>;
  /** The packs balance and the free credits consumed (or reserved) on `day`, in micro-credits. */
  creditBalance(day: string): Promise<{ readonly packs: number; readonly freeUsed: number }>;
  /** Days with consumption, oldest first (in micro-credits); `more`: more past the page in the direction of travel. */
  dailyUsage(query: DailyUsageQuery): Promise<{ readonly data: DailyUsage[]; readonly more: boolean }>;
}

/** Whether a store keeps credits. */
/** Credits as accounted by a server: its settings (micro-credits) and the store that keeps them. */
export interface CreditAccounting {
  readonly settings: CreditSettings;
  readonly store: CreditStore;
}

export function isCreditStore(store: object): store is CreditStore {
  return typeof (store as Partial<CreditStore>).reserveCredits === 'function';
}
