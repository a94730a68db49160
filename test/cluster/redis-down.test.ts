// An API server of a cluster while its Redis is away (a Redis of the test's own, stopped and started again on its
// port): requests that need the shared counters (every sign-in, rate limits, throttling) are answered 503 with
// `Retry-After` and a problem document at once, never let through unchecked and never a 500 after the client's
// retries; once Redis is back they are answered as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { POSTGRES_URL, postgresSchemas } from './postgres.js';
import { startPrivateRedis, type PrivateRedis } from './private-services.js';
import { until } from './redis-helpers.js';

const ROOT_PASSWORD = 'redis down root password';
const AUTH = { authorization: `Basic ${Buffer.from(`root:${ROOT_PASSWORD}`).toString('base64')}` };
const schemas = postgresSchemas();
let redis: PrivateRedis;
let server: ServeProcess;

beforeAll(async () => {
  redis = await startPrivateRedis();
  const args = ['--store', POSTGRES_URL, '--store-schema', schemas.fresh(), '--queue', redis.url, '--workers', '0', '--checks', 'syntax', '--log-level', 'silent'];
  server = await startServe(args, { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD });
});

afterAll(async () => {
  await server?.stop();
  await redis?.stop();
});

const list = (): Promise<Response> => fetch(`${server.origin}/v2.7/email-validations`, { headers: AUTH });

describe('the shared counters unreachable', () => {
  it('sign-ins are 503 with Retry-After while Redis is away, and answered again once it is back', async () => {
    expect((await list()).status).toBe(200);
    await redis.stop();
    for (const answer of [
      await list(),
      await fetch(`${server.origin}/v2.7/auth/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'root', password: ROOT_PASSWORD }),
      }),
    ]) {
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('10');
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem: any = await answer.json();
      expect(problem).toMatchObject({ status: 503, type: '/problems/unavailable' });
      expect(JSON.stringify(problem)).not.toMatch(/redis:\/\/|ECONNREFUSED|stack/i);
    }
    redis = await startPrivateRedis(Number(new URL(redis.url).port));
    await until(async () => (await list()).status === 200, 'the server answers again');
  });
});
