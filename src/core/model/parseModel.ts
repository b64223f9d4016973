/**
 * Reads the declared model out of SDL: the directives of schema/model.graphql on the types and
 * fields of a schema, parsed once into plain data (model.ts). Pure: text in, data out. Every problem
 * is collected and reported together, each naming the type and field it is on:
 *
 *   parseModel('type Query { viewer: User } type User @object(typeNumber: 3, table: "users") { id: ID! }')
 *   // { viewer: 'user', objects: [{ name: 'User', key: 'user', typeNumber: 3, table: 'users', … }], … }
 */
import { Kind, parse, type ConstDirectiveNode, type ConstValueNode, type DocumentNode, type FieldDefinitionNode, type ObjectTypeDefinitionNode, type TypeNode } from 'graphql';
import { objectKey, type MutationAction, type MutationDef, type ModelData, type ObjectDef, type RefDef, type RelationDef, type RelationOrder, type RelationWriter, type StoredFieldDef, type StoredFormat } from './model.ts';

/** The declaration is wrong; `problems` lists every mistake found, each on its own line. */
export class ModelError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`The declared model has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n  ${problems.join('\n  ')}`);
    this.name = 'ModelError';
  }
}

const MAX_TYPE_NUMBER = 1023; // 10 bits of the ID (core/ids.ts)
const IDENTIFIER = /^[a-z][a-z0-9_]{0,63}$/;
const FIELD_DIRECTIVES = ['stored', 'ref', 'relation', 'count', 'viewerEdge'] as const;
const TYPE_DIRECTIVES = ['object', 'list'] as const;
const MUTATION_DIRECTIVES: Record<string, MutationAction> = {
  create: 'CREATE',
  update: 'UPDATE',
  delete: 'DELETE',
  relate: 'RELATE',
  unrelate: 'UNRELATE',
  reorder: 'REORDER',
  custom: 'CUSTOM',
};

/** Every directive of the vocabulary (schema/model.graphql). */
export const MODEL_DIRECTIVES: readonly string[] = [...TYPE_DIRECTIVES, ...FIELD_DIRECTIVES, ...Object.keys(MUTATION_DIRECTIVES)];

/** `BoardSection` → `board_section`: how a type is spelled in a mapping table's name. */
export function snakeName(typeName: string): string {
  return typeName.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

type Args = ReadonlyMap<string, ConstValueNode>;

function directive(node: { readonly directives?: readonly ConstDirectiveNode[] | undefined }, name: string): Args | undefined {
  const d = node.directives?.find((x) => x.name.value === name);
  return d === undefined ? undefined : new Map((d.arguments ?? []).map((a) => [a.name.value, a.value]));
}

function namedType(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedType(type.type);
}

/** Reads directive arguments with their types, recording a problem for a value of the wrong kind. */
class ArgReader {
  constructor(
    private readonly problems: string[],
    private readonly where: string,
    private readonly args: Args,
  ) {}

  string(name: string): string | null {
    const v = this.args.get(name);
    if (v === undefined || v.kind === Kind.NULL) return null;
    if (v.kind === Kind.STRING) return v.value;
    this.problems.push(`${this.where}: expected ${name} to be a string`);
    return null;
  }

  int(name: string): number | null {
    const v = this.args.get(name);
    if (v === undefined || v.kind === Kind.NULL) return null;
    if (v.kind === Kind.INT) return Number(v.value);
    this.problems.push(`${this.where}: expected ${name} to be an integer`);
    return null;
  }

  bool(name: string, fallback: boolean): boolean {
    const v = this.args.get(name);
    if (v === undefined || v.kind === Kind.NULL) return fallback;
    if (v.kind === Kind.BOOLEAN) return v.value;
    this.problems.push(`${this.where}: expected ${name} to be true or false`);
    return fallback;
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const v = this.args.get(name);
    if (v === undefined || v.kind === Kind.NULL) return fallback;
    if (v.kind === Kind.ENUM && (values as readonly string[]).includes(v.value)) return v.value as T;
    this.problems.push(`${this.where}: expected ${name} to be one of ${values.join(', ')}`);
    return fallback;
  }
}

interface PendingRelation extends Omit<RelationDef, 'writer'> {}

export function parseModel(sdl: string | DocumentNode): ModelData {
  const doc = typeof sdl === 'string' ? parse(sdl, { noLocation: true }) : sdl;
  const problems: string[] = [];
  const types = new Map<string, ObjectTypeDefinitionNode>();
  for (const def of doc.definitions) if (def.kind === Kind.OBJECT_TYPE_DEFINITION) types.set(def.name.value, def);

  const declared = [...types.values()].filter((t) => directive(t, 'object') !== undefined);
  const keyOf = new Map(declared.map((t) => [t.name.value, objectKey(t.name.value)]));
  /** The object key of a declared type, or a problem naming where it was expected. */
  const objectRef = (where: string, typeName: string): string => {
    const key = keyOf.get(typeName);
    if (key === undefined) problems.push(`${where}: ${typeName} is not an @object type`);
    return key ?? typeName;
  };

  const viewerField = types.get('Query')?.fields?.find((f) => f.name.value === 'viewer');
  const viewer = viewerField ? objectRef('Query.viewer', namedType(viewerField.type)) : '';
  if (!viewerField) problems.push('Query: expected a `viewer` field naming the type of the viewer');

  const objects: ObjectDef[] = [];
  const relations: PendingRelation[] = [];
  for (const t of declared) objects.push(readObject(t, types, problems, objectRef, relations));

  const mutations = (types.get('Mutation')?.fields ?? []).map((f) => readMutation(f, problems, objectRef));

  checkUnique(problems, objects.map((o) => [`${o.name}`, String(o.typeNumber)]), 'type number');
  checkUnique(problems, [...objects.map((o) => [o.name, o.table] as const), ...relations.map((r) => [`${r.from}.${r.field ?? '@list'}`, r.table] as const)], 'table');
  const finished = finishRelations(problems, relations, objects, mutations, viewer);
  checkObjects(problems, objects, finished, viewer);
  checkMutations(problems, mutations, finished, objects, types.get('Mutation'), viewer);

  if (problems.length > 0) throw new ModelError(problems);
  return { viewer, objects, relations: finished, mutations };
}

function readObject(
  t: ObjectTypeDefinitionNode,
  types: ReadonlyMap<string, ObjectTypeDefinitionNode>,
  problems: string[],
  objectRef: (where: string, typeName: string) => string,
  relations: PendingRelation[],
): ObjectDef {
  const name = t.name.value;
  const args = new ArgReader(problems, `${name} @object`, directive(t, 'object')!);
  const typeNumber = args.int('typeNumber') ?? 0;
  const table = args.string('table') ?? '';
  if (!Number.isInteger(typeNumber) || typeNumber < 1 || typeNumber > MAX_TYPE_NUMBER) problems.push(`${name} @object: expected typeNumber from 1 to ${MAX_TYPE_NUMBER}, got ${typeNumber}`);
  if (!IDENTIFIER.test(table)) problems.push(`${name} @object: expected table to be a lower-case SQL name, got '${table}'`);

  const stored: StoredFieldDef[] = [];
  const refs: RefDef[] = [];
  const counts: { field: string; relation: string }[] = [];
  const viewerEdges: { field: string; relation: string }[] = [];
  for (const f of t.fields ?? []) {
    const field = f.name.value;
    const where = `${name}.${field}`;
    const used = FIELD_DIRECTIVES.filter((d) => directive(f, d) !== undefined);
    if (used.length > 1) problems.push(`${where}: expected at most one of @${FIELD_DIRECTIVES.join(', @')}, got @${used.join(' and @')}`);
    const kind = used[0];
    if (kind === undefined) continue;
    const a = new ArgReader(problems, `${where} @${kind}`, directive(f, kind)!);
    const type = namedType(f.type);
    const nonNull = f.type.kind === Kind.NON_NULL_TYPE;
    switch (kind) {
      case 'stored': {
        if (type !== 'String') problems.push(`${where} @stored: expected a String field, got ${type}`);
        const maxLength = a.int('maxLength');
        if (maxLength !== null && maxLength < 1) problems.push(`${where} @stored: expected maxLength ≥ 1, got ${maxLength}`);
        stored.push({
          field,
          key: a.string('key') ?? field,
          required: nonNull,
          maxLength,
          format: a.oneOf<StoredFormat>('format', ['TEXT', 'URL', 'HANDLE', 'EMAIL'], 'TEXT'),
          immutable: a.bool('immutable', false),
          uniqueIn: a.string('unique'),
        });
        break;
      }
      case 'ref': {
        const key = a.string('key');
        if (key === null) problems.push(`${where} @ref: expected a key (the blob's field holding the ID)`);
        refs.push({
          field,
          key: key ?? field,
          to: objectRef(`${where} @ref`, type),
          owner: a.bool('owner', false),
          listedIn: a.string('listedIn'),
          onDelete: a.oneOf('onDelete', ['DELETE', 'UNLINK'], 'UNLINK'),
        });
        break;
      }
      case 'relation': {
        const to = connectionNode(types, type);
        if (to === undefined) problems.push(`${where} @relation: expected a connection type (edges { node }), got ${type}`);
        relations.push({
          table: a.string('table') ?? '',
          from: objectKey(name),
          to: to === undefined ? '' : objectRef(`${where} @relation`, to),
          field,
          inverse: a.string('inverse'),
          order: a.oneOf<RelationOrder>('order', ['TIME', 'OWNER'], 'TIME'),
          timeRange: a.bool('timeRange', false),
        });
        break;
      }
      case 'count':
      case 'viewerEdge': {
        const expected = kind === 'count' ? 'Int' : 'Boolean';
        if (type !== expected || !nonNull) problems.push(`${where} @${kind}: expected ${expected}!, got a ${nonNull ? '' : 'nullable '}${type}`);
        (kind === 'count' ? counts : viewerEdges).push({ field, relation: a.string('relation') ?? '' });
        break;
      }
    }
  }
  for (const d of t.directives ?? []) {
    if (d.name.value !== 'list') continue;
    const a = new ArgReader(problems, `${name} @list`, new Map((d.arguments ?? []).map((x) => [x.name.value, x.value])));
    const to = a.string('to') ?? '';
    relations.push({ table: a.string('table') ?? '', from: objectKey(name), to: objectRef(`${name} @list`, to), field: null, inverse: null, order: 'TIME', timeRange: false });
  }
  return { name, key: objectKey(name), typeNumber, table, placeWith: args.string('placeWith'), stored, refs, counts, viewerEdges };
}

/** `PinConnection` → `Pin`: the node type of a connection's edges, if it is one. */
function connectionNode(types: ReadonlyMap<string, ObjectTypeDefinitionNode>, connection: string): string | undefined {
  const edges = types.get(connection)?.fields?.find((f) => f.name.value === 'edges');
  const edge = edges && types.get(namedType(edges.type));
  const node = edge?.fields?.find((f) => f.name.value === 'node');
  return node && namedType(node.type);
}

function readMutation(f: FieldDefinitionNode, problems: string[], objectRef: (where: string, typeName: string) => string): MutationDef {
  const name = f.name.value;
  const where = `Mutation.${name}`;
  const used = Object.keys(MUTATION_DIRECTIVES).filter((d) => directive(f, d) !== undefined);
  if (used.length !== 1) {
    problems.push(`${where}: expected exactly one of @${Object.keys(MUTATION_DIRECTIVES).join(', @')}, got ${used.length === 0 ? 'none' : `@${used.join(' and @')}`}`);
  }
  const kind = used[0] ?? 'custom';
  const a = new ArgReader(problems, `${where} @${kind}`, directive(f, kind) ?? new Map());
  const action = MUTATION_DIRECTIVES[kind]!;
  const typeName = action === 'CREATE' || action === 'UPDATE' || action === 'DELETE' ? a.string('type') : null;
  const relation = action === 'RELATE' || action === 'UNRELATE' || action === 'REORDER' ? a.string('relation') : null;
  const argument = action === 'CREATE' || action === 'CUSTOM' ? null : (a.string('argument') ?? 'id');
  if (argument !== null && !(f.arguments ?? []).some((x) => x.name.value === argument)) problems.push(`${where} @${kind}: expected an argument '${argument}'`);
  return { name, action, type: typeName === null ? null : objectRef(`${where} @${kind}`, typeName), relation, argument };
}

function checkUnique(problems: string[], pairs: readonly (readonly [string, string])[], what: string): void {
  const seen = new Map<string, string>();
  for (const [owner, value] of pairs) {
    const first = seen.get(value);
    if (first !== undefined) problems.push(`${owner}: ${what} ${value} is already ${first}'s`);
    else seen.set(value, owner);
  }
}

/** Checks each relation against the objects and mutations, and says who writes it. */
function finishRelations(problems: string[], pending: readonly PendingRelation[], objects: readonly ObjectDef[], mutations: readonly MutationDef[], viewer: string): RelationDef[] {
  const byTable = new Map(pending.map((r) => [r.table, r]));
  const nameOf = new Map(objects.map((o) => [o.key, o.name]));
  const listedBy = new Map<string, string>();
  for (const o of objects) for (const ref of o.refs) if (ref.listedIn !== null) listedBy.set(ref.listedIn, `${o.name}.${ref.field}`);
  const relatedBy = new Set(mutations.filter((m) => m.action === 'RELATE').map((m) => m.relation));

  const writerOf = (r: PendingRelation): RelationWriter | undefined => {
    if (listedBy.has(r.table)) return 'REF';
    if (relatedBy.has(r.table)) return 'VIEWER';
    if (r.inverse !== null && relatedBy.has(r.inverse)) return 'INVERSE';
    return undefined;
  };

  return pending.map((r) => {
    const where = r.field === null ? `${nameOf.get(r.from) ?? r.from} @list(table: "${r.table}")` : `${nameOf.get(r.from) ?? r.from}.${r.field} @relation(table: "${r.table}")`;
    const from = nameOf.get(r.from);
    const to = nameOf.get(r.to);
    if (from !== undefined && to !== undefined) {
      const pattern = new RegExp(`^${snakeName(from)}_[a-z0-9]+(_[a-z0-9]+)*_${snakeName(to)}s$`);
      if (!pattern.test(r.table)) problems.push(`${where}: expected a name noun_verb_noun: ${snakeName(from)}_<verb>_${snakeName(to)}s`);
    }
    if (r.inverse !== null) {
      const inv = byTable.get(r.inverse);
      if (inv === undefined) problems.push(`${where}: its inverse ${r.inverse} is not declared by any @relation`);
      else if (inv.from !== r.to || inv.to !== r.from || inv.inverse !== r.table) problems.push(`${where}: its inverse ${r.inverse} must run ${r.to} → ${r.from} and name ${r.table} as its inverse`);
    }
    const writer = writerOf(r);
    if (writer === undefined) problems.push(`${where}: nothing writes it: name it in a @ref(listedIn:) or a @relate mutation, or make it the inverse of one`);
    if (writer === 'REF' && relatedBy.has(r.table)) problems.push(`${where}: written both by ${listedBy.get(r.table)} and by a @relate mutation`);
    if (writer === 'REF' && r.inverse !== null) problems.push(`${where}: a list written by ${listedBy.get(r.table)} has no inverse`);
    if (writer === 'VIEWER' && r.from !== viewer) problems.push(`${where}: a @relate mutation writes it, so its from side must be the viewer's type`);
    return { ...r, writer: writer ?? 'REF' };
  });
}

function checkObjects(problems: string[], objects: readonly ObjectDef[], relations: readonly RelationDef[], viewer: string): void {
  const byTable = new Map(relations.map((r) => [r.table, r]));
  // Decoded objects carry their references by field name (core/objectRefs.ts): one name, one key.
  const refKeys = new Map<string, string>();
  for (const o of objects) {
    for (const ref of o.refs) {
      const key = refKeys.get(ref.field);
      if (key !== undefined && key !== ref.key) problems.push(`${o.name}.${ref.field} @ref: key '${ref.key}', but another type keeps ${ref.field} under '${key}': one reference name, one key`);
      refKeys.set(ref.field, key ?? ref.key);
    }
  }
  for (const o of objects) {
    if (o.placeWith !== null && !o.refs.some((r) => r.field === o.placeWith)) problems.push(`${o.name} @object: placeWith '${o.placeWith}' is not a @ref field of ${o.name}`);
    for (const ref of o.refs) {
      if (ref.listedIn === null) continue;
      const r = byTable.get(ref.listedIn);
      if (r === undefined) problems.push(`${o.name}.${ref.field} @ref: listedIn ${ref.listedIn} is not declared by any @relation`);
      else if (r.from !== ref.to || r.to !== o.key) problems.push(`${o.name}.${ref.field} @ref: listedIn ${ref.listedIn} must run ${ref.to} → ${o.key}, not ${r.from} → ${r.to}`);
    }
    if (o.refs.filter((r) => r.owner).length > 1) problems.push(`${o.name}: expected at most one @ref(owner: true)`);
    for (const c of o.counts) {
      const r = byTable.get(c.relation);
      if (r === undefined || r.from !== o.key) problems.push(`${o.name}.${c.field} @count: ${c.relation} is not a relation listed from ${o.name}`);
    }
    for (const e of o.viewerEdges) {
      const r = byTable.get(e.relation);
      if (r === undefined || r.to !== o.key || r.from !== viewer) problems.push(`${o.name}.${e.field} @viewerEdge: ${e.relation} is not a relation from the viewer to ${o.name}`);
    }
  }
}

function checkMutations(problems: string[], mutations: readonly MutationDef[], relations: readonly RelationDef[], objects: readonly ObjectDef[], mutationType: ObjectTypeDefinitionNode | undefined, viewer: string): void {
  if (mutationType === undefined) return;
  const byTable = new Map(relations.map((r) => [r.table, r]));
  for (const m of mutations) {
    if (m.relation === null) continue;
    const r = byTable.get(m.relation);
    const where = `Mutation.${m.name}`;
    if (r === undefined) problems.push(`${where}: ${m.relation} is not declared by any @relation`);
    else if (m.action === 'REORDER' && r.order !== 'OWNER') problems.push(`${where}: ${m.relation} has no owner's order (@relation(order: OWNER))`);
    else if (m.action !== 'REORDER' && r.from !== viewer) problems.push(`${where}: ${m.relation} does not start at the viewer's type`);
  }
  const deletable = new Set(mutations.filter((m) => m.action === 'DELETE').map((m) => m.type));
  for (const o of objects) {
    const owner = o.refs.find((r) => r.owner);
    if (deletable.has(o.key) && owner === undefined && o.key !== viewer) problems.push(`${o.name}: a @delete mutation needs an owner: mark one @ref(owner: true)`);
  }
}
