/**
 * A cache of at most `max` entries that forgets the least recently used one first, and, with a time to live, an
 * entry once it is older than that (checked when it is read: no timers). The engine's caches (DNS answers, catch-all
 * answers, egress and provider state) need nothing more, and the engine package stays small without a dependency
 * for it.
 */
export interface BoundedCacheOptions {
  /** The most entries kept. */
  readonly max: number;
  /** How long an entry is kept, in milliseconds, unless `set` gives its own; none: until pushed out. */
  readonly ttl?: number | undefined;
  /** The clock, in milliseconds (tests move it). */
  readonly now?: () => number;
}

interface Slot<V> {
  readonly value: V;
  /** When the entry expires (a `now()` time), or Infinity. */
  readonly expires: number;
}

export class BoundedCache<K, V> {
  /** In order of use, the least recently used first: a Map keeps its keys in insertion order. */
  private readonly slots = new Map<K, Slot<V>>();
  private readonly max: number;
  private readonly ttl: number | undefined;
  private readonly now: () => number;

  constructor(options: BoundedCacheOptions) {
    if (!Number.isInteger(options.max) || options.max < 1) throw new RangeError(`max must be a whole number from 1, got ${options.max}`);
    this.max = options.max;
    this.ttl = options.ttl;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.slots.size;
  }

  /** The value, unless absent or expired; a hit becomes the most recently used entry. */
  get(key: K): V | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    this.slots.delete(key);
    if (slot.expires <= this.now()) return undefined;
    this.slots.set(key, slot);
    return slot.value;
  }

  /** Keeps the value as the most recently used entry, for `ttl` milliseconds (default: the cache's). */
  set(key: K, value: V, options?: { readonly ttl?: number }): this {
    const ttl = options?.ttl ?? this.ttl;
    this.slots.delete(key);
    this.slots.set(key, { value, expires: ttl === undefined ? Infinity : this.now() + ttl });
    if (this.slots.size > this.max) this.slots.delete(this.slots.keys().next().value as K);
    return this;
  }

  delete(key: K): boolean {
    return this.slots.delete(key);
  }
}
