/**
 * The Query fields derived from the model, by a convention on their names and arguments
 * (docs/model.md, "Query fields derived from the model"):
 *
 *   viewer: User                         // the object of the viewer's type whose token came with the request
 *   node(id: ID!): Node                  // any object by ID
 *   pin(id: ID!): Pin                    // an object of the type whose key is the field's name
 *   user(id: ID, username: String): User // exactly one of them; `username` a field `@stored(unique: "…")`,
 *                                        // looked up through the mod shard in its namespace
 *
 * Any other Query field is a product's (attached by name, src/product/). A field named after a type
 * whose other arguments are not unique fields of it is refused when the resolvers are built.
 */
import { Kind, parse, type FieldDefinitionNode } from 'graphql';
import { ShardqlError } from '../core/errors.ts';
import type { ModelData, ObjectDef, StoredFieldDef } from '../core/model/model.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import { checkStored } from '../core/validate.ts';
import { idArg } from './mutationResolvers.ts';
import { load } from './modelResolvers.ts';
import type { GatewayContext } from './context.ts';

type Args = Record<string, unknown>;
export type QueryResolver = (parent: unknown, args: Args, ctx: GatewayContext) => unknown;

/** The fields of the SDL's Query type (the served API, directives and all). */
export function queryFields(typeDefs: string): readonly FieldDefinitionNode[] {
  for (const d of parse(typeDefs).definitions) {
    if ((d.kind === Kind.OBJECT_TYPE_DEFINITION || d.kind === Kind.OBJECT_TYPE_EXTENSION) && d.name.value === 'Query') return d.fields ?? [];
  }
  return [];
}

const present = (v: unknown): boolean => v !== undefined && v !== null;

/** `<type>(id, <unique>)`: one object by ID or by one of its unique values, exactly one given. */
function byIdOrUnique(type: ObjectDef, uniques: readonly StoredFieldDef[]): QueryResolver {
  if (uniques.length === 0) return (_, args, ctx) => load(ctx, idArg(ctx, args.id, type.key), type.key as ObjectType);
  const names = ['id', ...uniques.map((u) => u.field)];
  const expected = `Expected exactly one of ${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  return async (_, args, ctx) => {
    const given = names.filter((n) => present(args[n]));
    if (given.length !== 1) throw new ShardqlError('INVALID_ARGUMENT', expected);
    if (given[0] === 'id') return load(ctx, idArg(ctx, args.id, type.key), type.key as ObjectType);
    const field = uniques.find((u) => u.field === given[0])!;
    const key = checkStored(field, String(args[field.field])).toLowerCase();
    return load(ctx, await ctx.loaders.lookups.load({ namespace: field.uniqueIn!, key }), type.key as ObjectType);
  };
}

/**
 * The resolvers of the Query fields that follow the convention, by field name; fields it does not
 * cover are left to the products. Throws (at start) for a field named after a type whose other
 * arguments are not that type's unique fields.
 */
export function derivedQueryResolvers(model: ModelData, fields: readonly FieldDefinitionNode[]): Record<string, QueryResolver> {
  const out: Record<string, QueryResolver> = {};
  for (const f of fields) {
    const name = f.name.value;
    if (name === 'viewer') {
      out.viewer = (_, _args, ctx) => (ctx.viewerId === undefined ? null : load(ctx, ctx.viewerId, model.viewer as ObjectType));
      continue;
    }
    if (name === 'node') {
      out.node = (_, args, ctx) => ctx.loaders.objects.load(idArg(ctx, args.id));
      continue;
    }
    const type = model.objects.find((o) => o.key === name);
    if (!type) continue;
    const others = (f.arguments ?? []).map((a) => a.name.value).filter((a) => a !== 'id');
    const uniques = others.map((a) => {
      const s = type.stored.find((x) => x.field === a && x.uniqueIn !== null);
      if (!s) throw new Error(`Query.${name}(${a}): expected a field of ${type.name} declared @stored(unique: …), got ${a}`);
      return s;
    });
    out[name] = byIdOrUnique(type, uniques);
  }
  return out;
}
