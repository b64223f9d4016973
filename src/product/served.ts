/**
 * The products this build knows, and those attached to the model this process serves
 * (core/model/served.ts): its resolvers and its writes come from here.
 */
import { deriveImportSpec, type ImportSpec } from '../core/importSpec.ts';
import type { EventSpec } from '../core/events.ts';
import { servedModel } from '../core/model/served.ts';
import { ModelError } from '../core/model/parseModel.ts';
import { loadTypeDefs } from '../graphql/schema.ts';
import { declaredResolvers, mergeResolvers, type ResolverMap } from '../graphql/resolvers.ts';
import { DeclaredWrites, type WritesDeps } from '../services/writes.ts';
import type { Feed } from '../core/feedSpec.ts';
import { attach, attachedFeed, unresolvedFields, type Attachment } from './product.ts';
import { pinterest } from './pinterest/index.ts';

/** Every product of this build, tried against the served model in this order. */
export const PRODUCTS = [pinterest] as const;

let attachment: Attachment | undefined;

/**
 * Which products attach to the served model (computed once). Throws ModelError when a field of the
 * model only a product could answer has none attached that resolves it (`unresolvedFields`).
 */
export function servedProducts(): Attachment {
  if (attachment === undefined) {
    const attached = attach(PRODUCTS, servedModel(), loadTypeDefs());
    const unresolved = unresolvedFields(servedModel(), attached.attached);
    if (unresolved.length > 0) throw new ModelError(unresolved);
    attachment = attached;
  }
  return attachment;
}

/** The served API's resolvers: the model's, with the attached products' beside them. */
export function servedResolvers(): ResolverMap {
  return servedProducts().attached.reduce((map, p) => mergeResolvers(map, p.resolvers), declaredResolvers(servedModel(), loadTypeDefs()));
}

/** The served writes: the attached product's, or the declared mutations alone. */
export function servedWrites(deps: WritesDeps): DeclaredWrites {
  const owner = servedProducts().attached.find((p) => p.writes);
  return owner?.writes ? owner.writes(deps) : new DeclaredWrites(deps);
}

let importSpec: ImportSpec | undefined;

/** The served model's import source schema, with the attached product's names over it (core/importSpec.ts). */
export function servedImportSpec(): ImportSpec {
  importSpec ??= deriveImportSpec(servedModel(), servedProducts().attached.find((p) => p.importSource)?.importSource);
  return importSpec;
}

let feed: { readonly feed: Feed | undefined } | undefined;

/** The home feed of the attached products, resolved against the served model (once); undefined: none declares one. */
export function servedFeed(): Feed | undefined {
  feed ??= { feed: attachedFeed(servedProducts(), servedModel()) };
  return feed.feed;
}

/** The attached product's activity and notifications, if one declares them (the event store, its resolvers and its cost). */
export function servedEvents(): EventSpec | undefined {
  return servedProducts().attached.find((p) => p.events)?.events;
}
