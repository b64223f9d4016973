/**
 * The API as clients see it: the SDL without the model's vocabulary. The declaration (which table,
 * which type number, who writes a list) is the server's business; introspection shows none of it.
 */
import { Kind, visit, type DocumentNode, type TypeNode } from 'graphql';
import { MODEL_DIRECTIVES } from './parseModel.ts';

export function withoutModel(doc: DocumentNode): DocumentNode {
  const names = new Set<string>(MODEL_DIRECTIVES);
  const definitions = doc.definitions.filter((d) => d.kind === Kind.DIRECTIVE_DEFINITION && names.has(d.name.value));
  // The enums the vocabulary's arguments take (StoredFormat…), unless the API uses them too.
  const argumentEnums = new Set(definitions.flatMap((d) => (d.kind === Kind.DIRECTIVE_DEFINITION ? (d.arguments ?? []).map((a) => namedTypeOf(a.type)) : [])));
  const stripped = visit(doc, {
    Directive: (node) => (names.has(node.name.value) ? null : undefined),
    DirectiveDefinition: (node) => (names.has(node.name.value) ? null : undefined),
  });
  const usedElsewhere = new Set<string>();
  visit(stripped, { NamedType: (node) => void usedElsewhere.add(node.name.value) });
  return {
    ...stripped,
    definitions: stripped.definitions.filter((d) => !(d.kind === Kind.ENUM_TYPE_DEFINITION && argumentEnums.has(d.name.value) && !usedElsewhere.has(d.name.value))),
  };
}

function namedTypeOf(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedTypeOf(type.type);
}
