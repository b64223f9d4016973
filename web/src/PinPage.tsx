import { useState, type FormEvent } from 'react';
import { graphql, useLazyLoadQuery, useMutation } from 'react-relay';
import type { PinPageQuery } from './__generated__/PinPageQuery.graphql';
import type { PinPageCommentMutation } from './__generated__/PinPageCommentMutation.graphql';
import type { PinPageRepinMutation } from './__generated__/PinPageRepinMutation.graphql';
import { LikeButton } from './LikeButton';
import { Avatar, Placeholder } from './Placeholder';
import { Link } from './router';
import { useReportError } from './errors';

/** A pin: its picture and counts, who liked it, its comments and its repins; like, comment, repin. */
export function PinPage({ id }: { id: string }) {
  const data = useLazyLoadQuery<PinPageQuery>(
    graphql`
      query PinPageQuery($id: ID!) {
        pin(id: $id) {
          id
          title
          description
          link
          createdAt
          likeCount
          repinCount
          commentCount
          pinner { id username }
          board { id name }
          via { id title }
          ...LikeButton_pin
          likers(first: 20) { edges { node { id username } } }
          comments(first: 20) @connection(key: "PinPage_comments") {
            __id
            edges { node { id text createdAt author { id username } } }
          }
          repins(first: 20) @connection(key: "PinPage_repins") {
            __id
            edges { node { id title pinner { id username } board { id name } } }
          }
        }
        viewer {
          id
          boards(first: 50) { edges { node { id name } } }
        }
      }
    `,
    { id },
    { fetchPolicy: 'store-and-network' },
  );
  const pin = data.pin;
  if (!pin) return <div className="page-error">No pin with ID {id}.</div>;
  const title = pin.title ?? 'Untitled pin';
  return (
    <div className="pin-page" data-testid="pin">
      <div className="pin-picture">
        <Placeholder seed={pin.id} label={title} height={260} />
      </div>
      <div className="pin-body">
        <h1>{title}</h1>
        {pin.description && <p>{pin.description}</p>}
        <p className="meta">
          {pin.pinner && <>saved by <Link to={`/u/${pin.pinner.username}`}>{pin.pinner.username}</Link></>}
          {pin.board && <> on <Link to={`/b/${pin.board.id}`}>{pin.board.name}</Link></>}
          {pin.via && <> · via <Link to={`/p/${pin.via.id}`}>{pin.via.title ?? 'a pin'}</Link></>}
        </p>
        {/* A link is shown as text: following it would leave the machine. */}
        {pin.link && <p className="link-text">{pin.link}</p>}
        <div className="pin-actions">
          <LikeButton pin={pin} />
          <span><b data-testid="repin-count">{pin.repinCount}</b> repins</span>
          <span><b data-testid="comment-count">{pin.commentCount}</b> comments</span>
        </div>
        {data.viewer && <Repin pinId={pin.id} boards={data.viewer.boards.edges.map((e) => e.node)} connection={pin.repins.__id} />}
        <section data-testid="likers">
          <h2>Liked by</h2>
          {pin.likers.edges.length === 0 ? <p className="empty">Nobody yet.</p> : null}
          <ul className="inline-people">
            {pin.likers.edges.map(({ node }) => (
              <li key={node.id}><Link to={`/u/${node.username}`}><Avatar seed={node.id} name={node.username} size={24} /> {node.username}</Link></li>
            ))}
          </ul>
        </section>
        <section data-testid="comments">
          <h2>Comments</h2>
          <CommentForm pinId={pin.id} connection={pin.comments.__id} />
          <ul className="comments">
            {pin.comments.edges.map(({ node }) => (
              <li key={node.id}>
                <b>{node.author?.username ?? 'someone'}</b> {node.text}
              </li>
            ))}
          </ul>
        </section>
        <section data-testid="repins">
          <h2>Repins</h2>
          {pin.repins.edges.length === 0 ? <p className="empty">None yet.</p> : null}
          <ul>
            {pin.repins.edges.map(({ node }) => (
              <li key={node.id}>
                <Link to={`/p/${node.id}`}>{node.title ?? 'a pin'}</Link>
                {node.pinner && <> by {node.pinner.username}</>}
                {node.board && <> on {node.board.name}</>}
              </li>
            ))}
          </ul>
        </section>
      </div>
    </div>
  );
}

const commentMutation = graphql`
  mutation PinPageCommentMutation($pinId: ID!, $text: String!, $connections: [ID!]!) {
    createComment(pinId: $pinId, text: $text) @prependNode(connections: $connections, edgeTypeName: "CommentEdge") {
      id
      text
      createdAt
      author { id username }
      pin { id commentCount }
    }
  }
`;

function CommentForm({ pinId, connection }: { pinId: string; connection: string }) {
  const [text, setText] = useState('');
  const [commit, saving] = useMutation<PinPageCommentMutation>(commentMutation);
  const report = useReportError();
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    commit({ variables: { pinId, text, connections: [connection] }, onCompleted: () => setText(''), onError: report });
  };
  return (
    <form className="inline-form" onSubmit={onSubmit}>
      <input value={text} onChange={(e) => setText(e.target.value)} placeholder="Add a comment" aria-label="Comment" />
      <button type="submit" disabled={saving}>Comment</button>
    </form>
  );
}

const repinMutation = graphql`
  mutation PinPageRepinMutation($pinId: ID!, $boardId: ID!, $connections: [ID!]!) {
    repin(pinId: $pinId, boardId: $boardId) @prependNode(connections: $connections, edgeTypeName: "PinEdge") {
      id
      title
      pinner { id username pinCount }
      board { id name pinCount }
      via { id repinCount }
    }
  }
`;

function Repin({ pinId, boards, connection }: { pinId: string; boards: readonly { readonly id: string; readonly name: string }[]; connection: string }) {
  const [boardId, setBoardId] = useState(boards[0]?.id ?? '');
  const [commit, saving] = useMutation<PinPageRepinMutation>(repinMutation);
  const report = useReportError();
  if (boards.length === 0) return null;
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    commit({ variables: { pinId, boardId, connections: [connection] }, onError: report });
  };
  return (
    <form className="inline-form" onSubmit={onSubmit}>
      <select value={boardId} onChange={(e) => setBoardId(e.target.value)} aria-label="Board to save to">
        {boards.map((b) => <option key={b.id} value={b.id}>{b.name}</option>)}
      </select>
      <button type="submit" disabled={saving}>Save to board</button>
    </form>
  );
}
