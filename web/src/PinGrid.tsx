import type { PinCard_pin$key } from './__generated__/PinCard_pin.graphql';
import { LoadMore, type Paging } from './LoadMore';
import { PinCard } from './PinCard';

/** A connection's pins as a grid of cards, the next `pageSize` asked for as its end scrolls into view. */
export function PinGrid({ edges, paging, pageSize, testId }: {
  edges: readonly { readonly node: { readonly id: string } & PinCard_pin$key }[];
  paging: Paging;
  pageSize: number;
  testId?: string;
}) {
  return (
    <>
      <div className="pin-grid" data-testid={testId}>
        {edges.map(({ node }) => <PinCard key={node.id} pin={node} />)}
      </div>
      <LoadMore hasNext={paging.hasNext} isLoading={paging.isLoadingNext} loadNext={() => paging.loadNext(pageSize)} />
    </>
  );
}
