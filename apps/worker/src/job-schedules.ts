import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { APP_CONFIG, AppConfig } from '@app/config';
import { within } from '@app/lifecycle';
import { createRedis, JobName, QueueName, RedisClient } from '@app/queue';

/**
 * The repeatable jobs of the maintenance queue, in one place: the
 * tool-output collector (every TOOL_OUTPUT_GC_INTERVAL_MS), session
 * retention (every RETENTION_INTERVAL_MS) and the search sweep (every
 * SEARCH_SWEEP_INTERVAL_MS). Each is a BullMQ job scheduler;
 * upserting it from every worker is idempotent, so one run happens per
 * interval whatever the number of workers. Each worker re-creates a missing
 * one, on the reconciler's interval (a Redis that lost its data).
 */
@Injectable()
export class JobSchedules implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(JobSchedules.name);
  private readonly redis: RedisClient;
  private readonly queue: Queue;
  private readonly every: ReadonlyMap<JobName, number>;
  private checkTimer?: NodeJS.Timeout;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.redis = createRedis(config.redis, 'worker', 'schedules');
    this.queue = new Queue(QueueName.Maintenance, { connection: this.redis, prefix: config.redis.prefix });
    this.every = new Map([
      [JobName.ToolOutputGc, config.toolOutput.gcIntervalMs],
      [JobName.SessionRetention, config.retention.intervalMs],
      [JobName.SearchSweep, config.search.sweepIntervalMs],
    ]);
  }

  onApplicationBootstrap(): void {
    // Not awaited: with Redis down the worker still starts, and the upserts go through once it is back.
    for (const name of this.every.keys()) void this.schedule(name);
    this.checkTimer = setInterval(() => void this.ensureScheduled(), this.config.reconciler.intervalMs);
  }

  private schedule(name: JobName): Promise<unknown> {
    return this.queue
      .upsertJobScheduler(name, { every: this.every.get(name)! }, { name, data: {}, opts: { removeOnComplete: { count: 20 }, removeOnFail: { count: 50 } } })
      .catch((error: Error) => this.logger.warn(`${name} schedule: ${error.message}`));
  }

  /** Re-creates a scheduler only when missing, so a running schedule is never shifted. */
  async ensureScheduled(): Promise<void> {
    for (const name of this.every.keys()) {
      const existing = await this.queue.getJobScheduler(name).catch(() => null);
      if (existing === undefined) {
        this.logger.warn(`${name} schedule missing (Redis lost its data?); re-created`);
        await this.schedule(name);
      }
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.checkTimer);
    // BullMQ's close waits for Redis; a worker stopping during an outage must not.
    await within(this.queue.close(), 2000, 'closing the schedules queue').catch(() => undefined);
    this.redis.disconnect();
  }
}
