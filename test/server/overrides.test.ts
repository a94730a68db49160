// The account's classifier override rules through a real listening server on a real SQLite file, jobs against the
// mail lab: GET/PUT /v2.7/settings/overrides (root and administrators; 400 naming the rule; 404 under /v2.6), an
// overridden address answered OverrideMatch with its rule's classification, parsed parts and flags and no DNS query
// or SMTP connection of the lab, the matching (wildcards, case, an IDN rule in Unicode, a quoted local part, the first
// rule winning), syntax failures never overridden, Duplicates taking the overridden entry's classification, a change
// applying to later jobs only (a job keeping its rules across a restart), the config key at start, the 1.4 interface,
// the CSV export, file import, and the official client (npm `verifalia`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import Database from 'libsql';
import { VerifaliaRestClient } from 'verifalia';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { ROOT, ROOT_AUTH, ROOT_PASSWORD, callServer, fileImport, type Answer, type Call } from './http-client.js';

let lab: MailLab;
let dir: string;
let server: { app: FastifyInstance; origin: string };

const RULES = '/v2.7/settings/overrides';

/** A server on the data folder `name`, its jobs verified against the lab (RCPT waits up to 60 s: held stays held). */
async function start(name: string, options: Partial<StandaloneOptions> = {}): Promise<{ app: FastifyInstance; origin: string }> {
  const app = await createServer({
    dataDir: join(dir, name),
    rootUsername: ROOT,
    rootPassword: ROOT_PASSWORD,
    verifier: labVerifierOptions(lab, {}, { connectTimeoutMs: 1500, commandTimeoutMs: 60_000 }),
    fileImport: { tempDir: dir },
    ...options,
  });
  return { app, origin: await app.listen({ host: '127.0.0.1', port: 0 }) };
}

const call = (method: string, path: string, request: Call = {}): Promise<Answer> => callServer(server.origin, ROOT_AUTH, method, path, request);

async function putRules(rules: unknown): Promise<void> {
  const answer = await call('PUT', RULES, { json: rules });
  expect(answer.status, answer.text).toBe(200);
}

/** Submits a 2.x job and waits for it; its entries. */
async function verify(entries: readonly string[], settings: Record<string, unknown> = {}): Promise<any[]> {
  const answer = await call('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: entries.map((inputData) => ({ inputData })), ...settings } });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.entries.data;
}

/** The lab's DNS queries for `domain` (any type), and the RCPT commands its SMTP servers received for `address`. */
const dnsQueriesFor = (domain: string): number => lab.dns.queries.filter((query) => query.name === domain || query.name.endsWith(`.${domain}`)).length;
const rcptsFor = (address: string): number =>
  lab.servers.flatMap((name) => lab.transcript(name)).flat().filter((line) => line.toLowerCase().includes(`<${address}>`)).length;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: {
      quick: { mailboxes: ['alice', 'user12'] },
      // Only the overridden addresses of the tests point here: a connection would be one too many.
      untouched: { mailboxes: ['vip', 'boss'] },
      control: { mailboxes: ['vip'] },
      // Holds alice's RCPT past any test: a job on it stays InProgress until the server stops.
      held: { mailboxes: ['alice'], delayMs: { 'rcpt:alice': 60_000 } },
    },
    domains: {
      'rules-lab.com': ['quick'],
      'only-overridden.com': ['untouched'],
      'control-overridden.com': ['control'],
      'held-rules.com': ['held'],
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-overrides-'));
  server = await start('main');
});

afterAll(async () => {
  await server?.app.close();
  await lab?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('an overridden address', () => {
  it('gets OverrideMatch, its rule\'s classification, its parsed parts and flags, and no DNS query or SMTP connection', async () => {
    // Without a rule, an address of the same setup is looked up and its exchanger probed: the lab sees it.
    const [control] = await verify(['vip@control-overridden.com']);
    expect(control).toMatchObject({ status: 'Success', classification: 'Deliverable' });
    expect(dnsQueriesFor('control-overridden.com')).toBeGreaterThan(0);
    expect(lab.stats('control').connections).toBeGreaterThan(0);
    expect(rcptsFor('vip@control-overridden.com')).toBeGreaterThan(0);

    await putRules([{ match: '*@only-overridden.com', classification: 'Gold customer' }]);
    const [vip, admin] = await verify(['vip@only-overridden.com', 'Admin@Only-Overridden.com']);
    expect(vip).toMatchObject({
      index: 0,
      inputData: 'vip@only-overridden.com',
      status: 'OverrideMatch',
      classification: 'Gold customer',
      emailAddress: 'vip@only-overridden.com',
      emailAddressLocalPart: 'vip',
      emailAddressDomainPart: 'only-overridden.com',
      asciiEmailAddressDomainPart: 'only-overridden.com',
      hasInternationalDomainName: false,
      hasInternationalMailboxName: false,
      isRoleAccount: false,
      isDisposableEmailAddress: false,
      isFreeEmailAddress: false,
    });
    expect(vip.completedOn).toEqual(expect.any(String));
    expect(admin).toMatchObject({ status: 'OverrideMatch', classification: 'Gold customer', emailAddressLocalPart: 'Admin', isRoleAccount: true });
    expect(dnsQueriesFor('only-overridden.com')).toBe(0);
    expect(lab.stats('untouched').connections).toBe(0);
    expect(lab.transcript('untouched')).toEqual([]);
  });

  it('matching: wildcards, case, an IDN rule in Unicode, a quoted local part; the first rule wins; syntax failures never; Duplicates take the classification', async () => {
    await putRules([
      { match: 'boss@example.com', classification: 'VIP' },
      { match: '*@example.com', classification: 'Deliverable' },
      { match: 'john@x.com', classification: 'Undeliverable' },
      { match: 'jo@bücher.de', classification: 'Risky' },
      { match: 'user?@rules-lab.com', classification: 'Unknown' },
      { match: 'boss@*', classification: 'Never reached for boss@example.com' },
    ]);
    lab.reset();
    const entries = await verify(
      [
        'BOSS@Example.COM',
        'anyone@example.com',
        '"john"@x.com',
        'jo@bücher.de',
        'user1@rules-lab.com',
        'user12@rules-lab.com',
        'boss@@example.com',
        'Boss@example.com',
        'anyone@EXAMPLE.com',
      ],
      { deduplication: 'Safe' },
    );
    const shown = entries.map((entry) => [entry.status, entry.classification]);
    expect(shown).toEqual([
      ['OverrideMatch', 'VIP'],
      ['OverrideMatch', 'Deliverable'],
      ['OverrideMatch', 'Undeliverable'],
      ['OverrideMatch', 'Risky'],
      ['OverrideMatch', 'Unknown'],
      // `?` is one character: user12 is verified as usual.
      ['Success', 'Deliverable'],
      // A syntax failure, though `boss@*` would match its text.
      [expect.not.stringMatching(/^OverrideMatch$/), 'Undeliverable'],
      ['Duplicate', 'VIP'],
      ['Duplicate', 'Deliverable'],
    ]);
    expect(entries[6].status).not.toBe('Duplicate');
    expect(entries[2]).toMatchObject({ emailAddressLocalPart: expect.stringMatching(/^"?john"?$/), emailAddressDomainPart: 'x.com' });
    expect(entries[3]).toMatchObject({ emailAddressDomainPart: 'bücher.de', asciiEmailAddressDomainPart: 'xn--bcher-kva.de', hasInternationalDomainName: true });
    expect(entries[7]).toMatchObject({ duplicateOf: 0, emailAddressLocalPart: 'Boss' });
    expect(entries[8]).toMatchObject({ duplicateOf: 1 });
    for (const domain of ['example.com', 'x.com', 'xn--bcher-kva.de']) expect(dnsQueriesFor(domain), domain).toBe(0);
    expect(rcptsFor('user1@rules-lab.com')).toBe(0);
    expect(rcptsFor('user12@rules-lab.com')).toBeGreaterThan(0);
  });

  it('the status filter and the CSV export show OverrideMatch and the custom classification', async () => {
    await putRules([{ match: 'vip@only-overridden.com', classification: 'Gold customer' }]);
    const submitted = await call('POST', '/v2.7/email-validations?waitTime=30000', {
      json: { entries: [{ inputData: 'vip@only-overridden.com', custom: 'row 1' }, { inputData: 'alice@rules-lab.com' }] },
    });
    expect(submitted.status, submitted.text).toBe(200);
    const id = submitted.body.overview.id;
    const filtered = await call('GET', `/v2.7/email-validations/${id}/entries?status=OverrideMatch`);
    expect(filtered.body.data.map((entry: any) => entry.inputData)).toEqual(['vip@only-overridden.com']);
    const csv = await call('GET', `/v2.7/email-validations/${id}/entries`, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    const [header, first, second] = csv.text.trim().split(/\r?\n/).map((line) => line.split(','));
    const column = (name: string) => header!.indexOf(name);
    expect(first![column('status')]).toBe('OverrideMatch');
    expect(first![column('classification')]).toBe('Gold customer');
    expect(first![column('custom')]).toBe('row 1');
    expect(second![column('status')]).toBe('Success');
  });

  it('file import: the rows are verified with the account\'s rules', async () => {
    await putRules([{ match: '*@only-overridden.com', classification: 'Imported VIP' }]);
    const file = fileImport(['vip@only-overridden.com', 'alice@rules-lab.com']);
    const answer = await call('POST', '/v2.7/email-validations?waitTime=30000', { raw: file.raw, type: file.type });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.entries.data.map((entry: any) => [entry.status, entry.classification])).toEqual([
      ['OverrideMatch', 'Imported VIP'],
      ['Success', 'Deliverable'],
    ]);
  });

  it('1.4: an overridden entry is written with the legacy status its classification names, and its shorthands', async () => {
    await putRules([
      { match: 'good@example.com', classification: 'Deliverable' },
      { match: 'bad@example.com', classification: 'Undeliverable' },
      { match: 'risky@example.com', classification: 'Risky' },
      { match: 'unknown@example.com', classification: 'Unknown' },
      { match: 'custom@example.com', classification: 'Gold customer' },
    ]);
    const inputs = ['good', 'bad', 'risky', 'unknown', 'custom'].map((name) => ({ inputData: `${name}@example.com` }));
    const posted = await call('POST', '/v1.4/email-validations', { json: { entries: inputs } });
    expect(posted.status, posted.text).toBe(202);
    let done: Answer;
    do done = await call('GET', posted.headers.get('location')!);
    while (done.status === 202);
    expect(done.status).toBe(200);
    const entries = done.body.entries;
    expect(entries.map((entry: any) => entry.status)).toEqual(['Success', 'MailboxDoesNotExist', 'ServerIsCatchAll', 'UnhandledException', 'UnhandledException']);
    for (const entry of entries) {
      expect(entry).not.toHaveProperty('classification');
      expect(entry).toMatchObject({ emailAddressDomainPart: 'example.com', syntaxFailureIndex: null });
    }
    const flags = (entry: any) => Object.keys(entry).filter((key) => /^is[A-Z]\w*Failure$|^isSuccess$/.test(key) && entry[key] === true);
    expect(entries.map(flags)).toEqual([['isSuccess'], ['isMailboxFailure'], ['isCatchAllFailure'], [], []]);
    // The job is one job: the 2.x interface shows it with OverrideMatch and the rules' classifications.
    const id = posted.body.uniqueID;
    const v2 = await call('GET', `/v2.7/email-validations/${id}/entries`);
    expect(v2.body.data.map((entry: any) => [entry.status, entry.classification])).toEqual([
      ['OverrideMatch', 'Deliverable'],
      ['OverrideMatch', 'Undeliverable'],
      ['OverrideMatch', 'Risky'],
      ['OverrideMatch', 'Unknown'],
      ['OverrideMatch', 'Gold customer'],
    ]);
  });

  it('the official client reads an OverrideMatch entry', async () => {
    await putRules([{ match: 'vip@only-overridden.com', classification: 'Gold customer' }]);
    const client = new VerifaliaRestClient({ username: ROOT, password: ROOT_PASSWORD, baseUris: [server.origin] });
    const job = await client.emailValidations.submit({ entries: [{ inputData: 'vip@only-overridden.com' }] } as never);
    expect(job).not.toBeNull();
    const [entry] = job!.entries;
    expect(entry).toMatchObject({ status: 'OverrideMatch', classification: 'Gold customer', emailAddress: 'vip@only-overridden.com', emailAddressDomainPart: 'only-overridden.com' });
  });
});

describe('GET and PUT /v2.7/settings/overrides', () => {
  it('GET answers the list (empty at first); PUT replaces it whole and answers it; the object form is read too', async () => {
    const fresh = await start('fresh');
    try {
      const get = () => callServer(fresh.origin, ROOT_AUTH, 'GET', RULES);
      const first = await get();
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toMatch(/^application\/json/);
      expect(first.body).toEqual([]);
      const rules = [
        { match: '*@example.com', classification: 'Deliverable' },
        { match: 'jo@bücher.de', classification: 'Risky' },
      ];
      const put = await callServer(fresh.origin, ROOT_AUTH, 'PUT', RULES, { json: rules });
      expect(put.status).toBe(200);
      expect(put.body).toEqual(rules);
      expect((await get()).body).toEqual(rules);
      const replaced = await callServer(fresh.origin, ROOT_AUTH, 'PUT', RULES, { json: { overrides: [rules[1]] } });
      expect(replaced.body).toEqual([rules[1]]);
      expect((await get()).body).toEqual([rules[1]]);
      expect((await callServer(fresh.origin, ROOT_AUTH, 'PUT', RULES, { json: [] })).body).toEqual([]);
      expect((await get()).body).toEqual([]);
    } finally {
      await fresh.app.close();
    }
  });

  it('a malformed rule is a 400 naming it by its path, and the list stays as it was', async () => {
    const kept = [{ match: 'kept@example.com', classification: 'Risky' }];
    await putRules(kept);
    const refused = async (body: unknown, detail: RegExp, type = '/problems/invalid-field') => {
      const answer = await call('PUT', RULES, body === undefined ? {} : { json: body });
      expect(answer.status, answer.text).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({ status: 400, type });
      expect(answer.body.detail).toMatch(detail);
    };
    const good = { match: 'a@example.com', classification: 'Risky' };
    await refused([good, good, { match: 'b@example.com' }], /^overrides\[2\]\.classification: must be a non-empty string/);
    await refused([good, { match: '', classification: 'Risky' }], /^overrides\[1\]\.match: must be a non-empty string/);
    await refused([good, { match: 'a@x.com', classification: 'x'.repeat(101) }], /^overrides\[1\]\.classification: must be at most 100 characters/);
    await refused([{ match: 'a@*ü.de', classification: 'Risky' }], /^overrides\[0\]\.match: the domain label/);
    await refused([good, 'a@example.com'], /^overrides\[1\]: must be an object/);
    await refused([{ ...good, note: 'why' }], /^overrides\[0\]: has an unknown key "note"/);
    await refused({ overrides: 'a@example.com' }, /^overrides: must be an array/);
    await refused({ rules: [good] }, /^overrides: required/);
    await refused('a@example.com', /JSON array of \{ match, classification \} rules/, '/problems/invalid-body');
    await refused(undefined, /JSON array/, '/problems/invalid-body');
    await refused(Array.from({ length: 10_001 }, (_, i) => ({ match: `u${i}@example.com`, classification: 'Risky' })), /^overrides: at most 10000 rules, got 10001$/);
    expect((await call('GET', RULES)).body).toEqual(kept);
    // 10,000 rules are taken.
    await putRules(Array.from({ length: 10_000 }, (_, i) => ({ match: `u${i}@example.com`, classification: 'Risky' })));
    expect((await call('GET', RULES)).body).toHaveLength(10_000);
  });

  it('root and administrators only: a Standard user gets 403; under /v2.6 there is no such resource (404); another method is 405', async () => {
    const createUser = async (type: string, username: string) => {
      const answer = await call('POST', '/v2.7/users', {
        json: { type, displayName: username, authentication: { password: { username, password: `${username} password` } }, ...(type === 'Standard' && { authorization: { rules: ['*'] } }) },
      });
      expect(answer.status, answer.text).toBe(200);
      return `Basic ${Buffer.from(`${username}:${username} password`).toString('base64')}`;
    };
    const standard = await createUser('Standard', 'rules-standard');
    const admin = await createUser('Administrator', 'rules-admin');
    for (const [method, body] of [['GET', undefined], ['PUT', []]] as const) {
      const answer = await call(method, RULES, { auth: standard, ...(body !== undefined && { json: body }) });
      expect(answer.status, `${method} ${answer.text}`).toBe(403);
      expect(answer.body).toMatchObject({ status: 403, type: '/problems/forbidden' });
    }
    const rules = [{ match: 'admin-set@example.com', classification: 'Risky' }];
    expect((await call('PUT', RULES, { auth: admin, json: rules })).status).toBe(200);
    expect((await call('GET', RULES, { auth: admin })).body).toEqual(rules);
    expect((await call('GET', RULES, { auth: null })).status).toBe(401);
    const old = await call('GET', '/v2.6/settings/overrides');
    expect(old.status).toBe(404);
    expect(old.body).toMatchObject({ status: 404, type: '/problems/not-found' });
    const deleted = await call('DELETE', RULES);
    expect(deleted.status).toBe(405);
    expect(deleted.headers.get('allow')).toBe('GET, PUT, HEAD');
  });
});

describe('a change of the rules', () => {
  it('applies to jobs submitted after it; a job keeps its own rules, across a restart of the server too', async () => {
    const first = [{ match: 'vip@only-overridden.com', classification: 'Old rule' }];
    await putRules(first);
    // Held: alice's RCPT is answered only after the restart, so the job runs on both sides of it.
    const submitted = await call('POST', '/v2.7/email-validations', {
      json: { entries: [{ inputData: 'alice@held-rules.com' }, { inputData: 'vip@only-overridden.com' }, { inputData: 'new@only-overridden.com' }] },
    });
    expect(submitted.status, submitted.text).toBe(202);
    const id = submitted.body.overview.id;
    await putRules([{ match: '*@only-overridden.com', classification: 'New rule' }]);
    const later = await verify(['vip@only-overridden.com', 'new@only-overridden.com']);
    expect(later.map((entry) => entry.classification)).toEqual(['New rule', 'New rule']);
    expect((await call('GET', `/v2.7/email-validations/${id}/overview`)).body.status).toBe('InProgress');

    await server.app.close();
    // Whatever the job answered before the stop, its two overridden entries are made unanswered again: they are
    // verified after the restart, when the account's rules are the new ones.
    const db = new Database(join(dir, 'main', 'mailverify.db'));
    const { sequence } = db.prepare('SELECT sequence FROM jobs WHERE id = ?').get([id]) as { sequence: number };
    const cleared = db.prepare('UPDATE entries SET status = NULL, result = NULL WHERE job = ? AND idx IN (1, 2) AND result IS NOT NULL').run([sequence]);
    db.prepare('UPDATE jobs SET no_of_completed = no_of_completed - ? WHERE sequence = ?').run([cleared.changes, sequence]);
    expect(db.prepare('SELECT overrides FROM jobs WHERE id = ?').get([id])).toMatchObject({ overrides: expect.stringMatching(/^overrides:[0-9a-f]{64}$/) });
    db.close();
    lab.setServer('held', { mailboxes: ['alice'] });
    server = await start('main');

    const done = await call('GET', `/v2.7/email-validations/${id}?waitTime=30000`);
    expect(done.status, done.text).toBe(200);
    expect(done.body.entries.data.map((entry: any) => [entry.status, entry.classification])).toEqual([
      ['Success', 'Deliverable'],
      ['OverrideMatch', 'Old rule'],
      // No rule of the job's matches it (the account's new one would): verified, and no such mailbox.
      ['MailboxDoesNotExist', 'Undeliverable'],
    ]);
    // Without the config key, the list kept in the data folder stays the account's.
    expect((await call('GET', RULES)).body).toEqual([{ match: '*@only-overridden.com', classification: 'New rule' }]);
  });

  it('the config key (ServerOptions.overrides) sets the account\'s rules at each start; a malformed one refuses to start', async () => {
    const configured = [{ match: 'vip@only-overridden.com', classification: 'Configured' }];
    await server.app.close();
    server = await start('main', { overrides: configured });
    expect((await call('GET', RULES)).body).toEqual(configured);
    expect((await verify(['vip@only-overridden.com']))[0]).toMatchObject({ status: 'OverrideMatch', classification: 'Configured' });
    // Changed through the API, then the next start with the key sets it back.
    await putRules([]);
    await server.app.close();
    server = await start('main', { overrides: configured });
    expect((await call('GET', RULES)).body).toEqual(configured);
    await expect(start('bad', { overrides: [{ match: 'a@b.c', classification: '' }] })).rejects.toThrow(/overrides\[0\]\.classification must be a non-empty string/);
  });
});
