/**
 * `shardql import` end to end, on the local stack with real worker processes: a generated unsharded
 * database (in a MariaDB database of the stack, the documented default schema) is imported by two
 * `shardql worker` processes while the import CLI and the workers are SIGKILLed three times at
 * random points; then the whole sharded state, translated back to old IDs, must equal what the
 * source says (objects, both sides of every relation, counts, lookups: nothing missing, nothing
 * twice), reads through a real gateway must equal SQL JOINs on the source, reconcile must find
 * nothing, a second pass must write nothing, `--since last` must copy only what changed, and
 * `--verify` must find 0 differences, then exactly the ones injected.
 *
 * Size (chosen for the 2-core box; the file runs in about 2 minutes): 1,500 users, ~3,000 boards,
 * ~9,000 pins of which ~25% repins, ~20,000 likes, ~9,000 follows, ~3,000 board follows, ~4,000
 * comments: ~50,000 source rows in chunks of 1,000 (about 55 jobs).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import mysql from 'mysql2/promise';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { eventually, runCli, TestWorkers, type WorkerProcess } from '../helpers/workers.ts';
import { cliArgv } from '../helpers/cli.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { MAPPING_TABLES, MAPPINGS, mappingSpec } from '../../src/core/mappings.ts';
import { OBJECT_TABLES, typeName, type ObjectType, typeNumberOf, objectTableOf } from '../../src/core/objectTypes.ts';
import { encodeId, shardOf } from '../../src/core/ids.ts';
import { modShardDatabase, shardDatabase } from '../../src/core/topology.ts';
import { allShards, reconcile } from '../../src/services/repair.ts';
import { ShardScan } from '../../src/storage/shardScan.ts';
import { rngFor } from '../../src/bulk/random.ts';

const PREFIX = 'shardql-test-import';
const TOPOLOGY_KEY = '/shardql-test/import/topology';
const SOURCE_DB = 'import_src';
const SOURCE_USER = 'import_reader';
const SOURCE_PASSWORD = 'import-reader-test-password';
const LABEL = 'import_src';
const SEED = Number(process.env.SHARDQL_IMPORT_TEST_SEED ?? Date.now() % 100_000);
const root = resolve(import.meta.dirname, '../..');

let env: TestEnv;
let src: mysql.Connection;
let url: string;
const clis: ChildProcess[] = [];


function workerEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '',
    SHARDQL_TOPOLOGY_KEY: TOPOLOGY_KEY,
    SHARDQL_QUEUE_PREFIX: PREFIX,
    SHARDQL_WORKER_QUEUES: 'import',
    SHARDQL_WORKER_CONCURRENCY: 'import=2',
    SHARDQL_WORKER_LOCK_MS: '1000',
    SHARDQL_WORKER_STALLED_CHECK_MS: '300',
    SHARDQL_IMPORT_PASSWORD: SOURCE_PASSWORD,
    ...extra,
  };
}

const workers = new TestWorkers(workerEnv);
const worker = (): Promise<WorkerProcess> => workers.start();

/** `shardql import …` as a child process, not awaited (to be killed). */
function startCli(args: readonly string[]): { child: ChildProcess; done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, cliArgv(...args), { cwd: root, env: { ...process.env, ...workerEnv() }, stdio: ['ignore', 'pipe', 'pipe'] });
  clis.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((res) => child.once('exit', (code, signal) => res({ code, signal, stdout, stderr })));
  return { child, done };
}

const importArgs = (...more: string[]): string[] => ['import', '--from', url, '--chunk-rows', '1000', '--json', ...more];

async function importToEnd(...more: string[]): Promise<{ run: number; read: number; written: number; rejected: number; deleted: number; ms: number; notes: string[] }> {
  const r = await runCli(workerEnv(), importArgs(...more));
  assert.equal(r.code, 0, `import exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { run: number; read: number; written: number; rejected: number; deleted: number; ms: number; notes: string[] };
}

// The source: the documented default schema (the benchmark's flat database, plus comments and emails).

const SOURCE_DDL = [
  `CREATE TABLE users (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, username VARCHAR(64) NOT NULL, email VARCHAR(255) NULL, data JSON NOT NULL,
     created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, UNIQUE KEY by_username (username)) ENGINE=InnoDB`,
  `CREATE TABLE boards (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, owner_id BIGINT UNSIGNED NOT NULL, data JSON NOT NULL, created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL, KEY by_owner (owner_id, created_at, id), FOREIGN KEY (owner_id) REFERENCES users (id)) ENGINE=InnoDB`,
  `CREATE TABLE pins (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, board_id BIGINT UNSIGNED NOT NULL, pinner_id BIGINT UNSIGNED NOT NULL,
     via_pin_id BIGINT UNSIGNED NULL, data JSON NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
     KEY by_board (board_id, created_at, id), KEY by_pinner (pinner_id, created_at, id), KEY by_via (via_pin_id, created_at, id),
     FOREIGN KEY (board_id) REFERENCES boards (id), FOREIGN KEY (pinner_id) REFERENCES users (id), FOREIGN KEY (via_pin_id) REFERENCES pins (id)) ENGINE=InnoDB`,
  `CREATE TABLE likes (user_id BIGINT UNSIGNED NOT NULL, pin_id BIGINT UNSIGNED NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY (user_id, pin_id),
     KEY by_pin (pin_id, created_at, user_id), FOREIGN KEY (user_id) REFERENCES users (id), FOREIGN KEY (pin_id) REFERENCES pins (id)) ENGINE=InnoDB`,
  `CREATE TABLE follows (follower_id BIGINT UNSIGNED NOT NULL, followee_id BIGINT UNSIGNED NOT NULL, created_at BIGINT NOT NULL,
     PRIMARY KEY (follower_id, followee_id), KEY by_followee (followee_id, created_at, follower_id),
     FOREIGN KEY (follower_id) REFERENCES users (id), FOREIGN KEY (followee_id) REFERENCES users (id)) ENGINE=InnoDB`,
  `CREATE TABLE board_follows (user_id BIGINT UNSIGNED NOT NULL, board_id BIGINT UNSIGNED NOT NULL, created_at BIGINT NOT NULL,
     PRIMARY KEY (user_id, board_id), KEY by_board (board_id, created_at, user_id),
     FOREIGN KEY (user_id) REFERENCES users (id), FOREIGN KEY (board_id) REFERENCES boards (id)) ENGINE=InnoDB`,
  `CREATE TABLE comments (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, pin_id BIGINT UNSIGNED NOT NULL, author_id BIGINT UNSIGNED NOT NULL,
     data JSON NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, KEY by_pin (pin_id, created_at, id),
     FOREIGN KEY (pin_id) REFERENCES pins (id), FOREIGN KEY (author_id) REFERENCES users (id)) ENGINE=InnoDB`,
];

/** Monotonic creation times, unique per table, so every list's order is the same in both systems. */
const T0 = Date.UTC(2024, 0, 1);

interface Generated {
  users: number[];
  boards: { id: number; owner: number }[];
  pins: { id: number; board: number; pinner: number; via: number | null }[];
  nextIds: { user: number; board: number; pin: number; comment: number };
  clock: { user: number; board: number; pin: number; like: number; follow: number; bf: number; comment: number };
}

async function insertRows(table: string, columns: string[], rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += 2000) {
    const part = rows.slice(i, i + 2000);
    await src.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${part.map((r) => `(${r.map((v) => mysql.escape(v as string | number | null)).join(',')})`).join(',')}`);
  }
}

async function generate(random: () => number, g: Generated, counts: { users: number; boardsPer: number; pinsPer: number; likes: number; follows: number; boardFollows: number; comments: number }, now?: number): Promise<number> {
  const time = (k: keyof Generated['clock']): number => (now === undefined ? T0 + g.clock[k]++ * 1000 : now + g.clock[k]++);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  let rows = 0;
  const users: unknown[][] = [];
  const newUsers: number[] = [];
  for (let i = 0; i < counts.users; i++) {
    const id = g.nextIds.user;
    g.nextIds.user += 3;
    const t = time('user');
    const name = `User_${id}`;
    users.push([id, name.toLowerCase(), random() < 0.5 ? `u${id}@example.com` : null, JSON.stringify({ username: name, displayName: `Person ${id}`, ...(random() < 0.3 ? { about: `about ${id} "quoted" ü` } : {}) }), t, t]);
    newUsers.push(id);
  }
  await insertRows('users', ['id', 'username', 'email', 'data', 'created_at', 'updated_at'], users);
  g.users.push(...newUsers);
  rows += users.length;

  const boards: unknown[][] = [];
  const newBoards: { id: number; owner: number }[] = [];
  for (const owner of newUsers.length > 0 ? newUsers : g.users) {
    const k = Math.floor(random() * (counts.boardsPer * 2 + 1));
    for (let j = 0; j < k; j++) {
      const id = g.nextIds.board++;
      const t = time('board');
      boards.push([id, owner, JSON.stringify({ name: `Board ${id}`, ...(random() < 0.4 ? { description: `desc ${id}` } : {}) }), t, t]);
      newBoards.push({ id, owner });
    }
    if (newUsers.length === 0) break;
  }
  await insertRows('boards', ['id', 'owner_id', 'data', 'created_at', 'updated_at'], boards);
  g.boards.push(...newBoards);
  rows += boards.length;

  const pins: unknown[][] = [];
  const pinTarget = counts.pinsPer * newBoards.length;
  for (let i = 0; i < pinTarget; i++) {
    const board = pick(g.boards);
    const id = g.nextIds.pin++;
    const t = time('pin');
    const via = g.pins.length > 0 && random() < 0.25 ? pick(g.pins).id : null;
    pins.push([id, board.id, board.owner, via, JSON.stringify({ title: `Pin ${id}`, link: `https://example.com/${id}`, imageUrl: `https://img.example.com/${id}.jpg`, ...(random() < 0.3 ? { description: `d${id}` } : {}) }), t, t]);
    g.pins.push({ id, board: board.id, pinner: board.owner, via });
    // Repins are rows of the same table: insert each batch before pins that point at it.
    if (pins.length === 500) (await insertRows('pins', ['id', 'board_id', 'pinner_id', 'via_pin_id', 'data', 'created_at', 'updated_at'], pins.splice(0))), (rows += 500);
  }
  rows += pins.length;
  await insertRows('pins', ['id', 'board_id', 'pinner_id', 'via_pin_id', 'data', 'created_at', 'updated_at'], pins);

  const pairs = async (table: string, columns: string[], n: number, a: () => number, b: () => number, clock: keyof Generated['clock'], self = true): Promise<void> => {
    const seen = new Set<string>();
    const [existing] = await src.query<mysql.RowDataPacket[]>(`SELECT ${columns[0]} AS a, ${columns[1]} AS b FROM ${table}`);
    for (const r of existing) seen.add(`${r.a}:${r.b}`);
    const out: unknown[][] = [];
    for (let tries = 0; out.length < n && tries < n * 5; tries++) {
      const x = a();
      const y = b();
      if ((!self && x === y) || seen.has(`${x}:${y}`)) continue;
      seen.add(`${x}:${y}`);
      out.push([x, y, time(clock)]);
    }
    await insertRows(table, [...columns, 'created_at'], out);
    rows += out.length;
  };
  // Power-law-ish: a few pins and users collect most likes and follows.
  const skewed = <T>(xs: readonly T[]) => (): T => xs[Math.floor(xs.length * random() ** 2.5)]!;
  const userIds = g.users;
  await pairs('likes', ['user_id', 'pin_id'], counts.likes, () => pick(userIds), () => skewed(g.pins)().id, 'like');
  await pairs('follows', ['follower_id', 'followee_id'], counts.follows, () => pick(userIds), skewed(userIds), 'follow', false);
  await pairs('board_follows', ['user_id', 'board_id'], counts.boardFollows, () => pick(userIds), () => skewed(g.boards)().id, 'bf');
  const comments: unknown[][] = [];
  for (let i = 0; i < counts.comments; i++) {
    const id = g.nextIds.comment++;
    const t = time('comment');
    comments.push([id, skewed(g.pins)().id, pick(userIds), JSON.stringify({ text: `comment ${id}` }), t, t]);
  }
  await insertRows('comments', ['id', 'pin_id', 'author_id', 'data', 'created_at', 'updated_at'], comments);
  rows += comments.length;
  return rows;
}

// The expected sharded state, in old-ID space, from the source tables (written independently of the importer).

interface State {
  objects: string[];
  edges: string[];
  counts: string[];
  lookups: string[];
}

const ref = (type: ObjectType, old: unknown): string => `${type}:${String(old)}`;

async function expectedState(): Promise<State> {
  const q = async (sql: string): Promise<mysql.RowDataPacket[]> => (await src.query<mysql.RowDataPacket[]>(sql))[0];
  const objects: string[] = [];
  const edges: string[] = [];
  const lookups: string[] = [];
  const obj = (type: ObjectType, id: unknown, data: Record<string, unknown>, c: unknown, u: unknown): void =>
    void objects.push(`${ref(type, id)} ${JSON.stringify(Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : 1))))} ${c} ${u}`);
  const edge = (table: string, from: string, to: string, seq: unknown): void =>
    void edges.push(`${table} ${from} ${to} ${seq} ${'ordered' in mappingSpec(table as keyof typeof MAPPINGS) ? -Number(seq) * 1024 : 'null'}`);
  for (const u of await q('SELECT * FROM users')) {
    const d = JSON.parse(String(u.data)) as Record<string, unknown>;
    obj('user', u.id, { ...d, ...(u.email ? { email: u.email } : {}) }, u.created_at, u.updated_at);
    lookups.push(`username ${String(d.username).toLowerCase()} ${ref('user', u.id)}`, `import:user ${LABEL}:${u.id} ${ref('user', u.id)}`);
    if (u.email) lookups.push(`email ${String(u.email).toLowerCase()} ${ref('user', u.id)}`);
  }
  for (const b of await q('SELECT * FROM boards')) {
    obj('board', b.id, { ...JSON.parse(String(b.data)), owner_id: ref('user', b.owner_id) }, b.created_at, b.updated_at);
    edge('user_has_boards', ref('user', b.owner_id), ref('board', b.id), b.created_at);
    lookups.push(`import:board ${LABEL}:${b.id} ${ref('board', b.id)}`);
  }
  for (const p of await q('SELECT * FROM pins')) {
    const refs = { board_id: ref('board', p.board_id), pinner_id: ref('user', p.pinner_id), ...(p.via_pin_id ? { via_pin_id: ref('pin', p.via_pin_id) } : {}) };
    obj('pin', p.id, { ...JSON.parse(String(p.data)), ...refs }, p.created_at, p.updated_at);
    edge('board_has_pins', ref('board', p.board_id), ref('pin', p.id), p.created_at);
    edge('user_has_pins', ref('user', p.pinner_id), ref('pin', p.id), p.created_at);
    if (p.via_pin_id) edge('pin_repinned_as_pins', ref('pin', p.via_pin_id), ref('pin', p.id), p.created_at);
    lookups.push(`import:pin ${LABEL}:${p.id} ${ref('pin', p.id)}`);
  }
  for (const c of await q('SELECT * FROM comments')) {
    obj('comment', c.id, { ...JSON.parse(String(c.data)), pin_id: ref('pin', c.pin_id), author_id: ref('user', c.author_id) }, c.created_at, c.updated_at);
    edge('pin_has_comments', ref('pin', c.pin_id), ref('comment', c.id), c.created_at);
    // On the author's shard: what deleting the account finds the comment by.
    edge('user_wrote_comments', ref('user', c.author_id), ref('comment', c.id), c.created_at);
    lookups.push(`import:comment ${LABEL}:${c.id} ${ref('comment', c.id)}`);
  }
  for (const l of await q('SELECT * FROM likes')) {
    edge('user_likes_pins', ref('user', l.user_id), ref('pin', l.pin_id), l.created_at);
    edge('pin_liked_by_users', ref('pin', l.pin_id), ref('user', l.user_id), l.created_at);
  }
  for (const f of await q('SELECT * FROM follows')) {
    edge('user_follows_users', ref('user', f.follower_id), ref('user', f.followee_id), f.created_at);
    edge('user_followed_by_users', ref('user', f.followee_id), ref('user', f.follower_id), f.created_at);
  }
  for (const f of await q('SELECT * FROM board_follows')) {
    edge('user_follows_boards', ref('user', f.user_id), ref('board', f.board_id), f.created_at);
    edge('board_followed_by_users', ref('board', f.board_id), ref('user', f.user_id), f.created_at);
  }
  const perList = new Map<string, number>();
  for (const e of edges) {
    const [table, from] = e.split(' ');
    perList.set(`${table} ${from}`, (perList.get(`${table} ${from}`) ?? 0) + 1);
  }
  return { objects: objects.sort(), edges: edges.sort(), counts: [...perList].map(([k, n]) => `${k} ${n}`).sort(), lookups: lookups.sort() };
}

/** Every row the import wrote into the shards and mod shards, translated to old IDs through the shards' own ID map. */
async function shardState(): Promise<State & { unmapped: number; maps: number; oldOf: Map<string, string>; newOf: Map<string, bigint>; inactive: string[] }> {
  const oldOf = new Map<string, string>();
  const newOf = new Map<string, bigint>();
  const shards = allShards(env.topology);
  const query = (shard: number, sql: string) => env.storage.router.query(env.topology.hostOfShard(shard)!, [shard], sql, []);
  let maps = 0;
  for (const s of shards) {
    for (const r of await query(s, `SELECT type, old_id, new_id FROM ${shardDatabase(s)}.import_ids WHERE source = '${LABEL}'`)) {
      const type = typeName(Number(r.type))!;
      oldOf.set(String(r.new_id), ref(type, r.old_id));
      newOf.set(ref(type, r.old_id), BigInt(r.new_id as string));
      maps++;
    }
  }
  const tr = (id: unknown): string => oldOf.get(String(id)) ?? `unmapped:${String(id)}`;
  const objects: string[] = [];
  const edges: string[] = [];
  const counts: string[] = [];
  const inactive: string[] = [];
  let unmapped = 0;
  for (const s of shards) {
    for (const type of Object.keys(OBJECT_TABLES) as ObjectType[]) {
      for (const r of await query(s, `SELECT local_id, data, created_at, updated_at FROM ${shardDatabase(s)}.${objectTableOf(type)}`)) {
        const id = encodeId({ shard: s, type: typeNumberOf(type), local: BigInt(r.local_id as string) });
        const { active, ...data } = JSON.parse(String(r.data)) as Record<string, unknown>;
        if (active !== true) {
          // Deleted in the shards as the source deleted it (`--deletes`): compared apart.
          assert.equal(active, false, `${type} ${id}: active is true or false`);
          inactive.push(tr(id));
          continue;
        }
        for (const k of ['owner_id', 'board_id', 'pinner_id', 'via_pin_id', 'pin_id', 'author_id']) if (typeof data[k] === 'string') data[k] = tr(data[k]);
        if (!oldOf.has(String(id))) unmapped++;
        objects.push(`${tr(id)} ${JSON.stringify(Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : 1))))} ${r.created_at} ${r.updated_at}`);
      }
    }
    for (const t of MAPPING_TABLES) {
      for (const r of await query(s, `SELECT from_id, to_id, sequence, position FROM ${shardDatabase(s)}.${t}`)) {
        assert.equal(shardOf(BigInt(r.from_id as string)), s, `${t} edge on its owner's shard`);
        edges.push(`${t} ${tr(r.from_id)} ${tr(r.to_id)} ${r.sequence} ${r.position ?? 'null'}`);
      }
    }
    // An emptied list may keep a count row of 0 (a cascade's purge); a list with no rows counts 0 either way.
    for (const r of await query(s, `SELECT id, kind, n FROM ${shardDatabase(s)}.counts WHERE n <> 0`)) counts.push(`${r.kind} ${tr(r.id)} ${r.n}`);
  }
  const lookups: string[] = [];
  for (const [host, mods] of env.topology.modShardsByHost()) {
    for (const m of mods) {
      for (const r of await env.storage.router.query(host, [], `SELECT namespace, lookup_key, id FROM ${modShardDatabase(m)}.lookups`, [])) lookups.push(`${r.namespace} ${r.lookup_key} ${tr(r.id)}`);
    }
  }
  return { objects: objects.sort(), edges: edges.sort(), counts: counts.sort(), lookups: lookups.sort(), unmapped, maps, oldOf, newOf, inactive: inactive.sort() };
}

function assertSameRows(what: string, got: readonly string[], want: readonly string[]): void {
  const w = new Set(want);
  const g = new Set(got);
  const missing = want.filter((x) => !g.has(x));
  const extra = got.filter((x) => !w.has(x));
  assert.equal(got.length, want.length, `${what}: ${got.length} rows in the shards, ${want.length} expected; missing ${missing.slice(0, 3).join(' | ')}; extra ${extra.slice(0, 3).join(' | ')}`);
  assert.deepEqual([missing.slice(0, 5), extra.slice(0, 5)], [[], []], `${what}: rows differ`);
  assert.equal(g.size, got.length, `${what}: duplicates`);
}

/**
 * The shards hold exactly what the source says; `deleted`: the objects (refs) the source deleted
 * after they were imported, which the shards hold as deleted (inactive, their ID map and lookups
 * kept, as the product keeps a deleted user's name claimed).
 */
async function assertImportedExactly(deleted: ReadonlySet<string> = new Set()): Promise<Awaited<ReturnType<typeof shardState>>> {
  const [want, got] = await Promise.all([expectedState(), shardState()]);
  assert.equal(got.unmapped, 0, 'every object in the shards is in the ID map (no object made twice)');
  assertSameRows('objects', got.objects, want.objects);
  assertSameRows('deleted objects', got.inactive, [...deleted].sort());
  assert.equal(got.maps, want.objects.length + deleted.size, 'one ID-map row per object');
  assertSameRows('edges', got.edges, want.edges);
  assertSameRows('counts', got.counts, want.counts);
  assertSameRows(
    'mod-shard lookups',
    got.lookups.filter((l) => !deleted.has(l.split(' ').at(-1)!)),
    want.lookups,
  );
  return got;
}

/** CHECKSUM TABLE of every shard and mod-shard table the import writes (the ledger excepted). */
async function checksums(): Promise<string[]> {
  const out: string[] = [];
  for (const [host, shards] of env.topology.shardsByHost()) {
    const tables = shards.flatMap((s) => [...Object.values(OBJECT_TABLES), ...MAPPING_TABLES, 'counts', 'import_ids'].map((t) => `${shardDatabase(s)}.${t}`));
    for (const r of await env.storage.router.query(host, [], `CHECKSUM TABLE ${tables.join(', ')}`, [])) out.push(`${r.Table} ${r.Checksum}`);
  }
  for (const [host, mods] of env.topology.modShardsByHost()) {
    for (const r of await env.storage.router.query(host, [], `CHECKSUM TABLE ${mods.map((m) => `${modShardDatabase(m)}.lookups`).join(', ')}`, [])) out.push(`${r.Table} ${r.Checksum}`);
  }
  return out.sort();
}

async function ledgerChunks(): Promise<number> {
  const run = await env.storage.imports.latestRun(LABEL);
  return run ? (await env.storage.imports.chunks(LABEL, run.run)).size : 0;
}

before(async () => {
  env = await freshEnv({ shards: 16 });
  await publishTopology(env.etcd, TOPOLOGY_KEY, env.doc);
  const h = env.stack.mysql.hosts[0]!;
  // The monolith: its own database, written by its own (admin) account; the import reads it as a
  // read-only source user of its own, whose password reaches the CLI and workers by configuration.
  const owner = env.stack.mysql.admin;
  assert.ok(owner, 'the stack has an admin account');
  const admin = await mysql.createConnection({ host: h.primary.host, port: h.primary.port, user: owner.user, password: owner.password });
  await admin.query(`DROP DATABASE IF EXISTS ${SOURCE_DB}`);
  await admin.query(`CREATE DATABASE ${SOURCE_DB}`);
  await admin.query(`CREATE USER IF NOT EXISTS '${SOURCE_USER}'@'%' IDENTIFIED BY '${SOURCE_PASSWORD}'`);
  await admin.query(`GRANT SELECT ON ${SOURCE_DB}.* TO '${SOURCE_USER}'@'%'`);
  await admin.end();
  src = await mysql.createConnection({ host: h.primary.host, port: h.primary.port, user: owner.user, password: owner.password, database: SOURCE_DB, supportBigNumbers: true, bigNumberStrings: true, jsonStrings: true });
  for (const ddl of SOURCE_DDL) await src.query(ddl);
  url = `mysql://${SOURCE_USER}@${h.primary.host}:${h.primary.port}/${SOURCE_DB}`;
  // Leftover jobs of an earlier run of this file must not be mistaken for this one's.
  const { Redis } = await import('ioredis');
  const redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port });
  const keys = await redis.keys(`{${PREFIX}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

let gw: TestGateway | undefined;

after(async () => {
  await gw?.stop();
  for (const c of clis) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await workers.stopAll();
  await src?.end();
  await env?.close();
});

describe(`Import: an unsharded database into the shards, by worker processes (seed ${SEED})`, () => {
  const random = rngFor(SEED);
  const g: Generated = { users: [], boards: [], pins: [], nextIds: { user: 10, board: 1, pin: 1, comment: 1 }, clock: { user: 0, board: 0, pin: 0, like: 0, follow: 0, bf: 0, comment: 0 } };
  let sourceRows = 0;
  let imported: Awaited<ReturnType<typeof shardState>>;

  test('SIGKILLed three times at random points (CLI, a worker, both), re-run: exactly the source, nothing twice', async () => {
    sourceRows = await generate(random, g, { users: 1500, boardsPer: 2, pinsPer: 3, likes: 20_000, follows: 9000, boardFollows: 3000, comments: 4000 });
    assert.ok(sourceRows > 45_000, `generated ${sourceRows} rows`);
    const [w1, w2] = await Promise.all([worker(), worker()]);

    // Kill 1: the CLI, a few chunks in. The workers finish the phase it enqueued; nothing drives the next.
    const at = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo));
    const killWhen = async (chunks: number, victims: () => void): Promise<void> => {
      await eventually(`${chunks} chunks done`, async () => ((await ledgerChunks()) >= chunks ? true : undefined), 60_000);
      await new Promise((r) => setTimeout(r, at(0, 300)));
      const run = await env.storage.imports.latestRun(LABEL);
      assert.equal(run?.finishedAt, null, 'killed while the pass was still running');
      victims();
    };
    const c1 = startCli(importArgs());
    await killWhen(at(2, 6), () => c1.child.kill('SIGKILL'));
    assert.equal((await c1.done).signal, 'SIGKILL');

    // Kill 2: a worker in the middle of its jobs; its chunks run again on the other once their lock expires.
    const c2 = startCli(importArgs());
    await killWhen(at(12, 22), () => w1.child.kill('SIGKILL'));
    await w1.exited;
    const w3 = await worker();

    // Kill 3: the CLI and the other worker at once.
    await killWhen(at(28, 40), () => {
      c2.child.kill('SIGKILL');
      w2.child.kill('SIGKILL');
    });
    await c2.done;
    await w2.exited;
    const w4 = await worker();
    assert.ok(w3.pid > 0 && w4.pid > 0);

    const result = await importToEnd();
    assert.equal(result.rejected, 0, `nothing rejected: ${result.notes.join('; ')}`);
    imported = await assertImportedExactly();
    console.log(`# seed ${SEED}: ${sourceRows} source rows; final run read ${result.read}, wrote ${result.written} in ${result.ms} ms`);
  });

  test('reconcile finds nothing to fix on any shard', async () => {
    const report = await reconcile(env.storage, allShards(env.topology));
    assert.deepEqual(report.fixes.slice(0, 5), []);
    assert.equal(report.fixes.length, 0);
  });

  test('a second pass writes 0 rows: every shard table checksums the same (its progress on stderr with --json --progress)', async () => {
    const before = await checksums();
    // --progress: the progress table on stderr, stdout still the JSON result alone.
    const out = await runCli(workerEnv(), importArgs('--progress'));
    assert.equal(out.code, 0, `import exited ${out.code}: ${out.stderr}`);
    const lines = out.stdout.trim().split('\n');
    assert.equal(lines.length, 1, `stdout: ${out.stdout.slice(0, 500)}`);
    const r = JSON.parse(lines[0]!) as { read: number; written: number };
    assert.match(out.stderr, /^table +chunks +rows read\/planned +written +rejected +rows\/s +ETA$/m);
    assert.match(out.stderr, /^likes +\d+\/\d+ /m);
    const [[repins]] = await src.query<mysql.RowDataPacket[]>('SELECT COUNT(*) AS n FROM pins WHERE via_pin_id IS NOT NULL');
    assert.equal(r.read, sourceRows + Number(repins!.n), 'the full pass read every row again (repins twice: as pins, then as repins)');
    assert.equal(r.written, 0);
    assert.deepEqual(await checksums(), before);
  });

  test('through a real gateway: every profile, board page, like list and count equals SQL JOINs on the source', async () => {
    gw = await startTestGateway(env, 'import');
    const gateway = gw;
    const old = (id: string): string => imported.oldOf.get(id) ?? `unmapped:${id}`;
    const q = async (sql: string): Promise<mysql.RowDataPacket[]> => (await src.query<mysql.RowDataPacket[]>(sql))[0];
    const groups = <T>(rows: readonly mysql.RowDataPacket[], key: string, value: (r: mysql.RowDataPacket) => T): Map<string, T[]> => {
      const out = new Map<string, T[]>();
      for (const r of rows) out.set(String(r[key]), [...(out.get(String(r[key])) ?? []), value(r)]);
      return out;
    };

    // Profiles and like lists.
    const profiles = await q(`SELECT u.id, u.username, JSON_VALUE(u.data, '$.username') AS typed, JSON_VALUE(u.data, '$.displayName') AS display,
        (SELECT COUNT(*) FROM boards b WHERE b.owner_id = u.id) AS boards, (SELECT COUNT(*) FROM pins p WHERE p.pinner_id = u.id) AS pins,
        (SELECT COUNT(*) FROM likes l WHERE l.user_id = u.id) AS likes, (SELECT COUNT(*) FROM follows f WHERE f.followee_id = u.id) AS followers,
        (SELECT COUNT(*) FROM follows f WHERE f.follower_id = u.id) AS following, (SELECT COUNT(*) FROM board_follows bf WHERE bf.user_id = u.id) AS fboards
      FROM users u ORDER BY u.id`);
    const boardsOf = groups(await q('SELECT owner_id, id FROM boards ORDER BY created_at DESC, id DESC'), 'owner_id', (r) => ref('board', r.id));
    const likedOf = groups(await q('SELECT l.user_id, p.id FROM likes l JOIN pins p ON p.id = l.pin_id ORDER BY l.created_at DESC'), 'user_id', (r) => ref('pin', r.id));
    for (let i = 0; i < profiles.length; i += 25) {
      const batch = profiles.slice(i, i + 25);
      const query = `{ ${batch.map((u, j) => `u${j}: user(username: ${JSON.stringify(String(u.username))}) { id username displayName boardCount pinCount likeCount followerCount followingCount followedBoardCount boards(first: 100) { edges { node { id } } } likedPins(first: 100) { edges { node { id } } } }`).join(' ')} }`;
      const r = await gateway.gql(query);
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      batch.forEach((u, j) => {
        const got = r.body.data[`u${j}`];
        assert.deepEqual(
          [old(got.id), got.username, got.displayName, got.boardCount, got.pinCount, got.likeCount, got.followerCount, got.followingCount, got.followedBoardCount],
          [ref('user', u.id), u.typed, u.display, Number(u.boards), Number(u.pins), Number(u.likes), Number(u.followers), Number(u.following), Number(u.fboards)],
          `profile of user ${u.id}`,
        );
        assert.deepEqual(got.boards.edges.map((e: { node: { id: string } }) => old(e.node.id)), (boardsOf.get(String(u.id)) ?? []).slice(0, 100), `boards of user ${u.id}`);
        assert.deepEqual(got.likedPins.edges.map((e: { node: { id: string } }) => old(e.node.id)), (likedOf.get(String(u.id)) ?? []).slice(0, 100), `likes of user ${u.id}`);
      });
    }

    // Board pages: the board's counts, its pins newest first, and every pin's data and counts.
    const boards = await q(`SELECT b.id, JSON_VALUE(b.data, '$.name') AS name, (SELECT COUNT(*) FROM pins p WHERE p.board_id = b.id) AS pins,
        (SELECT COUNT(*) FROM board_follows bf WHERE bf.board_id = b.id) AS followers FROM boards b ORDER BY b.id`);
    const pinsOf = groups(
      await q(`SELECT p.board_id, p.id, JSON_VALUE(p.data, '$.title') AS title, p.via_pin_id, (SELECT COUNT(*) FROM likes l WHERE l.pin_id = p.id) AS likes,
          (SELECT COUNT(*) FROM pins r WHERE r.via_pin_id = p.id) AS repins, (SELECT COUNT(*) FROM comments c WHERE c.pin_id = p.id) AS comments
        FROM pins p ORDER BY p.created_at DESC, p.id DESC`),
      'board_id',
      (r) => [ref('pin', r.id), r.title, r.via_pin_id ? ref('pin', r.via_pin_id) : null, Number(r.likes), Number(r.repins), Number(r.comments)],
    );
    for (let i = 0; i < boards.length; i += 25) {
      const batch = boards.slice(i, i + 25);
      const query = `{ ${batch.map((b, j) => `b${j}: board(id: "${imported.newOf.get(ref('board', b.id))}") { name pinCount followerCount pins(first: 100) { edges { node { id title via { id } likeCount repinCount commentCount } } } }`).join(' ')} }`;
      const r = await gateway.gql(query);
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      batch.forEach((b, j) => {
        const got = r.body.data[`b${j}`];
        assert.deepEqual([got.name, got.pinCount, got.followerCount], [b.name, Number(b.pins), Number(b.followers)], `board ${b.id}`);
        assert.deepEqual(
          got.pins.edges.map((e: { node: { id: string; title: string; via: { id: string } | null; likeCount: number; repinCount: number; commentCount: number } }) => [
            old(e.node.id),
            e.node.title,
            e.node.via ? old(e.node.via.id) : null,
            e.node.likeCount,
            e.node.repinCount,
            e.node.commentCount,
          ]),
          pinsOf.get(String(b.id)) ?? [],
          `pins of board ${b.id}`,
        );
      });
    }

    // The other side of the like lists: the 100 most-liked pins' likers.
    const top = await q('SELECT pin_id FROM likes GROUP BY pin_id ORDER BY COUNT(*) DESC, pin_id LIMIT 100');
    const likersOf = groups(await q(`SELECT pin_id, user_id FROM likes WHERE pin_id IN (${top.map((t) => t.pin_id).join(',')}) ORDER BY created_at DESC`), 'pin_id', (r) => ref('user', r.user_id));
    for (let i = 0; i < top.length; i += 25) {
      const batch = top.slice(i, i + 25);
      const r = await gateway.gql(`{ ${batch.map((t, j) => `p${j}: pin(id: "${imported.newOf.get(ref('pin', t.pin_id))}") { likers(first: 100) { edges { node { id } } } }`).join(' ')} }`);
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      batch.forEach((t, j) => assert.deepEqual(r.body.data[`p${j}`].likers.edges.map((e: { node: { id: string } }) => old(e.node.id)), (likersOf.get(String(t.pin_id)) ?? []).slice(0, 100), `likers of pin ${t.pin_id}`));
    }

    // An imported object found by its old ID: the mod-shard lookup, through the CLI.
    const found = await runCli(workerEnv(), ['import', '--from', url, '--find', `pin:${g.pins[7]!.id}`]);
    assert.equal(found.code, 0, found.stderr);
    assert.equal(found.stdout.trim(), String(imported.newOf.get(ref('pin', g.pins[7]!.id))));
  });

  test('--since last copies only the rows created or changed after the previous pass; the gateway shows them', async () => {
    // Changes after the first pass: new users, boards, pins (some repins of old pins), likes, follows, comments; edited pins.
    const now = Number(((await src.query<mysql.RowDataPacket[]>('SELECT ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000) AS t'))[0])[0]!.t) + 1000;
    const edited = g.pins.slice(0, 10).map((p) => p.id);
    await src.query(`UPDATE pins SET data = JSON_SET(data, '$.title', CONCAT('Edited ', id)), updated_at = ? WHERE id IN (${edited.join(',')})`, [now]);
    const added = await generate(random, g, { users: 20, boardsPer: 1, pinsPer: 2, likes: 200, follows: 100, boardFollows: 30, comments: 40 }, now);
    const [[repins]] = await src.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM pins WHERE (created_at >= ? OR updated_at >= ?) AND via_pin_id IS NOT NULL`, [now, now]);
    const r = await importToEnd('--since', 'last');
    assert.equal(r.rejected, 0, r.notes.join('; '));
    // Repins are read twice: as pins, then (every pin made) as repins.
    assert.equal(r.read, added + edited.length + Number(repins!.n), 'read exactly the new and changed rows');
    imported = await assertImportedExactly();
    // The gateway read those pins before: it must not serve the old titles.
    const ids = edited.map((id) => imported.newOf.get(ref('pin', id)));
    const res = await gw!.gql(`{ ${ids.map((id, j) => `p${j}: pin(id: "${id}") { title }`).join(' ')} }`);
    assert.deepEqual(
      edited.map((_, j) => res.body.data[`p${j}`].title),
      edited.map((id) => `Edited ${id}`),
    );
    const status = await runCli(workerEnv(), ['import', '--from', url, '--status', '--json']);
    assert.equal(status.code, 0, status.stderr);
    const s = JSON.parse(status.stdout) as { run: number; finished: boolean; since: number; tables: { table: string; chunks: number; chunksDone: number; rowsPerSecond: number | null; etaMs: number }[] };
    assert.equal(s.finished, true);
    assert.ok(s.since > 0);
    for (const t of s.tables) assert.equal(t.chunksDone, t.chunks, `${t.table} done`);
    const rec = await reconcile(env.storage, allShards(env.topology));
    assert.equal(rec.fixes.length, 0, JSON.stringify(rec.fixes.slice(0, 3)));
  });

  test('--deletes: rows deleted in the source are deleted in the shards by the product\'s deletes; --verify finds them first, nothing after', async () => {
    const q = async (sql: string, values: unknown[] = []): Promise<mysql.RowDataPacket[]> => (await src.query<mysql.RowDataPacket[]>(sql, values))[0];
    const ids = (rows: mysql.RowDataPacket[], k = 'id'): string[] => rows.map((r) => String(r[k]));
    const list = (xs: readonly string[]): string => (xs.length > 0 ? xs.join(',') : '0');
    // Kept out of it: the pins the other tests read (edited pins, the pin --verify tampers with) and whose pins others repinned (a foreign key).
    const kept = list(g.pins.slice(0, 10).map((p) => String(p.id)));
    const [u] = await q(`SELECT u.id FROM users u WHERE EXISTS (SELECT 1 FROM pins p WHERE p.pinner_id = u.id)
      AND EXISTS (SELECT 1 FROM comments c JOIN pins p ON p.id = c.pin_id WHERE c.author_id = u.id AND p.pinner_id <> u.id)
      AND NOT EXISTS (SELECT 1 FROM pins p JOIN pins r ON r.via_pin_id = p.id WHERE p.pinner_id = u.id)
      AND NOT EXISTS (SELECT 1 FROM pins p WHERE p.pinner_id = u.id AND p.id IN (${kept})) ORDER BY u.id LIMIT 1`);
    const user = String(u!.id);
    const pinsU = ids(await q('SELECT id FROM pins WHERE pinner_id = ?', [user]));
    const boardsU = ids(await q('SELECT id FROM boards WHERE owner_id = ?', [user]));
    const [b] = await q(`SELECT b.id FROM boards b WHERE b.owner_id <> ? AND EXISTS (SELECT 1 FROM pins p WHERE p.board_id = b.id)
      AND NOT EXISTS (SELECT 1 FROM pins p JOIN pins r ON r.via_pin_id = p.id WHERE p.board_id = b.id)
      AND NOT EXISTS (SELECT 1 FROM pins p WHERE p.board_id = b.id AND p.id IN (${kept})) ORDER BY b.id LIMIT 1`, [user]);
    const board = String(b!.id);
    const pinsB = ids(await q('SELECT id FROM pins WHERE board_id = ?', [board]));
    const [p] = await q(`SELECT p.id FROM pins p WHERE p.pinner_id <> ? AND p.board_id <> ? AND p.id NOT IN (${kept})
      AND EXISTS (SELECT 1 FROM likes l WHERE l.pin_id = p.id) AND NOT EXISTS (SELECT 1 FROM pins r WHERE r.via_pin_id = p.id) ORDER BY p.id LIMIT 1`, [user, board]);
    const pin = String(p!.id);
    const gonePins = list([...pinsU, ...pinsB, pin]);
    // Rows deleted on their own, away from the objects above (else those objects' deletes would take them).
    const likes = await q(`SELECT user_id, pin_id FROM likes WHERE user_id <> ? AND pin_id NOT IN (${gonePins}) ORDER BY pin_id DESC, user_id LIMIT 5`, [user]);
    const follows = await q('SELECT follower_id, followee_id FROM follows WHERE follower_id <> ? AND followee_id <> ? ORDER BY followee_id DESC, follower_id LIMIT 5', [user, user]);
    const bfs = await q(`SELECT user_id, board_id FROM board_follows WHERE user_id <> ? AND board_id NOT IN (${list([...boardsU, board])}) ORDER BY board_id DESC, user_id LIMIT 3`, [user]);
    const comments = ids(await q(`SELECT id FROM comments WHERE author_id <> ? AND pin_id NOT IN (${gonePins}) ORDER BY id DESC LIMIT 3`, [user]));
    // The user's comments on other pins: the account's delete takes them (they are in the user's user_wrote_comments).
    const [uc] = await q(`SELECT COUNT(*) AS n FROM comments WHERE author_id = ? AND pin_id NOT IN (${gonePins})`, [user]);
    assert.deepEqual([likes.length, follows.length, bfs.length, comments.length], [5, 5, 3, 3]);
    assert.ok(Number(uc!.n) > 0);

    const before = await expectedState();
    for (const l of likes) await src.query('DELETE FROM likes WHERE user_id = ? AND pin_id = ?', [l.user_id, l.pin_id]);
    for (const f of follows) await src.query('DELETE FROM follows WHERE follower_id = ? AND followee_id = ?', [f.follower_id, f.followee_id]);
    for (const f of bfs) await src.query('DELETE FROM board_follows WHERE user_id = ? AND board_id = ?', [f.user_id, f.board_id]);
    await src.query(`DELETE FROM comments WHERE id IN (${list(comments)})`);
    // The pin, the board with its pins, the user with everything of theirs, as the source's foreign keys require.
    await src.query(`DELETE FROM likes WHERE user_id = ? OR pin_id IN (${gonePins})`, [user]);
    await src.query(`DELETE FROM comments WHERE author_id = ? OR pin_id IN (${gonePins})`, [user]);
    await src.query('DELETE FROM follows WHERE follower_id = ? OR followee_id = ?', [user, user]);
    await src.query(`DELETE FROM board_follows WHERE user_id = ? OR board_id IN (${list([...boardsU, board])})`, [user]);
    await src.query(`DELETE FROM pins WHERE id IN (${gonePins})`);
    await src.query(`DELETE FROM boards WHERE id IN (${list([...boardsU, board])})`);
    await src.query('DELETE FROM users WHERE id = ?', [user]);
    const after = await expectedState();
    const refOf = (o: string): string => o.split(' ')[0]!;
    const left = new Set(after.objects.map(refOf));
    const deleted = new Set(before.objects.map(refOf).filter((r) => !left.has(r)));
    const objects = [ref('user', user), ...boardsU.map((x) => ref('board', x)), ...pinsU.map((x) => ref('pin', x)), ref('board', board), ...pinsB.map((x) => ref('pin', x)), ref('pin', pin)];
    assert.deepEqual([...deleted].filter((x) => !x.startsWith('comment:')).sort(), [...new Set(objects)].sort(), 'the source lost exactly these objects, and comments');

    // --verify sees the deleted objects before a pass carries them.
    const seen = await runCli(workerEnv(), ['import', '--from', url, '--verify', '--json']);
    assert.equal(seen.code, 1, 'exit 1: the shards hold what the source deleted');
    const found = JSON.parse(seen.stdout) as { list: { table: string; oldId: string; text: string }[] };
    for (const [table, oldId] of [['users', user], ['boards', board], ['pins', pin]] as const) {
      assert.match(found.list.find((d) => d.table === table && d.oldId === oldId)?.text ?? '', /no longer in the source/, `${table} ${oldId} reported`);
    }

    // A crash in the middle of the pass: the only worker SIGKILLs itself inside the account delete's
    // cascade (its first step committed, the rest not); a fresh worker runs the job again once the lock expires.
    await workers.stopAll('SIGTERM');
    const doomed = await workers.start({ SHARDQL_TEST_FAULT: 'deleteViewer@after-step-0', SHARDQL_ALLOW_TEST_FAULTS: '1' });
    const cli = startCli(importArgs('--since', 'last', '--deletes'));
    assert.equal((await doomed.exited).signal, 'SIGKILL', 'the worker died inside the account delete');
    assert.equal((await env.storage.imports.latestRun(LABEL))?.finishedAt, null, 'killed while the pass was still running');
    await worker();
    const out = await cli.done;
    assert.equal(out.code, 0, `import exited ${out.code}: ${out.stderr}`);
    const r = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { rejected: number; deleted: number; repaired: number; notes: string[] };
    assert.equal(r.rejected, 0, r.notes.join('; '));
    // The killed attempt's account delete had committed its first step, so the chunk's next run found the
    // account deleted and skipped it; the pass then completed the cascade the crash cut (unless a gateway's
    // or worker's own repair pass, which waits 5 s, got there first: 0 or 1). Nothing is left pending.
    assert.deepEqual(await env.storage.intents.pending(allShards(env.topology), 0, 10), [], 'no interrupted write left');
    assert.ok(r.repaired === 0 || r.repaired === 1, `repaired ${r.repaired}`);
    // Deleted by the pass itself: the board, the pin (their children go with them by the product's cascades),
    // the 3 comments, 5 likes, 5 follows and 3 board follows; and the user, with their comments on other
    // pins, by the attempt that was killed (its step 0, the purge, ran before the kill), so the comments
    // phase finds those already deleted.
    assert.equal(r.deleted, 2 + 3 + 5 + 5 + 3);
    imported = await assertImportedExactly(deleted);
    const rec = await reconcile(env.storage, allShards(env.topology));
    assert.equal(rec.fixes.length, 0, JSON.stringify(rec.fixes.slice(0, 3)));
    const res = await gw!.gql(`{ pin(id: "${imported.newOf.get(ref('pin', pin))}") { id } user(id: "${imported.newOf.get(ref('user', user))}") { id } board(id: "${imported.newOf.get(ref('board', board))}") { id } }`);
    assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
    assert.deepEqual(res.body.data, { pin: null, user: null, board: null }, 'the gateway no longer serves them');

    // Again: nothing left to delete, nothing to write.
    const again = await importToEnd('--since', 'last', '--deletes');
    assert.deepEqual([again.written, again.deleted], [0, 0]);
  });

  test('--verify: 0 differences; then exactly the differences injected into the shards', async () => {
    const clean = await runCli(workerEnv(), ['import', '--from', url, '--verify', '--json']);
    assert.equal(clean.code, 0, (clean.stdout + clean.stderr).slice(0, 2000));
    const c = JSON.parse(clean.stdout) as { checked: number; differences: number };
    assert.equal(c.differences, 0);
    const [[counts]] = await src.query<mysql.RowDataPacket[]>('SELECT (SELECT COUNT(*) FROM users) + (SELECT COUNT(*) FROM boards) + (SELECT COUNT(*) FROM pins) AS n');
    assert.equal(c.checked, Number(counts!.n));

    // A pin's data edited behind the import's back, and a like lost on the liker's side (with its count).
    const pinOld = g.pins[3]!.id;
    const pin = imported.newOf.get(ref('pin', pinOld))!;
    const shard = shardOf(pin);
    const host = env.topology.hostOfShard(shard)!;
    await env.storage.router.query(host, [shard], `UPDATE ${shardDatabase(shard)}.pins SET data = JSON_SET(data, '$.title', 'tampered') WHERE local_id = ?`, [pin & ((1n << 36n) - 1n)]);
    const [[like]] = await src.query<mysql.RowDataPacket[]>('SELECT user_id, pin_id FROM likes ORDER BY user_id, pin_id LIMIT 1');
    const liker = imported.newOf.get(ref('user', like!.user_id))!;
    const liked = imported.newOf.get(ref('pin', like!.pin_id))!;
    const ls = shardOf(liker);
    const lh = env.topology.hostOfShard(ls)!;
    await env.storage.router.query(lh, [ls], `DELETE FROM ${shardDatabase(ls)}.user_likes_pins WHERE from_id = ? AND to_id = ?`, [liker, liked]);
    await env.storage.router.query(lh, [ls], `UPDATE ${shardDatabase(ls)}.counts SET n = n - 1 WHERE id = ? AND kind = 'user_likes_pins'`, [liker]);

    const dirty = await runCli(workerEnv(), ['import', '--from', url, '--verify', '--json']);
    assert.equal(dirty.code, 1, 'exit 1 on a difference');
    const d = JSON.parse(dirty.stdout) as { differences: number; list: { table: string; oldId: string; text: string }[] };
    assert.deepEqual(
      d.list.map((x) => [x.table, x.oldId]).sort(),
      [
        ['pins', String(pinOld)],
        ['users', String(like!.user_id)],
      ].sort(),
    );
    assert.match(d.list.find((x) => x.table === 'pins')!.text, /object data differs/);
    assert.match(d.list.find((x) => x.table === 'users')!.text, /user_likes_pins count/);
    const text = await runCli(workerEnv(), ['import', '--from', url, '--verify']);
    assert.equal(text.code, 1);
    assert.match(text.stdout, /: 2 differences/);
  });

  test('deleting an imported author\'s account takes their imported comments, wherever they are; every count equals its list', async () => {
    const q = async (sql: string, values: unknown[] = []): Promise<mysql.RowDataPacket[]> => (await src.query<mysql.RowDataPacket[]>(sql, values))[0];
    // Not the liker whose like --verify removed on one side (their account's delete would leave its other side).
    const [tampered] = await q('SELECT user_id FROM likes ORDER BY user_id, pin_id LIMIT 1');
    const [a] = await q(
      `SELECT c.author_id AS id FROM comments c JOIN pins p ON p.id = c.pin_id WHERE p.pinner_id <> c.author_id AND c.author_id <> ?
       GROUP BY c.author_id ORDER BY COUNT(*) DESC, c.author_id LIMIT 1`,
      [tampered!.user_id],
    );
    const author = imported.newOf.get(ref('user', a!.id))!;
    const rows = await q('SELECT c.id, c.pin_id FROM comments c JOIN pins p ON p.id = c.pin_id WHERE c.author_id = ? AND p.pinner_id <> c.author_id ORDER BY c.id', [a!.id]);
    const comments = rows.map((r) => imported.newOf.get(ref('comment', r.id))!);
    const pins = [...new Set(rows.map((r) => imported.newOf.get(ref('pin', r.pin_id))!))];
    assert.ok(comments.length >= 2, `the author has ${comments.length} comments on other users' pins`);
    assert.ok(comments.some((c) => shardOf(c) !== shardOf(author)), 'some of them on other shards than the author\'s');

    const page = `commentCount comments(first: 100) { edges { node { id author { id } } } }`;
    const read = async (): Promise<{ commentCount: number; comments: { edges: { node: { id: string; author: { id: string } | null } }[] } }[]> => {
      const data = (await gw!.ok(`{ ${pins.map((p, j) => `p${j}: pin(id: "${p}") { ${page} }`).join(' ')} }`)) as Record<string, { commentCount: number; comments: { edges: { node: { id: string; author: { id: string } | null } }[] } }>;
      return pins.map((_, j) => data[`p${j}`]!);
    };
    const before = await read();
    const listedBefore = before.flatMap((p) => p.comments.edges.map((e) => e.node.id));
    for (const c of comments) assert.ok(listedBefore.includes(`${c}`), `comment ${c} is listed under its pin`);

    assert.deepEqual(await gw!.ok('mutation { deleteViewer { deleted } }', {}, await gw!.token(author)), { deleteViewer: { deleted: true } });

    const after = await read();
    for (const [j, p] of after.entries()) {
      const ids = p.comments.edges.map((e) => e.node.id);
      for (const c of comments) assert.ok(!ids.includes(`${c}`), `comment ${c} is gone from pin ${pins[j]}`);
      assert.equal(p.commentCount, before[j]!.commentCount - rows.filter((r) => imported.newOf.get(ref('pin', r.pin_id)) === pins[j]).length, `pin ${pins[j]}'s count lost exactly the author's comments`);
      if (p.commentCount <= 100) assert.equal(ids.length, p.commentCount, `pin ${pins[j]}: commentCount equals its list`);
      for (const e of p.comments.edges) assert.notEqual(e.node.author, null, 'no comment of a deleted author is listed');
    }
    const nodes = (await gw!.ok(`{ ${comments.map((c, j) => `c${j}: node(id: "${c}") { id }`).join(' ')} }`)) as Record<string, unknown>;
    assert.deepEqual(Object.values(nodes), comments.map(() => null), 'no comment of the account answers');
    // Counts equal rows on every shard, for every list (the author's comments and their pins' included).
    const scan = new ShardScan(env.storage.router);
    const mismatches: string[] = [];
    for (const s of allShards(env.topology)) {
      for (const t of MAPPING_TABLES) for (const m of await scan.countMismatches(s, t)) mismatches.push(`${t} ${m.id}: ${m.counted} counted, ${m.actual} rows`);
    }
    assert.deepEqual(mismatches, []);
    const left = await env.storage.router.query(env.topology.hostOfShard(shardOf(author))!, [shardOf(author)], `SELECT COUNT(*) AS n FROM ${shardDatabase(shardOf(author))}.user_wrote_comments WHERE from_id = ?`, [author]);
    assert.equal(Number(left[0]!.n), 0, 'the account\'s list of comments is empty');

    // The source, not knowing, gains a comment by the deleted account on one of those pins: the next pass
    // places it on the pin's shard, cannot list it under its author (deleted in the shards), so takes it
    // back out and rejects it, naming its old ID; the pin's list and count stay as they were.
    // An ID the source never used (MAX + 1 may be one the --deletes test deleted, whose mapping stays).
    const m = 900_000_001;
    const pinOld = rows.find((r) => shardOf(imported.newOf.get(ref('pin', r.pin_id))!) !== shardOf(author))!.pin_id;
    const later = Number(((await src.query<mysql.RowDataPacket[]>('SELECT ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000) AS t'))[0])[0]!.t) + 1000;
    await src.query('INSERT INTO comments (id, pin_id, author_id, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [m, pinOld, a!.id, JSON.stringify({ text: 'still here?' }), later, later]);
    const pin = imported.newOf.get(ref('pin', pinOld))!;
    const countOf = async (): Promise<number> => ((await gw!.ok(`{ pin(id: "${pin}") { commentCount } }`)) as { pin: { commentCount: number } }).pin.commentCount;
    const countBefore = await countOf();
    const pass = await importToEnd('--since', 'last');
    assert.ok(pass.notes.some((n) => n.includes(`comment ${m}: its author is deleted in the shards`)), pass.notes.join('; '));
    // Besides it, the pass re-reads the relations stamped after the previous pass began (the --since test's, a
    // second ahead): those of the deleted account are rejected too, and nothing else is.
    const others = pass.notes.filter((n) => !n.includes(`comment ${m}:`));
    // A relation to one of the account's pins (another user's like of it) is rejected as one of a deleted pin.
    const [ownPins] = await src.query<mysql.RowDataPacket[]>('SELECT id FROM pins WHERE pinner_id = ?', [a!.id]);
    const pinIds = ownPins.map((r) => String(r.id)).join('|') || 'none';
    for (const n of others) {
      assert.match(
        n,
        new RegExp(`^rejected: \\w+ (.*, )?((${a!.id} → \\d+|\\d+ → ${a!.id})(,| and|:) .*the user is deleted in the shards|\\d+ → (${pinIds}): the pin is deleted in the shards)$`),
        pass.notes.join('; '),
      );
    }
    assert.ok(pass.rejected >= 1 + others.length, `${pass.rejected} rejected: ${pass.notes.join('; ')}`);
    assert.equal(await countOf(), countBefore, 'the pin\'s count did not gain the rejected comment');
    const onPin = await env.storage.router.query(env.topology.hostOfShard(shardOf(pin))!, [shardOf(pin)], `SELECT COUNT(*) AS n FROM ${shardDatabase(shardOf(pin))}.pin_has_comments WHERE from_id = ?`, [pin]);
    assert.equal(Number(onPin[0]!.n), countBefore, 'the pin\'s list equals its count');
  });
});

/**
 * A legacy source with awkward rows, imported while workers and the CLI are SIGKILLed: every row has
 * one outcome (imported, or rejected and written nowhere), and the result's notes, its `rejected`
 * count, `--find`, the gateway's counts and `via` all say the same, naming the source's old IDs and
 * spellings. Runs after the suite above (it adds objects of another source label to the shards).
 */
describe('Import: awkward rows have one outcome each, and the notes name the source\'s rows', () => {
  const ODD_DB = 'import_odd';
  let oddUrl: string;
  let odd: mysql.Connection;
  const BIG = 1152921511606846900n;
  const users: { id: number; name: string }[] = [];
  const boardOf = new Map<number, number>();
  /** Originals pinned on another user's board (rejected), their repins, repins of originals the source does not have. */
  const rejectedOriginals: { id: bigint; pinner: number; board: number }[] = [];
  const orphanRepins: { id: bigint; via: bigint; pinner: number }[] = [];
  let plainRepin: { id: bigint; via: bigint };

  before(async () => {
    const h = env.stack.mysql.hosts[0]!;
    const owner = env.stack.mysql.admin!;
    odd = await mysql.createConnection({ host: h.primary.host, port: h.primary.port, user: owner.user, password: owner.password, supportBigNumbers: true, bigNumberStrings: true, jsonStrings: true });
    await odd.query(`DROP DATABASE IF EXISTS ${ODD_DB}`);
    await odd.query(`CREATE DATABASE ${ODD_DB}`);
    await odd.query(`GRANT SELECT ON ${ODD_DB}.* TO '${SOURCE_USER}'@'%'`);
    await odd.query(`USE ${ODD_DB}`);
    // No foreign keys, and usernames unique only byte for byte: `alice` and `ALICE` are two rows.
    for (const ddl of SOURCE_DDL) await odd.query(ddl.replace(/,\s*FOREIGN KEY \([a-z_]+\) REFERENCES [a-z_]+ \([a-z_]+\)/g, '').replace('username VARCHAR(64) NOT NULL', 'username VARCHAR(64) COLLATE utf8mb4_bin NOT NULL'));
    oddUrl = `mysql://${SOURCE_USER}@${h.primary.host}:${h.primary.port}/${ODD_DB}`;

    for (const name of ['alice', 'ALICE', 'bob']) users.push({ id: 10 + 3 * users.length, name });
    for (let i = 0; i < 30; i++) users.push({ id: 100 + 3 * i, name: `filler_${i}` });
    const t = (k: number): number => T0 + k * 1000;
    await odd.query(`INSERT INTO users (id, username, email, data, created_at, updated_at) VALUES ${users.map((u, i) => `(${u.id}, ${mysql.escape(u.name)}, NULL, ${mysql.escape(JSON.stringify({ username: u.name, displayName: `Person ${u.id}` }))}, ${t(i)}, ${t(i)})`).join(',')}`);
    users.forEach((u, i) => boardOf.set(u.id, 5000 + i));
    await odd.query(`INSERT INTO boards (id, owner_id, data, created_at, updated_at) VALUES ${users.map((u, i) => `(${boardOf.get(u.id)}, ${u.id}, '{"name":"B${i}"}', ${t(i)}, ${t(i)})`).join(',')}`);
    const fillers = users.slice(3);
    const bob = users[2]!.id;
    const pins: string[] = [];
    const pin = (id: bigint, board: number, pinner: number, via: bigint | null, k: number): void =>
      void pins.push(`(${id}, ${board}, ${pinner}, ${via ?? 'NULL'}, '{"title":"P${id}"}', ${t(k)}, ${t(k)})`);
    let n = 0;
    // A plain pin of each filler, and one repin of one of them (an ordinary repin, for contrast).
    fillers.forEach((u) => pin(BIG + BigInt(n), boardOf.get(u.id)!, u.id, null, n++));
    plainRepin = { id: BIG + BigInt(n), via: BIG };
    pin(plainRepin.id, boardOf.get(fillers[1]!.id)!, fillers[1]!.id, plainRepin.via, n++);
    for (let i = 0; i < 6; i++) {
      // Pinned by a filler on bob's board: rejected (a pin lives with its board's owner) ...
      const original = { id: BIG + BigInt(n), pinner: fillers[i]!.id, board: boardOf.get(bob)! };
      pin(original.id, original.board, original.pinner, null, n++);
      rejectedOriginals.push(original);
      // ... and repinned by another filler, on their own board: a real pin of theirs.
      const repinner = fillers[10 + i]!.id;
      const r = { id: BIG + BigInt(n), via: original.id, pinner: repinner };
      pin(r.id, boardOf.get(repinner)!, repinner, r.via, n++);
      orphanRepins.push(r);
    }
    for (let i = 0; i < 2; i++) {
      // Repins of a pin the source does not have at all (no foreign key kept it).
      const repinner = fillers[20 + i]!.id;
      const r = { id: BIG + BigInt(n), via: BIG + 900n + BigInt(i), pinner: repinner };
      pin(r.id, boardOf.get(repinner)!, repinner, r.via, n++);
      orphanRepins.push(r);
    }
    await odd.query(`INSERT INTO pins (id, board_id, pinner_id, via_pin_id, data, created_at, updated_at) VALUES ${pins.join(',')}`);
  });

  after(async () => {
    await odd?.end();
  });

  test('a repin whose original is not imported is a plain pin of its pinner, noted; a taken username is noted with the source\'s row and spelling; the same after SIGKILLs', async () => {
    const args = ['import', '--from', oddUrl, '--chunk-rows', '3', '--json'];
    const [w1, w2] = await Promise.all([worker(), worker()]);
    // The CLI and a worker SIGKILLed at a random point of the pass (44 chunks: users 11, boards 11, pins 15,
    // then repins 3 and the 4 empty tables), then the same command again.
    const killAt = 12 + Math.floor(rngFor(SEED + 1)() * 25);
    const run = startCli(args);
    await eventually(`${killAt} chunks done`, async () => {
      const r = await env.storage.imports.latestRun(ODD_DB);
      return r && (await env.storage.imports.chunks(ODD_DB, r.run)).size >= killAt ? true : undefined;
    }, 60_000);
    run.child.kill('SIGKILL');
    w1.child.kill('SIGKILL');
    assert.equal((await env.storage.imports.latestRun(ODD_DB))?.finishedAt, null, 'killed while the pass was still running');
    await run.done;
    await w1.exited;
    const w3 = await worker();
    const again = await runCli(workerEnv(), args);
    assert.equal(again.code, 0, again.stderr);
    const result = JSON.parse(again.stdout.trim().split('\n').at(-1)!) as { rejected: number; written: number; notes: string[] };

    const expected = [
      ...rejectedOriginals.map((o) => `rejected: pin ${o.id}: pinned by ${o.pinner} on board ${o.board} of another user (a pin lives with its board's owner)`),
      ...orphanRepins.map((r) => `imported: repin ${r.id}: its original ${r.via} was not imported, so it is a plain pin (via: null)`),
      'imported: user 13: the username "ALICE" is taken by user 10 of this source, so it does not lead to this user',
    ];
    assert.deepEqual([...result.notes].sort(), expected.sort());
    assert.equal(result.rejected, rejectedOriginals.length, 'only the originals pinned on another user\'s board are rejected');

    // --find agrees with the notes: every repin is imported, no rejected original is (the CLI once each
    // way; the rest through the same mod-shard lookup, a CLI process each being slow on this box).
    const find = async (what: string): Promise<{ code: number; id: string }> => {
      const r = await runCli(workerEnv(), ['import', '--from', oddUrl, '--find', what]);
      return { code: r.code, id: r.stdout.trim() };
    };
    const lookup = async (type: ObjectType, ids: readonly bigint[]): Promise<Map<string, bigint>> =>
      env.storage.imports.lookup(`import:${type}`, ids.map((id) => `${ODD_DB}:${id}`));
    const rejectedFound = await find(`pin:${rejectedOriginals[0]!.id}`);
    assert.deepEqual([rejectedFound.code, rejectedFound.id], [1, ''], 'a rejected original is not found');
    assert.equal((await lookup('pin', rejectedOriginals.map((o) => o.id))).size, 0, 'no rejected original is imported');
    const repinIds = await lookup('pin', [...orphanRepins, plainRepin].map((r) => r.id));
    const newOf = new Map([...orphanRepins, plainRepin].map((r) => [String(r.id), String(repinIds.get(`${ODD_DB}:${r.id}`) ?? 'missing')]));
    const repinFound = await find(`pin:${orphanRepins[0]!.id}`);
    assert.deepEqual([repinFound.code, repinFound.id], [0, newOf.get(String(orphanRepins[0]!.id))], 'a repin whose original was not imported is found');
    assert.equal(repinIds.size, orphanRepins.length + 1, 'every repin is imported');
    const alice13 = await find('user:13');
    assert.equal(alice13.code, 0, 'user 13 (ALICE) is imported');

    // The gateway agrees: each repin is a plain pin of its pinner, counted in their pinCount; the ordinary repin keeps its original.
    gw ??= await startTestGateway(env, 'import');
    const res = await gw.gql(`{ ${[...orphanRepins, plainRepin].map((r, j) => `p${j}: pin(id: "${newOf.get(String(r.id))}") { via { id } pinner { username pinCount } }`).join(' ')}
      alice: user(username: "alice") { id } ALICE: user(username: "ALICE") { id } u13: node(id: "${alice13.id}") { ... on User { username } } }`);
    assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
    for (const [j, r] of orphanRepins.entries()) {
      const got = res.body.data[`p${j}`];
      const pinner = users.find((u) => u.id === r.pinner)!;
      // Each filler has their own pin and this repin (the rejected originals are on bob's board, not theirs).
      assert.deepEqual(got, { via: null, pinner: { username: pinner.name, pinCount: 2 } }, `repin ${r.id}`);
    }
    const plain = res.body.data[`p${orphanRepins.length}`];
    assert.ok(plain.via?.id, 'an ordinary repin keeps its original');
    assert.deepEqual(res.body.data.ALICE, res.body.data.alice, 'the username stays with user 10, who claimed it');
    assert.equal(res.body.data.u13.username, 'ALICE', 'user 13 keeps its own spelling on its profile');

    // A second pass writes nothing and says the same.
    const second = await runCli(workerEnv(), args);
    assert.equal(second.code, 0, second.stderr);
    const r2 = JSON.parse(second.stdout.trim().split('\n').at(-1)!) as { rejected: number; written: number; notes: string[] };
    assert.deepEqual([r2.written, r2.rejected, [...r2.notes].sort()], [0, rejectedOriginals.length, expected.sort()]);
    await Promise.all([w2, w3].map(async (w) => {
      w.child.kill('SIGKILL');
      await w.exited;
    }));
  });
});
