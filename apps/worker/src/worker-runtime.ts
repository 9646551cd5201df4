import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Job, Worker, WorkerOptions } from 'bullmq';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { within } from '@app/lifecycle';
import { logContext } from '@app/logging';
import { createRedis, JobDispatcher, OutboxRelay, QueueName, RedisClient } from '@app/queue';
import { CompactionProcessor } from './compaction/compaction.processor';
import { MaintenanceProcessor } from './maintenance.processor';
import { SearchIndexing } from './search-indexing';
import { SWEEPER_DB } from './worker-db';
import { WorkerMetrics } from './worker-metrics';

type Processor = (job: Job, signal?: AbortSignal) => Promise<unknown>;

/**
 * Starts the BullMQ workers and the outbox sweeper, and stops them in order
 * on shutdown (workers first, so running jobs finish before pools close).
 */
@Injectable()
export class WorkerRuntime implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerRuntime.name);
  private readonly workers: Worker[] = [];
  private readonly redis: RedisClient;
  private sweepTimer?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SWEEPER_DB) private readonly sweeperDb: Database,
    private readonly relay: OutboxRelay,
    private readonly dispatcher: JobDispatcher,
    private readonly maintenance: MaintenanceProcessor,
    private readonly compaction: CompactionProcessor,
    private readonly search: SearchIndexing,
    private readonly metrics: WorkerMetrics,
  ) {
    this.redis = createRedis(config.redis, 'worker');
  }

  /**
   * Both queues alike: a lock that outlasts one summarizer call (compaction
   * and the archive's LLM digest; BullMQ renews it while the process lives,
   * so it bounds only how long a dead worker's job waits), and a job whose
   * worker died twice fails instead of killing a third: it is likely what
   * kills them (poison input, memory), and the reconciler retries it a
   * bounded number of times under a fresh id.
   */
  onApplicationBootstrap(): void {
    const options: Partial<WorkerOptions> = {
      lockDuration: this.config.worker.lockDurationMs,
      stalledInterval: this.config.worker.stalledIntervalMs,
      maxStalledCount: 1,
    };
    this.start(QueueName.Maintenance, (job, signal) => this.maintenance.process(job, signal), options);
    this.start(QueueName.Compaction, (job, signal) => this.compaction.process(job, signal), options);
    this.start(QueueName.Search, (job, signal) => this.search.index(job.data, signal), { ...options, concurrency: 1 });
    this.sweepTimer = setInterval(() => this.sweepOnce(), this.config.outbox.sweepIntervalMs);
    this.logger.log(`worker started (prefix ${this.config.redis.prefix})`);
  }

  private start(queue: QueueName, process: Processor, options: Partial<WorkerOptions>): void {
    // Three parameters: BullMQ hands the processor an AbortSignal (cancelAllJobs on shutdown).
    // Every log line of the job carries its queue, id, tenant, session and marker.
    // However an attempt ends, the job leaves its tenant's fair-share backlog.
    const worker = new Worker(
      queue,
      (job, _token, signal) =>
        logContext.run(
          { queue, jobId: job.id, jobName: job.name, tenantId: job.data?.tenantId, sessionId: job.data?.sessionId, markerSeq: job.data?.markerSeq },
          () => process(job, signal).finally(() => this.dispatcher.ended(queue, job)),
        ),
      { connection: this.redis, prefix: this.config.redis.prefix, concurrency: this.config.worker.concurrency, ...options },
    );
    // While Redis is down its connection reports the outage once per interval; BullMQ's own copies of the error are noise.
    worker.on('error', (error) => this.redis.status === 'ready' && this.logger.warn(`${queue} worker: ${error.message}`));
    worker.on('failed', (job, error) =>
      this.logger.warn(`${queue} job ${job?.id} (session ${job?.data?.sessionId}, attempt ${job?.attemptsMade}) failed: ${error.message}`),
    );
    this.metrics.observe(worker, queue);
    this.workers.push(worker);
  }

  private sweepOnce(): void {
    if (this.sweeping) return;
    this.sweeping = this.relay
      .sweep(this.sweeperDb, this.config.outbox.graceMs)
      .then((n) => n > 0 && this.logger.log(`outbox sweeper enqueued ${n} job(s)`))
      .catch((error: Error) => this.logger.warn(`outbox sweep failed: ${error.message}`))
      .finally(() => (this.sweeping = undefined));
  }

  /**
   * Running jobs get half the shutdown time to finish; then their signal
   * fires and they stop early (their markers stay pending, and the job is
   * retried by another worker once its lock lapses). With Redis gone,
   * nothing can be handed back, so the workers close at once.
   */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweepTimer);
    const budget = this.config.shutdownTimeoutMs;
    const cancel = setTimeout(() => this.workers.forEach((w) => w.cancelAllJobs('shutdown')), budget / 2);
    const force = this.redis.status !== 'ready';
    await within(Promise.all(this.workers.map((w) => w.close(force))), budget * 0.7, 'closing the BullMQ workers').catch((error: Error) =>
      this.logger.warn(error.message),
    );
    clearTimeout(cancel);
    await this.sweeping;
    await this.sweeperDb.close();
    this.redis.disconnect();
  }
}
