/**
 * GraphiQL's first query, derived from the declared model: the viewer, then down its lists three
 * levels (each object's first stored field and first count, then its first list). For the product's
 * model this is the profile page: viewer → boards → pins → likers.
 */
import type { ModelData, ObjectDef } from './model.ts';

const PAGE_SIZES = [5, 5, 3];

export function sampleQuery(model: ModelData): string {
  const byKey = new Map(model.objects.map((o) => [o.key, o]));
  const path = ['viewer'];
  const level = (o: ObjectDef, depth: number, indent: string): string => {
    const last = depth === PAGE_SIZES.length;
    const scalars = [...(depth > 0 ? ['id'] : []), o.stored[0]?.field, last ? undefined : o.counts[0]?.field].filter((f): f is string => f !== undefined);
    const found = last ? undefined : model.relations.find((r) => r.from === o.key && r.field !== null);
    const list = found && found.field !== null ? { ...found, field: found.field } : undefined;
    if (list) path.push(list.field);
    const next = list && byKey.get(list.to);
    const lines = scalars.map((f) => `${indent}${f}`);
    if (list && next) {
      lines.push(`${indent}${list.field}(first: ${PAGE_SIZES[depth]}) {`, `${indent}  edges {`, `${indent}    node {`);
      lines.push(level(next, depth + 1, `${indent}      `));
      lines.push(`${indent}    }`, `${indent}  }`, `${indent}}`);
    }
    return lines.join('\n');
  };
  const viewer = byKey.get(model.viewer);
  const body = viewer ? level(viewer, 0, '    ') : '    __typename';
  return `# The viewer's page: ${path.join(' → ')}, with counts from the count tables.
# The response's extensions.cost shows the SQL round trips, shards and hosts it touched.
query Profile {
  viewer {
${body}
  }
}
`;
}
