/**
 * An offline worker thread: checks chunks of inputs with the engine's synchronous offline path and encodes their
 * results as the command writes them; the main thread writes the chunks in input order (pool.ts). Its own bundle
 * entry (dist/offline-worker.js, and .cjs for the CommonJS build).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createOfflineCheck } from '../../engine/offline.js';
import { EncodedChunk } from '../output.js';
import { linesOfBlock } from './line-blocks.js';
import type { ChunkMessage, OfflineWorkerData, ResultMessage, SpareMessage } from './messages.js';

/** Bytes a result usually takes: the first buffer of a chunk is sized by it (it grows when needed). */
const EXPECTED_BYTES_PER_RESULT = 512;

const settings = workerData as OfflineWorkerData;
const check = createOfflineCheck(settings.engine);
const port = parentPort!;
/** Memory of written results, given back by the main thread (a few at most: as many as chunks under way). */
const spares: ArrayBuffer[] = [];

port.on('message', (message: ChunkMessage | SpareMessage) => {
  if ('spare' in message) {
    spares.push(message.spare);
    return;
  }
  const chunk = message;
  const items = 'block' in chunk ? linesOfBlock(chunk.block) : chunk.items;
  const columns = 'block' in chunk ? undefined : chunk.columns;
  const encoded = new EncodedChunk(settings.output, settings.csvFormulas, items.length * EXPECTED_BYTES_PER_RESULT, spares.pop());
  const classifications = new Map<string, number>();
  const statuses = new Map<string, number>();
  for (let k = 0; k < items.length; k++) {
    const item = items[k]!;
    const entry = typeof item === 'string' ? check(chunk.start + k, item) : check(chunk.start + k, item.inputData, item.custom);
    encoded.add(entry, columns?.[k]);
    classifications.set(entry.classification, (classifications.get(entry.classification) ?? 0) + 1);
    statuses.set(entry.status, (statuses.get(entry.status) ?? 0) + 1);
  }
  const bytes = encoded.bytes();
  const result: ResultMessage = { seq: chunk.seq, bytes, count: items.length, classifications: [...classifications], statuses: [...statuses] };
  port.postMessage(result, [bytes.buffer as ArrayBuffer]);
});
