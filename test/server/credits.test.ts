// Credits through real listening servers on SQLite files: reservations at submission and the two 402s, free daily
// credits before packs, the UTC day and month on a clock the tests move, the release of Duplicate entries and of the
// entries a deleted job never answered (held by a slow lab SMTP server), the shapes of the balance, the daily usage
// (paged), the 1.4 account balance and the quality levels, permissions, packs by administrators and root only, credits
// off (404), a restart (balance kept, a job completed across it settled, a reservation of a job never stored given
// back), concurrent submissions against a small balance, and the official client (npm `verifalia`).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { InsufficientCreditError, VerifaliaRestClient } from 'verifalia';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreditOptions } from '../../packages/server/src/accounts/credits.js';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import { createServer, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { ManualClock } from '../jobs/manual-clock.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

const ROOT = 'root';
const ROOT_PASSWORD = 'credits test root password';
const basic = (username: string, password: string): string => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const ROOT_AUTH = basic(ROOT, ROOT_PASSWORD);

let dir: string;
let lab: MailLab;
const open: FastifyInstance[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-credits-'));
  lab = await startMailLab({
    engine: 'raw',
    servers: {
      // Holds alice's RCPT long past any test: her job stays InProgress until it is deleted or the server stops.
      held: { mailboxes: ['alice'], delayMs: { 'rcpt:alice': 60_000 } },
      // Answers carol after a short wait: a job on it completes after a restart.
      slowish: { mailboxes: ['carol'], delayMs: { 'rcpt:carol': 1_500 } },
    },
    domains: { 'held-credits.com': ['held'], 'slowish-credits.com': ['slowish'] },
  });
});

afterAll(async () => {
  for (const app of open) await app.close();
  await lab?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

interface Server {
  readonly app: FastifyInstance;
  readonly origin: string;
  call(method: string, path: string, options?: { auth?: string; json?: unknown }): Promise<Answer>;
  close(): Promise<void>;
}

async function start(name: string, credits: CreditOptions | undefined, extra: Partial<StandaloneOptions> = {}): Promise<Server> {
  const app = await createServer({
    dataDir: join(dir, name),
    rootUsername: ROOT,
    rootPassword: ROOT_PASSWORD,
    verifier: { checks: 'syntax' },
    ...(credits !== undefined && { credits }),
    ...extra,
  });
  open.push(app);
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    app,
    origin,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { authorization: options.auth ?? ROOT_AUTH };
      if (options.json !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${origin}${path}`, { method, headers, ...(options.json !== undefined && { body: JSON.stringify(options.json) }) });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
    },
    async close() {
      open.splice(open.indexOf(app), 1);
      await app.close();
    },
  };
}

const addresses = (count: number, prefix = 'user'): { inputData: string }[] =>
  Array.from({ length: count }, (_, i) => ({ inputData: `${prefix}${i}@example.com` }));

/** Submits a job and waits for it to complete (syntax checks: at once). */
async function runJob(server: Server, entries: unknown[], settings: Record<string, unknown> = {}, auth?: string): Promise<Answer> {
  const answer = await server.call('POST', '/v2.7/email-validations?waitTime=10000', { json: { entries, ...settings }, ...(auth !== undefined && { auth }) });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer;
}

function expectProblem(answer: Answer, status: number, type: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ status, type });
}

async function addPacks(server: Server, credits: number, auth?: string): Promise<Answer> {
  return server.call('POST', '/v2.7/credits/packs', { json: { credits }, ...(auth !== undefined && { auth }) });
}

const balance = async (server: Server) => (await server.call('GET', '/v2.7/credits/balance')).body;
const usage = async (server: Server, query = '') => (await server.call('GET', `/v2.7/credits/daily-usage${query}`)).body;

/** Creates a user as root; its id and Basic credentials. */
async function createUser(server: Server, username: string, detail: Record<string, unknown>): Promise<{ id: string; auth: string }> {
  const password = `the password of ${username}`;
  const created = await server.call('POST', '/v2.7/users', {
    json: { type: 'Standard', displayName: username, authentication: { password: { username, password } }, ...detail },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return { id: created.body.id, auth: basic(username, password) };
}

describe('free daily credits, packs and the UTC day', () => {
  let server: Server;
  // An hour before midnight on the last day of March.
  const clock = new ManualClock(Date.parse('2026-03-31T23:00:00.000Z'));

  beforeAll(async () => {
    server = await start('daily', { freeDailyCredits: 10, unitPrices: { High: 2.5, Extreme: 0.1 } }, { clock });
  });

  it('the balance: free credits of the day, no packs, the time to the next UTC midnight', async () => {
    expect(await balance(server)).toEqual({ creditPacks: 0, freeCredits: 10, freeCreditsResetIn: '01:00:00' });
    const legacy = await server.call('GET', '/v1.4/account-balance');
    expect(legacy.status).toBe(200);
    expect(legacy.body).toEqual({ credits: 0, freeCredits: 10, freeCreditsResetIn: '01:00:00' });
    expect(await usage(server)).toEqual({ meta: { isTruncated: false }, data: [] });
  });

  it('the quality levels carry the configured unit prices', async () => {
    const levels = await server.call('GET', '/v2.7/email-validations/quality-levels');
    expect(levels.status).toBe(200);
    expect(levels.body).toEqual({
      data: [
        { id: 'Standard', displayName: 'Standard', isDefault: true, isCustom: false, unitPrice: 1, isUnavailable: false },
        { id: 'High', displayName: 'High', isDefault: false, isCustom: false, unitPrice: 2.5, isUnavailable: false },
        { id: 'Extreme', displayName: 'Extreme', isDefault: false, isCustom: false, unitPrice: 0.1, isUnavailable: false },
      ],
    });
  });

  it('free credits first, then packs; a job costing more than both is 402 insufficient-credit', async () => {
    await runJob(server, addresses(4));
    expect(await balance(server)).toMatchObject({ creditPacks: 0, freeCredits: 6 });
    const refused = await server.call('POST', '/v2.7/email-validations', { json: { entries: addresses(7) } });
    expectProblem(refused, 402, '/problems/insufficient-credit');
    // 1.4 submissions reserve as 2.x ones do.
    expectProblem(await server.call('POST', '/v1.4/email-validations', { json: { entries: addresses(7) } }), 402, '/problems/insufficient-credit');
    // Nothing was taken by the refusals.
    expect(await balance(server)).toMatchObject({ creditPacks: 0, freeCredits: 6 });

    const added = await addPacks(server, 5.5);
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ creditPacks: 5.5, freeCredits: 6, freeCreditsResetIn: '01:00:00' });
    // 7 = the 6 free credits left and 1 of the packs.
    await runJob(server, addresses(7));
    expect(await balance(server)).toMatchObject({ creditPacks: 4.5, freeCredits: 0 });
    // High at 2.5: two entries (5) are more than 4.5; one is not.
    expectProblem(await server.call('POST', '/v2.7/email-validations', { json: { entries: addresses(2), quality: 'High' } }), 402, '/problems/insufficient-credit');
    await runJob(server, addresses(1), { quality: 'High' });
    // Decimal prices add up exactly: 3 × 0.1 is 0.3, and 2 - 0.3 is 1.7.
    await runJob(server, addresses(3), { quality: 'Extreme' });
    expect(await balance(server)).toEqual({ creditPacks: 1.7, freeCredits: 0, freeCreditsResetIn: '01:00:00' });
    expect(await usage(server)).toEqual({ meta: { isTruncated: false }, data: [{ date: '2026-03-31', freeCredits: 10, creditPacks: 3.8 }] });
  });

  it('a new UTC day brings the free credits back; daily usage lists the days oldest first, filtered and paged', async () => {
    clock.advance(90 * 60_000);
    expect(await balance(server)).toEqual({ creditPacks: 1.7, freeCredits: 10, freeCreditsResetIn: '23:30:00' });
    await runJob(server, addresses(3));
    expect(await balance(server)).toMatchObject({ creditPacks: 1.7, freeCredits: 7 });
    const days = [
      { date: '2026-03-31', freeCredits: 10, creditPacks: 3.8 },
      { date: '2026-04-01', freeCredits: 3, creditPacks: 0 },
    ];
    expect((await usage(server)).data).toEqual(days);
    expect((await usage(server, '?date=2026-04-01')).data).toEqual([days[1]]);
    expect((await usage(server, '?date:until=2026-03-31')).data).toEqual([days[0]]);
    expect((await usage(server, '?date:since=2026-04-01&date:until=2026-04-30')).data).toEqual([days[1]]);
    expect((await usage(server, '?date:since=2026-04-02')).data).toEqual([]);

    const first = await usage(server, '?limit=1');
    expect(first).toEqual({ meta: { isTruncated: true, cursor: expect.any(String) }, data: [days[0]] });
    const second = await usage(server, `?cursor=${encodeURIComponent(first.meta.cursor)}`);
    expect(second).toEqual({ meta: { isTruncated: false, cursor: expect.any(String) }, data: [days[1]] });
    const back = await usage(server, `?cursor:prev=${encodeURIComponent(second.meta.cursor)}`);
    expect(back.data).toEqual([days[0]]);
    expect(back.meta.isTruncated).toBe(false);
    // A cursor with another filter, a forged one, a time where a day is asked: 400.
    expectProblem(await server.call('GET', `/v2.7/credits/daily-usage?date=2026-03-31&cursor=${encodeURIComponent(first.meta.cursor)}`), 400, '/problems/invalid-field');
    expectProblem(await server.call('GET', '/v2.7/credits/daily-usage?cursor=forged'), 400, '/problems/invalid-cursor');
    expectProblem(await server.call('GET', '/v2.7/credits/daily-usage?date:since=2026-04-01T00:00:00Z'), 400, '/problems/invalid-field');
    expectProblem(await server.call('GET', '/v2.7/credits/daily-usage?limit=0'), 400, '/problems/invalid-field');
  });

  it('packs: a positive number with at most six decimal places, else 400', async () => {
    for (const credits of [0, -1, '5', 0.0000001, null]) {
      expectProblem(await addPacks(server, credits as number), 400, '/problems/invalid-field');
    }
    expect((await addPacks(server, 0.000001)).body.creditPacks).toBe(1.700001);
  });

  it('daily usage and balances are gzipped for a client that accepts it (past the 1 KiB below which it does not pay)', async () => {
    for (let day = 0; day < 30; day++) {
      clock.advance(24 * 3_600_000);
      await runJob(server, addresses(1));
    }
    const answer = await fetch(`${server.origin}/v2.7/credits/daily-usage?limit=100`, { headers: { authorization: ROOT_AUTH, 'accept-encoding': 'gzip' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-encoding')).toBe('gzip');
    // fetch inflates it: the same document as without compression.
    const body = (await answer.json()) as { data: unknown[] };
    expect(body).toEqual(await usage(server, '?limit=100'));
    expect(body.data).toHaveLength(32);
  });
});

describe('the monthly maximum', () => {
  let server: Server;
  const clock = new ManualClock(Date.parse('2026-01-31T12:00:00.000Z'));

  beforeAll(async () => {
    server = await start('monthly', { monthlyMaxCredits: 10, freeDailyCredits: 2 }, { clock });
    expect((await addPacks(server, 100)).status).toBe(200);
  });

  it('counts free credits; a job that would pass it is 402 monthly-maximum-exceeded; insufficient credit wins when both apply', async () => {
    // 2 free credits and 4 of packs.
    await runJob(server, addresses(6));
    expect(await balance(server)).toMatchObject({ creditPacks: 96, freeCredits: 0 });
    expectProblem(await server.call('POST', '/v2.7/email-validations', { json: { entries: addresses(5) } }), 402, '/problems/monthly-maximum-exceeded');
    // Both apply (200 > 96 packs, and past the month's maximum): insufficient credit answers.
    expectProblem(await server.call('POST', '/v2.7/email-validations', { json: { entries: addresses(200) } }), 402, '/problems/insufficient-credit');
    await runJob(server, addresses(4));
    expectProblem(await server.call('POST', '/v2.7/email-validations', { json: { entries: addresses(1) } }), 402, '/problems/monthly-maximum-exceeded');
    // February: a new month and a new day.
    clock.advance(12 * 3600_000);
    await runJob(server, addresses(5));
    expect(await balance(server)).toMatchObject({ creditPacks: 89, freeCredits: 0 });
  });

  it('Duplicate entries are released back to the day and month of the reservation', async () => {
    const before = await balance(server);
    const job = await runJob(server, [{ inputData: 'a@example.com' }, { inputData: 'b@example.com' }, { inputData: 'a@example.com' }, { inputData: 'A@example.com' }], { deduplication: 'Safe' });
    const statuses = job.body.entries.data.map((entry: { status: string }) => entry.status);
    const duplicates = statuses.filter((status: string) => status === 'Duplicate').length;
    expect(duplicates).toBeGreaterThan(0);
    // Reserved 4, consumed the entries verified.
    expect((await balance(server)).creditPacks).toBe(before.creditPacks - (4 - duplicates));
    const days = (await usage(server)).data;
    expect(days.at(-1)).toEqual({ date: '2026-02-01', freeCredits: 2, creditPacks: 3 + 4 - duplicates });
    // The month counts what was consumed, not what was reserved: 5 + 4 - duplicates; the rest up to 10 is allowed.
    await runJob(server, addresses(10 - (5 + 4 - duplicates)));
    expectProblem(await server.call('POST', '/v2.7/email-validations', { json: { entries: addresses(1) } }), 402, '/problems/monthly-maximum-exceeded');
  });
});

describe('a job held by a slow SMTP server', () => {
  let server: Server;

  beforeAll(async () => {
    server = await start('held', { monthlyMaxCredits: 5 }, { verifier: labVerifierOptions(lab) });
    expect((await addPacks(server, 10)).status).toBe(200);
  });

  it('its reservation counts as spent until it is deleted; then the entries never answered are released', async () => {
    const submitted = await server.call('POST', '/v2.7/email-validations', {
      json: { entries: [{ inputData: 'not an address' }, { inputData: 'alice@held-credits.com' }, { inputData: 'neither@' }] },
    });
    expect(submitted.status).toBe(202);
    const id = submitted.body.overview.id as string;
    expect(await balance(server)).toMatchObject({ creditPacks: 7 });
    expect((await usage(server)).data).toEqual([{ date: expect.any(String), freeCredits: 0, creditPacks: 3 }]);
    // The reservation counts toward the month: 3 + 3 is past 5 (the packs, 7, would do).
    expectProblem(await server.call('POST', '/v2.7/email-validations', { json: { entries: addresses(3) } }), 402, '/problems/monthly-maximum-exceeded');

    // The two syntax failures are answered at once; alice's RCPT is held.
    for (;;) {
      const overview = await server.call('GET', `/v2.7/email-validations/${id}/overview`);
      if (overview.body.progress.percentage >= 2 / 3) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await server.call('DELETE', `/v2.7/email-validations/${id}`)).status).toBe(200);
    // Two entries verified and consumed; alice's never answered: released.
    expect(await balance(server)).toMatchObject({ creditPacks: 8 });
    expect((await usage(server)).data).toEqual([{ date: expect.any(String), freeCredits: 0, creditPacks: 2 }]);
    await runJob(server, addresses(3));
    expect(await balance(server)).toMatchObject({ creditPacks: 5 });
  });
});

describe('permissions', () => {
  let server: Server;

  beforeAll(async () => {
    server = await start('permissions', { freeDailyCredits: 3 });
  });

  it('balance endpoints need account-wide credits:read-balance, daily usage credits:read-usage; a :my rule grants nothing', async () => {
    const plain = await createUser(server, 'plain', {});
    const reader = await createUser(server, 'balance-reader', { authorization: { rules: ['credits:read-balance'] } });
    const usageReader = await createUser(server, 'usage-reader', { authorization: { rules: ['credits:read-usage'] } });
    const mine = await createUser(server, 'mine', { authorization: { rules: ['credits:read-balance:my', 'credits:read-usage:my', 'credits:*:my'] } });
    const app = await createUser(server, 'app', { type: 'BrowserApp', authentication: undefined });
    const appKey = (await server.call('GET', `/v2.7/users/${app.id}`)).body.authentication.password.username as string;
    const appAuth = basic(appKey, '');

    const can = async (auth: string) => ({
      balance: (await server.call('GET', '/v2.7/credits/balance', { auth })).status,
      balance26: (await server.call('GET', '/v2.6/credits/balance', { auth })).status,
      legacy: (await server.call('GET', '/v1.4/account-balance', { auth })).status,
      usage: (await server.call('GET', '/v2.7/credits/daily-usage', { auth })).status,
      levels: (await server.call('GET', '/v2.7/email-validations/quality-levels', { auth })).status,
    });
    expect(await can(plain.auth)).toEqual({ balance: 403, balance26: 403, legacy: 403, usage: 403, levels: 200 });
    expect(await can(reader.auth)).toEqual({ balance: 200, balance26: 200, legacy: 200, usage: 403, levels: 200 });
    expect(await can(usageReader.auth)).toEqual({ balance: 403, balance26: 403, legacy: 403, usage: 200, levels: 200 });
    expect(await can(mine.auth)).toEqual({ balance: 403, balance26: 403, legacy: 403, usage: 403, levels: 200 });
    expect(await can(appAuth)).toEqual({ balance: 403, balance26: 403, legacy: 403, usage: 403, levels: 200 });
    expectProblem(await server.call('GET', '/v2.7/credits/balance', { auth: mine.auth }), 403, '/problems/forbidden');
  });

  it('packs are added by root and administrators only', async () => {
    const standard = await createUser(server, 'all-credits', { authorization: { rules: ['credits', 'email-validations'] } });
    const admin = await createUser(server, 'admin', { type: 'Administrator' });
    expectProblem(await addPacks(server, 1, standard.auth), 403, '/problems/forbidden');
    expect((await addPacks(server, 1, admin.auth)).body).toMatchObject({ creditPacks: 1 });
    expect((await addPacks(server, 2)).body).toMatchObject({ creditPacks: 3 });
    // The 2.6 interface has no packs.
    expect((await server.call('POST', '/v2.6/credits/packs', { json: { credits: 1 } })).status).toBe(404);
  });

  it('every user is charged to the account; write permission and validation answer before credit', async () => {
    const user = await createUser(server, 'submitter', {});
    await runJob(server, addresses(4), {}, user.auth);
    expect(await balance(server)).toMatchObject({ creditPacks: 2, freeCredits: 0 });
    const reader = await createUser(server, 'no-write', { authorization: { rules: ['email-validations:read:my'] } });
    const tooMuch = { entries: addresses(50) };
    expectProblem(await server.call('POST', '/v2.7/email-validations', { json: tooMuch, auth: reader.auth }), 403, '/problems/forbidden');
    expectProblem(await server.call('POST', '/v2.7/email-validations', { json: { ...tooMuch, quality: 'Wrong' } }), 400, '/problems/invalid-field');
    expectProblem(await server.call('POST', '/v2.7/email-validations', { json: tooMuch }), 402, '/problems/insufficient-credit');
  });
});

describe('credits off', () => {
  let server: Server;

  beforeAll(async () => {
    server = await start('off', undefined, { defaultQuality: 'High' });
  });

  it('the credit endpoints answer 404 with a problem; nothing is refused for credit; quality levels answer', async () => {
    for (const path of ['/v2.7/credits/balance', '/v2.6/credits/balance', '/v2.7/credits/daily-usage', '/v1.4/account-balance']) {
      const answer = await server.call('GET', path);
      expectProblem(answer, 404, '/problems/not-found');
      expect(answer.body.detail).toMatch(/not accounted/);
    }
    const packs = await addPacks(server, 10);
    expectProblem(packs, 404, '/problems/not-found');
    expect(packs.body.detail).toMatch(/not accounted/);
    await runJob(server, addresses(500));
    const levels = await server.call('GET', '/v2.6/email-validations/quality-levels');
    expect(levels.body.data.map((level: { id: string; isDefault: boolean; unitPrice: number }) => [level.id, level.isDefault, level.unitPrice])).toEqual([
      ['Standard', false, 1],
      ['High', true, 2],
      ['Extreme', false, 4],
    ]);
  });

  it('the new paths know their methods: 405 with Allow; quality-levels is no job id', async () => {
    const wrong = await server.call('DELETE', '/v2.7/email-validations/quality-levels');
    expectProblem(wrong, 405, '/problems/method-not-allowed');
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
    expect((await server.call('POST', '/v2.7/credits/balance')).status).toBe(405);
    expect((await server.call('GET', '/v2.7/credits/packs')).headers.get('allow')).toBe('POST');
    expect((await server.call('POST', '/v1.4/account-balance')).status).toBe(405);
  });
});

describe('a restart', () => {
  it('keeps the balance, settles a job completed across it, and gives back a reservation whose job was never stored', { timeout: 60_000 }, async () => {
    const options = { verifier: labVerifierOptions(lab) };
    const first = await start('restart', {}, options);
    expect((await addPacks(first, 10)).status).toBe(200);
    // Two copies of carol (one Duplicate) on the slow server, and a syntax failure.
    const submitted = await first.call('POST', '/v2.7/email-validations', {
      json: { entries: [{ inputData: 'carol@slowish-credits.com' }, { inputData: 'carol@slowish-credits.com' }, { inputData: 'bad' }], deduplication: 'Safe' },
    });
    expect(submitted.status).toBe(202);
    const id = submitted.body.overview.id as string;
    expect(await balance(first)).toMatchObject({ creditPacks: 7 });
    await first.close();

    // A reservation made just before a crash, for a job that was never stored.
    const store = await openSqliteStore(join(dir, 'restart', 'mailverify.db'));
    expect(await store.reserveCredits({ jobId: randomUUID(), day: '2026-01-01', entries: 2, unitPrice: 1_000_000, freeDaily: null, monthlyMax: null })).toBe('reserved');
    expect((await store.creditBalance('2026-01-01')).packs).toBe(5_000_000);
    await store.close();

    const second = await start('restart', {}, options);
    // The unstored job's reservation is given back; the running job's stays reserved.
    expect(await balance(second)).toMatchObject({ creditPacks: 7 });
    expect((await usage(second)).data.map((day: { date: string }) => day.date)).not.toContain('2026-01-01');
    const done = await second.call('GET', `/v2.7/email-validations/${id}?waitTime=20000`);
    expect(done.status).toBe(200);
    expect(done.body.entries.data.map((entry: { status: string }) => entry.status)).toContain('Duplicate');
    // The Duplicate is released: 2 consumed.
    expect(await balance(second)).toMatchObject({ creditPacks: 8 });
    await second.close();
    const third = await start('restart', {}, options);
    expect(await balance(third)).toMatchObject({ creditPacks: 8 });
    await third.close();
  });
});

describe('concurrent submissions', () => {
  it('never overdraw: of 40 jobs of 3 entries against 10 credits, exactly 3 are accepted', async () => {
    const server = await start('concurrent', {});
    expect((await addPacks(server, 10)).status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => server.call('POST', '/v2.7/email-validations', { json: { entries: addresses(3, `c${i}-`) } })),
    );
    const accepted = answers.filter((answer) => answer.status === 200 || answer.status === 202);
    const refused = answers.filter((answer) => answer.status === 402);
    expect(accepted).toHaveLength(3);
    expect(refused).toHaveLength(37);
    for (const answer of refused) expect(answer.body.type).toBe('/problems/insufficient-credit');
    expect(await balance(server)).toMatchObject({ creditPacks: 1 });
    await server.close();
  });
});

describe('the official client (npm verifalia)', () => {
  it('reads the balance and the daily usage, and throws InsufficientCreditError on a 402', async () => {
    const server = await start('client', { freeDailyCredits: 5 });
    expect((await addPacks(server, 2.25)).status).toBe(200);
    const client = new VerifaliaRestClient({ username: ROOT, password: ROOT_PASSWORD, baseUris: [server.origin] });
    expect(await client.credits.getBalance()).toMatchObject({ creditPacks: 2.25, freeCredits: 5, freeCreditsResetIn: expect.stringMatching(/^\d{2}:\d{2}:\d{2}$/) });
    await client.emailValidations.submit({ entries: addresses(6) } as never);
    const days = [];
    for await (const day of client.credits.listDailyUsages({} as never)) days.push(day);
    expect(days).toEqual([{ date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), freeCredits: 5, creditPacks: 1 }]);
    await expect(client.emailValidations.submit({ entries: addresses(3) } as never)).rejects.toBeInstanceOf(InsufficientCreditError);
    await server.close();
  });

  it('with credits off: the server answers the balance with a 404 problem, which the client (5.0.0) fails to read', async () => {
    const server = await start('client-off', undefined);
    const answer = await server.call('GET', '/v2.7/credits/balance');
    expect([answer.status, answer.body.status]).toEqual([404, 404]);
    const client = new VerifaliaRestClient({ username: ROOT, password: ROOT_PASSWORD, baseUris: [server.origin] });
    // verifalia 5.0.0 reads the body of a failed answer twice (as JSON, then as text), so that a 404 reaches the
    // caller as a TypeError of its fetch, not as the answer; docs/credits.md says how to tell credits are off.
    await expect(client.credits.getBalance()).rejects.toThrow(/body used already|Body is unusable|already been read/i);
    await server.close();
  });
});
