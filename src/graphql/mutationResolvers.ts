/**
 * The resolvers of every declared mutation, derived from the model (`@create`, `@update`,
 * `@delete`, `@relate`, `@unrelate`, `@reorder` in schema/): arguments checked by the model's types,
 * then the model's writes (services/modelWrites.ts). A `@custom` mutation is the product's own and
 * gets its resolver in resolvers.ts. The arguments a directive does not name follow conventions:
 *
 *   createPin(input: { boardId, title }) @create(type: "Pin")      // fields by name, a reference `board` as `boardId`
 *   createComment(pinId: ID!, text: String!) @create(type: "Comment") // the same, as top-level arguments
 *   movePin(boardId: ID!, pinId: ID!, afterPinId: ID) @reorder(relation: "board_has_pins", argument: "pinId")
 *                                                    // the list's owner as `<from>Id`, the edge after as `after<Argument>`
 *   moveSavedQuestion(questionId: ID!, afterQuestionId: ID) @reorder(relation: "user_saved_questions", argument: "questionId")
 *                                                    // a list of the viewer's type without `<from>Id`: the viewer's own
 */
import { Kind, parse, print, type GraphQLResolveInfo, type ObjectTypeDefinitionNode, type TypeNode } from 'graphql';
import { formatId, parseId } from '../core/ids.ts';
import type { ModelData, MutationDef } from '../core/model/model.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import type { WriteOpts } from '../services/modelWrites.ts';
import type { Learned } from '../services/writeExecutor.ts';
import { objectDef, relationDef, type FieldInput } from '../services/writePlans.ts';
import type { GatewayContext } from './context.ts';

type Args = Record<string, unknown>;
export type MutationResolver = (parent: unknown, args: Args, ctx: GatewayContext, info: GraphQLResolveInfo) => unknown;

/** An ID argument: parsed, of the expected type, on a shard this deployment has. */
export function idArg(ctx: GatewayContext, value: unknown, expect?: string): bigint {
  return parseId(value, { ...(expect ? { expect: expect as ObjectType } : {}), shardExists: (s) => ctx.topology.shardExists(s) });
}

/** The per-field idempotency key: the request's `Idempotency-Key` plus the field's response key. */
export function idempotency(ctx: GatewayContext, info: GraphQLResolveInfo): { idempotencyKey?: string } {
  return ctx.idempotencyKey === undefined ? {} : { idempotencyKey: `${ctx.idempotencyKey}:${info.path.key}` };
}

/** A delete's payload: the deleted object named by `deletedId`, never as the payload's own `id` (Relay keys its store by `id`). */
export const deletePayload = (objectId: bigint) => (done: boolean) => ({ deletedId: formatId(objectId), deleted: done });

/**
 * Options of a relating mutation: its idempotency key, and what the write learned about the state
 * it left, kept in the request's loaders so the selection set reads it from there (a like's
 * `likeCount` and `viewerHasLiked` cost no round trip). Replaces anything loaded before it.
 */
function relating(ctx: GatewayContext, info: GraphQLResolveInfo): WriteOpts {
  return {
    ...idempotency(ctx, info),
    learned: (fact: Learned) => {
      if (fact.kind === 'edge') {
        const key = { table: fact.table, from: fact.from, to: fact.to };
        ctx.loaders.edges.clear(key).prime(key, fact.present);
      } else {
        const key = { id: fact.id, kind: fact.table };
        ctx.loaders.counts.replace(key, fact.n);
      }
    },
  };
}

/** `{ input: { a }, b }` → `{ a, b }`: a create's fields may come in an input object, as arguments, or both. */
function flatInput(args: Args): Record<string, unknown> {
  const { input, ...rest } = args;
  return { ...(input !== null && typeof input === 'object' ? (input as Args) : {}), ...rest };
}

function fieldInput(values: Record<string, unknown>): FieldInput {
  return values as FieldInput;
}

function capitalized(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function resolverOf(model: ModelData, m: MutationDef, payloads: ReadonlyMap<string, PayloadType>): MutationResolver | undefined {
  switch (m.action) {
    case 'CREATE': {
      const type = objectDef(model, m.type!);
      const refs = type.refs.filter((r) => !r.owner);
      const signUp = type.key === model.viewer ? signUpPayload(payloads.get(m.name), type.name) : undefined;
      return (_, args, ctx, info) => {
        const input = flatInput(args);
        const ids: Record<string, bigint> = {};
        for (const ref of refs) {
          const value = input[`${ref.field}Id`];
          if (value !== undefined && value !== null) ids[ref.field] = idArg(ctx, value, ref.to);
        }
        const made = ctx.writes.model.create(m.name, ctx.viewerId, { fields: fieldInput(input), refs: ids }, ctx.op, idempotency(ctx, info));
        return signUp ? made.then(async (o) => ({ [signUp.field]: o, token: await ctx.mintToken(o.id) })) : made;
      };
    }
    case 'UPDATE':
      return (_, args, ctx) => ctx.writes.model.update(m.name, ctx.viewerId, idArg(ctx, args[m.argument!], m.type!), fieldInput((args.input ?? {}) as Args), ctx.op);
    case 'DELETE':
      return async (_, args, ctx, info) => {
        const id = idArg(ctx, args[m.argument!], m.type!);
        return deletePayload(id)(await ctx.writes.model.delete(m.name, ctx.viewerId, id, ctx.op, idempotency(ctx, info)));
      };
    case 'RELATE':
    case 'UNRELATE': {
      const relation = relationDef(model, m.relation!);
      // A list of an owned object (not the viewer's own) is named by `<from>Id`, as @reorder's is.
      const listArg = relation.from === model.viewer ? undefined : `${relation.from}Id`;
      return (_, args, ctx, info) => {
        const listOwner = listArg === undefined ? undefined : idArg(ctx, args[listArg], relation.from);
        return ctx.writes.model.relate(m.name, ctx.viewerId, idArg(ctx, args[m.argument!], relation.to), ctx.op, relating(ctx, info), listOwner);
      };
    }
    case 'REORDER': {
      const relation = relationDef(model, m.relation!);
      const after = `after${capitalized(m.argument!)}`;
      // The viewer's own list (a reading list) needs no `<from>Id`: the owner is the viewer.
      const viewerList = relation.from === model.viewer;
      return (_, args, ctx) => {
        const ownerArg = args[`${relation.from}Id`];
        const owner = viewerList && ownerArg == null ? ctx.writes.model.viewerId(ctx.viewerId) : idArg(ctx, ownerArg, relation.from);
        const moved = idArg(ctx, args[m.argument!], relation.to);
        const previous = args[after] == null ? null : idArg(ctx, args[after], relation.to);
        return ctx.writes.model.reorder(m.name, ctx.viewerId, owner, moved, previous, ctx.op);
      };
    }
    case 'CUSTOM':
      return undefined;
  }
}

/** A mutation's result type as the SDL declares it: its name, and its fields' types by field name. */
export interface PayloadType {
  readonly name: string;
  readonly fields: ReadonlyMap<string, string>;
}

/**
 * A sign-up's payload (`CreateUserPayload { user: User!, token: String! }`): a type with a field of
 * the viewer's type and `token: String!`. The answer then carries the new object in that field and
 * a token minted for it; any other result type gets the object itself.
 */
function signUpPayload(payload: PayloadType | undefined, viewerType: string): { field: string } | undefined {
  if (!payload || payload.fields.get('token') !== 'String!') return undefined;
  const field = [...payload.fields].find(([, t]) => t.replace(/!$/, '') === viewerType)?.[0];
  return field === undefined ? undefined : { field };
}

/** The result types of the SDL's Mutation fields, by mutation name (`CreateUserPayload` and its fields). */
export function mutationPayloads(typeDefs: string): Map<string, PayloadType> {
  const doc = parse(typeDefs);
  const objects = new Map<string, ObjectTypeDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.OBJECT_TYPE_DEFINITION) objects.set(d.name.value, d);
  const out = new Map<string, PayloadType>();
  for (const f of objects.get('Mutation')?.fields ?? []) {
    const name = namedType(f.type);
    const def = objects.get(name);
    out.set(f.name.value, { name, fields: new Map((def?.fields ?? []).map((x) => [x.name.value, print(x.type)])) });
  }
  return out;
}

function namedType(t: TypeNode): string {
  return t.kind === Kind.NAMED_TYPE ? t.name.value : namedType(t.type);
}

/** A resolver for each declared mutation that is not `@custom`, by mutation name (`typeDefs`: the served SDL, whose payload types make sign-ups answer with a token; without it none does). */
export function mutationResolvers(model: ModelData, typeDefs?: string): Record<string, MutationResolver> {
  const out: Record<string, MutationResolver> = {};
  const payloads = typeDefs === undefined ? new Map<string, PayloadType>() : mutationPayloads(typeDefs);
  for (const m of model.mutations) {
    const r = resolverOf(model, m, payloads);
    if (r) out[m.name] = r;
  }
  return out;
}
