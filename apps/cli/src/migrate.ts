import { loadConfigOrExit } from '@app/config';
import { prepareDatabase, runProcess } from '@app/lifecycle';
import { createLogger } from '@app/logging';

/** `npm run migrate`: create the database if absent and apply pending migrations. */
const config = loadConfigOrExit();
const logger = createLogger({ level: config.logLevel, format: config.logFormat, service: 'migrate' });

void runProcess({
  logger,
  shutdownTimeoutMs: config.shutdownTimeoutMs,
  start: async () => {
    const applied = await prepareDatabase(config.database);
    logger.info({ applied }, applied.length > 0 ? `applied: ${applied.join(', ')}` : 'schema is up to date');
    process.exit(0);
  },
});
