import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_REDIS_VERSION, olderThan, redisVersionOf } from '../../../src/redis/redisVersion.ts';

test('redisVersionOf reads redis_version from INFO server', () => {
  const info = '# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n';
  assert.equal(redisVersionOf(info), '7.0.15');
  assert.equal(redisVersionOf('# Server\r\nredis_mode:standalone\r\n'), undefined);
});

test('olderThan compares dotted versions part by part', () => {
  assert.equal(olderThan('6.2.14', MIN_REDIS_VERSION), true);
  assert.equal(olderThan('6.99', '7.0.0'), true);
  assert.equal(olderThan('7.0.0', MIN_REDIS_VERSION), false);
  assert.equal(olderThan('7.0.15', MIN_REDIS_VERSION), false);
  assert.equal(olderThan('7', '7.0.0'), false);
  assert.equal(olderThan('10.0.0', '7.0.0'), false, 'numbers, not strings');
  assert.equal(olderThan('7.0.9', '7.0.10'), true);
});
