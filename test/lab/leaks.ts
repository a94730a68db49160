// Leak accounting for tests: every socket (client and server side, plain or TLS), pending connect, listening server
// and timer created while a scenario runs must be destroyed when it ends. async_hooks reports each resource's
// creation and its destruction (a timer cleared or fired, a handle closed).
import { createHook } from 'node:async_hooks';
import { expect } from 'vitest';

const WATCHED = new Set(['TCPWRAP', 'TLSWRAP', 'TCPCONNECTWRAP', 'TCPSERVERWRAP', 'Timeout']);

/** `alsoWatched`: more resource types to account for (`'UDPWRAP'`: DNS sockets). */
export async function expectNoLeak(scenario: () => Promise<void>, settleMs = 2000, alsoWatched: readonly string[] = []): Promise<void> {
  const watched = new Set([...WATCHED, ...alsoWatched]);
  const live = new Map<number, string>();
  const hook = createHook({
    init(id, type) {
      if (watched.has(type)) live.set(id, type);
    },
    destroy(id) {
      live.delete(id);
    },
  });
  hook.enable();
  try {
    await scenario();
    // Handles are destroyed once libuv has run their close callbacks: allow a moment.
    const deadline = Date.now() + settleMs;
    while (live.size > 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  } finally {
    hook.disable();
  }
  expect([...live.values()]).toEqual([]);
}
