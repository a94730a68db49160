/**
 * Hash routes: `#/jobs`, `#/new`, `#/jobs/<id>`, `#/users` (and `#/users/...`), `#/credits`, `#/settings`. A route
 * is its segments after `#/`; `useRoute()` follows the hash, `navigate('#/jobs/…')` changes it.
 */
import { useEffect, useState } from 'preact/hooks';

export type Route = readonly string[];

export function routeOf(hash: string): Route {
  const segments = hash.replace(/^#\/?/, '').split('/').filter((segment) => segment !== '').map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  });
  return segments.length === 0 ? ['jobs'] : segments;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  useEffect(() => {
    const follow = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  return route;
}

export function navigate(hash: string): void {
  location.hash = hash;
}
