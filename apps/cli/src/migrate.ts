import { loadConfig } from '@app/config';
import { ensureDatabase, runMigrations } from '@app/database';

/** `npm run migrate`: create the database if absent and apply pending migrations. */
async function main(): Promise<void> {
  const config = loadConfig();
  await ensureDatabase(config.database.ownerUrl);
  const applied = await runMigrations(config.database.ownerUrl);
  console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'schema is up to date');
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
