// Cluster mode in one test process: API servers and workers on one PostgreSQL schema and one Redis prefix, verifying
// against the mail lab. A job is verified by whichever worker takes its tasks, with the verdicts an embedded verifier
// gives; a waitTime request on a server without workers answers when another process completes the job; the
// connections one exchanger sees stay within the cluster's cap whatever the workers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/mailverify/src/engine/entry.js';
import { createVerifier, type VerifierOptions } from '../../packages/mailverify/src/engine/verifier.js';
import type { StandaloneOptions } from '../../packages/server/src/server/app.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { start, type Running } from '../server/http-client.js';
import { postgresSchemas } from './postgres.js';
import { REDIS_URL, testRedis, type TestRedis } from './redis-helpers.js';

const schemas = postgresSchemas();
let lab: MailLab;
let redis: TestRedis;
let verifierOptions: VerifierOptions;
const running: Running[] = [];

/** A server of the cluster on the shared schema (and a queue of the schema's own), with `workers` workers of its own. */
async function member(schema: string, workers: number, cluster: Partial<NonNullable<StandaloneOptions['cluster']>> = {}, verifier = verifierOptions): Promise<Running> {
  const server = await start({
    store: await schemas.open(schema),
    verifier,
    tokenSecret: 'the shared signing secret of the cluster',
    cluster: { queue: REDIS_URL, prefix: `${redis.prefix}-${schema}`, workers, reconcileIntervalMs: 500, ...cluster },
  });
  running.push(server);
  return server;
}

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: {
      good: { mailboxes: ['alice', 'bob', 'carol'] },
      all: { acceptAll: true },
      grey: { mailboxes: ['dave'], greylist: 1 },
      slow: { mailboxes: ['erin', 'frank'], delayMs: { rcpt: 150 } },
      ...Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`lazy${i}`, { mailboxes: ['erin', 'frank'], delayMs: { rcpt: 150 } }])),
    },
    domains: {
      'a-cluster.com': ['good'],
      'b-cluster.com': ['good'],
      'catch-cluster.com': ['all'],
      'grey-cluster.com': ['grey'],
      'nomx-cluster.com': [],
      ...Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`slow${i}-cluster.com`, ['slow']])),
      ...Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`lazy${i}-cluster.com`, [`lazy${i}`]])),
    },
  });
  redis = testRedis('cluster-jobs');
  verifierOptions = labVerifierOptions(lab, { passDelayMs: 300 });
});

afterAll(async () => {
  for (const server of running.splice(0)) await server.close();
  await redis?.close();
  await lab?.close();
});

const INPUTS = [
  'alice@a-cluster.com',
  'nobody@a-cluster.com',
  'bob@b-cluster.com',
  'Alice@a-cluster.com',
  'anyone@catch-cluster.com',
  'someone@catch-cluster.com',
  'dave@grey-cluster.com',
  'x@nomx-cluster.com',
  'not an address',
  'not an address',
  'carol@b-cluster.com',
  'alice@a-cluster.com',
];

/** What matters of an entry for the comparison with an embedded verifier. */
function verdict(entry: Partial<Entry>) {
  return { index: entry.index, status: entry.status, classification: entry.classification, duplicateOf: entry.duplicateOf };
}

describe('cluster: API servers and workers on PostgreSQL and Redis', () => {
  it('a job submitted to a server without workers is verified by a worker elsewhere, with the verdicts of an embedded verifier; waitTime answers at completion', async () => {
    const schema = schemas.fresh();
    const api = await member(schema, 0);
    await member(schema, 1);
    const submitted = await api.call('POST', '/v2.7/email-validations?waitTime=30000', {
      json: { entries: INPUTS.map((inputData) => ({ inputData })), quality: 'High', deduplication: 'Safe' },
    });
    expect(submitted.status, submitted.text).toBe(200);
    expect(submitted.body.overview.status).toBe('Completed');
    const entries = await api.call('GET', `/v2.7/email-validations/${submitted.body.overview.id}/entries?limit=100`);
    expect(entries.status).toBe(200);
    const got = (entries.body.data as Partial<Entry>[]).map(verdict);

    const embedded = createVerifier({ ...verifierOptions, quality: 'High' });
    const expected: ReturnType<typeof verdict>[] = [];
    for await (const entry of embedded.verifyMany(INPUTS, { deduplication: 'Safe', order: 'input' })) expected.push(verdict(entry));
    await embedded.close();
    expect(got).toEqual(expected);
    // The greylisted mailbox passed at its second pass, a delayed task.
    expect(got[6]!.status).toBe('Success');
    expect(got.map((entry) => entry.status)).toContain('Duplicate');
  });

  it('two workers each running one task at a time never open more connections to one exchanger than the cluster cap', async () => {
    const schema = schemas.fresh();
    const capped = { ...verifierOptions, smtp: { ...verifierOptions.smtp, maxConnectionsPerExchanger: 1 } };
    const api = await member(schema, 0, {}, capped);
    await member(schema, 1, { concurrency: 1 }, capped);
    await member(schema, 1, { concurrency: 1 }, capped);
    lab.reset();
    // Four jobs, each of one domain of the slow exchanger: four tasks, taken by both workers at once.
    const jobs = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        api.call('POST', '/v2.7/email-validations', { json: { entries: ['erin', 'frank', 'gina'].map((user) => ({ inputData: `${user}@slow${i}-cluster.com` })) } }),
      ),
    );
    for (const job of jobs) expect(job.status, job.text).toBe(202);
    for (const job of jobs) {
      const done = await api.call('GET', `/v2.7/email-validations/${job.body.overview.id}?waitTime=30000`);
      expect(done.body.overview.status, done.text).toBe('Completed');
      expect((done.body.entries.data as Entry[]).map((entry) => entry.status)).toEqual(['Success', 'Success', 'MailboxDoesNotExist']);
    }
    expect(lab.stats('slow').connections).toBeGreaterThanOrEqual(2);
    expect(lab.stats('slow').maxConcurrent).toBe(1);
  });

  it('the catch-all probe runs once per exchanger and domain in a job, whichever of two workers takes its tasks', async () => {
    const schema = schemas.fresh();
    const api = await member(schema, 0);
    await member(schema, 1, { concurrency: 1, chunkSize: 2 });
    await member(schema, 1, { concurrency: 1, chunkSize: 2 });
    lab.reset();
    const users = Array.from({ length: 12 }, (_, i) => `user${i}`);
    const inputs = [...users.map((user) => `${user}@catch-cluster.com`), 'alice@a-cluster.com', 'bob@b-cluster.com', 'x@nomx-cluster.com'];
    const done = await api.call('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: inputs.map((inputData) => ({ inputData })) } });
    expect(done.body.overview?.status, done.text).toBe('Completed');
    const statuses = (done.body.entries.data as Entry[]).map((entry) => entry.status);
    expect(statuses.slice(0, 12)).toEqual(users.map(() => 'ServerIsCatchAll'));
    // Every RCPT the catch-all server saw: the twelve addresses, and one probe of a made-up one.
    const recipients = lab.transcript('all').flat().filter((line) => /^RCPT TO:/i.test(line));
    const probes = recipients.filter((line) => !users.some((user) => line.includes(`<${user}@`)));
    expect(probes).toHaveLength(1);
  });

  it('a job with a higher priority is verified first: it completes while an earlier job of lower priority is still in progress', async () => {
    const schema = schemas.fresh();
    const api = await member(schema, 0);
    await member(schema, 1, { concurrency: 1, chunkSize: 3 });
    // Four exchangers: four tasks of the low job, and the high job's tasks go before all but the first.
    const slow = (i: number, user: string) => `${user}@lazy${i}-cluster.com`;
    const low = await api.call('POST', '/v2.7/email-validations', {
      json: { priority: 0, entries: [0, 1, 2, 3].flatMap((i) => ['erin', 'frank', 'gina'].map((user) => ({ inputData: slow(i, user) }))) },
    });
    expect(low.status, low.text).toBe(202);
    const high = await api.call('POST', '/v2.7/email-validations?waitTime=30000', { json: { priority: 255, entries: [{ inputData: 'carol@b-cluster.com' }] } });
    expect(high.body.overview?.status, high.text).toBe('Completed');
    const lowNow = await api.call('GET', `/v2.7/email-validations/${low.body.overview.id}/overview`);
    expect(lowNow.body.status).toBe('InProgress');
    const lowDone = await api.call('GET', `/v2.7/email-validations/${low.body.overview.id}/overview?waitTime=30000`);
    expect(lowDone.body.status).toBe('Completed');
  });

  it('a job deleted while workers verify it becomes a tombstone (410) with no entries left, and the workers go on with other jobs', async () => {
    const schema = schemas.fresh();
    const api = await member(schema, 0);
    const store = await schemas.open(schema);
    await member(schema, 1, { concurrency: 1 });
    const inputs = [0, 1, 2, 3].flatMap((i) => ['erin', 'frank', 'gina', 'hank', 'ivy'].map((user) => ({ inputData: `${user}@slow${i}-cluster.com` })));
    const job = await api.call('POST', '/v2.7/email-validations', { json: { entries: inputs } });
    expect(job.status, job.text).toBe(202);
    const id = job.body.overview.id as string;
    for (;;) {
      const now = await store.getJob(id);
      if (now!.noOfCompleted > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await api.call('DELETE', `/v2.7/email-validations/${id}`)).status).toBe(200);
    expect((await api.call('GET', `/v2.7/email-validations/${id}`)).status).toBe(410);
    const next = await api.call('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: [{ inputData: 'alice@a-cluster.com' }] } });
    expect(next.body.overview?.status, next.text).toBe('Completed');
    const ended = await store.getJob(id);
    expect(ended?.status).toBe('Deleted');
    expect((await store.entries(id, { limit: 100 })).data).toEqual([]);
  });

  it('/metrics of an API server counts the queue\'s tasks by state, and its /ready needs Redis as well as the store', async () => {
    const schema = schemas.fresh();
    const api = await start({
      store: await schemas.open(schema),
      verifier: verifierOptions,
      metrics: true,
      cluster: { queue: REDIS_URL, prefix: `${redis.prefix}-${schema}`, workers: 0 },
    });
    running.push(api);
    // No worker: the plan task of a submission waits in the queue.
    const submitted = await api.call('POST', '/v2.7/email-validations', { json: { entries: [{ inputData: 'alice@a-cluster.com' }] } });
    expect(submitted.status, submitted.text).toBe(202);
    const metrics = await api.call('GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^mailverify_queue_tasks\{state="(wait|prioritized)"\} 1$/m);
    expect(metrics.text).toMatch(/^mailverify_queue_tasks\{state="active"\} 0$/m);
    expect((await api.call('GET', '/ready', { auth: null })).status).toBe(200);
  });
});
