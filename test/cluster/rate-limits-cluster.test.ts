// The request rate limits of a cluster are the cluster's, not each process's: two real `mailverify serve` processes in
// cluster mode (one PostgreSQL store, one Redis, a schema and a key prefix of this file's own, no workers) with
// `--rate-limits` count one client address's requests in one bucket and one set of requests in flight, in Redis. The
// rate is made tiny (--rate-limit-per-second 0.01: a token per 100 s) so that the count is exact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { callServer, type Answer, type Call } from '../server/http-client.js';
import { basic, heldSubmission, type HeldSubmission } from '../server/http-calls.js';
import { POSTGRES_URL, postgresSchemas } from './postgres.js';
import { REDIS_URL, testRedis, until, type TestRedis } from './redis-helpers.js';

const PASSWORD = 'rate limits cluster root password';
const ROOT_AUTH = basic('root', PASSWORD);
const JOB = '00000000-0000-4000-8000-000000000000';

const schemas = postgresSchemas();
let redis: TestRedis;
let servers: ServeProcess[] = [];
let ips = 0;
const freshIp = (): string => `198.51.100.${++ips}`;

function startApi(schema: string): Promise<ServeProcess> {
  return startServe(
    [
      '--store', POSTGRES_URL, '--store-schema', schema, '--queue', REDIS_URL, '--cluster-prefix', redis.prefix, '--workers', '0',
      '--log-level', 'warn', '--trust-proxy', '127.0.0.1', '--rate-limits', '--rate-limit-per-second', '0.01',
    ],
    { MAILVERIFY_ROOT_PASSWORD: PASSWORD, MAILVERIFY_TOKEN_SECRET: 'the shared signing secret of the rate limit cluster test' },
  );
}

beforeAll(async () => {
  redis = testRedis('rate-limits-cluster');
  const schema = schemas.fresh();
  // One after the other: the first makes the schema.
  servers.push(await startApi(schema));
  servers.push(await startApi(schema));
});

afterAll(async () => {
  for (const server of servers.splice(0)) expect(await server.stop(), server.stderr()).toBe(0);
  await redis?.close();
});

const call = (server: ServeProcess, method: string, path: string, request: Call = {}): Promise<Answer> => callServer(server.origin, ROOT_AUTH, method, path, request);

describe('/v2.x: one bucket per client address for the whole cluster', () => {
  it('40 requests from one address alternating between the two servers: exactly 15 answered, the rest 429', async () => {
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await call(servers[i % 2]!, 'GET', '/v2.7/email-validations', { forwardedFor: ip })).status);
    expect(statuses.slice(0, 15)).toEqual(new Array(15).fill(200));
    expect(statuses.slice(15)).toEqual(new Array(25).fill(429));
  });

  it('another address has a bucket of its own on either server', async () => {
    const [first, second] = [freshIp(), freshIp()];
    for (let i = 0; i < 15; i++) await call(servers[i % 2]!, 'GET', '/v2.7/email-validations', { forwardedFor: first });
    expect((await call(servers[0]!, 'GET', '/v2.7/email-validations', { forwardedFor: first })).status).toBe(429);
    expect((await call(servers[1]!, 'GET', '/v2.7/email-validations', { forwardedFor: second })).status).toBe(200);
  });
});

describe('/v1.4: requests in flight counted for the whole cluster', () => {
  const held = (server: ServeProcess, ip: string): HeldSubmission => heldSubmission(server.origin, '/v1.4/email-validations', ROOT_AUTH, ip);

  it('3 held on one server and 2 on the other: the 6th is 429 on either; once they end, places are free', async () => {
    const ip = freshIp();
    const slow = [0, 1, 0, 1, 0].map((index) => held(servers[index]!, ip));
    const probe = async (server: ServeProcess): Promise<number> => (await call(server, 'GET', `/v1.4/email-validations/${JOB}`, { forwardedFor: ip })).status;
    try {
      // Probed only once all five are counted: a probe among them would take a place, and one of the five be refused.
      const [counter, counted] = [await redis.client(), `mailverify:${redis.prefix}:inflight:${ip}`];
      await until(async () => (await counter.get(counted)) === '5', 'five requests are in flight in the cluster');
      expect(await probe(servers[0]!)).toBe(429);
      expect(await probe(servers[1]!)).toBe(429);
      expect(await probe(servers[0]!)).toBe(429);
      for (const request of slow) request.finish();
      expect(await Promise.all(slow.map((request) => request.answer))).toEqual([202, 202, 202, 202, 202]);
      await until(async () => (await probe(servers[1]!)) === 404, 'the requests in flight have ended');
    } finally {
      for (const { request, answer } of slow) {
        answer.catch(() => {});
        request.destroy();
      }
    }
  });
});

describe('throttling in Redis: submissions count whatever the rules were when they were made', () => {
  it('rules emptied and set again, through either server: the submissions before and meanwhile count', async () => {
    const [rootIp, userIp] = [freshIp(), freshIp()];
    const [a, b] = servers as [ServeProcess, ServeProcess];
    const username = 'kept-in-redis';
    const password = 'the password of the kept-in-redis user';
    const created = await call(a, 'POST', '/v2.7/users', {
      forwardedFor: rootIp,
      json: { type: 'Standard', displayName: username, authentication: { password: { username, password } }, throttling: { rules: [{ limit: 2, period: 'Hour', scope: 'Global' }] } },
    });
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    const setRules = async (server: ServeProcess, rules: unknown[]): Promise<void> => {
      const patch = [{ op: 'replace', path: '/throttling/rules', value: rules }];
      const answer = await call(server, 'PATCH', `/v2.7/users/${id}`, { forwardedFor: rootIp, raw: JSON.stringify(patch), type: 'application/json-patch+json' });
      expect(answer.status, answer.text).toBe(200);
    };
    const submit = async (server: ServeProcess): Promise<number> =>
      (await call(server, 'POST', '/v2.7/email-validations', { auth: basic(username, password), forwardedFor: userIp, json: { entries: [{ inputData: 'someone@example.com' }] } })).status;
    expect([await submit(a), await submit(b), await submit(a)]).toEqual([202, 202, 429]);
    await setRules(b, []);
    expect(await submit(a)).toBe(202);
    // Three counted in the cluster: a limit of 4 lets one more through, on either server, then refuses on both.
    await setRules(a, [{ limit: 4, period: 'Hour', scope: 'Global' }]);
    expect([await submit(b), await submit(a), await submit(b)]).toEqual([202, 429, 429]);
  });
});
