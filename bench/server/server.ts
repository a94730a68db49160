/**
 * The server under measurement, in a process of its own (forked by run.ts, bundled to bench/.out/): the standalone
 * server on an SQLite data folder, listening on loopback, with the verifier options run.ts gives (offline, or
 * pointed at a mail lab). Over the IPC channel it answers `mark` (start a measurement: peak RSS, event-loop delay
 * and stalls start over), `stats` (what was seen since the mark) and `close`.
 *
 * - Peak RSS is read two ways: VmHWM from /proc/self/status (the kernel's high-water mark, reset at a mark by
 *   writing 5 to /proc/self/clear_refs), and process.memoryUsage.rss() sampled every 50 ms (a sample cannot be taken
 *   while the event loop is blocked, so it may miss a short peak; VmHWM cannot).
 * - Event-loop delay: monitorEventLoopDelay (10 ms resolution), and a stall log: every gap of more than 50 ms
 *   between two ticks of a 10 ms interval, with its start and end on the shared clock (performance.timeOrigin +
 *   performance.now(), the same in every process), so that run.ts can place a stall against its requests.
 * - The moment a POST's reply is handed to the socket (Fastify's onSend hook, which runs even while the event loop
 *   is held by the work that follows), with VmHWM then: the peak of the submission alone.
 *
 * An IPC message is read by the event loop: while it is blocked, `stats` is answered only afterwards (a timer is
 * let run first, so that the stall is in the figures).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { VerifierOptions } from '../../packages/mailverify/src/engine/verifier.js';
import { createServer } from '../../packages/server/src/index.js';

export interface Stall {
  /** Shared-clock milliseconds. */
  readonly start: number;
  readonly end: number;
}

export interface ServerStats {
  /** VmHWM since the mark (null where /proc is missing). */
  readonly peakRssMb: number | null;
  /** The largest 50 ms sample of process.memoryUsage.rss() since the mark. */
  readonly sampledPeakRssMb: number;
  readonly rssMb: number;
  readonly heapUsedMb: number;
  /** Event-loop delay since the mark (monitorEventLoopDelay, 10 ms resolution). */
  readonly loopDelayMaxMs: number;
  readonly loopDelayP99Ms: number;
  /** Gaps of the event loop over 50 ms since the mark (at most the 100 longest). */
  readonly stalls: Stall[];
  /** The last POST reply since the mark: when it was handed to the socket, and VmHWM then. */
  readonly postReply: { at: number; peakRssMb: number | null } | null;
}

export type Command = { id: number; command: 'mark' | 'stats' | 'close' };

interface Options {
  dataDir: string;
  username: string;
  password: string;
  verifier: VerifierOptions;
  /** More options of the server (rate limits, trusted proxies...). */
  server?: { rateLimits?: boolean; trustProxy?: string; maxConnectionsPerAddress?: number };
}

const MB = 1024 * 1024;
const options = JSON.parse(process.argv[2] ?? '{}') as Options;

function vmHwmMb(): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return match === null ? null : Number(match[1]) / 1024;
  } catch {
    return null;
  }
}

function resetVmHwm(): void {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // No /proc (not Linux): the sampled peak stands alone.
  }
}

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
let sampledPeak = 0;
const sampler = setInterval(() => {
  sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
}, 50);

const clock = (): number => performance.timeOrigin + performance.now();
const STALL_MS = 50;
let stalls: Stall[] = [];
let lastTick = clock();
const stallWatch = setInterval(() => {
  const now = clock();
  if (now - lastTick > STALL_MS) {
    stalls.push({ start: lastTick, end: now });
    if (stalls.length > 200) stalls = stalls.sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, 100);
  }
  lastTick = now;
}, 10);
let postReply: ServerStats['postReply'] = null;

function mark(): void {
  loopDelay.reset();
  stalls = [];
  postReply = null;
  sampledPeak = process.memoryUsage.rss();
  resetVmHwm();
}

function stats(): ServerStats {
  const rss = process.memoryUsage.rss();
  sampledPeak = Math.max(sampledPeak, rss);
  const hwm = vmHwmMb();
  return {
    peakRssMb: hwm === null ? null : Math.max(hwm, rss / MB),
    sampledPeakRssMb: sampledPeak / MB,
    rssMb: rss / MB,
    heapUsedMb: process.memoryUsage().heapUsed / MB,
    loopDelayMaxMs: loopDelay.max / 1e6,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    stalls: [...stalls].sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, 100),
    postReply,
  };
}

const app = await createServer({
  dataDir: options.dataDir,
  rootUsername: options.username,
  rootPassword: options.password,
  verifier: options.verifier,
  ...options.server,
});
app.addHook('onSend', async (request) => {
  if (request.method === 'POST') postReply = { at: clock(), peakRssMb: vmHwmMb() };
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address !== null ? address.port : 0;
mark();
process.send!({ ready: true, port, idle: stats() });

process.on('message', (message: Command) => {
  if (message.command === 'mark') {
    mark();
    // The delay monitor records nothing in its first interval after a reset: a stall right after the mark would be
    // lost. Two of its ticks first.
    setTimeout(() => process.send!({ id: message.id }), 30);
  } else if (message.command === 'stats') {
    // After a stall, the delay monitor and the stall watch record it on their next tick: let them run first.
    setTimeout(() => process.send!({ id: message.id, stats: stats() }), 25);
  } else if (message.command === 'close') {
    clearInterval(sampler);
    clearInterval(stallWatch);
    loopDelay.disable();
    void app.close().then(() => {
      process.send!({ id: message.id });
      process.disconnect();
    });
  }
});
