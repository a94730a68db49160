/**
 * The console: sign-in, then the layout (navigation, sign-out) around the page of the hash route. Pages get
 * `PageProps` (pages/props.ts): the signed-in `api`, the `offers` (what the user may do, learned from the server's
 * answers) and the `route`. Errors are shown with `ProblemMessage` (a problem document's detail), re-exported here;
 * pages import it from components/problem.tsx, which keeps them out of an import cycle with this file.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { basePathOf, createApi } from './api.js';
import { NOTHING_OFFERED, useOffers, type Offers } from './offers.js';
import { CreditsPage } from './pages/credits.js';
import { JobPage } from './pages/job.js';
import { JobsPage } from './pages/jobs.js';
import { NewJobPage } from './pages/new-job.js';
import type { PageProps } from './pages/props.js';
import { SettingsPage } from './pages/settings.js';
import { SignInPage } from './pages/sign-in.js';
import { UsersPage } from './pages/users.js';
import { useRoute, type Route } from './router.js';
import { claimsOf, forgetToken, loadToken, saveToken } from './session.js';

export { ProblemMessage, problemText } from './components/problem.js';
export type { PageProps } from './pages/props.js';

const BASE_PATH = basePathOf(location.pathname);

interface Link {
  readonly page: string;
  readonly label: string;
  readonly offered: (offers: Offers) => boolean;
}

const LINKS: readonly Link[] = [
  { page: 'jobs', label: 'Jobs', offered: () => true },
  { page: 'new', label: 'New job', offered: () => true },
  { page: 'users', label: 'Users', offered: (offers) => offers.users },
  { page: 'credits', label: 'Credits', offered: (offers) => offers.credits },
  { page: 'settings', label: 'Settings', offered: () => true },
];

function Page({ probed, ...props }: PageProps & { probed: boolean }) {
  const [page, id] = props.route;
  // Until the server has answered what the user may do, a page that depends on it waits rather than say "no".
  if (!probed && (page === 'users' || page === 'credits')) return <p role="status">Loading…</p>;
  if (page === 'jobs' && id !== undefined) return <JobPage {...props} />;
  switch (page) {
    case 'jobs':
      return <JobsPage {...props} />;
    case 'new':
      return <NewJobPage {...props} />;
    case 'users':
      return props.offers.users ? <UsersPage {...props} /> : <NotOffered />;
    case 'credits':
      return props.offers.credits ? <CreditsPage {...props} /> : <NotOffered />;
    case 'settings':
      return <SettingsPage {...props} />;
    default:
      return <NotOffered />;
  }
}

function NotOffered() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>Not available</h1>
      <p>This page does not exist, or is not available to you: choose one in the navigation above.</p>
    </section>
  );
}

function Navigation({ route, offers, onSignOut }: { route: Route; offers: Offers; onSignOut: () => void }) {
  return (
    <header class="bar">
      <a class="skip" href="#main" onClick={(event) => { event.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <span class="brand">mailverify</span>
      <nav aria-label="Main" aria-busy={offers.probed !== true}>
        <ul>
          {LINKS.filter((link) => link.offered(offers)).map((link) => {
            const current = route[0] === link.page && (link.page !== 'jobs' || route.length === 1);
            return (
              <li key={link.page}>
                <a href={`#/${link.page}`} aria-current={current ? 'page' : undefined}>
                  {link.label}
                </a>
              </li>
            );
          })}
        </ul>
      </nav>
      <button type="button" class="secondary" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}

function SignedIn({ token, route, onSignOut, onExpired }: { token: string; route: Route; onSignOut: () => void; onExpired: () => void }) {
  const api = useMemo(() => createApi({ basePath: BASE_PATH, token: () => token, onUnauthorized: onExpired }), [token]);
  const probed = useOffers(api);
  const offers = probed ?? NOTHING_OFFERED;
  const userId = useMemo(() => claimsOf(token).sub ?? '', [token]);
  const key = route.join('/');
  useEffect(() => {
    // A new page: its heading takes the focus, so that keyboard and screen-reader users start there.
    document.getElementById('page-title')?.focus({ preventScroll: true });
    const link = LINKS.find((candidate) => candidate.page === route[0]);
    document.title = `${route[0] === 'jobs' && route.length > 1 ? 'Job' : (link?.label ?? 'mailverify')} · mailverify`;
  }, [key]);
  useEffect(() => {
    // A page that waited for the offers: its heading takes the focus, unless the user has put it somewhere already.
    if (document.activeElement === document.body) document.getElementById('page-title')?.focus({ preventScroll: true });
  }, [probed !== null]);
  return (
    <>
      <Navigation route={route} offers={offers} onSignOut={onSignOut} />
      <main id="main" tabIndex={-1}>
        <Page key={key} api={api} userId={userId} offers={offers} route={route} probed={probed !== null} />
      </main>
    </>
  );
}

export function App() {
  const [token, setToken] = useState(loadToken);
  const [notice, setNotice] = useState<string | null>(null);
  const route = useRoute();
  const signOut = (why: string | null) => {
    forgetToken();
    setToken(null);
    setNotice(why);
  };
  useEffect(() => {
    if (token === null) document.title = 'Sign in · mailverify';
  }, [token]);
  if (token === null) {
    return (
      <main id="main" tabIndex={-1}>
        <SignInPage
          basePath={BASE_PATH}
          notice={notice}
          onSignedIn={(full) => {
            saveToken(full);
            setNotice(null);
            setToken(full);
          }}
        />
      </main>
    );
  }
  return <SignedIn token={token} route={route} onSignOut={() => signOut('You are signed out.')} onExpired={() => signOut('Your session has ended: sign in again.')} />;
}
