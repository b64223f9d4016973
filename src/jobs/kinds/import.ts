/**
 * `shardql import` as jobs: the CLI records a pass's plan in the ledger and enqueues one
 * `import.chunk` job per chunk of the current phase; any number of `shardql worker` processes run
 * them (the scripting farm). A chunk is idempotent (src/services/importer.ts): a worker killed in
 * the middle of one leaves it to run again, and the second run finishes it exactly once.
 */
import { chunkName, SOURCE_LABEL, SOURCE_TABLES, type SourceTable } from '../../core/importSchema.ts';
import { deleteChunk, importChunk, parsePlan, type DeleteTable } from '../../services/importer.ts';
import { ProductWrites } from '../../services/writes.ts';
import { defineJob, intField, JobPayloadError, objectOf, stringField, throwIfStopping } from '../jobKind.ts';

export interface ImportChunkPayload {
  /** The source label. */
  readonly source: string;
  readonly run: number;
  readonly table: SourceTable;
  readonly index: number;
}

export const importChunkJob = defineJob<ImportChunkPayload>({
  queue: 'import',
  summary: 'import one chunk of an unsharded database (shardql import)',
  encode: (p) => ({ source: p.source, run: p.run, table: p.table, index: p.index }),
  decode: (data) => {
    const o = objectOf(data, 'import.chunk');
    const table = stringField(o, 'table', /^[A-Za-z]{1,20}$/);
    if (!(SOURCE_TABLES as readonly string[]).includes(table)) throw new JobPayloadError(`table: expected one of ${SOURCE_TABLES.join(', ')}, got ${JSON.stringify(table)}`);
    return { source: stringField(o, 'source', SOURCE_LABEL), run: intField(o, 'run', 1, 2 ** 31), table: table as SourceTable, index: intField(o, 'index', 0, 10_000_000) };
  },
  // One job per chunk of a pass: enqueued again (a re-run of the CLI) while it is kept, it is not added twice.
  jobId: (p) => `import-${p.source}-${p.run}-${chunkName(p.table, p.index)}`,
  async handle(p, ctx) {
    const name = chunkName(p.table, p.index);
    if (await ctx.storage.imports.chunkRecord(p.source, p.run, name)) return { read: 0, written: 0, rejected: 0, skipped: true };
    const run = await ctx.storage.imports.run(p.source, p.run);
    if (!run) throw new JobPayloadError(`no import run ${p.run} of ${p.source} in the ledger`);
    const plan = parsePlan(run.plan);
    const chunk = plan.chunks[p.table]?.[p.index];
    if (!chunk) throw new JobPayloadError(`import run ${p.run} of ${p.source} has no chunk ${name}`);
    throwIfStopping(ctx);
    const startedAt = Date.now();
    const outcome = await importChunk({ storage: ctx.storage, source: ctx.importSources.open(plan.url), plan }, p.table, chunk.range);
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
    if (outcome.rejected > 0) ctx.log('import_rejected', { chunk: name, rejected: outcome.rejected, notes: outcome.notes.slice(0, 5) });
    return { read: outcome.read, written: outcome.written, rejected: outcome.rejected, skipped: false };
  },
});

export interface ImportDeletesPayload {
  readonly source: string;
  readonly run: number;
  readonly table: DeleteTable;
  readonly index: number;
}

const DELETE_TABLES: readonly DeleteTable[] = ['users', 'boards', 'pins', 'comments', 'likes', 'follows', 'boardFollows'];

/** The ledger's name of a deletes chunk (apart from the pass's import chunks). */
export const deletesChunkName = (table: DeleteTable, index: number): string => `deletes:${table}.${index}`;

/** One key range of a deletes pass (`shardql import --deletes`): the source's deletes carried into the shards by the product's own deletes. */
export const importDeletesJob = defineJob<ImportDeletesPayload>({
  queue: 'import',
  summary: 'carry the source deletes of one key range into the shards (shardql import --deletes)',
  encode: (p) => ({ source: p.source, run: p.run, table: p.table, index: p.index }),
  decode: (data) => {
    const o = objectOf(data, 'import.deletes');
    const table = stringField(o, 'table', /^[A-Za-z]{1,20}$/);
    if (!(DELETE_TABLES as readonly string[]).includes(table)) throw new JobPayloadError(`table: expected one of ${DELETE_TABLES.join(', ')}, got ${JSON.stringify(table)}`);
    return { source: stringField(o, 'source', SOURCE_LABEL), run: intField(o, 'run', 1, 2 ** 31), table: table as DeleteTable, index: intField(o, 'index', 0, 10_000_000) };
  },
  jobId: (p) => `import-${p.source}-${p.run}-deletes-${p.table}.${p.index}`,
  async handle(p, ctx) {
    const name = deletesChunkName(p.table, p.index);
    if (await ctx.storage.imports.chunkRecord(p.source, p.run, name)) return { read: 0, written: 0, rejected: 0, skipped: true };
    const run = await ctx.storage.imports.run(p.source, p.run);
    if (!run) throw new JobPayloadError(`no import run ${p.run} of ${p.source} in the ledger`);
    const plan = parsePlan(run.plan);
    const chunk = plan.deletes?.[p.table]?.[p.index];
    if (!chunk) throw new JobPayloadError(`import run ${p.run} of ${p.source} has no chunk ${name}`);
    throwIfStopping(ctx);
    const startedAt = Date.now();
    const writes = new ProductWrites({ storage: ctx.storage, topology: () => ctx.topology(), jobs: ctx.jobs, log: ctx.log });
    let outcome;
    try {
      outcome = await deleteChunk({ storage: ctx.storage, source: ctx.importSources.open(plan.url), plan, writes }, p.table, chunk.range);
    } finally {
      await writes.settled();
    }
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
    return { read: outcome.read, written: outcome.written, rejected: 0, skipped: false };
  },
});
