import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { loadConfigOrExit } from '@app/config';
import { createLogger } from '@app/logging';
import { createApiApp } from './create-api-app';
import { buildOpenApiDocument } from './openapi/document';

/**
 * `npm run openapi:write`: writes the OpenAPI document the API serves at
 * /docs-json to the file given (docs/openapi.json). The app is built, never
 * started: no request is served and nothing connects to PostgreSQL.
 */
async function main(path: string): Promise<void> {
  const config = loadConfigOrExit();
  const app = await createApiApp(config, createLogger({ level: 'error', format: 'json', service: 'openapi' }));
  writeFileSync(path, `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`);
  await app.close();
}

const [path] = process.argv.slice(2);
if (!path) {
  process.stderr.write('usage: node dist/apps/api/src/write-openapi.js <file>\n');
  process.exit(2);
}
main(path).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
