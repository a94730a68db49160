// Egress budgets and cooling across a cluster of two API servers and two workers (in this process, on one PostgreSQL
// schema and one Redis prefix), against a lab "provider" of two exchangers that counts the RCPTs of each source
// address. Both workers leave by the same egress (source address 127.0.0.5): one budget per egress × provider for the
// whole cluster, and a cooling one worker starts stops the other's connections too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../packages/mailverify/src/engine/entry.js';
import type { VerifierOptions } from '../../packages/mailverify/src/engine/verifier.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab, type ServerSpec } from '../lab/mail-lab.js';
import { start, type Running } from '../server/http-client.js';
import { postgresSchemas } from './postgres.js';
import { REDIS_URL, testRedis, type TestRedis } from './redis-helpers.js';

const schemas = postgresSchemas();
const MAILBOXES = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'];
const PROVIDER = { id: 'lab-provider', match: ['p?.mx.lab.test'] };
let lab: MailLab;
let redis: TestRedis;
const running: Running[] = [];

function limited(rcpts: number): ServerSpec {
  return { engine: 'raw', pipelining: false, mailboxes: MAILBOXES, sourceLimit: { rcpts, reply: '421 4.7.28 Our system has detected an unusual rate of mail from your IP; rate limited', group: 'provider' } };
}

beforeAll(async () => {
  lab = await startMailLab({
    servers: { p1: limited(1000), p2: limited(1000) },
    domains: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`d${i}-egress-cluster.com`, [i % 2 === 0 ? 'p1' : 'p2']])),
  });
  redis = testRedis('egress-cluster');
});

afterAll(async () => {
  for (const server of running.splice(0)) await server.close();
  await redis?.close();
  await lab?.close();
});

/** Two API servers without workers and two workers, on a fresh schema; the API servers are returned. */
async function cluster(verifier: VerifierOptions): Promise<Running[]> {
  const schema = schemas.fresh();
  const member = async (workers: number) => {
    const server = await start({
      store: await schemas.open(schema),
      verifier,
      tokenSecret: 'the shared signing secret of the egress cluster',
      cluster: { queue: REDIS_URL, prefix: `${redis.prefix}-${schema}`, workers, concurrency: 1, chunkSize: 4, reconcileIntervalMs: 500 },
    });
    running.push(server);
    return server;
  };
  const apis = [await member(0), await member(0)];
  await member(1);
  await member(1);
  return apis;
}

function options(smtp: NonNullable<VerifierOptions['smtp']>): VerifierOptions {
  const base = labVerifierOptions(lab);
  return { ...base, smtp: { ...base.smtp, egress: [{ id: 'shared', localAddress: '127.0.0.5' }], maxConnectionsPerExchanger: 1, ...smtp } };
}

/** Jobs of one domain each, spread over both API servers, submitted at once; their entries when all completed. */
async function verifyJobs(apis: Running[], jobs: string[][]): Promise<Entry[][]> {
  const submitted = await Promise.all(
    jobs.map((inputs, i) => apis[i % apis.length]!.call('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: inputs.map((inputData) => ({ inputData })) } })),
  );
  return submitted.map((job) => {
    expect(job.status, job.text).toBe(200);
    return job.body.entries.data as Entry[];
  });
}

const right = (input: string) => (MAILBOXES.includes(input.split('@')[0]!) ? 'Success' : 'MailboxDoesNotExist');

describe('egress budgets and cooling in a cluster (2 API servers + 2 workers)', () => {
  it("one day's budget for the provider through the egress, whichever worker asks: no more RCPTs than it allows", async () => {
    lab.reset();
    const apis = await cluster(options({ providers: [{ ...PROVIDER, recipientsPerDay: 10 }] }));
    const jobs = Array.from({ length: 8 }, (_, i) => ['alice', 'bob', 'nobody'].map((local) => `${local}@d${i}-egress-cluster.com`));
    const entries = (await verifyJobs(apis, jobs)).flat();
    const { asked, limited: refused } = lab.sourceStats('provider');
    // Every RCPT (catch-all probes included) came from the shared egress and counted against the one budget.
    expect(asked).toEqual({ '127.0.0.5': 10 });
    expect(refused).toEqual({});
    // Those asked got their verdict; the rest were deferred (one pass): ServerTemporaryUnavailable, never a guess.
    for (const entry of entries) expect([right(entry.inputData), 'ServerTemporaryUnavailable']).toContain(entry.status);
    expect(entries.filter((entry) => entry.status === 'ServerTemporaryUnavailable').length).toBeGreaterThan(0);
  });

  it("the provider's connections per egress are capped across the cluster: one at a time over both exchangers", async () => {
    const slow: ServerSpec = { ...limited(1000), delayMs: { rcpt: 40 } };
    lab.setServer('p1', slow);
    lab.setServer('p2', slow);
    lab.reset();
    try {
      const apis = await cluster(options({ providers: [{ ...PROVIDER, maxConnectionsPerEgress: 1 }] }));
      const jobs = Array.from({ length: 8 }, (_, i) => ['alice', 'nobody'].map((local) => `${local}@d${i}-egress-cluster.com`));
      const entries = (await verifyJobs(apis, jobs)).flat();
      expect(entries.map((entry) => entry.status)).toEqual(entries.map((entry) => right(entry.inputData)));
      expect(lab.stats().maxConcurrent).toBe(1);
      expect(lab.stats().connections).toBeGreaterThan(1);
    } finally {
      lab.setServer('p1', limited(1000));
      lab.setServer('p2', limited(1000));
    }
  });

  it('a cooling that one worker starts holds for the other: no second refusal while it lasts', async () => {
    lab.setServer('p1', limited(2));
    lab.setServer('p2', limited(2));
    lab.reset();
    try {
      const apis = await cluster(options({ providers: [PROVIDER], maxCoolingWaitMs: 0 }));
      // The first job meets the limit: its 421 cools the egress × provider for a minute, cluster-wide.
      const [first] = await verifyJobs(apis, [['alice', 'bob', 'carol', 'nobody'].map((local) => `${local}@d0-egress-cluster.com`)]);
      expect(lab.sourceStats('provider').limited).toEqual({ '127.0.0.5': 1 });
      expect(first!.some((entry) => entry.status === 'ServerTemporaryUnavailable')).toBe(true);
      // Jobs of other domains of the provider, taken by both workers: no connection goes out while the pair cools.
      const asked = lab.sourceStats('provider').asked['127.0.0.5'];
      const later = (await verifyJobs(apis, Array.from({ length: 6 }, (_, i) => [`alice@d${i + 1}-egress-cluster.com`]))).flat();
      expect(later.map((entry) => entry.status)).toEqual(Array(6).fill('ServerTemporaryUnavailable'));
      expect(lab.sourceStats('provider')).toEqual({ asked: { '127.0.0.5': asked }, limited: { '127.0.0.5': 1 } });
    } finally {
      lab.setServer('p1', limited(1000));
      lab.setServer('p2', limited(1000));
    }
  });
});
