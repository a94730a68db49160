/**
 * Turns of the event loop shared fairly between long pieces of work (batches, stores, body readers).
 *
 * A piece of work that yields with `setImmediate` lets I/O in only after every other immediate queued before the
 * loop's check phase has run: with fifty jobs each yielding, one turn of the loop runs fifty slices of work before a
 * waiting request is read. `nextTurn` queues its callers and releases one per turn of the loop instead, so that the
 * loop polls for I/O (new connections, other requests' bytes) between any two slices, however many pieces yield.
 */

/** Waiting callers, oldest first: a ring of slots read from `head` (a shifted array would copy itself each time). */
let waiting: (() => void)[] = [];
let head = 0;
let scheduled = false;

/** Resolves in a later turn of the event loop, after every caller that asked before, one caller per turn. */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(releaseOne);
    }
  });
}

function releaseOne(): void {
  const resolve = waiting[head]!;
  waiting[head] = undefined as never;
  head++;
  if (head === waiting.length) {
    waiting = [];
    head = 0;
  } else if (head >= 1024 && head * 2 >= waiting.length) {
    waiting = waiting.slice(head);
    head = 0;
  }
  // An immediate queued during the check phase runs in the next turn, after the poll phase: the next caller waits
  // for it, and I/O is read in between.
  if (waiting.length > head) setImmediate(releaseOne);
  else scheduled = false;
  resolve();
}
