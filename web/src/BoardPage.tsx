import { useState, type FormEvent } from 'react';
import { graphql, useLazyLoadQuery, useMutation, usePaginationFragment } from 'react-relay';
import type { BoardPageQuery } from './__generated__/BoardPageQuery.graphql';
import type { BoardPins_board$key } from './__generated__/BoardPins_board.graphql';
import type { BoardPinsPaginationQuery } from './__generated__/BoardPinsPaginationQuery.graphql';
import type { BoardPageCreatePinMutation } from './__generated__/BoardPageCreatePinMutation.graphql';
import { PinGrid } from './PinGrid';
import { Link } from './router';
import { useReportError } from './errors';

/** Pins per page of a board: a page fills about two screens of the grid. */
export const BOARD_PAGE_SIZE = 12;

/** A board: its pins page by page as a person scrolls, and (the owner's) a form to add a pin. */
export function BoardPage({ id }: { id: string }) {
  const data = useLazyLoadQuery<BoardPageQuery>(
    graphql`
      query BoardPageQuery($id: ID!, $count: Int!) {
        board(id: $id) {
          id
          name
          description
          pinCount
          followerCount
          owner { id username }
          ...BoardPins_board @arguments(count: $count)
        }
        viewer { id }
      }
    `,
    { id, count: BOARD_PAGE_SIZE },
    { fetchPolicy: 'store-and-network' },
  );
  const board = data.board;
  if (!board) return <div className="page-error">No board with ID {id}.</div>;
  const own = board.owner != null && board.owner.id === data.viewer?.id;
  return (
    <div className="board-page" data-testid="board">
      <header className="board-header">
        <h1>{board.name}</h1>
        {board.description && <p>{board.description}</p>}
        <p className="meta">
          {board.owner && <>by <Link to={`/u/${board.owner.username}`}>{board.owner.username}</Link> · </>}
          <span data-testid="board-pin-total">{board.pinCount}</span> pins · {board.followerCount} followers
        </p>
      </header>
      <BoardPins board={board} boardId={board.id} own={own} />
    </div>
  );
}

const createPinMutation = graphql`
  mutation BoardPageCreatePinMutation($input: CreatePinInput!, $connections: [ID!]!) {
    createPin(input: $input) @prependNode(connections: $connections, edgeTypeName: "PinEdge") {
      id
      ...PinCard_pin
      board { id pinCount }
      pinner { id pinCount }
    }
  }
`;

function BoardPins({ board, boardId, own }: { board: BoardPins_board$key; boardId: string; own: boolean }) {
  const paging = usePaginationFragment<BoardPinsPaginationQuery, BoardPins_board$key>(
    graphql`
      fragment BoardPins_board on Board
      @refetchable(queryName: "BoardPinsPaginationQuery")
      @argumentDefinitions(count: { type: "Int", defaultValue: 12 }, cursor: { type: "String" }) {
        pins(first: $count, after: $cursor) @connection(key: "BoardPins_pins") {
          __id
          edges { node { id ...PinCard_pin } }
        }
      }
    `,
    board,
  );
  return (
    <section>
      {own && <CreatePin boardId={boardId} connection={paging.data.pins.__id} />}
      <PinGrid edges={paging.data.pins.edges} paging={paging} pageSize={BOARD_PAGE_SIZE} testId="board-pins" />
    </section>
  );
}

function CreatePin({ boardId, connection }: { boardId: string; connection: string }) {
  const [title, setTitle] = useState('');
  const [commit, saving] = useMutation<BoardPageCreatePinMutation>(createPinMutation);
  const report = useReportError();
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    commit({ variables: { input: { boardId, title }, connections: [connection] }, onCompleted: () => setTitle(''), onError: report });
  };
  return (
    <form className="inline-form" onSubmit={onSubmit}>
      <input value={title} onChange={(e) => setTitle(e.target.value)} placeholder="New pin title" aria-label="New pin title" />
      <button type="submit" disabled={saving}>Add pin</button>
    </form>
  );
}
