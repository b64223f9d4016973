/**
 * Reads the declared model out of SDL: the directives of schema/model.graphql on the types and
 * fields of a schema, parsed once into plain data (model.ts). Pure: text in, data out. Each file is
 * parsed as its own source, so every problem names the file, line and column it is at, what was
 * wrong and what was expected; all of them are reported together, sorted by file and line:
 *
 *   parseModel([{ name: 'schema/model.graphql', body: vocabulary }, { name: 'examples/qa/schema.graphql', body }])
 *   // { viewer: 'user', objects: [{ name: 'User', key: 'user', typeNumber: 11, table: 'users', … }], … }
 *
 *   // or throws ModelError, every problem a line:
 *   // examples/qa/schema.graphql:87:101: User.saved @relation(table: "user_saved_qs"): table 'user_saved_qs' is
 *   //   not noun_verb_noun, expected user_<verb>_questions (lowercase words joined by underscores, such as author_wrote_posts)
 */
import { Kind, Source, getLocation, parse, specifiedDirectives, visit, type ASTNode, type ConstArgumentNode, type ConstDirectiveNode, type ConstValueNode, type DefinitionNode, type DirectiveDefinitionNode, type DocumentNode, type FieldDefinitionNode, type ObjectTypeDefinitionNode, type TypeNode } from 'graphql';
import { objectKey, type MutationAction, type MutationDef, type ModelData, type ObjectDef, type ProductField, type RefDef, type RelationDef, type RelationOrder, type RelationWriter, type StoredFieldDef, type StoredFormat } from './model.ts';
import { LOOKUP_NAMESPACE_WIDTH } from '../columnWidths.ts';

/** One file of a model's SDL; `name` is its path as people see it (relative to the project). */
export interface ModelFile {
  readonly name: string;
  readonly body: string;
}

/** One mistake in a declaration, where it is. */
export interface ModelProblem {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** What was wrong, then what was expected. */
  readonly message: string;
}

/** `examples/qa/schema.graphql:12:3: <what was wrong>, expected <what>`. */
export function problemText(p: ModelProblem): string {
  return `${p.file}:${p.line}:${p.column}: ${p.message}`;
}

/** The declaration is wrong; `problems` lists every mistake found, one a line, sorted by file and line. */
/** A `@stored(unique:)` namespace: a mod-shard lookup namespace (its column's width) that also names a code. */
const UNIQUE_NAMESPACE = new RegExp(`^[a-z][a-z0-9_]{0,${LOOKUP_NAMESPACE_WIDTH - 1}}$`);

export class ModelError extends Error {
  readonly problems: readonly string[];
  constructor(readonly found: readonly ModelProblem[]) {
    const problems = found.map(problemText);
    super(`The declared model has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n  ${problems.join('\n  ')}`);
    this.name = 'ModelError';
    this.problems = problems;
  }
}

/** The name a plain SDL string is parsed under (parseModel('type Query …')). */
export const INLINE_SDL = '<sdl>';

const MAX_TYPE_NUMBER = 1023; // 10 bits of the ID (core/ids.ts)
/** An object type's name: its key is a name in the topology's `idLayout.types` (core/topology.ts). */
const OBJECT_TYPE_NAME = /^[A-Za-z][A-Za-z0-9]{0,63}$/;
/** An object table: lowercase words joined by underscores, a MySQL name (64 characters at most). */
const OBJECT_TABLE = /^(?=.{1,64}$)[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
/** A mapping table: noun_verb_noun, three words at least (`user_has_boards`, `pin_liked_by_users`). */
const MAPPING_TABLE = /^(?=.{1,64}$)[a-z][a-z0-9]*(_[a-z0-9]+){2,}$/;
const FIELD_DIRECTIVES = ['stored', 'ref', 'relation', 'count', 'viewerEdge'] as const;
/** Fields of every object type that need no directive: the ID and the creation time (graphql/modelResolvers.ts). */
const BUILT_IN_FIELDS: ReadonlySet<string> = new Set(['id', 'createdAt']);
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

/** Collects problems at the nodes they are about. */
class Problems {
  readonly found: ModelProblem[] = [];
  /** Where a problem about something missing altogether (no Query type) is reported: a file's start. */
  fallback = INLINE_SDL;

  at(node: ASTNode | undefined, message: string): void {
    this.found.push({ ...this.position(node), message });
  }

  /** Where `node` starts: its file, line and column (the file's start when it has no location). */
  position(node: ASTNode | undefined): { file: string; line: number; column: number } {
    const loc = node?.loc;
    if (loc === undefined) return { file: this.fallback, line: 1, column: 1 };
    const { line, column } = getLocation(loc.source, loc.start);
    return { file: loc.source.name, line, column };
  }

  sorted(): ModelProblem[] {
    return [...this.found].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column));
  }
}

/**
 * `schema/schema.graphql:94`: where a node is, for data that outlives the parse (ObjectDef.declaredAt).
 * A described node's text starts at its description; it is declared on the line of its first token
 * after it (`type Playlist …`), the line a reader looks for.
 */
function lineOf(node: ASTNode): string {
  const loc = node.loc;
  if (loc === undefined) return INLINE_SDL;
  const description = 'description' in node ? node.description?.loc : undefined;
  const start = description?.endToken.next ?? loc.startToken;
  return `${loc.source.name}:${start.line}`;
}

function directiveNode(node: { readonly directives?: readonly ConstDirectiveNode[] | undefined }, name: string): ConstDirectiveNode | undefined {
  return node.directives?.find((x) => x.name.value === name);
}

function namedType(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedType(type.type);
}

/** How a message names a value of the wrong kind. */
const VALUE_KINDS: Partial<Record<Kind, string>> = {
  [Kind.STRING]: 'a string',
  [Kind.INT]: 'an integer',
  [Kind.FLOAT]: 'a float',
  [Kind.BOOLEAN]: 'a boolean',
  [Kind.ENUM]: 'an enum value',
  [Kind.LIST]: 'a list',
  [Kind.OBJECT]: 'an input object',
};

/** Reads a directive's arguments with their types, recording a problem for a value of the wrong kind. */
class ArgReader {
  readonly #args: ReadonlyMap<string, ConstArgumentNode>;
  constructor(
    private readonly problems: Problems,
    /** `Note.author @ref`: what the messages say the arguments are of. */
    readonly where: string,
    /** The directive (where a missing argument is reported). */
    readonly node: ConstDirectiveNode | undefined,
  ) {
    this.#args = new Map((node?.arguments ?? []).map((a) => [a.name.value, a]));
  }

  /** The node an argument's problem is reported at: the argument's value, else the directive. */
  at(name: string): ASTNode | undefined {
    return this.#args.get(name)?.value ?? this.node;
  }

  #value(name: string): ConstValueNode | undefined {
    const v = this.#args.get(name)?.value;
    return v === undefined || v.kind === Kind.NULL ? undefined : v;
  }

  #wrong(name: string, v: ConstValueNode, expected: string): void {
    this.problems.at(v, `${this.where}: ${name} is ${VALUE_KINDS[v.kind] ?? v.kind}, expected ${expected}`);
  }

  string(name: string): string | null {
    const v = this.#value(name);
    if (v === undefined) return null;
    if (v.kind === Kind.STRING) return v.value;
    this.#wrong(name, v, 'a string');
    return null;
  }

  /** `report`: false to read again a value already read (its problem is reported once). */
  int(name: string, report = true): number | null {
    const v = this.#value(name);
    if (v === undefined) return null;
    if (v.kind === Kind.INT) return Number(v.value);
    if (report) this.#wrong(name, v, 'an integer');
    return null;
  }

  has(name: string): boolean {
    return this.#value(name) !== undefined;
  }

  /** A string the directive must have: a problem saying what it is for when it is missing. */
  required(name: string, what: string): string | null {
    if (!this.#args.has(name)) this.problems.at(this.node, `${this.where}: no ${name}, expected ${name}: ${what}`);
    return this.string(name);
  }

  bool(name: string, fallback: boolean): boolean {
    const v = this.#value(name);
    if (v === undefined) return fallback;
    if (v.kind === Kind.BOOLEAN) return v.value;
    this.#wrong(name, v, 'true or false');
    return fallback;
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const v = this.#value(name);
    if (v === undefined) return fallback;
    if (v.kind === Kind.ENUM && (values as readonly string[]).includes(v.value)) return v.value as T;
    const got = v.kind === Kind.ENUM ? v.value : v.kind === Kind.STRING ? `the string "${v.value}"` : (VALUE_KINDS[v.kind] ?? v.kind);
    this.problems.at(v, `${this.where}: ${name} is ${got}, expected one of ${values.join(', ')} (unquoted)`);
    return fallback;
  }
}

/** A relation as read, with where it was declared, before who writes it is known. */
interface PendingRelation extends Omit<RelationDef, 'writer'> {
  /** `Note.starredBy @relation(table: "…")`: how messages name it. */
  readonly where: string;
  readonly args: ArgReader;
}

/** Where each part of the model was declared: what later checks report their problems at. */
interface Declared {
  readonly objects: Map<ObjectDef, ArgReader>;
  readonly counts: Map<ObjectDef['counts'][number], ArgReader>;
  readonly viewerEdges: Map<ObjectDef['viewerEdges'][number], ArgReader>;
  readonly refs: Map<RefDef, ArgReader>;
  readonly mutations: Map<MutationDef, ArgReader>;
  /** The arguments each mutation's field takes. */
  readonly mutationArgs: Map<MutationDef, readonly string[]>;
}

/** Each file parsed as its own source (its definitions keep their file's name and lines), then joined. */
function parseFiles(files: readonly ModelFile[], problems: Problems): DocumentNode {
  const definitions: DefinitionNode[] = [];
  for (const f of files) {
    try {
      definitions.push(...parse(new Source(f.body, f.name)).definitions);
    } catch (err) {
      const e = err as { message: string; locations?: readonly { line: number; column: number }[] };
      const at = e.locations?.[0];
      problems.found.push({ file: f.name, line: at?.line ?? 0, column: at?.column ?? 0, message: `${e.message.replace(/^Syntax Error: /, 'not GraphQL: ')}, expected SDL` });
    }
  }
  return { kind: Kind.DOCUMENT, definitions };
}

/**
 * The model a schema declares. `sdl`: the files of one model (the vocabulary, schema/model.graphql,
 * among them), or one string of SDL (named `<sdl>` in messages). Throws ModelError with every problem.
 */
export function parseModel(sdl: string | readonly ModelFile[]): ModelData {
  const problems = new Problems();
  const files = typeof sdl === 'string' ? [{ name: INLINE_SDL, body: sdl }] : sdl;
  problems.fallback = files.at(-1)?.name ?? INLINE_SDL;
  const doc = parseFiles(files, problems);
  // A file that is not GraphQL leaves the rest without its types: what else would be found is noise.
  if (problems.found.length > 0) throw new ModelError(problems.sorted());
  checkDirectives(doc, problems);
  const types = new Map<string, ObjectTypeDefinitionNode>();
  for (const def of doc.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION) continue;
    const first = types.get(def.name.value);
    if (first !== undefined) problems.at(def.name, `type ${def.name.value} is declared twice (first at ${lineOf(first)}), expected one definition`);
    else types.set(def.name.value, def);
  }

  const declaredTypes = [...types.values()].filter((t) => directiveNode(t, 'object') !== undefined);
  const keyOf = new Map(declaredTypes.map((t) => [t.name.value, objectKey(t.name.value)]));
  const objectNames = declaredTypes.map((t) => t.name.value).join(', ');
  /** The object key of a declared type, or a problem at `node` saying it is none. */
  const objectRef = (node: ASTNode | undefined, where: string, typeName: string): string => {
    const key = keyOf.get(typeName);
    if (key === undefined) problems.at(node, `${where}: ${typeName} is not an @object type, expected one of ${objectNames || '(none declared)'}`);
    return key ?? typeName;
  };

  const query = types.get('Query');
  const viewerField = query?.fields?.find((f) => f.name.value === 'viewer');
  const viewer = viewerField ? objectRef(viewerField.type, 'Query.viewer', namedType(viewerField.type)) : '';
  if (!viewerField) problems.at(query, `${query ? 'Query has no field viewer' : 'no type Query'}, expected Query.viewer naming the type of the viewer`);

  const declared: Declared = { objects: new Map(), counts: new Map(), viewerEdges: new Map(), refs: new Map(), mutations: new Map(), mutationArgs: new Map() };
  const objects: ObjectDef[] = [];
  const relations: PendingRelation[] = [];
  for (const t of declaredTypes) objects.push(readObject(t, types, problems, objectRef, relations, declared));

  const mutations = (types.get('Mutation')?.fields ?? []).map((f) => readMutation(f, problems, objectRef, declared));

  checkUnique(
    problems,
    objects.map((o) => ({ owner: o.name, value: String(o.typeNumber), at: declared.objects.get(o)!.at('typeNumber'), declaredAt: o.declaredAt })),
    'type number',
    'a number no other type has (a type number is never reused)',
  );
  checkUnique(
    problems,
    [
      ...objects.map((o) => ({ owner: o.name, value: o.table, at: declared.objects.get(o)!.at('table'), declaredAt: o.declaredAt })),
      ...relations.map((r) => ({ owner: r.where, value: r.table, at: r.args.at('table'), declaredAt: lineOf(r.args.node!) })),
    ],
    'table',
    'a table no other type or relation has',
  );
  const finished = finishRelations(problems, relations, objects, mutations, viewer);
  checkObjects(problems, objects, finished, viewer, declared);
  checkMutations(problems, mutations, finished, objects, viewer, declared);

  if (problems.found.length > 0) throw new ModelError(problems.sorted());
  return { viewer, objects, relations: finished, mutations };
}

/**
 * Every directive used is one GraphQL or the vocabulary defines, and, where the vocabulary's
 * definitions are among the files, takes only the arguments they define: `@relation(tabel: …)` is
 * a misspelling to point at (the readers say what a missing argument is for).
 */
function checkDirectives(doc: DocumentNode, problems: Problems): void {
  const defined = new Map<string, DirectiveDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.DIRECTIVE_DEFINITION) defined.set(d.name.value, d);
  const known = [...new Set([...MODEL_DIRECTIVES, ...defined.keys()])];
  const builtIn = new Set(specifiedDirectives.map((d) => d.name));
  visit(doc, {
    Directive(node) {
      const name = node.name.value;
      if (builtIn.has(name)) return;
      if (!known.includes(name)) {
        problems.at(node, `@${name} is no directive of the model's vocabulary, expected one of @${known.join(', @')}`);
        return;
      }
      const definition = defined.get(name);
      if (definition === undefined) return;
      const takes = (definition.arguments ?? []).map((a) => a.name.value);
      for (const a of node.arguments ?? []) {
        if (!takes.includes(a.name.value)) problems.at(a.name, `@${name} takes no argument ${a.name.value}, expected ${takes.length > 0 ? `one of ${takes.join(', ')}` : 'none'}`);
      }
    },
  });
}

function readObject(
  t: ObjectTypeDefinitionNode,
  types: ReadonlyMap<string, ObjectTypeDefinitionNode>,
  problems: Problems,
  objectRef: (node: ASTNode | undefined, where: string, typeName: string) => string,
  relations: PendingRelation[],
  declared: Declared,
): ObjectDef {
  const name = t.name.value;
  // Its key names it in the topology's idLayout.types (core/topology.ts: letters and digits, 64 at most).
  if (!OBJECT_TYPE_NAME.test(name)) {
    problems.at(t.name, `${name}: the type's name is no type key, expected 1 to 64 letters or digits, starting with a letter (its key names it in the topology's idLayout.types)`);
  }
  const args = new ArgReader(problems, `${name} @object`, directiveNode(t, 'object'));
  const typeNumber = args.int('typeNumber') ?? 0;
  const table = args.required('table', 'its object table on every shard') ?? '';
  if (!args.has('typeNumber')) problems.at(args.node, `${args.where}: no typeNumber, expected typeNumber: its number in every ID (1 to ${MAX_TYPE_NUMBER}, never reused)`);
  else if (args.int('typeNumber', false) !== null && (typeNumber < 1 || typeNumber > MAX_TYPE_NUMBER)) {
    problems.at(args.at('typeNumber'), `${args.where}: typeNumber ${typeNumber} does not fit the ID's 10 bits, expected 1 to ${MAX_TYPE_NUMBER}`);
  }
  if (args.has('table') && !OBJECT_TABLE.test(table)) problems.at(args.at('table'), `${args.where}: table '${table}' is no object table name, expected lowercase words joined by underscores (such as ${snakeName(name)}s)`);

  const stored: StoredFieldDef[] = [];
  const refs: RefDef[] = [];
  const counts: { field: string; relation: string }[] = [];
  const viewerEdges: { field: string; relation: string }[] = [];
  const productFields: ProductField[] = [];
  const fieldsSeen = new Map<string, FieldDefinitionNode>();
  for (const f of t.fields ?? []) {
    const field = f.name.value;
    const where = `${name}.${field}`;
    const first = fieldsSeen.get(field);
    if (first !== undefined) problems.at(f.name, `${where} is declared twice (first at ${lineOf(first)}), expected one field of each name`);
    fieldsSeen.set(field, first ?? f);
    const used = FIELD_DIRECTIVES.filter((d) => directiveNode(f, d) !== undefined);
    if (used.length > 1) problems.at(directiveNode(f, used[1]!), `${where}: has @${used.join(' and @')}, expected at most one of @${FIELD_DIRECTIVES.join(', @')}`);
    const kind = used[0];
    if (kind === undefined) {
      if (!BUILT_IN_FIELDS.has(field)) productFields.push({ field, ...problems.position(f.name) });
      continue;
    }
    const a = new ArgReader(problems, `${where} @${kind}`, directiveNode(f, kind));
    const type = namedType(f.type);
    const nonNull = f.type.kind === Kind.NON_NULL_TYPE;
    switch (kind) {
      case 'stored': {
        if (type !== 'String') problems.at(f.type, `${a.where}: the field is a ${type}, expected a String`);
        const maxLength = a.int('maxLength');
        if (maxLength !== null && maxLength < 1) problems.at(a.at('maxLength'), `${a.where}: maxLength is ${maxLength}, expected 1 or more`);
        const unique = a.string('unique');
        // A namespace is a key of the mod shard's lookups (core/columnWidths.ts) and names its refusal's code
        // (<NAMESPACE>_TAKEN); `import:<type>` namespaces are the importer's own.
        if (unique !== null && !UNIQUE_NAMESPACE.test(unique)) {
          problems.at(a.at('unique'), `${a.where}: unique namespace '${unique}' is no namespace, expected 1 to ${LOOKUP_NAMESPACE_WIDTH} lowercase letters, digits or underscores, starting with a letter (such as handle)`);
        }
        stored.push({
          field,
          key: a.string('key') ?? field,
          required: nonNull,
          maxLength,
          format: a.oneOf<StoredFormat>('format', ['TEXT', 'URL', 'HANDLE', 'EMAIL'], 'TEXT'),
          immutable: a.bool('immutable', false),
          uniqueIn: unique,
        });
        break;
      }
      case 'ref': {
        const key = a.required('key', "the blob's field holding the ID");
        const ref: RefDef = {
          field,
          key: key ?? field,
          to: objectRef(f.type, a.where, type),
          owner: a.bool('owner', false),
          listedIn: a.string('listedIn'),
          onDelete: a.oneOf('onDelete', ['DELETE', 'UNLINK'], 'UNLINK'),
        };
        refs.push(ref);
        declared.refs.set(ref, a);
        break;
      }
      case 'relation': {
        const to = connectionNode(types, type);
        const relationTable = a.required('table', 'its mapping table, noun_verb_noun') ?? '';
        if (to === undefined) problems.at(f.type, `${a.where}: ${type} is no connection type, expected a type whose edges { node } are objects (such as ${type.replace(/Connection$/, '')}Connection)`);
        relations.push({
          table: relationTable,
          from: objectKey(name),
          to: to === undefined ? '' : objectRef(f.type, `${a.where} (${type}'s node)`, to),
          field,
          inverse: a.string('inverse'),
          order: a.oneOf<RelationOrder>('order', ['TIME', 'OWNER'], 'TIME'),
          timeRange: a.bool('timeRange', false),
          where: `${where} @relation(table: "${relationTable}")`,
          args: a,
        });
        break;
      }
      case 'count':
      case 'viewerEdge': {
        const expected = kind === 'count' ? 'Int' : 'Boolean';
        if (type !== expected || !nonNull) problems.at(f.type, `${a.where}: the field is a ${nonNull ? '' : 'nullable '}${type}, expected ${expected}!`);
        const entry = { field, relation: a.required('relation', `the relation (its table) whose ${kind === 'count' ? 'edges it counts' : 'edge it looks for'}`) ?? '' };
        (kind === 'count' ? counts : viewerEdges).push(entry);
        (kind === 'count' ? declared.counts : declared.viewerEdges).set(entry, a);
        break;
      }
    }
  }
  for (const d of t.directives ?? []) {
    if (d.name.value !== 'list') continue;
    const a = new ArgReader(problems, `${name} @list`, d);
    const to = a.required('to', 'the type it lists') ?? '';
    const relationTable = a.required('table', 'its mapping table, noun_verb_noun') ?? '';
    relations.push({
      table: relationTable,
      from: objectKey(name),
      to: to === '' ? '' : objectRef(a.at('to'), a.where, to),
      field: null,
      inverse: null,
      order: 'TIME',
      timeRange: false,
      where: `${name} @list(table: "${relationTable}")`,
      args: a,
    });
  }
  const object: ObjectDef = { name, key: objectKey(name), typeNumber, table, placeWith: args.string('placeWith'), declaredAt: lineOf(t), stored, refs, counts, viewerEdges, productFields };
  declared.objects.set(object, args);
  return object;
}

/** `PinConnection` → `Pin`: the node type of a connection's edges, if it is one. */
function connectionNode(types: ReadonlyMap<string, ObjectTypeDefinitionNode>, connection: string): string | undefined {
  const edges = types.get(connection)?.fields?.find((f) => f.name.value === 'edges');
  const edge = edges && types.get(namedType(edges.type));
  const node = edge?.fields?.find((f) => f.name.value === 'node');
  return node && namedType(node.type);
}

function readMutation(f: FieldDefinitionNode, problems: Problems, objectRef: (node: ASTNode | undefined, where: string, typeName: string) => string, declared: Declared): MutationDef {
  const name = f.name.value;
  const where = `Mutation.${name}`;
  const used = Object.keys(MUTATION_DIRECTIVES).filter((d) => directiveNode(f, d) !== undefined);
  if (used.length !== 1) {
    problems.at(f.name, `${where}: has ${used.length === 0 ? 'no directive' : `@${used.join(' and @')}`}, expected exactly one of @${Object.keys(MUTATION_DIRECTIVES).join(', @')}`);
  }
  const kind = used[0] ?? 'custom';
  const a = new ArgReader(problems, `${where} @${kind}`, directiveNode(f, kind));
  const action = MUTATION_DIRECTIVES[kind]!;
  const typeName = action === 'CREATE' || action === 'UPDATE' || action === 'DELETE' ? (a.required('type', 'the object type it acts on') ?? '') : null;
  const relation = action === 'RELATE' || action === 'UNRELATE' || action === 'REORDER' ? (a.required('relation', 'the relation (its table) it changes') ?? '') : null;
  const argument =
    action === 'CREATE' || action === 'CUSTOM' ? null : action === 'UPDATE' || action === 'DELETE' ? (a.string('argument') ?? 'id') : (a.required('argument', "the mutation's argument naming the edge's to side") ?? '');
  const fieldArgs = (f.arguments ?? []).map((x) => x.name.value);
  if (argument !== null && argument !== '' && !fieldArgs.includes(argument)) {
    problems.at(a.at('argument'), `${a.where}: names the argument '${argument}', which ${name} does not take, expected one of its arguments (${fieldArgs.join(', ') || 'none'})`);
  }
  const m: MutationDef = { name, action, type: typeName === null ? null : typeName === '' ? '' : objectRef(a.at('type'), a.where, typeName), relation, argument };
  declared.mutations.set(m, a);
  declared.mutationArgs.set(m, fieldArgs);
  return m;
}

function checkUnique(
  problems: Problems,
  entries: readonly { owner: string; value: string; at: ASTNode | undefined; declaredAt: string }[],
  what: string,
  expected: string,
): void {
  const seen = new Map<string, { owner: string; declaredAt: string }>();
  for (const e of entries) {
    if (e.value === '' || e.value === '0') continue; // missing: said where it is read
    const first = seen.get(e.value);
    if (first !== undefined) problems.at(e.at, `${e.owner}: ${what} ${e.value} is already ${first.owner}'s (${first.declaredAt}), expected ${expected}`);
    else seen.set(e.value, e);
  }
}

/** Checks each relation against the objects and mutations, and says who writes it. */
function finishRelations(problems: Problems, pending: readonly PendingRelation[], objects: readonly ObjectDef[], mutations: readonly MutationDef[], viewer: string): RelationDef[] {
  const byTable = new Map(pending.map((r) => [r.table, r]));
  const nameOf = new Map(objects.map((o) => [o.key, o.name]));
  const listedBy = new Map<string, string>();
  for (const o of objects) for (const ref of o.refs) if (ref.listedIn !== null) listedBy.set(ref.listedIn, `${o.name}.${ref.field}`);
  const relatedBy = new Set(mutations.filter((m) => m.action === 'RELATE').map((m) => m.relation));
  // A list of an owned object (a collection's pins) is written by its owner, as the viewer's own lists are.
  const owned = new Set(objects.filter((o) => o.refs.some((r) => r.owner)).map((o) => o.key));

  const writerOf = (r: Omit<RelationDef, 'writer'>): RelationWriter | undefined => {
    if (listedBy.has(r.table)) return 'REF';
    if (relatedBy.has(r.table)) return 'VIEWER';
    if (r.inverse !== null && relatedBy.has(r.inverse)) return 'INVERSE';
    return undefined;
  };

  return pending.map(({ where, args, ...r }) => {
    if (r.table === '') return { ...r, writer: 'REF' }; // no table: said where it is read
    const from = nameOf.get(r.from);
    const to = nameOf.get(r.to);
    const shape = from !== undefined && to !== undefined ? new RegExp(`^${snakeName(from)}_[a-z0-9]+(_[a-z0-9]+)*_${snakeName(to)}s$`) : undefined;
    if (!MAPPING_TABLE.test(r.table) || (shape !== undefined && !shape.test(r.table))) {
      const example = from !== undefined && to !== undefined ? `${snakeName(from)}_<verb>_${snakeName(to)}s` : 'noun_verb_noun';
      problems.at(args.at('table'), `${where}: table '${r.table}' is not noun_verb_noun, expected ${example} (lowercase words joined by underscores, such as author_wrote_posts)`);
    }
    if (r.inverse !== null && from !== undefined && to !== undefined) {
      const inv = byTable.get(r.inverse);
      const mirror = `a relation from ${to ?? r.to} to ${from ?? r.from} naming ${r.table} as its inverse`;
      if (inv === undefined) problems.at(args.at('inverse'), `${where}: inverse ${r.inverse} names no relation, expected ${mirror}`);
      else if (nameOf.has(inv.from) && nameOf.has(inv.to) && (inv.from !== r.to || inv.to !== r.from || inv.inverse !== r.table)) {
        const runs = `runs ${nameOf.get(inv.from) ?? inv.from} → ${nameOf.get(inv.to) ?? inv.to}${inv.inverse === r.table ? '' : inv.inverse === null ? ' with no inverse' : ` with inverse ${inv.inverse}`}`;
        problems.at(args.at('inverse'), `${where}: inverse ${r.inverse} ${runs}, expected ${mirror}`);
      }
    }
    const writer = writerOf(r);
    if (writer === undefined) problems.at(args.at('table'), `${where}: nothing writes it, expected a @ref(listedIn:) or a @relate mutation naming it, or an inverse written by one`);
    if (writer === 'REF' && relatedBy.has(r.table)) problems.at(args.at('table'), `${where}: written both by ${listedBy.get(r.table)} and by a @relate mutation, expected one writer`);
    if (writer === 'REF' && r.inverse !== null) problems.at(args.at('inverse'), `${where}: a list written by ${listedBy.get(r.table)} has inverse ${r.inverse}, expected none`);
    if (writer === 'VIEWER' && nameOf.has(viewer) && r.from !== viewer && !owned.has(r.from)) {
      problems.at(args.at('table'), `${where}: a @relate mutation writes it from ${from ?? r.from}, expected the viewer's type (${nameOf.get(viewer) ?? viewer}) or an owned type (one with @ref(owner: true)) as its from side`);
    }
    return { ...r, writer: writer ?? 'REF' };
  });
}

function checkObjects(problems: Problems, objects: readonly ObjectDef[], relations: readonly RelationDef[], viewer: string, declared: Declared): void {
  const byTable = new Map(relations.map((r) => [r.table, r]));
  const nameOf = new Map(objects.map((o) => [o.key, o.name]));
  const named = (key: string): string => nameOf.get(key) ?? key;
  // Decoded objects carry their references by field name (core/objectRefs.ts): one name, one key.
  const refKeys = new Map<string, { key: string; of: string }>();
  for (const o of objects) {
    for (const ref of o.refs) {
      const first = refKeys.get(ref.field);
      if (first !== undefined && first.key !== ref.key) {
        problems.at(declared.refs.get(ref)!.at('key'), `${o.name}.${ref.field} @ref: key '${ref.key}', but ${first.of} keeps ${ref.field} under '${first.key}', expected one key for one reference name`);
      }
      if (first === undefined) refKeys.set(ref.field, { key: ref.key, of: `${o.name}.${ref.field}` });
    }
  }
  for (const o of objects) {
    const args = declared.objects.get(o)!;
    if (o.placeWith !== null && !o.refs.some((r) => r.field === o.placeWith)) {
      problems.at(args.at('placeWith'), `${o.name} @object: placeWith '${o.placeWith}' is no @ref field of ${o.name}, expected one of ${o.refs.map((r) => r.field).join(', ') || '(none: leave placeWith out)'}`);
    }
    for (const ref of o.refs) {
      if (ref.listedIn === null) continue;
      const at = declared.refs.get(ref)!.at('listedIn');
      const r = byTable.get(ref.listedIn);
      const expected = `a relation from ${named(ref.to)} to ${o.name}`;
      // A reference or a list to a type that is no object is reported where that type is named.
      if (!nameOf.has(ref.to) || (r !== undefined && !nameOf.has(r.to))) continue;
      if (r === undefined) problems.at(at, `${o.name}.${ref.field} @ref: listedIn ${ref.listedIn} names no relation, expected ${expected}`);
      else if (r.from !== ref.to || r.to !== o.key) problems.at(at, `${o.name}.${ref.field} @ref: listedIn ${ref.listedIn} runs ${named(r.from)} → ${named(r.to)}, expected ${expected}`);
    }
    const owners = o.refs.filter((r) => r.owner);
    if (owners.length > 1) problems.at(declared.refs.get(owners[1]!)!.at('owner'), `${o.name}: ${owners.map((r) => r.field).join(' and ')} are both @ref(owner: true), expected one owner at most`);
    const counted = new Map<string, string>();
    for (const c of o.counts) {
      const a = declared.counts.get(c)!;
      const r = byTable.get(c.relation);
      if (c.relation === '') continue; // missing: said where it is read
      if (r === undefined) problems.at(a.at('relation'), `${a.where}: ${c.relation} names no relation, expected a relation listed from ${o.name}`);
      else if (r.from !== o.key) problems.at(a.at('relation'), `${a.where}: ${c.relation} is listed from ${named(r.from)}, expected a relation listed from ${o.name}`);
      // A viewer's list with no inverse is found from no object of its `to` side: deleting one
      // cannot take its edges out (readers skip them, reconcile removes them), so a count beside it
      // would outlive them. Every count equals its list, after deletes too.
      else if (r.writer === 'VIEWER' && r.inverse === null) {
        problems.at(
          a.at('relation'),
          `${a.where}: ${c.relation} has no inverse, so a deleted ${named(r.to)} leaves it unseen and its count would stay one too high, expected a relation with an inverse (@relation(inverse: …)) to count, or no @count`,
        );
      }
      // A count is kept under its relation's name (counts.kind): two fields would be one number.
      const first = counted.get(c.relation);
      if (first !== undefined) problems.at(a.at('relation'), `${a.where}: the count ${c.relation} is already ${o.name}.${first}'s, expected each count once`);
      else counted.set(c.relation, c.field);
    }
    for (const e of o.viewerEdges) {
      const a = declared.viewerEdges.get(e)!;
      const r = byTable.get(e.relation);
      const expected = `a relation from the viewer (${named(viewer)}) to ${o.name}`;
      if (e.relation === '') continue; // missing: said where it is read
      if (r === undefined) problems.at(a.at('relation'), `${a.where}: ${e.relation} names no relation, expected ${expected}`);
      else if (!nameOf.has(r.to) || !nameOf.has(viewer)) continue; // reported where the type is named
      else if (r.to !== o.key || r.from !== viewer) problems.at(a.at('relation'), `${a.where}: ${e.relation} runs ${named(r.from)} → ${named(r.to)}, expected ${expected}`);
    }
  }
}

function checkMutations(problems: Problems, mutations: readonly MutationDef[], relations: readonly RelationDef[], objects: readonly ObjectDef[], viewer: string, declared: Declared): void {
  const byTable = new Map(relations.map((r) => [r.table, r]));
  const nameOf = new Map(objects.map((o) => [o.key, o.name]));
  const owned = new Set(objects.filter((o) => o.refs.some((r) => r.owner)).map((o) => o.key));
  for (const m of mutations) {
    if (m.relation === null || m.relation === '') continue;
    const a = declared.mutations.get(m)!;
    const r = byTable.get(m.relation);
    if (r === undefined) problems.at(a.at('relation'), `${a.where}: ${m.relation} names no relation, expected the table of a @relation${m.action === 'REORDER' ? ' with order: OWNER' : ` from the viewer (${nameOf.get(viewer) ?? viewer})`}`);
    else if (m.action === 'REORDER' && r.order !== 'OWNER') problems.at(a.at('relation'), `${a.where}: ${m.relation} is in time order only, expected a relation with the owner's order (@relation(order: OWNER))`);
    else if (m.action !== 'REORDER' && nameOf.has(viewer) && r.from !== viewer && !owned.has(r.from)) {
      problems.at(a.at('relation'), `${a.where}: ${m.relation} runs from ${nameOf.get(r.from) ?? r.from}, expected a relation from the viewer (${nameOf.get(viewer) ?? viewer}) or from an owned type (one with @ref(owner: true))`);
    } else if (m.action !== 'REORDER' && nameOf.has(viewer) && r.from !== viewer && !declared.mutationArgs.get(m)!.includes(`${r.from}Id`)) {
      // A list of an owned object is named by `<from>Id`, as @reorder's is (mutationResolvers.ts).
      problems.at(a.at('relation'), `${a.where}: ${m.relation} is a list of ${nameOf.get(r.from) ?? r.from}, and ${m.name} takes no ${r.from}Id, expected an argument ${r.from}Id naming the ${nameOf.get(r.from) ?? r.from} whose list it changes`);
    }
  }
  for (const o of objects) {
    const deletes = mutations.find((m) => m.action === 'DELETE' && m.type === o.key);
    if (deletes !== undefined && o.key !== viewer && !o.refs.some((r) => r.owner)) {
      problems.at(declared.mutations.get(deletes)!.at('type'), `Mutation.${deletes.name} @delete: ${o.name} has no owner, expected one @ref(owner: true) on ${o.name} saying who may delete it`);
    }
  }
}
