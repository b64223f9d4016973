import { Component, createContext, useCallback, useContext, useState, type ReactNode } from 'react';

/** Shows a failed write's message above the page (the page itself keeps what the server holds). */
const ReportContext = createContext<(message: string) => void>(() => undefined);

export function useReportError(): (err: unknown) => void {
  const report = useContext(ReportContext);
  return useCallback((err: unknown) => report(err instanceof Error ? err.message : String(err)), [report]);
}

export function ErrorBanner({ children }: { children: ReactNode }) {
  const [message, setMessage] = useState<string | undefined>(undefined);
  return (
    <ReportContext.Provider value={setMessage}>
      {message !== undefined && (
        <div className="banner" role="alert">
          <span className="banner-text">{message}</span>
          <button type="button" onClick={() => setMessage(undefined)} aria-label="Dismiss">
            ×
          </button>
        </div>
      )}
      {children}
    </ReportContext.Provider>
  );
}

/** A page that could not load (e.g. a user that does not exist) says why instead of going blank. */
export class PageErrorBoundary extends Component<{ children: ReactNode; resetKey: string }, { error: Error | undefined }> {
  override state: { error: Error | undefined } = { error: undefined };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override componentDidUpdate(prev: { resetKey: string }) {
    if (prev.resetKey !== this.props.resetKey && this.state.error !== undefined) this.setState({ error: undefined });
  }

  override render() {
    if (this.state.error) {
      return (
        <div className="page-error" role="alert">
          This page could not load: {this.state.error.message}
        </div>
      );
    }
    return this.props.children;
  }
}
