// Permissions of users through a real listening server: which rules allow which job endpoint of 2.7, 2.6 and 1.4,
// the order of a submission's checks, someone else's jobs (404 as if unknown without account-wide read), the job list
// and its `owner` parameter, the rule grammar as given at user creation, a BrowserApp's fixed rules, changes that
// count from the next request (HTTP Basic and tokens issued before), `users:read:my`, and no answer ever holding
// another user's data. Jobs run offline (syntax checks only) in a real SQLite file.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../packages/server/src/server/app.js';
import { callServer, fileImport, type Answer, type Call } from './http-client.js';

const ROOT = 'root';
const ROOT_PASSWORD = 'permissions test root password';
const basic = (username: string, password: string): string => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const ROOT_AUTH = basic(ROOT, ROOT_PASSWORD);
const MAX_ENTRIES = 20;
const VERSIONS = ['v2.7', 'v2.6'] as const;

let dir: string;
let app: FastifyInstance;
let origin: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-permissions-'));
  app = await createServer({
    dataDir: join(dir, 'data'),
    rootUsername: ROOT,
    rootPassword: ROOT_PASSWORD,
    verifier: { checks: 'syntax' },
    maxEntriesPerJob: MAX_ENTRIES,
    fileImport: { tempDir: dir },
  });
  origin = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, request: Call = {}): Promise<Answer> => callServer(origin, ROOT_AUTH, method, path, request);

function expectProblem(answer: Answer, status: number, type: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ status, type });
}
const expectForbidden = (answer: Answer): void => expectProblem(answer, 403, '/problems/forbidden');
const expectNotFound = (answer: Answer): void => expectProblem(answer, 404, '/problems/not-found');

// ---------------------------------------------------------------------------------------------------------------
// Users and jobs

interface TestUser {
  readonly id: string;
  readonly username: string;
  readonly password: string;
  /** Its HTTP Basic credentials. */
  readonly auth: string;
}

let usersMade = 0;

/** A user created by root; `rules` absent: the defaults of its type. */
async function createUser(rules?: readonly string[], type: 'Standard' | 'Administrator' = 'Standard'): Promise<TestUser> {
  usersMade += 1;
  const username = `user-${usersMade}`;
  const password = `password of user ${usersMade}`;
  const answer = await call('POST', '/v2.7/users', {
    json: {
      type,
      displayName: `User ${usersMade}`,
      authentication: { password: { username, password } },
      ...(rules !== undefined && { authorization: { rules } }),
    },
  });
  expect(answer.status, answer.text).toBe(200);
  return { id: answer.body.id, username, password, auth: basic(username, password) };
}

/** Root changes a user with a JSON Patch. */
async function patchUser(user: { readonly id: string }, operations: readonly unknown[]): Promise<void> {
  const answer = await call('PATCH', `/v2.7/users/${user.id}`, { raw: JSON.stringify(operations), type: 'application/json-patch+json' });
  expect(answer.status, answer.text).toBe(200);
}

const setRules = (user: TestUser, rules: readonly string[]): Promise<void> =>
  patchUser(user, [{ op: 'replace', path: '/authorization/rules', value: rules }]);

type EntryInput = string | { readonly inputData: string; readonly custom?: string };

/** A job submitted (JSON, 2.7) by `auth`, complete when answered: its id. */
async function submit(auth: string, entries: readonly EntryInput[] = ['someone@example.com'], settings: Record<string, unknown> = {}): Promise<string> {
  const json = { entries: entries.map((entry) => (typeof entry === 'string' ? { inputData: entry } : entry)), ...settings };
  const answer = await call('POST', '/v2.7/email-validations?waitTime=10000', { auth, json });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.overview.id;
}

/** The ids of the jobs root sees for `owner` (every page). */
async function jobIdsOf(owner: string, auth = ROOT_AUTH): Promise<string[]> {
  const answer = await call('GET', `/v2.7/email-validations?owner=${encodeURIComponent(owner)}&limit=1000`, { auth });
  expect(answer.status, answer.text).toBe(200);
  expect(answer.body.meta.isTruncated).toBe(false);
  return answer.body.data.map((job: { id: string }) => job.id);
}

// ---------------------------------------------------------------------------------------------------------------
// The job endpoints

type Operation = 'read' | 'write' | 'delete';

interface Endpoint {
  readonly name: string;
  readonly operation: Operation;
  /** Its status when allowed. */
  readonly ok: number;
  /** Whether it acts on one job, whose id it is given. */
  readonly onJob: boolean;
  readonly send: (auth: string, job: string) => Promise<Answer>;
  /** More checks of an allowed answer. */
  readonly check?: (answer: Answer) => void;
}

const TABLE_ENTRY = { entries: [{ inputData: 'table@example.com' }] };

const ENDPOINTS: readonly Endpoint[] = [
  ...VERSIONS.flatMap((v): Endpoint[] => [
    {
      name: `POST /${v}/email-validations (JSON)`,
      operation: 'write',
      ok: 200,
      onJob: false,
      send: (auth) => call('POST', `/${v}/email-validations?waitTime=10000`, { auth, json: TABLE_ENTRY }),
    },
    {
      name: `POST /${v}/email-validations (file import)`,
      operation: 'write',
      ok: 200,
      onJob: false,
      send: (auth) => call('POST', `/${v}/email-validations?waitTime=10000`, { auth, ...fileImport(['imported@example.com']) }),
    },
    {
      name: `GET /${v}/email-validations`,
      operation: 'read',
      ok: 200,
      onJob: false,
      send: (auth) => call('GET', `/${v}/email-validations`, { auth }),
    },
    {
      name: `GET /${v}/email-validations/{id}`,
      operation: 'read',
      ok: 200,
      onJob: true,
      send: (auth, job) => call('GET', `/${v}/email-validations/${job}`, { auth }),
      check: (answer) => expect(answer.body.entries.data.length).toBeGreaterThan(0),
    },
    {
      name: `GET /${v}/email-validations/{id}/overview`,
      operation: 'read',
      ok: 200,
      onJob: true,
      send: (auth, job) => call('GET', `/${v}/email-validations/${job}/overview`, { auth }),
    },
    {
      name: `GET /${v}/email-validations/{id}/entries`,
      operation: 'read',
      ok: 200,
      onJob: true,
      send: (auth, job) => call('GET', `/${v}/email-validations/${job}/entries`, { auth }),
    },
    {
      name: `GET /${v}/email-validations/{id}/entries/{index}`,
      operation: 'read',
      ok: 303,
      onJob: true,
      send: (auth, job) => call('GET', `/${v}/email-validations/${job}/entries/0`, { auth }),
      check: (answer) => expect(answer.headers.get('location')).toMatch(/\/entries\?limit=/),
    },
    {
      name: `GET /${v}/email-validations/{id}/entries (export, text/csv)`,
      operation: 'read',
      ok: 200,
      onJob: true,
      send: (auth, job) => call('GET', `/${v}/email-validations/${job}/entries`, { auth, accept: 'text/csv' }),
      check: (answer) => expect(answer.headers.get('content-type')).toMatch(/^text\/csv/),
    },
    {
      name: `DELETE /${v}/email-validations/{id}`,
      operation: 'delete',
      ok: 200,
      onJob: true,
      send: (auth, job) => call('DELETE', `/${v}/email-validations/${job}`, { auth }),
    },
  ]),
  {
    name: 'POST /v1.4/email-validations',
    operation: 'write',
    ok: 202,
    onJob: false,
    send: (auth) => call('POST', '/v1.4/email-validations', { auth, json: TABLE_ENTRY }),
  },
  {
    name: 'GET /v1.4/email-validations/{id}',
    operation: 'read',
    ok: 200,
    onJob: true,
    send: (auth, job) => call('GET', `/v1.4/email-validations/${job}`, { auth }),
    check: (answer) => expect(answer.body.entries.length).toBeGreaterThan(0),
  },
  {
    name: 'DELETE /v1.4/email-validations/{id}',
    operation: 'delete',
    ok: 200,
    onJob: true,
    send: (auth, job) => call('DELETE', `/v1.4/email-validations/${job}`, { auth }),
  },
];

const JOB_ENDPOINTS = ENDPOINTS.filter((endpoint) => endpoint.onJob);

/** Sends `endpoint` for `auth` on `job`, expecting it allowed (its status and checks) or refused with a 403 problem. */
async function expectAllowed(endpoint: Endpoint, auth: string, job: string, allowed: boolean): Promise<Answer> {
  const answer = await endpoint.send(auth, job);
  if (allowed) {
    expect(answer.status, `${endpoint.name}: ${answer.text}`).toBe(endpoint.ok);
    endpoint.check?.(answer);
  } else {
    expect(answer.status, `${endpoint.name}: ${answer.text}`).toBe(403);
    expectForbidden(answer);
  }
  return answer;
}

// ---------------------------------------------------------------------------------------------------------------

describe("rules and each job endpoint, on the caller's own jobs", () => {
  const FULL = ['email-validations:*:my'];
  // [rules, the operations they allow on one's own jobs]
  const ROWS: ReadonlyArray<{ rules: readonly string[]; allows: readonly Operation[] }> = [
    { rules: [], allows: [] },
    { rules: ['email-validations:read:my'], allows: ['read'] },
    { rules: ['email-validations:delete:my'], allows: ['delete'] },
    { rules: ['email-validations:write:my', 'email-validations:read:my'], allows: ['write', 'read'] },
    { rules: ['email-validations:read:my', 'email-validations:delete:my'], allows: ['read', 'delete'] },
    { rules: ['email-validations:*:my'], allows: ['write', 'read', 'delete'] },
    // The account scope includes one's own jobs.
    { rules: ['email-validations:read', 'email-validations:delete'], allows: ['read', 'delete'] },
    { rules: ['email-validations'], allows: ['write', 'read', 'delete'] },
    { rules: ['users', 'credits'], allows: [] },
  ];
  let user: TestUser;
  let readable: string;

  beforeAll(async () => {
    user = await createUser(FULL);
    readable = await submit(user.auth, ['readable@example.com', 'second@example.com']);
  });

  for (const { rules, allows } of ROWS) {
    it(`${JSON.stringify(rules)} allows ${allows.length === 0 ? 'nothing' : allows.join(', ')}`, async () => {
      // Jobs to delete, submitted while the user may.
      await setRules(user, FULL);
      const doomed = await Promise.all(ENDPOINTS.filter((e) => e.operation === 'delete').map(() => submit(user.auth)));
      await setRules(user, rules);
      const before = await jobIdsOf(user.id);
      let submitted = 0;
      let deleted = 0;
      for (const endpoint of ENDPOINTS) {
        const allowed = allows.includes(endpoint.operation);
        const job = endpoint.operation === 'delete' && allowed ? doomed.pop()! : readable;
        const answer = await expectAllowed(endpoint, user.auth, job, allowed);
        if (endpoint.operation === 'write' && allowed) {
          submitted += 1;
          expect(answer.body.overview?.id ?? answer.body.uniqueID).toMatch(/^[0-9a-f-]{36}$/);
        }
        if (endpoint.operation === 'delete' && allowed) {
          deleted += 1;
          expect((await call('GET', `/v2.7/email-validations/${job}/overview`)).status).toBe(410);
        }
      }
      // A refused submission leaves no job behind; an allowed one is the caller's. Deleted jobs are no longer listed.
      const after = await jobIdsOf(user.id);
      expect(after.length - before.length).toBe(submitted - deleted);
    });
  }
});

describe('a submitter that may write but not read its jobs', () => {
  for (const rules of [['email-validations:write:my'], ['email-validations:write:my', 'email-validations:delete:my'], ['email-validations', '-email-validations:read:my']]) {
    it(`${JSON.stringify(rules)}: its job is accepted, 202 with Location and the overview, no results; reading it is 403`, async () => {
      const user = await createUser(rules);
      const submissions = [
        ...VERSIONS.flatMap((v) => [
          () => call('POST', `/${v}/email-validations?waitTime=10000`, { auth: user.auth, json: { entries: [{ inputData: 'hidden@example.com' }] } }),
          () => call('POST', `/${v}/email-validations?waitTime=10000`, { auth: user.auth, ...fileImport(['hidden@example.com']) }),
        ]),
        () => call('POST', '/v1.4/email-validations', { auth: user.auth, json: { entries: [{ inputData: 'hidden@example.com' }] } }),
      ];
      const ids: string[] = [];
      for (const send of submissions) {
        const answer = await send();
        expect(answer.status, answer.text).toBe(202);
        const id: string = answer.body.overview?.id ?? answer.body.uniqueID;
        expect(answer.headers.get('location')).toMatch(new RegExp(`/v(2\\.[67]|1\\.4)/email-validations/${id}$`));
        expect(answer.body.entries).toBeUndefined();
        expect(answer.text).not.toContain('hidden@example.com');
        ids.push(id);
      }
      for (const v of VERSIONS) expect((await call('GET', `/${v}/email-validations?waitTime=0`, { auth: user.auth })).status).toBe(403);
      for (const id of ids) {
        expectForbidden(await call('GET', `/v2.7/email-validations/${id}`, { auth: user.auth }));
        expectForbidden(await call('GET', `/v1.4/email-validations/${id}`, { auth: user.auth }));
      }
      expect((await jobIdsOf(user.id)).sort()).toEqual([...ids].sort());
    });
  }
});

describe("a submission's checks, in order: write permission (403), validation (400), retention permission (403)", () => {
  const ENTRY = [{ inputData: 'order@example.com' }];
  const TOO_MANY = Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => ({ inputData: `many${i}@example.com` }));
  let reader: TestUser;
  let writer: TestUser;

  beforeAll(async () => {
    // No write: reads only. Write and read of its own, no delete (so no retention).
    reader = await createUser(['email-validations:read:my']);
    writer = await createUser(['email-validations:write:my', 'email-validations:read:my']);
  });

  it('without write: 403 whatever the body, before it is read (malformed JSON, an invalid field, a bad file import)', async () => {
    for (const v of [...VERSIONS, 'v1.4']) {
      expectForbidden(await call('POST', `/${v}/email-validations`, { auth: reader.auth, raw: '{"entries": [' }));
      expectForbidden(await call('POST', `/${v}/email-validations`, { auth: reader.auth, json: { entries: 'none', quality: 'Best' } }));
      expectForbidden(await call('POST', `/${v}/email-validations`, { auth: reader.auth, json: { entries: ENTRY, retention: '1:00:00' } }));
      expectForbidden(await call('POST', `/${v}/email-validations`, { auth: reader.auth, json: { entries: TOO_MANY } }));
    }
    expectForbidden(await call('POST', '/v2.7/email-validations', { auth: reader.auth, ...fileImport(['a@example.com'], { quality: 'Best' }) }));
    expectForbidden(await call('POST', '/v2.7/email-validations', { auth: reader.auth, raw: 'not multipart', type: 'multipart/form-data; boundary=x' }));
    expect(await jobIdsOf(reader.id)).toEqual([]);
  });

  it('with write, no delete: an invalid submission is 400 before its retention is 403', async () => {
    for (const v of VERSIONS) {
      const post = (json: unknown): Promise<Answer> => call('POST', `/${v}/email-validations?waitTime=10000`, { auth: writer.auth, json });
      expectProblem(await post({ entries: [], retention: '1:00:00' }), 400, '/problems/invalid-field');
      expectProblem(await post({ entries: [{ inputData: 42 }], retention: '1:00:00' }), 400, '/problems/invalid-field');
      expectProblem(await post({ entries: ENTRY, quality: 'Best', retention: '1:00:00' }), 400, '/problems/invalid-field');
      // The retention itself is validated first: a malformed or out-of-range one is 400.
      const malformed = await post({ entries: ENTRY, retention: 'soon' });
      expectProblem(malformed, 400, '/problems/invalid-field');
      expect(malformed.body.detail).toMatch(/^retention:/);
      expectProblem(await post({ entries: ENTRY, retention: '0:01:00' }), 400, '/problems/invalid-field');
      // maxEntriesPerJob (400) comes before the retention permission too.
      const many = await post({ entries: TOO_MANY, retention: '1:00:00' });
      expectProblem(many, 400, '/problems/invalid-field');
      expect(many.body.detail).toMatch(/^entries:/);
      // A valid submission with a retention: the permission is what is missing.
      const refused = await post({ entries: ENTRY, retention: '1:00:00' });
      expectForbidden(refused);
      // Without a retention (absent or null), it is accepted.
      expect((await post({ entries: ENTRY })).status).toBe(200);
      expect((await post({ entries: ENTRY, retention: null })).status).toBe(200);
    }
    // A file import's retention (in its settings) likewise.
    expectForbidden(await call('POST', '/v2.7/email-validations', { auth: writer.auth, ...fileImport(['a@example.com'], { retention: '1:00:00' }) }));
    const badRetention = await call('POST', '/v2.7/email-validations', { auth: writer.auth, ...fileImport(['a@example.com'], { retention: 'soon' }) });
    expectProblem(badRetention, 400, '/problems/invalid-field');
    expect(badRetention.body.detail).toMatch(/^settings\.retention:/);
    // Only the four accepted submissions made jobs.
    expect(await jobIdsOf(writer.id)).toHaveLength(4);
  });

  it('a retention needs email-validations:delete:my or email-validations:delete (or an administrator, or root)', async () => {
    // Its own jobs' delete, the account's, and the same through the aliases.
    for (const rule of ['email-validations:delete:my', 'email-validations:delete', 'email-verifications:delete:own']) {
      const user = await createUser(['email-validations:write:my', 'email-validations:read:my', rule]);
      const id = await submit(user.auth, ['kept@example.com'], { retention: '1:00:00' });
      const overview = await call('GET', `/v2.7/email-validations/${id}/overview`, { auth: user.auth });
      expect(overview.body.retention).toBe('01:00:00');
      const fromFile = await call('POST', '/v2.7/email-validations?waitTime=10000', { auth: user.auth, ...fileImport(['f@example.com'], { retention: '2:00:00' }) });
      expect(fromFile.status, fromFile.text).toBe(200);
      expect(fromFile.body.overview.retention).toBe('02:00:00');
    }
    const admin = await createUser(undefined, 'Administrator');
    expect((await call('GET', `/v2.7/email-validations/${await submit(admin.auth, undefined, { retention: '1:00:00' })}/overview`, { auth: admin.auth })).body.retention).toBe('01:00:00');
    expect((await call('GET', `/v2.7/email-validations/${await submit(ROOT_AUTH, undefined, { retention: '1:00:00' })}/overview`)).body.retention).toBe('01:00:00');
  });
});

describe("someone else's jobs", () => {
  let owner: TestUser;
  /** A job of `owner` that stays. */
  let theirs: string;
  /** A job of `owner` it deleted. */
  let theirsDeleted: string;

  beforeAll(async () => {
    owner = await createUser();
    theirs = await submit(owner.auth, ['theirs@example.com', 'theirs2@example.com']);
    theirsDeleted = await submit(owner.auth, ['gone@example.com']);
    expect((await call('DELETE', `/v2.7/email-validations/${theirsDeleted}`, { auth: owner.auth })).status).toBe(200);
  });

  /** An answer with the job id in its detail written `<id>`, and without its request id: what an unknown id answers. */
  const shape = (answer: Answer, id: string) => ({
    status: answer.status,
    type: answer.headers.get('content-type'),
    body: { ...answer.body, requestId: undefined, detail: String(answer.body?.detail).replaceAll(id, '<id>') },
  });

  it('404 on every job route, exactly as an unknown id, for users without account-wide read (a deleted job too)', async () => {
    const without: ReadonlyArray<readonly string[]> = [
      ['email-validations:*:my'],
      // Account-wide delete (or write) without account-wide read: the job still does not exist for it.
      ['email-validations:*:my', 'email-validations:delete'],
      ['email-validations:*:my', 'email-validations:write'],
      ['email-validations:read:*', 'email-validations:delete:*'],
      ['email-validations', '-email-validations:read'],
    ];
    for (const rules of without) {
      const user = await createUser(rules);
      for (const endpoint of JOB_ENDPOINTS) {
        const unknown = randomUUID();
        const expected = shape(await endpoint.send(user.auth, unknown), unknown);
        expect(expected.status, endpoint.name).toBe(404);
        for (const job of [theirs, theirsDeleted, theirs.toUpperCase()]) {
          const answer = await endpoint.send(user.auth, job);
          expectNotFound(answer);
          expect(shape(answer, job), `${JSON.stringify(rules)} ${endpoint.name}`).toEqual(expected);
        }
      }
    }
    // HEAD answers as GET does.
    const plain = await createUser();
    for (const v of VERSIONS) {
      const head = await call('HEAD', `/${v}/email-validations/${theirs}`, { auth: plain.auth });
      expect(head.status).toBe(404);
      expect(head.text).toBe('');
    }
    // Nothing was deleted.
    expect((await call('GET', `/v2.7/email-validations/${theirs}/overview`, { auth: owner.auth })).status).toBe(200);
  });

  it('with account-wide read: readable (a deleted one is 410), and deleting needs account-wide delete (403 without)', async () => {
    const reader = await createUser(['email-validations:*:my', 'email-validations:read']);
    for (const endpoint of JOB_ENDPOINTS) {
      await expectAllowed(endpoint, reader.auth, theirs, endpoint.operation === 'read');
      const answer = await endpoint.send(reader.auth, theirsDeleted);
      if (endpoint.operation === 'read') expectProblem(answer, 410, '/problems/gone');
      else expectForbidden(answer);
    }
    // A denial of account-wide delete beside a grant of every operation.
    const denied = await createUser(['email-validations', '-email-validations:delete']);
    for (const endpoint of JOB_ENDPOINTS.filter((e) => e.operation === 'delete')) expectForbidden(await endpoint.send(denied.auth, theirs));
    expect((await call('GET', `/v2.7/email-validations/${theirs}/overview`, { auth: owner.auth })).status).toBe(200);
  });

  it('with account-wide read and delete, as an administrator and as root: read and delete any job', async () => {
    const deleter = await createUser(['email-validations:read', 'email-validations:delete']);
    const admin = await createUser(['email-validations:write:my'], 'Administrator');
    for (const auth of [deleter.auth, admin.auth, ROOT_AUTH]) {
      for (const endpoint of JOB_ENDPOINTS) {
        const job = endpoint.operation === 'delete' ? await submit(owner.auth) : theirs;
        await expectAllowed(endpoint, auth, job, true);
        if (endpoint.operation === 'delete') {
          expectProblem(await call('GET', `/v2.7/email-validations/${job}`, { auth: owner.auth }), 410, '/problems/gone');
        }
      }
    }
  });
});

describe('GET /email-validations: the caller’s jobs; owner=<user id> and owner=* need account-wide read', () => {
  let ann: TestUser;
  let bob: TestUser;
  let reader: TestUser;
  const jobs: Record<'ann' | 'bob' | 'reader' | 'root', string[]> = { ann: [], bob: [], reader: [], root: [] };

  beforeAll(async () => {
    ann = await createUser();
    bob = await createUser();
    reader = await createUser(['email-validations:*:my', 'email-validations:read']);
    for (let i = 0; i < 3; i++) {
      jobs.ann.push(await submit(ann.auth, [`ann${i}@example.com`]));
      jobs.bob.push(await submit(bob.auth, [`bob${i}@example.com`]));
    }
    jobs.reader.push(await submit(reader.auth));
    jobs.root.push(await submit(ROOT_AUTH));
  });

  const list = async (auth: string, query = ''): Promise<Answer> => call('GET', `/v2.7/email-validations?limit=1000${query}`, { auth });
  const idsOf = (answer: Answer): string[] => {
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data.map((job: { id: string }) => job.id).sort();
  };

  it('lists only the caller’s own jobs, in 2.7 and 2.6, whatever its rules', async () => {
    for (const v of VERSIONS) {
      expect(idsOf(await call('GET', `/${v}/email-validations?limit=1000`, { auth: ann.auth }))).toEqual([...jobs.ann].sort());
      expect(idsOf(await call('GET', `/${v}/email-validations?limit=1000`, { auth: bob.auth }))).toEqual([...jobs.bob].sort());
      // Account-wide read does not widen the default listing.
      expect(idsOf(await call('GET', `/${v}/email-validations?limit=1000`, { auth: reader.auth }))).toEqual(jobs.reader);
    }
    // A user id in upper case is the same id, as a job id is.
    for (const owner of [ann.id, ann.id.toUpperCase()]) expect(idsOf(await list(ann.auth, `&owner=${owner}`))).toEqual([...jobs.ann].sort());
    // Root's own listing is its own jobs too.
    const rootList = idsOf(await list(ROOT_AUTH));
    expect(rootList).toEqual(expect.arrayContaining(jobs.root));
    for (const id of [...jobs.ann, ...jobs.bob, ...jobs.reader]) expect(rootList).not.toContain(id);
  });

  it('owner=<another user> and owner=*: 403 without account-wide read', async () => {
    for (const v of VERSIONS) {
      for (const owner of [bob.id, '*', randomUUID(), 'root']) {
        expectForbidden(await call('GET', `/${v}/email-validations?owner=${encodeURIComponent(owner)}`, { auth: ann.auth }));
      }
    }
  });

  it('with account-wide read (and as an administrator or root): that user’s jobs, or every job of the account', async () => {
    const admin = await createUser([], 'Administrator');
    for (const auth of [reader.auth, admin.auth, ROOT_AUTH]) {
      expect(idsOf(await list(auth, `&owner=${bob.id}`))).toEqual([...jobs.bob].sort());
      expect(idsOf(await list(auth, `&owner=${bob.id.toUpperCase()}`))).toEqual([...jobs.bob].sort());
      expect(idsOf(await list(auth, `&owner=${ann.id}`))).toEqual([...jobs.ann].sort());
      const every = idsOf(await list(auth, '&owner=*'));
      expect(every).toEqual(expect.arrayContaining([...jobs.ann, ...jobs.bob, ...jobs.reader, ...jobs.root]));
      expect(idsOf(await list(auth, `&owner=${randomUUID()}`))).toEqual([]);
    }
    // Each listed job names its owner.
    const answer = await list(reader.auth, `&owner=${bob.id}`);
    expect(answer.body.data.every((job: { owner: string }) => job.owner === bob.id)).toBe(true);
  });

  it('a cursor of another listing does not carry its owner to a caller without account-wide read', async () => {
    const page = await call('GET', `/v2.7/email-validations?owner=${bob.id}&limit=1`, { auth: reader.auth });
    expect(page.status).toBe(200);
    const cursor = page.body.meta.cursor as string;
    expect(cursor).toEqual(expect.any(String));
    // The cursor names a listing of Bob's jobs: Ann's own listing refuses it; with owner=Bob, she may not list at all.
    const mine = await call('GET', `/v2.7/email-validations?cursor=${encodeURIComponent(cursor)}`, { auth: ann.auth });
    expect(mine.status).toBe(400);
    expectForbidden(await call('GET', `/v2.7/email-validations?owner=${bob.id}&cursor=${encodeURIComponent(cursor)}`, { auth: ann.auth }));
    for (const id of jobs.bob) expect(mine.text).not.toContain(id);
  });
});

describe('the rule grammar, as rules given at creation', () => {
  let other: TestUser;
  let otherJob: string;

  beforeAll(async () => {
    other = await createUser();
    otherJob = await submit(other.auth, ['other@example.com']);
  });

  // What each rule list allows: submitting, reading and deleting one's own job, reading and deleting someone else's
  // (404: it does not exist for the caller), and listing the users.
  interface Expected {
    readonly submit: 200 | 403;
    readonly readOwn?: 200 | 403;
    readonly deleteOwn?: 200 | 403;
    readonly readOther: 200 | 404;
    readonly deleteOther: 200 | 403 | 404;
    readonly listUsers: 200 | 403;
  }
  const OWN_ONLY: Expected = { submit: 200, readOwn: 200, deleteOwn: 200, readOther: 404, deleteOther: 404, listUsers: 403 };
  const ROWS: ReadonlyArray<readonly [readonly string[], Expected]> = [
    // A denial wins over a grant, in either order.
    [['email-validations', '-email-validations:delete'], { submit: 200, readOwn: 200, deleteOwn: 403, readOther: 200, deleteOther: 403, listUsers: 403 }],
    [['-email-validations:delete', 'email-validations'], { submit: 200, readOwn: 200, deleteOwn: 403, readOther: 200, deleteOther: 403, listUsers: 403 }],
    // A denial scoped to one's own jobs leaves the account's.
    [['-email-validations:delete:my', 'email-validations'], { submit: 200, readOwn: 200, deleteOwn: 403, readOther: 200, deleteOther: 200, listUsers: 403 }],
    [['email-validations:*:my', '-*:delete'], { ...OWN_ONLY, deleteOwn: 403 }],
    // Wildcards: `*` any one value of its segment; a `*` scope is one's own (the account only by omitting the scope).
    [['*'], { submit: 200, readOwn: 200, deleteOwn: 200, readOther: 200, deleteOther: 200, listUsers: 200 }],
    [['*', '-users'], { submit: 200, readOwn: 200, deleteOwn: 200, readOther: 200, deleteOther: 200, listUsers: 403 }],
    [['*:*:my'], OWN_ONLY],
    [['email-validations:*:*'], OWN_ONLY],
    [['*:read', 'email-validations:write:my'], { submit: 200, readOwn: 200, deleteOwn: 403, readOther: 200, deleteOther: 403, listUsers: 200 }],
    // An omitted operation: every operation; an omitted scope: the account, which includes one's own.
    [['email-validations'], { submit: 200, readOwn: 200, deleteOwn: 200, readOther: 200, deleteOther: 200, listUsers: 403 }],
    [['email-validations:read', 'email-validations:write:my'], { submit: 200, readOwn: 200, deleteOwn: 403, readOther: 200, deleteOther: 403, listUsers: 403 }],
    [['email-validations:read'], { submit: 403, readOther: 200, deleteOther: 403, listUsers: 403 }],
    [['users', 'email-validations:*:my'], { ...OWN_ONLY, listUsers: 200 }],
    // Aliases: email-verifications for email-validations, own for my, in grants and denials alike.
    [['email-verifications:write:own', 'email-verifications:read:own'], { ...OWN_ONLY, deleteOwn: 403 }],
    [['email-verifications:*:own', '-email-validations:delete:my'], { ...OWN_ONLY, deleteOwn: 403 }],
    [['email-validations:*:my', '-email-verifications:delete:own'], { ...OWN_ONLY, deleteOwn: 403 }],
    [['email-verifications'], { submit: 200, readOwn: 200, deleteOwn: 200, readOther: 200, deleteOther: 200, listUsers: 403 }],
  ];

  for (const [rules, expected] of ROWS) {
    it(`${JSON.stringify(rules)}`, async () => {
      const user = await createUser(rules);
      const detail = await call('GET', `/v2.7/users/${user.id}`);
      // The rules read back as they were given.
      expect(detail.body.authorization.rules).toEqual(rules);
      const submitted = await call('POST', '/v2.7/email-validations?waitTime=10000', { auth: user.auth, json: TABLE_ENTRY });
      expect(submitted.status, submitted.text).toBe(expected.submit);
      if (expected.submit === 200) {
        const own = submitted.body.overview.id as string;
        expect((await call('GET', `/v2.7/email-validations/${own}`, { auth: user.auth })).status).toBe(expected.readOwn);
        expect((await call('DELETE', `/v1.4/email-validations/${own}`, { auth: user.auth })).status).toBe(expected.deleteOwn);
      } else {
        expectForbidden(submitted);
      }
      expect((await call('GET', `/v2.7/email-validations/${otherJob}/overview`, { auth: user.auth })).status).toBe(expected.readOther);
      const victim = expected.deleteOther === 200 ? await submit(other.auth) : otherJob;
      expect((await call('DELETE', `/v2.6/email-validations/${victim}`, { auth: user.auth })).status).toBe(expected.deleteOther);
      expect((await call('GET', '/v2.7/users', { auth: user.auth })).status).toBe(expected.listUsers);
    });
  }

  it("an administrator's rules are ignored: a denial of everything changes nothing", async () => {
    const admin = await createUser(['-*'], 'Administrator');
    expect((await call('GET', `/v2.7/users/${admin.id}`)).body.authorization.rules).toEqual(['-*']);
    const own = await submit(admin.auth, ['admin@example.com'], { retention: '1:00:00' });
    expect((await call('GET', `/v2.6/email-validations/${otherJob}/entries`, { auth: admin.auth })).status).toBe(200);
    expect((await call('GET', '/v2.7/email-validations?owner=*', { auth: admin.auth })).status).toBe(200);
    expect((await call('GET', '/v2.7/users', { auth: admin.auth })).status).toBe(200);
    expect((await call('DELETE', `/v1.4/email-validations/${await submit(other.auth)}`, { auth: admin.auth })).status).toBe(200);
    expect((await call('DELETE', `/v2.7/email-validations/${own}`, { auth: admin.auth })).status).toBe(200);
    // Made Standard, the same rules refuse everything.
    await patchUser(admin, [{ op: 'replace', path: '/type', value: 'Standard' }]);
    expectForbidden(await call('POST', '/v2.7/email-validations', { auth: admin.auth, json: TABLE_ENTRY }));
    expectNotFound(await call('GET', `/v2.7/email-validations/${otherJob}`, { auth: admin.auth }));
    expectForbidden(await call('GET', '/v2.7/users', { auth: admin.auth }));
  });

  it('a malformed rule, or an unknown resource, operation or scope: 400 naming authorization.rules[i], and no user made', async () => {
    const CASES: ReadonlyArray<readonly [readonly unknown[], number]> = [
      [['email-validations:read:my:extra'], 0],
      [['email-validations:read:my', 'bogus'], 1],
      [['email-validations:read:my', 'bogus:read'], 1],
      [['email-validations:fly'], 0],
      [['email-validations:my'], 0],
      [['email-validations:read:team'], 0],
      [['email-validations:read:account'], 0],
      [['email-validations::my'], 0],
      [['users:read-balance'], 0],
      [['credits:read:my'], 0],
      [['credits:read-balance:team'], 0],
      [['email-validations:*:my', ''], 1],
      [['-'], 0],
      [['--email-validations'], 0],
      [['Email-Validations:read:my'], 0],
      [[':read'], 0],
      [['email-validations:read:my', 'email-validations:write:my', 42], 2],
    ];
    const before = await call('GET', '/v2.7/users?limit=1000');
    for (const [rules, index] of CASES) {
      const answer = await call('POST', '/v2.7/users', {
        json: { type: 'Standard', displayName: 'Malformed', authentication: { password: { username: `malformed-${randomUUID()}`, password: 'a good password' } }, authorization: { rules } },
      });
      expectProblem(answer, 400, '/problems/invalid-field');
      expect(answer.body.detail, JSON.stringify(rules)).toMatch(new RegExp(`^authorization\\.rules\\[${index}\\]`));
    }
    // A change of rules is checked as a creation is.
    const user = await createUser();
    const patched = await call('PATCH', `/v2.7/users/${user.id}`, {
      raw: JSON.stringify([{ op: 'add', path: '/authorization/rules/-', value: 'email-validations:erase' }]),
      type: 'application/json-patch+json',
    });
    expectProblem(patched, 400, '/problems/invalid-field');
    expect(patched.body.detail).toMatch(/^authorization\.rules\[1\]/);
    expect((await call('GET', `/v2.7/users/${user.id}`)).body.authorization.rules).toEqual(['email-validations:*:my']);
    const after = await call('GET', '/v2.7/users?limit=1000');
    expect(after.body.data.length).toBe(before.body.data.length + 1);
  });
});

describe('a BrowserApp: its fixed rules', () => {
  let key: string;
  let auth: string;
  let appId: string;

  beforeAll(async () => {
    const created = await call('POST', '/v2.7/users', { json: { type: 'BrowserApp', displayName: 'Web shop' } });
    expect(created.status, created.text).toBe(200);
    appId = created.body.id;
    const detail = await call('GET', `/v2.7/users/${appId}`);
    expect(detail.body.authorization.rules).toEqual(['email-validations:write:my', 'email-validations:read:my']);
    key = detail.body.authentication.password.username;
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    auth = basic(key, '');
  });

  it('submits and reads its own jobs (2.7, 2.6 and 1.4), lists them', async () => {
    const mine: string[] = [];
    for (const endpoint of ENDPOINTS.filter((e) => e.operation === 'write')) {
      const answer = await expectAllowed(endpoint, auth, '', true);
      mine.push(answer.body.overview?.id ?? answer.body.uniqueID);
    }
    for (const endpoint of ENDPOINTS.filter((e) => e.operation === 'read')) await expectAllowed(endpoint, auth, mine[0]!, true);
    const listed = await call('GET', '/v2.7/email-validations?limit=1000', { auth });
    expect(listed.body.data.map((job: { id: string }) => job.id).sort()).toEqual([...mine].sort());
  });

  it('may not delete its jobs, give a retention, list jobs of others, read another user’s job, or list users (403)', async () => {
    const own = await submit(auth);
    for (const endpoint of ENDPOINTS.filter((e) => e.operation === 'delete')) expectForbidden(await endpoint.send(auth, own));
    expectForbidden(await call('POST', '/v2.7/email-validations', { auth, json: { ...TABLE_ENTRY, retention: '1:00:00' } }));
    expectForbidden(await call('GET', '/v2.7/email-validations?owner=*', { auth }));
    const someone = await createUser();
    expectNotFound(await call('GET', `/v2.7/email-validations/${await submit(someone.auth)}`, { auth }));
    expectForbidden(await call('GET', '/v2.7/users', { auth }));
    // Its own user detail needs users:read:my, which it has not; someone else's does not exist for it.
    expectForbidden(await call('GET', `/v2.7/users/${appId}`, { auth }));
    expectNotFound(await call('GET', `/v2.7/users/${someone.id}`, { auth }));
    expectForbidden(await call('POST', '/v2.7/users', { auth, json: { type: 'BrowserApp', displayName: 'Another' } }));
    expect((await call('GET', `/v2.7/email-validations/${own}/overview`, { auth })).status).toBe(200);
  });

  it('a password beside its key is refused (401)', async () => {
    expectProblem(await call('GET', '/v2.7/email-validations', { auth: basic(key, 'x') }), 401, '/problems/unauthorized');
  });
});

describe('a change of a user counts from its next request, for HTTP Basic and for tokens issued before', () => {
  let user: TestUser;
  let bearer: string;
  let own: string;
  let someoneElses: string;

  beforeAll(async () => {
    user = await createUser(['email-validations:read:my', 'email-validations:write:my']);
    own = await submit(user.auth, ['mine@example.com']);
    someoneElses = await submit((await createUser()).auth);
    const issued = await call('POST', '/v2.7/auth/tokens', { auth: null, json: { username: user.username, password: user.password } });
    expect(issued.status, issued.text).toBe(200);
    bearer = `Bearer ${issued.body.accessToken}`;
  });

  const readOwn = (auth: string): Promise<Answer> => call('GET', `/v2.7/email-validations/${own}`, { auth });

  it('a rule removed: the very next request is refused (Basic, then a token issued before); restored, allowed again', async () => {
    for (const auth of [user.auth, bearer]) {
      expect((await readOwn(auth)).status).toBe(200);
      await patchUser(user, [{ op: 'remove', path: '/authorization/rules/0' }]);
      expectForbidden(await readOwn(auth));
      await patchUser(user, [{ op: 'add', path: '/authorization/rules/0', value: 'email-validations:read:my' }]);
      expect((await readOwn(auth)).status).toBe(200);
    }
    // A denial added likewise, through 1.4 too.
    await patchUser(user, [{ op: 'add', path: '/authorization/rules/-', value: '-email-validations:read' }]);
    for (const auth of [user.auth, bearer]) {
      expectForbidden(await readOwn(auth));
      expectForbidden(await call('GET', `/v1.4/email-validations/${own}`, { auth }));
    }
    await patchUser(user, [{ op: 'remove', path: '/authorization/rules/2' }]);
    for (const auth of [user.auth, bearer]) expect((await readOwn(auth)).status).toBe(200);
  });

  it('made inactive: 401 at once; active again: signs in again', async () => {
    await patchUser(user, [{ op: 'replace', path: '/isActive', value: false }]);
    for (const auth of [user.auth, bearer]) expectProblem(await readOwn(auth), 401, '/problems/unauthorized');
    expectProblem(await call('POST', '/v2.7/email-validations', { auth: user.auth, json: TABLE_ENTRY }), 401, '/problems/unauthorized');
    await patchUser(user, [{ op: 'replace', path: '/isActive', value: true }]);
    for (const auth of [user.auth, bearer]) expect((await readOwn(auth)).status).toBe(200);
  });

  it('made an administrator: every permission at once; made Standard again: its rules again', async () => {
    const probes = async (auth: string): Promise<number[]> => [
      (await call('GET', `/v2.7/email-validations/${someoneElses}`, { auth })).status,
      (await call('GET', '/v2.7/users', { auth })).status,
      (await call('GET', '/v2.7/email-validations?owner=*', { auth })).status,
    ];
    for (const auth of [user.auth, bearer]) expect(await probes(auth)).toEqual([404, 403, 403]);
    await patchUser(user, [{ op: 'replace', path: '/type', value: 'Administrator' }]);
    for (const auth of [user.auth, bearer]) expect(await probes(auth)).toEqual([200, 200, 200]);
    await patchUser(user, [{ op: 'replace', path: '/type', value: 'Standard' }]);
    for (const auth of [user.auth, bearer]) expect(await probes(auth)).toEqual([404, 403, 403]);
  });

  it('deleted: 401 at once, for Basic and the token', async () => {
    expect((await call('DELETE', `/v2.7/users/${user.id}`)).status).toBe(200);
    for (const auth of [user.auth, bearer]) expectProblem(await readOwn(auth), 401, '/problems/unauthorized');
    // Its job stays, for root.
    expect((await call('GET', `/v2.7/email-validations/${own}/overview`)).status).toBe(200);
  });
});

describe('the users resource and its scopes', () => {
  it('users:read:my: its own detail, not another’s (404, as an unknown id) nor the list (403)', async () => {
    const self = await createUser(['users:read:my', 'email-validations:*:my']);
    const someone = await createUser();
    const own = await call('GET', `/v2.7/users/${self.id}`, { auth: self.auth });
    expect(own.status, own.text).toBe(200);
    expect(own.body.authentication.password.username).toBe(self.username);
    expect(own.text).not.toMatch(/password of user|argon2|\$argon/);
    const other = await call('GET', `/v2.7/users/${someone.id}`, { auth: self.auth });
    expectNotFound(other);
    const unknownId = randomUUID();
    const unknown = await call('GET', `/v2.7/users/${unknownId}`, { auth: self.auth });
    expect(other.body.detail.replace(someone.id, '<id>')).toBe(unknown.body.detail.replace(unknownId, '<id>'));
    expect(other.text).not.toContain(someone.username);
    expectForbidden(await call('GET', '/v2.7/users', { auth: self.auth }));
    // Changing itself needs users:write:my; changing another is 404 too.
    const patch = (id: string): Promise<Answer> =>
      call('PATCH', `/v2.7/users/${id}`, { auth: self.auth, raw: JSON.stringify([{ op: 'replace', path: '/displayName', value: 'x' }]), type: 'application/json-patch+json' });
    expectForbidden(await patch(self.id));
    expectNotFound(await patch(someone.id));
    expectNotFound(await call('DELETE', `/v2.7/users/${someone.id}`, { auth: self.auth }));
    expect((await call('GET', `/v2.7/users/${someone.id}`)).status).toBe(200);
  });

  it('without a users rule, its own detail is 403; with account-wide users:read, every detail and the list', async () => {
    const plain = await createUser();
    const reader = await createUser(['users:read', 'email-validations:*:my']);
    expectForbidden(await call('GET', `/v2.7/users/${plain.id}`, { auth: plain.auth }));
    expectNotFound(await call('GET', `/v2.7/users/${reader.id}`, { auth: plain.auth }));
    expect((await call('GET', `/v2.7/users/${plain.id}`, { auth: reader.auth })).status).toBe(200);
    expect((await call('GET', `/v2.7/users/${reader.id}`, { auth: reader.auth })).status).toBe(200);
    const listed = await call('GET', '/v2.7/users?limit=1000', { auth: reader.auth });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((u: { id: string }) => u.id)).toEqual(expect.arrayContaining([plain.id, reader.id]));
    // Reading is not writing: 403 on another's change and deletion.
    expectForbidden(await call('DELETE', `/v2.7/users/${plain.id}`, { auth: reader.auth }));
    // The users endpoints are not under 2.6.
    expect((await call('GET', `/v2.6/users/${plain.id}`, { auth: reader.auth })).status).toBe(404);
  });
});

describe("no answer to one user holds another user's data", () => {
  interface Party {
    readonly user: TestUser;
    readonly jobs: string[];
    /** Whatever of this user's must never reach the other: inputs, custom values, job names, job ids, its id and username. */
    readonly secrets: string[];
  }

  /** Jobs of `user` through every way of submitting, with inputs, custom values and names no one else uses. */
  async function party(tag: string): Promise<Party> {
    const user = await createUser();
    const mark = `${tag}${randomUUID().slice(0, 8)}`;
    const input = (n: number): string => `${mark}-in${n}@${mark}-domain.example`;
    const custom = (n: number): string => `${mark}-custom${n}`;
    const jobs: string[] = [];
    const secrets: string[] = [user.id, user.username, mark];
    for (const [n, v] of VERSIONS.entries()) {
      const json = { name: `${mark}-name${n}`, entries: [{ inputData: input(n), custom: custom(n) }, { inputData: `not an address ${mark}-${n}` }] };
      const answer = await call('POST', `/${v}/email-validations?waitTime=10000`, { auth: user.auth, json });
      expect(answer.status, answer.text).toBe(200);
      jobs.push(answer.body.overview.id);
      secrets.push(input(n), custom(n), json.name, json.entries[1]!.inputData);
    }
    const legacy = await call('POST', '/v1.4/email-validations', { auth: user.auth, json: { entries: [{ inputData: input(5), custom: custom(5) }] } });
    expect(legacy.status, legacy.text).toBe(202);
    jobs.push(legacy.body.uniqueID);
    const imported = await call('POST', '/v2.7/email-validations?waitTime=10000', { auth: user.auth, ...fileImport([input(6), input(7)], { name: `${mark}-file` }) });
    expect(imported.status, imported.text).toBe(200);
    jobs.push(imported.body.overview.id);
    secrets.push(input(5), custom(5), input(6), input(7), `${mark}-file`, ...jobs);
    return { user, jobs, secrets };
  }

  /** The text of an answer: its status line, headers and body. */
  const textOf = (answer: Answer): string => `${answer.status}\n${JSON.stringify([...answer.headers])}\n${answer.text}`;

  /** Every answer `caller` gets from the job endpoints: on its own jobs, and on `other`'s (ids it has learnt somehow). */
  async function session(caller: Party, other: Party): Promise<{ own: string[]; cross: string[] }> {
    const own: string[] = [];
    const cross: string[] = [];
    const auth = caller.user.auth;
    for (const v of VERSIONS) {
      for (const query of ['', '?sort=createdOn', '?status=Completed&limit=1', `?owner=${caller.user.id}`, '?createdOn:since=2000-01-01']) {
        const answer = await call('GET', `/${v}/email-validations${query}`, { auth });
        expect(answer.status, answer.text).toBe(200);
        own.push(textOf(answer));
      }
      for (const query of [`?owner=${other.user.id}`, '?owner=*']) {
        const answer = await call('GET', `/${v}/email-validations${query}`, { auth });
        expectForbidden(answer);
        cross.push(textOf(answer).replaceAll(other.user.id, ''));
      }
    }
    for (const job of caller.jobs) {
      for (const endpoint of JOB_ENDPOINTS.filter((e) => e.operation === 'read')) {
        const answer = await endpoint.send(auth, job);
        expect(answer.status, endpoint.name).toBe(endpoint.ok);
        own.push(textOf(answer));
        // The page an entry's index leads to.
        const location = answer.headers.get('location');
        if (answer.status === 303 && location !== null) own.push(textOf(await call('GET', location, { auth })));
      }
    }
    for (const job of other.jobs) {
      for (const endpoint of JOB_ENDPOINTS) {
        const answer = await endpoint.send(auth, job);
        expectNotFound(answer);
        // The id the caller gave may come back in the detail; nothing else of the job may.
        cross.push(textOf(answer).replaceAll(job, ''));
      }
    }
    return { own, cross };
  }

  it('two users, each through every endpoint: only its own inputs, custom values, names and ids, never the other’s', async () => {
    const ann = await party('annmark');
    const bob = await party('bobmark');
    for (const [caller, other] of [
      [ann, bob],
      [bob, ann],
    ] as const) {
      const { own, cross } = await session(caller, other);
      for (const text of [...own, ...cross]) {
        for (const secret of other.secrets) expect(text, `${caller.user.username} saw ${secret}`).not.toContain(secret);
      }
      // The scan is of real answers: together, its own answers show everything it submitted.
      const all = own.join('\n');
      for (const secret of caller.secrets.filter((s) => s !== caller.user.username)) expect(all).toContain(secret);
    }
    // The other's jobs are as they were (the DELETE of a caller without the right to see them did nothing).
    for (const { user, jobs } of [ann, bob]) {
      for (const job of jobs) expect((await call('GET', `/v2.7/email-validations/${job}/overview`, { auth: user.auth })).body.status).toBe('Completed');
    }
  });
});
