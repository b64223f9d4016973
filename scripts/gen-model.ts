/**
 * `npm run model`: reads the declared model out of schema/*.graphql and writes
 * src/core/model/declared.ts, schema/'s model as a value for pure unit tests (the runtime reads the
 * served model, src/core/model/served.ts), and schema/client/schema.graphql, the API's SDL as client
 * tools read it (src/graphql/clientSchema.ts). Unit tests (test/unit/core/model/declared.test.ts,
 * test/unit/graphql/clientSchema.test.ts) fail while either is stale.
 * `npm run model -- examples/qa`: checks another model's directory (the vocabulary is added) and
 * writes nothing. A wrong declaration is refused with each problem's file, line and column (exit 1),
 * and so is a field with no model directive that none of this build's products resolves.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readModelFiles } from '../src/core/model/modelFiles.ts';
import { ModelError, parseModel } from '../src/core/model/parseModel.ts';
import { DECLARED_MODULE, renderDeclared } from '../src/core/model/renderDeclared.ts';
import { CLIENT_SCHEMA_FILE, printClientSchema } from '../src/graphql/clientSchema.ts';
import { loadTypeDefs } from '../src/graphql/schema.ts';

const root = resolve(import.meta.dirname, '..');
const dir = process.argv[2] ?? 'schema';
const served = resolve(root, dir) === join(root, 'schema');
try {
  const model = parseModel(readModelFiles(dir, root));
  // A field only a product answers must be one this build's products resolve, as `serve` requires.
  // Imported here: the products read the served model (schema/) as they load.
  const { PRODUCTS } = await import('../src/product/served.ts');
  const { attach, unresolvedFields } = await import('../src/product/product.ts');
  const { loadTypeDefs } = await import('../src/graphql/schema.ts');
  const unresolved = unresolvedFields(model, attach(PRODUCTS, model, loadTypeDefs(resolve(root, dir))).attached);
  if (unresolved.length > 0) throw new ModelError(unresolved);
  const summary = `${model.objects.length} object types, ${model.relations.length} relations, ${model.mutations.length} mutations`;
  if (served) {
    writeFileSync(join(root, DECLARED_MODULE), renderDeclared(model));
    console.log(`${DECLARED_MODULE}: ${summary}`);
    writeFileSync(join(root, CLIENT_SCHEMA_FILE), printClientSchema(loadTypeDefs(dir)));
    console.log(`${CLIENT_SCHEMA_FILE}: the API as client tools read it`);
  } else {
    console.log(`${dir}: ${summary} (checked; ${DECLARED_MODULE} is written from schema/ only)`);
  }
} catch (err) {
  if (!(err instanceof ModelError)) throw err;
  console.error(err.message);
  process.exitCode = 1;
}
