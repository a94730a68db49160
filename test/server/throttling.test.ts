// A user's own submission limits through a real listening server whose clock the tests move: throttling rules (2.x
// JSON, file import and 1.4 all count; Global and IPAddress scopes; Retry-After until the oldest counted submission
// leaves the window; refusals do not count; a changed rule applies at the next submission; root is exempt; the order
// of the checks), `throttling.maxEntriesPerJob` and `defaults.retention`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../packages/server/src/jobs/sqlite-store.js';
import { StorageFullError, type JobStore } from '../../packages/server/src/jobs/types.js';
import type { UserStore } from '../../packages/server/src/accounts/types.js';
import { ManualClock } from '../jobs/manual-clock.js';
import { expectTooManyRequests, fileImport, ROOT_AUTH, start, type Answer, type Running } from './http-client.js';

const ENTRY = [{ inputData: 'someone@example.com' }];
const DAY_MS = 86_400_000;

let server: Running;
let clock: ManualClock;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  // Behind a proxy on loopback, so that each test can come from client IPs of its own.
  server = await start({ clock, trustProxy: '127.0.0.1', defaultRetentionMs: 3 * DAY_MS });
});

afterAll(async () => {
  await server?.close();
});

type Via = 'json' | 'file' | 'v1.4';

/** A submission of `entries` addresses by `auth` through `via`, from `ip`. */
function submit(auth: string, via: Via, options: { ip?: string; entries?: number; settings?: Record<string, unknown> } = {}): Promise<Answer> {
  const addresses = Array.from({ length: options.entries ?? 1 }, (_, i) => `someone${i}@example.com`);
  const forwardedFor = options.ip ?? '192.0.2.1';
  if (via === 'file') return server.call('POST', '/v2.7/email-validations', { auth, forwardedFor, ...fileImport(addresses, options.settings) });
  const json = { entries: addresses.map((inputData) => ({ inputData })), ...options.settings };
  return server.call('POST', via === 'json' ? '/v2.7/email-validations' : '/v1.4/email-validations', { auth, forwardedFor, json });
}

function expectAccepted(answer: Answer): void {
  expect([200, 202], answer.text).toContain(answer.status);
}

const throttled = (rules: unknown[], more: Record<string, unknown> = {}) => server.createUser({ throttling: { rules }, ...more });

describe('throttling rules', () => {
  it('Global: JSON, file import and 1.4 count alike; beyond the limit 429 with Retry-After until the oldest leaves the window', async () => {
    const user = await throttled([{ limit: 3, period: 'Minute', scope: 'Global' }]);
    const first = clock.now();
    expectAccepted(await submit(user.auth, 'json'));
    clock.advance(10_000);
    expectAccepted(await submit(user.auth, 'file', { ip: '192.0.2.2' }));
    clock.advance(10_000);
    expectAccepted(await submit(user.auth, 'v1.4', { ip: '192.0.2.3' }));
    clock.advance(10_000);
    for (const via of ['json', 'file', 'v1.4'] as const) {
      // 30 s after the first: it leaves the window in 30 s.
      expect(expectTooManyRequests(await submit(user.auth, via))).toBe(30);
    }
    clock.advanceTo(first + 60_000 - 400);
    expect(expectTooManyRequests(await submit(user.auth, 'json'))).toBe(1);
    clock.advanceTo(first + 60_000);
    // The refused ones were not counted: one slot is free, and one only.
    expectAccepted(await submit(user.auth, 'json'));
    // The oldest counted now is the file import, 10 s after the first.
    expect(expectTooManyRequests(await submit(user.auth, 'json'))).toBe(10);
    // The user's jobs: the four accepted.
    const list = await server.call('GET', '/v2.7/email-validations', { auth: user.auth });
    expect(list.body.data).toHaveLength(4);
  });

  it('IPAddress: counted per client IP; Hour and Day windows', async () => {
    const user = await throttled([
      { limit: 2, period: 'Hour', scope: 'IPAddress' },
      { limit: 5, period: 'Day', scope: 'Global' },
    ]);
    expectAccepted(await submit(user.auth, 'json', { ip: '198.51.100.1' }));
    expectAccepted(await submit(user.auth, 'v1.4', { ip: '198.51.100.1' }));
    expect(expectTooManyRequests(await submit(user.auth, 'file', { ip: '198.51.100.1' }))).toBe(3600);
    expectAccepted(await submit(user.auth, 'json', { ip: '198.51.100.2' }));
    expectAccepted(await submit(user.auth, 'json', { ip: '2001:db8::1' }));
    clock.advance(3_600_000);
    expectAccepted(await submit(user.auth, 'json', { ip: '198.51.100.1' }));
    // Five in the day: the Global rule refuses from every address until the first is a day old.
    expect(expectTooManyRequests(await submit(user.auth, 'json', { ip: '198.51.100.3' }))).toBe(23 * 3600);
  });

  it('a rule changed applies at the next submission; no rule, no limit; root is exempt', async () => {
    const user = await throttled([{ limit: 1, period: 'Day', scope: 'Global' }]);
    expectAccepted(await submit(user.auth, 'json'));
    expectTooManyRequests(await submit(user.auth, 'json'));
    await server.patchUser(user.id, [{ op: 'replace', path: '/throttling/rules/0/limit', value: 2 }]);
    expectAccepted(await submit(user.auth, 'json'));
    expectTooManyRequests(await submit(user.auth, 'v1.4'));
    await server.patchUser(user.id, [{ op: 'replace', path: '/throttling/rules', value: [] }]);
    for (let i = 0; i < 3; i++) expectAccepted(await submit(user.auth, 'json'));
    // Root: no rules of its own, never throttled.
    for (let i = 0; i < 5; i++) expectAccepted(await submit(ROOT_AUTH, 'json'));
  });

  it('an administrator is throttled by its own rules', async () => {
    const admin = await throttled([{ limit: 1, period: 'Minute', scope: 'Global' }], { type: 'Administrator' });
    expectAccepted(await submit(admin.auth, 'json'));
    expectTooManyRequests(await submit(admin.auth, 'json'));
  });

  it('checks before throttling answer first, and take no slot', async () => {
    const user = await server.createUser({ throttling: { maxEntriesPerJob: 2, rules: [{ limit: 1, period: 'Minute', scope: 'Global' }] } });
    // Validation, maxEntriesPerJob: refused before throttling; the slot is still free after them.
    expect((await server.call('POST', '/v2.7/email-validations', { auth: user.auth, json: { entries: [] } })).status).toBe(400);
    expect((await submit(user.auth, 'json', { entries: 3 })).status).toBe(400);
    expectAccepted(await submit(user.auth, 'json'));
    // Now both apply: the 400 answers.
    expect((await submit(user.auth, 'json', { entries: 3 })).status).toBe(400);
    expect((await submit(user.auth, 'json', { settings: { quality: 'Best' } })).status).toBe(400);
    expectTooManyRequests(await submit(user.auth, 'json'));
  });

  it('concurrent submissions never pass together beyond the limit', async () => {
    const user = await throttled([{ limit: 3, period: 'Minute', scope: 'Global' }]);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => submit(user.auth, (['json', 'file', 'v1.4'] as const)[i % 3]!)));
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(7);
    expect(answers.filter((answer) => answer.status === 200 || answer.status === 202)).toHaveLength(3);
  });
});

describe('throttling: a job that is not stored', () => {
  it('gives its place back: a submission refused by the store (507) does not count', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverify-throttling-store-'));
    const real = await openSqliteStore(join(dir, 'mailverify.db'));
    let full = false;
    // The real store, but jobs are made in one call (no drafts), which fails while `full` is set.
    const store = new Proxy(real, {
      get(target, property) {
        if (property === 'draftJob') return undefined;
        if (property === 'createJob' && full) return async () => Promise.reject(new StorageFullError());
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as JobStore & UserStore;
    const local = await start({ store, clock });
    try {
      const user = await local.createUser({ throttling: { rules: [{ limit: 1, period: 'Minute', scope: 'Global' }] } });
      full = true;
      for (const via of ['json', 'file', 'v1.4'] as const) {
        const refused = via === 'file'
          ? await local.call('POST', '/v2.7/email-validations', { auth: user.auth, ...fileImport(['a@example.com']) })
          : await local.call('POST', `/${via === 'json' ? 'v2.7' : 'v1.4'}/email-validations`, { auth: user.auth, json: { entries: ENTRY } });
        expect(refused.status, refused.text).toBe(507);
      }
      full = false;
      expectAccepted(await local.call('POST', '/v2.7/email-validations', { auth: user.auth, json: { entries: ENTRY } }));
      expectTooManyRequests(await local.call('POST', '/v2.7/email-validations', { auth: user.auth, json: { entries: ENTRY } }));
    } finally {
      await local.close();
      await real.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('throttling.maxEntriesPerJob', () => {
  it('a larger submission is 400 naming entries, through JSON, file import and 1.4; the limit itself is accepted', async () => {
    const user = await server.createUser({ throttling: { maxEntriesPerJob: 2, rules: [] } });
    for (const via of ['json', 'file', 'v1.4'] as const) {
      const refused = await submit(user.auth, via, { entries: 3 });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body).toMatchObject({ type: '/problems/invalid-field' });
      expect(refused.body.detail).toMatch(/^entries: /);
      expectAccepted(await submit(user.auth, via, { entries: 2 }));
    }
    // Root and other users: the server's limit only.
    expectAccepted(await submit(ROOT_AUTH, 'json', { entries: 3 }));
  });
});

describe('defaults.retention', () => {
  async function retentionOf(answer: Answer, auth: string): Promise<string> {
    expectAccepted(answer);
    const id = answer.body.overview?.id ?? answer.body.uniqueID;
    const overview = await server.call('GET', `/v2.7/email-validations/${id}/overview`, { auth });
    expect(overview.status, overview.text).toBe(200);
    return overview.body.retention;
  }

  it("a job without retention gets the user's default (JSON, file import, 1.4); a given retention wins", async () => {
    const user = await server.createUser({ defaults: { retention: '2:00:00' } });
    for (const via of ['json', 'file', 'v1.4'] as const) {
      expect(await retentionOf(await submit(user.auth, via), user.auth)).toBe('02:00:00');
    }
    expect(await retentionOf(await submit(user.auth, 'json', { settings: { retention: '1:00:00' } }), user.auth)).toBe('01:00:00');
    expect(await retentionOf(await submit(user.auth, 'file', { settings: { retention: '1.00:00:00' } }), user.auth)).toBe('1.00:00:00');
    // A default changed applies to the next job.
    await server.patchUser(user.id, [{ op: 'replace', path: '/defaults/retention', value: '0:30:00' }]);
    expect(await retentionOf(await submit(user.auth, 'json'), user.auth)).toBe('00:30:00');
  });

  it("a user without a default gets the account's", async () => {
    const user = await server.createUser();
    for (const via of ['json', 'file', 'v1.4'] as const) {
      expect(await retentionOf(await submit(user.auth, via), user.auth)).toBe('3.00:00:00');
    }
    expect(await retentionOf(await submit(ROOT_AUTH, 'json'), ROOT_AUTH)).toBe('3.00:00:00');
  });
});
