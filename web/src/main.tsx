import { StrictMode, useEffect, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { RelayEnvironmentProvider } from 'react-relay';
import { App, SignIn } from './App';
import { readConfig, storedToken, storeToken } from './config';
import { createEnvironment } from './environment';
import { RouterBase } from './router';
import { finishSignIn, SIGNED_IN_PATH, startSignIn } from './signIn';
import './app.css';

const config = readConfig();
/** The identity provider sent the browser back here with a code (or its refusal). */
const returning = config.signIn !== undefined && config.token === undefined && window.location.pathname === `${config.base}${SIGNED_IN_PATH}`;

function Root() {
  // Development: the gateway hands the page the demo user's token. Production: the identity
  // provider's (where configured), else one a person pasted.
  const [token, setToken] = useState(returning ? undefined : (config.token ?? storedToken()));
  const [finishing, setFinishing] = useState(returning);
  const [error, setError] = useState<string | undefined>(undefined);
  const current = useRef(token);
  current.current = token;
  const [environment] = useState(() => createEnvironment(config.endpoint, () => current.current));
  useEffect(() => {
    if (!returning || !config.signIn) return;
    let live = true;
    finishSignIn(config.signIn, config.base).then(
      ({ token: t, returnTo }) => {
        if (!live) return;
        window.history.replaceState(null, '', returnTo);
        setToken(t);
        setFinishing(false);
      },
      (err: unknown) => {
        if (!live) return;
        window.history.replaceState(null, '', `${config.base}/`);
        setError(err instanceof Error ? err.message : String(err));
        setFinishing(false);
      },
    );
    return () => {
      live = false;
    };
  }, []);
  if (finishing) return <div className="loading">Signing in…</div>;
  if (token === undefined) {
    const signIn = config.signIn;
    return (
      <SignIn
        provider={signIn && { name: signIn.name, start: () => startSignIn(signIn, config.base).catch((err: unknown) => setError(String(err))) }}
        error={error}
        onToken={(t) => {
          storeToken(t);
          setToken(t);
        }}
      />
    );
  }
  return (
    <RelayEnvironmentProvider environment={environment}>
      <RouterBase base={config.base}>
        <App />
      </RouterBase>
    </RelayEnvironmentProvider>
  );
}

const root = document.getElementById('root');
if (root) createRoot(root).render(<StrictMode><Root /></StrictMode>);
