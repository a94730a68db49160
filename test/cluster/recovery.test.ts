// Recovery of a cluster with real processes (the built `mailverify serve` and `mailverify worker`), each test on a
// PostgreSQL server and a Redis server of its own (so that restarting or flushing them touches no other test): a
// worker killed with SIGKILL, Redis flushed, PostgreSQL restarted, each in the middle of a job, end with the job
// Completed and every entry answered exactly once; a worker stopped with SIGTERM exits within 10 s and hands its
// tasks back at once (the job completes long before its lease would have expired).
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeRedis, openRedis } from '../../packages/server/src/cluster/redis.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import type { ServeProcess } from '../lab/serve-process.js';
import { callServer } from '../server/http-client.js';
import { basic } from '../server/http-calls.js';
import { ROOT_PASSWORD, clusterArgs, startApi, startWorker, type WorkerProcess } from './cluster-processes.js';
import { startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './private-services.js';

const AUTH = basic('root', ROOT_PASSWORD);
const SERVERS = 6;
const DOMAINS_PER_SERVER = 3;
const USERS = ['u0', 'u1', 'u2', 'u3', 'x0', 'x1', 'x2', 'x3'];
const INPUTS = Array.from({ length: SERVERS * DOMAINS_PER_SERVER }, (_, d) => USERS.map((user) => `${user}@d${d}-recovery.com`)).flat();
/** The lab's mailboxes are u0 to u3: the rest do not exist. */
const expectedStatus = (input: string) => (input.startsWith('u') ? 'Success' : 'MailboxDoesNotExist');

let lab: MailLab;
let postgres: PrivatePostgres | undefined;
let redis: PrivateRedis | undefined;
let api: ServeProcess | undefined;
let workers: WorkerProcess[] = [];

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    // Each RCPT answered after a while: a job lasts some seconds, time enough to break something in its middle.
    servers: Object.fromEntries(Array.from({ length: SERVERS }, (_, s) => [`s${s}`, { mailboxes: USERS.slice(0, 4), delayMs: { rcpt: 150 } }])),
    domains: Object.fromEntries(Array.from({ length: SERVERS * DOMAINS_PER_SERVER }, (_, d) => [`d${d}-recovery.com`, [`s${d % SERVERS}`]])),
  });
});

afterAll(async () => {
  await lab?.close();
});

afterEach(async () => {
  if (process.env['DEBUG_RECOVERY']) for (const worker of workers) console.log('WORKER', worker.stderr().slice(-3000));
  if (process.env['DEBUG_RECOVERY']) console.log('API', api?.stderr().slice(-3000));
  for (const worker of workers.splice(0)) {
    worker.child.kill('SIGKILL');
    await worker.exited;
  }
  await api?.stop();
  api = undefined;
  await redis?.stop();
  redis = undefined;
  await postgres?.stop();
  postgres = undefined;
});

/** A cluster: its own PostgreSQL and Redis, one API process, `count` worker processes with `lease` ms leases. */
async function startCluster(count: number, lease: number): Promise<string[]> {
  postgres = await startPrivatePostgres();
  redis = await startPrivateRedis();
  const args = clusterArgs(lab, postgres.url, redis.url, ['--lease', String(lease), '--worker-concurrency', '2', '--chunk-size', '8']);
  api = await startApi(args);
  for (let n = 0; n < count; n++) workers.push(await startWorker(args));
  return args;
}

async function submit(): Promise<string> {
  const answer = await callServer(api!.origin, AUTH, 'POST', '/v2.7/email-validations', { json: { entries: INPUTS.map((inputData) => ({ inputData })) } });
  expect(answer.status, answer.text).toBe(202);
  return answer.body.overview.id as string;
}

/** Resolves once the job has some results and not all of them. */
async function midway(id: string): Promise<void> {
  for (;;) {
    const answer = await callServer(api!.origin, AUTH, 'GET', `/v2.7/email-validations/${id}/overview`);
    const percentage = answer.body?.progress?.percentage ?? 0;
    expect(answer.body.status, 'the job completed before the fault').toBe('InProgress');
    if (percentage > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits (up to `seconds`) for the job to complete, then checks every entry and the store's counts. */
async function expectAnsweredOnce(id: string, seconds = 90): Promise<void> {
  const until = Date.now() + seconds * 1000;
  let overview: Record<string, unknown> | undefined;
  while (Date.now() < until) {
    const answer = await callServer(api!.origin, AUTH, 'GET', `/v2.7/email-validations/${id}/overview?waitTime=5000`);
    overview = answer.body;
    if (answer.status === 200 && overview?.['status'] === 'Completed') break;
  }
  expect(overview?.['status'], JSON.stringify(overview)).toBe('Completed');
  const entries = await callServer(api!.origin, AUTH, 'GET', `/v2.7/email-validations/${id}/entries?limit=1000`);
  const data = entries.body.data as { index: number; inputData: string; status: string }[];
  expect(data.map((entry) => entry.index)).toEqual(INPUTS.map((_, index) => index));
  expect(data.map((entry) => entry.status)).toEqual(INPUTS.map(expectedStatus));
  // The store counted each entry's result once.
  const client = new pg.Client({ connectionString: postgres!.url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT j.no_of_entries, j.no_of_completed, (SELECT count(*) FROM entries e WHERE e.job = j.sequence AND e.result IS NOT NULL) AS answered
       FROM jobs j WHERE j.id = $1`,
      [id],
    );
    expect(rows[0]).toEqual({ no_of_entries: INPUTS.length, no_of_completed: INPUTS.length, answered: String(INPUTS.length) });
  } finally {
    await client.end();
  }
}

describe('cluster recovery (real processes)', () => {
  it('a worker killed with SIGKILL mid-job: its tasks return once their leases expire, and another worker finishes them', async () => {
    await startCluster(2, 2_000);
    const id = await submit();
    await midway(id);
    workers[0]!.child.kill('SIGKILL');
    await workers[0]!.exited;
    await expectAnsweredOnce(id);
  }, 150_000);

  it('Redis flushed mid-job (FLUSHALL): the reconciler plans the job again from the store', async () => {
    await startCluster(2, 2_000);
    const id = await submit();
    await midway(id);
    const client = await openRedis(redis!.url);
    await client.flushall();
    await closeRedis(client);
    await expectAnsweredOnce(id);
  }, 150_000);

  it('PostgreSQL restarted mid-job: writes are tried again until it is back, and the job completes', async () => {
    await startCluster(2, 2_000);
    const id = await submit();
    await midway(id);
    await postgres!.restart();
    await expectAnsweredOnce(id);
  }, 150_000);

  it('a worker stopped with SIGTERM exits within 10 s and hands its tasks back at once', async () => {
    // Leases of 10 minutes: a task that was not handed back would hold the job for that long.
    const args = await startCluster(1, 600_000);
    const id = await submit();
    await midway(id);
    const stopping = Date.now();
    workers[0]!.child.kill('SIGTERM');
    const code = await workers[0]!.exited;
    expect(code).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(10_000);
    workers.push(await startWorker(args));
    await expectAnsweredOnce(id, 60);
  }, 150_000);
});
