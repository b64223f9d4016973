import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, isObjectType, type GraphQLObjectType } from 'graphql';
import { loadTypeDefs } from '../../../src/graphql/schema.ts';
import { compileRelayApp, relayOperations } from '../../helpers/relayCompiler.ts';

describe('Relay: relay-compiler accepts the schema', () => {
  test('a Relay app with @connection on every connection field, @refetchable fragments and @deleteRecord compiles with zero errors', (t) => {
    const c = compileRelayApp();
    t.after(() => c.remove());
    assert.equal(c.status, 0, `relay-compiler failed:\n${c.output}`);
    assert.doesNotMatch(c.output, /\berror\b/i, c.output);
    const ops = relayOperations(c);
    // The screens, a pagination query per connection, a node refetch per object fragment, the deletes.
    for (const name of [
      'UserScreenQuery', 'BoardScreenQuery', 'PinScreenQuery', 'HomeScreenQuery',
      'UserBoardsPaginationQuery', 'UserPinsPaginationQuery', 'UserLikedPinsPaginationQuery', 'UserFollowersPaginationQuery',
      'UserFollowingPaginationQuery', 'UserFollowedBoardsPaginationQuery', 'UserActivityPaginationQuery', 'ViewerNotificationsPaginationQuery',
      'BoardPinsPaginationQuery', 'BoardFollowersPaginationQuery', 'PinLikersPaginationQuery', 'PinCommentsPaginationQuery',
      'PinRepinsPaginationQuery', 'HomeFeedPaginationQuery',
      'UserProfileRefetchQuery', 'BoardDetailsRefetchQuery', 'PinDetailsRefetchQuery', 'CommentBodyRefetchQuery',
      'DeleteCommentMutation', 'DeletePinMutation', 'DeleteBoardMutation', 'DeleteViewerMutation', 'CreateCommentMutation',
    ]) {
      assert.ok(ops.has(name), `no artifact for ${name}: ${[...ops.keys()].join(', ')}`);
    }
    assert.equal(ops.size, 27, [...ops.keys()].join(', '));
  });
});

describe('Relay: an id is only ever its own object’s', () => {
  test('every type with an id is a Node (its own ID), but for ActivityEvent, whose id is the event’s own; no payload carries an id', () => {
    const schema = buildSchema(loadTypeDefs());
    const withId = Object.values(schema.getTypeMap())
      .filter((t): t is GraphQLObjectType => isObjectType(t) && !t.name.startsWith('__') && 'id' in t.getFields())
      .map((t) => `${t.name}${t.getInterfaces().some((i) => i.name === 'Node') ? ' (Node)' : ''}`)
      .sort();
    assert.deepEqual(withId, ['ActivityEvent', 'Board (Node)', 'Comment (Node)', 'Pin (Node)', 'User (Node)']);
    const payload = schema.getType('DeletePayload') as GraphQLObjectType;
    assert.deepEqual(Object.keys(payload.getFields()).sort(), ['deleted', 'deletedId']);
    assert.equal(String(payload.getFields().deletedId!.type), 'ID!');
  });
});
