import { Suspense, useState, type FormEvent } from 'react';
import { graphql, useLazyLoadQuery } from 'react-relay';
import type { AppViewerQuery } from './__generated__/AppViewerQuery.graphql';
import { BoardPage } from './BoardPage';
import { ErrorBanner, PageErrorBoundary } from './errors';
import { HomePage } from './HomePage';
import { NotificationsPage } from './NotificationsPage';
import { PinPage } from './PinPage';
import { ProfilePage } from './ProfilePage';
import { Link, useRoute, type Route } from './router';
import { Avatar } from './Placeholder';

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'home':
      return <HomePage />;
    case 'notifications':
      return <NotificationsPage />;
    case 'profile':
      return <ProfilePage username={route.username} />;
    case 'board':
      return <BoardPage id={route.id} />;
    case 'pin':
      return <PinPage id={route.id} />;
    case 'missing':
      return <div className="page-error">No page at {route.path}.</div>;
  }
}

function Nav() {
  const data = useLazyLoadQuery<AppViewerQuery>(
    graphql`
      query AppViewerQuery {
        viewer { id username }
      }
    `,
    {},
  );
  return (
    <nav className="top">
      <Link to="/" className="brand">shardql</Link>
      <Link to="/">Home</Link>
      <Link to="/notifications">Notifications</Link>
      <span className="spacer" />
      {data.viewer && (
        <Link to={`/u/${data.viewer.username}`} className="me">
          <Avatar seed={data.viewer.id} name={data.viewer.username} size={24} /> {data.viewer.username}
        </Link>
      )}
    </nav>
  );
}

/**
 * Production hands out no token: the person signs in with the identity provider where one is
 * configured, or pastes a token (e.g. from `shardql token`).
 */
export function SignIn({ onToken, provider, error }: { onToken: (token: string) => void; provider?: { name: string; start: () => void } | undefined; error?: string | undefined }) {
  const [token, setToken] = useState('');
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (token.trim() !== '') onToken(token.trim());
  };
  return (
    <form className="sign-in" onSubmit={onSubmit}>
      <h1>Sign in</h1>
      {error !== undefined && (
        <div className="banner" role="alert">
          <span className="banner-text">{error}</span>
        </div>
      )}
      {provider && (
        <p>
          <button type="button" data-testid="provider-sign-in" onClick={provider.start}>
            Sign in with {provider.name}
          </button>
        </p>
      )}
      <p>{provider ? 'Or paste' : 'Paste'} a bearer token for this gateway.</p>
      <input value={token} onChange={(e) => setToken(e.target.value)} aria-label="Token" />
      <button type="submit">Sign in</button>
    </form>
  );
}

export function App() {
  const route = useRoute();
  const key = JSON.stringify(route);
  return (
    <ErrorBanner>
      <PageErrorBoundary resetKey="nav">
        <Suspense fallback={<nav className="top" />}>
          <Nav />
        </Suspense>
      </PageErrorBoundary>
      <div className="page">
        <PageErrorBoundary resetKey={key}>
          <Suspense fallback={<div className="loading">Loading…</div>}>
            <Page route={route} />
          </Suspense>
        </PageErrorBoundary>
      </div>
    </ErrorBanner>
  );
}
