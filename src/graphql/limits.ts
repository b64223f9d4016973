import { GraphQLError, Kind, visit, type ASTNode, type FragmentDefinitionNode, type OperationDefinitionNode, type ValidationContext, type ValidationRule } from 'graphql';
import { ShardqlError } from '../core/errors.ts';

/**
 * Limits on the shape of an operation, checked while it is validated (once per document: Apollo
 * caches validated documents), before anything runs. Each refusal is QUERY_TOO_COMPLEX with
 * `limit` and `max` in its extensions. The limit on what an operation would read is in cost.ts.
 */
export const SHAPE_LIMITS = {
  /** Deepest selection. */
  depth: 12,
  /** Aliased fields per operation, fragments included. */
  aliases: 30,
  /** Directives per operation, fragments included. */
  directives: 10,
  /** Lexical tokens per document (graphql-js `parse(source, { maxTokens })`). */
  tokens: 5000,
} as const;

function tooComplex(node: ASTNode, limit: keyof typeof SHAPE_LIMITS, max: number, message: string): GraphQLError {
  // Apollo recodes validation errors as GRAPHQL_VALIDATION_FAILED; the ShardqlError inside keeps
  // the real code, and the error policy (apollo.ts) answers with it.
  return new GraphQLError(message, { nodes: [node], originalError: new ShardqlError('QUERY_TOO_COMPLEX', message, { limit, max }) });
}

/** Refuses operations nested deeper than `maxDepth` fields (fragments followed, cycles cut). */
export function depthLimit(maxDepth: number): ValidationRule {
  return (context: ValidationContext) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    const depthOf = (node: ASTNode, depth: number, seen: Set<string>): number => {
      if (depth > maxDepth) return depth;
      switch (node.kind) {
        case Kind.FIELD:
          // Introspection (GraphiQL's schema query nests ofType deeply) touches no shard; it is
          // switched off in production instead.
          if (node.name.value.startsWith('__')) return depth;
          return node.selectionSet ? Math.max(depth + 1, ...node.selectionSet.selections.map((s) => depthOf(s, depth + 1, seen))) : depth + 1;
        case Kind.INLINE_FRAGMENT:
        case Kind.OPERATION_DEFINITION:
          return Math.max(depth, ...node.selectionSet.selections.map((s) => depthOf(s, depth, seen)));
        case Kind.FRAGMENT_SPREAD: {
          const f = fragments.get(node.name.value);
          if (!f || seen.has(f.name.value)) return depth;
          return Math.max(depth, ...f.selectionSet.selections.map((s) => depthOf(s, depth, new Set([...seen, f.name.value]))));
        }
        default:
          return depth;
      }
    };
    return {
      OperationDefinition(node) {
        const depth = depthOf(node, 0, new Set());
        if (depth > maxDepth) context.reportError(tooComplex(node, 'depth', maxDepth, `Expected a query at most ${maxDepth} fields deep, got more than ${maxDepth}`));
      },
    };
  };
}

/** Counts what `count` picks in an operation and in every fragment it uses (each fragment once). */
function countInOperation(context: ValidationContext, op: OperationDefinitionNode, count: (node: ASTNode) => number): number {
  let n = 0;
  const tally = (root: ASTNode): void => {
    visit(root, {
      enter(node) {
        n += count(node);
      },
    });
  };
  tally(op);
  for (const f of context.getRecursivelyReferencedFragments(op)) tally(f);
  return n;
}

/** Refuses operations with more than `max` aliases: an alias flood repeats a costly field under many names. */
export function aliasLimit(max: number): ValidationRule {
  return (context) => ({
    OperationDefinition(op) {
      const n = countInOperation(context, op, (node) => (node.kind === Kind.FIELD && node.alias ? 1 : 0));
      if (n > max) context.reportError(tooComplex(op, 'aliases', max, `Expected at most ${max} aliases in an operation, got ${n}`));
    },
  });
}

/** Refuses operations with more than `max` directives. */
export function directiveLimit(max: number): ValidationRule {
  return (context) => ({
    OperationDefinition(op) {
      const n = countInOperation(context, op, (node) => (node.kind === Kind.DIRECTIVE ? 1 : 0));
      if (n > max) context.reportError(tooComplex(op, 'directives', max, `Expected at most ${max} directives in an operation, got ${n}`));
    },
  });
}
