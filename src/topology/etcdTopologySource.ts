import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ConsecutiveBreaker, ConstantBackoff, circuitBreaker, handleWhen, noop } from 'cockatiel';
import { Etcd3, isRecoverableError, type IOptions, type Lease } from 'etcd3';
import type { TopologyRead, TopologySource, TopologyWatchListener } from './topologyWatcher.ts';

/** Deadline of one etcd read or write made by a watching gateway: a dead etcd fails a read in this time. */
const CALL_DEADLINE_MS = 2000;

/**
 * How to get into etcd: a user and password (etcd's auth; the client trades them for a token), and
 * TLS: `https://` endpoints, checked against `ca` (PEM) when given, else the system's roots.
 */
export interface EtcdAccess {
  readonly username?: string;
  readonly password?: string;
  readonly ca?: string;
}

/** etcd3's options for `access`: the one place they are built, for the watching client and the CLI's. */
export function etcdAccessOptions(access: EtcdAccess | undefined): Pick<IOptions, 'auth' | 'credentials'> {
  return {
    ...(access?.username !== undefined && access.password !== undefined ? { auth: { username: access.username, password: access.password } } : {}),
    ...(access?.ca !== undefined ? { credentials: { rootCertificate: Buffer.from(access.ca) } } : {}),
  };
}

/**
 * An etcd client for a process that must ride out etcd outages: every unary call has a deadline,
 * a host is retried 500 ms after it failed (etcd3's default breaker waits 5 s), and a broken watch
 * stream reconnects every 500 ms instead of backing off to 30 s.
 */
export function createWatchingEtcdClient(endpoints: readonly string[], access?: EtcdAccess): Etcd3 {
  return new Etcd3({
    ...etcdAccessOptions(access),
    hosts: [...endpoints],
    dialTimeout: CALL_DEADLINE_MS,
    defaultCallOptions: (c) => (c.isStream ? {} : { deadline: Date.now() + CALL_DEADLINE_MS }),
    faultHandling: {
      host: () => circuitBreaker(handleWhen(isRecoverableError), { halfOpenAfter: 500, breaker: new ConsecutiveBreaker(3) }),
      global: noop,
      watchBackoff: new ConstantBackoff(500).next(),
    },
  });
}

/** The topology key in etcd as a TopologySource: the raw document, its revision, and a watch. */
export function etcdTopologySource(etcd: Etcd3, key: string): TopologySource {
  return {
    async read(): Promise<TopologyRead> {
      const res = await etcd.get(key).exec();
      const kv = res.kvs[0];
      // A missing key reads as a version at the store's revision, so the watcher refuses it (and says so).
      return kv
        ? { raw: kv.value.toString('utf8'), modRevision: kv.mod_revision, storeRevision: res.header.revision }
        : { raw: null, modRevision: res.header.revision, storeRevision: res.header.revision };
    },
    watch(fromRevision: string, listener: TopologyWatchListener) {
      // watcher() attaches without waiting for etcd (create() would wait for a connection).
      const watcher = etcd.watch().key(key).startRevision(fromRevision).watcher();
      watcher.on('put', (kv) => listener.change({ raw: kv.value.toString('utf8'), modRevision: kv.mod_revision }));
      watcher.on('delete', (kv) => listener.change({ raw: null, modRevision: kv.mod_revision }));
      // 'error' is a cancel by etcd: etcd3 never re-creates that watcher. etcd cancels a watch whose
      // start revision was compacted away (e.g. re-attached after a partition) or that is not allowed;
      // etcd3 keeps only the (often empty) reason, so the revision the watch started at is added.
      watcher.on('error', (err) =>
        listener.broken(
          new Error(`etcd cancelled the watch started at revision ${fromRevision} (${err.message.trim()}): that history was compacted, or the watch is not allowed`, { cause: err }),
        ),
      );
      watcher.on('end', () => listener.broken(new Error('the watch ended')));
      return { close: () => watcher.cancel() };
    },
  };
}

/** Where gateways say which revision they serve: one key per gateway under the topology key. */
export function gatewaysPrefix(topologyKey: string): string {
  return `${topologyKey}/gateways/`;
}

export interface GatewaySeen {
  readonly id: string;
  readonly revision: string;
  readonly host?: string;
  readonly pid?: number;
}

export interface GatewayPresenceOptions {
  readonly etcd: Etcd3;
  readonly topologyKey: string;
  /** Seconds a crashed gateway's entry outlives it. Default 10. */
  readonly ttlSeconds?: number;
  readonly log?: (event: string, fields: Record<string, unknown>) => void;
}

/**
 * A gateway's entry in etcd, under a lease: "I serve revision R". An operation that changes how
 * writes route (a shard move) waits until every live gateway serves its revision; a gateway that dies
 * drops out when its lease expires. While etcd is unreachable the entry expires and is put back once
 * etcd answers again.
 */
export class GatewayPresence {
  readonly id = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  readonly #opts: GatewayPresenceOptions;
  #lease: Lease | undefined;
  #revision = '0';
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;
  /** The entry expired (etcd unreachable): logged once, and once more when it is back. */
  #lost = false;
  /**
   * One put at a time, always of the newest revision: two puts in flight may be applied by etcd in
   * either order, and an older revision landing last would make this gateway look behind for good.
   */
  #putting = false;
  #putAgain = false;

  constructor(opts: GatewayPresenceOptions) {
    this.#opts = opts;
  }

  get key(): string {
    return `${gatewaysPrefix(this.#opts.topologyKey)}${this.id}`;
  }

  start(revision: string): void {
    this.#revision = revision;
    this.#register();
  }

  /** The gateway now serves `revision`. */
  update(revision: string): void {
    this.#revision = revision;
    this.#putLatest();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#retry) clearTimeout(this.#retry);
    const lease = this.#lease;
    this.#lease = undefined;
    await lease?.revoke({ deadline: Date.now() + CALL_DEADLINE_MS }).catch(() => undefined);
  }

  #register(): void {
    if (this.#stopped) return;
    const lease = this.#opts.etcd.lease(this.#opts.ttlSeconds ?? 10);
    this.#lease = lease;
    lease.on('lost', (err) => {
      if (this.#lease !== lease || this.#stopped) return;
      this.#lease = undefined;
      if (!this.#lost) this.#opts.log?.('gateway_presence_lost', { key: this.key, error: err instanceof Error ? err.message : String(err) });
      this.#lost = true;
      this.#later(() => this.#register());
    });
    this.#putLatest();
  }

  #putLatest(): void {
    if (this.#putting) {
      this.#putAgain = true;
      return;
    }
    this.#putting = true;
    void this.#put().finally(() => {
      this.#putting = false;
      if (this.#putAgain) {
        this.#putAgain = false;
        this.#putLatest();
      }
    });
  }

  async #put(): Promise<void> {
    const lease = this.#lease;
    if (!lease || this.#stopped) return;
    const revision = this.#revision;
    try {
      await lease
        .put(this.key)
        .value(JSON.stringify({ revision, host: hostname(), pid: process.pid }))
        .exec();
      if (this.#lost) this.#opts.log?.('gateway_presence_restored', { key: this.key, revision });
      this.#lost = false;
    } catch {
      // A lost lease re-registers by itself; a failed put on a live lease is retried (a newer
      // revision that came meanwhile is put next anyway).
      if (this.#lease === lease && this.#revision === revision) this.#later(() => this.#putLatest());
    }
  }

  #later(fn: () => void): void {
    if (this.#stopped) return;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = setTimeout(fn, 1000);
    this.#retry.unref();
  }
}

/** Every live gateway's entry. */
export async function readGateways(etcd: Etcd3, topologyKey: string): Promise<GatewaySeen[]> {
  const prefix = gatewaysPrefix(topologyKey);
  const entries = await etcd.getAll().prefix(prefix).strings();
  return Object.entries(entries).map(([key, value]) => {
    let parsed: { revision?: unknown; host?: unknown; pid?: unknown } = {};
    try {
      parsed = JSON.parse(value) as typeof parsed;
    } catch {
      // an entry that is not ours: it counts as serving nothing
    }
    return {
      id: key.slice(prefix.length),
      revision: typeof parsed.revision === 'string' ? parsed.revision : '0',
      ...(typeof parsed.host === 'string' ? { host: parsed.host } : {}),
      ...(typeof parsed.pid === 'number' ? { pid: parsed.pid } : {}),
    };
  });
}

/** The gateways that do not serve `revision` or a newer one yet. Pure. */
export function gatewaysBehind(gateways: readonly GatewaySeen[], revision: string): GatewaySeen[] {
  const want = BigInt(revision);
  return gateways.filter((g) => !/^\d+$/.test(g.revision) || BigInt(g.revision) < want);
}

export interface GatewayWait {
  /** Live gateways when the wait ended. */
  readonly gateways: number;
  /** Those still behind (empty on success). */
  readonly behind: readonly GatewaySeen[];
  readonly ms: number;
}

/** Polls until every live gateway serves `revision` (or newer), for at most `timeoutMs`. */
export async function waitForGateways(etcd: Etcd3, topologyKey: string, revision: string, timeoutMs: number, pollMs = 25): Promise<GatewayWait> {
  const started = Date.now();
  for (;;) {
    const all = await readGateways(etcd, topologyKey);
    const behind = gatewaysBehind(all, revision);
    if (behind.length === 0 || Date.now() - started >= timeoutMs) return { gateways: all.length, behind, ms: Date.now() - started };
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
