import { useState, type FormEvent } from 'react';
import { graphql, useFragment, useLazyLoadQuery, useMutation, usePaginationFragment } from 'react-relay';
import type { ProfilePageQuery } from './__generated__/ProfilePageQuery.graphql';
import type { ProfileHeader_user$key } from './__generated__/ProfileHeader_user.graphql';
import type { ProfileBoards_user$key } from './__generated__/ProfileBoards_user.graphql';
import type { ProfilePins_user$key } from './__generated__/ProfilePins_user.graphql';
import type { ProfilePinsPaginationQuery } from './__generated__/ProfilePinsPaginationQuery.graphql';
import type { ProfileFollowers_user$key } from './__generated__/ProfileFollowers_user.graphql';
import type { ProfileFollowersPaginationQuery } from './__generated__/ProfileFollowersPaginationQuery.graphql';
import type { ProfileFollowing_user$key } from './__generated__/ProfileFollowing_user.graphql';
import type { ProfileFollowingPaginationQuery } from './__generated__/ProfileFollowingPaginationQuery.graphql';
import type { ProfileActivity_user$key } from './__generated__/ProfileActivity_user.graphql';
import type { ProfileBoardsCreateMutation } from './__generated__/ProfileBoardsCreateMutation.graphql';
import { FollowButton } from './FollowButton';
import { LoadMore, type Paging } from './LoadMore';
import { PinGrid } from './PinGrid';
import { Avatar, Placeholder } from './Placeholder';
import { Link } from './router';
import { useReportError } from './errors';

/** Pins per page of a profile's pins, as on a board. */
export const PROFILE_PINS_PAGE_SIZE = 12;
/** People per page of a profile's followers and following. */
export const PEOPLE_PAGE_SIZE = 20;

/** A user's page: who they are, their boards, pins, followers, following and recent activity. */
export function ProfilePage({ username }: { username: string }) {
  const data = useLazyLoadQuery<ProfilePageQuery>(
    graphql`
      query ProfilePageQuery($username: String!) {
        user(username: $username) {
          id
          ...ProfileHeader_user
          ...ProfileBoards_user
          ...ProfilePins_user
          ...ProfileFollowers_user
          ...ProfileFollowing_user
          ...ProfileActivity_user
        }
        viewer { id }
      }
    `,
    { username },
    { fetchPolicy: 'store-and-network' },
  );
  if (!data.user) return <div className="page-error">No user named {username}.</div>;
  const own = data.viewer?.id === data.user.id;
  return (
    <div className="profile" data-testid="profile">
      <ProfileHeader user={data.user} own={own} />
      <div className="columns">
        <main>
          <ProfileBoards user={data.user} own={own} />
          <ProfilePins user={data.user} />
        </main>
        <aside>
          <ProfileActivity user={data.user} />
          <ProfileFollowers user={data.user} />
          <ProfileFollowing user={data.user} />
        </aside>
      </div>
    </div>
  );
}

function ProfileHeader({ user, own }: { user: ProfileHeader_user$key; own: boolean }) {
  const data = useFragment(
    graphql`
      fragment ProfileHeader_user on User {
        id
        username
        displayName
        about
        boardCount
        pinCount
        likeCount
        followerCount
        followingCount
        ...FollowButton_user
      }
    `,
    user,
  );
  return (
    <header className="profile-header">
      <Avatar seed={data.id} name={data.username} size={72} />
      <div>
        <h1>{data.displayName ?? data.username}</h1>
        <div className="handle">@{data.username}</div>
        {data.about && <p className="about">{data.about}</p>}
        <ul className="counts">
          <li><b data-testid="board-count">{data.boardCount}</b> boards</li>
          <li><b>{data.pinCount}</b> pins</li>
          <li><b>{data.likeCount}</b> likes</li>
          <li><b data-testid="follower-count">{data.followerCount}</b> followers</li>
          <li><b>{data.followingCount}</b> following</li>
        </ul>
      </div>
      {!own && <FollowButton user={data} />}
    </header>
  );
}

const createBoardMutation = graphql`
  mutation ProfileBoardsCreateMutation($input: CreateBoardInput!, $connections: [ID!]!) {
    createBoard(input: $input) @prependNode(connections: $connections, edgeTypeName: "BoardEdge") {
      id
      name
      pinCount
      owner { id boardCount }
    }
  }
`;

function ProfileBoards({ user, own }: { user: ProfileBoards_user$key; own: boolean }) {
  const data = useFragment(
    graphql`
      fragment ProfileBoards_user on User {
        boards(first: 50) @connection(key: "ProfileBoards_boards") {
          __id
          edges { node { id name pinCount } }
        }
      }
    `,
    user,
  );
  return (
    <section className="boards">
      <h2>Boards</h2>
      <div className="board-grid">
        {data.boards.edges.map(({ node }) => (
          <Link key={node.id} to={`/b/${node.id}`} className="board-tile">
            <Placeholder seed={node.id} label={node.name} height={100} />
            <span className="board-name" data-testid="board-name">{node.name}</span>
            <span className="board-pins"><span data-testid="board-pin-count">{node.pinCount}</span> pins</span>
          </Link>
        ))}
      </div>
      {own && <CreateBoard connection={data.boards.__id} />}
    </section>
  );
}

function CreateBoard({ connection }: { connection: string }) {
  const [name, setName] = useState('');
  const [commit, saving] = useMutation<ProfileBoardsCreateMutation>(createBoardMutation);
  const report = useReportError();
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    commit({ variables: { input: { name }, connections: [connection] }, onCompleted: () => setName(''), onError: report });
  };
  return (
    <form className="inline-form" onSubmit={onSubmit}>
      <input value={name} onChange={(e) => setName(e.target.value)} placeholder="New board name" aria-label="New board name" />
      <button type="submit" disabled={saving}>Create board</button>
    </form>
  );
}

function ProfilePins({ user }: { user: ProfilePins_user$key }) {
  const paging = usePaginationFragment<ProfilePinsPaginationQuery, ProfilePins_user$key>(
    graphql`
      fragment ProfilePins_user on User
      @refetchable(queryName: "ProfilePinsPaginationQuery")
      @argumentDefinitions(count: { type: "Int", defaultValue: 12 }, cursor: { type: "String" }) {
        pins(first: $count, after: $cursor) @connection(key: "ProfilePins_pins") {
          edges { node { id ...PinCard_pin } }
        }
      }
    `,
    user,
  );
  return (
    <section data-testid="profile-pins">
      <h2>Pins</h2>
      <PinGrid edges={paging.data.pins.edges} paging={paging} pageSize={PROFILE_PINS_PAGE_SIZE} />
    </section>
  );
}

function PeopleList({ title, people, testId, paging }: { title: string; people: readonly { readonly node: { readonly id: string; readonly username: string } }[]; testId: string; paging: Paging }) {
  return (
    <section className="people" data-testid={testId}>
      <h2>{title}</h2>
      {people.length === 0 ? <p className="empty">Nobody yet.</p> : null}
      <ul>
        {people.map(({ node }) => (
          <li key={node.id}>
            <Link to={`/u/${node.username}`}>
              <Avatar seed={node.id} name={node.username} size={24} /> <span data-testid="username">{node.username}</span>
            </Link>
          </li>
        ))}
      </ul>
      {people.length > 0 && <LoadMore hasNext={paging.hasNext} isLoading={paging.isLoadingNext} loadNext={() => paging.loadNext(PEOPLE_PAGE_SIZE)} />}
    </section>
  );
}

function ProfileFollowers({ user }: { user: ProfileFollowers_user$key }) {
  const paging = usePaginationFragment<ProfileFollowersPaginationQuery, ProfileFollowers_user$key>(
    graphql`
      fragment ProfileFollowers_user on User
      @refetchable(queryName: "ProfileFollowersPaginationQuery")
      @argumentDefinitions(count: { type: "Int", defaultValue: 20 }, cursor: { type: "String" }) {
        followers(first: $count, after: $cursor) @connection(key: "ProfileFollowers_followers") {
          edges { node { id username } }
        }
      }
    `,
    user,
  );
  return <PeopleList title="Followers" people={paging.data.followers.edges} testId="followers" paging={paging} />;
}

function ProfileFollowing({ user }: { user: ProfileFollowing_user$key }) {
  const paging = usePaginationFragment<ProfileFollowingPaginationQuery, ProfileFollowing_user$key>(
    graphql`
      fragment ProfileFollowing_user on User
      @refetchable(queryName: "ProfileFollowingPaginationQuery")
      @argumentDefinitions(count: { type: "Int", defaultValue: 20 }, cursor: { type: "String" }) {
        following(first: $count, after: $cursor) @connection(key: "ProfileFollowing_following") {
          edges { node { id username } }
        }
      }
    `,
    user,
  );
  return <PeopleList title="Following" people={paging.data.following.edges} testId="following" paging={paging} />;
}

const VERBS = { LIKE: 'liked', REPIN: 'saved', COMMENT: 'commented on', FOLLOW_USER: 'followed', FOLLOW_BOARD: 'followed the board' } as const;

function ProfileActivity({ user }: { user: ProfileActivity_user$key }) {
  const data = useFragment(
    graphql`
      fragment ProfileActivity_user on User {
        activity(first: 10) {
          edges {
            node {
              id
              kind
              at
              pin { id title }
              board { id name }
              user { id username }
            }
          }
        }
      }
    `,
    user,
  );
  return (
    <section className="activity" data-testid="activity">
      <h2>Recent activity</h2>
      {data.activity.edges.length === 0 ? <p className="empty">Nothing yet.</p> : null}
      <ul>
        {data.activity.edges.map(({ node }) => (
          <li key={node.id}>
            {VERBS[node.kind as keyof typeof VERBS] ?? node.kind}{' '}
            {node.pin && <Link to={`/p/${node.pin.id}`}>{node.pin.title ?? 'a pin'}</Link>}
            {node.board && <Link to={`/b/${node.board.id}`}>{node.board.name}</Link>}
            {node.user && <Link to={`/u/${node.user.username}`}>{node.user.username}</Link>}
            <time dateTime={node.at}>{new Date(node.at).toLocaleDateString()}</time>
          </li>
        ))}
      </ul>
    </section>
  );
}
