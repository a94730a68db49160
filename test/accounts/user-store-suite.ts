// The behaviour every UserStore shares, as one suite run against each store: SQLite in the normal suite
// (user-store.test.ts), PostgreSQL in the cluster suite (test/cluster/postgres-accounts.test.ts). Users created, read
// by id and by username (case-insensitively), updated only from the etag read, listed in each order, kept across a
// reopening; usernames unique among users not deleted.
import { afterEach, describe, expect, it } from 'vitest';
import { UsernameTakenError, type UserRecord } from '../../packages/server/src/accounts/types.js';
import type { ServiceStore } from '../../packages/server/src/jobs/types.js';
import { defaultStandardDetail } from './default-detail.js';

/** A store under test: `fresh()` names a new, empty place (a file, a schema); `open(place)` opens a store on it. */
export interface ServiceStoreUnderTest {
  fresh(): string;
  open(place: string): Promise<ServiceStore>;
}

/** Inside a `describe`: opens stores of `subject` (on a fresh place unless told), each closed after its test. */
export function storeOpener(subject: ServiceStoreUnderTest): (place?: string) => Promise<ServiceStore> {
  const open: ServiceStore[] = [];
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
  });
  return async (place = subject.fresh()) => {
    const store = await subject.open(place);
    open.push(store);
    return store;
  };
}

export function userRecord(id: string, username: string | undefined, overrides: Partial<UserRecord> = {}, displayName = id): UserRecord {
  return {
    id,
    createdOn: '2026-01-01T00:00:00.000Z',
    etag: `${id}-1`,
    passwordVersion: 0,
    detail: defaultStandardDetail(displayName, username),
    ...overrides,
  };
}

/** The shared tests, in a `describe` named `name`. */
export function describeUserStore(name: string, subject: ServiceStoreUnderTest): void {
  describe(name, () => {
    const openStore = storeOpener(subject);

    it('creates, reads by id and by username case-insensitively, and keeps them across a reopening', async () => {
      const place = subject.fresh();
      const store = await openStore(place);
      const alice = userRecord('a1', 'Alice', { passwordHash: '$argon2id$x', totp: { secret: 'ABC', lastStep: 7 } });
      await store.createUser(alice);
      expect(await store.getUser('a1')).toEqual(alice);
      expect(await store.userByUsername('aLiCe')).toEqual(alice);
      expect(await store.userByUsername('bob')).toBeNull();
      expect(await store.getUser('nobody')).toBeNull();
      await store.close();
      const again = await openStore(place);
      expect(await again.getUser('a1')).toEqual(alice);
    });

    it('refuses a username taken case-insensitively, frees it once its user is deleted', async () => {
      const store = await openStore();
      await store.createUser(userRecord('a1', 'alice'));
      await expect(store.createUser(userRecord('a2', 'ALICE'))).rejects.toBeInstanceOf(UsernameTakenError);
      // A user without a username (password sign-in off) takes none.
      await store.createUser(userRecord('n1', undefined));
      await store.createUser(userRecord('n2', undefined));
      const deleted = { ...userRecord('a1', 'alice'), etag: 'a1-2', deletedOn: '2026-01-02T00:00:00.000Z' };
      expect(await store.updateUser(deleted, 'a1-1')).toBe(true);
      expect(await store.userByUsername('alice')).toBeNull();
      await store.createUser(userRecord('a2', 'Alice'));
      expect((await store.userByUsername('alice'))?.id).toBe('a2');
      // Renaming onto a taken username.
      await store.createUser(userRecord('b1', 'bob'));
      await expect(store.updateUser({ ...userRecord('b1', 'alice'), etag: 'b1-2' }, 'b1-1')).rejects.toBeInstanceOf(UsernameTakenError);
      expect((await store.getUser('b1'))?.etag).toBe('b1-1');
    });

    it('refuses a second user with the same id', async () => {
      const store = await openStore();
      await store.createUser(userRecord('a1', 'alice'));
      await expect(store.createUser(userRecord('a1', 'other'))).rejects.toThrow();
      expect((await store.getUser('a1'))?.detail.authentication.password.username).toBe('alice');
      expect(await store.userByUsername('other')).toBeNull();
    });

    it('updates only from the etag it was read with', async () => {
      const store = await openStore();
      await store.createUser(userRecord('a1', 'alice'));
      const renamed = userRecord('a1', 'alice', { etag: 'a1-2' }, 'Alice Two');
      expect(await store.updateUser(renamed, 'a1-0')).toBe(false);
      expect((await store.getUser('a1'))?.detail.displayName).toBe('a1');
      expect(await store.updateUser(renamed, 'a1-1')).toBe(true);
      expect(await store.getUser('a1')).toEqual(renamed);
      // An unknown user: nothing to update.
      expect(await store.updateUser(userRecord('zz', 'zz'), 'zz-1')).toBe(false);
      expect(await store.getUser('zz')).toBeNull();
    });

    it('lists by creation or display name (ties in creation order), by type, with or without the deleted, page by page', async () => {
      const store = await openStore();
      const at = (n: number) => `2026-01-0${n}T00:00:00.000Z`;
      await store.createUser(userRecord('u1', 'u1', { createdOn: at(1) }, 'bravo'));
      await store.createUser(userRecord('u2', 'u2', { createdOn: at(2) }, 'Alpha'));
      await store.createUser(userRecord('u3', 'u3', { createdOn: at(2) }, 'alpha'));
      await store.createUser(userRecord('u4', 'u4', { createdOn: at(3), deletedOn: at(4) }, 'charlie'));
      const admin = userRecord('u5', 'u5', { createdOn: at(5) }, 'Émile');
      await store.createUser({ ...admin, detail: { ...admin.detail, type: 'Administrator' } });
      const ids = async (query: Partial<Parameters<typeof store.listUsers>[0]>) =>
        (await store.listUsers({ includeDeleted: false, sort: 'createdOn', offset: 0, limit: 100, ...query })).data.map((u) => u.id);
      expect(await ids({})).toEqual(['u1', 'u2', 'u3', 'u5']);
      expect(await ids({ sort: '-createdOn' })).toEqual(['u5', 'u2', 'u3', 'u1']);
      expect(await ids({ sort: 'displayName' })).toEqual(['u2', 'u3', 'u1', 'u5']);
      expect(await ids({ sort: '-displayName' })).toEqual(['u5', 'u1', 'u2', 'u3']);
      expect(await ids({ includeDeleted: true })).toEqual(['u1', 'u2', 'u3', 'u4', 'u5']);
      expect(await ids({ type: 'Administrator' })).toEqual(['u5']);
      const first = await store.listUsers({ includeDeleted: false, sort: 'createdOn', offset: 0, limit: 3 });
      expect([first.data.map((u) => u.id), first.more]).toEqual([['u1', 'u2', 'u3'], true]);
      const second = await store.listUsers({ includeDeleted: false, sort: 'createdOn', offset: 3, limit: 3 });
      expect([second.data.map((u) => u.id), second.more]).toEqual([['u5'], false]);
    });
  });
}
