import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, Tx } from '@app/database';
import { deleteAbandonedUploads, deleteOrphanContents, expireUnattachedRefs } from '@app/tool-output-store';

/** The garbage collector's pool: role session_store_gc (tool-output tables of every tenant, nothing else). */
export const GC_DB = Symbol('GC_DB');

/** Rows deleted per transaction, so a large backlog never holds locks for long. */
const GC_BATCH = 500;

/**
 * The tool-output garbage collector (see libs/tool-output-store gc.store.ts
 * for what expires), run by its job scheduler on the maintenance queue
 * (job-schedules.ts).
 */
@Injectable()
export class ToolOutputGc implements OnApplicationShutdown {
  private readonly logger = new Logger(ToolOutputGc.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(GC_DB) private readonly db: Database,
  ) {}

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
    await this.db.close();
  }
}
