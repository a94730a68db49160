// Request rate limits per client IP through real listening servers: off by default; with them, a token bucket of 6
// requests per second and 15 at most under /v2.x (on a clock the tests move), counted before authentication, per
// client IP (behind a trusted proxy, by X-Forwarded-For), not for probes, metrics, the OpenAPI document or CORS
// preflights; at most 5
// requests in flight per IP under /v1.4, held open by a body sent slowly, released when an answer ends or a client
// hangs up; and, under load from another process (autocannon), a client at a normal rate from another IP that is never
// refused while the hammering one is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autocannon } from '../../bench/server/autocannon.js';
import { ManualClock } from '../jobs/manual-clock.js';
import { heldSubmission, type HeldSubmission } from './http-calls.js';
import { expectTooManyRequests, ROOT_AUTH, start, type Answer, type Running } from './http-client.js';

let server: Running;
let clock: ManualClock;
/** Each test comes from addresses of its own. */
let ips = 0;
const freshIp = (): string => `203.0.113.${++ips}`;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  server = await start({ clock, trustProxy: '127.0.0.1', rateLimits: true, metrics: true });
});

afterAll(async () => {
  await server?.close();
});

/** `count` requests one after the other, unauthenticated unless `auth` is given. */
async function burst(count: number, ip: string, path = '/v2.7/email-validations', auth: string | null = null): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < count; i++) answers.push(await server.call('GET', path, { auth, forwardedFor: ip }));
  return answers;
}

const statuses = (answers: readonly Answer[]): number[] => answers.map((answer) => answer.status);

/** Waits (up to 10 s) for `condition` to hold, asking again every 20 ms. */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting until ${what}`);
}

describe('rate limits off (the default)', () => {
  it('no request is refused for its rate', async () => {
    const plain = await start({ trustProxy: '127.0.0.1' });
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, () => plain.call('GET', '/v2.7/email-validations', { auth: null, forwardedFor: '192.0.2.1' })));
      expect(new Set(statuses(answers))).toEqual(new Set([401]));
    } finally {
      await plain.close();
    }
  });
});

describe('/v2.x: a token bucket per client IP', () => {
  it('a burst of 15 passes, the 16th is 429 with Retry-After and a problem document; unauthenticated requests count', async () => {
    const ip = freshIp();
    expect(statuses(await burst(15, ip))).toEqual(new Array(15).fill(401));
    expect(expectTooManyRequests((await burst(1, ip))[0]!)).toBe(1);
    // Refused before authentication: good credentials are refused the same.
    expectTooManyRequests((await burst(1, ip, '/v2.7/email-validations', ROOT_AUTH))[0]!);
  });

  it('refills at 6 tokens per second, up to 15', async () => {
    const ip = freshIp();
    await burst(15, ip);
    expectTooManyRequests((await burst(1, ip))[0]!);
    clock.advance(Math.ceil(1000 / 6));
    expect(statuses(await burst(2, ip, '/v2.7/email-validations', ROOT_AUTH))).toEqual([200, 429]);
    clock.advance(1000);
    expect(statuses(await burst(7, ip, '/v2.7/email-validations', ROOT_AUTH))).toEqual([200, 200, 200, 200, 200, 200, 429]);
    // Idle long enough, the bucket is full again, and no fuller.
    clock.advance(60_000);
    expect(statuses(await burst(16, ip)).filter((status) => status === 429)).toHaveLength(1);
  });

  it('every request under /v2.x counts, in one bucket per IP: /v2.6, /v2.7, unknown paths, sign-in', async () => {
    const ip = freshIp();
    const paths = ['/v2.6/email-validations', '/v2.7/users', '/v2.7/no-such-thing', '/v2.6/email-validations/00000000-0000-4000-8000-000000000000'];
    for (let i = 0; i < 12; i++) expect((await server.call('GET', paths[i % paths.length]!, { forwardedFor: ip })).status).not.toBe(429);
    for (let i = 0; i < 3; i++) {
      expect((await server.call('POST', '/v2.7/auth/tokens', { auth: null, forwardedFor: ip, json: { username: 'root', password: 'wrong' } })).status).toBe(401);
    }
    expectTooManyRequests(await server.call('POST', '/v2.7/auth/tokens', { auth: null, forwardedFor: ip, json: { username: 'root', password: 'wrong' } }));
    expectTooManyRequests(await server.call('GET', '/v2.6/email-validations', { forwardedFor: ip }));
  });

  it('per client IP: another address has a bucket of its own', async () => {
    const [first, second] = [freshIp(), freshIp()];
    await burst(15, first);
    expectTooManyRequests((await burst(1, first))[0]!);
    expect(statuses(await burst(15, second))).toEqual(new Array(15).fill(401));
    expectTooManyRequests((await burst(1, second))[0]!);
    // IPv6 clients too.
    expect((await burst(1, '2001:db8::7'))[0]!.status).toBe(401);
  });

  it('probes, metrics and the OpenAPI document are not counted, nor do they go through', async () => {
    const ip = freshIp();
    await burst(16, ip);
    expectTooManyRequests((await burst(1, ip))[0]!);
    for (const path of ['/health', '/ready', '/openapi.json', '/metrics']) {
      const answer = await server.call('GET', path, { forwardedFor: ip });
      expect(answer.status, `${path}: ${answer.text}`).toBe(200);
    }
  });

  it("CORS preflights are answered before the limits and not counted; a browser can read a 429 and its Retry-After", async () => {
    const ip = freshIp();
    const origin = 'https://shop.example.com';
    for (let i = 0; i < 20; i++) {
      const preflight = await fetch(`${server.origin}/v2.7/email-validations`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'x-forwarded-for': ip },
      });
      expect(preflight.status).toBe(204);
    }
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => fetch(`${server.origin}/v2.7/email-validations`, { headers: { origin, 'x-forwarded-for': ip } })),
    );
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.headers.get('access-control-allow-origin')).not.toBeNull();
    expect(refused[0]!.headers.get('access-control-expose-headers')).toMatch(/Retry-After/);
    await Promise.all(answers.map((answer) => answer.arrayBuffer()));
  });

  it('the rate and the burst are options: Retry-After is the whole seconds until a token is free', async () => {
    const slow = await start({ clock, trustProxy: '127.0.0.1', rateLimits: { perSecond: 0.25, burst: 2 } });
    try {
      const ip = freshIp();
      for (let i = 0; i < 2; i++) expect((await slow.call('GET', '/v2.7/email-validations', { forwardedFor: ip })).status).toBe(200);
      expect(expectTooManyRequests(await slow.call('GET', '/v2.7/email-validations', { forwardedFor: ip }))).toBe(4);
      clock.advance(2500);
      expect(expectTooManyRequests(await slow.call('GET', '/v2.7/email-validations', { forwardedFor: ip }))).toBe(2);
      clock.advance(1500);
      expect((await slow.call('GET', '/v2.7/email-validations', { forwardedFor: ip })).status).toBe(200);
    } finally {
      await slow.close();
    }
  });
});

describe('/v1.4: requests in flight per client IP', () => {
  const held = (ip: string): HeldSubmission => heldSubmission(server.origin, '/v1.4/email-validations', ROOT_AUTH, ip);

  const probe = (ip: string): Promise<Answer> => server.call('GET', '/v1.4/email-validations/00000000-0000-4000-8000-000000000000', { forwardedFor: ip });

  it('5 in flight: the 6th is 429; one answered or one aborted frees a place; 2.x and other IPs are not held', async () => {
    const ip = freshIp();
    const slow = Array.from({ length: 5 }, () => held(ip));
    // Their headers are read at once; the 6th is refused from then on.
    await until(async () => (await probe(ip)).status === 429, 'five requests are in flight');
    expectTooManyRequests(await probe(ip));
    expect((await probe(freshIp())).status).toBe(404);
    expect((await server.call('GET', '/v2.7/email-validations', { forwardedFor: ip })).status).toBe(200);

    // One answered: a place is free (taken by the probe, which ends at once).
    slow[0]!.finish();
    expect(await slow[0]!.answer).toBe(202);
    expect((await probe(ip)).status).toBe(404);
    // Another held in its place: full again.
    slow[0] = held(ip);
    await until(async () => (await probe(ip)).status === 429, 'five requests are in flight again');

    // One aborted by its client: its place is free too.
    const aborted = slow.pop()!;
    aborted.answer.catch(() => {});
    aborted.request.destroy();
    await until(async () => (await probe(ip)).status === 404, 'the aborted request is no longer in flight');

    for (const request of slow) request.finish();
    expect(await Promise.all(slow.map((request) => request.answer))).toEqual([202, 202, 202, 202]);
    // None left in flight: five fit again.
    const probes = await Promise.all(Array.from({ length: 5 }, () => probe(ip)));
    expect(statuses(probes)).toEqual([404, 404, 404, 404, 404]);
  });
});

describe('under load from another process', () => {
  it('a client hammering from one IP gets 429s; a client at 3 requests per second from another gets none; nothing fails', async () => {
    // The real clock: autocannon's load takes real time.
    const loaded = await start({ trustProxy: '127.0.0.1', rateLimits: true });
    try {
      const path = '/v2.7/email-validations?limit=1';
      const hammer = autocannon(['-c', '8', '-d', '2', '-n', '-H', `authorization=${ROOT_AUTH}`, '-H', 'x-forwarded-for=198.51.100.66', `${loaded.origin}${path}`]);
      const normal: number[] = [];
      for (let i = 0; i < 6; i++) {
        normal.push((await loaded.call('GET', path, { forwardedFor: '198.51.100.77' })).status);
        await new Promise((resolve) => setTimeout(resolve, 333));
      }
      const result = await hammer;
      expect(normal).toEqual([200, 200, 200, 200, 200, 200]);
      expect(result.errors).toBe(0);
      expect(result.timeouts).toBe(0);
      expect(Object.keys(result.statusCodeStats).sort()).toEqual(['200', '429']);
      expect(result.statusCodeStats['429']!.count).toBeGreaterThan(0);
    } finally {
      await loaded.close();
    }
  });
});
