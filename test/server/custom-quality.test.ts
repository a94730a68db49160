// Custom quality levels through real listening servers on SQLite files and the mail lab: a greylisting and a slow
// exchanger that only a patient custom level resolves (its passes, pass delay and timeouts are the ones used), ids read
// without case and shown as configured, unknown levels refused on every interface, the listing, unit prices with
// credits on, a custom default, wrong options, a restart whose configuration lost the level, and the official client.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { VerifaliaRestClient } from 'verifalia';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QualityLevel } from '../../packages/mailverify/src/engine/quality.js';
import { createServer, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { ROOT, ROOT_AUTH, ROOT_PASSWORD, callServer, fileImport, start, type Answer, type Running } from './http-client.js';

/** The verifier's own level is Standard with a short command timeout; Patient waits long and passes thrice. */
const VERIFIER_TIMEOUTS = { connectTimeoutMs: 1500, commandTimeoutMs: 600 };
/** Longer than the verifier's command timeout, shorter than Patient's. */
const SLOW_RCPT_MS = 2500;
const PATIENT: QualityLevel = { id: 'Patient', displayName: 'Patient (greylisting, slow servers)', passes: 3, passDelay: 200, connectTimeout: 3000, commandTimeout: 10_000, unitPrice: 0.5 };
const QUICK: QualityLevel = { id: 'quick' };
const LEVELS = [PATIENT, QUICK];
const TRANSIENT_TIMEOUTS = ['MailboxValidationTimeout', 'SmtpConnectionTimeout', 'CatchAllValidationTimeout'];

let lab: MailLab;
let server: Running;
const dirs: string[] = [];

beforeAll(async () => {
  lab = await startMailLab({
    servers: {
      // The first two RCPTs of each recipient: 450 4.7.1.
      grey: { mailboxes: ['alice', 'bob', 'erin', 'frank', 'gina'], greylist: 2 },
      // Every RCPT answered after SLOW_RCPT_MS.
      slow: { mailboxes: ['carol', 'dave'], delayMs: { rcpt: SLOW_RCPT_MS } },
    },
    domains: { 'grey-quality.com': ['grey'], 'slow-quality.com': ['slow'] },
  });
  server = await start({ verifier: labVerifierOptions(lab, {}, VERIFIER_TIMEOUTS), qualityLevels: LEVELS });
});

afterAll(async () => {
  await server?.close();
  await lab?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Submits a job through 2.x and waits for it to complete. */
async function completed(target: Running, entries: string[], settings: Record<string, unknown> = {}): Promise<Answer> {
  const answer = await target.call('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: entries.map((inputData) => ({ inputData })), ...settings } });
  expect(answer.status, answer.text).toBe(200);
  return answer;
}

const rcptsTo = (local: string): number => lab.transcript('grey').flat().filter((line) => line.toUpperCase().startsWith(`RCPT TO:<${local.toUpperCase()}@`)).length;

function expectInvalidQuality(answer: Answer, path: string): void {
  expect(answer.status, answer.text).toBe(400);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body.detail).toBe(`${path}: must be one of Standard, High, Extreme, Patient, quick`);
}

describe('a job runs at its custom level', () => {
  it('greylisting: Standard ends MailboxTemporarilyUnavailable after one pass, Patient passes thrice and gets Success', async () => {
    const [standard, patient] = await Promise.all([
      completed(server, ['alice@grey-quality.com']),
      completed(server, ['bob@grey-quality.com'], { quality: 'PATIENT' }),
    ]);
    expect(standard.body.overview.quality).toBe('Standard');
    expect(standard.body.entries.data[0]).toMatchObject({ status: 'MailboxTemporarilyUnavailable', classification: 'Unknown' });
    expect(rcptsTo('alice')).toBe(1);
    // Shown as the configuration writes it, whatever the case of the submission.
    expect(patient.body.overview.quality).toBe('Patient');
    expect(patient.body.entries.data[0]).toMatchObject({ status: 'Success', classification: 'Deliverable' });
    expect(rcptsTo('bob')).toBe(3);
  });

  it('a slow exchanger: the verifier\'s command timeout ends Standard in a timeout, Patient\'s longer one waits for the answer', async () => {
    // One after the other: addresses sharing a session get the longest timeout of their levels.
    const standard = await completed(server, ['carol@slow-quality.com'], { quality: 'standard' });
    const patient = await completed(server, ['dave@slow-quality.com'], { quality: 'patient' });
    expect(standard.body.entries.data[0].classification).toBe('Unknown');
    expect(TRANSIENT_TIMEOUTS).toContain(standard.body.entries.data[0].status);
    expect(patient.body.entries.data[0]).toMatchObject({ status: 'Success', classification: 'Deliverable' });
  });

  it('ids are read without case and shown as configured, in the job, its overview and the job list', async () => {
    const job = await completed(server, ['x@syntax'], { quality: 'QUICK' });
    const { id } = job.body.overview;
    expect(job.body.overview.quality).toBe('quick');
    expect((await server.call('GET', `/v2.7/email-validations/${id}/overview`)).body.quality).toBe('quick');
    const listed = await server.call('GET', '/v2.7/email-validations?limit=1000');
    expect(listed.body.data.find((overview: { id: string }) => overview.id === id).quality).toBe('quick');
    // A job naming none runs at the default, Standard.
    expect((await completed(server, ['y@syntax'])).body.overview.quality).toBe('Standard');
  });

  it('a 1.4 submission and a file import name a custom level too', async () => {
    const legacy = await server.call('POST', '/v1.4/email-validations', { json: { entries: [{ inputData: 'gina@grey-quality.com' }], quality: 'patient' } });
    expect(legacy.status, legacy.text).toBe(202);
    const overview = await server.call('GET', `/v2.7/email-validations/${legacy.body.uniqueID}?waitTime=30000`);
    expect(overview.body.overview).toMatchObject({ quality: 'Patient', status: 'Completed' });
    expect(overview.body.entries.data[0].status).toBe('Success');
    const imported = await server.call('POST', '/v2.7/email-validations?waitTime=30000', fileImport(['z@syntax'], { quality: 'Quick' }));
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.overview.quality).toBe('quick');
  });

  it('an unknown level is 400 naming quality on 2.x JSON, file import and 1.4', async () => {
    const entries = [{ inputData: 'a@b.com' }];
    expectInvalidQuality(await server.call('POST', '/v2.7/email-validations', { json: { entries, quality: 'Impatient' } }), 'quality');
    expectInvalidQuality(await server.call('POST', '/v2.6/email-validations', { json: { entries, quality: 42 } }), 'quality');
    expectInvalidQuality(await server.call('POST', '/v2.7/email-validations', fileImport(['a@b.com'], { quality: 'Impatient' })), 'settings.quality');
    expectInvalidQuality(await server.call('POST', '/v1.4/email-validations', { json: { entries, quality: 'Impatient' } }), 'quality');
  });

  it('the official client (npm verifalia) submits at a custom level', async () => {
    const client = new VerifaliaRestClient({ username: ROOT, password: ROOT_PASSWORD, baseUris: [server.origin] });
    const validation = await client.emailValidations.submit({ entries: [{ inputData: 'frank@grey-quality.com' }], quality: 'patient' });
    expect(validation!.overview.quality).toBe('Patient');
    expect(validation!.entries[0]!.status).toBe('Success');
  });
});

describe('GET /email-validations/quality-levels', () => {
  it('lists the custom levels after the standard ones, with isCustom, their display name and unit price', async () => {
    const answer = await server.call('GET', '/v2.6/email-validations/quality-levels');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      data: [
        { id: 'Standard', displayName: 'Standard', isDefault: true, isCustom: false, unitPrice: 1, isUnavailable: false },
        { id: 'High', displayName: 'High', isDefault: false, isCustom: false, unitPrice: 2, isUnavailable: false },
        { id: 'Extreme', displayName: 'Extreme', isDefault: false, isCustom: false, unitPrice: 4, isUnavailable: false },
        { id: 'Patient', displayName: 'Patient (greylisting, slow servers)', isDefault: false, isCustom: true, unitPrice: 0.5, isUnavailable: false },
        // No unitPrice: the Standard one.
        { id: 'quick', displayName: 'quick', isDefault: false, isCustom: true, unitPrice: 1, isUnavailable: false },
      ],
    });
  });

  it('a custom default: jobs naming none run at it, and the listing marks it', async () => {
    const custom = await start({ verifier: { checks: 'syntax' }, qualityLevels: LEVELS, defaultQuality: 'QUICK' });
    try {
      expect((await completed(custom, ['a@syntax'])).body.overview.quality).toBe('quick');
      const levels = (await custom.call('GET', '/v2.7/email-validations/quality-levels')).body.data;
      expect(levels.filter((level: { isDefault: boolean }) => level.isDefault).map((level: { id: string }) => level.id)).toEqual(['quick']);
    } finally {
      await custom.close();
    }
  });
});

describe('credits', () => {
  it('a custom level\'s unit price prices its jobs (the Standard one when it has none); the 402 names the level', async () => {
    const priced = await start({ verifier: { checks: 'syntax' }, qualityLevels: LEVELS, credits: { unitPrices: { Standard: 1.5 } } });
    try {
      expect((await priced.call('POST', '/v2.7/credits/packs', { json: { credits: 10 } })).status).toBe(200);
      await completed(priced, ['a@x.com', 'b@x.com', 'c@x.com', 'd@x.com'], { quality: 'patient' });
      expect((await priced.call('GET', '/v2.7/credits/balance')).body.creditPacks).toBe(8);
      await completed(priced, ['e@x.com', 'f@x.com'], { quality: 'quick' });
      expect((await priced.call('GET', '/v2.7/credits/balance')).body.creditPacks).toBe(5);
      const prices = (await priced.call('GET', '/v2.7/email-validations/quality-levels')).body.data.map((level: { id: string; unitPrice: number }) => [level.id, level.unitPrice]);
      expect(prices).toEqual([['Standard', 1.5], ['High', 2], ['Extreme', 4], ['Patient', 0.5], ['quick', 1.5]]);
      const many = Array.from({ length: 11 }, (_, i) => ({ inputData: `user${i}@x.com` }));
      const refused = await priced.call('POST', '/v2.7/email-validations', { json: { entries: many, quality: 'PATIENT' } });
      expect(refused.status, refused.text).toBe(402);
      expect(refused.body).toMatchObject({ type: '/problems/insufficient-credit' });
      expect(refused.body.detail).toContain('11 entries at 0.5 for Patient');
    } finally {
      await priced.close();
    }
  });
});

describe('options', () => {
  it('wrong levels and an unknown default are refused at start, naming the option and the item', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverify-custom-quality-'));
    dirs.push(dir);
    const base = { dataDir: join(dir, 'data'), rootUsername: ROOT, rootPassword: ROOT_PASSWORD };
    const cases: [Partial<StandaloneOptions>, RegExp][] = [
      [{ qualityLevels: [{ id: 'HIGH' }] }, /qualityLevels\[0\]\.id must be a name other than Standard, High and Extreme/],
      [{ qualityLevels: [{ id: 'a' }, { id: 'A' }] }, /qualityLevels\[1\]\.id "A" is the id of item 0 too/],
      [{ qualityLevels: [{ passes: 2 }] }, /qualityLevels\[0\]\.id is required/],
      [{ qualityLevels: [{ id: 'a', passes: 0 }] }, /qualityLevels\[0\]\.passes must be an integer from 1 to 100/],
      [{ qualityLevels: [{ id: 'a', unitPrice: 0.0000001 }] }, /qualityLevels\[0\]\.unitPrice must be a number of credits/],
      [{ qualityLevels: LEVELS, defaultQuality: 'slow' }, /defaultQuality must be one of Standard, High, Extreme, Patient, quick, got "slow"/],
    ];
    for (const [options, message] of cases) await expect(createServer({ ...base, ...options })).rejects.toThrow(message);
  });
});

describe('a restart whose configuration no longer has the level', () => {
  it('the job runs at the verifier\'s level, keeps its quality name, and the log says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverify-custom-quality-'));
    dirs.push(dir);
    const open: FastifyInstance[] = [];
    const log: string[] = [];
    const listen = async (options: Partial<StandaloneOptions>): Promise<string> => {
      const app = await createServer({ dataDir: join(dir, 'data'), rootUsername: ROOT, rootPassword: ROOT_PASSWORD, verifier: labVerifierOptions(lab, {}, VERIFIER_TIMEOUTS), ...options });
      open.push(app);
      return app.listen({ host: '127.0.0.1', port: 0 });
    };
    try {
      // Three passes an hour apart: the job is still waiting for its second pass when the server stops.
      const first = await listen({ qualityLevels: [{ id: 'Waiting', passes: 3, passDelay: 3_600_000 }] });
      const submitted = await callServer(first, ROOT_AUTH, 'POST', '/v2.7/email-validations', { json: { entries: [{ inputData: 'erin@grey-quality.com' }], quality: 'waiting' } });
      expect(submitted.status, submitted.text).toBe(202);
      const { id } = submitted.body.overview;
      while (rcptsTo('erin') < 1) await new Promise((resolve) => setTimeout(resolve, 20));
      await open.pop()!.close();

      const second = await listen({ logger: { level: 'warn', stream: { write: (line: string) => void log.push(line) } } });
      const job = await callServer(second, ROOT_AUTH, 'GET', `/v2.7/email-validations/${id}?waitTime=30000`);
      expect(job.body.overview).toMatchObject({ status: 'Completed', quality: 'Waiting' });
      // The verifier's level (Standard) makes one pass: the second greylisted RCPT ends it.
      expect(job.body.entries.data[0].status).toBe('MailboxTemporarilyUnavailable');
      expect(rcptsTo('erin')).toBe(2);
      const warning = log.map((line) => JSON.parse(line)).find((entry) => entry.jobId === id);
      expect(warning).toMatchObject({ level: 40, quality: 'Waiting' });
      expect(warning.msg).toContain('not configured');
    } finally {
      for (const app of open) await app.close();
    }
  });
});
