/**
 * The probes of load balancers and orchestrators, under the base path and without credentials: `GET /health` (the
 * process answers) and `GET /ready` (the store takes a write and the server is not stopping: it can take jobs). They
 * say nothing about the server but its state (in a cluster `/ready` also needs the queue's Redis to answer); the cause of a 503 goes to the log. A full disk is a state: `/ready`
 * says so (503) until a write succeeds again, while `/health` stays 200 (a restart would not give the disk room).
 */
import type { FastifyInstance } from 'fastify';
import { StorageFullError, type JobStore } from '../jobs/types.js';
import { ProblemError } from './problems.js';
import type { JsonSchema } from './schemas/components.js';
import { json, problem, serverOperation } from './schemas/index.js';

/** The setting `/ready` writes: a write of the store is what jobs need. */
const READY_PROBE_SETTING = 'ready.probedOn';

const state = (value: string): JsonSchema => ({
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { const: value } },
});

/** `ready`: what else must answer for the server to take jobs (in a cluster, the queue's Redis). */
export function probeRoutes(app: FastifyInstance, base: string, store: JobStore, ready?: () => Promise<void>): void {
  let stopping = false;
  app.addHook('preClose', async () => {
    stopping = true;
  });
  app.get(
    `${base}/health`,
    { schema: serverOperation({ operationId: 'getHealth', summary: 'Liveness: the server answers' }, { 200: json('Alive.', state('ok')) }) },
    async () => ({ status: 'ok' }),
  );
  app.get(
    `${base}/ready`,
    {
      schema: serverOperation(
        { operationId: 'getReady', summary: 'Readiness: the database takes writes and the server is not stopping' },
        { 200: json('Ready to take jobs.', state('ready')), 503: problem('Not ready now (the cause is in the server\'s log).') },
      ),
    },
    async (request) => {
      try {
        if (stopping) throw new Error('the server is stopping');
        await store.setSetting(READY_PROBE_SETTING, new Date().toISOString());
        await ready?.();
      } catch (error) {
        if (error instanceof StorageFullError) {
          // Said once by the store when writes began to fail; probes come every few seconds.
          request.log.info('not ready: the disk holding the data is full');
          throw new ProblemError(503, 'The disk holding the data is full: the server cannot store jobs or results now.', '/problems/insufficient-storage');
        }
        request.log.warn({ err: error }, 'not ready');
        throw new ProblemError(503, 'The server cannot take jobs now.');
      }
      return { status: 'ready' };
    },
  );
}
