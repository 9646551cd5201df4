import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { within } from '@app/lifecycle';
import { JobDispatcher } from './job-dispatcher';
import { OutboxRelay } from './outbox-relay';
import { createRedis, RedisClient } from './redis-connection';

export const PRODUCER_REDIS = Symbol('PRODUCER_REDIS');

/** Enqueueing for the API: a fail-fast Redis connection, the dispatcher and the outbox relay. */
@Global()
@Module({
  providers: [
    { provide: PRODUCER_REDIS, inject: [APP_CONFIG], useFactory: (c: AppConfig) => createRedis(c.redis, 'producer') },
    {
      provide: JobDispatcher,
      inject: [PRODUCER_REDIS, APP_CONFIG],
      useFactory: (redis: RedisClient, c: AppConfig) => new JobDispatcher(redis, c.redis.prefix),
    },
    { provide: OutboxRelay, inject: [JobDispatcher], useFactory: (d: JobDispatcher) => new OutboxRelay(d) },
  ],
  exports: [PRODUCER_REDIS, JobDispatcher, OutboxRelay],
})
export class QueueProducerModule implements OnApplicationShutdown {
  constructor(
    private readonly dispatcher: JobDispatcher,
    @Inject(PRODUCER_REDIS) private readonly redis: RedisClient,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // BullMQ's close waits for Redis; a process stopping during an outage must not.
    await within(this.dispatcher.close(), 2000, 'closing the queues').catch(() => undefined);
    this.redis.disconnect();
  }
}
