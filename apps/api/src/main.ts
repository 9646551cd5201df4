import 'reflect-metadata';
import { setFlagsFromString } from 'node:v8';
import { loadConfigOrExit } from '@app/config';
import { Database } from '@app/database';
import { prepareDatabase, requireService, runProcess } from '@app/lifecycle';
import { createLogger } from '@app/logging';
import { probeRedis, redisVariable } from '@app/queue';
import { createApiApp } from './create-api-app';
import { EventStreamsService } from './events/events-stream.service';
import { Draining } from './http/draining';
import { drainHttpApp } from './http/http-server';

/*
 * V8 lets the old generation grow to 2-4x what survived the last full GC
 * before collecting again. Under 64 clients appending 100 KB results, whose
 * bodies outlive a few scavenges while they wait for the database, the API
 * peaked at ~370 MiB. 2x keeps that peak near 260 MiB; 1.5x kept it lower
 * still but made major collections frequent enough to add ~2 ms to a small
 * read after large ones (docs/decisions.md, "Round trips, pass-through reads
 * and memory"). V8 reads this flag at each limit computation, so setting it
 * here, before any load, takes effect wherever the API is started.
 */
setFlagsFromString('--heap-growing-percent=100');

const config = loadConfigOrExit();
const logger = createLogger({ level: config.logLevel, format: config.logFormat, service: 'api' });

void runProcess({
  logger,
  shutdownTimeoutMs: config.shutdownTimeoutMs,
  start: async () => {
    const { appUrl } = config.database;
    await prepareDatabase(config.database);
    const app = await createApiApp(config, logger);
    await requireService('APP_DATABASE_URL', 'PostgreSQL', appUrl, 5432, () => app.get(Database).ping());
    // Appends work without Redis (jobs wait in the outbox), so an unreachable Redis is a warning here, not a failure.
    const redis = await probeRedis(config.redis);
    if (redis) logger.warn(`${redisVariable(config.redis)}: Redis at ${redis.endpoint} is unreachable (${redis.cause}); appends are accepted and their jobs wait in the outbox`);
    await app.listen(config.http.port, config.http.host);
    logger.info({ host: config.http.host, port: config.http.port }, `session-store API listening on http://${config.http.host}:${config.http.port} (docs at /docs)`);
    return (deadline) => {
      // Long-polls (compactions {wait}, context?wait=) answer with what they have; live event streams never finish
      // on their own: both end now rather than hold the drain until they are cut.
      app.get(Draining).begin();
      app.get(EventStreamsService).endAll();
      return drainHttpApp(app, deadline);
    };
  },
});
