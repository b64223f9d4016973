/**
 * The source schema `shardql import` expects by default, derived from the served model, and the
 * order its tables are imported in. Pure: the model and a product's names in, plain data out.
 *
 *   - one source table per object type, named as its `@object(table:)`, with the columns `id`, each
 *     reference's key (`@ref(key:)`: owner_id, board_id …), each unique stored field (username),
 *     `data` (JSON), `created_at` and `updated_at`; the config names a column by its role: the
 *     reference's or stored field's name (`pinner`, `username`), or id, data, createdAt, updatedAt;
 *   - one source table per relation the viewer writes (`@relate`), named as the relation, with the
 *     columns `from_id`, `to_id` and `created_at` (roles from, to, createdAt);
 *   - phases from the references: a type after the types it references. A reference to the type's
 *     own kind (a pin's `via`) is set by a last pass over that table once every object exists; the
 *     relations come last. Lists a reference writes (`@ref(listedIn:)`) are written with the object.
 *
 * What is a product's and not in the model (its legacy table names, a sign-up credential that is no
 * stored field, the wording of its notes) it hands in as `ImportNames`
 * (src/product/pinterest/importSource.ts). For Pinterest's model this gives:
 *
 *   phases: [['users'], ['boards'], ['pins'], ['repins', 'comments', 'likes', 'follows', 'boardFollows']]
 */
import type { ModelData, ObjectDef } from './model/model.ts';

/**
 * What a product says of its source database beyond its model. Every part is optional: a model
 * with no product imports from the derived defaults.
 */
export interface ImportNames {
  /**
   * The source table of a relation the viewer writes, by the relation's table: its name in the
   * config, in phases and progress (`likes`), and its default table and columns.
   */
  readonly relations?: Readonly<Record<string, { readonly alias: string; readonly table: string; readonly from: string; readonly to: string }>>;
  /**
   * Columns of an object's table that are no stored field but are claimed in the mod shard and kept
   * in the blob (a sign-up's email), by type. Optional: a source without the column has none.
   */
  readonly credentials?: Readonly<Record<string, readonly { readonly role: string; readonly column: string; readonly namespace: string }[]>>;
  /** The last pass of a reference to its own type, by `type.field`: its name and how its notes read. */
  readonly selfRefs?: Readonly<Record<string, SelfRefWording>>;
  /**
   * Types whose owner must own the object they are placed with (a pin on its pinner's own board),
   * with how a refused row reads.
   */
  readonly sameOwner?: Readonly<Record<string, (oldId: string, owner: string, parent: string) => string>>;
  /** Relations whose edge from an object to itself the product refuses (nobody follows themself), with how a refused row reads. */
  readonly noSelfEdges?: Readonly<Record<string, (oldId: string) => string>>;
  /** The write kind of a delete the model declares no `@delete` for (the viewer's own account), by type. */
  readonly deleteKinds?: Readonly<Record<string, string>>;
}

export interface SelfRefWording {
  readonly pass: string;
  /** The row's reference names an object the source has but the import did not make. */
  readonly notImported?: (oldId: string, refOld: string) => string;
  /** The reference names an object deleted in the shards. */
  readonly deleted?: (oldId: string, refOld: string) => string;
}

/** A reference as the import reads it. */
export interface SourceRef {
  /** The role (the reference's field: `pinner`). */
  readonly field: string;
  /** The blob's key and the default column (`pinner_id`). */
  readonly key: string;
  readonly to: string;
  /** `@ref(onDelete: UNLINK)`: a row may have none (null), and the source may lack the column. */
  readonly optional: boolean;
  /** To the object's own type: set in the type's last pass. */
  readonly self: boolean;
}

export interface ObjectSource {
  readonly kind: 'object';
  /** The config's and the progress's name of the table (`users`). */
  readonly alias: string;
  /** The object type (its key: `user`). */
  readonly type: string;
  /** The reference whose object's shard it lands on; null: an open shard picked from its old ID. */
  readonly placeWith: string | null;
  /** `placeWith` first, then the others as declared: the order a missing one is reported in. */
  readonly refs: readonly SourceRef[];
  /** Unique stored fields, claimed in the mod shard (`username`): role = field, blob key, namespace. */
  readonly unique: readonly { readonly role: string; readonly key: string; readonly namespace: string; readonly required: boolean }[];
  /** Product credentials (`email`): role = blob key, namespace. */
  readonly credentials: readonly { readonly role: string; readonly namespace: string }[];
  /** Its owner must own the object it is placed with: its owner's role, the placed-with type's owner role, and how a refusal reads. */
  readonly sameOwner: { readonly owner: string; readonly parentOwner: string; readonly refused: (oldId: string, owner: string, parent: string) => string } | null;
  /**
   * Blob keys the importer sets itself, never copied from a data column: `active`, every reference
   * key of the model (a blob's references are read by key whatever its type) and this type's unique
   * fields and credentials (a user's username and email; a tag's name, not a user's).
   */
  readonly reserved: ReadonlySet<string>;
}

export interface SelfRefPass {
  readonly kind: 'selfRef';
  readonly alias: string;
  /** The object table it reads again (`pins`). */
  readonly object: string;
  readonly type: string;
  readonly field: string;
  /** The list the reference writes (`pin_repinned_as_pins`). */
  readonly listing: string;
  readonly wording: Required<SelfRefWording>;
}

export interface RelationSource {
  readonly kind: 'relation';
  readonly alias: string;
  /** The mapping table the viewer writes (`user_likes_pins`), and its mirror, if any. */
  readonly relation: string;
  readonly inverse: string | null;
  readonly from: string;
  readonly to: string;
  /** The product refuses an edge from an object to itself: how such a row reads; null: allowed. */
  readonly noSelfEdge: ((oldId: string) => string) | null;
}

export type SourceSpec = ObjectSource | SelfRefPass | RelationSource;

/** One table's column roles: the config's keys (`table` and `fields` besides), default columns, which may be absent. */
export interface TableRoles {
  readonly roles: readonly string[];
  readonly defaults: Readonly<Record<string, string>>;
  /** Default columns a source may lack (then: no such value). */
  readonly optional: ReadonlySet<string>;
  /** Roles the config may set to null. */
  readonly nullable: ReadonlySet<string>;
}

export interface ImportSpec {
  /** Every source (config) table, in phase order: objects and relations, no last passes. */
  readonly tables: readonly (ObjectSource | RelationSource)[];
  /** Every chunked table in phase order, last passes included. */
  readonly sources: readonly SourceSpec[];
  readonly phases: readonly (readonly string[])[];
  /** A deletes pass: the phases without the last passes (a self-reference's object is in its table). */
  readonly deletePhases: readonly (readonly string[])[];
  /** Tables a source may lack when the config does not name them: those no other type references, and relations. */
  readonly optionalTables: ReadonlySet<string>;
  /** Object tables `--verify` compares: types that own a list (whose counts it checks). */
  readonly verified: readonly string[];
  readonly roles: ReadonlyMap<string, TableRoles>;
  readonly defaultTables: ReadonlyMap<string, string>;
  readonly deleteKinds: Readonly<Record<string, string>>;
  /** The owner reference of each type that has one (`@ref(owner: true)`): who deletes an object. */
  readonly owners: ReadonlyMap<string, string>;
}

export class ImportSpecError extends Error {
  override readonly name = 'ImportSpecError';
}

/** `pins` → source spec; throws for a name the spec does not have. */
export function sourceOf(spec: ImportSpec, alias: string): SourceSpec {
  const s = spec.sources.find((x) => x.alias === alias);
  if (!s) throw new ImportSpecError(`no source table ${JSON.stringify(alias)} (expected ${spec.sources.map((x) => x.alias).join(', ')})`);
  return s;
}

/** The object source of a type. */
export function objectSourceOf(spec: ImportSpec, type: string): ObjectSource | undefined {
  return spec.tables.find((t): t is ObjectSource => t.kind === 'object' && t.type === type);
}

const OBJECT_TIMES = { createdAt: 'created_at', updatedAt: 'updated_at' } as const;

/** The derived source schema of `model`, with the product's names over it. */
export function deriveImportSpec(model: ModelData, names: ImportNames = {}): ImportSpec {
  const byKey = new Map(model.objects.map((o) => [o.key, o]));
  const refKeys = model.objects.flatMap((o) => o.refs.map((r) => r.key));
  const objects: ObjectSource[] = model.objects.map((o) => objectSource(o, byKey, names, refKeys));
  const roles = new Map<string, TableRoles>();
  const defaultTables = new Map<string, string>();
  for (const o of model.objects) {
    const src = objects.find((s) => s.type === o.key)!;
    const r: string[] = ['id'];
    const defaults: Record<string, string> = { id: 'id', data: 'data', ...OBJECT_TIMES };
    const optional = new Set<string>(['data', 'updatedAt']);
    const nullable = new Set<string>(['data', 'updatedAt']);
    for (const u of src.unique) (r.push(u.role), (defaults[u.role] = u.key));
    for (const c of names.credentials?.[o.key] ?? []) (r.push(c.role), (defaults[c.role] = c.column), optional.add(c.role), nullable.add(c.role));
    for (const ref of src.refs) {
      r.push(ref.field);
      defaults[ref.field] = ref.key;
      if (ref.optional) (optional.add(ref.field), nullable.add(ref.field));
    }
    r.push('data', 'fields', 'createdAt', 'updatedAt');
    roles.set(src.alias, { roles: ['table', ...r], defaults, optional, nullable });
    defaultTables.set(src.alias, o.table);
  }

  // Levels: a type one after the deepest type it references (its own type aside).
  const level = new Map<string, number>();
  const levelOf = (key: string, seen: readonly string[]): number => {
    const known = level.get(key);
    if (known !== undefined) return known;
    if (seen.includes(key)) throw new ImportSpecError(`the model's references go round (${[...seen, key].join(' → ')}): no order imports them`);
    const o = byKey.get(key)!;
    const l = Math.max(-1, ...o.refs.filter((r) => r.to !== key).map((r) => levelOf(r.to, [...seen, key]))) + 1;
    level.set(key, l);
    return l;
  };
  for (const o of model.objects) levelOf(o.key, []);

  const selfPasses: SelfRefPass[] = objects.flatMap((src) =>
    src.refs.filter((r) => r.self).map((r): SelfRefPass => {
      const def = byKey.get(src.type)!.refs.find((x) => x.field === r.field)!;
      if (def.listedIn === null) throw new ImportSpecError(`${src.type}.${r.field} references its own type without @ref(listedIn:): the import cannot list it`);
      const w = names.selfRefs?.[`${src.type}.${r.field}`];
      return {
        kind: 'selfRef',
        alias: w?.pass ?? `${src.alias}_${r.field}`,
        object: src.alias,
        type: src.type,
        field: r.field,
        listing: def.listedIn,
        wording: {
          pass: w?.pass ?? `${src.alias}_${r.field}`,
          notImported: w?.notImported ?? ((id, ref) => `${src.type} ${id}: its ${r.field} ${ref} was not imported, so it is imported without it (${r.field}: null)`),
          deleted: w?.deleted ?? ((id, ref) => `${src.type} ${id}: its ${r.field} ${ref} is deleted in the shards, so it is not listed under it (${r.field}: null)`),
        },
      };
    }),
  );

  const relations: RelationSource[] = model.relations
    .filter((r) => r.writer === 'VIEWER' && r.from === model.viewer)
    .map((r) => {
      const n = names.relations?.[r.table];
      const alias = n?.alias ?? r.table;
      roles.set(alias, { roles: ['table', 'from', 'to', 'createdAt'], defaults: { from: n?.from ?? 'from_id', to: n?.to ?? 'to_id', createdAt: 'created_at' }, optional: new Set(), nullable: new Set() });
      defaultTables.set(alias, n?.table ?? r.table);
      return { kind: 'relation', alias, relation: r.table, inverse: r.inverse, from: r.from, to: r.to, noSelfEdge: names.noSelfEdges?.[r.table] ?? null };
    });

  // Object phases by level; the deepest level joins the last phase unless a last pass or a relation there needs its objects.
  const depth = Math.max(...level.values());
  const objectPhases: ObjectSource[][] = Array.from({ length: depth + 1 }, (_, l) => objects.filter((o) => level.get(o.type) === l));
  const deepest = objectPhases.at(-1)!.map((o) => o.type);
  const merge = objectPhases.length > 1 && !selfPasses.some((p) => deepest.includes(p.type)) && !relations.some((r) => deepest.includes(r.from) || deepest.includes(r.to));
  const heads = merge ? objectPhases.slice(0, -1) : objectPhases;
  const last = [...selfPasses.map((p) => p.alias), ...(merge ? objectPhases.at(-1)!.map((o) => o.alias) : []), ...relations.map((r) => r.alias)];
  const phases = [...heads.map((p) => p.map((o) => o.alias)), ...(last.length > 0 ? [last] : [])];
  const selfAliases = new Set(selfPasses.map((p) => p.alias));
  const deletePhases = phases.map((p) => p.filter((a) => !selfAliases.has(a))).filter((p) => p.length > 0);
  const all: SourceSpec[] = [...objects, ...selfPasses, ...relations];
  const sources = phases.flat().map((a) => all.find((s) => s.alias === a)!);

  const referenced = new Set(model.objects.flatMap((o) => o.refs.filter((r) => r.to !== o.key).map((r) => r.to)));
  const owning = new Set(model.relations.map((r) => r.from));
  return {
    tables: sources.filter((s): s is ObjectSource | RelationSource => s.kind !== 'selfRef'),
    sources,
    phases,
    deletePhases,
    optionalTables: new Set([...objects.filter((o) => !referenced.has(o.type)).map((o) => o.alias), ...relations.map((r) => r.alias)]),
    verified: phases.flat().filter((a) => objects.some((o) => o.alias === a && owning.has(o.type))),
    roles,
    defaultTables,
    deleteKinds: names.deleteKinds ?? {},
    owners: new Map(model.objects.flatMap((o) => o.refs.filter((r) => r.owner).map((r) => [o.key, r.field] as const))),
  };
}

function objectSource(o: ObjectDef, byKey: ReadonlyMap<string, ObjectDef>, names: ImportNames, refKeys: readonly string[]): ObjectSource {
  const refs = [...o.refs].sort((a, b) => Number(b.field === o.placeWith) - Number(a.field === o.placeWith));
  const owner = o.refs.find((r) => r.owner);
  const placedWith = o.placeWith === null ? undefined : byKey.get(o.refs.find((r) => r.field === o.placeWith)!.to);
  const parentOwner = placedWith?.refs.find((r) => r.owner);
  const refused = names.sameOwner?.[o.key];
  if (refused && (!owner || !parentOwner)) throw new ImportSpecError(`${o.key}: a same-owner rule needs an owner on it and on the object it is placed with`);
  const unique = o.stored.filter((f) => f.uniqueIn !== null);
  const credentials = names.credentials?.[o.key] ?? [];
  return {
    kind: 'object',
    alias: o.table,
    type: o.key,
    placeWith: o.placeWith,
    refs: refs.map((r) => ({ field: r.field, key: r.key, to: r.to, optional: r.onDelete === 'UNLINK', self: r.to === o.key })),
    unique: unique.map((f) => ({ role: f.field, key: f.key, namespace: f.uniqueIn!, required: f.required })),
    credentials: credentials.map((c) => ({ role: c.role, namespace: c.namespace })),
    sameOwner: refused && owner && parentOwner ? { owner: owner.field, parentOwner: parentOwner.field, refused } : null,
    reserved: new Set(['active', ...refKeys, ...unique.map((f) => f.key), ...credentials.map((c) => c.role)]),
  };
}
