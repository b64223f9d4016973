import type { Topology } from '../core/topology.ts';

/** What readiness reads: the topology watcher's state, and a ping per host. */
export interface ReadinessSources {
  /** The topology in force (the watcher's). */
  topology(): Topology;
  revision(): string;
  ageMs(): number;
  rejected(): { readonly revision: string; readonly problem: string } | undefined;
  /** Resolves when the host's primary answers. */
  ping(host: string): Promise<unknown>;
}

/**
 * /readyz: ready when every host of the topology in force answers. The details name hosts by
 * their topology name (never an address) and give the topology's revision and age.
 */
export function readiness(src: ReadinessSources): () => Promise<{ ok: boolean; details: Record<string, unknown> }> {
  return async () => {
    const hosts: Record<string, string> = {};
    await Promise.all(
      Object.keys(src.topology().doc.hosts).map(async (h) => {
        try {
          await src.ping(h);
          hosts[h] = 'ok';
        } catch {
          hosts[h] = 'unavailable';
        }
      }),
    );
    const ok = Object.values(hosts).every((s) => s === 'ok');
    const rejected = src.rejected();
    return { ok, details: { topology: { revision: src.revision(), ageMs: src.ageMs(), ...(rejected ? { rejected } : {}) }, hosts } };
  };
}
