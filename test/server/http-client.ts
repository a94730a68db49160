// An HTTP client for server tests: calls with HTTP Basic through http-calls.ts's `exchange`, their answers read whole
// and their JSON read leniently; and for the tests of
// throttling, per-user submission limits and request rate limits, a listening server of their own (jobs offline,
// syntax checks only, in a fresh data folder) with users made by root.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { createServer, type StandaloneOptions } from '../../packages/server/src/server/app.js';
import { basic, exchange } from './http-calls.js';

export { basic };

export const ROOT = 'root';
export const ROOT_PASSWORD = 'limits test root password';
export const ROOT_AUTH = basic(ROOT, ROOT_PASSWORD);

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: any;
}

export interface Call {
  /** The Authorization header: root's Basic credentials by default; null sends none. */
  readonly auth?: string | null;
  readonly json?: unknown;
  /** A body sent as it is, with `type` as its Content-Type. */
  readonly raw?: string | Uint8Array;
  readonly type?: string;
  readonly accept?: string;
  /** The client address a trusted proxy says the request came from. */
  readonly forwardedFor?: string;
}

/** A request to the server at `origin`, with `rootAuth` unless the request says otherwise, not following redirects; its
 * answer read whole, its body the text's JSON (undefined when it is not JSON). */
export async function callServer(origin: string, rootAuth: string, method: string, path: string, request: Call = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (request.accept !== undefined) headers['accept'] = request.accept;
  if (request.forwardedFor !== undefined) headers['x-forwarded-for'] = request.forwardedFor;
  if (request.json === undefined && request.raw !== undefined) headers['content-type'] = request.type ?? 'application/json';
  const reply = await exchange({ origin }, method, path, rootAuth, {
    ...(request.auth !== undefined && { authorization: request.auth }),
    ...(request.json !== undefined && { json: request.json }),
    ...(request.raw !== undefined && { raw: request.raw }),
    headers,
    redirect: 'manual',
  });
  return { ...reply, body: lenientJson(reply.text) };
}

function lenientJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

export interface Running {
  readonly app: FastifyInstance;
  readonly origin: string;
  call(method: string, path: string, request?: Call): Promise<Answer>;
  /** A user made by root with these settings (a Standard user by default); its Basic credentials. */
  createUser(settings?: Record<string, unknown>): Promise<{ id: string; auth: string }>;
  /** Root changes a user with a JSON Patch. */
  patchUser(id: string, operations: readonly unknown[]): Promise<void>;
  close(): Promise<void>;
}

export async function start(options: Partial<StandaloneOptions> = {}): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-limits-'));
  const app = await createServer({
    dataDir: join(dir, 'data'),
    rootUsername: ROOT,
    rootPassword: ROOT_PASSWORD,
    verifier: { checks: 'syntax' },
    fileImport: { tempDir: dir },
    ...options,
  });
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  let users = 0;
  const call = (method: string, path: string, request: Call = {}): Promise<Answer> => callServer(origin, ROOT_AUTH, method, path, request);
  return {
    app,
    origin,
    call,
    async createUser(settings = {}) {
      users += 1;
      const username = `user-${users}`;
      const password = `password of user ${users}`;
      const answer = await call('POST', '/v2.7/users', {
        json: { type: 'Standard', displayName: `User ${users}`, authentication: { password: { username, password } }, ...settings },
      });
      expect(answer.status, answer.text).toBe(200);
      return { id: answer.body.id, auth: basic(username, password) };
    },
    async patchUser(id, operations) {
      const answer = await call('PATCH', `/v2.7/users/${id}`, { raw: JSON.stringify(operations), type: 'application/json-patch+json' });
      expect(answer.status, answer.text).toBe(200);
    },
    async close() {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A multipart/form-data file import of `lines` (a text file), with optional settings. */
export function fileImport(lines: readonly string[], settings?: unknown): { raw: Uint8Array; type: string } {
  const boundary = `----mailverify-test-${randomUUID()}`;
  let text = `--${boundary}\r\nContent-Disposition: form-data; name="inputFile"; filename="list.txt"\r\nContent-Type: text/plain\r\n\r\n`;
  text += `${lines.join('\r\n')}\r\n`;
  if (settings !== undefined) {
    text += `--${boundary}\r\nContent-Disposition: form-data; name="settings"\r\n\r\n${JSON.stringify(settings)}\r\n`;
  }
  text += `--${boundary}--\r\n`;
  return { raw: Buffer.from(text), type: `multipart/form-data; boundary=${boundary}` };
}

/** A 429 problem document with a whole number of seconds (at least 1) in Retry-After: those seconds. */
export function expectTooManyRequests(answer: Answer): number {
  expect(answer.status, answer.text).toBe(429);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ status: 429, type: '/problems/too-many-requests' });
  const retryAfter = answer.headers.get('retry-after') ?? '';
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  return Number(retryAfter);
}
