/**
 * The account's classifier override rules over HTTP (mailverify's own, under /v2.7; docs/verification.md#override-rules):
 * `GET /settings/overrides` answers the list, `PUT /settings/overrides` replaces it. Root and administrators only. A
 * change applies to the jobs submitted after it, through every interface; a job keeps the list it was submitted with
 * (src/jobs/overrides.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkOverrideRules, type OverrideRule } from 'mailverify/internal';
import { accountOverrides, MAX_OVERRIDE_RULES, setAccountOverrides } from '../jobs/overrides.js';
import { forbidden, principalOf } from './access.js';
import { ProblemError, invalidField } from './problems.js';
import type { ServerContext } from './context.js';
import { OVERRIDE_OPERATIONS } from './schemas/index.js';

/** The paths of the rules, with their methods (another method: 405). */
export const OVERRIDE_PATHS: Record<string, readonly string[]> = { '/settings/overrides': ['GET', 'PUT'] };

/** The field the rules are named by in problem documents and in the lenient object body. */
const FIELD = 'overrides';

/** Only root and administrators read or change the account's rules. */
function requireAdministrator(request: FastifyRequest, doing: string): void {
  const principal = principalOf(request);
  if (!principal.isRoot && principal.user?.detail.type !== 'Administrator') {
    throw forbidden(`Only root and administrators ${doing} the account's override rules.`);
  }
}

/**
 * The rules of a PUT body, checked: the array itself, or (lenient) an object with the array as `overrides`. A
 * malformed rule is a 400 naming it by its path (`overrides[2].classification`).
 */
export function readOverrideBody(body: unknown): OverrideRule[] {
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  if (!Array.isArray(body) && !isObject) {
    throw new ProblemError(400, 'The body must be a JSON array of { match, classification } rules (or an object with that array as overrides).', '/problems/invalid-body');
  }
  const given = isObject ? (body as Record<string, unknown>)[FIELD] : body;
  if (given === undefined) throw invalidField(FIELD, 'required: an array of { match, classification } rules');
  if (Array.isArray(given) && given.length > MAX_OVERRIDE_RULES) {
    throw invalidField(FIELD, `at most ${MAX_OVERRIDE_RULES} rules, got ${given.length}`);
  }
  try {
    return checkOverrideRules(given, FIELD);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw ruleProblem(error.message);
  }
}

/** The engine's message (`overrides[2].match must be ...`) as a 400 whose detail starts with the rule's path. */
function ruleProblem(message: string): ProblemError {
  const path = /^overrides(\[\d+\](\.(match|classification))?)?/.exec(message)![0];
  const rest = message.slice(path.length).replace(/^:?\s*/, '');
  return invalidField(path, rest);
}

export async function overrideRoutes(app: FastifyInstance, context: ServerContext): Promise<void> {
  const { store } = context.jobs.options;

  app.get('/settings/overrides', { schema: OVERRIDE_OPERATIONS.getOverrides }, async (request) => {
    requireAdministrator(request, 'read');
    return accountOverrides(store);
  });

  app.put('/settings/overrides', { schema: OVERRIDE_OPERATIONS.replaceOverrides }, async (request) => {
    requireAdministrator(request, 'change');
    const rules = readOverrideBody(request.body);
    await setAccountOverrides(store, rules);
    return rules;
  });
}
