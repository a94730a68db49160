/**
 * Quality levels (docs/verification.md#quality-levels-and-passes): how many passes over transient results, and how long a slow
 * server is waited for (the anti-tarpit timeout of connections and commands). Besides the three standard levels, a
 * custom level is an object that gives its own figures.
 */
export type Quality = 'Standard' | 'High' | 'Extreme';

export const QUALITIES: readonly Quality[] = ['Standard', 'High', 'Extreme'];

export const QUALITY_LEVELS: Readonly<Record<Quality, { readonly passes: number; readonly timeoutMs: number }>> = {
  Standard: { passes: 1, timeoutMs: 5_000 },
  High: { passes: 3, timeoutMs: 50_000 },
  Extreme: { passes: 9, timeoutMs: 120_000 },
};

/**
 * A custom quality level. Durations are milliseconds. A figure it leaves out is the verifier's option of that name
 * (`passes`, `passDelayMs`, `smtp.connectTimeoutMs`, `smtp.commandTimeoutMs`), else the Standard level's (1 pass,
 * 5 s); the figures it gives win over the verifier's options.
 */
export interface QualityLevel {
  /** Its name (a server's jobs name it in `quality`; never one of the standard names). */
  readonly id?: string;
  /** A name to show (a server's quality-level list); default the id. */
  readonly displayName?: string;
  /** Passes over transient results (a positive integer). */
  readonly passes?: number;
  /** The wait between two passes. */
  readonly passDelay?: number;
  /** TCP connect, greeting, EHLO and STARTTLS. */
  readonly connectTimeout?: number;
  /** Each later command; default the connect timeout. */
  readonly commandTimeout?: number;
  /** Credits per entry (a server's accounting; the engine does not use it). */
  readonly unitPrice?: number;
}

const LEVEL_KEYS = ['id', 'displayName', 'passes', 'passDelay', 'connectTimeout', 'commandTimeout', 'unitPrice'];

/** The standard level a name is (case-insensitive), or null. */
export function standardQuality(name: string): Quality | null {
  const lower = name.toLowerCase();
  return QUALITIES.find((quality) => quality.toLowerCase() === lower) ?? null;
}

/**
 * A quality option, checked: a standard name, or a custom level object. A wrong one is a TypeError naming `where`
 * (`createVerifier: option quality`) and the field.
 */
export function checkQuality(value: unknown, where: string): Quality | QualityLevel {
  if (typeof value === 'string' && QUALITIES.includes(value as Quality)) return value as Quality;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${where} must be one of ${QUALITIES.join(', ')} or a quality level object, got ${JSON.stringify(value) ?? String(value)}`);
  }
  const level = value as Record<string, unknown>;
  for (const key of Object.keys(level)) {
    if (!LEVEL_KEYS.includes(key)) throw new TypeError(`${where} has an unknown field ${JSON.stringify(key)} (a level has ${LEVEL_KEYS.join(', ')})`);
  }
  const fail = (field: string, expected: string): never => {
    throw new TypeError(`${where}.${field} must be ${expected}, got ${JSON.stringify(level[field]) ?? String(level[field])}`);
  };
  for (const field of ['id', 'displayName'] as const) {
    const text = level[field];
    if (text !== undefined && (typeof text !== 'string' || text.trim() === '' || text.length > 100)) fail(field, 'a non-empty string of at most 100 characters');
  }
  if (typeof level['id'] === 'string' && standardQuality(level['id']) !== null) fail('id', 'a name other than Standard, High and Extreme');
  if (level['passes'] !== undefined && !(Number.isInteger(level['passes']) && (level['passes'] as number) >= 1 && (level['passes'] as number) <= 100)) {
    fail('passes', 'an integer from 1 to 100');
  }
  for (const field of ['passDelay', 'connectTimeout', 'commandTimeout'] as const) {
    const ms = level[field];
    const min = field === 'passDelay' ? 0 : 1;
    if (ms !== undefined && !(Number.isInteger(ms) && (ms as number) >= min && (ms as number) <= 24 * 3_600_000)) {
      fail(field, `a whole number of milliseconds from ${min} to 86400000`);
    }
  }
  const price = level['unitPrice'];
  if (price !== undefined && !(typeof price === 'number' && Number.isFinite(price) && price >= 0)) fail('unitPrice', 'a number of credits, 0 or more');
  return { ...(level as QualityLevel) };
}

/**
 * The level a name gives among the standard ones and `levels` (custom levels with an id), compared without case: a
 * standard name in its canonical spelling, a custom level as given, or null.
 */
export function findQuality(name: string, levels: readonly QualityLevel[] = []): Quality | QualityLevel | null {
  const lower = name.toLowerCase();
  return standardQuality(name) ?? levels.find((level) => level.id?.toLowerCase() === lower) ?? null;
}

/** The name of a level found by findQuality: the standard name, or the custom level's id as configured. */
export function qualityName(quality: Quality | QualityLevel): string {
  return typeof quality === 'string' ? quality : quality.id!;
}
