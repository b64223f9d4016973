import { GraphQLError, Kind, type ASTNode, type FragmentDefinitionNode, type ValidationContext, type ValidationRule } from 'graphql';

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
        if (depth > maxDepth) {
          context.reportError(new GraphQLError(`Expected a query at most ${maxDepth} fields deep, got more than ${maxDepth}`, { nodes: [node], extensions: { code: 'QUERY_TOO_COMPLEX' } }));
        }
      },
    };
  };
}
