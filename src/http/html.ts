/** What the gateway's own pages (GraphiQL, the web app) share: escaping and static assets. */
import { createHash } from 'node:crypto';

export interface StaticAsset {
  readonly body: Buffer;
  readonly contentType: string;
  /** A strong ETag, quoted, derived from the content (e.g. `"3q2-…"`). */
  readonly etag: string;
}

/** An asset served from memory, its ETag the hash of its bytes. */
export function staticAsset(body: Buffer, contentType: string): StaticAsset {
  return { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML text node or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/**
 * JSON for a `<script>` element's content: no `<` (so no `</script>` or `<!--`), `>` or `&` can
 * appear literally, nor U+2028/U+2029. The escapes are valid JSON, so JSON.parse restores the text.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
