/** The order of user listings and the key usernames are unique by: the same in every store. */
import type { UserRecord, UserSort } from './types.js';
import { usernameKey } from './usernames.js';

/** The key a user's username is unique by (usernameKey), null for a deleted user (its username is free again). */
export function storedUsernameKey(user: UserRecord): string | null {
  const username = user.detail.authentication.password.username;
  return user.deletedOn !== undefined || username === undefined ? null : usernameKey(username);
}

/**
 * `users` (in creation order) in the listing's order: by creation time, or by the lower-cased display name compared
 * by UTF-16 code units; ties stay in creation order (the sort is stable).
 */
export function sortUsers(users: readonly UserRecord[], sort: UserSort): UserRecord[] {
  if (sort === 'createdOn') return [...users];
  const byName = sort === 'displayName' || sort === '-displayName';
  const keyed = users.map((user) => ({ user, key: byName ? user.detail.displayName.toLowerCase() : user.createdOn }));
  const direction = sort === 'displayName' ? 1 : -1;
  keyed.sort((a, b) => (a.key < b.key ? -direction : a.key > b.key ? direction : 0));
  return keyed.map((item) => item.user);
}
