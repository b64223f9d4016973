import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isShardqlError } from '../../../src/core/errors.ts';
import { modShardOf } from '../../../src/core/modShard.ts';
import { assertModShardCountKept, modShardCountChange, recordedCountProblem } from '../../../src/core/modShardCount.ts';

const map = (count: number) => ({ modShard: { count } });

describe('Mod-shard count: fixed once published', () => {
  test('why it is fixed: "alice" is looked for in another mod shard under 16 than the one it was claimed in under 8', () => {
    assert.equal(modShardOf('alice', 8), 4);
    assert.equal(modShardOf('alice', 16), 12);
    assert.equal(modShardOf('alice@example.com', 8), modShardOf('alice@example.com', 16), 'the email stays put: it is still found taken');
  });

  const cases: { name: string; published: number | null; next: number; refused: boolean }[] = [
    { name: 'nothing published: any count', published: null, next: 16, refused: false },
    { name: 'same count', published: 8, next: 8, refused: false },
    { name: 'more mod shards', published: 8, next: 16, refused: true },
    { name: 'fewer mod shards', published: 4096, next: 16, refused: true },
    { name: 'a multiple is no exception', published: 16, next: 32, refused: true },
  ];
  for (const c of cases) {
    test(`${c.name}: ${c.refused ? 'refused' : 'published'}`, () => {
      const run = () => assertModShardCountKept(c.published === null ? null : map(c.published), map(c.next));
      if (!c.refused) {
        assert.doesNotThrow(run);
        return;
      }
      assert.throws(run, (err: unknown) => {
        assert.ok(isShardqlError(err, 'INVALID_TOPOLOGY'), String(err));
        assert.match(err.message, new RegExp(`changes modShard\\.count from ${c.published} to ${c.next}: refused`));
        assert.match(err.message, /claimed in mod shard md5\(key\) mod count/, 'says why');
        assert.match(err.message, new RegExp(`keep modShard\\.count ${c.published}$`), 'says what to do');
        return true;
      });
    });
  }

  test('modShardCountChange says nothing when the count is kept', () => {
    assert.equal(modShardCountChange(8, 8), undefined);
    assert.match(modShardCountChange(8, 16) ?? '', /from 8 to 16/);
  });

  test('a database recording another count: names it, its host, both counts and what to do', () => {
    const one = recordedCountProblem({ database: 'msdb00000', host: 'mysql001', recorded: 8 }, 16);
    assert.equal(
      one,
      'Mod shard database msdb00000 on mysql001 records 8 mod shards; this map has 16. Its claims (usernames, emails) are hashed over 8 ' +
        '(md5(key) mod 8): with 16 they would be looked for in other databases and uniqueness would break. Publish a map with ' +
        'modShard.count 8, or drop these databases first if they hold nothing to keep',
    );
    assert.match(recordedCountProblem({ database: 'msdb00003', host: 'mysql002', recorded: 4 }, 8, 7), /^Mod shard database msdb00003 on mysql002 records 4 mod shards \(and 7 more database\(s\)\); this map has 8\./);
  });
});
