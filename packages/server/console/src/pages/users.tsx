import '../admin.css';
import { useCaller } from '../users/access.js';
import { UsersList } from '../users/list.js';
import { UserPage } from '../users/user.js';
import type { PageProps } from './props.js';

/** The Users page (`#/users`): the account's users and their creation; `#/users/<id>`: one user. */
export function UsersPage({ api, userId, route }: PageProps) {
  const caller = useCaller(api, userId);
  const id = route[1];
  return id === undefined ? <UsersList api={api} caller={caller} /> : <UserPage api={api} caller={caller} id={id} own={id === userId} />;
}
