/**
 * The API's SDL as a client tool reads it: what introspection answers, printed. relay-compiler,
 * GraphQL Code Generator, graphql-schema-linter and graphql-js `buildSchema` take this file; the model's
 * declaration (schema/*.graphql, with `@object`, `@create`…) they refuse, since its directives are
 * the server's vocabulary. Pure: SDL text in, SDL text out.
 *
 *   printClientSchema(loadTypeDefs())   // "schema {\n  query: Query\n …" with every description
 */
import { buildClientSchema, buildSchema, introspectionFromSchema, printSchema, type IntrospectionQuery } from 'graphql';

/** Where the project's own API (schema/) is kept for client tools, from the project's root; `npm run model` writes it. */
export const CLIENT_SCHEMA_FILE = 'schema/client/schema.graphql';

/** What introspection of the API (`typeDefs`: the declaration without the model's vocabulary) answers, as SDL. */
export function printClientSchema(typeDefs: string): string {
  return printIntrospection(introspectionFromSchema(buildSchema(typeDefs), INTROSPECTION_OPTIONS));
}

/** An introspection answer (a gateway's, or one made from SDL) as SDL, ending in a newline. */
export function printIntrospection(result: IntrospectionQuery): string {
  return `${printSchema(buildClientSchema(result))}\n`;
}

/** What a client tool's introspection query asks for beyond graphql-js's defaults (`getIntrospectionQuery(INTROSPECTION_OPTIONS)`). */
export const INTROSPECTION_OPTIONS = { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true } as const;
