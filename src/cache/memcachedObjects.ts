import { createRequire } from 'node:module';
import type memjs from 'memjs';
import { groupBy } from '../core/groupBy.ts';
import { LayerBreaker } from './breaker.ts';
import type { CacheStats } from '../core/cacheStats.ts';

/**
 * The memcached layer (objects), over memjs's own connections. memjs 1.3 has no multi-get and no
 * CAS, so the batch operations are written here in the binary protocol and sent through the same
 * client's sockets: one write of quiet requests closed by a NOOP, one round trip per server.
 *
 * Races: a write invalidates by *setting a tombstone* (not deleting), and a reader fills only if
 * the key is as it found it — `ADD` when it was absent, `SET` with the tombstone's CAS when it was
 * a tombstone. So a reader that read MySQL before a write and fills after the write's tombstone
 * fails to fill: no stale value survives. Every entry also has a TTL as a backstop.
 */

type Response = { header: { opcode: number; status: number; opaque: number; cas: Buffer }; key: Buffer; extras: Buffer; val: Buffer };
type Callback = ((r: Response) => void) & { quiet?: boolean };
interface ServerInternals {
  readonly host: string;
  readonly port: number | string;
  username?: string | undefined;
  password?: string | undefined;
  onResponse(seq: number, fn: Callback): void;
  onError(seq: number, fn: (err: unknown) => void): void;
  write(blob: Buffer): void;
}
interface ClientInternals {
  servers: ServerInternals[];
  seq: number;
  incrSeq(): void;
  getServer(key: string): number;
}

const require = createRequire(import.meta.url);
const { makeRequestBuffer } = require('memjs/lib/memjs/utils') as {
  makeRequestBuffer(op: number, key: string | Buffer, extras: string | Buffer, value: string | Buffer, opaque: number): Buffer;
};

const OP = { SETQ: 0x11, ADDQ: 0x12, GETKQ: 0x0d, NOOP: 0x0a } as const;
const TOMBSTONE = Buffer.from([0]);

/** A fill token: null when the key was absent, else the CAS of the tombstone found. */
export type FillToken = Buffer | null;

export interface MemcachedObjectsOptions {
  readonly client: memjs.Client;
  /**
   * The SASL login (PLAIN) memjs sends on every new connection, or none. The configuration's
   * alone: memjs would otherwise take one from MEMCACHIER_* / MEMCACHE_* environment variables or
   * a `user:password@` in the server list.
   */
  readonly sasl?: { readonly username: string; readonly password: string } | undefined;
  /** Seconds a filled object lives. Default 3600. */
  readonly ttlSeconds?: number;
  /** Seconds a tombstone lives: longer than any reader's MySQL read. Default 30. */
  readonly tombstoneSeconds?: number;
  /** A batch not answered within this many ms reads as all-miss. Default 500. */
  readonly timeoutMs?: number;
}

function expiryExtras(seconds: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(0, 0); // flags
  b.writeUInt32BE(seconds, 4);
  return b;
}

function withCas(request: Buffer, cas: Buffer): Buffer {
  cas.copy(request, 16);
  return request;
}

export class MemcachedObjects {
  readonly #client: ClientInternals;
  readonly #ttl: number;
  readonly #tombstoneTtl: number;
  readonly #timeoutMs: number;
  readonly #breaker = new LayerBreaker();

  constructor(opts: MemcachedObjectsOptions) {
    this.#client = opts.client as unknown as ClientInternals;
    for (const server of this.#client.servers) {
      server.username = opts.sasl?.username;
      server.password = opts.sasl?.password;
    }
    this.#ttl = opts.ttlSeconds ?? 3600;
    this.#tombstoneTtl = opts.tombstoneSeconds ?? 30;
    this.#timeoutMs = opts.timeoutMs ?? 500;
  }

  #byServer(keys: readonly string[]): Map<number, string[]> {
    const n = this.#client.servers.length;
    return n > 1 ? groupBy(keys, (k) => this.#client.getServer(k)) : new Map([[0, [...keys]]]);
  }

  /**
   * Sends quiet requests closed by a NOOP to one server and collects the responses that come
   * back (quiet requests answer only hits or failures). One round trip.
   */
  #batch(server: ServerInternals, build: (seq: number) => Buffer[]): Promise<Response[]> {
    return new Promise((resolve, reject) => {
      this.#client.incrSeq();
      const seq = this.#client.seq;
      const got: Response[] = [];
      const timer = setTimeout(() => reject(new Error('cache timeout')), this.#timeoutMs);
      const cb: Callback = (r) => {
        if (r.header.opcode === OP.NOOP) {
          clearTimeout(timer);
          resolve(got);
        } else got.push(r);
      };
      cb.quiet = true;
      server.onResponse(seq, cb);
      server.onError(seq, (err) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      });
      server.write(Buffer.concat([...build(seq), makeRequestBuffer(OP.NOOP, '', '', '', seq)]));
    });
  }

  /**
   * One NOOP to every server (memjs connects, and logs in with SASL if configured, first): at
   * start, to say why the layer is unavailable rather than only missing. Undefined when every
   * server answered, else `host:port: reason` of the first that did not.
   */
  async check(): Promise<string | undefined> {
    const results = await Promise.allSettled(this.#client.servers.map((server) => this.#batch(server, () => [])));
    for (const [i, r] of results.entries()) {
      if (r.status === 'fulfilled') continue;
      const server = this.#client.servers[i]!;
      return `${server.host}:${server.port}: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`;
    }
    return undefined;
  }

  /**
   * Looks up many keys: one round trip per server. Returns the values found and, for every key not
   * found, the token its fill must present. A server that fails or is slow reads as all-miss with
   * no token (its keys are then not filled).
   */
  async probe(keys: readonly string[], stats?: CacheStats): Promise<{ values: Map<string, Buffer>; tokens: Map<string, FillToken> }> {
    const values = new Map<string, Buffer>();
    const tokens = new Map<string, FillToken>();
    if (!(await this.#usable(stats))) {
      stats?.misses('memcached', keys.length);
      return { values, tokens };
    }
    await Promise.all(
      [...this.#byServer(keys)].map(async ([i, list]) => {
        stats?.roundTrip('memcached');
        try {
          const responses = await this.#batch(this.#client.servers[i]!, (seq) => list.map((k) => makeRequestBuffer(OP.GETKQ, k, '', '', seq)));
          const found = new Map<string, Response>();
          for (const r of responses) if (r.header.status === 0) found.set(r.key.toString(), r);
          for (const k of list) {
            const r = found.get(k);
            if (!r) tokens.set(k, null);
            else if (r.val.equals(TOMBSTONE)) tokens.set(k, Buffer.from(r.header.cas));
            else values.set(k, r.val);
          }
          this.#breaker.succeeded();
        } catch {
          this.#breaker.failed();
          stats?.error('memcached');
        }
      }),
    );
    stats?.hits('memcached', values.size);
    stats?.misses('memcached', keys.length - values.size);
    return { values, tokens };
  }

  /** Fills keys read from MySQL, each only if still as its token says: one round trip per server. */
  async fill(entries: readonly { key: string; value: Buffer; token: FillToken }[], stats?: CacheStats): Promise<void> {
    const byKey = new Map(entries.map((e) => [e.key, e]));
    await Promise.all(
      [...this.#byServer([...byKey.keys()])].map(async ([i, list]) => {
        stats?.roundTrip('memcached');
        try {
          await this.#batch(this.#client.servers[i]!, (seq) =>
            list.map((k) => {
              const e = byKey.get(k)!;
              return e.token === null
                ? makeRequestBuffer(OP.ADDQ, k, expiryExtras(this.#ttl), e.value, seq)
                : withCas(makeRequestBuffer(OP.SETQ, k, expiryExtras(this.#ttl), e.value, seq), e.token);
            }),
          );
        } catch {
          this.#breaker.failed();
          stats?.error('memcached');
        }
      }),
    );
  }

  /**
   * Whether reads may use the layer: not in its cooldown, and every invalidation that failed
   * before has now been replayed.
   */
  #usable(stats?: CacheStats): Promise<boolean> {
    return this.#breaker.usable((keys) => this.#tombstone(keys, stats));
  }

  /**
   * Replaces keys with tombstones after a write. If that fails, the keys are kept and replayed
   * before this gateway reads the layer again, and the error is rethrown.
   */
  async invalidate(keys: readonly string[], stats?: CacheStats): Promise<void> {
    await this.#breaker.invalidating(keys, (k) => this.#tombstone(k, stats));
  }

  /**
   * Keys another process could not invalidate (it said so in the invalidation log): they are
   * tombstoned before this gateway next reads the layer, as its own failed invalidations are.
   */
  invalidateBeforeNextRead(keys: readonly string[]): void {
    this.#breaker.addPending(keys);
  }

  /** One round trip per server. Throws if a server fails. */
  async #tombstone(keys: readonly string[], stats?: CacheStats): Promise<void> {
    await Promise.all(
      [...this.#byServer(keys)].map(async ([i, list]) => {
        stats?.roundTrip('memcached');
        const responses = await this.#batch(this.#client.servers[i]!, (seq) =>
          list.map((k) => makeRequestBuffer(OP.SETQ, k, expiryExtras(this.#tombstoneTtl), TOMBSTONE, seq)),
        );
        const failed = responses.filter((r) => r.header.status !== 0);
        if (failed.length > 0) throw new Error(`memcached refused ${failed.length} invalidations`);
      }),
    );
  }
}
