import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cutByDeadline } from '../../../src/storage/shardRouter.ts';

/** mysql2's own query timeout, as its Query command raises it. */
function driverTimeout(): Error {
  return Object.assign(new Error('Query inactivity timeout'), { code: 'PROTOCOL_SEQUENCE_TIMEOUT', errorno: 'PROTOCOL_SEQUENCE_TIMEOUT', syscall: 'query' });
}
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' });

describe('A statement or a wait for a connection cut by the request deadline, or by its host', () => {
  const deadline = 1_000_600;
  test("the clamped timer fired, even while Date.now() is a ms short of the deadline (Node's timers and the wall clock)", () => {
    assert.equal(cutByDeadline(driverTimeout(), 600, 5000, deadline, deadline - 1), true);
    assert.equal(cutByDeadline(driverTimeout(), 600, 5000, deadline, deadline), true);
  });
  test("the wait for a connection, clamped to the deadline, ran out (the pool wait's own timer)", () => {
    const waited = Object.assign(new Error('no connection within 600 ms (pool wait timeout)'), { code: 'POOL_WAIT_TIMEOUT' });
    assert.equal(cutByDeadline(waited, 600, 5000, deadline, deadline - 1), true);
    assert.equal(cutByDeadline(waited, 5000, 5000, deadline, deadline - 4400), false, 'the statement timeout bounded the wait: the host is slow');
  });
  test('any failure once the deadline has passed, of a read whose timeout was clamped', () => {
    assert.equal(cutByDeadline(refused, 600, 5000, deadline, deadline + 3), true);
  });
  test('the host failed before the deadline: not the deadline', () => {
    assert.equal(cutByDeadline(refused, 600, 5000, deadline, deadline - 200), false);
  });
  test('the statement timeout fired (not clamped), or no deadline: the host was slow', () => {
    assert.equal(cutByDeadline(driverTimeout(), 5000, 5000, deadline, deadline + 10), false);
    assert.equal(cutByDeadline(driverTimeout(), 300, 300, deadline, deadline - 1), false);
    assert.equal(cutByDeadline(driverTimeout(), 600, 5000, undefined, deadline), false);
  });
});
