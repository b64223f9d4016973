import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { GraphQLResolveInfo } from 'graphql';
import { encodeId, formatId } from '../../../src/core/ids.ts';
import { isShardqlError } from '../../../src/core/errors.ts';
import { DECLARED } from '../../../src/core/model/declared.ts';
import { OBJECT_TYPES, typeNumberOf } from '../../../src/core/objectTypes.ts';
import type { GatewayContext } from '../../../src/graphql/context.ts';
import { mutationResolvers } from '../../../src/graphql/mutationResolvers.ts';

const id = (type: keyof typeof OBJECT_TYPES, local: bigint) => encodeId({ shard: 1, type: typeNumberOf(type), local });
const viewer = id('user', 1n);
const board = id('board', 2n);
const pin = id('pin', 3n);
const after = id('pin', 4n);

/** A context whose writer records each call: what the derived resolver hands the model's writes. */
function recording(idempotencyKey?: string) {
  const calls: unknown[][] = [];
  const record =
    (method: string) =>
    async (...args: unknown[]) => {
      calls.push([method, ...args.filter((a) => a !== op)]);
      return method === 'delete' ? true : { id: 0n };
    };
  const op = {};
  const ctx = {
    viewerId: viewer,
    idempotencyKey,
    op,
    topology: { shardExists: () => true },
    writes: { model: { create: record('create'), update: record('update'), delete: record('delete'), relate: record('relate'), reorder: record('reorder') } },
  } as unknown as GatewayContext;
  return { ctx, calls };
}

const info = (key: string) => ({ path: { key } }) as unknown as GraphQLResolveInfo;
const RESOLVERS = mutationResolvers(DECLARED);
const call = (name: string, args: Record<string, unknown>, ctx: GatewayContext, key = name) => RESOLVERS[name]!(undefined, args, ctx, info(key));

describe('Derived mutation resolvers: arguments from the model', () => {
  test('@create with an input object: fields by name, the board reference from boardId, the key per response field', async () => {
    const { ctx, calls } = recording('k1');
    await call('createPin', { input: { boardId: formatId(board), title: 'Tea' } }, ctx, 'a');
    const [[method, name, who, args, opts]] = calls as [[string, string, bigint, { refs: unknown; fields: Record<string, unknown> }, { idempotencyKey: string }]];
    assert.deepEqual([method, name, who], ['create', 'createPin', viewer]);
    assert.deepEqual(args.refs, { board });
    assert.equal(args.fields.title, 'Tea');
    assert.deepEqual(opts, { idempotencyKey: 'k1:a' });
  });

  test('@create with top-level arguments: the pin reference from pinId, the text as a field', async () => {
    const { ctx, calls } = recording();
    await call('createComment', { pinId: formatId(pin), text: 'hi' }, ctx);
    const [[, , , args, opts]] = calls as [[string, string, bigint, { refs: unknown; fields: Record<string, unknown> }, object]];
    assert.deepEqual(args.refs, { pin });
    assert.equal(args.fields.text, 'hi');
    assert.deepEqual(opts, {});
  });

  test('@update, @delete, @relate: the argument the directive names, as an ID of the model\'s type', async () => {
    const { ctx, calls } = recording();
    await call('updateBoard', { id: formatId(board), input: { name: 'N' } }, ctx);
    assert.deepEqual(await call('deletePin', { id: formatId(pin) }, ctx), { deletedId: formatId(pin), deleted: true });
    await call('followBoard', { boardId: formatId(board) }, ctx);
    assert.deepEqual(calls[0], ['update', 'updateBoard', viewer, board, { name: 'N' }]);
    assert.deepEqual(calls[1], ['delete', 'deletePin', viewer, pin, {}]);
    assert.deepEqual(calls[2]!.slice(0, 4), ['relate', 'followBoard', viewer, board]);
  });

  test('@reorder: the list owner as <from>Id, the moved edge as the argument, the one before as after<Argument> (or null)', async () => {
    const { ctx, calls } = recording();
    await call('movePin', { boardId: formatId(board), pinId: formatId(pin), afterPinId: formatId(after) }, ctx);
    await call('movePin', { boardId: formatId(board), pinId: formatId(pin), afterPinId: null }, ctx);
    assert.deepEqual(calls, [
      ['reorder', 'movePin', viewer, board, pin, after],
      ['reorder', 'movePin', viewer, board, pin, null],
    ]);
  });

  const wrongType: { name: string; mutation: string; args: Record<string, unknown> }[] = [
    { name: 'a pin ID as createPin\'s boardId', mutation: 'createPin', args: { input: { boardId: formatId(pin) } } },
    { name: 'a board ID as likePin\'s pinId', mutation: 'likePin', args: { pinId: formatId(board) } },
    { name: 'a pin ID as deleteBoard\'s id', mutation: 'deleteBoard', args: { id: formatId(pin) } },
    { name: 'a board ID as movePin\'s afterPinId', mutation: 'movePin', args: { boardId: formatId(board), pinId: formatId(pin), afterPinId: formatId(board) } },
  ];
  for (const c of wrongType) {
    test(`refused before any write: ${c.name} (INVALID_ID)`, async () => {
      const { ctx, calls } = recording();
      await assert.rejects(
        async () => call(c.mutation, c.args, ctx),
        (err: unknown) => isShardqlError(err) && err.code === 'INVALID_ID',
      );
      assert.deepEqual(calls, []);
    });
  }
});
