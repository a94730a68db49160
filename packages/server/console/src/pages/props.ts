import type { Api } from '../api.js';
import type { Offers } from '../offers.js';
import type { Route } from '../router.js';

/**
 * What every page component gets: `api`, the signed-in REST client; `userId`, the signed-in user's id (root's too:
 * the `sub` of its token); `offers`, what the user may do beyond jobs (`users`, `credits`, `overrides`); `route`, the
 * hash route's segments (`['users', '<id>']` for `#/users/<id>`). Navigate with `navigate('#/…')` of router.ts.
 */
export interface PageProps {
  readonly api: Api;
  readonly userId: string;
  readonly offers: Offers;
  readonly route: Route;
}
