import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { createRedis, OutboxRelay, QueueName } from '@app/queue';
import { CompactionProcessor } from './compaction/compaction.processor';
import { MaintenanceProcessor } from './maintenance.processor';

export const SWEEPER_DB = Symbol('SWEEPER_DB');

const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Starts the BullMQ workers and the outbox sweeper, and stops them in order
 * on shutdown (workers first, so running jobs finish before pools close).
 */
@Injectable()
export class WorkerRuntime implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerRuntime.name);
  private readonly workers: Worker[] = [];
  private readonly redis: Redis;
  private sweepTimer?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SWEEPER_DB) private readonly sweeperDb: Database,
    private readonly relay: OutboxRelay,
    private readonly maintenance: MaintenanceProcessor,
    private readonly compaction: CompactionProcessor,
  ) {
    this.redis = createRedis(config.redis.url, 'worker');
  }

  onApplicationBootstrap(): void {
    const worker = new Worker(QueueName.Maintenance, (job, _token, signal) => this.maintenance.process(job, signal), {
      connection: this.redis,
      prefix: this.config.redis.prefix,
      concurrency: this.config.worker.concurrency,
    });
    worker.on('error', (error) => this.logger.warn(`worker: ${error.message}`));
    this.workers.push(worker);
    // Three parameters: BullMQ hands the processor an AbortSignal (cancelAllJobs on shutdown).
    const compaction = new Worker(QueueName.Compaction, (job, _token, signal) => this.compaction.process(job, signal), {
      connection: this.redis,
      prefix: this.config.redis.prefix,
      concurrency: this.config.worker.concurrency,
      lockDuration: this.config.worker.lockDurationMs,
      stalledInterval: this.config.worker.stalledIntervalMs,
    });
    compaction.on('error', (error) => this.logger.warn(`compaction worker: ${error.message}`));
    compaction.on('failed', (job, error) => this.logger.warn(`compaction job ${job?.id} failed (attempt ${job?.attemptsMade}): ${error.message}`));
    this.workers.push(compaction);
    this.sweepTimer = setInterval(() => this.sweepOnce(), this.config.outbox.sweepIntervalMs);
    this.logger.log(`worker started (prefix ${this.config.redis.prefix})`);
  }

  private sweepOnce(): void {
    if (this.sweeping) return;
    this.sweeping = this.relay
      .sweep(this.sweeperDb, this.config.outbox.graceMs)
      .then((n) => n > 0 && this.logger.log(`outbox sweeper enqueued ${n} job(s)`))
      .catch((error: Error) => this.logger.warn(`outbox sweep failed: ${error.message}`))
      .finally(() => (this.sweeping = undefined));
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweepTimer);
    // Running jobs get a grace period, then their signal fires: they fail fast and another worker retries them.
    const grace = setTimeout(() => this.workers.forEach((w) => w.cancelAllJobs('shutdown')), SHUTDOWN_GRACE_MS);
    await Promise.all(this.workers.map((w) => w.close()));
    clearTimeout(grace);
    await this.sweeping;
    await this.sweeperDb.close();
    this.redis.disconnect();
  }
}
