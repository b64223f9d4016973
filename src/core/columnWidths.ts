import { createHash } from 'node:crypto';

/**
 * Columns of shardql's own tables that hold names made from the model (storage/ddl.ts): their
 * widths, and how a longer name is kept in them. The model's own names have their own limits
 * (a table: 64 characters, MySQL's; a unique namespace: LOOKUP_NAMESPACE_WIDTH, checked by
 * core/model/parseModel.ts); what is built from them (`cascade:<table>`, a mutation's name,
 * `import:<type>`, an import chunk `<table>.<index>`) may be longer than its column, and is fitted to it.
 */

/** `intents.kind`: the write's name, a label for logs (`like`, `remove:<table>`, `cascade:<table>`). */
export const INTENT_KIND_WIDTH = 32;

/** `lookups.namespace`: a `@stored(unique:)` namespace, or the importer's `import:<type>`. */
export const LOOKUP_NAMESPACE_WIDTH = 32;

/** `import_chunks.chunk`: an import chunk's name, `<source table>.<index>` or `deletes:<source table>.<index>`. */
export const IMPORT_CHUNK_WIDTH = 40;

/** The hex digits of the hash a fitted name ends with. */
const HASH_DIGITS = 8;

/**
 * `name` as a column of `width` characters holds it: unchanged when it fits, else its first
 * characters, `~` and 8 hex digits of its SHA-256. Stable (a name always fits to the same value),
 * readable, and two names that share their first characters fit to different values:
 *
 *   fitToColumn('add:user_likes_pins', 32)               // 'add:user_likes_pins'
 *   fitToColumn('remove:listener_follows_listeners', 32) // 'remove:listener_follows~9d3992d0'
 */
export function fitToColumn(name: string, width: number): string {
  if (name.length <= width) return name;
  if (width <= HASH_DIGITS + 1) throw new Error(`a column of ${width} characters cannot hold a fitted name, expected more than ${HASH_DIGITS + 1}`);
  const hash = createHash('sha256').update(name).digest('hex').slice(0, HASH_DIGITS);
  return `${name.slice(0, width - HASH_DIGITS - 1)}~${hash}`;
}
