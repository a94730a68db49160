/**
 * `mailverify worker`: a process of a cluster that verifies (docs/scaling.md). It takes the options of `serve` (flags,
 * environment variables, the same config file) and uses those of the store, the queue and the verifier; it answers
 * no HTTP. It may be elected to deliver callbacks, purge expired jobs and reconcile the queue with the store.
 *
 * Prints `mailverify worker ready` once it takes tasks. SIGTERM, SIGINT or SIGHUP: running tasks store what they have
 * and go back to the queue, and it exits within 10 seconds.
 */
import { UsageError } from 'mailverify/internal';
import { beginStop, openSharedStore, stopRequest } from './serve.js';
import { commandSettings, optionsHelp } from './serve-options.js';

export const WORKER_USAGE = `Usage: mailverify worker --store postgres://... --queue redis://... [options]

Runs cluster workers: takes verification tasks from the queue (BullMQ on Redis) and writes the
results to the shared PostgreSQL store. Any number of workers, on any machines, serve the jobs
that any number of "mailverify serve --queue ..." processes accept. It takes the options of
serve (flags, MAILVERIFY_* variables, the same --config file), and uses those of the store, the
cluster and the verification; --workers sets the workers of this process (default 1).
${optionsHelp()}

  -h, --help              this text

Signals: SIGTERM, SIGINT or SIGHUP stop the worker: running tasks store what they have and go
back to the queue for another worker, and it exits within 10 seconds.`;

export async function worker(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const settings = commandSettings(argv, env, WORKER_USAGE);
  if (settings === null) return 0;
  const cluster = settings.server.cluster;
  if (settings.store === undefined || cluster === undefined) {
    throw new UsageError('mailverify worker needs --store (a PostgreSQL URL) and --queue (a Redis URL), or their variables or keys');
  }
  const stop = stopRequest(env);
  const log = logTo(settings.logLevel);
  const { ClusterRuntime } = await import('../cluster/runtime.js');
  const { backgroundDuties } = await import('../jobs/duties.js');
  const { DEFAULT_RETENTION_MS } = await import('../server/defaults.js');
  let store;
  let runtime;
  try {
    store = await openSharedStore(settings.store);
    const shared = store;
    runtime = await ClusterRuntime.start({
      ...cluster,
      workers: cluster.workers ?? 1,
      store: shared,
      ...(settings.server.verifier !== undefined && { verifier: settings.server.verifier }),
      ...(settings.server.qualityLevels !== undefined && { qualityLevels: settings.server.qualityLevels }),
      duties: () =>
        Object.values(
          backgroundDuties({
            store: shared,
            ...(settings.server.verifier !== undefined && { verifier: settings.server.verifier }),
            ...(settings.server.callbackTimeoutMs !== undefined && { callbackTimeoutMs: settings.server.callbackTimeoutMs }),
            defaultRetentionMs: settings.server.defaultRetentionMs ?? DEFAULT_RETENTION_MS,
            log,
          }),
        ),
      log,
    });
  } catch (error) {
    stop.cancel();
    await store?.close();
    throw error;
  }
  process.stdout.write(`mailverify worker ready (${runtime.workers.length} worker${runtime.workers.length === 1 ? '' : 's'})\n`);
  const stopped = beginStop(await stop.reason);
  await runtime.close();
  await store.close();
  stopped();
  return 0;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** JSON lines on stderr from `level` on, as the server's log; errors by their message (no stack, no URL). */
function logTo(level: string) {
  const from = LEVELS.indexOf(level);
  const write = (name: string) => (message: string, details?: Record<string, unknown>) => {
    if (LEVELS.indexOf(name) < from) return;
    const fields: Record<string, unknown> = { ...details };
    if (fields['err'] instanceof Error) fields['err'] = { type: fields['err'].name, message: fields['err'].message };
    process.stderr.write(JSON.stringify({ level: name, time: Date.now(), msg: message, ...fields }) + '\n');
  };
  return { warn: write('warn'), error: write('error'), debug: write('debug') };
}
