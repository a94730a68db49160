// The real `mailverify serve` with its data folder on a small tmpfs that a ballast file fills while jobs run: their
// results wait and are written once the ballast is gone, and the jobs complete without a restart, every entry
// stored exactly once. While the disk is full, submissions get 507 and a DELETE 503 (problem documents with
// Retry-After, nothing changed), /ready says the store cannot be written, and the log says so once (a warning),
// then once that writes succeed again (info).
//
// Mounting a tmpfs needs root (CI runs the tests as root). Where it cannot be mounted, the tests fail and say why.
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fillDisk, mountTmpfs, readDatabase, tmpfsForTests, unmountTmpfs } from '../lab/full-disk.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { startServe, type ServeProcess } from '../lab/serve-process.js';

const PASSWORD = 'disk-full-test-password';
const headers = { authorization: `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' };
const JOBS = 6;
const ENTRIES = 30;
const DOMAINS = 5;

let lab: MailLab;
let dir: string;
let mountPoint: string;
let mounted = false;
let server: ServeProcess | undefined;

const tmpfs = tmpfsForTests('the full-disk tests of mailverify serve');

beforeAll(async () => {
  if (!tmpfs.available) return;
  // Every DNS answer comes after 2 s: the jobs are created, then the disk is filled, then their results come.
  lab = await startMailLab({
    engine: 'raw',
    dnsDelayMs: 2000,
    servers: { quick: { mailboxes: ['alice'] } },
    domains: Object.fromEntries(Array.from({ length: DOMAINS }, (_, i) => [`d${i}-full.com`, ['quick']])),
  });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-disk-full-'));
  mountPoint = join(dir, 'data');
  mountTmpfs(mountPoint, '8M');
  mounted = true;
});

afterAll(async () => {
  await lab?.close();
  if (mounted) unmountTmpfs(mountPoint);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

// A test that failed with the disk full leaves no server and room for the next one.
afterEach(async () => {
  if (server !== undefined && server.child.exitCode === null) await server.stop();
  if (mounted) rmSync(join(mountPoint, 'ballast'), { force: true });
});

/** What the database holds about the jobs (read in a child process). */
function databaseFacts(file: string, ids: readonly string[]): {
  jobs: Array<{ status: string; completed: number; results: number }>;
  unfinished: number;
  integrity: string;
} {
  return readDatabase(
    file,
    `const jobs = args.map((id) => {
      const job = db.prepare('SELECT sequence, status, no_of_completed FROM jobs WHERE id = ?').get([id]);
      const { n } = db.prepare('SELECT COUNT(*) AS n FROM entries WHERE job = ? AND result IS NOT NULL').get([job.sequence]);
      return { status: job.status, completed: job.no_of_completed, results: n };
    });
    const { n: unfinished } = db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE status NOT IN ('Completed', 'Deleted')").get();
    const [{ integrity_check: integrity }] = db.pragma('integrity_check');
    answer({ jobs, unfinished, integrity });`,
    ids,
  );
}

/** The JSON log lines the server wrote on standard error. */
function logLines(serve: ServeProcess): Array<{ level: number; msg: string }> {
  return serve
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });
}

/** Resolves once the server's log has a line matching `pattern`; fails, with the log's end, if none comes in 20 s. */
async function logged(serve: ServeProcess, pattern: RegExp): Promise<void> {
  for (const giveUp = Date.now() + 20_000; !logLines(serve).some((line) => pattern.test(line.msg)); ) {
    if (Date.now() > giveUp) throw new Error(`the log never said ${pattern}; it ends with:\n${serve.stderr().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function expectProblem(response: Response, status: number): Promise<any> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem: any = await response.json();
  expect(problem).toMatchObject({ status, type: '/problems/insufficient-storage' });
  return problem;
}

const FULL_WARNING = /the disk holding the data is full/;
const WRITABLE_AGAIN = /the data can be written again/;

tmpfs.describe('mailverify serve on a full disk', () => {
  it('keeps the results of running jobs until the disk has room, then completes them without a restart', async () => {
    const dataDir = join(mountPoint, 'running');
    server = await startServe(
      [
        '--data-dir', dataDir, '--log-level', 'info', '--checks', 'dns',
        '--dns-server', lab.dnsAddress, '--allow-private-addresses',
      ],
      { MAILVERIFY_ROOT_PASSWORD: PASSWORD },
    );
    const { origin } = server;
    expect((await fetch(`${origin}/ready`)).status).toBe(200);
    const addresses = (job: number) => Array.from({ length: ENTRIES }, (_, i) => `alice${job}x${i}@d${i % DOMAINS}-full.com`);
    const ids: string[] = [];
    for (let job = 0; job < JOBS; job++) {
      const submitted = await fetch(`${origin}/v2.7/email-validations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ entries: addresses(job).map((inputData, i) => ({ inputData, custom: `#${i}` })) }),
      });
      expect(submitted.status).toBe(202);
      ids.push(((await submitted.json()) as any).overview.id);
    }

    const ballast = join(mountPoint, 'ballast');
    fillDisk(ballast);
    // The results come, and their writes are refused: said once in the log, as a warning.
    await logged(server, FULL_WARNING);

    // While the disk is full: a submission is refused with 507 and Retry-After, nothing of it stored.
    const refused = await fetch(`${origin}/v2.7/email-validations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ entries: [{ inputData: 'alice@d0-full.com' }] }),
    });
    await expectProblem(refused, 507);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const refusedLegacy = await fetch(`${origin}/v1.4/email-validations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ entries: [{ inputData: 'alice@d0-full.com' }] }),
    });
    await expectProblem(refusedLegacy, 507);
    // A DELETE that cannot be stored: 503 with Retry-After, and the job is as it was.
    const notDeleted = await fetch(`${origin}/v2.7/email-validations/${ids[0]}`, { method: 'DELETE', headers });
    await expectProblem(notDeleted, 503);
    expect(Number(notDeleted.headers.get('retry-after'))).toBeGreaterThan(0);
    const stillThere = await fetch(`${origin}/v2.7/email-validations/${ids[0]}/overview`, { headers });
    expect(stillThere.status).toBe(202);
    expect(((await stillThere.json()) as any).status).toBe('InProgress');
    // Readiness says the store cannot be written; liveness stays (a restart would not make room).
    await expectProblem(await fetch(`${origin}/ready`), 503);
    expect((await fetch(`${origin}/health`)).status).toBe(200);
    // The jobs wait: none has completed.
    for (const id of ids) {
      const overview = await fetch(`${origin}/v2.7/email-validations/${id}/overview`, { headers });
      expect(overview.status).toBe(202);
    }

    // Room again: the same process completes every job.
    unlinkSync(ballast);
    for (const id of ids) {
      const done = await fetch(`${origin}/v2.7/email-validations/${id}?waitTime=30000`, { headers });
      expect(done.status).toBe(200);
      const body: any = await done.json();
      expect(body.overview).toMatchObject({ status: 'Completed', noOfEntries: ENTRIES });
      expect(body.entries.data.map((entry: any) => entry.index)).toEqual([...Array(ENTRIES).keys()]);
      expect(body.entries.data.map((entry: any) => entry.custom)).toEqual(addresses(0).map((_, i) => `#${i}`));
    }
    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${origin}/ready`)).status).toBe(200);
    await logged(server, WRITABLE_AGAIN);
    const lines = logLines(server);
    expect(lines.filter((line) => FULL_WARNING.test(line.msg) && line.level === 40)).toHaveLength(1);
    expect(lines.filter((line) => WRITABLE_AGAIN.test(line.msg) && line.level === 30).length).toBeGreaterThanOrEqual(1);
    // No job failed, nothing answered 500.
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);

    // Only the jobs submitted before the disk filled exist.
    const listed = await fetch(`${origin}/v2.7/email-validations?limit=100`, { headers });
    expect(((await listed.json()) as any).data.map((job: any) => job.id).sort()).toEqual([...ids].sort());
    // The deletion refused earlier is accepted now.
    expect((await fetch(`${origin}/v2.7/email-validations/${ids[0]}`, { method: 'DELETE', headers })).status).toBe(200);
    expect((await fetch(`${origin}/v2.7/email-validations/${ids[0]}`, { headers })).status).toBe(410);
    expect(await server.stop()).toBe(0);

    // In the database: each entry of the remaining jobs has one result, counted once; the file is whole.
    const stored = databaseFacts(join(dataDir, 'mailverify.db'), ids.slice(1));
    expect(stored.jobs).toEqual(ids.slice(1).map(() => ({ status: 'Completed', completed: ENTRIES, results: ENTRIES })));
    expect(stored.unfinished).toBe(0);
    expect(stored.integrity).toBe('ok');
  }, 60_000);

  it('stops on SIGTERM while the disk is full (exit 0); the job completes at the next start, each entry once', async () => {
    const dataDir = join(mountPoint, 'stopped');
    const start = () =>
      startServe(
        ['--data-dir', dataDir, '--log-level', 'info', '--checks', 'dns', '--dns-server', lab.dnsAddress, '--allow-private-addresses'],
        { MAILVERIFY_ROOT_PASSWORD: PASSWORD },
      );
    const first = await start();
    server = first;
    const inputs = Array.from({ length: ENTRIES }, (_, i) => `bob${i}@d${i % DOMAINS}-full.com`);
    const submitted = await fetch(`${first.origin}/v2.7/email-validations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ entries: inputs.map((inputData) => ({ inputData })) }),
    });
    expect(submitted.status).toBe(202);
    const id: string = ((await submitted.json()) as any).overview.id;
    const ballast = join(mountPoint, 'ballast');
    fillDisk(ballast);
    await logged(first, FULL_WARNING);
    // Exit code 0: it stopped by itself, its results not written dropped as a kill would drop them.
    expect(await first.stop()).toBe(0);
    expect(logLines(first).filter((line) => line.level >= 50)).toEqual([]);

    unlinkSync(ballast);
    const second = await start();
    server = second;
    const done = await fetch(`${second.origin}/v2.7/email-validations/${id}?waitTime=30000`, { headers });
    expect(done.status).toBe(200);
    const body: any = await done.json();
    expect(body.overview).toMatchObject({ status: 'Completed', noOfEntries: ENTRIES });
    expect(body.entries.data.map((entry: any) => entry.inputData)).toEqual(inputs);
    expect(await second.stop()).toBe(0);
    const stored = databaseFacts(join(dataDir, 'mailverify.db'), [id]);
    expect(stored).toEqual({ jobs: [{ status: 'Completed', completed: ENTRIES, results: ENTRIES }], unfinished: 0, integrity: 'ok' });
  }, 60_000);
});
