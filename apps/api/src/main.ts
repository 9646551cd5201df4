import 'reflect-metadata';
import { loadConfig } from '@app/config';
import { ensureDatabase, runMigrations } from '@app/database';
import { createApiApp } from './create-api-app';

async function main(): Promise<void> {
  const config = loadConfig();
  await ensureDatabase(config.database.ownerUrl);
  await runMigrations(config.database.ownerUrl);
  const app = await createApiApp(config);
  await app.listen(config.http.port, config.http.host);
  console.log(`session-store API listening on http://${config.http.host}:${config.http.port} (docs at /docs)`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
