import { graphql, useFragment, useMutation } from 'react-relay';
import type { FollowButton_user$key } from './__generated__/FollowButton_user.graphql';
import type { FollowButtonFollowMutation } from './__generated__/FollowButtonFollowMutation.graphql';
import type { FollowButtonUnfollowMutation } from './__generated__/FollowButtonUnfollowMutation.graphql';
import { useReportError } from './errors';

// The answer carries the followed user's first page of followers, so their list on the profile
// shows the viewer as soon as the write is done.
const followMutation = graphql`
  mutation FollowButtonFollowMutation($userId: ID!) {
    followUser(userId: $userId) {
      id
      viewerFollows
      followerCount
      ...ProfileFollowers_user
    }
  }
`;

const unfollowMutation = graphql`
  mutation FollowButtonUnfollowMutation($userId: ID!) {
    unfollowUser(userId: $userId) {
      id
      viewerFollows
      followerCount
      ...ProfileFollowers_user
    }
  }
`;

export function FollowButton({ user }: { user: FollowButton_user$key }) {
  const data = useFragment(
    graphql`
      fragment FollowButton_user on User {
        id
        viewerFollows
        followerCount
      }
    `,
    user,
  );
  const [follow, following] = useMutation<FollowButtonFollowMutation>(followMutation);
  const [unfollow, unfollowing] = useMutation<FollowButtonUnfollowMutation>(unfollowMutation);
  const report = useReportError();
  const onClick = () => {
    const next = !data.viewerFollows;
    const optimisticUpdater = (store: import('relay-runtime').RecordSourceSelectorProxy) => {
      const record = store.get(data.id);
      if (!record) return;
      record.setValue(next, 'viewerFollows');
      record.setValue(data.followerCount + (next ? 1 : -1), 'followerCount');
    };
    const config = { variables: { userId: data.id }, optimisticUpdater, onError: report };
    if (next) follow(config);
    else unfollow(config);
  };
  return (
    <button type="button" className={`follow${data.viewerFollows ? ' following' : ''}`} onClick={onClick} disabled={following || unfollowing} data-testid="follow">
      {data.viewerFollows ? 'Following' : 'Follow'}
    </button>
  );
}
