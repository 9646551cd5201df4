import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, Tx } from '@app/database';
import { within } from '@app/lifecycle';
import { createRedis, JobName, QueueName } from '@app/queue';
import { deleteOrphanContents, expireUnattachedRefs } from '@app/tool-output-store';

/** The garbage collector's pool: role session_store_gc (tool-output tables of every tenant, nothing else). */
export const GC_DB = Symbol('GC_DB');

/** Rows deleted per transaction, so a large backlog never holds locks for long. */
const GC_BATCH = 500;

/**
 * The tool-output garbage collector (see libs/tool-output-store gc.store.ts
 * for what expires): a BullMQ job scheduler runs it every
 * TOOL_OUTPUT_GC_INTERVAL_MS on the maintenance queue; upserting the
 * scheduler from every worker is idempotent, so one run happens per interval.
 */
@Injectable()
export class ToolOutputGc implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ToolOutputGc.name);
  private readonly redis: Redis;
  private readonly queue: Queue;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(GC_DB) private readonly db: Database,
  ) {
    this.redis = createRedis(config.redis.url, 'worker', 'gc');
    this.queue = new Queue(QueueName.Maintenance, { connection: this.redis, prefix: config.redis.prefix });
  }

  onApplicationBootstrap(): void {
    // Not awaited: with Redis down the worker still starts, and the upsert goes through once it is back.
    this.queue
      .upsertJobScheduler(
        JobName.ToolOutputGc,
        { every: this.config.toolOutput.gcIntervalMs },
        { name: JobName.ToolOutputGc, data: {}, opts: { removeOnComplete: { count: 20 }, removeOnFail: { count: 50 } } },
      )
      .catch((error: Error) => this.logger.warn(`tool-output GC schedule: ${error.message}`));
  }

  /** One collection: expired uploads first (their contents become orphans), then orphan contents. */
  async run(): Promise<{ refs: number; contents: number }> {
    const retention = this.config.toolOutput.retentionSeconds;
    const drain = async (step: (tx: Tx) => Promise<number>) => {
      let total = 0;
      for (let deleted = GC_BATCH; deleted === GC_BATCH; total += deleted) deleted = await this.db.systemTx(step);
      return total;
    };
    const refs = await drain((tx) => expireUnattachedRefs(tx, retention, GC_BATCH));
    const contents = await drain((tx) => deleteOrphanContents(tx, retention, GC_BATCH));
    if (refs + contents > 0) this.logger.log(`tool-output GC: ${refs} expired upload(s), ${contents} content(s) deleted`);
    return { refs, contents };
  }

  async onApplicationShutdown(): Promise<void> {
    // BullMQ's close waits for Redis; a worker stopping during an outage must not.
    await within(this.queue.close(), 2000, 'closing the GC queue').catch(() => undefined);
    this.redis.disconnect();
    await this.db.close();
  }
}
