/** What the CLI's main thread and its offline workers (worker.ts, pool.ts) send each other. */
import type { OfflineOptions } from '../../engine/offline.js';
import type { BatchInput } from '../../engine/verifier.js';
import type { CsvFormulas } from '../csv.js';
import type { OutputFormat } from '../output.js';

/** The worker's settings, as workerData. */
export interface OfflineWorkerData {
  readonly engine: OfflineOptions;
  readonly output: OutputFormat;
  readonly csvFormulas: CsvFormulas;
}

/**
 * A chunk of inputs, the first one's index `start`: lines of text as their bytes (a LineBlock's, transferred), or
 * the inputs themselves (CSV, JSON Lines), with the input records' own columns when the output keeps them.
 */
export type ChunkMessage =
  | { readonly seq: number; readonly start: number; readonly block: Uint8Array }
  | { readonly seq: number; readonly start: number; readonly items: readonly BatchInput[]; readonly columns?: readonly string[][] };

/** The memory of a result's bytes, written: the worker encodes a later chunk into it. */
export interface SpareMessage {
  readonly spare: ArrayBuffer;
}

/** The chunk's results, encoded, and their counts by classification and by status. */
export interface ResultMessage {
  readonly seq: number;
  readonly bytes: Uint8Array;
  readonly count: number;
  readonly classifications: [string, number][];
  readonly statuses: [string, number][];
}
