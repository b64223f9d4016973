import { StrictMode, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { RelayEnvironmentProvider } from 'react-relay';
import { App, SignIn } from './App';
import { readConfig, storedToken, storeToken } from './config';
import { createEnvironment } from './environment';
import { RouterBase } from './router';
import './app.css';

const config = readConfig();

function Root() {
  // Development: the gateway hands the page the demo user's token. Production: one a person pasted.
  const [token, setToken] = useState(config.token ?? storedToken());
  const current = useRef(token);
  current.current = token;
  const [environment] = useState(() => createEnvironment(config.endpoint, () => current.current));
  if (token === undefined) {
    return (
      <SignIn
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
