// The CAPTCHA of users who submit with one, through a real listening server and the siteverify lab on loopback
// (test/lab/siteverify.ts): each provider's token accepted and refused, reCAPTCHA v3 scores, a missing, malformed,
// unknown or unconfigured provider, a token used twice (also at once, and across interfaces), a provider that is
// down, fails, answers nonsense, redirects or is too slow (503 with Retry-After), JSON, file import and 1.4, the order
// of a submission's checks, users and root without CAPTCHA, and the official client's CaptchaValidationError.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import * as verifalia from 'verifalia';
import { CaptchaValidationError, VerifaliaRestClient, WaitOptions } from 'verifalia';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { closedTcpPort, startSiteverifyLab, type LabProvider, type SiteverifyLab } from '../lab/siteverify.js';

const ROOT = 'root';
const ROOT_PASSWORD = 'a captcha test root password';
const basic = (username: string, password: string): string => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const ROOT_BASIC = basic(ROOT, ROOT_PASSWORD);
const TIMEOUT_MS = 400;

const dirs: string[] = [];
const apps: FastifyInstance[] = [];
let lab: SiteverifyLab;
let origin: string;

async function startServer(options: Partial<StandaloneOptions>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-captcha-'));
  dirs.push(dir);
  const app = await createServer({ dataDir: dir, rootUsername: ROOT, rootPassword: ROOT_PASSWORD, verifier: { checks: 'syntax' }, ...options });
  apps.push(app);
  return app.listen({ host: '127.0.0.1', port: 0 });
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

async function call(base: string, method: string, path: string, authorization: string, body?: unknown): Promise<Answer> {
  const form = body instanceof FormData;
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization, ...(body !== undefined && !form && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: form ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

interface User {
  readonly id: string;
  readonly username: string;
  readonly password: string;
  readonly basic: string;
}

const SECRETS = { turnstile: 'turnstile-secret', reCaptchaV2: 'recaptcha-v2-secret', reCaptchaV3: 'recaptcha-v3-secret', hCaptcha: 'hcaptcha-secret' };
const ALL_PROVIDERS = {
  turnstile: { secretKey: SECRETS.turnstile },
  reCaptchaV2: { secretKey: SECRETS.reCaptchaV2 },
  reCaptchaV3: { secretKey: SECRETS.reCaptchaV3, minScore: 0.7 },
  hCaptcha: { secretKey: SECRETS.hCaptcha, siteKey: 'hcaptcha-site-key' },
};

async function createUser(base: string, username: string, extra: Record<string, unknown> = {}): Promise<User> {
  const password = `the password of ${username}`;
  const created = await call(base, 'POST', '/v2.7/users', ROOT_BASIC, {
    type: 'Standard',
    displayName: username,
    authentication: { password: { username, password } },
    ...extra,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return { id: created.body.id, username, password, basic: basic(username, password) };
}

// The client's provider names (exported at run time; its typings' directory re-export does not resolve under NodeNext).
const { CaptchaProvider_HCaptcha, CaptchaProvider_Turnstile } = verifalia as unknown as Record<string, string>;

const ENTRIES = [{ inputData: 'alice@example.com' }];
const NAMES: Record<LabProvider, string> = { turnstile: 'Turnstile', reCaptchaV2: 'reCaptcha_v2', reCaptchaV3: 'reCaptcha_v3', hCaptcha: 'hCaptcha' };

const submit = (user: User, body: Record<string, unknown>, path = '/v2.7/email-validations'): Promise<Answer> =>
  call(origin, 'POST', path, user.basic, { entries: ENTRIES, ...body });

/** A file import with this `settings` part. */
function fileImport(settings: Record<string, unknown>): FormData {
  const form = new FormData();
  form.append('inputFile', new Blob(['alice@example.com\nbob@example.com\n'], { type: 'text/plain' }), 'list.txt');
  form.append('settings', JSON.stringify(settings));
  return form;
}

async function jobsOf(user: User): Promise<number> {
  const listed = await call(origin, 'GET', '/v2.7/email-validations', user.basic);
  expect(listed.status).toBe(200);
  return listed.body.data.length;
}

function expectRefused(answer: Answer, detail?: RegExp): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(401);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ type: '/problems/captcha-validation-failed', status: 401 });
  if (detail !== undefined) expect(answer.body.detail).toMatch(detail);
  // No Basic challenge: the credentials were right, and a browser would ask for a password again.
  expect(answer.headers.get('www-authenticate')).toBe('Captcha realm="mailverify"');
}

function expectUnavailable(answer: Answer): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(503);
  expect(answer.body).toMatchObject({ type: '/problems/captcha-provider-unavailable', status: 503 });
  expect(answer.headers.get('retry-after')).toBe('10');
}

const accepted = (answer: Answer): void => expect([200, 202], JSON.stringify(answer.body)).toContain(answer.status);

let shop: User;
let v3Default: User;
let turnstileOnly: User;
let off: User;

beforeAll(async () => {
  lab = await startSiteverifyLab();
  origin = await startServer({ captcha: { siteverifyUrls: lab.urls, timeoutMs: TIMEOUT_MS } });
  shop = await createUser(origin, 'shop', { captcha: { isEnabled: true, providers: ALL_PROVIDERS } });
  v3Default = await createUser(origin, 'v3-default', { captcha: { isEnabled: true, providers: { reCaptchaV3: { secretKey: SECRETS.reCaptchaV3 } } } });
  turnstileOnly = await createUser(origin, 'turnstile-only', { captcha: { isEnabled: true, providers: { turnstile: { secretKey: SECRETS.turnstile } } } });
  off = await createUser(origin, 'captcha-off', { captcha: { isEnabled: false, providers: ALL_PROVIDERS } });
});

afterAll(async () => {
  for (const app of apps) await app.close();
  await lab?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  lab.calls.length = 0;
});

describe('CAPTCHA: each provider', () => {
  it.each(Object.keys(NAMES) as LabProvider[])('%s: the token accepted, sent as a form with the secret and the client IP', async (provider) => {
    const before = await jobsOf(shop);
    const token = lab.issue(provider, provider === 'reCaptchaV3' ? { score: 0.8 } : {});
    // The provider's name in any case.
    accepted(await submit(shop, { captcha: { provider: NAMES[provider].toUpperCase(), token } }));
    expect(await jobsOf(shop)).toBe(before + 1);
    expect(lab.calls).toHaveLength(1);
    const [sent] = lab.calls;
    expect(sent!.provider).toBe(provider);
    expect(sent!.contentType).toMatch(/^application\/x-www-form-urlencoded/);
    expect(sent!.form).toEqual({
      secret: SECRETS[provider],
      response: token,
      remoteip: '127.0.0.1',
      ...(provider === 'hCaptcha' && { sitekey: 'hcaptcha-site-key' }),
    });
  });

  it.each(Object.keys(NAMES) as LabProvider[])('%s: a token the provider refuses is 401 and no job', async (provider) => {
    const before = await jobsOf(shop);
    const token = lab.issue(provider, { refuse: ['invalid-input-response'] });
    expectRefused(await submit(shop, { captcha: { provider: NAMES[provider], token } }), /refused/);
    // A token the lab never issued, and one issued for another provider.
    expectRefused(await submit(shop, { captcha: { provider: NAMES[provider], token: 'never-issued' } }));
    const other = lab.issue(provider === 'turnstile' ? 'hCaptcha' : 'turnstile');
    expectRefused(await submit(shop, { captcha: { provider: NAMES[provider], token: other } }));
    expect(await jobsOf(shop)).toBe(before);
    expect(lab.calls).toHaveLength(3);
  });

  it('reCAPTCHA v3: the score against the user\'s minScore, else 0.5', async () => {
    const v3 = (user: User, score: number) => submit(user, { captcha: { provider: 'reCaptcha_v3', token: lab.issue('reCaptchaV3', { score }) } });
    expectRefused(await v3(shop, 0.69), /score/);
    accepted(await v3(shop, 0.7));
    expectRefused(await v3(v3Default, 0.49), /score is below .*0\.5/);
    accepted(await v3(v3Default, 0.5));
    // An answer with success and no score is not good enough.
    const noScore = lab.issue('reCaptchaV3', { body: JSON.stringify({ success: true, hostname: 'shop.example.com' }) });
    expectRefused(await submit(v3Default, { captcha: { provider: 'recaptcha_v3', token: noScore } }), /score/);
  });

  it('hCaptcha: its own score (Enterprise, higher is riskier) is not a reCAPTCHA score', async () => {
    accepted(await submit(shop, { captcha: { provider: 'hCaptcha', token: lab.issue('hCaptcha', { score: 0.9 }) } }));
  });
});

describe('CAPTCHA: refused without asking the provider', () => {
  it('missing, malformed, unknown provider, or one the user has not: 401', async () => {
    const cases: [unknown, RegExp][] = [
      [undefined, /required/],
      [null, /required/],
      ['a token', /object/],
      [['Turnstile', 'token'], /object/],
      [{ token: 'x' }, /provider is required/],
      [{ provider: 7, token: 'x' }, /provider is required/],
      [{ provider: 'FunCaptcha', token: 'x' }, /provider must be one of Turnstile, reCaptcha_v2, reCaptcha_v3, hCaptcha/],
      [{ provider: 'Turnstile' }, /token is required/],
      [{ provider: 'Turnstile', token: '' }, /token is required/],
      [{ provider: 'Turnstile', token: 42 }, /token is required/],
      [{ provider: 'Turnstile', token: 'x'.repeat(8193) }, /longer/],
    ];
    for (const [captcha, detail] of cases) {
      expectRefused(await submit(shop, captcha === undefined ? {} : { captcha }), detail);
    }
    // A provider the user has not configured, with a token the lab would accept.
    expectRefused(await submit(turnstileOnly, { captcha: { provider: 'hCaptcha', token: lab.issue('hCaptcha') } }), /not a CAPTCHA provider of this user/);
    expect(lab.calls).toEqual([]);
  });

  it('a token accepted once is refused after, on every interface, without asking the provider again', async () => {
    const token = lab.issue('turnstile');
    const captcha = { provider: 'Turnstile', token };
    accepted(await submit(shop, { captcha }));
    expectRefused(await submit(shop, { captcha }), /already used/);
    expectRefused(await submit(shop, { captcha }, '/v1.4/email-validations'), /already used/);
    expectRefused(await call(origin, 'POST', '/v2.7/email-validations', shop.basic, fileImport({ captcha })), /already used/);
    // Another user with the same provider: the token is spent whoever sends it.
    expectRefused(await submit(turnstileOnly, { captcha }), /already used/);
    expect(lab.callsWith(token)).toHaveLength(1);
  });

  it('the same token in two submissions at once: one checks it, the other is refused', async () => {
    const token = lab.issue('reCaptchaV2', { delayMs: 100 });
    const captcha = { provider: 'reCaptcha_v2', token };
    const answers = await Promise.all([submit(shop, { captcha }), submit(shop, { captcha })]);
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses[1]).toBe(401);
    expect([200, 202]).toContain(statuses[0]);
    expect(lab.callsWith(token)).toHaveLength(1);
  });
});

describe('CAPTCHA: a provider that cannot say is 503 with Retry-After, never accepted unchecked', () => {
  it('a 5xx, an answer that is not a siteverify answer, a redirect, too slow: 503, and the token is not used up', async () => {
    const before = await jobsOf(shop);
    const faults = [
      lab.issue('turnstile', { status: 500 }),
      lab.issue('turnstile', { status: 502 }),
      lab.issue('turnstile', { body: '<html>not json</html>' }),
      lab.issue('turnstile', { body: '{"ok": true}' }),
      lab.issue('turnstile', { body: `{"success": true, "pad": "${'x'.repeat(70_000)}"}` }),
      lab.issue('turnstile', { status: 404 }),
      // A redirect is not followed: the secret never goes anywhere else.
      lab.issue('turnstile', { status: 307, location: lab.urls.turnstile }),
      lab.issue('turnstile', { delayMs: TIMEOUT_MS * 5 }),
    ];
    for (const token of faults) {
      expectUnavailable(await submit(shop, { captcha: { provider: 'Turnstile', token } }));
      // Not used up: sent again, it is checked again.
      expectUnavailable(await submit(shop, { captcha: { provider: 'Turnstile', token } }));
      expect(lab.callsWith(token)).toHaveLength(2);
    }
    expect(lab.calls).toHaveLength(faults.length * 2);
    expect(await jobsOf(shop)).toBe(before);
  });

  it('a 4xx carrying a siteverify answer is the provider\'s refusal (401), even one that says success', async () => {
    for (const body of ['{"success": false, "error-codes": ["bad-request"]}', '{"success": true}']) {
      const token = lab.issue('turnstile', { status: 400, body });
      expectRefused(await submit(shop, { captcha: { provider: 'Turnstile', token } }));
    }
  });

  it('a provider that cannot be reached (nothing listens): 503, on every interface', async () => {
    const port = await closedTcpPort();
    const down = `http://127.0.0.1:${port}/siteverify`;
    const base = await startServer({ captcha: { siteverifyUrls: { turnstile: down, reCaptchaV2: down, reCaptchaV3: down, hCaptcha: down }, timeoutMs: TIMEOUT_MS } });
    const user = await createUser(base, 'down', { captcha: { isEnabled: true, providers: ALL_PROVIDERS } });
    const body = { entries: ENTRIES, captcha: { provider: 'hCaptcha', token: 'a token' } };
    expectUnavailable(await call(base, 'POST', '/v2.7/email-validations', user.basic, body));
    expectUnavailable(await call(base, 'POST', '/v1.4/email-validations', user.basic, body));
    expectUnavailable(await call(base, 'POST', '/v2.6/email-validations', user.basic, fileImport({ captcha: body.captcha })));
    // Refusals that need no provider are still 401.
    expectRefused(await call(base, 'POST', '/v2.7/email-validations', user.basic, { entries: ENTRIES }));
    expect((await call(base, 'GET', '/v2.7/email-validations', user.basic)).body.data).toEqual([]);
  });
});

describe('CAPTCHA: every way of submitting', () => {
  it('file import: `captcha` in the settings part', async () => {
    const before = await jobsOf(shop);
    const token = lab.issue('hCaptcha');
    accepted(await call(origin, 'POST', '/v2.7/email-validations', shop.basic, fileImport({ captcha: { provider: 'hcaptcha', token } })));
    expect(lab.callsWith(token)[0]!.form).toMatchObject({ secret: SECRETS.hCaptcha, sitekey: 'hcaptcha-site-key', remoteip: '127.0.0.1' });
    expectRefused(await call(origin, 'POST', '/v2.7/email-validations', shop.basic, fileImport({ quality: 'High' })));
    expectRefused(await call(origin, 'POST', '/v2.7/email-validations', shop.basic, fileImport({ captcha: { provider: 'Turnstile', token: 'never-issued' } })));
    expect(await jobsOf(shop)).toBe(before + 1);
  });

  it('1.4: `captcha` beside the entries', async () => {
    const before = await jobsOf(shop);
    const answer = await submit(shop, { captcha: { provider: 'reCaptcha_v2', token: lab.issue('reCaptchaV2') } }, '/v1.4/email-validations');
    expect(answer.status).toBe(202);
    expectRefused(await submit(shop, {}, '/v1.4/email-validations'));
    expectRefused(await submit(shop, { captcha: { provider: 'reCaptcha_v2', token: lab.issue('reCaptchaV2', { refuse: ['timeout-or-duplicate'] }) } }, '/v1.4/email-validations'));
    expect(await jobsOf(shop)).toBe(before + 1);
  });

  it('2.6 as 2.7', async () => {
    accepted(await submit(shop, { captcha: { provider: 'Turnstile', token: lab.issue('turnstile') } }, '/v2.6/email-validations'));
    expectRefused(await submit(shop, {}, '/v2.6/email-validations'));
  });
});

describe('CAPTCHA: the order of a submission\'s checks', () => {
  it('write permission (403), validation and maxEntriesPerJob (400), retention permission (403) come first', async () => {
    const readOnly = await createUser(origin, 'order-read-only', { authorization: { rules: ['email-validations:read:my'] }, captcha: { isEnabled: true, providers: ALL_PROVIDERS } });
    expect((await submit(readOnly, {})).status).toBe(403);
    const invalid = await submit(shop, { quality: 'Best' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.detail).toMatch(/^quality/);
    expect((await submit(shop, { entries: [] })).status).toBe(400);
    expect((await call(origin, 'POST', '/v2.7/email-validations', shop.basic, fileImport({ quality: 'Best' }))).body.detail).toMatch(/^settings\.quality/);
    expect((await submit(shop, { deduplication: 'Relaxed' }, '/v1.4/email-validations')).status).toBe(400);
    const small = await createUser(origin, 'order-small', { throttling: { maxEntriesPerJob: 1 }, captcha: { isEnabled: true, providers: ALL_PROVIDERS } });
    const tooMany = await submit(small, { entries: [...ENTRIES, ...ENTRIES] });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.detail).toMatch(/^entries/);
    const noDelete = await createUser(origin, 'order-no-delete', {
      authorization: { rules: ['email-validations:write:my', 'email-validations:read:my'] },
      captcha: { isEnabled: true, providers: ALL_PROVIDERS },
    });
    expect((await submit(noDelete, { retention: '1:00:00' })).status).toBe(403);
    // None of them reached the provider, even with a token.
    const token = lab.issue('turnstile');
    expect((await submit(shop, { quality: 'Best', captcha: { provider: 'Turnstile', token } })).status).toBe(400);
    expect(lab.calls).toEqual([]);
    // The token was not used by the refused submission.
    accepted(await submit(shop, { captcha: { provider: 'Turnstile', token } }));
  });

  it('a refused CAPTCHA stores nothing: no job, whatever the size of the submission', async () => {
    const before = await jobsOf(shop);
    const entries = Array.from({ length: 3000 }, (_, i) => ({ inputData: `user${i}@example.com` }));
    expectRefused(await submit(shop, { entries, captcha: { provider: 'Turnstile', token: lab.issue('turnstile', { refuse: ['invalid-input-response'] }) } }));
    expect(await jobsOf(shop)).toBe(before);
  });
});

describe('CAPTCHA: users without it', () => {
  it('a user with captcha off: the member is ignored, whatever it holds', async () => {
    for (const captcha of ['nonsense', { provider: 'FunCaptcha' }, { provider: 'Turnstile', token: lab.issue('turnstile', { refuse: ['x'] }) }]) {
      accepted(await submit(off, { captcha }));
    }
    accepted(await submit(off, {}));
    expect((await submit(off, { captcha: 'nonsense' }, '/v1.4/email-validations')).status).toBe(202);
    accepted(await call(origin, 'POST', '/v2.7/email-validations', off.basic, fileImport({ captcha: 42 })));
    expect(lab.calls).toEqual([]);
  });

  it('root never has one', async () => {
    const answer = await call(origin, 'POST', '/v2.7/email-validations', ROOT_BASIC, { entries: ENTRIES, captcha: 'nonsense' });
    accepted(answer);
    expect(lab.calls).toEqual([]);
  });

  it('turning captcha on counts from the next submission', async () => {
    const user = await createUser(origin, 'switched', { captcha: { isEnabled: false, providers: { turnstile: { secretKey: SECRETS.turnstile } } } });
    accepted(await submit(user, {}));
    const patch = await fetch(`${origin}/v2.7/users/${user.id}`, {
      method: 'PATCH',
      headers: { authorization: ROOT_BASIC, 'content-type': 'application/json-patch+json' },
      body: JSON.stringify([{ op: 'replace', path: '/captcha/isEnabled', value: true }]),
    });
    expect(patch.status).toBe(200);
    expectRefused(await submit(user, {}));
    accepted(await submit(user, { captcha: { provider: 'turnstile', token: lab.issue('turnstile') } }));
  });
});

describe('CAPTCHA: the official client', () => {
  it('gets CaptchaValidationError for a refused token, and submits with a good one (JSON and file)', async () => {
    const client = new VerifaliaRestClient({ username: shop.username, password: shop.password, baseUris: [origin] });
    const wait = Object.assign(new WaitOptions(), { pollWaitTime: 5_000 });
    const refused = client.emailValidations.submit({ entries: ENTRIES, captcha: { provider: CaptchaProvider_Turnstile, token: 'never-issued' } } as never, wait);
    await expect(refused).rejects.toBeInstanceOf(CaptchaValidationError);
    const missing = client.emailValidations.submit({ entries: ENTRIES } as never, wait);
    await expect(missing).rejects.toBeInstanceOf(CaptchaValidationError);

    const job = await client.emailValidations.submit({ entries: ENTRIES, captcha: { provider: CaptchaProvider_Turnstile, token: lab.issue('turnstile') } } as never, wait);
    expect(job!.overview.status).toBe('Completed');
    expect(job!.entries).toHaveLength(1);

    const file = await client.emailValidations.submit(
      { file: Buffer.from('alice@example.com\n'), contentType: 'text/plain', captcha: { provider: CaptchaProvider_HCaptcha, token: lab.issue('hCaptcha') } } as never,
      wait,
    );
    expect(file!.overview.status).toBe('Completed');
    const replayed = client.emailValidations.submit(
      { file: Buffer.from('alice@example.com\n'), contentType: 'text/plain', captcha: { provider: CaptchaProvider_HCaptcha, token: lab.calls.at(-1)!.form['response']! } } as never,
      wait,
    );
    await expect(replayed).rejects.toBeInstanceOf(CaptchaValidationError);
  });
});
