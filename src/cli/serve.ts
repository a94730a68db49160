/**
 * `mailverify serve`: the verification server, standalone, on an SQLite store in a data folder.
 *
 *   MAILVERIFY_ROOT_USERNAME=... MAILVERIFY_ROOT_PASSWORD=... mailverify serve [options]
 *
 * Prints the origin it listens on once it accepts requests. SIGTERM or SIGINT: it stops accepting, running jobs
 * write what they have (they go on at the next start), and it exits within 10 seconds.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ENGINE_FLAGS, UsageError, engineOptionsOf, wholeNumber } from './engine-flags.js';

export const SERVE_USAGE = `Usage: MAILVERIFY_ROOT_USERNAME=NAME MAILVERIFY_ROOT_PASSWORD=SECRET mailverify serve [options]

Runs the verification server: the REST interface (/v2.7, /v2.6) over jobs kept in an SQLite
database in the data folder. Every request needs the root credentials (HTTP Basic) or a bearer
token from POST /v2.7/auth/tokens. There is no default password: without one the server does not
start. MAILVERIFY_ROOT_USERNAME defaults to "root".

Options:
  --host ADDRESS          address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)
  --port N                port (default 8080; 0 picks a free one)
  --data-dir DIR          folder of the database (default ./mailverify-data), made if missing
  --base-path PATH        a path prefix for every route (default /)
  --tls-cert FILE         serve HTTPS with this certificate chain (PEM)...
  --tls-key FILE          ...and its private key (PEM)
  --log-level LEVEL       request log on standard error, JSON lines: fatal, error, warn, info
                          (default), debug, or silent
  --metrics               Prometheus metrics at GET /metrics (root credentials required)
  --quality LEVEL         the quality of jobs that name none (default Standard); also the
                          verifier's timeouts
  engine options, as for "mailverify check": --dns-server, --dns-timeout, --smtp-port, --helo-name,
  --mail-from, --max-connections, --passes, --pass-delay, --allow-private-addresses, --refuse,
  --no-provider-rules
  -h, --help              this text

Environment: MAILVERIFY_ROOT_USERNAME, MAILVERIFY_ROOT_PASSWORD (required), MAILVERIFY_TOKEN_SECRET
(signs tokens and cursors; default: generated once and kept in the data folder).`;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const STOP_DEADLINE_MS = 10_000;

/** Runs the server until a signal stops it; resolves with the exit code. */
export async function serve(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: false,
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '8080' },
      'data-dir': { type: 'string', default: './mailverify-data' },
      'base-path': { type: 'string', default: '/' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'log-level': { type: 'string', default: 'info' },
      metrics: { type: 'boolean', default: false },
      ...ENGINE_FLAGS,
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(SERVE_USAGE + '\n');
    return 0;
  }
  const password = env['MAILVERIFY_ROOT_PASSWORD'];
  if (password === undefined || password === '') {
    throw new UsageError('MAILVERIFY_ROOT_PASSWORD is not set: the server has no default password');
  }
  const port = wholeNumber(values.port, '--port', 0)!;
  if (port > 65535) throw new UsageError(`--port must be a TCP port number, got ${values.port}`);
  if (!LOG_LEVELS.includes(values['log-level'])) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) {
    throw new UsageError('--tls-cert and --tls-key go together');
  }
  const https =
    values['tls-cert'] === undefined
      ? undefined
      : { cert: readFileSync(values['tls-cert']), key: readFileSync(values['tls-key']!) };
  const engine = engineOptionsOf(values);

  // Loaded here: `mailverify check` needs none of the server's code.
  const { createServer } = await import('../server/app.js');
  const app = await createServer({
    dataDir: values['data-dir'],
    rootUsername: env['MAILVERIFY_ROOT_USERNAME'] || 'root',
    rootPassword: password,
    ...(env['MAILVERIFY_TOKEN_SECRET'] && { tokenSecret: env['MAILVERIFY_TOKEN_SECRET'] }),
    basePath: values['base-path'],
    metrics: values.metrics,
    verifier: engine,
    ...(engine.quality !== undefined && { defaultQuality: engine.quality }),
    logger: values['log-level'] === 'silent' ? false : { level: values['log-level'], stream: process.stderr },
    ...(https !== undefined && { https }),
  });
  let origin: string;
  try {
    origin = await app.listen({ host: values.host, port });
  } catch (error) {
    await app.close();
    throw error;
  }
  process.stdout.write(`mailverify listening on ${origin}\n`);

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  process.stderr.write(`mailverify: ${signal}: stopping\n`);
  const deadline = setTimeout(() => {
    process.stderr.write('mailverify: did not stop within 10 s; exiting\n');
    process.exit(1);
  }, STOP_DEADLINE_MS);
  deadline.unref();
  await app.close();
  clearTimeout(deadline);
  return 0;
}
