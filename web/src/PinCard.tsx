import { graphql, useFragment } from 'react-relay';
import type { PinCard_pin$key } from './__generated__/PinCard_pin.graphql';
import { LikeButton } from './LikeButton';
import { Placeholder } from './Placeholder';
import { Link } from './router';

/** A pin in a grid: its generated picture, title, pinner and like button. */
export function PinCard({ pin }: { pin: PinCard_pin$key }) {
  const data = useFragment(
    graphql`
      fragment PinCard_pin on Pin {
        id
        title
        pinner { id username }
        ...LikeButton_pin
      }
    `,
    pin,
  );
  const title = data.title ?? 'Untitled pin';
  return (
    <article className="pin-card" data-testid="pin-card" data-pin-id={data.id}>
      <Link to={`/p/${data.id}`}>
        <Placeholder seed={data.id} label={title} />
        <h3 className="pin-title">{title}</h3>
      </Link>
      <div className="pin-meta">
        {data.pinner ? <Link to={`/u/${data.pinner.username}`}>{data.pinner.username}</Link> : <span />}
        <LikeButton pin={data} />
      </div>
    </article>
  );
}
