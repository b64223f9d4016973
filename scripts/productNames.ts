/**
 * The product-name rule of `npm run lint` (scripts/check-layers.ts): outside the model and the
 * products' own code, src/ names no type or table of the project's model (schema/: Pinterest's). A
 * generic layer that wrote `'pin'` or `user_has_pins` would serve one product; everything it needs
 * comes from the served model instead (core/model/served.ts).
 *
 * What counts as naming: a string literal that is exactly a type's name, key or table, or a mapping
 * table's name anywhere in code (an identifier, inside a template). Comments may say anything; prose
 * inside a message ('open to new users') is not a name.
 *
 *   namesIn("const t = 'pin';", PINTEREST)   // ["'pin'"]
 */
import type { ModelData } from '../src/core/model/model.ts';

export interface ProductNames {
  /** Exact string literals: type names, keys, object tables, mapping tables. */
  readonly literals: ReadonlySet<string>;
  /** Words that name a relation wherever they appear: mapping tables (`user_has_pins`). */
  readonly words: ReadonlySet<string>;
}

export function productNames(model: ModelData): ProductNames {
  const tables = model.relations.map((r) => r.table);
  return {
    literals: new Set([...model.objects.flatMap((o) => [o.name, o.key, o.table]), ...tables]),
    words: new Set(tables),
  };
}

/** Comments taken out: only code is checked. */
export function codeOf(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The product names `code` (comments already taken out) spells, in order, each as written. */
export function namesIn(code: string, names: ProductNames): string[] {
  const found: string[] = [];
  for (const m of code.matchAll(/(['"`])([A-Za-z_][A-Za-z0-9_]*)\1|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g)) {
    if (m[2] !== undefined ? names.literals.has(m[2]) : names.words.has(m[0])) found.push(m[0]);
  }
  return found;
}
