/**
 * Offline checks on worker threads: the main thread reads the input in chunks and hands each to the least busy
 * worker, which checks and encodes it (worker.ts); the encoded chunks are written in input order as they come back.
 * At most CHUNKS_PER_WORKER chunks per worker are under way, and none is handed out while the output waits to drain,
 * so memory stays flat however long the input is.
 */
import { Worker } from 'node:worker_threads';
import type { BatchInput } from '../../engine/verifier.js';
import type { InputColumns } from '../input-columns.js';
import type { BatchedWriter } from '../output.js';
import type { Tally } from '../report.js';
import type { LineBlock } from './line-blocks.js';
import type { ChunkMessage, OfflineWorkerData, ResultMessage } from './messages.js';

/** Chunks under way per worker: one being checked, one waiting, so a worker never idles between chunks. */
const CHUNKS_PER_WORKER = 2;

/**
 * A worker's young generation: a block's garbage (a few hundred lines, see line-blocks.ts) dies young in it. V8's
 * default (16 MiB semi-spaces, grown under this allocation rate) cost some 30 MB of RSS per thread and no time.
 */
const WORKER_YOUNG_GENERATION_MB = 4;

/** The input's counters, as the command and its progress line keep them. */
export interface InputCounters {
  read: number;
  ended: boolean;
  error: Error | undefined;
}

export interface OfflineRun {
  readonly threads: number;
  readonly worker: OfflineWorkerData;
  /**
   * The inputs in batches, in order: read here (CSV, JSON Lines), or lines of text as bytes; an error thrown ends the
   * input (the inputs before it get their results).
   */
  readonly batches: AsyncGenerator<BatchInput[] | LineBlock>;
  readonly writer: BatchedWriter;
  readonly tally: Tally;
  readonly input: InputCounters;
  /** The input records' own columns, when the output keeps them: each chunk takes those of its inputs. */
  readonly columns?: InputColumns | undefined;
}

/** The worker's bundle, next to the running one (dist/cli.js: dist/offline-worker.js; a .cjs build: its .cjs). */
export function offlineWorkerUrl(base: string = import.meta.url): URL {
  return new URL(base.endsWith('.cjs') ? './offline-worker.cjs' : './offline-worker.js', base);
}

/**
 * Checks every input of the run and writes its results in order. Resolves when all are written, when the output
 * failed (the writer's error, read by the caller) or at an input error (kept in `input.error`, after the results
 * before it); rejects if a worker fails.
 */
export async function runOffline(run: OfflineRun): Promise<void> {
  const { writer, tally, input } = run;
  let failure: Error | undefined;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const nextEvent = (): Promise<void> => new Promise((resolve) => (wake = resolve));

  /** The run is over: the workers are being stopped, and their exit is no failure. */
  let closing = false;
  /** Results that came back before an earlier chunk's, by chunk number, with the worker that made them. */
  const finished = new Map<number, { result: ResultMessage; worker: Worker }>();
  let nextSeq = 0;
  let nextToWrite = 0;
  let draining: Promise<void> | undefined;
  const writeReady = (): void => {
    for (let done = finished.get(nextToWrite); done !== undefined; done = finished.get(nextToWrite)) {
      finished.delete(nextToWrite++);
      const { result, worker } = done;
      tally.addCounts(result.count, result.classifications, result.statuses);
      // Written, the memory goes back to its worker: no new buffer per chunk, none left for the collector.
      const giveBack = (): void => {
        if (!closing) worker.postMessage({ spare: result.bytes.buffer }, [result.bytes.buffer as ArrayBuffer]);
      };
      const wait = writer.addBytes(result.bytes, giveBack);
      if (wait !== undefined && wait !== draining) {
        draining = wait;
        void wait.then(() => {
          draining = undefined;
          notify();
        });
      }
    }
  };

  const url = offlineWorkerUrl();
  const workers = Array.from({ length: run.threads }, () => {
    const worker = new Worker(url, { workerData: run.worker, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    const slot = { worker, busy: 0 };
    worker.on('message', (result: ResultMessage) => {
      slot.busy--;
      finished.set(result.seq, { result, worker });
      writeReady();
      notify();
    });
    worker.on('error', (error) => {
      failure ??= error;
      notify();
    });
    worker.on('exit', (code) => {
      if (!closing) failure ??= new Error(`an offline worker thread stopped (exit code ${code})`);
      notify();
    });
    return slot;
  });
  const maxInFlight = run.threads * CHUNKS_PER_WORKER;
  const stopped = (): boolean => failure !== undefined || writer.error !== undefined;

  try {
    for (;;) {
      while (!stopped() && (nextSeq - nextToWrite >= maxInFlight || draining !== undefined)) await nextEvent();
      if (stopped()) break;
      let next: IteratorResult<BatchInput[] | LineBlock>;
      try {
        next = await run.batches.next();
      } catch (error) {
        input.error = error as Error;
        input.ended = true;
        break;
      }
      if (next.done === true) {
        input.ended = true;
        break;
      }
      const batch = next.value;
      const count = Array.isArray(batch) ? batch.length : batch.lines;
      if (count === 0) continue;
      const chunk: ChunkMessage = Array.isArray(batch)
        ? { seq: nextSeq++, start: input.read, items: batch, columns: run.columns?.take(batch.length) }
        : { seq: nextSeq++, start: input.read, block: batch.bytes };
      input.read += count;
      const slot = workers.reduce((least, candidate) => (candidate.busy < least.busy ? candidate : least));
      slot.busy++;
      slot.worker.postMessage(chunk, Array.isArray(batch) ? [] : [batch.bytes.buffer as ArrayBuffer]);
    }
    while (!stopped() && nextToWrite < nextSeq) await nextEvent();
  } finally {
    closing = true;
    // The source is closed when the run stops before its end (the reader of the output went away, a worker failed).
    if (!input.ended) await run.batches.return(undefined);
    await Promise.all(workers.map(({ worker }) => worker.terminate()));
  }
  if (failure !== undefined) throw failure;
}
