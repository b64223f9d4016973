import { graphql, useFragment, useMutation } from 'react-relay';
import type { LikeButton_pin$key } from './__generated__/LikeButton_pin.graphql';
import type { LikeButtonLikeMutation } from './__generated__/LikeButtonLikeMutation.graphql';
import type { LikeButtonUnlikeMutation } from './__generated__/LikeButtonUnlikeMutation.graphql';
import { useReportError } from './errors';

const likeMutation = graphql`
  mutation LikeButtonLikeMutation($pinId: ID!) {
    likePin(pinId: $pinId) {
      id
      likeCount
      viewerHasLiked
      likers(first: 20) { edges { node { id username } } }
    }
  }
`;

const unlikeMutation = graphql`
  mutation LikeButtonUnlikeMutation($pinId: ID!) {
    unlikePin(pinId: $pinId) {
      id
      likeCount
      viewerHasLiked
      likers(first: 20) { edges { node { id username } } }
    }
  }
`;

/**
 * Like / unlike. The count moves at once (an optimistic answer); the server's answer replaces it,
 * and a refusal rolls it back and shows the message.
 */
export function LikeButton({ pin }: { pin: LikeButton_pin$key }) {
  const data = useFragment(
    graphql`
      fragment LikeButton_pin on Pin {
        id
        likeCount
        viewerHasLiked
      }
    `,
    pin,
  );
  const [like, liking] = useMutation<LikeButtonLikeMutation>(likeMutation);
  const [unlike, unliking] = useMutation<LikeButtonUnlikeMutation>(unlikeMutation);
  const report = useReportError();
  const onClick = () => {
    const liked = !data.viewerHasLiked;
    const optimisticUpdater = (store: import('relay-runtime').RecordSourceSelectorProxy) => {
      const record = store.get(data.id);
      if (!record) return;
      record.setValue(liked, 'viewerHasLiked');
      record.setValue(data.likeCount + (liked ? 1 : -1), 'likeCount');
    };
    const config = { variables: { pinId: data.id }, optimisticUpdater, onError: report };
    if (liked) like(config);
    else unlike(config);
  };
  return (
    <button type="button" className={`like${data.viewerHasLiked ? ' liked' : ''}`} onClick={onClick} disabled={liking || unliking} aria-pressed={data.viewerHasLiked} data-testid="like">
      <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true">
        <path d="M12 21s-7.5-4.6-9.6-9.2C.9 8.4 3 4.5 6.7 4.5c2.1 0 3.6 1.2 5.3 3.1 1.7-1.9 3.2-3.1 5.3-3.1 3.7 0 5.8 3.9 4.3 7.3C19.5 16.4 12 21 12 21z" />
      </svg>
      <span className="like-count" data-testid="like-count">{data.likeCount}</span>
    </button>
  );
}
