/** The duplicate-marking modes (dedupe.ts), apart from the key code: the CLI reads them without loading the syntax tables. */
export type Deduplication = 'Off' | 'Safe' | 'Relaxed';

export const DEDUPLICATION_MODES: readonly Deduplication[] = ['Off', 'Safe', 'Relaxed'];
