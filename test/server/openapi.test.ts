// The OpenAPI document (GET /openapi.json): a valid OpenAPI 3.1 document of every operation of the 2.x and 1.4
// interfaces, and a realistic session through a real listening server (under a base path, jobs against the mail lab,
// a real SQLite file) whose every answer (status, media type, headers, body) and every accepted request (query, path,
// JSON body) is checked against it with a JSON Schema 2020-12 validator.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { TOTP } from 'otpauth';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, mailverify } from '../../packages/server/src/server/app.js';
import { VERSION } from '../../packages/mailverify/src/version.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';

const USER = 'root';
const PASSWORD = 'openapi test password';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const BASE = '/api';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const XLS = 'application/vnd.ms-excel';

/** Every operation of the interface, as the service's endpoint list and the server's routes name them. */
const OPERATIONS = [
  'GET /openapi.json',
  'GET /health',
  'GET /ready',
  ...['/v2.7', '/v2.6'].flatMap((v) => [
    `POST ${v}/auth/tokens`,
    `POST ${v}/email-validations`,
    `GET ${v}/email-validations`,
    `GET ${v}/email-validations/{id}`,
    `DELETE ${v}/email-validations/{id}`,
    `GET ${v}/email-validations/{id}/overview`,
    `GET ${v}/email-validations/{id}/entries`,
    `GET ${v}/email-validations/{id}/entries/{index}`,
    `POST ${v}/auth/totp/verifications`,
    `GET ${v}/email-validations/quality-levels`,
    `GET ${v}/credits/balance`,
    `GET ${v}/credits/daily-usage`,
  ]),
  'POST /v2.7/credits/packs',
  'GET /v2.7/settings/overrides',
  'PUT /v2.7/settings/overrides',
  'GET /v1.4/account-balance',
  'GET /v2.7/users',
  'POST /v2.7/users',
  'GET /v2.7/users/{id}',
  'PATCH /v2.7/users/{id}',
  'DELETE /v2.7/users/{id}',
  'POST /v2.7/users/{id}/authentication/totp',
  'DELETE /v2.7/users/{id}/authentication/totp',
  'POST /v2.7/users/{id}/authentication/totp/confirmations',
  'POST /v1.4/email-validations',
  'GET /v1.4/email-validations/{id}',
  'DELETE /v1.4/email-validations/{id}',
];

type Json = any;

interface Exchange {
  readonly method: string;
  /** The request's path and query, as sent (base path included). */
  readonly url: string;
  readonly requestType?: string;
  readonly requestJson?: unknown;
  readonly lenient?: boolean;
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
}

let lab: MailLab;
let dir: string;
let app: FastifyInstance;
let origin: string;
let doc: Json;
const exchanges: Exchange[] = [];

beforeAll(async () => {
  lab = await startMailLab({
    engine: 'raw',
    servers: {
      quick: { mailboxes: ['alice', 'bob', 'carol'] },
      slow: { mailboxes: ['alice'], delayMs: { rcpt: 1200 } },
    },
    domains: { 'quick-oas.com': ['quick'], 'slow-oas.com': ['slow'] },
  });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-openapi-'));
  app = await createServer({
    dataDir: dir,
    rootUsername: USER,
    rootPassword: PASSWORD,
    basePath: BASE,
    verifier: labVerifierOptions(lab),
    // Small caps, so that a 413 costs little.
    bodyLimit: 64 * 1024,
    fileImport: { maxFileBytes: 16 * 1024, tempDir: dir },
    // Credits accounted, with enough free credits for the session's jobs.
    credits: { freeDailyCredits: 1000 },
  });
  origin = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Request {
  readonly json?: unknown;
  /** A body sent as it is (a string with `type`, or FormData, whose type fetch writes). */
  readonly raw?: string | FormData;
  readonly type?: string;
  readonly headers?: Record<string, string>;
  /** Credentials: Basic by default; null sends none. */
  readonly authorization?: string | null;
  /** A request the server takes though the document's spelling is stricter: its answer is checked, not the request. */
  readonly lenient?: boolean;
}

/** One request through the listening server, recorded for the document's checks. */
async function call(method: string, path: string, request: Request = {}): Promise<Exchange> {
  const headers: Record<string, string> = { ...request.headers };
  const authorization = request.authorization === undefined ? BASIC : request.authorization;
  if (authorization !== null) headers['authorization'] = authorization;
  let body: string | FormData | undefined = request.raw;
  if (request.json !== undefined) body = JSON.stringify(request.json);
  const type = request.type ?? (request.json !== undefined ? 'application/json' : undefined);
  if (type !== undefined) headers['content-type'] = type;
  const response = await fetch(`${origin}${BASE}${path}`, { method, headers, body, redirect: 'manual' });
  const exchange: Exchange = {
    method,
    url: `${BASE}${path}`,
    ...(type !== undefined && { requestType: type }),
    ...(request.json !== undefined && { requestJson: request.json }),
    ...(request.lenient === true && { lenient: true }),
    status: response.status,
    headers: response.headers,
    body: Buffer.from(await response.arrayBuffer()),
  };
  exchanges.push(exchange);
  return exchange;
}

const jsonOf = (exchange: Exchange): Json => JSON.parse(exchange.body.toString('utf8'));

// --- The document as a validator -------------------------------------------------------------------------------

const DOC_ID = 'https://mailverify.test/openapi.json';
let ajv: Ajv2020;
const compiled = new Map<string, ValidateFunction>();

/** The document's schema at a JSON pointer, compiled once: its `#/components/schemas/...` references resolve in it. */
function schemaAt(pointer: string[]): ValidateFunction {
  const ref = `${DOC_ID}#/${pointer.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
  let validate = compiled.get(ref);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: ref });
    compiled.set(ref, validate);
  }
  return validate;
}

function errorsOf(validate: ValidateFunction, value: unknown): string[] {
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}

/** The document's path template for a request path (the server's URL stripped), and its parameters. */
function operationOf(method: string, url: string): { path: string; params: Record<string, string>; operation: Json } | string {
  const pathname = new URL(url, 'http://x').pathname;
  const serverUrl = doc.servers[0].url === '/' ? '' : doc.servers[0].url;
  if (!pathname.startsWith(serverUrl)) return `${pathname} is not under the server URL ${serverUrl}`;
  const local = pathname.slice(serverUrl.length);
  for (const [template, item] of Object.entries<Json>(doc.paths)) {
    const names: string[] = [];
    const pattern = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    const match = new RegExp(`^${pattern}$`).exec(local);
    if (match === null) continue;
    const operation = item[method.toLowerCase()];
    if (operation === undefined) return `${method} ${template} is not in the document`;
    const params = Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(match[i + 1]!)]));
    return { path: template, params, operation };
  }
  return `no path of the document matches ${local}`;
}

/** A parameter's text as its schema's type reads it. */
function parameterValue(schema: Json, text: string): unknown {
  return schema.type === 'integer' && /^-?\d+$/.test(text) ? Number(text) : text;
}

/** What is wrong with an exchange according to the document; empty when nothing is. */
function check(exchange: Exchange): string[] {
  const found = operationOf(exchange.method, exchange.url);
  if (typeof found === 'string') return [found];
  const { path, params, operation } = found;
  const where = `${exchange.method} ${exchange.url} -> ${exchange.status}`;
  const method = exchange.method.toLowerCase();
  const problems: string[] = [];
  const status = String(exchange.status);
  const responseKey = [status, `${status[0]}XX`, 'default'].find((key) => operation.responses[key] !== undefined);
  if (responseKey === undefined) return [`${where}: status not documented`];
  const response = operation.responses[responseKey];

  // The answer: its media type among the documented ones, its body valid, the headers it sends documented.
  const contentType = exchange.headers.get('content-type');
  if (response.content === undefined) {
    if (exchange.body.length !== 0) problems.push(`${where}: a body where none is documented`);
  } else {
    const essence = contentType?.split(';')[0]!.trim().toLowerCase();
    const media = essence === undefined ? undefined : response.content[essence];
    if (media === undefined) {
      problems.push(`${where}: content type ${contentType} not among ${Object.keys(response.content).join(', ')}`);
    } else if (essence === 'application/json' || essence!.endsWith('+json')) {
      const body = jsonOf(exchange);
      const pointer = ['paths', path, method, 'responses', responseKey, 'content', essence!, 'schema'];
      problems.push(...errorsOf(schemaAt(pointer), body).map((e) => `${where}: body ${e}`));
      if (essence === 'application/problem+json' && body.status !== exchange.status) problems.push(`${where}: problem status ${body.status}`);
    } else if (essence!.startsWith('text/')) {
      const pointer = ['paths', path, method, 'responses', responseKey, 'content', essence!, 'schema'];
      problems.push(...errorsOf(schemaAt(pointer), exchange.body.toString('utf8')).map((e) => `${where}: body ${e}`));
    }
  }
  for (const header of ['location', 'www-authenticate', 'content-disposition']) {
    const documented = Object.keys(response.headers ?? {}).some((name) => name.toLowerCase() === header);
    if (exchange.headers.has(header) && !documented) problems.push(`${where}: header ${header} not documented`);
    // Where the document promises a Location (the job to poll, the page of an entry), the answer has one.
    if (header === 'location' && documented && !exchange.headers.has(header)) problems.push(`${where}: no Location`);
  }

  // The request, when the server took it (2xx, 3xx): its query and path parameters and its JSON body are valid.
  if (exchange.status < 400 && exchange.lenient !== true) {
    const parameters: Json[] = operation.parameters ?? [];
    const query = new URL(exchange.url, 'http://x').searchParams;
    const given: Array<[string, string, string]> = [
      ...[...query].map(([name, text]): [string, string, string] => ['query', name, text]),
      ...Object.entries(params).map(([name, text]): [string, string, string] => ['path', name, text]),
    ];
    for (const [place, name, text] of given) {
      const index = parameters.findIndex((p) => p.in === place && p.name === name);
      if (index < 0) {
        problems.push(`${where}: ${place} parameter ${name} not documented`);
        continue;
      }
      const validate = schemaAt(['paths', path, method, 'parameters', String(index), 'schema']);
      problems.push(...errorsOf(validate, parameterValue(parameters[index].schema, text)).map((e) => `${where}: ${name} ${e}`));
    }
    if (exchange.requestJson !== undefined) {
      const pointer = ['paths', path, method, 'requestBody', 'content', 'application/json', 'schema'];
      if (operation.requestBody?.content?.['application/json'] === undefined) problems.push(`${where}: no JSON body documented`);
      else problems.push(...errorsOf(schemaAt(pointer), exchange.requestJson).map((e) => `${where}: request ${e}`));
    }
  }
  return problems;
}

// --- The tests -----------------------------------------------------------------------------------------------------

describe('GET /openapi.json', () => {
  it('answers without credentials with a valid OpenAPI 3.1 document of every operation', async () => {
    const answer = await call('GET', '/openapi.json', { authorization: null });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    doc = jsonOf(answer);

    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ title: 'mailverify', version: VERSION });
    expect(doc.servers).toEqual([{ url: BASE }]);
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');

    const operations = Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual([...OPERATIONS].sort());
    const ids = new Set<string>();
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        expect(Object.keys(operation.responses).length, `${method} ${path}`).toBeGreaterThan(0);
        expect(operation.operationId, `${method} ${path}`).toEqual(expect.any(String));
        expect(ids.has(operation.operationId), operation.operationId).toBe(false);
        ids.add(operation.operationId);
        // Every operation but the token's, the document's and the probes' needs credentials: HTTP Basic or a bearer token.
        const open = path.endsWith('/auth/tokens') || ['/openapi.json', '/health', '/ready'].includes(path);
        expect(operation.security ?? doc.security, `${method} ${path}`).toEqual(open ? [] : [{ basicAuth: [] }, { bearerAuth: [] }]);
      }
    }
    expect(doc.components.securitySchemes).toMatchObject({
      basicAuth: { type: 'http', scheme: 'basic' },
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    });
    for (const name of ['Entry', 'Overview', 'Problem', 'Meta', 'EntryPage', 'JobPage', 'JobSnapshot', 'LegacySnapshot', 'LegacyEntry']) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }

    ajv = new Ajv2020({ strict: true, strictTypes: false, strictRequired: false, allErrors: true });
    addFormats.default(ajv);
    // The document is the root of the references; its own members are not JSON Schema keywords.
    ajv.addVocabulary(['openapi', 'info', 'servers', 'paths', 'components', 'security', 'tags']);
    ajv.addSchema({ ...doc, $id: DOC_ID });
  });
});

describe('a session through a real server: every answer as the document says', () => {
  const entries = [
    { inputData: 'alice@quick-oas.com', custom: 'first' },
    { inputData: 'nobody@quick-oas.com' },
    { inputData: 'not an address' },
    { inputData: 'ALICE@quick-oas.com' },
    { inputData: 'bob@gmial.com', custom: 'a typo' },
  ];
  let token: string;
  let done: string;
  let running: string;

  it('tokens: 200, then 400, 401 and 415', async () => {
    const issued = await call('POST', '/v2.7/auth/tokens', { json: { username: USER, password: PASSWORD }, authorization: null });
    expect(issued.status).toBe(200);
    token = jsonOf(issued).accessToken;
    expect((await call('POST', '/v2.6/auth/tokens', { json: { username: USER, password: 'wrong' }, authorization: null })).status).toBe(401);
    // The handlers' own checks answer, not Fastify's schema validation: the problem names the field.
    const missing = await call('POST', '/v2.7/auth/tokens', { json: { username: USER }, authorization: null });
    expect(missing.status).toBe(400);
    expect(jsonOf(missing)).toMatchObject({ type: '/problems/invalid-field', detail: 'password: required, a string' });
    expect((await call('POST', '/v2.7/auth/tokens', { raw: 'root', type: 'text/plain', authorization: null })).status).toBe(415);
  });

  it('JSON submission: 200 within waitTime (bearer token), 202 with Location, 400s, 401, 413', async () => {
    const bearer = `Bearer ${token}`;
    const submitted = await call('POST', '/v2.7/email-validations?waitTime=20000', {
      json: { entries, quality: 'High', deduplication: 'Safe', priority: 200, name: 'documented', retention: '1.00:00:00' },
      authorization: bearer,
    });
    expect(submitted.status).toBe(200);
    done = jsonOf(submitted).overview.id;
    const slow = await call('POST', '/v2.6/email-validations', { json: { entries: [{ inputData: 'alice@slow-oas.com' }] } });
    expect(slow.status).toBe(202);
    running = jsonOf(slow).overview.id;

    const invalid: unknown[] = [
      {},
      { entries: [] },
      { entries: [{ inputData: 'a@b.c', custom: 'x'.repeat(51) }] },
      { entries: [{ inputData: 'a@b.c' }], quality: 'Best' },
    ];
    for (const json of invalid) expect((await call('POST', '/v2.7/email-validations', { json })).status).toBe(400);
    // Enumerations are read in any case (the document names the canonical spelling) and unknown fields ignored.
    const lenient = await call('POST', '/v2.7/email-validations?waitTime=20000', {
      json: { entries: [{ inputData: 'carol@quick-oas.com' }], quality: 'extreme', captcha: {} },
      lenient: true,
    });
    expect(lenient.status).toBe(200);
    expect(jsonOf(lenient).overview.quality).toBe('Extreme');
    expect((await call('POST', '/v2.7/email-validations', { raw: '{"entries": [', type: 'application/json' })).status).toBe(400);
    expect((await call('POST', '/v2.7/email-validations?waitTime=soon', { json: { entries } })).status).toBe(400);
    expect((await call('POST', '/v2.7/email-validations', { json: { entries }, authorization: null })).status).toBe(401);
    expect((await call('POST', '/v2.7/email-validations', { json: { entries }, authorization: 'Bearer forged' })).status).toBe(401);
    const large = Array.from({ length: 2000 }, (_, i) => ({ inputData: `user${i}@quick-oas.com`, custom: 'padding' }));
    expect((await call('POST', '/v2.7/email-validations', { json: { entries: large } })).status).toBe(413);
  });

  it('while a job runs: 202 from every job resource, 1.4 DELETE 406; then 200', async () => {
    for (const path of ['', '/overview', '/entries', '/entries/0']) {
      expect((await call('GET', `/v2.6/email-validations/${running}${path}`)).status).toBe(202);
    }
    expect((await call('GET', `/v1.4/email-validations/${running}`)).status).toBe(202);
    expect((await call('DELETE', `/v1.4/email-validations/${running}`)).status).toBe(406);
    expect((await call('GET', `/v2.6/email-validations/${running}?waitTime=20000`)).status).toBe(200);
    expect((await call('GET', `/v2.6/email-validations/${running}/overview`)).status).toBe(200);
  });

  it('file import: 200 for CSV and plain text, 415 for a type it does not read, 413 past the upload limit, 400 without a file', async () => {
    const form = (file: Blob, settings?: unknown): FormData => {
      const data = new FormData();
      data.append('inputFile', file, 'list');
      if (settings !== undefined) data.append('settings', JSON.stringify(settings));
      return data;
    };
    const csv = new Blob(['address,note\nalice@quick-oas.com,one\ncarol@quick-oas.com,two\n'], { type: 'text/csv' });
    const settings = { startingRow: 1, name: 'csv', quality: 'Standard' };
    expect((await call('POST', '/v2.7/email-validations?waitTime=20000', { raw: form(csv, settings) })).status).toBe(200);
    const text = new Blob(['bob@quick-oas.com\r\nnot an address\r\n'], { type: 'text/plain; charset=utf-8' });
    expect((await call('POST', '/v2.6/email-validations?waitTime=20000', { raw: form(text) })).status).toBe(200);
    expect((await call('POST', '/v2.7/email-validations', { raw: form(new Blob(['%PDF-1.7'], { type: 'application/pdf' })) })).status).toBe(415);
    const large = new Blob(['a@b.c\n'.repeat(4000)], { type: 'text/plain' });
    expect((await call('POST', '/v2.7/email-validations', { raw: form(large) })).status).toBe(413);
    const settingsOnly = new FormData();
    settingsOnly.append('settings', '{}');
    expect((await call('POST', '/v2.7/email-validations', { raw: settingsOnly })).status).toBe(400);
  });

  it('entries: pages both ways, filters, the 303 to an entry\'s page, exports, 400, 404, 406', async () => {
    const first = await call('GET', `/v2.7/email-validations/${done}/entries?limit=2`);
    expect(first.status).toBe(200);
    const cursor = jsonOf(first).meta.cursor;
    const second = await call('GET', `/v2.7/email-validations/${done}/entries?cursor=${encodeURIComponent(cursor)}&limit=2`);
    expect(second.status).toBe(200);
    const back = jsonOf(second).meta.cursor;
    expect((await call('GET', `/v2.7/email-validations/${done}/entries?cursor:prev=${encodeURIComponent(back)}`)).status).toBe(200);
    expect((await call('GET', `/v2.7/email-validations/${done}/entries?status=Success,Duplicate&waitTime=0`)).status).toBe(200);
    expect((await call('GET', `/v2.6/email-validations/${done}/entries?status:exclude=Success`)).status).toBe(200);
    expect((await call('GET', `/v2.7/email-validations/${done}/entries?status=Fine`)).status).toBe(400);
    expect((await call('GET', `/v2.7/email-validations/${done}/entries?cursor=forged.cursor`)).status).toBe(400);

    const located = await call('GET', `/v2.7/email-validations/${done}/entries/3?limit=2`);
    expect(located.status).toBe(303);
    const page = await call('GET', located.headers.get('location')!.slice(BASE.length));
    expect(page.status).toBe(200);
    expect(jsonOf(page).data.map((e: Json) => e.index)).toEqual([2, 3]);
    expect((await call('GET', `/v2.7/email-validations/${done}/entries/99`)).status).toBe(404);

    for (const accept of ['text/csv', XLSX, XLS]) {
      const exported = await call('GET', `/v2.7/email-validations/${done}/entries`, { headers: { accept } });
      expect(exported.status).toBe(200);
      expect(exported.headers.get('content-disposition')).toMatch(/^attachment/);
    }
    expect((await call('GET', `/v2.7/email-validations/${done}/entries`, { headers: { accept: 'image/png' } })).status).toBe(406);
  });

  it('the job list: pages, filters, sort; 400 for a bad filter', async () => {
    const first = await call('GET', '/v2.7/email-validations?limit=1&sort=createdOn');
    expect(first.status).toBe(200);
    const cursor = jsonOf(first).meta.cursor;
    expect((await call('GET', `/v2.7/email-validations?sort=createdOn&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect((await call('GET', `/v2.6/email-validations?status=Completed&createdOn:since=${today}&status:exclude=Deleted`)).status).toBe(200);
    expect((await call('GET', `/v2.7/email-validations?createdOn=${today}&sort=-createdOn`)).status).toBe(200);
    expect((await call('GET', '/v2.7/email-validations?sort=name')).status).toBe(400);
    expect((await call('GET', '/v2.7/email-validations?createdOn=yesterday')).status).toBe(400);
  });

  it('deletion: 200, then 410 from every job resource; 404 for an unknown job; 401 without credentials', async () => {
    expect((await call('DELETE', `/v2.7/email-validations/${done}`)).status).toBe(200);
    for (const path of ['', '/overview', '/entries', '/entries/0']) {
      expect((await call('GET', `/v2.7/email-validations/${done}${path}`)).status).toBe(410);
    }
    expect((await call('DELETE', `/v2.7/email-validations/${done}`)).status).toBe(410);
    expect((await call('DELETE', `/v2.6/email-validations/${running}`)).status).toBe(200);
    const unknown = randomUUID();
    expect((await call('GET', `/v2.7/email-validations/${unknown}`)).status).toBe(404);
    expect((await call('GET', `/v2.6/email-validations/${unknown}/entries`)).status).toBe(404);
    expect((await call('DELETE', `/v2.7/email-validations/${unknown}`)).status).toBe(404);
    expect((await call('GET', '/v2.7/email-validations', { authorization: null })).status).toBe(401);
    expect((await call('GET', `/v2.7/email-validations/${running}/overview`, { authorization: 'Basic bm9ib2R5Om5vdGhpbmc=' })).status).toBe(401);
  });

  it('legacy 1.4: POST 202, GET 200 with every entry, DELETE 200 then 410; 400, 401, 404', async () => {
    const posted = await call('POST', '/v1.4/email-validations', { json: { entries, quality: 'Standard', deduplication: 'Safe', priority: 10 } });
    expect(posted.status).toBe(202);
    const id = jsonOf(posted).uniqueID;
    // One job whichever interface: waited for through 2.x, then read through 1.4.
    expect((await call('GET', `/v2.7/email-validations/${id}/overview?waitTime=20000`)).status).toBe(200);
    const read = await call('GET', `/v1.4/email-validations/${id}`);
    expect(read.status).toBe(200);
    expect(jsonOf(read).entries).toHaveLength(entries.length);
    expect((await call('DELETE', `/v1.4/email-validations/${id}`)).status).toBe(200);
    expect((await call('DELETE', `/v1.4/email-validations/${id}`)).status).toBe(410);
    expect((await call('GET', `/v1.4/email-validations/${id}`)).status).toBe(410);
    expect((await call('GET', `/v1.4/email-validations/${randomUUID()}`)).status).toBe(404);
    expect((await call('POST', '/v1.4/email-validations', { json: { entries, deduplication: 'relaxed' } })).status).toBe(400);
    expect((await call('POST', '/v1.4/email-validations', { json: { entries }, authorization: null })).status).toBe(401);
  });

  it('users: create, list, read, patch (If-Match, a failed test), TOTP enrolment and sign-in step, deletion', async () => {
    const created = await call('POST', '/v2.7/users', {
      json: { type: 'Standard', displayName: 'Ann', authentication: { password: { username: 'ann', password: 'correct horse' } } },
    });
    expect(created.status).toBe(200);
    const id = jsonOf(created).id;
    const etag = created.headers.get('etag')!;
    expect((await call('GET', '/v2.7/users?limit=1&sort=-displayName&includeDeleted=true&type=Standard')).status).toBe(200);
    expect((await call('GET', `/v2.7/users/${id}`)).status).toBe(200);
    expect((await call('GET', '/v2.7/users?sort=age')).status).toBe(400);
    const patch = (operations: unknown, ifMatch?: string) =>
      call('PATCH', `/v2.7/users/${id}`, { raw: JSON.stringify(operations), type: 'application/json-patch+json', headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } });
    expect((await patch([{ op: 'replace', path: '/displayName', value: 'Ann B.' }], etag)).status).toBe(200);
    expect((await patch([{ op: 'replace', path: '/displayName', value: 'Ann C.' }], etag)).status).toBe(412);
    expect((await patch([{ op: 'test', path: '/displayName', value: 'Ann' }])).status).toBe(409);

    const enrolment = await call('POST', `/v2.7/users/${id}/authentication/totp`);
    expect(enrolment.status).toBe(200);
    const totp = new TOTP({ secret: jsonOf(enrolment).secret });
    // Kept as given: computed again later, the code of "now" may be the next step's, which is still good.
    const confirmation = totp.generate();
    expect((await call('POST', `/v2.7/users/${id}/authentication/totp/confirmations`, { json: { passCode: confirmation } })).status).toBe(200);
    const first = await call('POST', '/v2.7/auth/tokens', { json: { username: 'ann', password: 'correct horse' }, authorization: null });
    const bearer = `Bearer ${jsonOf(first).accessToken}`;
    // The code of the confirmation is used up; the next step's (one step of skew) is good.
    expect((await call('POST', '/v2.7/auth/totp/verifications', { json: { passCode: confirmation }, authorization: bearer })).status).toBe(403);
    // The TOTP step is under 2.6 too (multi-factor sign-in exists since 2.6).
    expect((await call('POST', '/v2.6/auth/totp/verifications', { json: { passCode: confirmation }, authorization: bearer })).status).toBe(403);
    const next = totp.generate({ timestamp: Date.now() + 30_000 });
    expect((await call('POST', '/v2.7/auth/totp/verifications', { json: { passCode: next }, authorization: bearer })).status).toBe(200);
    // A first-factor token gets one full token: used up, it answers 401 (the code is not even looked at).
    expect((await call('POST', '/v2.7/auth/totp/verifications', { json: { passCode: next }, authorization: bearer })).status).toBe(401);
    expect((await call('DELETE', `/v2.7/users/${id}/authentication/totp`)).status).toBe(200);
    expect((await call('DELETE', `/v2.7/users/${id}`)).status).toBe(200);
    expect((await call('GET', `/v2.7/users/${id}`)).status).toBe(410);
  });

  it('credits: quality levels, balance, daily usage, packs (200, 400), the 1.4 balance, a 402', async () => {
    for (const v of ['/v2.7', '/v2.6']) {
      expect((await call('GET', `${v}/email-validations/quality-levels`)).status).toBe(200);
      expect((await call('GET', `${v}/credits/balance`)).status).toBe(200);
      expect((await call('GET', `${v}/credits/daily-usage?date:since=2000-01-01&limit=1`)).status).toBe(200);
    }
    expect((await call('GET', '/v2.7/credits/daily-usage?date=yesterday')).status).toBe(400);
    expect((await call('POST', '/v2.7/credits/packs', { json: { credits: 1.5 } })).status).toBe(200);
    expect((await call('POST', '/v2.7/credits/packs', { json: { credits: 0 } })).status).toBe(400);
    expect((await call('GET', '/v1.4/account-balance')).status).toBe(200);
    const entries = Array.from({ length: 300 }, (_, i) => ({ inputData: `u${i}@quick-oas.com` }));
    const refused = await call('POST', '/v2.7/email-validations', { json: { entries, quality: 'Extreme' } });
    expect(refused.status).toBe(402);
    expect(jsonOf(refused).type).toBe('/problems/insufficient-credit');
  });

  it('override rules: GET, PUT (the array and the object form, 200; a malformed rule, 400), a job entry OverrideMatch with a custom classification', async () => {
    expect((await call('GET', '/v2.7/settings/overrides')).status).toBe(200);
    const rules = [{ match: 'vip@quick-oas.com', classification: 'Gold customer' }];
    expect((await call('PUT', '/v2.7/settings/overrides', { json: { overrides: [] } })).status).toBe(200);
    expect((await call('PUT', '/v2.7/settings/overrides', { json: [{ match: 'a@b.c' }] })).status).toBe(400);
    expect((await call('PUT', '/v2.7/settings/overrides', { json: rules })).status).toBe(200);
    const job = await call('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: [{ inputData: 'vip@quick-oas.com' }] } });
    expect(job.status).toBe(200);
    expect(jsonOf(job).entries.data[0]).toMatchObject({ status: 'OverrideMatch', classification: 'Gold customer' });
    expect((await call('PUT', '/v2.7/settings/overrides', { json: [] })).status).toBe(200);
  });

  it('the probes: /health and /ready answer 200 without credentials', async () => {
    expect((await call('GET', '/health', { authorization: null })).status).toBe(200);
    expect((await call('GET', '/ready', { authorization: null })).status).toBe(200);
  });

  it('every answer and every accepted request is as the document says', () => {
    const problems = exchanges.flatMap(check);
    expect(problems).toEqual([]);
    // The session reached every operation, and every status the interface answers with.
    const reached = new Set(exchanges.map((e) => {
      const found = operationOf(e.method, e.url);
      return typeof found === 'string' ? found : `${e.method} ${found.path}`;
    }));
    expect([...reached].sort()).toEqual([...OPERATIONS].sort());
    const statuses = new Set(exchanges.map((e) => e.status));
    for (const status of [200, 202, 303, 400, 401, 404, 406, 410, 413, 415]) expect(statuses.has(status), String(status)).toBe(true);
  });

  it('the checks are not vacuous: an unnamed field, a missing one, a wrong value, an undocumented status or type, no Location fail', () => {
    const snapshot = exchanges.find((e) => e.url.includes('/email-validations?waitTime=20000') && e.status === 200 && e.requestJson !== undefined)!;
    const altered = (change: (body: Json) => void, status = snapshot.status): Exchange => {
      const body = jsonOf(snapshot);
      change(body);
      return { ...snapshot, status, body: Buffer.from(JSON.stringify(body)) };
    };
    expect(check(snapshot)).toEqual([]);
    expect(check(altered((b) => (b.overview.extra = 1))).join()).toMatch(/additional/);
    expect(check(altered((b) => delete b.entries.data[0].completedOn)).join()).toMatch(/completedOn/);
    expect(check(altered((b) => (b.entries.data[0].status = 'Fine'))).join()).toMatch(/status must be equal to one of the allowed values/);
    expect(check(altered((b) => (b.overview.status = 'InProgress'))).join()).toMatch(/progress|enum/);
    expect(check(altered(() => undefined, 409)).join()).toMatch(/not documented/);
    expect(check({ ...snapshot, headers: new Headers({ 'content-type': 'text/html' }) }).join()).toMatch(/content type/);
    const polled = exchanges.find((e) => e.method === 'POST' && e.status === 202 && e.url.includes('/v2.'))!;
    expect(check(polled)).toEqual([]);
    expect(check({ ...polled, headers: new Headers({ 'content-type': 'application/json' }) }).join()).toMatch(/no Location/);
  });
});

describe('embedded in a host Fastify app', () => {
  it('serves its own document under the host\'s prefix, beside a host that has @fastify/swagger of its own', async () => {
    const host = Fastify();
    // A shared schema of the host's with the name of one of the server's.
    host.addSchema({ $id: 'Problem', type: 'object', properties: { message: { type: 'string' } } });
    await host.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 'host', version: '1.0.0' } } });
    host.get('/host-route', async () => ({ ok: true }));
    const options = { dataDir: join(dir, 'host'), rootUsername: USER, rootPassword: PASSWORD, verifier: { checks: 'syntax' as const } };
    await host.register(mailverify, { prefix: '/host', ...options });
    try {
      await host.ready();
      const answer = await host.inject({ method: 'GET', url: '/host/openapi.json' });
      expect(answer.statusCode).toBe(200);
      const own = answer.json();
      expect(own.servers).toEqual([{ url: '/host' }]);
      expect(Object.keys(own.paths)).not.toContain('/host-route');
      expect(Object.keys(own.paths)).toContain('/v2.7/email-validations');
      // The host's document, made by its own plugin, still builds, and holds the host's route.
      expect(Object.keys((host.swagger() as Json).paths)).toContain('/host-route');
    } finally {
      await host.close();
    }
  });
});
