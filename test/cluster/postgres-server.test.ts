// Two servers (as two processes of a cluster would be) on one PostgreSQL schema, through real HTTP: a user made on
// one signs in on the other, packs added on one are spent on the other, and concurrent submissions to both against a
// small balance never overdraw.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../packages/server/src/jobs/postgres-store.js';
import type { ServiceStore } from '../../packages/server/src/jobs/types.js';
import { createServer } from '../../packages/server/src/server/app.js';
import { POSTGRES_URL, postgresSchemas } from './postgres.js';

const schemas = postgresSchemas();
const ROOT_PASSWORD = 'postgres server test root password';
const basic = (username: string, password: string): string => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const ROOT_AUTH = basic('root', ROOT_PASSWORD);

interface Server {
  readonly app: FastifyInstance;
  readonly store: ServiceStore;
  readonly origin: string;
}
const servers: Server[] = [];

async function call(server: Server, method: string, path: string, json?: unknown, auth = ROOT_AUTH): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: auth };
  if (json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.origin}${path}`, { method, headers, ...(json !== undefined && { body: JSON.stringify(json) }) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

beforeAll(async () => {
  const schema = schemas.fresh();
  // One after the other: the first start makes the root account's id and the token secret, the second reads them.
  for (let i = 0; i < 2; i++) {
    const store = await openPostgresStore({ connectionString: POSTGRES_URL, schema, max: 6 });
    const app = await createServer({ store, rootUsername: 'root', rootPassword: ROOT_PASSWORD, verifier: { checks: 'syntax' }, credits: {} });
    servers.push({ app, store, origin: await app.listen({ host: '127.0.0.1', port: 0 }) });
  }
});

afterAll(async () => {
  for (const server of servers) {
    await server.app.close();
    await server.store.close();
  }
});

describe('two servers on one PostgreSQL schema', () => {
  it('share users: one made on the first signs in on the second', async () => {
    const created = await call(servers[0]!, 'POST', '/v2.7/users', {
      type: 'Standard',
      displayName: 'Shared',
      authentication: { password: { username: 'Shared', password: 'the password of shared' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const again = await call(servers[1]!, 'POST', '/v2.7/users', {
      type: 'Standard',
      displayName: 'Other',
      authentication: { password: { username: 'shared', password: 'another password' } },
    });
    // Taken case-insensitively, on the other server's books.
    expect(again.status).toBe(400);
    expect(JSON.stringify(again.body)).toMatch(/is taken/);
    // Signed in on the second server: its own (empty) job list; a wrong password is refused there too.
    const listed = await call(servers[1]!, 'GET', '/v2.7/email-validations', undefined, basic('shared', 'the password of shared'));
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.data).toEqual([]);
    expect((await call(servers[1]!, 'GET', '/v2.7/email-validations', undefined, basic('shared', 'wrong'))).status).toBe(401);
    expect((await call(servers[1]!, 'GET', `/v2.7/users/${created.body.id}`)).body.displayName).toBe('Shared');
  });

  it('share credits: of 40 submissions of 3 entries to both servers at once against 10 credits, exactly 3 are accepted', async () => {
    expect((await call(servers[0]!, 'POST', '/v2.7/credits/packs', { credits: 10 })).status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(servers[i % 2]!, 'POST', '/v2.7/email-validations?waitTime=10000', {
          entries: Array.from({ length: 3 }, (_, j) => ({ inputData: `c${i}-${j}@example.com` })),
        }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(3);
    const refused = answers.filter((answer) => answer.status === 402);
    expect(refused).toHaveLength(37);
    for (const answer of refused) expect(answer.body.type).toBe('/problems/insufficient-credit');
    // The accepted jobs completed (syntax checks: at once) and were settled: 9 consumed, on either server's books.
    for (const server of servers) expect((await call(server, 'GET', '/v2.7/credits/balance')).body).toMatchObject({ creditPacks: 1 });
    expect((await call(servers[1]!, 'GET', '/v2.7/credits/daily-usage')).body.data).toEqual([{ date: expect.any(String), freeCredits: 0, creditPacks: 9 }]);
  });
});
