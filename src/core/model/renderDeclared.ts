/**
 * The declared model as a TypeScript module (`npm run model` writes it to declared.ts): the same
 * data parseModel read from the SDL, `as const`, so that the code deriving tables from it keeps the
 * declared names as literal types (`ObjectType` is `'pin' | 'board' | …` of this deployment's model).
 */
import type { ModelData } from './model.ts';

export const DECLARED_MODULE = 'src/core/model/declared.ts';

export function renderDeclared(model: ModelData): string {
  return `// The declared model, read from schema/*.graphql by \`npm run model\`: do not edit (change the SDL).
import type { ModelData } from './model.ts';

export const DECLARED = ${JSON.stringify(model, null, 2)} as const satisfies ModelData;
`;
}
