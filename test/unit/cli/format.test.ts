import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ageText } from '../../../src/cli/format.ts';

describe('CLI format: the age of a pause', () => {
  const cases: { name: string; ms: number; want: string }[] = [
    { name: 'under a minute, in seconds', ms: 42_900, want: '42 s' },
    { name: 'minutes and seconds', ms: 12 * 60_000 + 5_000, want: '12 min 5 s' },
    { name: 'hours and minutes', ms: 3 * 3_600_000 + 2 * 60_000 + 59_000, want: '3 h 2 min' },
    { name: 'days and hours', ms: 2 * 86_400_000 + 3 * 3_600_000, want: '2 d 3 h' },
    { name: 'a clock behind the record: never negative', ms: -5_000, want: '0 s' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(ageText(c.ms), c.want));
});
