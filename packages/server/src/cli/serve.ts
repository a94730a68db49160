/**
 * `mailverify serve`: the verification server, standalone, on an SQLite store in a data folder. Its options come
 * from flags, environment variables and a config file, all defined in serve-options.ts.
 *
 *   MAILVERIFY_ROOT_PASSWORD=... mailverify serve [options]
 *
 * Prints the origin it listens on once it accepts requests. SIGTERM, SIGINT or SIGHUP: it stops accepting, running
 * jobs write what they have (they go on at the next start), and it exits within 10 seconds.
 */
import type { FastifyInstance } from 'fastify';
import type { PostgresJobStore } from '../jobs/postgres-store.js';
import { UsageError } from 'mailverify/internal';
import { commandSettings, optionsHelp } from './serve-options.js';

export const SERVE_USAGE = `Usage: MAILVERIFY_ROOT_PASSWORD=SECRET mailverify serve [options]

Runs the verification server: the REST interface (/v2.7, /v2.6, /v1.4) over jobs kept in an SQLite
database in the data folder, with GET /health (alive) and GET /ready (the database takes writes)
for probes. Every other request needs root's or a user's credentials (HTTP Basic), a bearer token
from POST /v2.7/auth/tokens, or a client certificate (--tls-client-ca); root makes users with
/v2.7/users. There is no default root password: without one the server does not start.

Every option is a flag, an environment variable and a key of a JSON config file (--config), as
listed after each option; a flag wins over its variable, a variable over the config file, the
config file over the default. Secrets are read from variables or files, never from flags.
${optionsHelp()}

  -h, --help              this text
  --version               the version of mailverify

Signals: SIGTERM, SIGINT or SIGHUP stop the server: it stops accepting, running jobs write what
they have (they go on at the next start), and it exits within 10 seconds. A process manager
(systemd, a container, supervisord) should run the binary itself, node_modules/.bin/mailverify
serve or node node_modules/mailverify/dist/cli.js serve, not npx or npm exec: npm does not pass
SIGTERM on, so the server would only notice that npm is gone and stop a second later.`;

const STOP_DEADLINE_MS = 10_000;
/** How long requests in progress may go on after a stop signal before their connections are closed. */
const STOP_GRACE_MS = 5_000;
/** How often a server started by npm looks whether npm's shell is still its parent. */
const PARENT_CHECK_MS = 1_000;

/** Runs the server until a signal stops it; resolves with the exit code. */
export async function serve(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const settings = commandSettings(argv, env, SERVE_USAGE);
  if (settings === null) return 0;
  const { rootPassword } = settings.server;
  if (rootPassword === undefined) {
    throw new UsageError('MAILVERIFY_ROOT_PASSWORD is not set (nor --root-password-file): the server has no default password');
  }

  // Listening for signals before the origin is printed: a process manager may signal as soon as it reads it (one
  // during the start stops the server once it has started).
  const stop = stopRequest(env);
  let origin: string;
  let app: FastifyInstance;
  let closeStore = async (): Promise<void> => {};
  try {
    // Loaded here: `mailverify check` needs none of the server's code.
    const { createServer } = await import('../server/app.js');
    const store = settings.store === undefined ? undefined : await openSharedStore(settings.store);
    try {
      app = await createServer({
        ...settings.server,
        ...(store !== undefined && { store }),
        rootPassword,
        logger: settings.logLevel === 'silent' ? false : { level: settings.logLevel, stream: process.stderr },
      });
    } catch (error) {
      await store?.close();
      throw error;
    }
    // A store given to the server is the caller's to close: after the server, which stops its jobs first.
    closeStore = async () => store?.close();
    try {
      origin = await app.listen(settings.listen);
    } catch (error) {
      await app.close();
      await closeStore();
      throw error;
    }
  } catch (error) {
    stop.cancel();
    throw error;
  }
  process.stdout.write(`mailverify listening on ${origin}\n`);

  const stopped = beginStop(await stop.reason);
  // Requests still being received or answered after a grace (a body that never ends, a client that stopped reading an
  // export) are cut, so that they cannot hold the stop past its deadline; idle connections are closed at once.
  const grace = setTimeout(() => app.server.closeAllConnections(), STOP_GRACE_MS);
  grace.unref();
  await app.close();
  await closeStore();
  clearTimeout(grace);
  stopped();
  return 0;
}

/** The PostgreSQL store of --store; one that cannot be opened is a clear error, without the URL (it may hold a password). */
export async function openSharedStore(store: { readonly url: string; readonly schema: string }): Promise<PostgresJobStore> {
  const { openPostgresStore } = await import('../jobs/postgres-store.js');
  try {
    return await openPostgresStore({ connectionString: store.url, schema: store.schema });
  } catch (error) {
    // The driver's messages name the server, the role or the database, never the URL or its password.
    throw new Error(`the PostgreSQL store (--store) cannot be opened: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Says why the process stops and makes sure it does within STOP_DEADLINE_MS: past it, it exits with 1 whatever is
 * still under way. Returns the function to call once it has stopped.
 */
export function beginStop(reason: string): () => void {
  process.stderr.write(`mailverify: ${reason}: stopping\n`);
  const deadline = setTimeout(() => {
    process.stderr.write('mailverify: did not stop within 10 s; exiting\n');
    process.exit(1);
  }, STOP_DEADLINE_MS);
  deadline.unref();
  return () => clearTimeout(deadline);
}

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/**
 * The reason to stop, once there is one: a signal or, for a server that npm started (npx, npm exec, npm start), the end of
 * its parent. npm does not pass SIGTERM on to the command it runs: npm and the shell it started exit and the server is
 * left to init, its parent process id changing. Outside npm the parent is not watched, so that `nohup mailverify
 * serve &` outlives its shell.
 */
export function stopRequest(env: NodeJS.ProcessEnv): { reason: Promise<string>; cancel: () => void } {
  let cancel = (): void => {};
  const reason = new Promise<string>((resolve) => {
    const parent = process.ppid;
    let watch: NodeJS.Timeout | undefined;
    const onSignal = (signal: NodeJS.Signals): void => stop(signal);
    cancel = () => {
      for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
      clearInterval(watch);
    };
    const stop = (why: string): void => {
      cancel();
      resolve(why);
    };
    for (const signal of STOP_SIGNALS) process.once(signal, onSignal);
    if (env['npm_execpath'] !== undefined) {
      watch = setInterval(() => {
        if (process.ppid !== parent) stop(`npm (process ${parent}) is gone`);
      }, PARENT_CHECK_MS);
      watch.unref();
    }
  });
  return { reason, cancel };
}
