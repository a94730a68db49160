/**
 * A cap on DNS queries in flight (caps bound resources, not addresses): a resolver that passes at most `max` queries
 * at a time to the one it wraps, the others waiting their turn in arrival order. A query's own deadline starts when
 * it is sent, not while it waits.
 */
import type { Resolver } from './resolver.js';

export function limitResolver(resolver: Resolver, max: number): Resolver {
  let inFlight = 0;
  const waiting: (() => void)[] = [];

  async function limited<T>(query: () => Promise<T>): Promise<T> {
    if (inFlight >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else inFlight++;
    try {
      return await query();
    } finally {
      // The slot passes straight to the next query waiting, if any.
      const next = waiting.shift();
      if (next !== undefined) next();
      else inFlight--;
    }
  }

  return {
    resolveMx: (hostname) => limited(() => resolver.resolveMx(hostname)),
    resolve4: (hostname, options) => limited(() => resolver.resolve4(hostname, options)),
    resolve6: (hostname, options) => limited(() => resolver.resolve6(hostname, options)),
  };
}
