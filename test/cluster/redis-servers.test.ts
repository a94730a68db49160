// Two listening servers sharing one store (one SQLite data directory here, standing in for the cluster's PostgreSQL
// store) and their counters in one Redis: a user's throttling rules and its TOTP codes hold across both servers, as
// they must behind a load balancer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from '../../packages/server/src/cluster/redis.js';
import { redisSharedCounters } from '../../packages/server/src/server/shared-counters.js';
import { expectTooManyRequests, start, type Running } from '../server/http-client.js';
import { testRedis, type TestRedis } from './redis-helpers.js';

let test: TestRedis;
let dir: string;
let servers: Running[];

beforeAll(async () => {
  test = testRedis('servers');
  dir = mkdtempSync(join(tmpdir(), 'mailverify-redis-servers-'));
  const clients: Redis[] = [await test.client(), await test.client()];
  servers = [];
  // One after the other: the first creates the data directory's database.
  for (const redis of clients) {
    servers.push(
      await start({ dataDir: dir, tokenSecret: 'the shared signing secret of the cluster tests', sharedCounters: redisSharedCounters({ redis, prefix: test.prefix }) }),
    );
  }
});

afterAll(async () => {
  for (const server of servers ?? []) await server.close();
  await test?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const SUBMISSION = { entries: [{ inputData: 'jane@example.org' }] };

describe('two servers, one Redis', () => {
  it("a user's throttling rule counts submissions to both: 3 per minute, the fourth is 429 on either", async () => {
    const [a, b] = servers as [Running, Running];
    const user = await a.createUser({ throttling: { rules: [{ limit: 3, period: 'Minute', scope: 'Global' }] } });
    for (const server of [a, b, a]) expect((await server.call('POST', '/v2.7/email-validations', { auth: user.auth, json: SUBMISSION })).status).toBeLessThan(300);
    expectTooManyRequests(await b.call('POST', '/v2.7/email-validations', { auth: user.auth, json: SUBMISSION }));
    expectTooManyRequests(await a.call('POST', '/v2.7/email-validations', { auth: user.auth, json: SUBMISSION }));
  });

  it('a TOTP code sent to both at once, each with a first-factor token of its own, gives one full token', async () => {
    const [a, b] = servers as [Running, Running];
    const username = 'totp-user';
    const password = 'the password of the TOTP user';
    const created = await a.call('POST', '/v2.7/users', {
      json: { type: 'Standard', displayName: 'TOTP user', authentication: { password: { username, password } } },
    });
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    const enrolment = await a.call('POST', `/v2.7/users/${id}/authentication/totp`);
    expect(enrolment.status, enrolment.text).toBe(200);
    const totp = new TOTP({ secret: enrolment.body.secret as string });
    const confirmation = await b.call('POST', `/v2.7/users/${id}/authentication/totp/confirmations`, {
      json: { passCode: totp.generate({ timestamp: Date.now() - 30_000 }) },
    });
    expect(confirmation.status, confirmation.text).toBe(200);
    const firstFactor = async (server: Running): Promise<string> => {
      const answer = await server.call('POST', '/v2.7/auth/tokens', { auth: null, json: { username, password } });
      expect(answer.status, answer.text).toBe(200);
      return answer.body.accessToken as string;
    };
    const tokens = [await firstFactor(a), await firstFactor(b)];
    // The code of the next step: the current one may be used up by the confirmation if the step turned meanwhile.
    const passCode = totp.generate({ timestamp: Date.now() + 30_000 });
    const answers = await Promise.all(
      [a, b].map((server, i) => server.call('POST', '/v2.7/auth/totp/verifications', { auth: `Bearer ${tokens[i]}`, json: { passCode } })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 403]);
    // The wrong-code count of a token is the cluster's: four more wrong codes through the other server revoke it.
    const loser = answers.findIndex((answer) => answer.status === 403);
    const near = new Set([-2, -1, 0, 1, 2].map((steps) => totp.generate({ timestamp: Date.now() + steps * 30_000 })));
    const wrong = ['000000', '111111', '222222', '333333'].find((code) => !near.has(code))!;
    const other = servers[1 - loser]!;
    for (let i = 0; i < 3; i++) expect((await other.call('POST', '/v2.7/auth/totp/verifications', { auth: `Bearer ${tokens[loser]}`, json: { passCode: wrong } })).status).toBe(403);
    const fifth = await servers[loser]!.call('POST', '/v2.7/auth/totp/verifications', { auth: `Bearer ${tokens[loser]}`, json: { passCode: wrong } });
    expect(fifth.status).toBe(403);
    expect((await other.call('POST', '/v2.7/auth/totp/verifications', { auth: `Bearer ${tokens[loser]}`, json: { passCode } })).status).toBe(401);
  });
});
