// What happens to a job after it completes, through a real listening server: its completion callback reaches a real
// receiver on loopback (retried across a restart, dropped with the job), and its retention ends in 410, then 404.
// Jobs run offline (checks: 'syntax'); the server's clock is a ManualClock the tests move forward, and a restart is a
// new server on the same data. The server is the one under test (test/server/target.ts): embedded on a SQLite file,
// or a cluster (its every process on the one clock; a restart stops them all and starts new ones).
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../packages/server/src/jobs/clock.js';
import { startReceiver, type CallbackReceiver, type ScriptedAnswer } from '../jobs/callback-receiver.js';
import { ManualClock } from '../jobs/manual-clock.js';
import { expectNoLeak } from '../lab/leaks.js';
import { serverData, startServerUnderTest, type ServerData, type ServerUnderTest } from './target.js';

const USER = 'root';
const PASSWORD = 'a lifecycle password';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const data = serverData('lifecycle');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Running {
  origin: string;
  store: ServerUnderTest['store'];
  close(): Promise<void>;
}

/** A listening server on `place`, on `clock`. */
async function start(place: ServerData, clock?: Clock): Promise<Running> {
  const server = await startServerUnderTest(place, {
    rootUsername: USER,
    rootPassword: PASSWORD,
    verifier: { checks: 'syntax', allowPrivateAddresses: true },
    callbackTimeoutMs: 400,
    ...(clock !== undefined && { clock }),
  });
  let closed = false;
  const running = {
    origin: server.origin,
    store: server.store,
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
    },
  };
  cleanups.push(() => running.close());
  return running;
}

async function receiver(clock: Clock, script: ScriptedAnswer[] = []): Promise<CallbackReceiver> {
  const started = await startReceiver(clock, { script });
  cleanups.push(() => started.close());
  return started;
}

async function call(origin: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: { authorization: BASIC, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Submits a job of two entries and waits for it to complete; returns its overview. */
async function submit(origin: string, settings: Record<string, unknown> = {}): Promise<any> {
  const answer = await call(origin, 'POST', '/v2.7/email-validations?waitTime=10000', {
    entries: [{ inputData: 'jo@example.org' }, { inputData: 'no-at-sign' }],
    ...settings,
  });
  expect(answer.status).toBe(200);
  return answer.body.overview;
}

/** Polls `check` on real time until it holds (the server works in the background). */
async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('completion callback', () => {
  it('is POSTed to the job\'s callback URL when the job completes (version 1.1 with the name)', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock);
    const server = await start(data.fresh(), clock);
    const overview = await submit(server.origin, { name: 'newsletter', callback: { url: `${hook.origin}/done` } });
    await hook.waitFor(1);
    expect(hook.received[0]!.url).toBe('/done');
    expect(JSON.parse(hook.received[0]!.body)).toEqual({
      event: { type: 'email-validation.completed', version: '1.1', createdOn: overview.completedOn, data: { id: overview.id, name: 'newsletter' } },
    });
  });

  it('a failed delivery is tried again after a restart, 10 s after the first try, with the same key and body', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock, [{ status: 500 }]);
    const place = data.fresh();
    const before = await start(place, clock);
    await submit(before.origin, { callback: { url: hook.origin, version: '1.0' } });
    await hook.waitFor(1);
    const firstTry = hook.received[0]!.at;
    await until(() => clock.timers().includes(firstTry + 10_000), 'the retry is scheduled');
    await before.close();

    await start(place, clock);
    clock.advanceTo(firstTry + 10_000 - 1);
    await until(() => clock.timers().includes(firstTry + 10_000), 'the new process has scheduled the retry');
    expect(hook.received).toHaveLength(1);
    clock.advanceTo(firstTry + 10_000);
    await hook.waitFor(2);
    expect(hook.received[1]!.at).toBe(firstTry + 10_000);
    expect(hook.received[1]!.headers['idempotency-key']).toBe(hook.received[0]!.headers['idempotency-key']);
    expect(hook.received[1]!.body).toBe(hook.received[0]!.body);
  });

  it('a pending delivery is dropped when its job is deleted', async () => {
    const clock = new ManualClock();
    const hook = await receiver(clock, [{ status: 500 }]);
    const server = await start(data.fresh(), clock);
    const { store } = server;
    const overview = await submit(server.origin, { callback: { url: hook.origin } });
    await hook.waitFor(1);
    await until(async () => (await store.nextCallbackAt()) === hook.received[0]!.at + 10_000, 'the retry is in the outbox');
    expect((await call(server.origin, 'DELETE', `/v2.7/email-validations/${overview.id}`)).status).toBe(200);
    expect(await store.nextCallbackAt()).toBeNull();
    clock.advance(60 * MINUTE);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hook.received).toHaveLength(1);
  });

  it('leaves no socket or timer behind when the server closes (real clock)', async () => {
    await expectNoLeak(async () => {
      const hook = await startReceiver({ now: () => Date.now(), setTimeout, clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout) });
      try {
        const server = await start(data.fresh());
        await submit(server.origin, { callback: { url: hook.origin } });
        await hook.waitFor(1);
        await server.close();
      } finally {
        await hook.close();
      }
    });
  });
});

describe('retention', () => {
  it('a job past its retention answers 410 within a minute, and 404 once its tombstone is removed 30 days later', async () => {
    const clock = new ManualClock();
    const server = await start(data.fresh(), clock);
    const overview = await submit(server.origin, { retention: '0:05:00' });
    expect(overview.retention).toBe('00:05:00');
    const path = `/v2.7/email-validations/${overview.id}`;
    clock.advance(5 * MINUTE - 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await call(server.origin, 'GET', path)).status).toBe(200);
    clock.advance(MINUTE + 1);
    await until(async () => (await call(server.origin, 'GET', path)).status === 410, 'the job expired');
    expect((await call(server.origin, 'GET', `${path}/entries`)).status).toBe(410);
    clock.advance(30 * DAY + MINUTE);
    await until(async () => (await call(server.origin, 'GET', path)).status === 404, 'the tombstone is removed');
  });

  it('through a restart: a job whose retention ended while the server was down answers 410 after it starts again', async () => {
    const clock = new ManualClock();
    const place = data.fresh();
    const before = await start(place, clock);
    const overview = await submit(before.origin, { retention: '0:05:00' });
    const path = `/v2.7/email-validations/${overview.id}`;
    await before.close();
    clock.advance(6 * MINUTE);

    const after = await start(place, clock);
    await until(async () => (await call(after.origin, 'GET', path)).status === 410, 'the job expired');
    const tombstones = await call(after.origin, 'GET', '/v2.7/email-validations?status=Expired');
    expect(tombstones.body.data.map((job: { id: string; status: string }) => [job.id, job.status])).toEqual([[overview.id, 'Expired']]);
  });
});
