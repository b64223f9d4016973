import { graphql, useLazyLoadQuery, usePaginationFragment } from 'react-relay';
import type { HomePageQuery } from './__generated__/HomePageQuery.graphql';
import type { HomeFeed_query$key } from './__generated__/HomeFeed_query.graphql';
import type { HomeFeedPaginationQuery } from './__generated__/HomeFeedPaginationQuery.graphql';
import { PinGrid } from './PinGrid';

const FEED_PAGE_SIZE = 12;

/** The viewer's home feed: pins from the people and boards they follow, newest first, paged on scroll. */
export function HomePage() {
  const data = useLazyLoadQuery<HomePageQuery>(
    graphql`
      query HomePageQuery($count: Int!) {
        viewer { id username }
        ...HomeFeed_query @arguments(count: $count)
      }
    `,
    { count: FEED_PAGE_SIZE },
    { fetchPolicy: 'store-and-network' },
  );
  if (!data.viewer) return <div className="page-error">Sign in to see your home feed.</div>;
  return (
    <div data-testid="home">
      <h1>Home</h1>
      <HomeFeed query={data} />
    </div>
  );
}

function HomeFeed({ query }: { query: HomeFeed_query$key }) {
  const paging = usePaginationFragment<HomeFeedPaginationQuery, HomeFeed_query$key>(
    graphql`
      fragment HomeFeed_query on Query
      @refetchable(queryName: "HomeFeedPaginationQuery")
      @argumentDefinitions(count: { type: "Int", defaultValue: 12 }, cursor: { type: "String" }) {
        homeFeed(first: $count, after: $cursor) @connection(key: "HomeFeed_homeFeed") {
          edges { node { id ...PinCard_pin } }
        }
      }
    `,
    query,
  );
  const edges = paging.data.homeFeed.edges;
  return (
    <>
      {edges.length === 0 ? <p className="empty">Follow people or boards to fill your feed.</p> : null}
      <PinGrid edges={edges} paging={paging} pageSize={FEED_PAGE_SIZE} />
    </>
  );
}
