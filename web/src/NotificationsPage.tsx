import { graphql, useLazyLoadQuery } from 'react-relay';
import type { NotificationsPageQuery } from './__generated__/NotificationsPageQuery.graphql';
import { Avatar } from './Placeholder';
import { Link } from './router';

const WHAT = { LIKE: 'liked your pin', REPIN: 'saved your pin', COMMENT: 'commented on your pin', FOLLOW_USER: 'followed you', FOLLOW_BOARD: 'followed your board' } as const;

/** "ann and 2 others liked your pin": the viewer's notifications, grouped by the gateway. */
export function NotificationsPage() {
  const data = useLazyLoadQuery<NotificationsPageQuery>(
    graphql`
      query NotificationsPageQuery {
        viewer {
          id
          notifications(first: 30) {
            edges {
              cursor
              node {
                kind
                count
                actorCount
                actors { id username }
                latestAt
                pin { id title }
                board { id name }
              }
            }
          }
        }
      }
    `,
    {},
    { fetchPolicy: 'store-and-network' },
  );
  const edges = data.viewer?.notifications?.edges;
  if (!edges) return <div className="page-error">Sign in to see your notifications.</div>;
  return (
    <div data-testid="notifications">
      <h1>Notifications</h1>
      {edges.length === 0 ? <p className="empty">Nothing new.</p> : null}
      <ul className="notifications">
        {edges.map(({ cursor, node }) => {
          const [first] = node.actors;
          const others = node.actorCount - 1;
          return (
            <li key={cursor}>
              {first && <Avatar seed={first.id} name={first.username} />}
              <span>
                {first && <Link to={`/u/${first.username}`}>{first.username}</Link>}
                {others > 0 && ` and ${others} other${others === 1 ? '' : 's'}`} {WHAT[node.kind as keyof typeof WHAT] ?? node.kind}{' '}
                {node.pin && <Link to={`/p/${node.pin.id}`}>{node.pin.title ?? ''}</Link>}
                {node.board && <Link to={`/b/${node.board.id}`}>{node.board.name}</Link>}
              </span>
              <time dateTime={node.latestAt}>{new Date(node.latestAt).toLocaleString()}</time>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
