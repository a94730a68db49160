// The sign-in attacks of test/server/sign-in-attacks.ts against a cluster of two API servers (`mailverify serve` from
// the built CLI) on one PostgreSQL store and one Redis, requests alternating between them: every limit holds across
// the cluster, not once per process.
import { afterAll, beforeAll } from 'vitest';
import { startServe, type ServeProcess } from '../lab/serve-process.js';
import { signInAttacks } from '../server/sign-in-attacks.js';
import { POSTGRES_URL, postgresSchemas } from './postgres.js';
import { REDIS_URL, testRedis } from './redis-helpers.js';

const ROOT_PASSWORD = 'cluster sign-in attacks root password';
const schemas = postgresSchemas();
const redis = testRedis('sign-in-attacks');
const servers: ServeProcess[] = [];

beforeAll(async () => {
  const args = [
    '--store', POSTGRES_URL,
    '--store-schema', schemas.fresh(),
    '--queue', REDIS_URL,
    '--cluster-prefix', redis.prefix,
    '--workers', '0',
    '--checks', 'syntax',
    '--log-level', 'silent',
  ];
  // One after the other: the first makes the schema.
  for (let i = 0; i < 2; i++) servers.push(await startServe(args, { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD }));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await redis.close();
});

signInAttacks(() => ({ origins: servers.map((server) => server.origin), rootPassword: ROOT_PASSWORD }));
