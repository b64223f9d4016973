/**
 * "Load the data set if it is missing": a slot (a shard range, its topology key and its flat
 * database) holds one generated data set, described by a marker row in `bench_meta.datasets` on
 * the first host. A run whose parameters match a complete marker reuses the data; anything else
 * (other parameters, an interrupted load, rows missing) drops the slot's databases and loads anew.
 *
 * Slots keep data sets of different sizes side by side on one stack (the quick one that `npm test`
 * loads never erases the full one): each has its own shard range, flat database and username
 * prefix; the mod shards (64, shared) hold every slot's usernames, told apart by the prefix.
 */
import type { HostSpec, Topology, TopologyDoc } from '../core/topology.ts';
import { parseTopology, shardDatabase } from '../core/topology.ts';
import { ID_LAYOUT } from '../core/ids.ts';
import { OBJECT_TYPES } from '../core/objectTypes.ts';
import type { StackInfo } from '../stack/localStack.ts';
import { createStorage } from '../storage/index.ts';
import { provision } from '../storage/provision.ts';
import { FLAT_TABLES, flatParts } from './flat.ts';
import { datasetSummary, generate, type DatasetParams } from './generate.ts';
import { bulkLoad, type LoadReport, type LoadStream } from './loader.ts';
import type { ProgressStream } from './progress.ts';
import type { DatasetIndex } from './datasetIndex.ts';
import { hostParts, indexDataset } from './sharded.ts';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';

/** Mod shards every slot shares; fixed so that slots agree on where a username lives. */
export const BENCH_MOD_SHARDS = 64;
/** Each slot owns shards [base, base + SLOT_SPAN): at most this many shards per slot. */
export const SLOT_SPAN = 1024;
const META_DB = 'bench_meta';

export interface Slot {
  readonly name: string;
  readonly shardBase: number;
  readonly shards: number;
  readonly flatDatabase: string;
  readonly topologyKey: string;
}

export function slotFor(name: 'main' | 'quick', shards?: number): Slot {
  const base = name === 'main' ? 0 : SLOT_SPAN;
  const n = shards ?? (name === 'main' ? 64 : 16);
  if (!Number.isInteger(n) || n < 1 || n > SLOT_SPAN) throw new RangeError(`shards must be 1..${SLOT_SPAN}, got ${shards}`);
  return { name, shardBase: base, shards: n, flatDatabase: name === 'main' ? 'bench_flat' : 'bench_flat_quick', topologyKey: `/shardql-bench/${name}/topology` };
}

export function stackHosts(stack: StackInfo): Record<string, HostSpec> {
  return Object.fromEntries(stack.mysql.hosts.map((h) => [h.name, h.replica ? { primary: h.primary, replica: h.replica } : { primary: h.primary }]));
}

/** The slot's shards dealt evenly over the hosts in contiguous blocks; 64 mod shards likewise. */
export function slotTopology(hosts: Record<string, HostSpec>, slot: Slot): TopologyDoc {
  const names = Object.keys(hosts);
  const deal = (from: number, count: number): { from: number; to: number; host: string }[] => {
    const per = Math.ceil(count / names.length);
    return names
      .map((host, i) => ({ from: from + i * per, to: from + Math.min(count, (i + 1) * per) - 1, host }))
      .filter((r) => r.from <= r.to);
  };
  return parseTopology({
    format: 1,
    idLayout: { ...ID_LAYOUT, types: { ...OBJECT_TYPES } },
    hosts,
    shards: { open: [{ from: slot.shardBase, to: slot.shardBase + slot.shards - 1 }], ranges: deal(slot.shardBase, slot.shards) },
    modShard: { count: BENCH_MOD_SHARDS, ranges: deal(0, BENCH_MOD_SHARDS) },
  }).doc;
}

/** What the benchmark needs to know about a loaded data set, without regenerating it. */
export interface DatasetInfo {
  readonly slot: string;
  readonly params: DatasetParams;
  readonly shards: number;
  readonly summary: Record<string, number>;
  readonly specials: {
    readonly profileUsers: string[];
    readonly bigBoards: string[];
    readonly feed10Users: string[];
    readonly feed1kUsers: string[];
    readonly mutationUsers: string[];
    /** Users with thousands of notifications (src/bulk/events.ts). */
    readonly notifiedUsers: string[];
    readonly detailPins: string[];
    readonly mutationPins: string[];
  };
  /** Rows expected in the users table of the slot's first shard: a cheap check on reuse. */
  readonly check: { readonly shard: number; readonly users: number };
  readonly loadedAt: string;
  readonly load?: { readonly sharded: LoadReport; readonly generateMs: number; readonly provisionMs: number };
}

export interface EnsureOptions {
  readonly stack: StackInfo;
  readonly slot: Slot;
  readonly params: DatasetParams;
  readonly log?: (line: string) => void;
  /** Load even if a matching data set is there. */
  readonly force?: boolean;
  readonly batchRows?: number;
  readonly progress?: ProgressStream | null;
}

export interface EnsureResult {
  readonly info: DatasetInfo;
  readonly reused: boolean;
}

function markerKey(opts: EnsureOptions): string {
  const hosts = opts.stack.mysql.hosts.map((h) => h.name);
  return JSON.stringify({ params: opts.params, shardBase: opts.slot.shardBase, shards: opts.slot.shards, modShards: BENCH_MOD_SHARDS, flat: opts.slot.flatDatabase, hosts });
}

/**
 * Loading a data set is an operator's job (DDL, bulk inserts with the binlog off, a database of its
 * own): the stack's admin account. The application's account only reads and writes shard rows.
 */
export function benchAdmin(stack: StackInfo): { readonly user: string; readonly password: string } {
  if (!stack.mysql.admin) throw new Error(`The stack in ${stack.dir} has no admin account: bring it up once with \`shardql stack up\``);
  return stack.mysql.admin;
}

async function hostConnection(stack: StackInfo, index: number): Promise<Connection> {
  const h = stack.mysql.hosts[index]!;
  const admin = benchAdmin(stack);
  return createConnection({ host: h.primary.host, port: h.primary.port, user: admin.user, password: admin.password, supportBigNumbers: true, bigNumberStrings: true });
}

async function readMarker(conn: Connection, slot: string): Promise<{ key: string; status: string; info: DatasetInfo } | undefined> {
  await conn.query(`CREATE DATABASE IF NOT EXISTS ${META_DB}`);
  await conn.query(`CREATE TABLE IF NOT EXISTS ${META_DB}.datasets (
    slot VARCHAR(32) NOT NULL PRIMARY KEY,
    marker_key TEXT NOT NULL,
    status VARCHAR(16) NOT NULL,
    info LONGTEXT NOT NULL,
    updated_at BIGINT NOT NULL
  ) ENGINE=InnoDB`);
  const [rows] = await conn.query<RowDataPacket[]>(`SELECT marker_key, status, info FROM ${META_DB}.datasets WHERE slot = ?`, [slot]);
  const r = rows[0];
  return r ? { key: String(r.marker_key), status: String(r.status), info: JSON.parse(String(r.info)) as DatasetInfo } : undefined;
}

async function writeMarker(conn: Connection, slot: string, key: string, status: string, info: unknown): Promise<void> {
  await conn.query(
    `INSERT INTO ${META_DB}.datasets (slot, marker_key, status, info, updated_at) VALUES (?, ?, ?, ?, ?)
     ON DUPLICATE KEY UPDATE marker_key = VALUES(marker_key), status = VALUES(status), info = VALUES(info), updated_at = VALUES(updated_at)`,
    [slot, key, status, JSON.stringify(info), Date.now()],
  );
}

/** Drops every shard database of the slot's range (whatever its earlier shard count) on every host. */
async function dropSlot(stack: StackInfo, slot: Slot): Promise<void> {
  await Promise.all(
    stack.mysql.hosts.map(async (_, i) => {
      const conn = await hostConnection(stack, i);
      try {
        const [rows] = await conn.query<RowDataPacket[]>(`SELECT schema_name AS db FROM information_schema.schemata WHERE schema_name REGEXP '^db[0-9]{5}$'`);
        for (const r of rows) {
          const db = String(r.db);
          const shard = Number(db.slice(2));
          if (shard >= slot.shardBase && shard < slot.shardBase + SLOT_SPAN) await conn.query(`DROP DATABASE IF EXISTS ${shardDatabase(shard)}`);
        }
      } finally {
        await conn.end();
      }
    }),
  );
}

/** Removes the slot's usernames from every mod shard (they all start with the slot's prefix). */
async function deleteSlotLookups(stack: StackInfo, topology: Topology, prefix: string): Promise<void> {
  const like = `${prefix.toLowerCase().replace(/[\\_%]/g, (c) => `\\${c}`)}\\_%`;
  await Promise.all(
    [...topology.modShardsByHost().entries()].map(async ([host, mods]) => {
      const index = stack.mysql.hosts.findIndex((h) => h.name === host);
      const conn = await hostConnection(stack, index);
      try {
        for (const m of mods) {
          await conn.query(`DELETE FROM msdb${String(m).padStart(5, '0')}.lookups WHERE namespace = 'username' AND lookup_key LIKE ?`, [like]);
        }
      } finally {
        await conn.end();
      }
    }),
  );
}

function specialsOf(ix: DatasetIndex): DatasetInfo['specials'] {
  const s = ix.ds.specials;
  return {
    profileUsers: s.profileUsers.map((u) => ix.userIds[u]!),
    bigBoards: s.bigBoards.map((b) => ix.boardIds[b]!),
    feed10Users: s.feed10Users.map((u) => ix.userIds[u]!),
    feed1kUsers: s.feed1kUsers.map((u) => ix.userIds[u]!),
    mutationUsers: s.mutationUsers.map((u) => ix.userIds[u]!),
    notifiedUsers: s.notifiedUsers.map((u) => ix.userIds[u]!),
    detailPins: s.detailPins.map((p) => ix.pinIds[p]!),
    mutationPins: s.mutationPins.map((p) => ix.pinIds[p]!),
  };
}

/**
 * Makes sure the slot holds the data set `params` describes, in the shards and in the flat
 * database, loading it if not. Returns what the benchmark needs to know about it.
 */
export async function ensureDataset(opts: EnsureOptions): Promise<EnsureResult> {
  const log = opts.log ?? (() => undefined);
  const { stack, slot } = opts;
  const key = markerKey(opts);
  const doc = slotTopology(stackHosts(stack), slot);
  const topology = parseTopology(doc);
  const meta = await hostConnection(stack, 0);
  try {
    const marker = await readMarker(meta, slot.name);
    if (!opts.force && marker && marker.status === 'complete' && marker.key === key) {
      const check = marker.info.check;
      const host = stack.mysql.hosts.findIndex((h) => h.name === topology.hostOfShard(check.shard));
      const conn = await hostConnection(stack, host);
      let users = -1;
      try {
        const [rows] = await conn.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${shardDatabase(check.shard)}.users`);
        users = Number(rows[0]?.n);
      } catch {
        users = -1;
      } finally {
        await conn.end();
      }
      if (users === check.users) {
        log(`data set '${slot.name}' already loaded (${marker.info.loadedAt}): reusing it`);
        return { info: marker.info, reused: true };
      }
      log(`data set '${slot.name}' is marked complete but shard ${check.shard} has ${users} users, not ${check.users}: loading again`);
    } else if (marker) {
      log(`data set '${slot.name}' ${marker.status === 'complete' ? 'was made with other parameters' : `is ${marker.status} (interrupted?)`}: loading again`);
    }
    await writeMarker(meta, slot.name, key, 'loading', { startedAt: new Date().toISOString() });

    const t0 = Date.now();
    log(`generating: ${opts.params.users} users (seed ${opts.params.seed})`);
    const ds = generate(opts.params, Array.from({ length: slot.shards }, (_, i) => slot.shardBase + i));
    const ix = indexDataset(ds);
    const generateMs = Date.now() - t0;
    const summary = { ...datasetSummary(ds), events: ix.events.length };
    log(`generated in ${generateMs} ms: ${Object.entries(summary).map(([k, v]) => `${k} ${v}`).join(', ')}`);

    const t1 = Date.now();
    await dropSlot(stack, slot);
    // Only to provision: the rows are loaded by bulkLoad over its own connections, no event appended through it.
    const storage = createStorage({ topology: () => topology, credentials: benchAdmin(stack), events: null });
    try {
      await provision({ router: storage.router, topology });
    } finally {
      await storage.close();
    }
    await deleteSlotLookups(stack, topology, opts.params.prefix);
    await meta.query(`DROP DATABASE IF EXISTS ${slot.flatDatabase}`);
    await meta.query(`CREATE DATABASE ${slot.flatDatabase}`);
    for (const [table, ddl] of FLAT_TABLES) await meta.query(ddl.replace(`CREATE TABLE ${table} `, `CREATE TABLE ${slot.flatDatabase}.${table} `));
    const provisionMs = Date.now() - t1;
    log(`provisioned ${slot.shards} shards + ${BENCH_MOD_SHARDS} mod shards and ${slot.flatDatabase} in ${provisionMs} ms`);

    const parts = hostParts(ix, topology);
    const streams: LoadStream[] = [];
    for (const h of stack.mysql.hosts) {
      streams.push({ name: h.name, endpoint: h.primary, parts: parts.get(h.name) ?? [], skipBinlog: h.replica === undefined });
    }
    const first = stack.mysql.hosts[0]!;
    streams.push({ name: `${first.name}/${slot.flatDatabase}`, endpoint: first.primary, parts: flatParts(ix, slot.flatDatabase), skipBinlog: first.replica === undefined });
    const report = await bulkLoad(streams, {
      credentials: benchAdmin(stack),
      ...(opts.batchRows !== undefined ? { batchRows: opts.batchRows } : {}),
      ...(opts.progress !== undefined ? { progress: opts.progress } : {}),
      label: `loading '${slot.name}'`,
    });
    log(`loaded ${report.rows} rows in ${(report.ms / 1000).toFixed(1)} s: ${report.rowsPerSecond} rows/s (${report.streams.map((s) => `${s.name} ${s.rows} rows in ${(s.ms / 1000).toFixed(1)} s`).join('; ')})`);

    const checkShard = slot.shardBase;
    let checkUsers = 0;
    for (let u = 0; u < ds.userCount; u++) if (ds.userShard[u] === checkShard) checkUsers++;
    const info: DatasetInfo = {
      slot: slot.name,
      params: opts.params,
      shards: slot.shards,
      summary,
      specials: specialsOf(ix),
      check: { shard: checkShard, users: checkUsers },
      loadedAt: new Date().toISOString(),
      load: { sharded: report, generateMs, provisionMs },
    };
    await writeMarker(meta, slot.name, key, 'complete', info);
    return { info, reused: false };
  } finally {
    await meta.end();
  }
}
