// The legacy 1.4 interface through a real listening server, and the engine's legacy entry converter.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_STATUS_CODES, STATUS_CODES, legacyStatusOf, toLegacyEntry, type Entry, type StatusCode } from '../../packages/mailverify/src/index.js';
import { createServer } from '../../packages/server/src/index.js';
import { VERSION } from '../../packages/mailverify/src/version.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

const PASSWORD = 'legacy-test-password';
const headers = { authorization: `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' };

let lab: MailLab;
let dir: string;
let app: FastifyInstance;
let origin: string;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: { quick: { mailboxes: ['alice'] }, slow: { mailboxes: ['alice'], delayMs: { rcpt: 700 } } },
    domains: { 'quick-legacy.com': ['quick'], 'slow-legacy.com': ['slow'] },
  });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-legacy-'));
  // Loopback exchangers allowed for the lab; literals judged as usual (allowPrivateAddresses covers both, so a
  // non-global literal is only refused when the option is off: tested through the converter below).
  app = await createServer({ dataDir: dir, rootUsername: 'root', rootPassword: PASSWORD, verifier: labVerifierOptions(lab) });
  origin = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${origin}${path}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

async function completed(path: string) {
  for (;;) {
    const answer = await call('GET', path);
    if (answer.status !== 202) return answer;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('/v1.4/email-validations', () => {
  it('POST: 202 with Location and the snapshot; GET: 200 with every entry in the legacy shape', async () => {
    const entries = [
      { inputData: 'alice@quick-legacy.com', custom: 'first' },
      { inputData: 'nobody@quick-legacy.com' },
      { inputData: 'not an address' },
      { inputData: 'ALICE@quick-legacy.com' },
    ];
    const posted = await call('POST', '/v1.4/email-validations', { entries, quality: 'standard', deduplication: 'safe', priority: 127 });
    expect(posted.status).toBe(202);
    const id = posted.body.uniqueID;
    expect(posted.headers.get('location')).toBe(`/v1.4/email-validations/${id}`);
    expect(posted.body).toMatchObject({ uniqueID: id, engineVersion: VERSION, progress: { noOfTotalEntries: 4 } });
    expect(posted.body.priority).toBeUndefined(); // 127, the default, is left out
    expect(posted.body.entries).toBeUndefined();

    const done = await completed(posted.headers.get('location')!);
    expect(done.status).toBe(200);
    expect(Object.keys(done.body)).toEqual(['uniqueID', 'engineVersion', 'submittedOn', 'completedOn', 'progress', 'entries']);
    expect(done.body.progress).toEqual({ noOfTotalEntries: 4, noOfCompletedEntries: 4 });
    const [alice, nobody, garbage, duplicate] = done.body.entries;
    expect(alice).toMatchObject({ inputData: 'alice@quick-legacy.com', status: 'Success', custom: 'first', syntaxFailureIndex: null, isSuccess: true, isMailboxFailure: false });
    expect(Object.keys(alice)).toEqual([
      'inputData', 'status', 'completedOn', 'emailAddress', 'asciiEmailAddressDomainPart', 'emailAddressLocalPart',
      'emailAddressDomainPart', 'hasInternationalDomainName', 'hasInternationalMailboxName', 'isDisposableEmailAddress',
      'isFreeEmailAddress', 'isRoleAccount', 'syntaxFailureIndex', 'custom', 'isSuccess', 'isSyntaxFailure',
      'isDnsFailure', 'isSmtpFailure', 'isMailboxFailure', 'isCatchAllFailure', 'isTimeoutFailure', 'isNetworkFailure',
    ]);
    expect(nobody).toMatchObject({ status: 'MailboxDoesNotExist', isMailboxFailure: true, isSuccess: false });
    expect(garbage).toMatchObject({ status: 'InvalidWordBoundaryStart', syntaxFailureIndex: 4, isSyntaxFailure: true });
    expect(garbage.emailAddress).toBeUndefined();
    expect(duplicate).toMatchObject({ status: 'Duplicate', duplicateOf: 0 });
    for (const entry of done.body.entries) {
      for (const field of ['index', 'classification', 'suggestions']) expect(entry).not.toHaveProperty(field);
    }
    // One job, whichever interface: listed and read through 2.x too.
    const listed = await call('GET', '/v2.7/email-validations?limit=1000');
    expect(listed.body.data.map((o: any) => o.id)).toContain(id);
    const overview = await call('GET', `/v2.7/email-validations/${id}/overview`);
    expect(overview.body).toMatchObject({ quality: 'Standard', deduplication: 'Safe', status: 'Completed' });
  });

  it('GET answers 202 without entries while the job runs; DELETE then 406; once complete 200, then 410', async () => {
    const posted = await call('POST', '/v1.4/email-validations', { entries: [{ inputData: 'alice@slow-legacy.com' }], priority: 200 });
    expect(posted.body.priority).toBe(200);
    const path = `/v1.4/email-validations/${posted.body.uniqueID}`;
    const running = await call('GET', path);
    expect(running.status).toBe(202);
    expect(running.body.entries).toBeUndefined();
    expect(running.body.progress).toMatchObject({ noOfTotalEntries: 1, noOfCompletedEntries: 0 });
    const early = await call('DELETE', path);
    expect(early.status).toBe(406);
    expect(early.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    await completed(path);
    expect((await call('DELETE', path)).status).toBe(200);
    expect((await call('DELETE', path)).status).toBe(410);
    expect((await call('GET', path)).status).toBe(410);
    expect((await call('GET', `/v1.4/email-validations/${randomUUID()}`)).status).toBe(404);
    expect((await call('DELETE', `/v1.4/email-validations/${randomUUID()}`)).status).toBe(404);
  });

  it('400 naming the field (relaxed is not a 1.4 mode), 401 without credentials, 405 with Allow', async () => {
    const relaxed = await call('POST', '/v1.4/email-validations', { entries: [{ inputData: 'a@b.org' }], deduplication: 'relaxed' });
    expect(relaxed.status).toBe(400);
    expect(relaxed.body.detail).toMatch(/^deduplication:/);
    expect((await call('POST', '/v1.4/email-validations', { entries: [] })).body.detail).toMatch(/^entries:/);
    expect((await call('POST', '/v1.4/email-validations', { entries: [{ inputData: 'a@b.org' }], quality: 'best' })).body.detail).toMatch(/^quality:/);
    const anonymous = await fetch(`${origin}/v1.4/email-validations/${randomUUID()}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="mailverify"');
    const wrong = await call('PUT', `/v1.4/email-validations/${randomUUID()}`, {});
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, DELETE, HEAD');
    expect((await call('GET', '/v1.4/email-validations')).headers.get('allow')).toBe('POST');
  });
});

describe('toLegacyEntry', () => {
  const entry = (status: StatusCode, extra: Partial<Entry> = {}): Entry => ({
    index: 3, inputData: 'x', classification: 'Unknown', status, completedOn: '2026-01-01T00:00:00.000Z', ...extra,
  });

  it('writes every status as a legacy one: its own, or the nearest for the 2.x-only ones', () => {
    expect(Object.fromEntries(STATUS_CODES.filter((s) => !LEGACY_STATUS_CODES.includes(s)).map((s) => [s, legacyStatusOf(s)]))).toEqual({
      UnacceptableDomainLiteral: 'DomainPartCompliancyFailure',
      DomainHasNullMx: 'DomainIsMisconfigured',
      MailExchangerIsParked: 'DomainIsMisconfigured',
      MailExchangerIsWellKnownDea: 'DomainIsWellKnownDea',
      MailboxIsDea: 'DomainIsWellKnownDea',
      MailboxHasInsufficientStorage: 'MailboxTemporarilyUnavailable',
      ServerTemporaryUnavailable: 'MailboxTemporarilyUnavailable',
      ServerDoesNotAllowMultipleRecipients: 'ServerIsCatchAll',
      OverrideMatch: 'UnhandledException',
    });
    for (const status of LEGACY_STATUS_CODES) expect(legacyStatusOf(status)).toBe(status);
    for (const status of STATUS_CODES) expect(LEGACY_STATUS_CODES).toContain(toLegacyEntry(entry(status)).status);
  });

  it('sets the eight shorthands from the legacy status, as the legacy list groups them', () => {
    // Written from the legacy list, apart from the catalogue's own groups.
    const syntax = ['AtSignNotFound', 'DoubleDotSequence', 'DomainPartCompliancyFailure', 'InvalidAddressLength', 'InvalidCharacterInSequence',
      'InvalidEmptyQuotedWord', 'InvalidFoldingWhiteSpaceSequence', 'InvalidLocalPartLength', 'InvalidWordBoundaryStart',
      'IspSpecificSyntaxFailure', 'UnbalancedCommentParenthesis', 'UnexpectedQuotedPairSequence', 'UnmatchedQuotedPair'];
    const groups: Record<string, string[]> = {
      isSyntaxFailure: syntax,
      isDnsFailure: ['DomainDoesNotExist', 'DnsQueryTimeout', 'DnsConnectionFailure', 'DomainIsMisconfigured'],
      isSmtpFailure: ['SmtpConnectionTimeout', 'SmtpConnectionFailure', 'SmtpDialogError', 'LocalEndPointRejected'],
      isMailboxFailure: ['MailboxDoesNotExist', 'MailboxConnectionFailure', 'LocalSenderAddressRejected', 'MailboxValidationTimeout',
        'MailboxTemporarilyUnavailable', 'ServerDoesNotSupportInternationalMailboxes', 'MailExchangerIsHoneypot'],
      isCatchAllFailure: ['CatchAllValidationTimeout', 'ServerIsCatchAll', 'CatchAllConnectionFailure'],
      isTimeoutFailure: LEGACY_STATUS_CODES.filter((s) => s.endsWith('Timeout')),
      isNetworkFailure: LEGACY_STATUS_CODES.filter((s) => s.endsWith('ConnectionFailure')),
      isSuccess: ['Success'],
    };
    expect(syntax).toHaveLength(13);
    for (const status of STATUS_CODES) {
      const legacy = toLegacyEntry(entry(status)) as unknown as Record<string, unknown>;
      for (const [flag, members] of Object.entries(groups)) expect(legacy[flag], `${status} ${flag}`).toBe(members.includes(legacyStatusOf(status)));
    }
    for (const none of ['DomainIsWellKnownDea', 'Duplicate', 'UnhandledException'] as const) {
      const legacy = toLegacyEntry(entry(none)) as unknown as Record<string, unknown>;
      expect(Object.keys(groups).filter((flag) => legacy[flag] === true)).toEqual([]);
    }
  });

  it('keeps the legacy field set: no index, classification or suggestions; syntaxFailureIndex null when absent', () => {
    const legacy = toLegacyEntry(entry('Duplicate', { suggestions: ['a@b.com'], duplicateOf: 1, custom: 'c' }));
    expect(legacy).toMatchObject({ status: 'Duplicate', duplicateOf: 1, custom: 'c', syntaxFailureIndex: null });
    for (const field of ['index', 'classification', 'suggestions']) expect(legacy).not.toHaveProperty(field);
    expect(toLegacyEntry(entry('AtSignNotFound', { syntaxFailureIndex: 7 })).syntaxFailureIndex).toBe(7);
  });
});
