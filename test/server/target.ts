// The server under test, in the mode MAILVERIFY_TEST_TARGET names. Embedded (default, `npm test`): one server on a
// SQLite file, as one process runs it. Cluster (`npm run test:cluster`): a PostgreSQL schema and a Redis prefix of
// their own, two API servers (no workers) and two worker processes (servers with one worker each, sent no requests),
// each with a store of its own as separate processes would have, behind a round-robin HTTP proxy on loopback, so that
// consecutive requests of a test reach different API servers as behind a load balancer.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer as createHttpServer, request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { createServer as createTcpServer, connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll } from 'vitest';
import { openPostgresStore, type PostgresJobStore } from '../../packages/server/src/jobs/postgres-store.js';
import { openSqliteStore, type SqliteJobStore } from '../../packages/server/src/jobs/sqlite-store.js';
import { createServer, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { POSTGRES_URL, postgresSchemas } from '../cluster/postgres.js';
import { REDIS_URL, testRedis } from '../cluster/redis-helpers.js';

/** Whether the server tests run against a cluster (MAILVERIFY_TEST_TARGET=cluster). */
const CLUSTER = process.env['MAILVERIFY_TEST_TARGET'] === 'cluster';

/** Where one server under test keeps its data (from `serverData`): a server started again on it finds it as it was. */
export type ServerData =
  | { readonly target: 'embedded'; readonly dataDir: string }
  | { readonly target: 'cluster'; readonly schema: string; readonly prefix: string };

/** A server's options but where its data is (`ServerData` says). */
export type TargetOptions = Omit<StandaloneOptions, 'store' | 'dataDir' | 'cluster'>;

export interface ServerUnderTest {
  /** Embedded: the server's; cluster: the proxy's in front of its API servers. */
  readonly origin: string;
  /** The server's data as a store, for the tests that read or write it directly (cluster: a store of its own). */
  readonly store: SqliteJobStore | PostgresJobStore;
  /**
   * A server on the same data with other options (API settings: limits, caps), whose jobs run as the first one's
   * do: embedded, one more server on the store; cluster, two more API servers behind a proxy of their own. Closed
   * with this one.
   */
  withOptions(options: TargetOptions): Promise<{ readonly origin: string }>;
  /** Closes every server and the store; the data stays for a next start. */
  close(): Promise<void>;
}

/**
 * The cluster's settings in tests: a reconciler round often (twice a second: each process not elected tries for the
 * election then, on a connection it opens for it). Tasks of the default size (1,000 inputs): smaller ones
 * make the 65,536-entry job of export.test.ts take most of the 30 s a request may wait on this machine's two cores.
 */
const CLUSTER_SETTINGS = { reconcileIntervalMs: 500 } as const;
/** The signing secret of every process of a test cluster (tokens and cursors one signs, the others read). */
const CLUSTER_TOKEN_SECRET = 'the signing secret shared by the processes of the test cluster';
/** Connections of each process's pool: a test cluster has several processes, and test files run side by side. */
const POOL_SIZE = 2;

/**
 * Data places for one test file's servers (call it at the top of the file): `fresh()` names a new one. Embedded,
 * folders under a temporary one; cluster, PostgreSQL schemas and Redis key prefixes. All removed after the file.
 */
export function serverData(name: string): { fresh(): ServerData } {
  let count = 0;
  if (!CLUSTER) {
    const dir = mkdtempSync(join(tmpdir(), `mailverify-${name}-`));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    return { fresh: () => ({ target: 'embedded', dataDir: join(dir, `data-${(count += 1)}`) }) };
  }
  const schemas = postgresSchemas();
  const redis = testRedis(name);
  afterAll(async () => {
    // testRedis deletes its prefix's keys once it has a client: opened only now, so that no test sees it.
    await redis.client();
    await redis.close();
  });
  return { fresh: () => ({ target: 'cluster', schema: schemas.fresh(), prefix: `${redis.prefix}:${(count += 1)}` }) };
}

/** Starts the server under test on `data` with `options`. */
export async function startServerUnderTest(data: ServerData, options: TargetOptions): Promise<ServerUnderTest> {
  return data.target === 'embedded' ? startEmbedded(data.dataDir, options) : startCluster(data, options);
}

async function startEmbedded(dataDir: string, options: TargetOptions): Promise<ServerUnderTest> {
  mkdirSync(dataDir, { recursive: true });
  const store = await openSqliteStore(join(dataDir, 'mailverify.db'));
  const apps: FastifyInstance[] = [];
  const listen = async (serverOptions: TargetOptions): Promise<string> => {
    const app = await createServer({ ...serverOptions, store });
    apps.push(app);
    return app.listen({ host: '127.0.0.1', port: 0 });
  };
  try {
    const origin = await listen(options);
    return {
      origin,
      store,
      withOptions: async (other) => ({ origin: await listen(other) }),
      async close() {
        for (const app of apps.splice(0).reverse()) await app.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

async function startCluster(data: ServerData & { target: 'cluster' }, options: TargetOptions): Promise<ServerUnderTest> {
  const closers: Array<() => Promise<void>> = [];
  const close = async (): Promise<void> => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  /** One process of the cluster: a server on a store of its own; an API server (no workers) listens, its origin. */
  const member = async (memberOptions: TargetOptions, workers: number): Promise<string | undefined> => {
    const store = await openPostgresStore({ connectionString: POSTGRES_URL, schema: data.schema, max: POOL_SIZE });
    closers.push(() => store.close());
    const app = await createServer({
      tokenSecret: CLUSTER_TOKEN_SECRET,
      ...memberOptions,
      store,
      cluster: { queue: REDIS_URL, prefix: data.prefix, workers, ...CLUSTER_SETTINGS },
    });
    closers.push(() => app.close());
    if (workers === 0) return app.listen({ host: '127.0.0.1', port: 0 });
    await app.ready();
    return undefined;
  };
  const apiServers = async (apiOptions: TargetOptions): Promise<string> => {
    const origins: string[] = [];
    // One after the other: the first start of a schema makes its tables and the root account.
    for (let n = 0; n < 2; n++) origins.push((await member(apiOptions, 0))!);
    // A TLS server checks the client's certificate itself: its connections are passed through whole.
    const proxy = apiOptions.https === undefined ? await startRoundRobinProxy(origins) : await startRoundRobinPassThrough(origins);
    closers.push(() => proxy.close());
    return proxy.origin;
  };
  try {
    const origin = await apiServers(options);
    for (let n = 0; n < 2; n++) await member(options, 1);
    const store = await openPostgresStore({ connectionString: POSTGRES_URL, schema: data.schema, max: POOL_SIZE });
    closers.push(() => store.close());
    return {
      origin,
      store,
      withOptions: async (other) => ({ origin: await apiServers(other) }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Header fields of one connection, not of the message: never forwarded by a proxy (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && !HOP_BY_HOP.has(name)));
}

/**
 * A reverse proxy on loopback sending each request to the next of `origins` in turn: method, path, end-to-end headers
 * and the body streamed both ways, the answer's status, headers and body as they came.
 */
async function startRoundRobinProxy(origins: readonly string[]): Promise<{ origin: string; close(): Promise<void> }> {
  const targets = origins.map((origin) => new URL(origin));
  const agent = new Agent({ keepAlive: true });
  let next = 0;
  const proxy = createHttpServer((request, response) => {
    const target = targets[next++ % targets.length]!;
    const forwarded = httpRequest(
      { host: target.hostname, port: target.port, method: request.method, path: request.url, headers: endToEnd(request.headers), agent },
      (answer) => {
        response.writeHead(answer.statusCode!, answer.statusMessage, endToEnd(answer.headers));
        answer.pipe(response);
        answer.on('error', () => response.destroy());
      },
    );
    forwarded.on('error', (error) => {
      // The server closed the connection: after its answer (it refused a body it did not read whole), nothing more
      // to send; before it, the client learns the request failed.
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${error.message}`);
      else if (!response.writableEnded) response.destroy();
    });
    request.pipe(forwarded);
    request.on('error', () => forwarded.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      agent.destroy();
    },
  };
}

/**
 * A TCP proxy on loopback for TLS servers, as a load balancer passing TLS through: each connection goes whole to the
 * next of `origins` in turn (the origin it answers is theirs with its own port).
 */
async function startRoundRobinPassThrough(origins: readonly string[]): Promise<{ origin: string; close(): Promise<void> }> {
  const targets = origins.map((origin) => new URL(origin));
  const sockets = new Set<Socket>();
  let next = 0;
  const track = (socket: Socket): Socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    return socket;
  };
  const proxy = createTcpServer((client) => {
    const target = targets[next++ % targets.length]!;
    const upstream = track(connect(Number(target.port), target.hostname));
    track(client);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    origin: `${targets[0]!.protocol}//127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
