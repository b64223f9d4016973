/**
 * The declared model as a TypeScript module (`npm run model` writes it to declared.ts): the same
 * data parseModel read from the SDL, `as const`: schema/'s model as a value, for the pure planners'
 * unit tests. The runtime layers read the served model (served.ts), never this module.
 */
import type { ModelData } from './model.ts';

export const DECLARED_MODULE = 'src/core/model/declared.ts';

export function renderDeclared(model: ModelData): string {
  return `// The declared model, read from schema/*.graphql by \`npm run model\`: do not edit (change the SDL).
import type { ModelData } from './model.ts';

export const DECLARED = ${JSON.stringify(model, null, 2)} as const satisfies ModelData;
`;
}
