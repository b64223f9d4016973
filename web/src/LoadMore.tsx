import { useEffect, useRef } from 'react';

/** What a Relay pagination fragment gives a list to page with (`usePaginationFragment`). */
export interface Paging {
  readonly hasNext: boolean;
  readonly isLoadingNext: boolean;
  readonly loadNext: (count: number) => unknown;
}

/**
 * The end of a list: when it scrolls into view and more items exist, the next page is asked for
 * (once at a time). A button does the same for keyboards and for tests that click.
 */
export function LoadMore({ hasNext, isLoading, loadNext }: { hasNext: boolean; isLoading: boolean; loadNext: () => void }) {
  const sentinel = useRef<HTMLDivElement>(null);
  const latest = useRef({ hasNext, isLoading, loadNext });
  latest.current = { hasNext, isLoading, loadNext };
  useEffect(() => {
    const element = sentinel.current;
    if (!element) return undefined;
    const observer = new IntersectionObserver((entries) => {
      const { hasNext: more, isLoading: busy, loadNext: next } = latest.current;
      if (entries.some((e) => e.isIntersecting) && more && !busy) next();
    });
    observer.observe(element);
    return () => observer.disconnect();
    // A new observer after each load reports at once whether the end is still in view.
  }, [isLoading]);
  return (
    <div ref={sentinel} className="load-more" data-testid="load-more">
      {isLoading ? 'Loading…' : hasNext ? <button type="button" onClick={loadNext}>More</button> : <span className="end">That's all.</span>}
    </div>
  );
}
