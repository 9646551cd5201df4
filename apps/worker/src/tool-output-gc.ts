import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, Tx } from '@app/database';
import { within } from '@app/lifecycle';
import { createRedis, JobName, QueueName } from '@app/queue';
import { deleteAbandonedUploads, deleteOrphanContents, expireUnattachedRefs } from '@app/tool-output-store';

/** The garbage collector's pool: role session_store_gc (tool-output tables of every tenant, nothing else). */
export const GC_DB = Symbol('GC_DB');

/** Rows deleted per transaction, so a large backlog never holds locks for long. */
const GC_BATCH = 500;

/**
 * The tool-output garbage collector (see libs/tool-output-store gc.store.ts
 * for what expires): a BullMQ job scheduler runs it every
 * TOOL_OUTPUT_GC_INTERVAL_MS on the maintenance queue; upserting the
 * scheduler from every worker is idempotent, so one run happens per interval.
 * Each worker re-creates it, on the reconciler's interval, when it is gone
 * (a Redis that lost its data).
 */
@Injectable()
export class ToolOutputGc implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ToolOutputGc.name);
  private readonly redis: Redis;
  private readonly queue: Queue;
  private checkTimer?: NodeJS.Timeout;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(GC_DB) private readonly db: Database,
  ) {
    this.redis = createRedis(config.redis.url, 'worker', 'gc');
    this.queue = new Queue(QueueName.Maintenance, { connection: this.redis, prefix: config.redis.prefix });
  }

  onApplicationBootstrap(): void {
    // Not awaited: with Redis down the worker still starts, and the upsert goes through once it is back.
    void this.schedule();
    this.checkTimer = setInterval(() => void this.ensureScheduled(), this.config.reconciler.intervalMs);
  }

  private schedule(): Promise<unknown> {
    return this.queue
      .upsertJobScheduler(
        JobName.ToolOutputGc,
        { every: this.config.toolOutput.gcIntervalMs },
        { name: JobName.ToolOutputGc, data: {}, opts: { removeOnComplete: { count: 20 }, removeOnFail: { count: 50 } } },
      )
      .catch((error: Error) => this.logger.warn(`tool-output GC schedule: ${error.message}`));
  }

  /** Re-creates the scheduler only when missing, so a running schedule is never shifted. */
  async ensureScheduled(): Promise<void> {
    const existing = await this.queue.getJobScheduler(JobName.ToolOutputGc).catch(() => null);
    if (existing === undefined) {
      this.logger.warn('tool-output GC schedule missing (Redis lost its data?); re-created');
      await this.schedule();
    }
  }

  /** One collection: abandoned uploads, expired uploads (their contents become orphans), then orphan contents. */
  async run(): Promise<{ abandoned: number; refs: number; contents: number }> {
    const { retentionSeconds, uploadStagingTtlSeconds } = this.config.toolOutput;
    const drain = async (step: (tx: Tx) => Promise<number>) => {
      let total = 0;
      for (let deleted = GC_BATCH; deleted === GC_BATCH; total += deleted) deleted = await this.db.systemTx(step);
      return total;
    };
    const abandoned = await drain((tx) => deleteAbandonedUploads(tx, uploadStagingTtlSeconds, GC_BATCH));
    const refs = await drain((tx) => expireUnattachedRefs(tx, retentionSeconds, GC_BATCH));
    const contents = await drain((tx) => deleteOrphanContents(tx, retentionSeconds, GC_BATCH));
    if (abandoned + refs + contents > 0) {
      this.logger.log(`tool-output GC: ${abandoned} abandoned upload(s), ${refs} expired upload(s), ${contents} content(s) deleted`);
    }
    return { abandoned, refs, contents };
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.checkTimer);
    // BullMQ's close waits for Redis; a worker stopping during an outage must not.
    await within(this.queue.close(), 2000, 'closing the GC queue').catch(() => undefined);
    this.redis.disconnect();
    await this.db.close();
  }
}
