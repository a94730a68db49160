/**
 * Quality levels (docs/verification.md#quality-levels-and-passes): how many passes over transient results, and how long a slow
 * server is waited for (the anti-tarpit timeout of connections and commands).
 */
export type Quality = 'Standard' | 'High' | 'Extreme';

export const QUALITIES: readonly Quality[] = ['Standard', 'High', 'Extreme'];

export const QUALITY_LEVELS: Readonly<Record<Quality, { readonly passes: number; readonly timeoutMs: number }>> = {
  Standard: { passes: 1, timeoutMs: 5_000 },
  High: { passes: 3, timeoutMs: 50_000 },
  Extreme: { passes: 9, timeoutMs: 120_000 },
};
