/**
 * The verification server on Fastify: a plugin that a host Fastify application can register, a standalone server,
 * and a plain `(req, res)` handler for Express, Koa or `node:http` hosts. All three serve the same routes and share
 * one verifier and one job store per instance.
 */
import { constants as tlsConstants, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import type { TlsOptions as TlsServerOptions } from 'node:tls';
import { join } from 'node:path';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import compress from '@fastify/compress';
import cors from '@fastify/cors';
import {
  MisconfigurationMonitor,
  QUALITIES,
  checkOverrideRules,
  combineObservers,
  createVerifier,
  findQuality,
  qualityName,
  type OverrideRule,
  type QualityLevel,
  type VerifierObserver,
  type VerifierOptions,
} from 'mailverify/internal';
import { MAX_OVERRIDE_RULES, setAccountOverrides } from '../jobs/overrides.js';
import { checkQualityLevels } from './quality-levels.js';
import { backgroundDuties } from '../jobs/duties.js';
import { realClock, type Clock } from '../jobs/clock.js';
import { Jobs, type JobRunner } from '../jobs/jobs.js';
import { JobGoneError } from '../jobs/pages.js';
import { openSqliteStore } from '../jobs/sqlite-store.js';
import { StorageFullError, type JobStore, type ServiceStore } from '../jobs/types.js';
import { Authenticator } from './auth.js';
import { CaptchaVerifier, type CaptchaOptions } from '../accounts/captcha.js';
import { captchaStage } from './captcha.js';
import type { UserStore } from '../accounts/types.js';
import { creditSettings, isCreditStore, type CreditAccounting, type CreditOptions } from '../accounts/credits.js';
import { creditStage } from './credits.js';
import { Cursors } from './cursor.js';
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_BODY_RATE_GRACE_MS,
  DEFAULT_DATA_DIR,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  DEFAULT_MAX_ENTRIES_PER_JOB,
  DEFAULT_MIN_BODY_RATE,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_RETENTION_MS,
  DEFAULT_TOKEN_LIFETIME_MS,
} from './defaults.js';
import { resolveImportOptions, type ImportOptions } from './import/index.js';
import { ProblemError, excerpt, rawProblemAnswer, sendProblem, storageFullProblem } from './problems.js';
import { legacyRoutes } from './legacy.js';
import { nestsDeeperThan, tooDeep } from './json-depth.js';
import { StreamedBody } from './json-body.js';
import { ServerMetrics } from './metrics.js';
import { probeRoutes } from './probes.js';
import { registerOpenapi } from './schemas/index.js';
import { faceRoutes } from './faces.js';
import type { ServerContext } from './context.js';
import { pathOf } from './query.js';
import { v2Routes } from './routes.js';
import { newSecondFactorState } from './second-factor.js';
import { SharedCountersUnavailableError, type SharedCounters } from './shared-counters.js';
import { openClusterParts } from './cluster.js';
import type { ClusterSettings } from '../cluster/runtime.js';
import { throttlingStage } from './throttling.js';
import { addRateLimits, type RateLimitOptions } from './rate-limits.js';
import { defaultMaxClientConnections, limitConnections, trustedProxies } from './peers.js';
import { closeUnreadBodies, limitBodyRate } from './slow-clients.js';

/** The root account's user name when none is given (as `--root-username`'s default). */
const DEFAULT_ROOT_USERNAME = 'root';

export interface ServerOptions {
  /** Where jobs and users are kept: a store of the host's, else an SQLite file in `dataDir`. */
  readonly store?: JobStore & UserStore;
  /** The folder of the SQLite store when no `store` is given (default `./mailverify-data`), made if missing. */
  readonly dataDir?: string;
  /** The root account's user name (default `root`) and password: there is no default password, the server refuses to start without one. */
  readonly rootUsername?: string;
  readonly rootPassword: string;
  /** A path prefix for every route (`/` by default; `/x` and `/x/` are the same). */
  readonly basePath?: string;
  /** Options of the verifier every job runs on (DNS, SMTP, safety...). */
  readonly verifier?: VerifierOptions;
  /**
   * The quality of a job that does not name one (default Standard): a standard name or the id of one of
   * `qualityLevels`, compared without case.
   */
  readonly defaultQuality?: string;
  /**
   * Custom quality levels (default none), which jobs name by id in `quality` besides Standard, High and Extreme: each
   * with its own passes, pass delay and timeouts (milliseconds; those left out are the verifier's options, else
   * Standard's) and unit price (default the Standard one). Ids are compared without case; overviews show them as given.
   */
  readonly qualityLevels?: readonly QualityLevel[];
  /** The retention of a job that does not set one, from its completion (default 30 days). */
  readonly defaultRetentionMs?: number;
  /** The lifetime of a bearer token (default 1 hour). */
  readonly tokenLifetimeMs?: number;
  /** The secret that signs tokens and cursors; default: generated once and kept in the store. */
  readonly tokenSecret?: string;
  /** The largest request body (default 64 MiB). */
  readonly bodyLimit?: number;
  /** The most entries of one job (default 1,000,000). */
  readonly maxEntriesPerJob?: number;
  /** File import (multipart POST /email-validations): upload size, workbook caps, temporary folder. */
  readonly fileImport?: ImportOptions;
  /** How long a completion callback's receiver has to answer with a 2xx (default 5,000 ms). */
  readonly callbackTimeoutMs?: number;
  /**
   * The time source of job completion and end times, callback retries and retention purges (default: the system
   * clock). Request timeouts stay on real time.
   */
  readonly clock?: Clock;
  /** Prometheus metrics at GET /metrics, behind the root credentials (default false: no such route). */
  readonly metrics?: boolean;
  /**
   * The CAPTCHA providers' siteverify endpoints (default: their public ones), how long they have to answer (default
   * 5,000 ms), and how many accepted tokens are remembered.
   */
  readonly captcha?: CaptchaOptions;
  /**
   * Request rate limits per client IP (default false: none): true for the defaults (6 requests per second with a
   * burst of 15 under /v2.x, 5 requests in flight under /v1.4), or their settings. Counted on the address the request
   * came from: behind a reverse proxy, only with trustProxy set to that proxy. Counted in the limits' own store if they
   * name one, else in sharedCounters.rateLimits, else (a cluster) in the cluster's Redis, else in this process's memory.
   */
  readonly rateLimits?: boolean | RateLimitOptions;
  /**
   * Where request rates, throttling, failed sign-ins, wrong TOTP codes, accepted TOTP steps and used CAPTCHA tokens
   * are counted (default: this process's memory). Server processes that share a store give the same shared counters
   * (`redisSharedCounters`), so that every limit holds across them.
   */
  readonly sharedCounters?: SharedCounters;
  /**
   * Credit accounting (absent: not accounted, nothing is refused for credit): unit prices per entry by quality
   * (default Standard 1, High 2, Extreme 4), free credits per UTC day (default none), the most credits consumed per
   * UTC month (default no maximum). Decimals allowed, up to six places.
   */
  readonly credits?: CreditOptions;
  /**
   * The account's classifier override rules (docs/verification.md#override-rules), in order. Given, they replace at
   * each start the list kept in the store (which PUT /v2.7/settings/overrides may have changed since); absent, the
   * kept list stays. Either way jobs keep the rules they were submitted with. A malformed rule is a TypeError naming it.
   */
  readonly overrides?: readonly OverrideRule[];
  /**
   * Cluster mode (docs/scaling.md): jobs go to a BullMQ queue on Redis for workers (`mailverify worker`, or
   * `workers` here), counters are shared in Redis, and callbacks and retention purges run in one elected process.
   * Needs a PostgreSQL `store` (openPostgresStore) shared by every process. Absent: jobs run in this process.
   */
  readonly cluster?: ClusterSettings;
  /**
   * The web console at `<basePath>/console/` (default true), where `<basePath>/` redirects while it is on; false: those
   * paths are unknown (404). The sign-up form widget at `<basePath>/widget/` is served either way.
   */
  readonly console?: boolean;
}

export interface StandaloneOptions extends ServerOptions {
  /** Fastify's logger: false (default), true, or its options. Credentials are redacted. */
  readonly logger?: FastifyServerOptions['logger'];
  /** Trust `X-Forwarded-For` from these proxies (Fastify's trustProxy); default: none. */
  readonly trustProxy?: FastifyServerOptions['trustProxy'];
  /**
   * Serve HTTPS with this certificate chain and key (PEM); default: plain HTTP. With `clientCa` (PEM, one or more CA
   * certificates) clients are asked for a certificate, not required to give one; whether one verified against those
   * CAs is for the request to tell (verifiedClientName).
   */
  readonly https?: { readonly cert: string | Buffer; readonly key: string | Buffer; readonly clientCa?: string | Buffer };
  /** The time a client has to send a whole request, headers and body (default 5 minutes); then 408. */
  readonly requestTimeoutMs?: number;
  /** The time a client has to send the header fields (default 60 s, at most the request timeout); then 408. */
  readonly headersTimeoutMs?: number;
  /** The time a connection may stay without a byte read or written before it is closed (default 2 minutes). */
  readonly idleTimeoutMs?: number;
  /**
   * The least average rate of a request body in bytes per second, counted once `bodyRateGraceMs` has passed (default
   * 500; 0: none): a slower body is answered 408 and its connection closed.
   */
  readonly minBodyRate?: number;
  /** The time a request body has before its rate counts (default 20 s): by then it needs none of its bytes. */
  readonly bodyRateGraceMs?: number;
  /**
   * The most open connections from one client address (default 256; 0: no cap); more are closed as they are accepted.
   * Addresses that trustProxy trusts are not capped (a reverse proxy carries many clients).
   */
  readonly maxConnectionsPerAddress?: number;
  /**
   * The most open client connections in all (0: no cap); more are closed as they are accepted, so that the process
   * keeps file descriptors for its own work. Default: the open-file limit less a tenth of it (at least 256, at most half).
   */
  readonly maxClientConnections?: number;
}

const VERSIONS = ['v2.7', 'v2.6'];

/** The base path in the form routes are prefixed with: '' for the root, else `/x` without a trailing slash. */
export function normalizeBasePath(basePath = '/'): string {
  const trimmed = basePath.replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/**
 * The server as a Fastify plugin: `app.register(mailverify, options)`. It opens the jobs of the store (running
 * again those a previous process left unfinished) and closes them, and its verifier, when the host app closes.
 */
export async function mailverify(app: FastifyInstance, options: ServerOptions): Promise<void> {
  if (typeof options.rootPassword !== 'string' || options.rootPassword === '') {
    throw new TypeError('mailverify: option rootPassword is required: a non-empty string (there is no default)');
  }
  const rootUsername = options.rootUsername ?? DEFAULT_ROOT_USERNAME;
  if (typeof rootUsername !== 'string' || rootUsername === '') {
    throw new TypeError(`mailverify: option rootUsername must be a non-empty string (default ${DEFAULT_ROOT_USERNAME}), got ${JSON.stringify(rootUsername)}`);
  }
  // Read before the store opens: a wrong option leaves nothing open.
  const overrides = options.overrides === undefined ? undefined : checkOverrideRules(options.overrides, 'mailverify: option overrides');
  if (overrides !== undefined && overrides.length > MAX_OVERRIDE_RULES) {
    throw new TypeError(`mailverify: option overrides must have at most ${MAX_OVERRIDE_RULES} rules, got ${overrides.length}`);
  }
  const qualityLevels = checkQualityLevels(options.qualityLevels ?? [], 'mailverify: option qualityLevels');
  const defaultLevel = findQuality(options.defaultQuality ?? 'Standard', qualityLevels);
  if (defaultLevel === null) {
    const names = [...QUALITIES, ...qualityLevels.map((level) => level.id)].join(', ');
    throw new TypeError(`mailverify: option defaultQuality must be one of ${names}, got ${JSON.stringify(options.defaultQuality)}`);
  }
  const credits = options.credits === undefined ? null : creditSettings(options.credits, qualityLevels);
  if (credits !== null && options.store !== undefined && !isCreditStore(options.store)) {
    throw new Error('mailverify: credits are accounted in the store: the given store does not keep credits (CreditStore)');
  }
  if (options.cluster !== undefined && options.store === undefined) {
    throw new TypeError('mailverify: option cluster needs a PostgreSQL store (option store: openPostgresStore(...)), shared by every process');
  }
  const store = options.store ?? (await openDataDir(options.dataDir ?? DEFAULT_DATA_DIR, app.log));
  const rootId = await rootAccountId(store, app.log);
  if (overrides !== undefined) await setAccountOverrides(store, overrides);
  const secret = options.tokenSecret ?? (await setting(store, 'secret', () => randomBytes(32).toString('base64url')));
  const metrics = options.metrics === true ? new ServerMetrics(store) : undefined;
  // Setups that would give wrong results with no other sign (an unreachable DNS server...) are warned of in the log.
  const warnings = new MisconfigurationMonitor({ warn: ({ cause, message }) => app.log.warn({ cause }, `mailverify: ${message}`) });
  // One warning per cooling (the engine warns on its own only without an egressCooling observer).
  const cooling: VerifierObserver = {
    egressCooling: ({ egress, provider, reply, cooldownMs }) =>
      app.log.warn({ egress, provider, reply, cooldownMs }, `mailverify: egress ${egress} cools for ${Math.round(cooldownMs / 1000)} s with provider ${provider} after the reply ${reply.code} ${reply.text.replace(/\s+/gu, ' ')}`),
  };
  const verifierOptions: VerifierOptions = { ...options.verifier, observer: combineObservers(options.verifier?.observer, warnings, cooling, metrics?.observer) };
  const defaultRetentionMs = options.defaultRetentionMs ?? DEFAULT_RETENTION_MS;
  const allowPrivateAddresses = options.verifier?.allowPrivateAddresses === true;
  const log = {
    warn: (message: string, details?: Record<string, unknown>) => app.log.warn(details ?? {}, message),
    error: (message: string, details?: Record<string, unknown>) => app.log.error(details ?? {}, message),
    debug: (message: string, details?: Record<string, unknown>) => app.log.debug(details ?? {}, message),
  };
  const duties = () =>
    backgroundDuties({
      store,
      ...(options.verifier !== undefined && { verifier: options.verifier }),
      ...(options.callbackTimeoutMs !== undefined && { callbackTimeoutMs: options.callbackTimeoutMs }),
      defaultRetentionMs,
      ...(options.clock !== undefined && { clock: options.clock }),
      log,
      ...(metrics !== undefined && { onCallbackOutcome: metrics.callbackOutcome }),
    });
  const onUnknownQuality = (quality: string, jobId: string): void =>
    app.log.warn({ jobId, quality }, `mailverify: job ${jobId} names the quality level ${quality}, which is not configured any longer: it runs at the verifier's level`);
  // Reservations left open by a stop between a reservation and its settlement: settled before any job runs. (A shared
  // store leaves those of jobs not stored yet to their own process for a while: another process may be storing one.)
  if (isCreditStore(store)) {
    const settled = await store.settleReservations();
    if (settled > 0) app.log.info({ settled }, 'mailverify: credit reservations of finished or unstored jobs settled');
  }
  const creditAccounting: CreditAccounting | null = credits === null || !isCreditStore(store) ? null : { settings: credits, store };
  let jobs: JobRunner;
  let sharedDefaults: SharedCounters = {};
  let stopJobs: () => Promise<void>;
  let ready: (() => Promise<void>) | undefined;
  if (options.cluster !== undefined) {
    const cluster = await openClusterParts(options.cluster, store, {
      verifier: verifierOptions,
      qualityLevels,
      ...(options.clock !== undefined && { clock: options.clock }),
      duties: () => Object.values(duties()),
      log,
    });
    jobs = cluster.jobs;
    sharedDefaults = cluster.sharedCounters;
    metrics?.queueTasks(() => cluster.jobs.taskCounts());
    ready = () => cluster.ready();
    // Workers hand their tasks back, the jobs front stops waiting, then the clients close.
    stopJobs = async () => {
      await cluster.jobs.close();
      await cluster.runtime.close();
    };
  } else {
    const verifier = createVerifier(verifierOptions);
    const { callbacks, retention } = duties();
    const local = await Jobs.open({
      store,
      verifier,
      qualityLevels,
      onUnknownQuality,
      ...(options.clock !== undefined && { clock: options.clock }),
      onCallbackQueued: () => callbacks.wake(),
      // A job that fails for a reason of ours (the store, a bug) is reported in the server's log, not on the console.
      onError: (error, jobId) => app.log.error({ err: error, jobId }, 'job failed; it runs again at the next start'),
    });
    callbacks.start();
    retention.start();
    jobs = local;
    // Deliveries in flight are cut short (they are made again at the next start) and purges stop; running jobs write
    // what they have and stop; then their verifier closes.
    stopJobs = async () => {
      await Promise.all([callbacks.close(), retention.close()]);
      await local.close();
      await verifier.close();
    };
  }
  app.addHook('onClose', async () => {
    await stopJobs();
    if (options.store === undefined) await store.close();
  });

  const shared = { ...sharedDefaults, ...options.sharedCounters };
  const context: ServerContext = {
    jobs,
    users: store,
    rootUsername,
    auth: new Authenticator({
      root: { id: rootId, username: rootUsername, password: options.rootPassword },
      users: store,
      secret,
      tokenLifetimeMs: options.tokenLifetimeMs ?? DEFAULT_TOKEN_LIFETIME_MS,
      clientCertificates: (options as StandaloneOptions).https?.clientCa !== undefined,
      signInLimits: shared.signIns,
    }),
    cursors: new Cursors(secret),
    defaultQuality: qualityName(defaultLevel),
    qualityLevels,
    prices: credits ?? creditSettings({}, qualityLevels),
    defaultRetentionMs,
    maxEntriesPerJob: options.maxEntriesPerJob ?? DEFAULT_MAX_ENTRIES_PER_JOB,
    allowPrivateAddresses,
    fileImport: resolveImportOptions(options.fileImport),
    secondFactor: newSecondFactorState({ attempts: shared.firstFactorAttempts, failures: shared.totpFailures, steps: shared.totpSteps }),
    // In this order: CAPTCHA (ahead of throttling, so that a refused token takes no place), throttling, then credit
    // (last, so that a submission another check refuses reserves nothing).
    admission: [
      captchaStage(new CaptchaVerifier({ ...options.captcha, usedTokens: options.captcha?.usedTokens ?? shared.captchaTokens }, () => (options.clock ?? realClock).now())),
      throttlingStage(jobs.clock, shared.throttle),
      ...(creditAccounting === null ? [] : [creditStage(creditAccounting, options.clock ?? realClock)]),
    ],
    credits: creditAccounting,
  };

  // JSON, and multipart for file import: any other body is 415. A multipart body is left unread here: the route
  // that takes it streams its parts (src/server/import/) from the payload (decompressed, its rate checked).
  app.removeContentTypeParser('text/plain');
  // An empty body with a JSON content type (a DELETE or GET from a client that always sends the header) is no body,
  // not malformed JSON; anything else goes through Fastify's own parser (prototype poisoning refused).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    let text: string;
    try {
      // Refused, not mended: a lenient decoder would turn the bad bytes into U+FFFD and verify another address.
      text = STRICT_UTF8.decode(body as Buffer);
    } catch {
      return done(new ProblemError(400, 'The request body is not valid UTF-8.', '/problems/invalid-body'), undefined);
    }
    if (nestsDeeperThan(body as Buffer)) return done(tooDeep(), undefined);
    return parseJson(request, text, done);
  });
  app.addContentTypeParser('multipart/form-data', (request, payload, done) => {
    const length = Number(request.headers['content-length']);
    done(null, new StreamedBody(payload, Number.isNaN(length) ? undefined : length));
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ProblemError) return sendProblem(reply, error);
    if (error instanceof StorageFullError) {
      // The store has said once in the log that the disk is full; each refusal is routine until it has room.
      request.log.info('refused: the disk holding the data is full');
      return sendProblem(reply, storageFullProblem(request.method));
    }
    if (error instanceof SharedCountersUnavailableError) {
      // Never let through unchecked: limits, lockouts and replay checks need the counters.
      request.log.warn({ err: error.cause }, 'refused: the shared counters (Redis) cannot be reached');
      return sendProblem(reply, new ProblemError(503, 'The service cannot check this request now; try again shortly.', undefined, { 'Retry-After': String(COUNTERS_RETRY_AFTER_SECONDS) }));
    }
    if (error instanceof JobGoneError) {
      request.log.info({ jobId: error.jobId }, 'job deleted while it was read');
      return sendProblem(reply, new ProblemError(410, 'The job was deleted or has expired while it was read.', '/problems/gone'));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500 && error.code?.startsWith('FST_')) {
      // Fastify's own refusals (malformed JSON, body too large, unsupported content type) say nothing internal.
      return sendProblem(reply, new ProblemError(status, error.message));
    }
    if (request.raw.aborted || request.raw.socket?.destroyed === true) {
      // The client hung up before its request was read (a cancelled upload): its own doing, nothing failed here, and
      // no one is left to answer.
      request.log.info({ code: error.code }, 'the client closed the connection before its request was read');
      return sendProblem(reply, new ProblemError(400, 'The request was not received whole.'));
    }
    request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, new ProblemError(500, 'The server failed to answer this request.'));
  });
  app.setNotFoundHandler((request, reply) => sendProblem(reply, new ProblemError(404, `No resource at ${excerpt(pathOf(request))}.`)));
  // The request's id goes back to the client (and into problem documents), so that a report can be found in the log.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  const base = normalizeBasePath(options.basePath);
  // Ahead of every route's own hooks: requests are counted before their credentials are checked.
  if (options.rateLimits !== undefined && options.rateLimits !== false) {
    const limits = options.rateLimits === true ? {} : options.rateLimits;
    // Counted where the other shared counters are: in a cluster, in Redis, so that a limit is the cluster's, not each process's.
    addRateLimits(app, base, jobs.clock, { ...limits, store: limits.store ?? shared.rateLimits });
  }
  await registerOpenapi(app, base);
  metrics?.instrument(app);
  metrics?.route(app, base, context.auth);
  probeRoutes(app, base, store, ready);
  for (const version of VERSIONS) {
    await app.register(v2Routes, { prefix: `${base}/${version}`, context, users: version === 'v2.7' });
  }
  await app.register(legacyRoutes, { prefix: `${base}/v1.4`, context });
  faceRoutes(app, base, { console: options.console ?? true });
}

/**
 * A standalone Fastify server with compression and CORS, not yet listening (`listen()` it, `close()` it). An answer
 * sent before its request's body has all arrived (a refusal of its credentials, its rate, its size) closes the
 * connection, the rest of the body unread.
 */
export async function createServer(options: StandaloneOptions): Promise<FastifyInstance> {
  return build(options, undefined);
}

/**
 * A `(req, res)` handler for a host server that is not Fastify (Express, Koa, `node:http`), and `close()` to stop
 * the jobs and the verifier.
 */
export async function createRequestHandler(options: StandaloneOptions): Promise<{
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  close: () => Promise<void>;
}> {
  let routing: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const app = await build(options, (handler) => {
    routing = handler;
    return createHttpServer(handler);
  });
  await app.ready();
  return { handler: (req, res) => routing!(req, res), close: () => app.close() };
}

async function build(
  options: StandaloneOptions,
  serverFactory: ((handler: (req: IncomingMessage, res: ServerResponse) => void) => Server) | undefined,
): Promise<FastifyInstance> {
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout);
  // Node looks for requests past their time every connectionsCheckingInterval (30 s by default): often enough that a
  // short timeout is kept to within a quarter of itself.
  const listening = { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(headersTimeout / 4))) };
  const app = Fastify({
    ...(options.https !== undefined && { https: { ...listening, ...tlsOptions(options.https) } }),
    ...(options.https === undefined && { http: listening }),
    requestTimeout,
    connectionTimeout: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    logger: loggerOptions(options.logger),
    genReqId: requestIdOf,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    trustProxy: options.trustProxy ?? false,
    ...(serverFactory !== undefined && { serverFactory }),
    // No segment of a path is refused for its length (Fastify's default refuses one of 101 characters with 414): an id
    // too long to exist is an unknown resource, 404 after authentication as any other id. The request line is bounded
    // all the same, with the header fields, by Node's header size limit (16 KiB by default; past it, 431).
    routerOptions: { maxParamLength: Number.MAX_SAFE_INTEGER },
    frameworkErrors: (error, request, reply) => {
      request.log.info({ code: error.code }, 'request refused');
      void sendProblem(reply, new ProblemError(400, 'The URL is malformed.'));
    },
    clientErrorHandler: answerClientError,
  });
  limitConnections(app.server, {
    perAddress: count(options.maxConnectionsPerAddress, 'maxConnectionsPerAddress') ?? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
    total: count(options.maxClientConnections, 'maxClientConnections') ?? defaultMaxClientConnections(),
    exempt: trustedProxies(options.trustProxy),
  });
  closeUnreadBodies(app);
  await app.register(cors, CORS);
  await app.register(compress, { global: true });
  // Root hooks run ahead of the routes' own, which decompress bodies: the rate counted is the client's.
  limitBodyRate(app, {
    bytesPerSecond: count(options.minBodyRate, 'minBodyRate', false) ?? DEFAULT_MIN_BODY_RATE,
    graceMs: count(options.bodyRateGraceMs, 'bodyRateGraceMs') ?? DEFAULT_BODY_RATE_GRACE_MS,
  });
  await app.register(mailverify, options);
  return app;
}

/** An option that is a number from 0 (a whole one unless `whole` is false), or undefined; else a TypeError. */
function count(value: number | undefined, name: string, whole = true): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value) || (whole && !Number.isSafeInteger(value))) {
    throw new TypeError(`mailverify: option ${name} must be ${whole ? 'a whole number' : 'a number'} from 0, got ${String(value)}`);
  }
  return value;
}

/**
 * The TLS options of the HTTPS server. With a client CA, a client certificate is asked for but not required: a
 * client without one still reaches the probes and signs in otherwise, and one whose certificate does not verify is
 * answered (401 where credentials are needed) rather than cut off in the handshake. Only the given CAs are trusted for
 * clients, not Node's public roots. A connection's certificate is its identity, so it may not be swapped after the
 * handshake: TLS 1.2 renegotiation (RFC 5746) is refused.
 */
function tlsOptions(https: NonNullable<StandaloneOptions['https']>): TlsServerOptions {
  const { cert, key, clientCa } = https;
  if (clientCa === undefined) return { cert, key };
  return { cert, key, ca: clientCa, requestCert: true, rejectUnauthorized: false, secureOptions: tlsConstants.SSL_OP_NO_RENEGOTIATION };
}

/**
 * CORS for browser clients. A preflight is answered for any origin (it carries no credentials): every method of the
 * interface and, by name, the request headers clients send (`Authorization` is never covered by a wildcard). Answers
 * name the request's origin in `Access-Control-Allow-Origin` (with `Vary: Origin`: the answer depends on it) and
 * expose the headers a script reads (a new job's location, a user's entity tag, `Retry-After`, the export's file
 * name, the request id). Whether the actual request is accepted is the user's to say (its trusted origins, checked
 * after authentication); its refusal carries no `Access-Control-Allow-Origin` (src/server/protection.ts). No cookies
 * are read, so `Access-Control-Allow-Credentials` is never sent: credentials go in the `Authorization` header.
 */
const CORS = {
  origin: true,
  // A plain OPTIONS (no Origin: not a browser's preflight) is answered like any other, not refused as text.
  strictPreflight: false,
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
  allowedHeaders: ['Authorization', 'Content-Type', 'Accept', 'If-Match', 'X-Request-Id'],
  exposedHeaders: ['Location', 'ETag', 'Retry-After', 'Content-Disposition', 'X-Request-Id'],
};

/**
 * A request that Node's HTTP parser refused before Fastify saw it: a problem document written to the socket, which is
 * then closed. A reset connection has no one to answer.
 */
function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'The request was not received in time.']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request\'s header fields are too large.']
        : [400, 'The request is malformed.'];
  this.log.debug({ code: error.code }, 'client error');
  if (socket.writable) socket.write(rawProblemAnswer(status, detail));
  socket.destroy();
}

/** The `Retry-After` of a request refused while the shared counters cannot be reached: Redis clients reconnect within seconds. */
const COUNTERS_RETRY_AFTER_SECONDS = 10;

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A sane `X-Request-Id` of the client's: at most 128 letters, digits and `-_.:`. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the client's `X-Request-Id` when it is sane (a proxy's or the client's own), else a new UUID. */
function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

const REDACTED = ['req.headers.authorization', 'req.headers.cookie', 'req.body.password'];

/** Fastify's logger options with credentials redacted, whatever the caller passed. */
function loggerOptions(logger: StandaloneOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === undefined || logger === false) return false;
  if (logger === true) return { redact: REDACTED };
  const redact = (logger as { redact?: string[] | { paths: string[]; censor?: unknown } }).redact;
  const paths = [...new Set([...(Array.isArray(redact) ? redact : (redact?.paths ?? [])), ...REDACTED])];
  return { ...logger, redact: Array.isArray(redact) || redact === undefined ? paths : { ...redact, paths } } as FastifyServerOptions['logger'];
}

/**
 * The SQLite store of a data folder. A database file of 0 bytes opens as a new, empty database: said in the log, since
 * it usually means the file was lost (a failed copy, a full disk) rather than a first start.
 */
async function openDataDir(dataDir: string, log: FastifyBaseLogger): Promise<ServiceStore> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, 'mailverify.db');
  const size = await stat(file).then((found) => found.size, () => null);
  if (size === 0) {
    log.warn({ file }, 'mailverify: the database file is empty (0 bytes): the server starts with no jobs; if it held jobs, stop the server and restore the data folder from a backup');
  }
  return openSqliteStore(file, {
    onStorageFull: (error) =>
      log.warn({ err: error, file }, 'mailverify: the disk holding the data is full: new jobs are refused (507), results wait in memory and are written once it has room'),
    onStorageWritable: () => log.info({ file }, 'mailverify: the data can be written again: jobs go on'),
  });
}

/**
 * The root account's id, kept with the data; made on the first start. Made again while the store holds jobs, the
 * data folder was damaged or reset: those jobs, owned by the lost id, answer 404, which the log says.
 */
async function rootAccountId(store: JobStore, log: FastifyBaseLogger): Promise<string> {
  const known = await store.getSetting('root.id');
  if (known !== null) return known;
  const jobs = (await store.jobTotals()).reduce((sum, totals) => sum + totals.jobs, 0);
  if (jobs > 0) {
    log.warn({ jobs }, `mailverify: the data holds ${jobs} job${jobs === 1 ? '' : 's'} but no root account id: a new id is made, and those jobs (owned by the lost one) answer 404; stop the server and restore the data folder from a backup`);
  }
  return setting(store, 'root.id', () => randomUUID());
}

/** A setting kept with the data, made on first use. */
async function setting(store: JobStore, key: string, make: () => string): Promise<string> {
  const known = await store.getSetting(key);
  if (known !== null) return known;
  const value = make();
  // Processes starting together on one store agree on one value.
  if (store.initSetting !== undefined) return store.initSetting(key, value);
  await store.setSetting(key, value);
  return value;
}
