// Stopped jobs withdraw their work (decisions §11, §12), through a real listening server and through the real
// `mailverify serve` process, over a slow lab DNS server that counts the queries it receives: after a DELETE the
// deleted jobs send no more DNS queries and the job left completes; after SIGTERM the process stops within its 10 s,
// with no more than the queries it had under way reaching the lab after its listener closed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../packages/server/src/server/app.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { startServe } from '../lab/serve-process.js';

const PASSWORD = 'a withdraw password';
const headers = { authorization: `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' };

/** Each DNS answer comes after this long, so the jobs' queries queue up behind the cap on queries in flight. */
const DNS_DELAY_MS = 500;
const JOBS = 5;
const ENTRIES_PER_JOB = 400;
/** The built-in cap on DNS queries in flight (dns.maxQueriesInFlight). */
const QUERIES_IN_FLIGHT = 100;
/** A window in which the count of queries must not move (a behaviour check, not a timing one). */
const QUIET_WINDOW_MS = 500;

const domain = (job: number, i: number) => `j${job}-${i}-withdraw.com`;
const jobOfQuery = (name: string): number | null => {
  const match = /^j(\d+)-\d+-withdraw\.com$/.exec(name);
  return match === null ? null : Number(match[1]);
};

let lab: MailLab;
let dir: string;

beforeAll(async () => {
  const domains: Record<string, string[]> = {};
  for (let job = 0; job < JOBS; job++) for (let i = 0; i < ENTRIES_PER_JOB; i++) domains[domain(job, i)] = ['quick'];
  lab = await startMailLab({ engine: 'raw', dnsDelayMs: DNS_DELAY_MS, servers: { quick: { mailboxes: ['alice'] } }, domains });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-withdraw-'));
});

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const entriesOf = (job: number, count = ENTRIES_PER_JOB) => Array.from({ length: count }, (_, i) => ({ inputData: `alice@${domain(job, i)}` }));

async function call(origin: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${origin}${path}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function submit(origin: string, job: number, count?: number): Promise<string> {
  const answer = await call(origin, 'POST', '/v2.7/email-validations', { entries: entriesOf(job, count) });
  expect(answer.status).toBe(202);
  return answer.body.overview.id;
}

/** DNS queries the lab received for the given jobs' domains. */
const queriesOf = (jobs: readonly number[]) => lab.dns.queries.filter((q) => jobs.includes(jobOfQuery(q.name) ?? -1)).length;

describe('a deleted job', () => {
  it('sends no more DNS queries once deleted, and the job left running completes', async () => {
    lab.reset();
    const app = await createServer({
      dataDir: join(dir, 'deleted'),
      rootUsername: 'root',
      rootPassword: PASSWORD,
      // A deadline far above the lab's delay: no query is sent twice.
      verifier: labVerifierOptions(lab, { dns: { timeoutMs: 5000 } }),
    });
    try {
      const origin = await app.listen({ host: '127.0.0.1', port: 0 });
      // The jobs to delete first, so that their queries are queued ahead of the one left; that one is small.
      const deleted = [0, 1, 2, 3];
      const ids = [];
      for (const job of deleted) ids.push(await submit(origin, job));
      const kept = await submit(origin, 4, 20);
      while (queriesOf(deleted) < QUERIES_IN_FLIGHT) await sleep(10);

      for (const id of ids) expect((await call(origin, 'DELETE', `/v2.7/email-validations/${id}`)).status).toBe(200);
      // The lab runs in this process: the queries sent before the last deletion are counted once it has read them.
      await sleep(QUIET_WINDOW_MS);
      const afterDelete = queriesOf(deleted);
      expect(afterDelete).toBeLessThan((deleted.length * ENTRIES_PER_JOB) / 2);
      await sleep(QUIET_WINDOW_MS);
      expect(queriesOf(deleted)).toBe(afterDelete);

      const done = await call(origin, 'GET', `/v2.7/email-validations/${kept}?waitTime=30000`);
      expect(done.body.overview).toMatchObject({ status: 'Completed', noOfEntries: 20 });
      expect(done.body.entries.data.every((e: any) => e.status === 'Success')).toBe(true);
    } finally {
      await app.close();
    }
  });
});

describe('mailverify serve with running jobs', () => {
  it('stops within 10 s of SIGTERM (exit 0), with no DNS query but those under way reaching the lab after it stopped listening', async () => {
    lab.reset();
    let queriesAtStop: number | undefined;
    const served = await startServe(
      [
        '--data-dir', join(dir, 'terminated'), '--log-level', 'silent',
        '--dns-server', lab.dnsAddress, '--dns-timeout', '5000', '--smtp-port', String(lab.port), '--allow-private-addresses',
        '--helo-name', 'probe.mailverify-lab.com', '--mail-from', 'bounce@mailverify-lab.com',
      ],
      { MAILVERIFY_ROOT_PASSWORD: PASSWORD },
      (stderr) => {
        if (queriesAtStop === undefined && /stopping/.test(stderr)) queriesAtStop = queriesOf([0, 1, 2, 3, 4]);
      },
    );
    const { child, exited, origin } = served;
    try {
      for (let job = 0; job < JOBS; job++) await submit(origin, job);
      while (queriesOf([0, 1, 2, 3, 4]) < QUERIES_IN_FLIGHT) await sleep(10);

      const signalled = performance.now();
      child.kill('SIGTERM');
      const code = await Promise.race([exited, sleep(15_000).then(() => 'still running')]);
      const stoppedAfterMs = performance.now() - signalled;
      expect(code).toBe(0);
      expect(stoppedAfterMs).toBeLessThan(10_000);
      expect(queriesAtStop).toBeDefined();
      await sleep(QUIET_WINDOW_MS);
      expect(queriesOf([0, 1, 2, 3, 4]) - queriesAtStop!).toBeLessThanOrEqual(QUERIES_IN_FLIGHT);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    }
  }, 30_000);
});
