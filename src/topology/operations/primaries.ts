/**
 * Every MariaDB server starts read-only (the local stack's my.cnf, deploy/mysql-conf): only the
 * primaries a topology map names are made writable, and only here — after `topology publish`, by
 * `topology promote` (the promoted replica, before the map names it), by `topology writable` (a
 * primary that restarted), and by `stack up` / `dev` for the map in force. A demoted primary that
 * restarts stays read-only: no map names it, so nothing makes it writable, and the application's
 * account cannot write through read_only.
 *
 *   const report = await makePrimariesWritable(new ShardAdmin({ credentials: admin }), doc);
 *   report.failed → primaries that are unreachable or replicate from another server
 */
import type { Endpoint, TopologyDoc } from '../../core/topology.ts';
import type { PrimaryIo } from '../../core/serverIo.ts';

export interface PrimaryOutcome {
  readonly host: string;
  readonly server: Endpoint;
}

export interface PrimariesReport {
  /** Made writable by this call (they were read-only). */
  readonly madeWritable: readonly PrimaryOutcome[];
  readonly alreadyWritable: readonly PrimaryOutcome[];
  /** Still read-only: unreachable, or a replica. Writes to these hosts are refused until this is run again. */
  readonly failed: readonly (PrimaryOutcome & { readonly error: string })[];
}

/** Makes the primary of every host of `doc` (or of just `hosts`) writable, all at once. Never throws for one server. */
export async function makePrimariesWritable(io: PrimaryIo, doc: TopologyDoc, hosts?: readonly string[]): Promise<PrimariesReport> {
  const names = hosts ?? Object.keys(doc.hosts).sort();
  const madeWritable: PrimaryOutcome[] = [];
  const alreadyWritable: PrimaryOutcome[] = [];
  const failed: (PrimaryOutcome & { error: string })[] = [];
  await Promise.all(
    names.map(async (host) => {
      const spec = doc.hosts[host];
      if (spec === undefined) throw new Error(`makePrimariesWritable: host ${host} is not in the map`);
      const outcome = { host, server: spec.primary };
      try {
        const { wasReadOnly } = await io.makeWritable(spec.primary);
        (wasReadOnly ? madeWritable : alreadyWritable).push(outcome);
      } catch (err) {
        failed.push({ ...outcome, error: err instanceof Error ? err.message : String(err) });
      }
    }),
  );
  const byHost = (a: PrimaryOutcome, b: PrimaryOutcome): number => a.host.localeCompare(b.host);
  return { madeWritable: madeWritable.sort(byHost), alreadyWritable: alreadyWritable.sort(byHost), failed: failed.sort(byHost) };
}

/** One line per host for an operator: `mysql001 127.0.0.1:3306 made writable`. Pure. */
export function primariesLines(report: PrimariesReport): string[] {
  const at = (o: PrimaryOutcome): string => `${o.host} (${o.server.host}:${o.server.port})`;
  return [
    ...report.madeWritable.map((o) => `${at(o)}: made writable (read_only = 0)`),
    ...report.alreadyWritable.map((o) => `${at(o)}: writable`),
    ...report.failed.map((o) => `${at(o)}: NOT writable: ${o.error}`),
  ];
}
