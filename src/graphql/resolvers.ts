import type { ModelData } from '../core/model/model.ts';
import type { StoredObject } from '../storage/objectStore.ts';
import { graphqlTypeNames, objectResolvers } from './modelResolvers.ts';
import { mutationResolvers } from './mutationResolvers.ts';
import { derivedQueryResolvers, queryFields } from './queryResolvers.ts';

/** A resolver map: GraphQL type name → field name → resolver (or `__resolveType`). */
export type ResolverMap = Record<string, Record<string, unknown>>;

/**
 * Thin resolvers, all derived from the model: its objects' fields (modelResolvers.ts), the Query
 * fields that follow the convention (queryResolvers.ts), every declared mutation but the @custom
 * ones (mutationResolvers.ts), and `Node`. No SQL and no cache keys here. A product attached to the
 * served model adds its own beside these (src/product/), by name.
 */
export function declaredResolvers(model: ModelData, typeDefs: string): ResolverMap {
  const graphqlType = graphqlTypeNames(model);
  return {
    ...objectResolvers(model),
    Query: derivedQueryResolvers(model, queryFields(typeDefs)),
    Mutation: mutationResolvers(model, typeDefs),
    Node: { __resolveType: (o: StoredObject) => graphqlType.get(o.type) },
  };
}

/** `base` with `more`'s types added and, for a type both have, `more`'s fields beside (or over) `base`'s. */
export function mergeResolvers(base: ResolverMap, more: ResolverMap): ResolverMap {
  const out: ResolverMap = { ...base };
  for (const [type, fields] of Object.entries(more)) out[type] = { ...out[type], ...fields };
  return out;
}
