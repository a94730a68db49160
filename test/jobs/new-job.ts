// A job as a submission makes it, for the tests of the jobs layer: the owner and defaults they share.
import { randomUUID } from 'node:crypto';
import type { NewJob } from '../../packages/server/src/jobs/types.js';

export function newJob(overrides: Partial<NewJob> = {}): NewJob {
  return {
    id: randomUUID(),
    owner: 'owner-1',
    clientIP: '127.0.0.1',
    quality: 'Standard',
    deduplication: 'Off',
    interface: 'v2',
    createdOn: new Date().toISOString(),
    ...overrides,
  };
}
