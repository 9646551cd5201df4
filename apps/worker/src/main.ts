import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfigOrExit } from '@app/config';
import { prepareDatabase, runProcess, StartupError } from '@app/lifecycle';
import { createLogger, PinoNestLogger } from '@app/logging';
import { probeRedis, redisVariable } from '@app/queue';
import { WorkerHttp } from './worker-http';
import { WorkerModule } from './worker.module';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.logLevel, format: config.logFormat, service: 'worker' });

void runProcess({
  logger,
  shutdownTimeoutMs: config.shutdownTimeoutMs,
  start: async () => {
    await prepareDatabase(config.database);
    // A worker can do nothing without Redis: refuse to start rather than sit there silently.
    const redis = await probeRedis(config.redis);
    if (redis) throw new StartupError(`${redisVariable(config.redis)}: cannot use Redis at ${redis.endpoint}: ${redis.cause}`);
    const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { logger: new PinoNestLogger(logger) });
    await app.init();
    const port = await app.get(WorkerHttp).listen();
    logger.info({ healthPort: port }, 'session-store worker running');
    return () => app.close();
  },
});
