/**
 * The injection corpus: strings that would change a query built by string concatenation — SQL
 * (quotes, comments, stacked statements, UNION, boolean and time-based blind), MySQL specifics
 * (backslash escapes, backticks, versioned comments, hex and CHAR()), JSON paths, NoSQL operators,
 * control characters and odd Unicode. Generated: a base list, then variants of each (wrapped,
 * upper-cased, prefixed with data, double-quoted, backslash-escaped, URL-ish), deduplicated.
 */
const BASE = [
  "'",
  "''",
  '"',
  '\\',
  "\\'",
  "' OR '1'='1",
  "' OR 1=1 -- ",
  "' OR 1=1#",
  "' OR 1=1/*",
  "admin'--",
  "') OR ('1'='1",
  "')) OR (('1'='1",
  "1' AND '1'='2",
  '1 OR 1=1',
  '1) OR (1=1',
  "'; DROP TABLE pins; --",
  "'; DROP DATABASE db00000; --",
  "'; DELETE FROM users; --",
  "'; UPDATE users SET data = '{}'; --",
  "'; INSERT INTO user_likes_pins VALUES (1, 2, 3, 4); --",
  "'; TRUNCATE counts; --",
  "' UNION SELECT NULL --",
  "' UNION SELECT NULL, NULL, NULL --",
  "' UNION ALL SELECT local_id, data, created_at, updated_at FROM db00001.users --",
  "' UNION SELECT user, password FROM mysql.user --",
  "' UNION SELECT schema_name FROM information_schema.schemata --",
  "' AND SLEEP(5) --",
  "' OR SLEEP(5)='",
  "1 AND SLEEP(5)",
  "' AND BENCHMARK(10000000, MD5('x')) --",
  "' AND (SELECT 1 FROM (SELECT SLEEP(5))x) --",
  "' AND extractvalue(1, concat(0x7e, version())) --",
  "' AND updatexml(1, concat(0x7e, database()), 1) --",
  "' OR EXISTS(SELECT * FROM users) --",
  "' OR (SELECT COUNT(*) FROM pins) > 0 --",
  '0x61646d696e',
  "CHAR(97,100,109,105,110)",
  "concat('a','b')",
  '/*!50000 UNION */ SELECT 1',
  '/**/OR/**/1=1',
  '`users`',
  '`; DROP TABLE `pins`; --',
  'db00000.users',
  'msdb00000.lookups',
  '%27%20OR%201%3D1',
  '%00',
  '\u0000',
  "\u0000' OR 1=1 --",
  '\r\n',
  '\t',
  '\u001b[31mred',
  '\u2028\u2029',
  "＇ OR ＇1＇=＇1",
  "ʼ OR 1=1 --",
  '\u02bc OR 1=1',
  "\uff07; DROP TABLE pins; --",
  'e\u0301',
  '🙂',
  '𝕏',
  '\ud800',
  'a'.repeat(101),
  'a'.repeat(2049),
  "$.active",
  '{"$gt": ""}',
  '{"active": false}',
  '[1,2,3]',
  'null',
  'undefined',
  'NaN',
  '-1',
  '0',
  '9223372036854775808',
  '1e309',
  '<script>alert(1)</script>',
  'javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'file:///etc/passwd',
  'http://127.0.0.1:3306/',
  "https://example.com/?q=' OR 1=1 --",
  'https://example.com/a b',
  'https://user:pass@example.com/',
  '../../../../etc/passwd',
  '${7*7}',
  '{{7*7}}',
  '%s%s%s%s',
  'OR 1=1',
  'SELECT * FROM users',
  'admin',
  'root',
  'x',
  '',
  ' ',
];

const VARIANTS: ((p: string) => string)[] = [
  (p) => p,
  (p) => p.toUpperCase(),
  (p) => `x${p}`,
  (p) => `${p} x`,
  (p) => p.replace(/'/g, '"'),
  (p) => p.replace(/'/g, "\\'"),
  (p) => p.replace(/ /g, '/**/'),
  (p) => p.replace(/ /g, '\t'),
  (p) => `https://example.com/${encodeURIComponent(p.replace(/[\ud800-\udfff]/g, '\ufffd'))}`,
  (p) => `${p}${p}`,
];

/** At least `min` distinct payloads, the base list first. */
export function injectionPayloads(min = 500): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const variant of VARIANTS) {
    for (const base of BASE) {
      const p = variant(base);
      if (!seen.has(p)) {
        seen.add(p);
        out.push(p);
      }
    }
    if (out.length >= min) break;
  }
  return out;
}
