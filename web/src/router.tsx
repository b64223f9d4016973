import { createContext, useContext, useSyncExternalStore, type MouseEvent, type ReactNode } from 'react';

/** The pages of the app, parsed from the path under the base (e.g. /app/u/alice). */
export type Route =
  | { readonly page: 'home' }
  | { readonly page: 'notifications' }
  | { readonly page: 'profile'; readonly username: string }
  | { readonly page: 'board'; readonly id: string }
  | { readonly page: 'pin'; readonly id: string }
  | { readonly page: 'missing'; readonly path: string };

/** '/u/alice' → profile of alice; anything unknown is 'missing'. */
export function parseRoute(path: string): Route {
  const parts = path.split('/').filter((p) => p !== '').map(decodeURIComponent);
  const [head, arg] = parts;
  if (parts.length === 0 || (head === 'home' && parts.length === 1)) return { page: 'home' };
  if (head === 'notifications' && parts.length === 1) return { page: 'notifications' };
  if (arg !== undefined && parts.length === 2) {
    if (head === 'u') return { page: 'profile', username: arg };
    if (head === 'b') return { page: 'board', id: arg };
    if (head === 'p') return { page: 'pin', id: arg };
  }
  return { page: 'missing', path };
}

const BaseContext = createContext('/app');

function subscribe(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange);
  return () => window.removeEventListener('popstate', onChange);
}

/** The current route; re-renders on navigation (links and the back button). */
export function useRoute(): Route {
  const base = useContext(BaseContext);
  const path = useSyncExternalStore(subscribe, () => window.location.pathname);
  return parseRoute(path.startsWith(base) ? path.slice(base.length) : path);
}

export function RouterBase({ base, children }: { base: string; children: ReactNode }) {
  return <BaseContext.Provider value={base}>{children}</BaseContext.Provider>;
}

export function navigate(href: string): void {
  window.history.pushState(null, '', href);
  window.dispatchEvent(new PopStateEvent('popstate'));
  window.scrollTo(0, 0);
}

/** A link inside the app: `to` is relative to the base ('/u/alice'). */
export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  const base = useContext(BaseContext);
  const href = `${base}${to}`;
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} className={className}>
      {children}
    </a>
  );
}
