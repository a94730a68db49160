/**
 * Verified HTTP Basic credentials (RFC 7617), remembered for at most 60 seconds so that a client sending the same
 * username and password on every request does not pay a password hash verification on each.
 *
 * Entries are keyed by an HMAC-SHA256 of the username and password under a random key made per process: neither is
 * kept, and the keys tell nothing of them to whoever reads the memory (or a heap dump) without that key. The number of
 * entries is bounded (least recently used pushed out first), and `forgetUser` drops every entry of a user at once: the
 * server calls it whenever the user changes. A remembered credential also carries the user's `passwordVersion` and
 * `etag` at verification: the caller uses it only while the user's current record still has them, which also covers a
 * verification that finished after the change it raced with.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** How long a verified credential is remembered. */
export const REMEMBERED_CREDENTIAL_MS = 60_000;

/** What the user's record was when its credential was verified. */
export interface CredentialStamp {
  readonly passwordVersion: number;
  readonly etag: string;
}

export interface RememberedCredential extends CredentialStamp {
  readonly userId: string;
}

export interface RememberedCredentialsOptions {
  /** Milliseconds since the epoch; Date.now by default. */
  readonly now?: () => number;
  /** Credentials remembered at most (default 10,000, a few MB). */
  readonly maxEntries?: number;
}

interface Entry extends RememberedCredential {
  readonly expiresAt: number;
}

export class RememberedCredentials {
  private readonly key = randomBytes(32);
  private readonly now: () => number;
  private readonly entries: LRUCache<string, Entry>;
  /** The entry keys of each user, so that `forgetUser` need not scan; kept in step with `entries` by `dispose`. */
  private readonly keysByUser = new Map<string, Set<string>>();

  constructor(options: RememberedCredentialsOptions = {}) {
    this.now = options.now ?? Date.now;
    this.entries = new LRUCache<string, Entry>({
      max: options.maxEntries ?? 10_000,
      // Called for every entry that leaves (pushed out, replaced, deleted), before it is gone.
      dispose: (entry, key) => this.unindex(entry.userId, key),
    });
  }

  /** The user a username and password were verified for within the last 60 seconds, with its stamp then; else undefined. */
  recall(username: string, password: string): RememberedCredential | undefined {
    const key = this.keyOf(username, password);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() >= entry.expiresAt) {
      this.entries.delete(key);
      return undefined;
    }
    return { userId: entry.userId, passwordVersion: entry.passwordVersion, etag: entry.etag };
  }

  /** Remembers that `username` and `password` were just verified for `userId`, whose record had `stamp`. */
  remember(username: string, password: string, userId: string, stamp: CredentialStamp): void {
    const key = this.keyOf(username, password);
    const entry: Entry = { userId, passwordVersion: stamp.passwordVersion, etag: stamp.etag, expiresAt: this.now() + REMEMBERED_CREDENTIAL_MS };
    this.entries.set(key, entry);
    let keys = this.keysByUser.get(userId);
    if (keys === undefined) this.keysByUser.set(userId, (keys = new Set()));
    keys.add(key);
  }

  /** Forgets every credential remembered for `userId` (its password, username, activity or anything else changed). */
  forgetUser(userId: string): void {
    for (const key of [...(this.keysByUser.get(userId) ?? [])]) this.entries.delete(key);
    this.keysByUser.delete(userId);
  }

  /** Credentials remembered now (expired ones included until they are read or pushed out). */
  get size(): number {
    return this.entries.size;
  }

  /** The keyed hash a username and password are remembered under: it tells nothing of them without this process's key. */
  keyOf(username: string, password: string): string {
    // JSON keeps the two apart: no (username, password) pair encodes like another.
    return createHmac('sha256', this.key).update(JSON.stringify([username, password]), 'utf8').digest('base64url');
  }

  private unindex(userId: string, key: string): void {
    const keys = this.keysByUser.get(userId);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) this.keysByUser.delete(userId);
  }
}
