/**
 * `shardql import` as jobs: the CLI records a pass's plan in the ledger and enqueues one
 * `import.chunk` job per chunk of the current phase (then, with `--deletes`, one `import.deletes`
 * job per key range); any number of `shardql worker` processes run them (the scripting farm). A
 * chunk is idempotent (src/services/importer.ts): a worker killed in the middle of one leaves it to
 * run again, and the second run finishes it exactly once.
 */
import { fitToColumn, IMPORT_CHUNK_WIDTH } from '../../core/columnWidths.ts';
import { chunkName, SOURCE_LABEL, type KeyRange } from '../../core/importSchema.ts';
import type { ImportSpec } from '../../core/importSpec.ts';
import { servedModel } from '../../core/model/served.ts';
import type { PassChunkPayload } from '../../services/backgroundJobs.ts';
import { deleteChunk, importChunk, parsePlan, type ChunkOutcome, type ImportDeletes, type ImportPlan } from '../../services/importer.ts';
import type { DeclaredWrites } from '../../services/writes.ts';
import { servedImportSpec, servedWrites } from '../../product/served.ts';
import { defineJob, intField, JobPayloadError, objectOf, stringField, throwIfStopping, type JobContext, type JobKind } from '../jobKind.ts';

/**
 * A job kind that runs one chunk of a pass recorded in the ledger: skipped if the ledger has it
 * done, else run and recorded done with its outcome. One job per chunk of a pass: enqueued again (a
 * re-run of the CLI) while it is kept, it is not added twice.
 */
function passChunkJob<T extends string>(spec: {
  readonly kind: string;
  readonly summary: string;
  /** The source tables it takes (the served import spec's, read when a job is first decoded). */
  readonly tables: () => readonly T[];
  /** The chunk's name in the ledger, and the part of its job ID after the pass (no ':': BullMQ refuses it in IDs). */
  readonly name: (table: T, index: number) => string;
  readonly idPart: (table: T, index: number) => string;
  readonly chunkOf: (plan: ImportPlan, table: T, index: number) => { readonly range: KeyRange } | undefined;
  readonly run: (ctx: JobContext, plan: ImportPlan, table: T, range: KeyRange) => Promise<ChunkOutcome>;
}): JobKind<PassChunkPayload<T>> {
  return defineJob<PassChunkPayload<T>>({
    queue: 'import',
    summary: spec.summary,
    encode: (p) => ({ source: p.source, run: p.run, table: p.table, index: p.index }),
    decode: (data) => {
      const o = objectOf(data, spec.kind);
      const table = stringField(o, 'table', /^[A-Za-z][A-Za-z0-9_]{0,63}$/);
      const tables = spec.tables();
      if (!(tables as readonly string[]).includes(table)) throw new JobPayloadError(`table: expected one of ${tables.join(', ')}, got ${JSON.stringify(table)}`);
      return { source: stringField(o, 'source', SOURCE_LABEL), run: intField(o, 'run', 1, 2 ** 31), table: table as T, index: intField(o, 'index', 0, 10_000_000) };
    },
    jobId: (p) => `import-${p.source}-${p.run}-${spec.idPart(p.table, p.index)}`,
    async handle(p, ctx) {
      const name = spec.name(p.table, p.index);
      if (await ctx.storage.imports.chunkRecord(p.source, p.run, name)) return { read: 0, written: 0, rejected: 0, skipped: true };
      const run = await ctx.storage.imports.run(p.source, p.run);
      if (!run) throw new JobPayloadError(`no import run ${p.run} of ${p.source} in the ledger`);
      const plan = parsePlan(run.plan);
      const chunk = spec.chunkOf(plan, p.table, p.index);
      if (!chunk) throw new JobPayloadError(`import run ${p.run} of ${p.source} has no chunk ${name}`);
      throwIfStopping(ctx);
      const startedAt = Date.now();
      const outcome = await spec.run(ctx, plan, p.table, chunk.range);
      await ctx.storage.imports.chunkDone(p.source, p.run, {
        chunk: name,
        rowsRead: outcome.read,
        rowsWritten: outcome.written,
        rejected: outcome.rejected,
        notes: outcome.notes.join('\n'),
        worker: ctx.worker,
        startedAt,
        finishedAt: Date.now(),
      });
      // Rows imported with something left out are noted as well as rejected ones: both are the operator's to fix in the source.
      if (outcome.notes.length > 0) ctx.log('import_notes', { chunk: name, rejected: outcome.rejected, notes: outcome.notes.slice(0, 5) });
      return { read: outcome.read, written: outcome.written, rejected: outcome.rejected, skipped: false };
    },
  });
}

export const importChunkJob = passChunkJob<string>({
  kind: 'import.chunk',
  summary: 'import one chunk of an unsharded database (shardql import)',
  tables: () => servedImportSpec().sources.map((s) => s.alias),
  name: chunkName,
  idPart: chunkName,
  chunkOf: (plan, table, index) => plan.chunks[table]?.[index],
  run: (ctx, plan, table, range) => importChunk({ spec: servedImportSpec(), storage: ctx.storage, source: ctx.importSources.open(plan.url), plan }, table, range),
});

/** The ledger's name of a deletes chunk (apart from the pass's import chunks). */
export const deletesChunkName = (table: string, index: number): string => fitToColumn(`deletes:${table}.${index}`, IMPORT_CHUNK_WIDTH);

/**
 * A deletes pass's writes: each type's `@delete` mutation, or for a type with none (the viewer's)
 * its cascade under the product's write kind (`deleteViewer`); each relation's `@unrelate`. Run by
 * the served writes, so the product's hooks (feeds, events) see them as they see the gateway's.
 */
export function importDeletes(writes: DeclaredWrites, spec: ImportSpec): ImportDeletes {
  const model = servedModel();
  return {
    deleteObject(actor, object, ctx) {
      const m = model.mutations.find((x) => x.action === 'DELETE' && x.type === object.type);
      if (m) return writes.model.delete(m.name, actor, object.id, ctx);
      const kind = spec.deleteKinds[object.type] ?? `delete:${object.type}`;
      return writes.model.run(writes.model.cascadePlan(kind, object), object.id, {}, ctx);
    },
    unrelate(relation, actor, to, ctx) {
      const m = model.mutations.find((x) => x.action === 'UNRELATE' && x.relation === relation);
      if (!m) throw new Error(`the model declares no @unrelate of ${relation}: a deletes pass cannot undo its edges`);
      return writes.model.relate(m.name, actor, to, ctx);
    },
  };
}

/** One key range of a deletes pass (`shardql import --deletes`): the source's deletes carried into the shards by the product's own deletes. */
export const importDeletesJob = passChunkJob<string>({
  kind: 'import.deletes',
  summary: 'carry the source deletes of one key range into the shards (shardql import --deletes)',
  tables: () => servedImportSpec().deletePhases.flat(),
  name: deletesChunkName,
  idPart: (table, index) => `deletes-${table}.${index}`,
  chunkOf: (plan, table, index) => plan.deletes?.[table]?.[index],
  async run(ctx, plan, table, range) {
    const writes = servedWrites({ storage: ctx.storage, topology: () => ctx.topology(), jobs: ctx.jobs, log: ctx.log, ...(ctx.writeFaults ? { faults: ctx.writeFaults } : {}) });
    const spec = servedImportSpec();
    try {
      return await deleteChunk({ spec, storage: ctx.storage, source: ctx.importSources.open(plan.url), plan, writes: importDeletes(writes, spec) }, table, range);
    } finally {
      await writes.settled(); // the unlikes' intent completions, deferred, are this job's to finish
    }
  },
});
