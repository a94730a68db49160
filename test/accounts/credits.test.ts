// The arithmetic of credits: amounts read exactly as micro-credits (never rounded), the reservation's plan (free
// credits first, insufficient credit before the monthly maximum), the settlement (consumed free credits first), and
// the UTC day math.
import { describe, expect, it } from 'vitest';
import { creditSettings, fromMicro, planReservation, settlement, toMicro, untilNextUtcMidnight, utcDay } from '../../packages/server/src/accounts/credits.js';

describe('credit amounts', () => {
  it('are read exactly, up to six decimal places, and written back as given', () => {
    expect(toMicro('0.1')).toBe(100_000);
    expect(toMicro(0.29)).toBe(290_000);
    expect(toMicro('1.500000')).toBe(1_500_000);
    expect(toMicro(0.000001)).toBe(1);
    for (const bad of ['0.0000001', 1e-7, '-1', '1e3', '', 'x', Number.NaN, Infinity, 2e9]) expect(toMicro(bad)).toBeNull();
    // Three entries at 0.1 make 0.3, not 0.30000000000000004.
    expect(fromMicro(3 * toMicro(0.1)!)).toBe(0.3);
    expect(fromMicro(toMicro(2)! - toMicro(0.3)!)).toBe(1.7);
  });

  it('options: defaults 1, 2, 4; a wrong amount or an unknown name is a TypeError naming it', () => {
    expect(creditSettings({})).toEqual({ unitPrices: { Standard: 1e6, High: 2e6, Extreme: 4e6 }, customUnitPrices: new Map(), freeDaily: null, monthlyMax: null });
    // A custom level costs its own price, else the Standard one.
    const custom = creditSettings({ unitPrices: { Standard: 1.5 } }, [{ id: 'Patient', unitPrice: 0.25 }, { id: 'quick' }]);
    expect([...custom.customUnitPrices]).toEqual([['patient', 250_000], ['quick', 1_500_000]]);
    expect(creditSettings({ unitPrices: { High: 2.5 }, freeDailyCredits: 10 }).unitPrices.High).toBe(2_500_000);
    expect(() => creditSettings({ monthlyMaxCredits: -1 })).toThrow(/credits\.monthlyMaxCredits/);
    expect(() => creditSettings({ unitPrices: { Cheap: 1 } as never })).toThrow(/credits\.unitPrices\.Cheap/);
    expect(() => creditSettings({ freeCredits: 1 } as never)).toThrow(/credits\.freeCredits/);
  });
});

describe('a reservation', () => {
  const state = { freeDaily: 10, freeUsedToday: 7, packs: 5, monthlyMax: 20, usedThisMonth: 12 };
  it('takes the free credits left today first, then packs', () => {
    expect(planReservation(state, 8)).toEqual({ outcome: 'reserved', free: 3, packs: 5 });
    expect(planReservation({ ...state, freeDaily: null }, 5)).toEqual({ outcome: 'reserved', free: 0, packs: 5 });
  });
  it('is refused for insufficient credit before the monthly maximum', () => {
    expect(planReservation(state, 9)).toEqual({ outcome: 'insufficient-credit' });
    expect(planReservation({ ...state, packs: 100 }, 9)).toEqual({ outcome: 'monthly-maximum-exceeded' });
    expect(planReservation({ ...state, packs: 100, monthlyMax: null }, 9)).toMatchObject({ outcome: 'reserved' });
  });
  it('is settled: verified entries consumed free credits first, the rest released', () => {
    const reservation = { free: 3, packs: 5, unitPrice: 2 };
    expect(settlement(reservation, 4)).toEqual({ free: 0, packs: 0 });
    expect(settlement(reservation, 2)).toEqual({ free: 0, packs: 4 });
    expect(settlement(reservation, 1)).toEqual({ free: 1, packs: 5 });
    expect(settlement(reservation, 0)).toEqual({ free: 3, packs: 5 });
  });
});

describe('the UTC day', () => {
  it('and the time to its end', () => {
    expect(utcDay(Date.parse('2026-03-31T23:59:59.999Z'))).toBe('2026-03-31');
    expect(untilNextUtcMidnight(Date.parse('2026-03-31T23:00:00.000Z'))).toBe(3_600_000);
    expect(untilNextUtcMidnight(Date.parse('2026-04-01T00:00:00.000Z'))).toBe(86_400_000);
  });
});
