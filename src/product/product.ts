/**
 * A product: behaviour beyond the model (a home feed, activity, notifications, custom mutations)
 * that attaches to a served model by the names it needs, as PostGraphile's plugins attach to the
 * schema they generate. The gateway attaches a product only when the served model has every type,
 * relation and field it names; otherwise it serves the model alone and says why at start:
 *
 *   attach([pinterest], qaModel, qaSdl)
 *     // { attached: [], refused: [{ product: 'pinterest', missing: ['type board', 'relation user_likes_pins', 'field Query.homeFeed', …] }] }
 */
import { buildSchema, isInterfaceType, isObjectType } from 'graphql';
import type { ImportNames } from '../core/importSpec.ts';
import { resolveFeed, type Feed, type FeedSpec } from '../core/feedSpec.ts';
import { eventSpecProblems, type EventSpec } from '../core/events.ts';
import type { ModelData } from '../core/model/model.ts';
import type { ModelProblem } from '../core/model/parseModel.ts';
import type { ResolverMap } from '../graphql/resolvers.ts';
import type { DeclaredWrites, WritesDeps } from '../services/writes.ts';

export interface Product {
  readonly name: string;
  /** What the product's code names besides its resolvers' fields: object types (keys) and relations (tables). */
  readonly needs: { readonly types: readonly string[]; readonly relations: readonly string[] };
  /** Its resolvers, by GraphQL type and field: each `Type.field` must be in the served SDL. */
  readonly resolvers: ResolverMap;
  /** The writes the gateway serves when it is attached (its hooks on the declared mutations, its own mutations). */
  writes?(deps: WritesDeps): DeclaredWrites;
  /** What `shardql import` needs of the product's legacy database beyond the model (its table names, …). */
  readonly importSource?: ImportNames;
  /** Its home feed, if it has one: the gateway and the workers build the feed's machinery only then. */
  readonly feed?: FeedSpec;
  /** Its activity and notifications (core/events.ts): every relation an edge names must be in the model. */
  readonly events?: EventSpec;
}

export interface Attachment {
  readonly attached: readonly Product[];
  readonly refused: readonly { readonly product: string; readonly missing: readonly string[] }[];
}

/** What of `product`'s needs the model and its SDL lack (empty: it attaches). */
export function missingNeeds(product: Product, model: ModelData, typeDefs: string): string[] {
  const schema = buildSchema(typeDefs);
  const missing: string[] = [];
  for (const t of product.needs.types) if (!model.objects.some((o) => o.key === t)) missing.push(`type ${t}`);
  for (const r of product.needs.relations) if (!model.relations.some((x) => x.table === r)) missing.push(`relation ${r}`);
  if (product.events) {
    missing.push(...missingEventNeeds(product.events, model));
    for (const f of Object.values(product.events.fields ?? {}).flat()) {
      const [typeName = '', field = ''] = f.split('.');
      const type = schema.getType(typeName);
      if (!type || !(isObjectType(type) || isInterfaceType(type)) || !(field in type.getFields())) missing.push(`field ${f}`);
    }
  }
  for (const [typeName, fields] of Object.entries(product.resolvers)) {
    const type = schema.getType(typeName);
    if (!type || !(isObjectType(type) || isInterfaceType(type))) {
      missing.push(`type ${typeName}`);
      continue;
    }
    const has = type.getFields();
    for (const f of Object.keys(fields)) if (!f.startsWith('__') && !(f in has)) missing.push(`field ${typeName}.${f}`);
  }
  if (product.feed) {
    const query = schema.getQueryType();
    const feed = [...(query && product.feed.field in query.getFields() ? [] : [`field Query.${product.feed.field}`]), ...resolveFeed(product.feed, model).problems];
    for (const m of feed) if (!missing.includes(m)) missing.push(m);
  }
  return missing;
}

/**
 * What an event spec needs of the model: each edge's relation, from the viewer's type when the edge
 * starts at the row user (`from: 'user'`); and a spec that holds together (eventSpecProblems).
 */
function missingEventNeeds(spec: EventSpec, model: ModelData): string[] {
  const missing = eventSpecProblems(spec);
  for (const [name, { edge }] of Object.entries(spec.storedKinds)) {
    if (!edge) continue;
    const relation = model.relations.find((x) => x.table === edge.table);
    if (!relation) missing.push(`relation ${edge.table} (event kind ${name})`);
    else if (edge.from === 'user' && relation.from !== model.viewer) missing.push(`relation ${edge.table} from ${model.viewer} (event kind ${name}), got from ${relation.from}`);
  }
  return missing;
}

/**
 * The fields of `model` that only a product answers (no model directive: `User.activity`) and none
 * of `attached` resolves, as problems where each is declared: served, every read of one would fail.
 *
 *   unresolvedFields(model, [])   // [{ file: 'music/schema.graphql', line: 12, column: 3, message: 'Track.playCount has no model directive …' }]
 */
export function unresolvedFields(model: ModelData, attached: readonly Product[]): ModelProblem[] {
  const products = attached.length > 0 ? `the attached products (${attached.map((p) => p.name).join(', ')}) resolve none of it` : 'no product is attached';
  return model.objects.flatMap((o) =>
    o.productFields
      .filter((f) => !attached.some((p) => p.resolvers[o.name]?.[f.field] !== undefined))
      .map((f) => ({
        file: f.file,
        line: f.line,
        column: f.column,
        message: `${o.name}.${f.field} has no model directive and ${products}, expected @stored, @ref, @relation, @count or @viewerEdge, or a field a product resolves`,
      })),
  );
}

/** The products that attach to `model` (every need met), and why the others do not. */
export function attach(products: readonly Product[], model: ModelData, typeDefs: string): Attachment {
  const attached: Product[] = [];
  const refused: { product: string; missing: string[] }[] = [];
  for (const p of products) {
    const missing = missingNeeds(p, model, typeDefs);
    if (missing.length === 0) attached.push(p);
    else refused.push({ product: p.name, missing });
  }
  if (attached.filter((p) => p.writes).length > 1) throw new Error(`products ${attached.map((p) => p.name).join(', ')} each bring their writes; expected at most one`);
  const feeds = attached.filter((p) => p.feed);
  if (feeds.length > 1) throw new Error(`products ${feeds.map((p) => p.name).join(', ')} each declare a home feed; expected at most one`);
  if (attached.filter((p) => p.events).length > 1) throw new Error(`products ${attached.filter((p) => p.events).map((p) => p.name).join(', ')} each declare events; expected at most one (one events table)`);
  return { attached, refused };
}

/** The home feed of the attached products, resolved against `model`; undefined when none declares one (no feed is built). */
export function attachedFeed(attachment: Attachment, model: ModelData): Feed | undefined {
  const spec = attachment.attached.find((p) => p.feed)?.feed;
  if (!spec) return undefined;
  const { feed, problems } = resolveFeed(spec, model);
  if (!feed) throw new Error(`the attached feed ${spec.field} does not fit the model: ${problems.join(', ')}`);
  return feed;
}
