/**
 * The users of the account (under /v2.7 only): listed, created, read, changed with JSON Patch, deleted; and the TOTP
 * second factor: enrolment and its confirmation (mailverify's own), removal, and the TOTP step of sign-in (under
 * every 2.x version: multi-factor sign-in exists since 2.6, and the official clients of 2.6 use it). The rules of the
 * documents are in src/accounts/users.ts; here they meet HTTP: permissions, entity tags, problem documents.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hashPassword } from '../accounts/passwords.js';
import { acceptTotp, newTotpSecret, totpUri } from '../accounts/totp.js';
import { USER_TYPES, UsernameTakenError, type UserRecord, type UserSort, type UserType } from '../accounts/types.js';
import {
  changedUserRecord,
  newUser,
  PatchTestFailedError,
  patchUser,
  userDetailView,
  userEtag,
  UserFieldError,
  UserForbiddenError,
  userOverviewView,
  type Caller,
} from '../accounts/users.js';
import { isoTime } from '../jobs/clock.js';
import { forbidden, permits, principalOf, requirePermission, type Principal } from './access.js';
import { unauthorized } from './auth.js';
import { checkRequestProtection } from './protection.js';
import { parseClientJson } from './json-depth.js';
import { ProblemError, excerpt, invalidField, tooManyRequests } from './problems.js';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './shapes.js';
import type { ServerContext } from './context.js';
import { USER_OPERATIONS } from './schemas/index.js';

const JSON_PATCH = 'application/json-patch+json';
const SORTS: readonly UserSort[] = ['createdOn', '-createdOn', 'displayName', '-displayName'];

export const USER_PATHS: Record<string, readonly string[]> = {
  '/users': ['GET', 'POST'],
  '/users/:id': ['GET', 'PATCH', 'DELETE'],
  '/users/:id/authentication/totp': ['POST', 'DELETE'],
  '/users/:id/authentication/totp/confirmations': ['POST'],
};

/** The TOTP step of sign-in, under every 2.x version. */
export const TOTP_STEP_PATHS: Record<string, readonly string[]> = {
  '/auth/totp/verifications': ['POST'],
};

/** The caller as the rules of the user documents see it. */
function callerOf(principal: Principal): Caller {
  const user = principal.user;
  return {
    isRoot: principal.isRoot,
    ...(user !== undefined && { type: user.detail.type, userId: user.id }),
    rules: user?.detail.authorization.rules ?? [],
  };
}

/** The errors of the document rules as problem documents. */
function asProblem(error: unknown): unknown {
  if (error instanceof UserFieldError) return invalidField(error.field === '' ? 'body' : error.field, error.problem);
  if (error instanceof UserForbiddenError) return forbidden(error.detail);
  if (error instanceof PatchTestFailedError) return new ProblemError(409, `A test operation failed (operation ${error.index}): nothing was changed.`);
  if (error instanceof UsernameTakenError) return invalidField('authentication.password.username', 'is taken by another user');
  return error;
}

async function documentRules<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asProblem(error);
  }
}

/** Stores a change of `user` made from `read`; 412 when it changed meanwhile. Forgets its remembered credentials. */
async function saveUser({ users, auth }: ServerContext, read: UserRecord, changed: UserRecord): Promise<UserRecord> {
  const saved = await documentRules(() => users.updateUser(changed, read.etag));
  auth.userChanged(read.id);
  if (!saved) throw new ProblemError(412, 'The user changed while this request was answered: read it again.', '/problems/precondition-failed');
  return changed;
}

/** The quoted strong entity tag of a user (RFC 9110, 8.8.3). */
const entityTag = (user: UserRecord): string => `"${user.etag}"`;

/**
 * `If-Match` (RFC 9110, 13.1.1): absent, unconditional; `*`, any current user; else a list of tags, quoted or bare,
 * weak ones compared by their opaque part. 412 when none matches.
 */
function checkIfMatch(request: FastifyRequest, user: UserRecord): void {
  const header = request.headers['if-match'];
  if (header === undefined) return;
  const tags = header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1'))
    .filter((tag) => tag !== '');
  if (tags.includes('*') || tags.includes(user.etag)) return;
  throw new ProblemError(412, 'If-Match: the user has changed since (its ETag is another).', '/problems/precondition-failed');
}

export async function userRoutes(app: FastifyInstance, context: ServerContext): Promise<void> {
  const { users, auth, rootUsername } = context;
  const { serially, steps } = context.secondFactor;

  app.addContentTypeParser(JSON_PATCH, { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseClientJson(body as string));
    } catch (error) {
      done(error instanceof ProblemError ? error : new ProblemError(400, 'The body is not valid JSON.'), undefined);
    }
  });

  /** The user `id` as the caller may see it: its own needs `users:<operation>:my`, another's account-wide read first (404). */
  async function accessibleUser(request: FastifyRequest, operation: 'read' | 'write' | 'delete'): Promise<UserRecord> {
    const principal = principalOf(request);
    const { id } = request.params as { id: string };
    const user = /^[0-9a-f-]{36}$/i.test(id) ? await users.getUser(id.toLowerCase()) : null;
    const own = user !== null && user.id === principal.id;
    if (user === null || (!own && !permits(principal, 'users', 'read', 'account'))) throw new ProblemError(404, `No user ${excerpt(id)}.`);
    requirePermission(principal, 'users', operation, own ? 'my' : 'account');
    if (user.deletedOn !== undefined) throw new ProblemError(410, `The user ${user.id} is deleted.`);
    return user;
  }

  const save = (read: UserRecord, changed: UserRecord) => saveUser(context, read, changed);

  const answerOverview = (reply: FastifyReply, user: UserRecord) => reply.header('ETag', entityTag(user)).send(userOverviewView(user));

  app.get('/users', { schema: USER_OPERATIONS.listUsers }, async (request) => {
    requirePermission(principalOf(request), 'users', 'read', 'account');
    const query = request.query as Record<string, string | string[] | undefined>;
    const one = (name: string): string | undefined => {
      const value = query[name];
      if (Array.isArray(value)) throw invalidField(name, 'given more than once');
      return value;
    };
    const includeDeletedText = one('includeDeleted');
    if (includeDeletedText !== undefined && includeDeletedText !== 'true' && includeDeletedText !== 'false') {
      throw invalidField('includeDeleted', 'must be true or false');
    }
    const type = one('type');
    if (type !== undefined && !(USER_TYPES as readonly string[]).includes(type)) throw invalidField('type', `must be one of ${USER_TYPES.join(', ')}`);
    const sort = (one('sort') ?? 'createdOn') as UserSort;
    if (!SORTS.includes(sort)) throw invalidField('sort', `must be one of ${SORTS.join(', ')}`);
    const limitText = one('limit');
    if (limitText !== undefined && (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_PAGE_LIMIT)) {
      throw invalidField('limit', `must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
    }
    const filter = `${includeDeletedText === 'true'}|${type ?? ''}|${sort}`;
    const listing = 'users';
    const next = one('cursor');
    const previous = one('cursor:prev');
    if (next !== undefined && previous !== undefined) throw invalidField('cursor', 'give cursor or cursor:prev, not both');
    let limit = limitText === undefined ? DEFAULT_PAGE_LIMIT : Number(limitText);
    let offset = 0;
    const cursorText = next ?? previous;
    const parameter = next !== undefined ? 'cursor' : 'cursor:prev';
    const given = includeDeletedText !== undefined || type !== undefined || one('sort') !== undefined;
    let state = { includeDeleted: includeDeletedText === 'true', type: type as UserType | undefined, sort };
    if (cursorText !== undefined) {
      // Users are paged by place in the listing (first and last offsets of the page the cursor came with).
      const cursor = context.cursors.decode(cursorText, listing, parameter);
      if (given && cursor.filter !== filter) throw invalidField(parameter, 'the cursor belongs to a listing with another filter');
      const [deleted = 'false', cursorType = '', cursorSort = 'createdOn'] = cursor.filter.split('|');
      state = { includeDeleted: deleted === 'true', type: (cursorType || undefined) as UserType | undefined, sort: cursorSort as UserSort };
      if (limitText === undefined) limit = cursor.limit;
      offset = next !== undefined ? cursor.last + 1 : Math.max(0, cursor.first - limit);
    }
    const page = await users.listUsers({
      includeDeleted: state.includeDeleted,
      ...(state.type !== undefined && { type: state.type }),
      sort: state.sort,
      offset,
      limit,
    });
    const meta: { cursor?: string; isTruncated: boolean } = { isTruncated: next !== undefined || cursorText === undefined ? page.more : offset > 0 };
    if (page.data.length > 0 && (page.more || cursorText !== undefined || offset > 0)) {
      const canonical = `${state.includeDeleted}|${state.type ?? ''}|${state.sort}`;
      meta.cursor = context.cursors.encode({ listing, filter: canonical, limit, first: offset, last: offset + page.data.length - 1 });
    }
    return { meta, data: page.data.map(userOverviewView) };
  });

  app.post('/users', { schema: USER_OPERATIONS.createUser }, async (request, reply) => {
    const principal = principalOf(request);
    requirePermission(principal, 'users', 'write', 'account');
    const created = await documentRules(() =>
      newUser(request.body, { id: randomUUID(), now: isoTime(context.jobs.clock), caller: callerOf(principal), rootUsername }),
    );
    const record: UserRecord = {
      ...created.record,
      ...(created.password !== undefined && { passwordHash: await hashPassword(created.password) }),
    };
    await documentRules(() => users.createUser(record));
    return answerOverview(reply.code(200).header('Location', `${request.server.prefix}/users/${record.id}`), record);
  });

  app.get('/users/:id', { schema: USER_OPERATIONS.getUser }, async (request, reply) => {
    const user = await accessibleUser(request, 'read');
    return reply.header('ETag', entityTag(user)).send(userDetailView(user));
  });

  app.patch('/users/:id', { schema: USER_OPERATIONS.patchUser }, async (request, reply) => {
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const user = await accessibleUser(request, 'write');
    if (type !== JSON_PATCH) throw new ProblemError(415, `A user is changed with a JSON Patch (Content-Type: ${JSON_PATCH}).`);
    checkIfMatch(request, user);
    const principal = principalOf(request);
    const change = await documentRules(() => patchUser(user, request.body, { caller: callerOf(principal), rootUsername }));
    const passwordHash = change.password === undefined ? undefined : await hashPassword(change.password);
    const saved = change.changed || passwordHash !== undefined ? await save(user, changedUserRecord(user, change, passwordHash)) : user;
    return answerOverview(reply, saved);
  });

  app.delete('/users/:id', { schema: USER_OPERATIONS.deleteUser }, async (request, reply) => {
    const user = await accessibleUser(request, 'delete');
    const principal = principalOf(request);
    if (user.detail.type === 'Administrator' && !principal.isRoot && principal.user?.detail.type !== 'Administrator') {
      throw forbidden('Only administrators may delete an administrator.');
    }
    checkIfMatch(request, user);
    await save(user, { ...user, deletedOn: isoTime(context.jobs.clock), etag: userEtag() });
    return reply.code(200).send();
  });

  // TOTP: the user itself, administrators and root. Someone else's is 404 to a user without account-wide read, else 403.
  async function totpOwner(request: FastifyRequest): Promise<UserRecord> {
    const principal = principalOf(request);
    const { id } = request.params as { id: string };
    const user = /^[0-9a-f-]{36}$/i.test(id) ? await users.getUser(id.toLowerCase()) : null;
    const own = user !== null && user.id === principal.id;
    const admin = principal.isRoot || principal.user?.detail.type === 'Administrator';
    if (user === null || (!own && !admin && !permits(principal, 'users', 'read', 'account'))) throw new ProblemError(404, `No user ${excerpt(id)}.`);
    if (!own && !admin) throw forbidden('Only the user itself and administrators manage its second factor.');
    if (user.deletedOn !== undefined) throw new ProblemError(410, `The user ${user.id} is deleted.`);
    return user;
  }

  app.post('/users/:id/authentication/totp', { schema: USER_OPERATIONS.enrolTotp }, async (request) => {
    const read = await totpOwner(request);
    return serially(read.id, async () => {
      const user = (await users.getUser(read.id))!;
      if (user.detail.type === 'BrowserApp') throw invalidField('type', 'a BrowserApp has no password, so no second factor');
      const secret = newTotpSecret();
      // Pending: the factor in use (if any) stays until this one is confirmed. Not a setting: the etag stays.
      await save(user, { ...user, totp: { ...user.totp, pendingSecret: secret } });
      return { secret, uri: totpUri(secret, user.detail.authentication.password.username ?? user.id) };
    });
  });

  app.post('/users/:id/authentication/totp/confirmations', { schema: USER_OPERATIONS.confirmTotp }, async (request, reply) => {
    const read = await totpOwner(request);
    const passCode = passCodeOf(request.body);
    return serially(read.id, async () => {
      const user = (await users.getUser(read.id))!;
      const pending = user.totp?.pendingSecret;
      if (pending === undefined) throw new ProblemError(409, 'No TOTP enrolment is waiting for its confirmation: POST …/authentication/totp first.');
      const step = acceptTotp(pending, passCode, user.totp?.lastStep, Date.now());
      if (step === null || !(await steps.claim(user.id, step))) throw forbidden('The code is wrong.');
      const saved = await save(user, { ...user, etag: userEtag(), totp: { secret: pending, lastStep: step } });
      return answerOverview(reply, saved);
    });
  });

  app.delete('/users/:id/authentication/totp', { schema: USER_OPERATIONS.removeTotp }, async (request, reply) => {
    const read = await totpOwner(request);
    return serially(read.id, async () => {
      const user = (await users.getUser(read.id))!;
      const password = user.detail.authentication.password;
      const { totp: _removed, ...rest } = user;
      const detail = { ...user.detail, authentication: { ...user.detail.authentication, password: { ...password, isMfaRequired: false } } };
      // The last step accepted stays: a code used once is never good again, also after a new enrolment.
      const saved = await save(user, { ...rest, detail, etag: userEtag(), ...(user.totp?.lastStep !== undefined && { totp: { lastStep: user.totp.lastStep } }) });
      return answerOverview(reply, saved);
    });
  });
}

/** The TOTP step of sign-in: a first-factor token and a code for a full token. */
export async function totpStepRoute(app: FastifyInstance, context: ServerContext): Promise<void> {
  const { users, auth, secondFactor } = context;
  // In a scope of its own: the official client (npm verifalia 5.0.0) sends this request's JSON body as text/plain (the
  // headers it gives this request replace its default ones, Content-Type included). Here, and only here, text/plain
  // is read as JSON.
  await app.register(async (scope) => {
    scope.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => {
      try {
        done(null, parseClientJson(body as string));
      } catch (error) {
        done(error instanceof ProblemError ? error : new ProblemError(400, 'The body is not valid JSON.'), undefined);
      }
    });
    scope.post('/auth/totp/verifications', { schema: USER_OPERATIONS.verifyTotp }, async (request, reply) => {
      const factor = await auth.firstFactor(request);
      checkRequestProtection(request, reply, { id: factor.user.id, isRoot: false, user: factor.user });
      if (await secondFactor.attempts.isRevoked(factor.tokenId)) throw unauthorized('This first-factor token is used up or revoked: sign in again.');
      const passCode = passCodeOf(request.body);
      return secondFactor.serially(factor.user.id, async () => {
        // Checked again in turn: two requests with the same token may have come at once.
        if (await secondFactor.attempts.isRevoked(factor.tokenId)) throw unauthorized('This first-factor token is used up or revoked: sign in again.');
        const user = (await users.getUser(factor.user.id))!;
        // Wrong codes count per user too, whatever token they come with (a new first-factor token costs only the
        // password): the code takes its place in the count before it is checked, across the cluster's processes.
        const reservation = await secondFactor.failures.reserve(user.id);
        if ('retryAfterSeconds' in reservation) throw tooManyRequests('Too many wrong TOTP codes for this user', reservation.retryAfterSeconds * 1000);
        const { attempt } = reservation;
        try {
          const secret = user.totp?.secret;
          const step = secret === undefined ? null : acceptTotp(secret, passCode, user.totp?.lastStep, Date.now());
          if (step === null || !(await secondFactor.steps.claim(user.id, step))) {
            await attempt.failed();
            const revoked = await secondFactor.attempts.recordWrongCode(factor.tokenId, factor.expiresAt);
            throw forbidden(revoked ? 'The code is wrong or used already; this token is now revoked: sign in again.' : 'The code is wrong or used already.');
          }
          await attempt.release();
          await saveUser(context, user, { ...user, totp: { ...user.totp, lastStep: step } });
          // One full token per first-factor token.
          await secondFactor.attempts.revoke(factor.tokenId, factor.expiresAt);
          return { accessToken: await auth.fullToken({ id: user.id, isRoot: false, user }) };
        } finally {
          // A check that could not be made gives its place back (a no-op once settled).
          await attempt.release();
        }
      });
    });
  });
}

function passCodeOf(body: unknown): string {
  const passCode = (body as Record<string, unknown> | null)?.['passCode'];
  if (typeof passCode !== 'string') throw invalidField('passCode', 'required, a string');
  return passCode;
}

