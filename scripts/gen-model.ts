/**
 * `npm run model`: reads the declared model out of schema/*.graphql and writes
 * src/core/model/declared.ts, from which the type numbers, tables and relations every layer uses
 * are derived. A unit test (test/unit/core/model/declared.test.ts) fails while it is stale.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseModel } from '../src/core/model/parseModel.ts';
import { DECLARED_MODULE, renderDeclared } from '../src/core/model/renderDeclared.ts';
import { loadDeclaration } from '../src/graphql/schema.ts';

const root = resolve(import.meta.dirname, '..');
const model = parseModel(loadDeclaration(join(root, 'schema')));
writeFileSync(join(root, DECLARED_MODULE), renderDeclared(model));
console.log(`${DECLARED_MODULE}: ${model.objects.length} object types, ${model.relations.length} relations, ${model.mutations.length} mutations`);
