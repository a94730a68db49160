/**
 * Who a request comes from and what it may do: root (every permission), an Administrator (every permission, its rules
 * ignored), a BrowserApp (its two fixed rules) or a Standard user (what its rules grant). Read from the user's current
 * record at every request, so a change of rules, type or state counts from the next request on.
 */
import type { FastifyRequest } from 'fastify';
import { isAllowed, parseRules, type Operation, type PermissionRule, type Resource } from '../accounts/permissions.js';
import type { UserRecord } from '../accounts/types.js';
import { BROWSER_APP_RULES } from '../accounts/users.js';
import type { JobRunner } from '../jobs/jobs.js';
import type { JobRecord } from '../jobs/types.js';
import { ProblemError, excerpt } from './problems.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who made the request, once authenticated. */
    user?: Principal;
  }
}

/** The authenticated caller of a request. */
export interface Principal {
  /** The user's id, or the root account's. */
  readonly id: string;
  readonly isRoot: boolean;
  /** The user's record as read for this request; absent for root. */
  readonly user?: UserRecord;
}

/** Parsed rule lists by their text: the same few lists come back at every request. */
const parsed = new Map<string, PermissionRule[]>();

function rulesOf(user: UserRecord): PermissionRule[] {
  const rules = user.detail.type === 'BrowserApp' ? BROWSER_APP_RULES : user.detail.authorization.rules;
  const key = rules.join('\n');
  let found = parsed.get(key);
  if (found === undefined) {
    // Rules were checked when they were stored; one that no longer parses grants nothing.
    try {
      found = parseRules(rules);
    } catch {
      found = [];
    }
    if (parsed.size >= 1000) parsed.clear();
    parsed.set(key, found);
  }
  return found;
}

/** Whether the caller may do `operation` on `resource` in `scope` (`my`: its own jobs or record; `account`: all). */
export function permits(principal: Principal, resource: Resource, operation: Operation, scope: 'my' | 'account'): boolean {
  if (principal.isRoot || principal.user === undefined) return principal.isRoot;
  if (principal.user.detail.type === 'Administrator') return true;
  return isAllowed(rulesOf(principal.user), { resource, operation, scope });
}

export function forbidden(detail: string): ProblemError {
  return new ProblemError(403, detail, '/problems/forbidden');
}

/** A 403 unless the caller may do `operation` on `resource` in `scope`. */
export function requirePermission(principal: Principal, resource: Resource, operation: Operation, scope: 'my' | 'account'): void {
  if (!permits(principal, resource, operation, scope)) {
    throw forbidden(`This user may not ${operation} ${resource}${scope === 'my' ? ' of its own' : ' of the account'}.`);
  }
}

/** The request's caller (set by the authentication hook of every route that needs credentials). */
export function principalOf(request: FastifyRequest): Principal {
  return request.user!;
}

/**
 * The job `id` if the caller may `operation` it, tombstones included. Its own job needs the operation in scope `my`
 * (403 without). Someone else's needs account-wide read first (404 without it: the job does not exist for this
 * caller), then the operation account-wide (403).
 */
export async function accessibleJob(jobs: JobRunner, request: FastifyRequest, id: string, operation: 'read' | 'delete'): Promise<JobRecord> {
  const principal = principalOf(request);
  const job = /^[0-9a-f-]{36}$/i.test(id) ? await jobs.get(id.toLowerCase()) : null;
  if (job === null) throw new ProblemError(404, `No job ${excerpt(id)}.`);
  if (job.owner === principal.id) {
    requirePermission(principal, 'email-validations', operation, 'my');
    return job;
  }
  if (!permits(principal, 'email-validations', 'read', 'account')) throw new ProblemError(404, `No job ${excerpt(id)}.`);
  requirePermission(principal, 'email-validations', operation, 'account');
  return job;
}
