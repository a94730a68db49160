// The 2.x REST interface through a real listening server: raw HTTP for every status code and paging rule, and the
// official client (npm `verifalia`, unmodified) for submit, wait, list, read and delete. Jobs run against the mail lab;
// the server is the one under test (test/server/target.ts): embedded on a real SQLite file, or a cluster.
import { randomUUID } from 'node:crypto';
import { VerifaliaRestClient, WaitOptions } from 'verifalia';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { serverData, startServerUnderTest, type ServerUnderTest } from './target.js';

const USER = 'root';
const PASSWORD = 'correct horse battery staple';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

const data = serverData('server');
let lab: MailLab;
let server: ServerUnderTest;
let origin: string;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: {
      quick: { mailboxes: ['alice', 'bob', 'carol'] },
      slow: { mailboxes: ['alice'], delayMs: { rcpt: 700 } },
    },
    domains: { 'quick-srv.com': ['quick'], 'slow-srv.com': ['slow'] },
  });
  server = await startServerUnderTest(data.fresh(), {
    rootUsername: USER,
    rootPassword: PASSWORD,
    verifier: labVerifierOptions(lab),
    tokenLifetimeMs: 60_000,
  });
  origin = server.origin;
});

afterAll(async () => {
  await server?.close();
  await lab?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const init: RequestInit = { method, headers: { authorization: BASIC, ...headers }, redirect: 'manual' };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${origin}${path}`, init);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

function expectProblem(answer: Answer, status: number, detail?: RegExp): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ status, type: expect.stringMatching(/^\/problems\//), title: expect.any(String) });
  if (detail !== undefined) expect(answer.body.detail).toMatch(detail);
  expect(JSON.stringify(answer.body)).not.toMatch(/at .*\.(ts|js):\d+|node_modules|\/work\//);
}

const quickEntries = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ inputData: `${['alice', 'bob', 'nobody'][i % 3]}@quick-srv.com`, custom: `row ${i}` }));

describe('submission', () => {
  it('200 with the snapshot when the job completes within waitTime', async () => {
    const answer = await call('POST', '/v2.7/email-validations?waitTime=10000', { entries: quickEntries(3), quality: 'standard', name: 'first' });
    expect(answer.status).toBe(200);
    const { overview, entries } = answer.body;
    expect(overview).toMatchObject({
      status: 'Completed',
      name: 'first',
      quality: 'Standard',
      deduplication: 'Off',
      noOfEntries: 3,
      retention: '30.00:00:00',
      clientIP: '127.0.0.1',
    });
    expect(Object.keys(overview)).toEqual([
      'id', 'status', 'name', 'owner', 'clientIP', 'quality', 'deduplication', 'noOfEntries', 'createdOn', 'submittedOn',
      'completedOn', 'retention',
    ]);
    expect(overview.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(overview.createdOn).toBe(overview.submittedOn);
    expect(overview.createdOn).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(entries.meta).toEqual({ isTruncated: false });
    expect(entries.data.map((e: any) => [e.index, e.status, e.classification, e.custom])).toEqual([
      [0, 'Success', 'Deliverable', 'row 0'],
      [1, 'Success', 'Deliverable', 'row 1'],
      [2, 'MailboxDoesNotExist', 'Undeliverable', 'row 2'],
    ]);
  });

  it('202 with Location and the overview, without entries, when it does not', async () => {
    const answer = await call('POST', '/v2.6/email-validations', { entries: [{ inputData: 'alice@slow-srv.com' }], priority: 200 });
    expect(answer.status).toBe(202);
    const id = answer.body.overview.id;
    expect(answer.headers.get('location')).toBe(`/v2.6/email-validations/${id}`);
    expect(answer.body.entries).toBeUndefined();
    expect(answer.body.overview).toMatchObject({ status: 'InProgress', priority: 200, progress: { percentage: 0 } });
    // The job resources answer 202 while it runs...
    expect((await call('GET', `/v2.6/email-validations/${id}`)).status).toBe(202);
    const overview = await call('GET', `/v2.6/email-validations/${id}/overview`);
    expect(overview.status).toBe(202);
    expect(overview.body).toMatchObject({ id, status: 'InProgress' });
    expect((await call('GET', `/v2.6/email-validations/${id}/entries`)).body).toMatchObject({ overview: { id } });
    expect((await call('GET', `/v2.6/email-validations/${id}/entries/0`)).status).toBe(202);
    // ...and 200 once it is done, as soon as it is done within waitTime.
    const done = await call('GET', `/v2.6/email-validations/${id}?waitTime=10000`);
    expect(done.status).toBe(200);
    expect(done.body.overview.progress).toBeUndefined();
    expect(done.body.entries.data).toMatchObject([{ index: 0, status: 'Success' }]);
  });

  it('400 naming the field, for every rule of a submission', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /^entries: required/],
      [{ entries: [] }, /^entries: must hold at least one/],
      [{ entries: [{ inputData: 'a@b.c' }, { custom: 'x' }] }, /^entries\[1\]\.inputData: required/],
      [{ entries: [{ inputData: 'a@b.c', custom: 'x'.repeat(51) }] }, /^entries\[0\]\.custom: at most 50/],
      [{ entries: [{ inputData: 'a'.repeat(1025) }] }, /^entries\[0\]\.inputData: at most 1024/],
      [{ entries: [{ inputData: 'a@b.c' }], priority: 256 }, /^priority:/],
      [{ entries: [{ inputData: 'a@b.c' }], quality: 'Best' }, /^quality:/],
      [{ entries: [{ inputData: 'a@b.c' }], deduplication: 'yes' }, /^deduplication:/],
      [{ entries: [{ inputData: 'a@b.c' }], retention: '0:04:59' }, /^retention:/],
      [{ entries: [{ inputData: 'a@b.c' }], retention: '31.0:0:0' }, /^retention:/],
      [{ entries: [{ inputData: 'a@b.c' }], name: 'n'.repeat(257) }, /^name:/],
      [{ entries: [{ inputData: 'a@b.c' }], callback: { url: 'ftp://example.com/' } }, /^callback\.url:/],
      [{ entries: [{ inputData: 'a@b.c' }], callback: { url: 'https://example.com/', version: '2.0' } }, /^callback\.version:/],
      [[1, 2], /JSON object/],
    ];
    for (const [body, detail] of cases) expectProblem(await call('POST', '/v2.7/email-validations', body), 400, detail);
    expectProblem(await call('POST', '/v2.7/email-validations?waitTime=30001', { entries: quickEntries(1) }), 400, /^waitTime:/);
    expectProblem(await call('POST', '/v2.7/email-validations?waitTime=abc', { entries: quickEntries(1) }), 400, /^waitTime:/);
    expectProblem(await call('POST', '/v2.7/email-validations', '{"entries": ['), 400);
  });

  it('415 for a body that is not JSON, 413 for one over the limit', async () => {
    expectProblem(await call('POST', '/v2.7/email-validations', 'a@b.c', { 'content-type': 'text/plain' }), 415);
    const small = await server.withOptions({ rootUsername: USER, rootPassword: PASSWORD, verifier: labVerifierOptions(lab), bodyLimit: 1000 });
    const response = await fetch(`${small.origin}/v2.7/email-validations`, {
      method: 'POST',
      headers: { authorization: BASIC, 'content-type': 'application/json' },
      body: JSON.stringify({ entries: quickEntries(100) }),
    });
    await response.arrayBuffer();
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});

describe('authentication', () => {
  it('401 with a Basic challenge without credentials, or with wrong ones, on every route but /auth/tokens', async () => {
    for (const authorization of ['', `Basic ${Buffer.from(`${USER}:wrong`).toString('base64')}`, 'Bearer not.a.token', 'Digest x']) {
      const answer = await call('GET', '/v2.7/email-validations', undefined, { authorization });
      expectProblem(answer, 401);
      expect(answer.headers.get('www-authenticate')).toBe('Basic realm="mailverify"');
      expect(JSON.stringify(answer.body)).not.toContain(PASSWORD);
    }
  });

  it('POST /auth/tokens gives a bearer token that works; 400 for a missing field, 401 for wrong credentials', async () => {
    const token = await call('POST', '/v2.7/auth/tokens', { username: USER, password: PASSWORD }, { authorization: '' });
    expect(token.status).toBe(200);
    const payload = JSON.parse(Buffer.from(token.body.accessToken.split('.')[1], 'base64url').toString());
    expect(payload.exp - payload.iat).toBe(60);
    expect(typeof payload.sub).toBe('string');
    const listed = await call('GET', '/v2.7/email-validations', undefined, { authorization: `Bearer ${token.body.accessToken}` });
    expect(listed.status).toBe(200);
    expectProblem(await call('POST', '/v2.7/auth/tokens', { username: USER }, { authorization: '' }), 400, /^password:/);
    expectProblem(await call('POST', '/v2.7/auth/tokens', { username: USER, password: 'nope' }, { authorization: '' }), 401);
  });
});

describe('a job\'s resources', () => {
  let id: string;
  beforeAll(async () => {
    const answer = await call('POST', '/v2.7/email-validations?waitTime=10000', { entries: quickEntries(25), deduplication: 'safe' });
    expect(answer.status).toBe(200);
    id = answer.body.overview.id;
  });

  it('pages entries forwards and backwards with cursors, keeping the limit and the filter', async () => {
    const first = await call('GET', `/v2.7/email-validations/${id}/entries?limit=10`);
    expect(first.status).toBe(200);
    expect(first.body.meta.isTruncated).toBe(true);
    expect(first.body.data.map((e: any) => e.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const second = await call('GET', `/v2.7/email-validations/${id}/entries?cursor=${encodeURIComponent(first.body.meta.cursor)}`);
    expect(second.body.data.map((e: any) => e.index)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    const third = await call('GET', `/v2.7/email-validations/${id}/entries?cursor=${encodeURIComponent(second.body.meta.cursor)}`);
    expect(third.body.data.map((e: any) => e.index)).toEqual([20, 21, 22, 23, 24]);
    expect(third.body.meta.isTruncated).toBe(false);
    expect(typeof third.body.meta.cursor).toBe('string'); // a previous page exists
    const back = await call('GET', `/v2.7/email-validations/${id}/entries?cursor:prev=${encodeURIComponent(third.body.meta.cursor)}`);
    expect(back.body.data.map((e: any) => e.index)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(back.body.meta.isTruncated).toBe(true);
    const start = await call('GET', `/v2.7/email-validations/${id}/entries?cursor:prev=${encodeURIComponent(back.body.meta.cursor)}`);
    expect(start.body.data.map((e: any) => e.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(start.body.meta.isTruncated).toBe(false);
  });

  it('filters by status (include, its alias, their union, exclude); refuses unknown names and a foreign cursor', async () => {
    const missing = await call('GET', `/v2.7/email-validations/${id}/entries?status=MailboxDoesNotExist&limit=3`);
    expect(missing.body.data.map((e: any) => [e.index, e.status])).toEqual([[2, 'MailboxDoesNotExist']]);
    expect(missing.body.meta).toEqual({ isTruncated: false });
    const union = await call('GET', `/v2.7/email-validations/${id}/entries?status=Success&status:include=MailboxDoesNotExist`);
    expect(union.body.data.map((e: any) => e.index)).toEqual([0, 1, 2]);
    const duplicates = await call('GET', `/v2.7/email-validations/${id}/entries?status:exclude=Success,MailboxDoesNotExist`);
    expect(duplicates.body.data).toHaveLength(22);
    expect(duplicates.body.data.every((e: any) => e.status === 'Duplicate' && e.duplicateOf === e.index % 3)).toBe(true);
    expectProblem(await call('GET', `/v2.7/email-validations/${id}/entries?status=Nope`), 400, /^status:/);
    expectProblem(await call('GET', `/v2.7/email-validations/${id}/entries?limit=0`), 400, /^limit:/);
    expectProblem(await call('GET', `/v2.7/email-validations/${id}/entries?limit=1001`), 400, /^limit:/);
    const page = await call('GET', `/v2.7/email-validations/${id}/entries?status=Duplicate&limit=5`);
    const cursor = encodeURIComponent(page.body.meta.cursor);
    expectProblem(await call('GET', `/v2.7/email-validations/${id}/entries?cursor=${cursor}&status=Success`), 400, /^cursor:/);
    expectProblem(await call('GET', `/v2.7/email-validations/${id}/entries?cursor=${cursor.slice(0, -3)}abc`), 400, /^cursor:/);
    const next = await call('GET', `/v2.7/email-validations/${id}/entries?cursor=${cursor}`);
    expect(next.body.data.map((e: any) => e.status)).toEqual(Array(5).fill('Duplicate'));
  });

  it('303 to the page that holds an entry, pages aligned on the limit; 404 outside the job', async () => {
    const located = await call('GET', `/v2.7/email-validations/${id}/entries/17?limit=5`);
    expect(located.status).toBe(303);
    const page = await call('GET', located.headers.get('location')!);
    expect(page.body.data.map((e: any) => e.index)).toEqual([15, 16, 17, 18, 19]);
    const firstPage = await call('GET', `/v2.7/email-validations/${id}/entries/3`);
    expect(firstPage.headers.get('location')).toBe(`/v2.7/email-validations/${id}/entries?limit=100`);
    expectProblem(await call('GET', `/v2.7/email-validations/${id}/entries/25`), 404);
    expectProblem(await call('GET', `/v2.7/email-validations/${id}/entries/x`), 404);
  });

  it('404 for an unknown id; root reads and deletes another owner\'s job; 410 once deleted; DELETE 200 then 410', async () => {
    expectProblem(await call('GET', `/v2.7/email-validations/${randomUUID()}`), 404);
    expectProblem(await call('GET', '/v2.7/email-validations/not-an-id'), 404);
    const foreign = await server.store.createJob(
      { id: randomUUID(), owner: randomUUID(), clientIP: '192.0.2.1', quality: 'Standard', deduplication: 'Off', interface: 'v2', createdOn: new Date().toISOString() },
      [{ inputData: 'x@quick-srv.com' }],
    );
    // Root holds every permission of the account (users' jobs: test/server/accounts.test.ts).
    expect((await call('GET', `/v2.7/email-validations/${foreign.id}/overview`)).body.id).toBe(foreign.id);
    expect((await call('DELETE', `/v2.7/email-validations/${foreign.id}`)).status).toBe(200);
    const job = await call('POST', '/v2.7/email-validations?waitTime=10000', { entries: quickEntries(1) });
    const path = `/v2.7/email-validations/${job.body.overview.id}`;
    const deleted = await call('DELETE', path);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toBeUndefined();
    expectProblem(await call('DELETE', path), 410);
    for (const resource of ['', '/overview', '/entries', '/entries/0']) expectProblem(await call('GET', `${path}${resource}`), 410);
    expectProblem(await call('DELETE', `/v2.7/email-validations/${randomUUID()}`), 404);
  });

  it('deletes a job while it runs: it is stopped, then gone', async () => {
    const job = await call('POST', '/v2.7/email-validations', { entries: [{ inputData: 'alice@slow-srv.com' }] });
    expect(job.status).toBe(202);
    const path = `/v2.7/email-validations/${job.body.overview.id}`;
    expect((await call('DELETE', path)).status).toBe(200);
    expectProblem(await call('GET', path), 410);
  });

  it('405 with Allow for a known path with another method; 404 for an unknown path', async () => {
    const answer = await call('PUT', `/v2.7/email-validations/${id}`, {});
    expectProblem(answer, 405);
    expect(answer.headers.get('allow')).toBe('GET, DELETE, HEAD');
    expect((await call('DELETE', '/v2.7/email-validations')).headers.get('allow')).toBe('GET, POST, HEAD');
    expectProblem(await call('GET', '/v2.7/nothing-here'), 404);
    expectProblem(await call('GET', '/v3.0/email-validations'), 404);
  });
});

describe('the job list', () => {
  it('lists the caller\'s jobs newest first, paged, with filters and sort', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await call('POST', '/v2.7/email-validations?waitTime=10000', { entries: quickEntries(1), name: `list ${i}` })).body.overview.id);
    }
    const page = await call('GET', '/v2.7/email-validations?limit=2');
    expect(page.status).toBe(200);
    expect(page.body.data.map((o: any) => o.id)).toEqual([ids[2], ids[1]]);
    expect(page.body.meta.isTruncated).toBe(true);
    const next = await call('GET', `/v2.7/email-validations?cursor=${encodeURIComponent(page.body.meta.cursor)}`);
    expect(next.body.data[0].id).toBe(ids[0]);
    const oldest = await call('GET', '/v2.7/email-validations?sort=createdOn&limit=1000');
    const all = oldest.body.data.map((o: any) => o.id);
    expect(all.indexOf(ids[0])).toBeLessThan(all.indexOf(ids[2]));
    expect(oldest.body.data.every((o: any) => o.status !== 'Deleted')).toBe(true);
    const deleted = await call('GET', '/v2.7/email-validations?status=Deleted');
    expect(deleted.body.data.length).toBeGreaterThan(0);
    expect(deleted.body.data.every((o: any) => o.status === 'Deleted')).toBe(true);
    const today = new Date().toISOString().slice(0, 10);
    expect((await call('GET', `/v2.7/email-validations?createdOn=${today}&limit=1000`)).body.data.length).toBe(all.length);
    expect((await call('GET', '/v2.7/email-validations?createdOn:until=2000-01-01')).body.data).toEqual([]);
    expectProblem(await call('GET', '/v2.7/email-validations?sort=name'), 400, /^sort:/);
    expectProblem(await call('GET', '/v2.7/email-validations?createdOn=yesterday'), 400, /^createdOn:/);
    expectProblem(await call('GET', '/v2.7/email-validations?status=Running'), 400, /^status:/);
  });
});

describe('the official client (npm verifalia), unmodified', () => {
  it('submits with waiting, polls, lists, reads every entry page and deletes', async () => {
    const client = new VerifaliaRestClient({ username: USER, password: PASSWORD, baseUris: [origin] });
    const wait = Object.assign(new WaitOptions(), { pollWaitTime: 5_000 });
    const entries = Array.from({ length: 250 }, (_, i) => ({ inputData: `${['alice', 'bob', 'nobody'][i % 3]}@quick-srv.com`, custom: String(i) }));
    const job = await client.emailValidations.submit({ entries, quality: 'High', deduplication: 'Off' }, wait);
    expect(job!.overview.status).toBe('Completed');
    expect(job!.entries).toHaveLength(250); // every page, followed by the client
    expect(job!.entries.map((e) => e.custom)).toEqual(entries.map((e) => e.custom));
    expect(job!.entries.filter((e) => e.status === 'MailboxDoesNotExist')).toHaveLength(83);
    const again = await client.emailValidations.get(job!.overview.id, wait);
    expect(again!.entries).toHaveLength(250);
    const listed: string[] = [];
    for await (const overview of client.emailValidations.list({} as never)) listed.push(overview.id);
    expect(listed).toContain(job!.overview.id);
    await client.emailValidations.delete(job!.overview.id);
    expect(await client.emailValidations.get(job!.overview.id)).toBeNull();
  });
});
