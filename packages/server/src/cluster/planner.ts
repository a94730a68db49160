/**
 * Plans a job across the cluster: its inputs without a result, split into verify tasks by mail route (the preferred
 * exchanger of their domain), so that one session carries many recipients of one exchanger and the catch-all probe runs
 * once per exchanger and domain per job. The DNS work is done here, early; the answers warm this worker's cache.
 *
 * - The inputs of one route stay in one task, whatever their number: splitting them would open sessions to the same
 *   exchanger from several workers and probe it for catch-all once per worker. Small routes share a task, up to
 *   `chunkSize` inputs.
 * - Inputs that need no SMTP work (syntax errors, lists, DNS answers) are spread over tasks of `chunkSize`.
 * - Under deduplication the copies of an address go where its first occurrence goes (an answered first occurrence
 *   comes along as a settled input), so that each task marks them as the whole batch would.
 */
import type { Deduplication, Planning } from 'mailverify/internal';
import type { JobRecord } from '../jobs/types.js';
import type { PostgresJobStore } from '../jobs/postgres-store.js';
import type { VerifyTask } from './tasks.js';

/** Inputs read from the store at once. */
const READ_CHUNK = 2_000;

/** The inputs that go together, and the answered first occurrences they need. */
interface Family {
  readonly indexes: number[];
  readonly settled: number[];
}

export async function planJob(
  store: PostgresJobStore,
  planning: Planning,
  job: JobRecord,
  plan: string,
  chunkSize: number,
  /** Stops the planning between two pages (a closing worker hands the plan task back). */
  signal?: AbortSignal,
): Promise<VerifyTask[]> {
  const mode = job.deduplication === 'Off' ? null : (job.deduplication as Exclude<Deduplication, 'Off'>);
  /** Route → its families; under deduplication, key → the family of its first occurrence. */
  const routes = new Map<string, Family[]>();
  const families = new Map<string, { family: Family | null; firstIndex: number; answered: boolean }>();
  const add = (route: string, family: Family): void => {
    const list = routes.get(route);
    if (list === undefined) routes.set(route, [family]);
    else list.push(family);
  };
  let after = -1;
  for (;;) {
    signal?.throwIfAborted();
    const page = mode === null ? await store.pendingInputs(job.id, after, READ_CHUNK) : await store.storedInputs(job.id, after, READ_CHUNK);
    const routing: Promise<void>[] = [];
    for (const input of page) {
      const answered = 'entry' in input && input.entry !== null;
      if (mode === null) {
        routing.push(planning.route(input.inputData).then((route) => add(route, { indexes: [input.index], settled: [] })));
        continue;
      }
      const key = planning.dedupeKey(input.inputData, mode);
      const known = families.get(key);
      if (known === undefined) {
        if (answered) {
          families.set(key, { family: null, firstIndex: input.index, answered: true });
        } else {
          const family: Family = { indexes: [input.index], settled: [] };
          families.set(key, { family, firstIndex: input.index, answered: false });
          routing.push(planning.route(input.inputData).then((route) => add(route, family)));
        }
      } else if (!answered) {
        if (known.family === null) {
          // The first occurrence was answered before: this copy leads a family of its own, with it settled.
          const family: Family = { indexes: [input.index], settled: [known.firstIndex] };
          known.family = family;
          routing.push(planning.route(input.inputData).then((route) => add(route, family)));
        } else {
          known.family.indexes.push(input.index);
        }
      }
    }
    await Promise.all(routing);
    if (page.length < READ_CHUNK) break;
    after = page[page.length - 1]!.index;
  }
  return packTasks(job.id, plan, routes, chunkSize);
}

/** Whole routes into tasks of up to `chunkSize` inputs (a larger route alone); the no-SMTP route split by family. */
function packTasks(jobId: string, plan: string, routes: Map<string, Family[]>, chunkSize: number): VerifyTask[] {
  const tasks: VerifyTask[] = [];
  let indexes: number[] = [];
  let settled: number[] = [];
  const flush = (): void => {
    if (indexes.length === 0) return;
    tasks.push({
      kind: 'verify',
      jobId,
      plan,
      part: tasks.length,
      indexes: indexes.sort((a, b) => a - b),
      settled: [...new Set(settled)].sort((a, b) => a - b),
      pass: 1,
    });
    indexes = [];
    settled = [];
  };
  const take = (family: Family): void => {
    for (const index of family.indexes) indexes.push(index);
    for (const index of family.settled) settled.push(index);
  };
  for (const [route, families] of [...routes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (route === '') {
      for (const family of families) {
        if (indexes.length > 0 && indexes.length + family.indexes.length > chunkSize) flush();
        take(family);
      }
      continue;
    }
    const size = families.reduce((sum, family) => sum + family.indexes.length, 0);
    if (indexes.length > 0 && indexes.length + size > chunkSize) flush();
    for (const family of families) take(family);
  }
  flush();
  return tasks;
}
