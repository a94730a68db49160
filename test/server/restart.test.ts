// The real `mailverify serve` in a child process: killed with SIGKILL in the middle of a job, started again on the
// same data folder, it completes the job with every entry answered exactly once, without asking again for the
// addresses answered before the kill. SIGTERM stops it gracefully.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { CLI, startServe, type ServeProcess } from '../lab/serve-process.js';

const PASSWORD = 'restart-test-password';
const headers = { authorization: `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' };

let lab: MailLab;
let dir: string;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: {
      // Most addresses answered at once; three held by a server that answers the RCPT of alice after 10 s (those
      // pipelined behind it wait their turn), so the job can be killed with most of its results written and a few
      // out. 10 s, not less: on a loaded machine the 24 quick answers have taken over 3 s (hence --quality High,
      // whose command timeout is 50 s). Two connections at most (over all exchangers): with one, the held
      // exchanger could take it first and the quick answers would all come after the held ones.
      quick: { mailboxes: ['alice', 'bob'] },
      held: { mailboxes: ['alice', 'bob'], delayMs: { 'rcpt:alice': 10_000 } },
    },
    domains: {
      ...Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`d${i}-restart.com`, ['quick']])),
      'held-restart.com': ['held'],
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-restart-'));
});

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `mailverify serve` on the data folder, over the mail lab; resolves once it prints the origin it listens on. */
function start(dataDir: string, flags: string[] = []): Promise<ServeProcess> {
  return startServe(
    [
      '--data-dir', dataDir, '--log-level', 'silent',
      '--dns-server', lab.dnsAddress, '--smtp-port', String(lab.port), '--allow-private-addresses',
      '--helo-name', 'probe.mailverify-lab.com', '--mail-from', 'bounce@mailverify-lab.com', '--max-connections', '2',
      '--quality', 'High',
      ...flags,
    ],
    { MAILVERIFY_ROOT_PASSWORD: PASSWORD },
  );
}

async function json(url: string, init: RequestInit = {}): Promise<any> {
  const response = await fetch(url, { ...init, headers });
  return { status: response.status, body: response.status === 200 || response.status === 202 ? await response.json() : undefined };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mailverify serve', () => {
  // The held answer takes 10 s in each life of the server: more time than the suite's default 30 s on a loaded machine.
  it('survives SIGKILL mid-job: after a restart the job completes, every entry answered exactly once', { timeout: 90_000 }, async () => {
    const dataDir = join(dir, 'killed');
    const addresses = [
      ...Array.from({ length: 24 }, (_, i) => `${['alice', 'bob', 'nobody'][i % 3]}${i >= 3 ? i : ''}@d${i % 6}-restart.com`),
      'alice@held-restart.com',
      'bob@held-restart.com',
      'nobody@held-restart.com',
    ];
    const first = await start(dataDir);
    const submitted = await json(`${first.origin}/v2.7/email-validations`, {
      method: 'POST',
      body: JSON.stringify({ entries: addresses.map((inputData, i) => ({ inputData, custom: `#${i}` })) }),
    });
    expect(submitted.status).toBe(202);
    const id: string = submitted.body.overview.id;
    // Wait until some results are out, and past the time within which a result is written (200 ms), then kill.
    for (;;) {
      const overview = await json(`${first.origin}/v2.7/email-validations/${id}/overview`);
      // Completed before the kill would leave nothing to test: the held answers must still be out.
      expect(overview.body.status).toBe('InProgress');
      if (overview.body.progress.percentage >= 24 / 27) break;
      await sleep(50);
    }
    await sleep(400);
    first.child.kill('SIGKILL');
    await first.exited;

    const store = await openSqliteStore(join(dataDir, 'mailverify.db'));
    const before = await store.getJob(id);
    const answered = (await store.entries(id, { limit: 1000 })).data.map((e) => e.inputData);
    await store.close();
    expect(before!.status).toBe('InProgress');
    expect(before!.noOfCompleted).toBeGreaterThanOrEqual(24);
    expect(before!.noOfCompleted).toBeLessThan(27);
    expect(answered).toHaveLength(before!.noOfCompleted);

    lab.reset();
    const second = await start(dataDir);
    try {
      const done = await json(`${second.origin}/v2.7/email-validations/${id}?waitTime=30000`);
      expect(done.status).toBe(200);
      expect(done.body.overview).toMatchObject({ status: 'Completed', noOfEntries: 27 });
      const entries = done.body.entries.data;
      expect(entries.map((e: any) => e.index)).toEqual([...Array(27).keys()]);
      expect(entries.map((e: any) => e.custom)).toEqual(addresses.map((_, i) => `#${i}`));
      expect(entries.map((e: any) => e.status)).toEqual(addresses.map((a) => (a.startsWith('nobody') || /\d@/.test(a) ? 'MailboxDoesNotExist' : 'Success')));
      // The addresses answered before the kill were not asked again.
      const asked = [...lab.transcript('quick'), ...lab.transcript('held')].flat().filter((line) => line.startsWith('RCPT TO:'));
      for (const address of answered) expect(asked).not.toContain(`RCPT TO:<${address}>`);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  });

  it('SIGTERM mid-job: stops within 10 s, exit 0, and the job goes on at the next start', { timeout: 90_000 }, async () => {
    const dataDir = join(dir, 'terminated');
    const first = await start(dataDir);
    const submitted = await json(`${first.origin}/v2.7/email-validations`, {
      method: 'POST',
      body: JSON.stringify({ entries: ['alice@d0-restart.com', 'alice@held-restart.com', 'bob@held-restart.com'].map((inputData) => ({ inputData })) }),
    });
    const id: string = submitted.body.overview.id;
    await sleep(300);
    first.child.kill('SIGTERM');
    // Exit code 0: it stopped by itself (past 10 s it exits with 1).
    expect(await first.exited).toBe(0);
    const second = await start(dataDir);
    try {
      const done = await json(`${second.origin}/v2.7/email-validations/${id}?waitTime=30000`);
      expect(done.body.overview.status).toBe('Completed');
      expect(done.body.entries.data.every((e: any) => e.status === 'Success')).toBe(true);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});

describe('mailverify serve --metrics', () => {
  it('serves /metrics for the root credentials; without the flag there is none', async () => {
    const withMetrics = await start(join(dir, 'metrics'), ['--metrics']);
    const without = await start(join(dir, 'no-metrics'));
    try {
      const scraped = await fetch(`${withMetrics.origin}/metrics`, { headers });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toMatch(/^mailverify_jobs\{status="InProgress"\} 0$/m);
      expect((await fetch(`${withMetrics.origin}/metrics`)).status).toBe(401);
      expect((await fetch(`${without.origin}/metrics`, { headers })).status).toBe(404);
    } finally {
      withMetrics.child.kill('SIGTERM');
      without.child.kill('SIGTERM');
      await Promise.all([withMetrics.exited, without.exited]);
    }
  });
});

describe('mailverify serve, refusals', () => {
  it('does not start without a root password, nor with a bad flag: exit 2 and a one-line reason', async () => {
    const { spawnSync } = await import('node:child_process');
    const env = { ...process.env };
    delete env['MAILVERIFY_ROOT_PASSWORD'];
    const noPassword = spawnSync(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', join(dir, 'never')], { env, encoding: 'utf8' });
    expect(noPassword.status).toBe(2);
    expect(noPassword.stderr).toMatch(/^mailverify: MAILVERIFY_ROOT_PASSWORD is not set/);
    const badPort = spawnSync(process.execPath, [CLI, 'serve', '--port', '70000'], { env: { ...env, MAILVERIFY_ROOT_PASSWORD: 'x' }, encoding: 'utf8' });
    expect(badPort.status).toBe(2);
    expect(badPort.stderr).toMatch(/--port must be a TCP port number/);
  });

  it('names a misspelt flag given with a value, with the flag probably meant, and points to serve --help', async () => {
    const { spawnSync } = await import('node:child_process');
    const misspelt = spawnSync(process.execPath, [CLI, 'serve', '--prot', '8082'], { env: { ...process.env, MAILVERIFY_ROOT_PASSWORD: 'x' }, encoding: 'utf8' });
    expect(misspelt.status).toBe(2);
    expect(misspelt.stderr).toBe('mailverify: unknown option --prot (did you mean --port?)\nRun "mailverify serve --help" for usage.\n');
    // check's own help stays the command's.
    const check = spawnSync(process.execPath, [CLI, 'check', '--chekcs', 'dns'], { encoding: 'utf8' });
    expect(check.status).toBe(2);
    expect(check.stderr).toBe('mailverify: unknown option --chekcs (did you mean --checks?)\nRun "mailverify --help" for usage.\n');
  });
});
