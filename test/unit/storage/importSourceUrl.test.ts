import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSourceUrl, sourceUrl } from '../../../src/storage/importSource.ts';

describe('Import source URLs', () => {
  const cases: [string, ReturnType<typeof parseSourceUrl>, string][] = [
    ['mysql://app@db.example.com/shop', { host: 'db.example.com', port: 3306, user: 'app', database: 'shop' }, 'mysql://app@db.example.com:3306/shop'],
    ['mariadb://a%40b@10.0.0.5:3307/main', { host: '10.0.0.5', port: 3307, user: 'a@b', database: 'main' }, 'mysql://a%40b@10.0.0.5:3307/main'],
    ['mysql://app@db:3306/shop?tls=1', { host: 'db', port: 3306, user: 'app', database: 'shop', tls: {} }, 'mysql://app@db:3306/shop?tls=1'],
    ['mysql://app@db:3306/shop?tls=0', { host: 'db', port: 3306, user: 'app', database: 'shop' }, 'mysql://app@db:3306/shop'],
    ['mysql://app@db:3306/shop?tls-ca=/etc/ssl/rds%20ca.pem', { host: 'db', port: 3306, user: 'app', database: 'shop', tls: { caPath: '/etc/ssl/rds ca.pem' } }, 'mysql://app@db:3306/shop?tls-ca=%2Fetc%2Fssl%2Frds%20ca.pem'],
    ['mysql://app@db:3306/shop?tls=1&tls-ca=/ca.pem', { host: 'db', port: 3306, user: 'app', database: 'shop', tls: { caPath: '/ca.pem' } }, 'mysql://app@db:3306/shop?tls-ca=%2Fca.pem'],
  ];
  for (const [text, loc, url] of cases) {
    test(`${text} → its parts, and back (what jobs carry) to the same parts`, () => {
      assert.deepEqual(parseSourceUrl(text), loc);
      assert.equal(sourceUrl(loc), url);
      assert.deepEqual(parseSourceUrl(url), loc);
    });
  }
  const refused: [string, RegExp][] = [
    ['mysql://app:secret@db/shop', /SHARDQL_IMPORT_PASSWORD/],
    ['postgres://app@db/shop', /expected a mysql:\/\/ URL/],
    ['mysql://db/shop', /expected a user/],
    ['mysql://app@db/', /expected a database name/],
    ['mysql://app@db/shop?ssl=true', /expected only tls=1\|0 or tls-ca=\/path\/ca.pem after "\?" in the URL, got "ssl"/],
    ['mysql://app@db/shop?tls=yes', /expected tls=1 or tls=0/],
    ['mysql://app@db/shop?tls=0&tls-ca=/ca.pem', /with tls=0/],
    ['mysql://app@db/shop?tls-ca=', /expected tls-ca=\/path\/ca.pem/],
  ];
  for (const [text, message] of refused) test(`refused: ${text}`, () => assert.throws(() => parseSourceUrl(text), message));
});
