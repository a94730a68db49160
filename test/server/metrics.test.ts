// Prometheus metrics and misconfiguration warnings through real listening servers: jobs run against the mail lab (a
// real DNS server and SMTP servers on loopback), the store is a real SQLite file, a completion callback goes to a real
// HTTP receiver, and /metrics is scraped over HTTP and its exposition text parsed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../packages/server/src/jobs/clock.js';
import { createServer, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { startReceiver, type CallbackReceiver } from '../jobs/callback-receiver.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { unreachableDnsServer } from '../lab/closed-port.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

const USER = 'root';
const PASSWORD = 'correct horse battery staple';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

let lab: MailLab;
let dir: string;
let hook: CallbackReceiver;

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: { quick: { mailboxes: ['alice', 'bob'] } },
    domains: {
      'quick-srv.com': ['quick'],
      'failover-srv.com': ['refused', 'quick'],
      // Exchangers on private addresses: nothing listens there, and nothing may try.
      'private-mx.com': { mx: [{ priority: 10, exchange: 'mx.private-mx.com' }] },
      'mx.private-mx.com': { a: ['10.0.0.5'] },
      'private-own.com': { a: ['192.168.1.20'] },
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-metrics-'));
  hook = await startReceiver(realClock);
});

afterAll(async () => {
  await hook?.close();
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Running {
  app: FastifyInstance;
  origin: string;
  /** The log lines at warn level and above, parsed. */
  warnings: Array<{ level: number; msg: string; cause?: string }>;
}

let servers = 0;
async function start(options: Partial<StandaloneOptions>): Promise<Running> {
  const warnings: Running['warnings'] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') warnings.push(JSON.parse(line));
      done();
    },
  });
  const app = await createServer({
    dataDir: join(dir, `server-${++servers}`),
    rootUsername: USER,
    rootPassword: PASSWORD,
    logger: { level: 'warn', stream: logStream },
    ...options,
  });
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  return { app, origin, warnings };
}

async function call(origin: string, method: string, path: string, options: { body?: unknown; authorization?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (options.authorization !== null) headers['authorization'] = options.authorization ?? BASIC;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${origin}${path}`, {
    method,
    headers,
    ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  const json = /json/.test(response.headers.get('content-type') ?? '');
  return { status: response.status, headers: response.headers, text, body: json && text !== '' ? JSON.parse(text) : undefined };
}

/** Submits a job and waits until it completes; returns its entries' statuses. */
async function runJob(origin: string, entries: string[], settings: Record<string, unknown> = {}): Promise<string[]> {
  const answer = await call(origin, 'POST', '/v2.7/email-validations?waitTime=20000', {
    body: { entries: entries.map((inputData) => ({ inputData })), ...settings },
  });
  expect(answer.status).toBe(200);
  return answer.body.entries.data.map((entry: { status: string }) => entry.status);
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of an exposition text (the Prometheus text format, version 0.0.4). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[name!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of `name` whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

async function scrape(origin: string): Promise<Sample[]> {
  const answer = await call(origin, 'GET', '/metrics');
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(answer.text);
}

/** Polls until `check` holds: the server finishes some work (a callback's answer, a QUIT) after the job's answer. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('GET /metrics', () => {
  it('counts what a job did: requests, results, DNS queries, SMTP sessions and replies, jobs, entries, callbacks', async () => {
    lab.reset();
    const server = await start({ metrics: true, verifier: labVerifierOptions(lab) });
    const addresses = ['alice@quick-srv.com', 'bob@quick-srv.com', 'nobody@quick-srv.com', 'no-at-sign', 'alice@failover-srv.com'];
    const statuses = await runJob(server.origin, addresses, { callback: { url: `${hook.origin}/done` } });
    expect(statuses).toEqual(['Success', 'Success', 'MailboxDoesNotExist', 'AtSignNotFound', 'Success']);
    await hook.waitFor(1);
    // The delivery is counted once its answer is read, and the session once QUIT is answered: both just after.
    await until(async () => total(await scrape(server.origin), 'mailverify_callback_deliveries_total', { outcome: 'delivered' }) === 1, 'the callback is counted');
    await until(async () => total(await scrape(server.origin), 'mailverify_smtp_connections_open') === 0, 'the sessions are closed');

    const samples = await scrape(server.origin);
    expect(total(samples, 'mailverify_verdicts_total', { status: 'Success', classification: 'Deliverable' })).toBe(3);
    expect(total(samples, 'mailverify_verdicts_total', { status: 'MailboxDoesNotExist', classification: 'Undeliverable' })).toBe(1);
    expect(total(samples, 'mailverify_verdicts_total', { status: 'AtSignNotFound' })).toBe(1);
    expect(total(samples, 'mailverify_verdicts_total')).toBe(5);

    expect(total(samples, 'mailverify_jobs', { status: 'Completed' })).toBe(1);
    expect(total(samples, 'mailverify_jobs', { status: 'InProgress' })).toBe(0);
    expect(total(samples, 'mailverify_job_entries', { state: 'completed' })).toBe(5);
    expect(total(samples, 'mailverify_job_entries', { state: 'pending' })).toBe(0);

    // Every query the lab's DNS server received, by type; each got an answer but the AAAA ones (NODATA).
    expect(total(samples, 'mailverify_dns_queries_total', { type: 'MX', outcome: 'answer' })).toBe(lab.dns.exchangeCount(undefined, 'MX'));
    expect(total(samples, 'mailverify_dns_queries_total', { type: 'A', outcome: 'answer' })).toBe(lab.dns.exchangeCount(undefined, 'A'));
    expect(total(samples, 'mailverify_dns_queries_total', { type: 'AAAA', outcome: 'nodata' })).toBe(lab.dns.exchangeCount(undefined, 'AAAA'));
    expect(total(samples, 'mailverify_dns_queries_total')).toBe(lab.dns.exchangeCount());
    expect(total(samples, 'mailverify_dns_query_duration_seconds_count')).toBe(lab.dns.exchangeCount());

    // The exchanger is labelled by its registrable domain; every connection the lab accepted is a session opened.
    const exchanger = { exchanger: 'lab.test' };
    expect(lab.stats('quick').connections).toBeGreaterThan(0);
    expect(total(samples, 'mailverify_smtp_sessions_total', { ...exchanger, outcome: 'opened' })).toBe(lab.stats('quick').connections);
    // The refused exchanger (first in preference for failover-srv.com): one session that could not be opened.
    expect(total(samples, 'mailverify_smtp_sessions_total', { ...exchanger, outcome: 'failed' })).toBe(1);
    // One RCPT reply per RCPT the server received (the catch-all probe's included), one MAIL reply per transaction.
    expect(total(samples, 'mailverify_smtp_reply_duration_seconds_count', { ...exchanger, command: 'rcpt' })).toBe(lab.stats('quick').rcpts);
    expect(total(samples, 'mailverify_smtp_reply_duration_seconds_count', { ...exchanger, command: 'mail' })).toBe(lab.stats('quick').transactions);

    // Requests by route pattern, never by raw URL.
    expect(total(samples, 'mailverify_http_requests_total', { method: 'POST', route: '/v2.7/email-validations', status_code: '200' })).toBe(1);
    expect(total(samples, 'mailverify_http_requests_total', { route: '/metrics', status_code: '200' })).toBeGreaterThanOrEqual(2);
    expect(samples.some((s) => s.name.startsWith('mailverify_http') && /[0-9a-f]{8}-[0-9a-f]{4}/.test(s.labels['route'] ?? ''))).toBe(false);
    expect(total(samples, 'mailverify_http_request_duration_seconds_count', { method: 'POST', route: '/v2.7/email-validations' })).toBe(1);
  });

  it('labels requests by route pattern and unknown paths together', async () => {
    const server = await start({ metrics: true, basePath: '/api', verifier: { checks: 'syntax' } });
    const id = '00000000-0000-4000-8000-000000000000';
    expect((await call(server.origin, 'GET', `/api/v2.7/email-validations/${id}`)).status).toBe(404);
    expect((await call(server.origin, 'GET', '/api/nothing-here')).status).toBe(404);
    expect((await call(server.origin, 'GET', '/api/v2.7/email-validations', { authorization: null })).status).toBe(401);
    const samples = parseExposition((await call(server.origin, 'GET', '/api/metrics')).text);
    expect(total(samples, 'mailverify_http_requests_total', { route: '/api/v2.7/email-validations/:id', status_code: '404' })).toBe(1);
    expect(total(samples, 'mailverify_http_requests_total', { route: '(unmatched)', status_code: '404' })).toBe(1);
    expect(total(samples, 'mailverify_http_requests_total', { method: 'GET', route: '/api/v2.7/email-validations', status_code: '401' })).toBe(1);
    // Every job status and entry state is there, at zero, before any job.
    for (const status of ['InProgress', 'Completed', 'Deleted', 'Expired']) expect(samples).toContainEqual({ name: 'mailverify_jobs', labels: { status }, value: 0 });
    expect(samples).toContainEqual({ name: 'mailverify_job_entries', labels: { state: 'pending' }, value: 0 });
  });

  it('needs the root credentials: HTTP Basic or a bearer token; 401 with a problem otherwise', async () => {
    const server = await start({ metrics: true, verifier: { checks: 'syntax' } });
    for (const authorization of [null, `Basic ${Buffer.from(`${USER}:wrong`).toString('base64')}`, 'Bearer not-a-token']) {
      const answer = await call(server.origin, 'GET', '/metrics', { authorization });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.headers.get('www-authenticate')).toBe('Basic realm="mailverify"');
      expect(answer.body).toMatchObject({ status: 401, type: '/problems/unauthorized' });
      expect(answer.text).not.toMatch(/mailverify_/);
    }
    const token = await call(server.origin, 'POST', '/v2.7/auth/tokens', { body: { username: USER, password: PASSWORD }, authorization: null });
    expect(token.status).toBe(200);
    const answer = await call(server.origin, 'GET', '/metrics', { authorization: `Bearer ${token.body.accessToken}` });
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^# HELP mailverify_/m);
  });

  it('is not there without the metrics option: 404', async () => {
    const server = await start({ verifier: { checks: 'syntax' } });
    const answer = await call(server.origin, 'GET', '/metrics');
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ status: 404, type: '/problems/not-found' });
  });

  it('keeps the counts of each server apart', async () => {
    const one = await start({ metrics: true, verifier: { checks: 'syntax' } });
    const two = await start({ metrics: true, verifier: { checks: 'syntax' } });
    await runJob(one.origin, ['a@b.com', 'no-at-sign']);
    expect(total(await scrape(one.origin), 'mailverify_verdicts_total')).toBe(2);
    expect(total(await scrape(two.origin), 'mailverify_verdicts_total')).toBe(0);
  });
});

describe('misconfiguration warnings in the log', () => {
  it('a DNS server that cannot be reached: one warning naming it, when queries in a row get no answer', async () => {
    const dnsServer = await unreachableDnsServer();
    const server = await start({ verifier: { dns: { servers: [dnsServer], timeoutMs: 1000 }, heloName: 'probe.example.com' } });
    const domains = Array.from({ length: 12 }, (_, i) => `user@domain-${i}.com`);
    const statuses = await runJob(server.origin, domains);
    expect(statuses).toEqual(domains.map(() => 'DnsConnectionFailure'));
    const warnings = server.warnings.filter((line) => line.cause === 'dns-unreachable');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe(40);
    expect(warnings[0]!.msg).toContain(`the DNS server(s) ${dnsServer}`);
    expect(warnings[0]!.msg).toContain('ECONNREFUSED');
    expect(warnings[0]!.msg).toContain('--dns-server');
    // Rate limited: another job against the same dead server adds no warning.
    await runJob(server.origin, domains.map((address) => address.replace('domain', 'other')));
    expect(server.warnings.filter((line) => line.cause === 'dns-unreachable')).toHaveLength(1);
  });

  it('no DNS warning while the server answers, even when every domain fails', async () => {
    const server = await start({ verifier: { ...labVerifierOptions(lab), checks: 'dns' } });
    const domains = Array.from({ length: 12 }, (_, i) => `user@missing-${i}.com`);
    expect(await runJob(server.origin, domains)).toEqual(domains.map(() => 'DomainDoesNotExist'));
    expect(server.warnings.filter((line) => line.cause === 'dns-unreachable')).toEqual([]);
  });

  it('exchangers on non-global addresses: a warning naming one and --allow-private-addresses, rate limited', async () => {
    const server = await start({ verifier: { ...labVerifierOptions(lab), allowPrivateAddresses: false } });
    const statuses = await runJob(server.origin, ['jo@private-mx.com', 'jo@private-own.com', 'al@private-mx.com']);
    expect(statuses).toEqual(['DomainIsMisconfigured', 'DomainIsMisconfigured', 'DomainIsMisconfigured']);
    const warnings = server.warnings.filter((line) => line.cause === 'non-global-exchangers');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/non-global addresses \((private-mx\.com: mx\.private-mx\.com → 10\.0\.0\.5|private-own\.com → 192\.168\.1\.20)\)/);
    expect(warnings[0]!.msg).toContain('DomainIsMisconfigured');
    expect(warnings[0]!.msg).toContain('--allow-private-addresses');
  });
});
