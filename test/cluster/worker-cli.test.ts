// `mailverify worker` from the built package: what it needs (--store and --queue), and a store or a queue it cannot
// reach, said clearly with the option's name and never with the password the URL holds.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI } from '../lab/serve-process.js';
import { POSTGRES_URL, postgresSchemas } from './postgres.js';
import { freePort } from './private-services.js';

const schemas = postgresSchemas();

function worker(args: string[]) {
  const run = spawnSync(process.execPath, [CLI, 'worker', ...args], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, MAILVERIFY_LOG_LEVEL: 'warn' } });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('mailverify worker', () => {
  it('needs a store and a queue: a usage error (exit 2) without them', () => {
    const run = worker([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('mailverify worker needs --store (a PostgreSQL URL) and --queue (a Redis URL)');
  });

  it('a queue it cannot reach: exit 1, naming --queue and the reason, not the password', async () => {
    const port = await freePort();
    const run = worker(['--store', POSTGRES_URL, '--store-schema', schemas.fresh(), '--queue', `redis://user:hunter2secret@127.0.0.1:${port}`]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the queue's Redis (--queue) cannot be reached: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(run.stderr).not.toContain('hunter2secret');
  });

  it('a store that refuses it: exit 1, naming --store and the reason, not the password', () => {
    const url = new URL(POSTGRES_URL);
    url.username = 'no_such_role';
    url.password = 'hunter2secret';
    const run = worker(['--store', url.href, '--queue', 'redis://127.0.0.1:6379']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the PostgreSQL store (--store) cannot be opened: role "no_such_role" does not exist');
    expect(run.stderr).not.toContain('hunter2secret');
  });
});
