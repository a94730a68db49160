// Completion callbacks end to end below the HTTP API: jobs on a real SQLite file (offline verification), the outbox,
// the delivery worker, and real receivers on loopback (HTTP and HTTPS) that fail, time out, redirect and accept.
// Time is a ManualClock moved forward by the tests: retries 10 s, 20 s... 1 h apart and the 24-hour limit pass at
// once. Only the receiver's 5-second answer time is real, lowered to 400 ms here (the `timeoutMs` option).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'libsql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newJob } from './new-job.js';
import { createVerifier, type Verifier } from '../../packages/mailverify/src/index.js';
import { createDefaultResolver, type Resolver } from '../../packages/mailverify/src/dns/resolver.js';
import { CallbackWorker, deliverCallback, retryGapMs, type CallbackWorkerOptions } from '../../packages/server/src/jobs/callbacks.js';
import { Jobs } from '../../packages/server/src/jobs/jobs.js';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import type { CallbackEvent, CallbackSettings, JobStore, NewJob } from '../../packages/server/src/jobs/types.js';
import { startDnsServer, type LabDnsServer } from '../lab/dns-server.js';
import { expectNoLeak } from '../lab/leaks.js';
import { startReceiver, type CallbackReceiver, type ScriptedAnswer } from './callback-receiver.js';
import { ManualClock } from './manual-clock.js';

const TIMEOUT_MS = 400;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SECOND = 1_000;
const HOUR = 3_600_000;

let dir: string;
let dns: LabDnsServer;
let resolver: Resolver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-callbacks-'));
  dns = await startDnsServer({
    'hooks.callback.test': { a: ['127.0.0.1'] },
    // A global address and a loopback one: every address is checked, so the name is refused as a whole.
    'mixed.callback.test': { a: ['93.184.215.14'], aaaa: ['::1'] },
  });
  resolver = createDefaultResolver({ servers: [dns.address], timeoutMs: 1_000 });
});

afterAll(async () => {
  await dns?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What a test opens, closed after it (a test that closes something itself does it through `restart`). */
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Fixture {
  store: JobStore;
  jobs: Jobs;
  worker: CallbackWorker;
  logged: string[];
  close(): Promise<void>;
}

/** Jobs and a delivery worker on the store at `path`, on `clock`. */
async function open(path: string, clock: ManualClock, options: Partial<CallbackWorkerOptions> = {}): Promise<Fixture> {
  const store = await openSqliteStore(path);
  const verifier: Verifier = createVerifier({ checks: 'syntax' });
  const logged: string[] = [];
  const worker = new CallbackWorker({
    store,
    resolver,
    allowPrivateAddresses: true,
    timeoutMs: TIMEOUT_MS,
    clock,
    log: (message) => logged.push(message),
    ...options,
  });
  const jobs = await Jobs.open({ store, verifier, clock, onCallbackQueued: () => worker.wake(), flushIntervalMs: 10 });
  worker.start();
  let closed = false;
  const fixture: Fixture = {
    store,
    jobs,
    worker,
    logged,
    async close() {
      if (closed) return;
      closed = true;
      await worker.close();
      await jobs.close();
      await verifier.close();
      await store.close();
    },
  };
  cleanups.push(() => fixture.close());
  return fixture;
}

async function receiver(clock: ManualClock, script: ScriptedAnswer[] = [], https = false): Promise<CallbackReceiver> {
  const started = await startReceiver(clock, { script, https });
  cleanups.push(() => started.close());
  return started;
}

function jobWithCallback(callback: Partial<CallbackSettings> & { url: string }, overrides: Partial<NewJob> = {}): NewJob {
  return newJob({ callback: { version: '1.1', skipServerCertificateValidation: false, ...callback }, ...overrides });
}

/** Submits a job with `callback`, waits until it completed and the worker made its first try; returns the job. */
async function completeJob(fixture: Fixture, callback: Partial<CallbackSettings> & { url: string }, overrides: Partial<NewJob> = {}) {
  const job = await fixture.jobs.submit(jobWithCallback(callback, overrides), [{ inputData: 'jo@example.org' }, { inputData: 'no-at-sign' }]);
  await fixture.jobs.waitForEnd(job.id, 10_000);
  await fixture.worker.settled();
  const done = await fixture.store.getJob(job.id);
  expect(done?.status).toBe('Completed');
  return done!;
}

/** Moves the clock to the next timer (the next try) and waits until the worker is done with it. */
async function nextTry(clock: ManualClock, worker: CallbackWorker): Promise<number> {
  const [due] = clock.timers();
  expect(due).toBeDefined();
  clock.advanceTo(due!);
  await worker.settled();
  return due!;
}

describe('the event', () => {
  it('version 1.1: type, version, createdOn (the completion), id and name; POSTed as JSON with an Idempotency-Key', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock);
    const fixture = await open(join(dir, 'v11.db'), clock);
    const job = await completeJob(fixture, { url: `${hook.origin}/hooks/done?source=mailverify` }, { name: 'spring list' });
    expect(hook.received).toHaveLength(1);
    const [request] = hook.received;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/hooks/done?source=mailverify');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['idempotency-key']).toMatch(UUID);
    expect(request!.body).toBe(
      JSON.stringify({ event: { type: 'email-validation.completed', version: '1.1', createdOn: job.completedOn, data: { id: job.id, name: 'spring list' } } }),
    );
    expect(job.completedOn).toBe(new Date(clock.now()).toISOString());
    // Delivered: the outbox is empty and no retry is waiting.
    expect(await fixture.store.nextCallbackAt()).toBeNull();
    expect(clock.timers()).toEqual([]);
  });

  it('version 1.1 without a job name leaves name out; version 1.0 has neither version nor name', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock);
    const fixture = await open(join(dir, 'versions.db'), clock);
    const unnamed = await completeJob(fixture, { url: hook.origin });
    const old = await completeJob(fixture, { url: hook.origin, version: '1.0' }, { name: 'ignored in 1.0' });
    expect(hook.received.map((request) => JSON.parse(request.body))).toEqual([
      { event: { type: 'email-validation.completed', version: '1.1', createdOn: unnamed.completedOn, data: { id: unnamed.id } } },
      { event: { type: 'email-validation.completed', createdOn: old.completedOn, data: { id: old.id } } },
    ]);
    // One key per event.
    expect(hook.received[0]!.headers['idempotency-key']).not.toBe(hook.received[1]!.headers['idempotency-key']);
  });

  it('a job deleted before it completes sends nothing', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock);
    const fixture = await open(join(dir, 'deleted-early.db'), clock);
    const job = await fixture.jobs.submit(jobWithCallback({ url: hook.origin }), Array.from({ length: 5_000 }, (_, i) => ({ inputData: `user${i}@example.org` })));
    await fixture.jobs.delete(job.id);
    await fixture.worker.settled();
    expect((await fixture.store.getJob(job.id))?.status).toBe('Deleted');
    expect(await fixture.store.nextCallbackAt()).toBeNull();
    expect(hook.received).toEqual([]);
  });
});

describe('retries', () => {
  it('500, no answer in time, a redirect (not followed), 500, then 200: tries 10, 20, 40, 80 s apart, the same key and body', async () => {
    await expectNoLeak(async () => {
      const clock = new ManualClock();
      const hook = await startReceiver(clock, {
        script: [{ status: 500 }, { status: 200, delayMs: TIMEOUT_MS + 400 }, { status: 302, location: '/moved' }, { status: 503 }, { status: 204 }],
      });
      const fixture = await open(join(dir, 'retries.db'), clock);
      try {
        const job = await completeJob(fixture, { url: `${hook.origin}/hook` });
        const first = hook.received[0]!.at;
        expect(first).toBe(Date.parse(job.completedOn!));
        // Not a moment early: a millisecond before the retry is due, nothing is sent.
        clock.advanceTo(first + 10 * SECOND - 1);
        await fixture.worker.settled();
        expect(hook.received).toHaveLength(1);
        for (let tries = 2; tries <= 5; tries++) {
          expect(clock.timers()).toEqual([hook.received.at(-1)!.at + retryGapMs(tries - 1)]);
          await nextTry(clock, fixture.worker);
          expect(hook.received).toHaveLength(tries);
        }
        expect(hook.received.map((request) => (request.at - first) / SECOND)).toEqual([0, 10, 30, 70, 150]);
        // The redirect was not followed, and every try carried the same key and body.
        expect(hook.received.map((request) => request.url)).toEqual(['/hook', '/hook', '/hook', '/hook', '/hook']);
        expect(new Set(hook.received.map((request) => request.headers['idempotency-key'])).size).toBe(1);
        expect(new Set(hook.received.map((request) => request.body)).size).toBe(1);
        // Delivered at the fifth try (a 204 is a 2xx): nothing more is due.
        expect(await fixture.store.nextCallbackAt()).toBeNull();
        expect(clock.timers()).toEqual([]);
        // Each failed try is logged with its number and reason.
        expect(fixture.logged).toEqual([1, 2, 3, 4].map((n) => expect.stringContaining(`callback of job ${job.id} failed (try ${n}): `)));
        expect(fixture.logged[0]).toContain('HTTP status 500; next try at ');
      } finally {
        await fixture.close();
        await hook.close();
      }
    });
  });

  it('gaps double up to 1 hour; no try starts later than 24 hours after the first; then the event is dropped and logged', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock, Array.from({ length: 100 }, () => ({ status: 500 })));
    const fixture = await open(join(dir, 'give-up.db'), clock);
    const job = await completeJob(fixture, { url: hook.origin });
    while (clock.timers().length > 0) await nextTry(clock, fixture.worker);
    const first = hook.received[0]!.at;
    const gaps = hook.received.slice(1).map((request, i) => (request.at - hook.received[i]!.at) / SECOND);
    expect(gaps).toEqual([10, 20, 40, 80, 160, 320, 640, 1280, 2560, ...new Array<number>(22).fill(3600)]);
    expect(hook.received.at(-1)!.at - first).toBeLessThanOrEqual(24 * HOUR);
    expect(hook.received.at(-1)!.at + HOUR - first).toBeGreaterThan(24 * HOUR);
    expect(await fixture.store.nextCallbackAt()).toBeNull();
    expect(fixture.logged.filter((line) => line.includes('failed (try'))).toHaveLength(31);
    expect(fixture.logged.at(-1)).toMatch(new RegExp(`callback of job ${job.id} dropped after 32 tries.*HTTP status 500`));
    expect(fixture.logged).toHaveLength(32);
  });

  it('a pending delivery survives a restart: the next try is due at the same time, with the same key and body', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock, [{ status: 500 }]);
    const path = join(dir, 'restart.db');
    const before = await open(path, clock);
    await completeJob(before, { url: hook.origin });
    const due = clock.timers()[0]!;
    await before.close();

    const after = await open(path, clock);
    await after.worker.settled();
    expect(hook.received).toHaveLength(1);
    expect(clock.timers()).toEqual([due]);
    await nextTry(clock, after.worker);
    expect(hook.received).toHaveLength(2);
    expect(hook.received[1]!.at).toBe(hook.received[0]!.at + 10 * SECOND);
    expect(hook.received[1]!.headers['idempotency-key']).toBe(hook.received[0]!.headers['idempotency-key']);
    expect(hook.received[1]!.body).toBe(hook.received[0]!.body);
    expect(await after.store.nextCallbackAt()).toBeNull();
  });

  it('an event queued but never tried before a restart is sent at the next start', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock);
    const path = join(dir, 'queued.db');
    // A worker that never starts: the process stopped right after the job completed.
    const before = await open(path, clock);
    await before.worker.close();
    const job = await before.jobs.submit(jobWithCallback({ url: hook.origin }), [{ inputData: 'jo@example.org' }]);
    await before.jobs.waitForEnd(job.id, 10_000);
    await before.close();
    expect(hook.received).toEqual([]);

    const after = await open(path, clock);
    await after.worker.settled();
    expect(hook.received).toHaveLength(1);
    expect(JSON.parse(hook.received[0]!.body).event.data.id).toBe(job.id);
  });

  it('a server down past the 24 hours drops the event at its next start without sending it', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock, [{ status: 500 }]);
    const path = join(dir, 'down.db');
    const before = await open(path, clock);
    const job = await completeJob(before, { url: hook.origin });
    await before.close();
    clock.advance(25 * HOUR);
    const after = await open(path, clock);
    await after.worker.settled();
    expect(hook.received).toHaveLength(1);
    expect(await after.store.nextCallbackAt()).toBeNull();
    expect(after.logged).toEqual([expect.stringContaining(`callback of job ${job.id} dropped`)]);
  });

  it('a pending delivery is dropped when its job is deleted', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock, [{ status: 500 }]);
    const fixture = await open(join(dir, 'delete.db'), clock);
    const job = await completeJob(fixture, { url: hook.origin });
    expect(await fixture.store.nextCallbackAt()).toBe(hook.received[0]!.at + 10 * SECOND);
    await fixture.jobs.delete(job.id);
    expect(await fixture.store.nextCallbackAt()).toBeNull();
    clock.advance(HOUR);
    await fixture.worker.settled();
    expect(hook.received).toHaveLength(1);
    expect(fixture.logged).toEqual([expect.stringContaining(`callback of job ${job.id} failed (try 1): HTTP status 500`)]);
  });
});

describe('HTTPS', () => {
  it('verifies the receiver\'s certificate: a self-signed one fails unless skipServerCertificateValidation', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock, [], true);
    const fixture = await open(join(dir, 'https.db'), clock);
    const url = `https://localhost:${hook.port}/tls`;
    const strict = await completeJob(fixture, { url });
    expect(hook.received).toEqual([]);
    expect(await fixture.store.nextCallbackAt()).toBe(Date.parse(strict.completedOn!) + 10 * SECOND);
    await fixture.jobs.delete(strict.id);

    await completeJob(fixture, { url, skipServerCertificateValidation: true });
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.url).toBe('/tls');
    expect(await fixture.store.nextCallbackAt()).toBeNull();
  });

  it('tells why a try failed: the certificate', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock, [], true);
    const event = anEvent(`https://localhost:${hook.port}/`);
    const outcome = await deliverCallback(event, { resolver, allowPrivateAddresses: true, timeoutMs: TIMEOUT_MS });
    expect(outcome).toMatchObject({ delivered: false, reason: expect.stringMatching(/self.signed/i) });
    expect(await deliverCallback({ ...event, skipServerCertificateValidation: true }, { resolver, allowPrivateAddresses: true })).toEqual({
      delivered: true,
      status: 200,
    });
  });
});

function anEvent(url: string): CallbackEvent {
  return { jobId: randomUUID(), url, skipServerCertificateValidation: false, idempotencyKey: randomUUID(), body: '{"event":{}}', dueAt: 0 };
}

describe('addresses', () => {
  it('resolves the host when sending and connects to the address it checked (the system resolver does not know the name)', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock);
    const outcome = await deliverCallback(anEvent(`http://hooks.callback.test:${hook.port}/pinned`), { resolver, allowPrivateAddresses: true });
    expect(outcome).toEqual({ delivered: true, status: 200 });
    expect(hook.received[0]!.headers.host).toBe(`hooks.callback.test:${hook.port}`);
  });

  it('refuses a host that resolves to a non-global address unless private addresses are allowed, at send time', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock);
    const options = { resolver, timeoutMs: TIMEOUT_MS };
    expect(await deliverCallback(anEvent(`http://hooks.callback.test:${hook.port}/`), options)).toEqual({
      delivered: false,
      reason: 'hooks.callback.test resolves to 127.0.0.1, not a global address',
    });
    expect(await deliverCallback(anEvent(`http://mixed.callback.test:${hook.port}/`), options)).toEqual({
      delivered: false,
      reason: 'mixed.callback.test resolves to ::1, not a global address',
    });
    for (const url of [`http://127.0.0.1:${hook.port}/`, `http://[::1]:${hook.port}/`, `http://localhost:${hook.port}/`, `http://a.localhost:${hook.port}/`]) {
      expect(await deliverCallback(anEvent(url), options)).toMatchObject({ delivered: false, reason: expect.stringMatching(/not a global address/) });
    }
    expect(hook.received).toEqual([]);
  });

  it('the worker refuses such a host as a failed try, and tries again later', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock);
    const fixture = await open(join(dir, 'private.db'), clock, { allowPrivateAddresses: false });
    const job = await completeJob(fixture, { url: `http://hooks.callback.test:${hook.port}/` });
    expect(hook.received).toEqual([]);
    expect(await fixture.store.nextCallbackAt()).toBe(Date.parse(job.completedOn!) + 10 * SECOND);
  });

  it('a name that does not resolve, a port nobody listens on, a timeout: failures with their reason', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock, [{ status: 200, delayMs: TIMEOUT_MS + 300 }]);
    const options = { resolver, allowPrivateAddresses: true, timeoutMs: TIMEOUT_MS };
    expect(await deliverCallback(anEvent('http://nowhere.callback.test/'), options)).toMatchObject({ delivered: false, reason: expect.stringMatching(/ENOTFOUND/) });
    const closed = await startReceiver(clock);
    await closed.close();
    expect(await deliverCallback(anEvent(`http://127.0.0.1:${closed.port}/`), options)).toMatchObject({
      delivered: false,
      reason: expect.stringMatching(/ECONNREFUSED/),
    });
    expect(await deliverCallback(anEvent(`${hook.origin}/`), options)).toEqual({ delivered: false, reason: `no answer within ${TIMEOUT_MS} ms` });
    expect(hook.received).toHaveLength(1);
  });
});

describe('the outbox', () => {
  it('a store that fails is logged, and the outbox is read again 10 s later', async () => {
    const clock = new ManualClock();
    const fixture = await open(join(dir, 'store-fails.db'), clock);
    await fixture.worker.settled();
    await fixture.store.close();
    fixture.worker.wake();
    await fixture.worker.settled();
    expect(fixture.logged).toEqual([expect.stringMatching(/callback delivery failed: .*closed/)]);
    expect(clock.timers()).toEqual([clock.now() + 10 * SECOND]);
    await nextTry(clock, fixture.worker);
    expect(fixture.logged).toHaveLength(2);
    await fixture.worker.close();
    expect(clock.timers()).toEqual([]);
  });

  it('a database of schema version 1 gains the outbox: its jobs stay, and a job completed after it sends its callback', async () => {
    const path = join(dir, 'migrate.db');
    const clock = new ManualClock();
    const hook = await receiver(clock);
    const old = await openSqliteStore(path);
    await old.createJob(jobWithCallback({ url: hook.origin }, { id: 'kept' }), [{ inputData: 'jo@example.org' }]);
    await old.close();
    // What version 1 looked like: no outbox table (and no users or credits, later versions').
    const db = new Database(path);
    db.exec('ALTER TABLE jobs DROP COLUMN overrides; DROP TABLE callback_outbox; DROP TABLE users; DROP TABLE credit_balance; DROP TABLE credit_days; DROP TABLE credit_reservations; PRAGMA user_version = 1');
    db.close();

    const fixture = await open(path, clock);
    await fixture.jobs.waitForEnd('kept', 10_000);
    await fixture.worker.settled();
    expect((await fixture.store.getJob('kept'))?.status).toBe('Completed');
    expect(JSON.parse(hook.received[0]!.body).event.data).toEqual({ id: 'kept' });
    const check = new Database(path);
    expect(check.pragma('user_version')).toEqual([{ user_version: 5 }]);
    check.close();
  });

  it('keeps an event with its job: a job completed twice queues one event; a job that expires drops it', async () => {
    const store = await openSqliteStore(join(dir, 'outbox.db'));
    cleanups.push(() => store.close());
    const job = await store.createJob(jobWithCallback({ url: 'https://hooks.example.com/' }), [{ inputData: 'jo@example.org' }]);
    const event: CallbackEvent = { ...anEvent('https://hooks.example.com/'), jobId: job.id, dueAt: 1_000 };
    await expect(store.completeJob(job.id, '2030-01-01T00:00:00.000Z', { ...event, jobId: 'another' })).rejects.toThrow(/another/);
    await store.completeJob(job.id, '2030-01-01T00:00:00.000Z', event);
    // A second completion (the job is Completed already) does not queue a second event.
    await store.completeJob(job.id, '2030-01-01T00:00:01.000Z', { ...event, idempotencyKey: randomUUID() });
    const [due] = await store.dueCallbacks(1_000, 10);
    expect(await store.dueCallbacks(1_000, 10)).toHaveLength(1);
    expect(due).toEqual({ ...event, id: due!.id, attempts: 0 });
    expect(await store.dueCallbacks(999, 10)).toEqual([]);
    await store.callbackAttempted(due!.id, 1_000, 11_000);
    expect(await store.dueCallbacks(11_000, 10)).toEqual([{ ...due, attempts: 1, firstAttemptAt: 1_000, dueAt: 11_000 }]);
    expect(await store.nextCallbackAt()).toBe(11_000);
    await store.endJob(job.id, 'Expired', '2030-01-02T00:00:00.000Z');
    expect(await store.nextCallbackAt()).toBeNull();
    // Removing an event that is gone is no error.
    await store.removeCallback(due!.id);
  });
});
