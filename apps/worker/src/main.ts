import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@app/config';
import { ensureDatabase, runMigrations } from '@app/database';
import { logLevels } from '@app/config';
import { WorkerModule } from './worker.module';

async function main(): Promise<void> {
  const config = loadConfig();
  await ensureDatabase(config.database.ownerUrl);
  await runMigrations(config.database.ownerUrl);
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { logger: logLevels(config.logLevel) });
  app.enableShutdownHooks();
  await app.init();
  console.log('session-store worker running');
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
