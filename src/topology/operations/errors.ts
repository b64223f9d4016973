/**
 * A topology operation refused or called off, with a message for the operator that says what was
 * found and what to do. Nothing was changed unless the message says so.
 */
export class TopologyOperationError extends Error {
  override readonly name = 'TopologyOperationError';
}
