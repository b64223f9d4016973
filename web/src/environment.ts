import { Environment, Network, RecordSource, Store, type RequestParameters, type Variables, type GraphQLResponse } from 'relay-runtime';

interface GraphQLError {
  readonly message: string;
  readonly extensions?: { readonly code?: string };
}

/** A GraphQL answer that carried errors and no data: its first message, and its code. */
export class OperationError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/**
 * The page's Relay environment. Every operation travels as its persisted ID (`documentId`, the
 * GraphQL-over-HTTP persisted documents form): the compiled artifacts carry no document text, so
 * the page could not send one if it tried. The gateway finds the text in the manifest the build
 * wrote (dist/web/persisted-documents.json).
 */
export function createEnvironment(endpoint: string, token: () => string | undefined): Environment {
  async function fetchFn(params: RequestParameters, variables: Variables): Promise<GraphQLResponse> {
    if (params.id === null || params.id === undefined) throw new Error(`Operation ${params.name} has no persisted ID: the build must persist every operation`);
    const bearer = token();
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
      body: JSON.stringify({ documentId: params.id, operationName: params.name, variables }),
    });
    const json = (await response.json()) as { data?: Record<string, unknown> | null; errors?: GraphQLError[] };
    const first = json.errors?.[0];
    // A write that failed answers data: null (or its field null): the page shows the message.
    const empty = json.data === null || json.data === undefined || Object.values(json.data).every((v) => v === null);
    if (first && (empty || params.operationKind === 'mutation')) throw new OperationError(first.message, first.extensions?.code);
    return json as GraphQLResponse;
  }
  return new Environment({ network: Network.create(fetchFn), store: new Store(new RecordSource()) });
}
