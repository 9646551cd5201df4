import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { claimUnsettledCompactions, recordReconciliation, UnsettledCompaction } from '@app/event-store';
import { CompactJobData, JobDispatcher } from '@app/queue';
import { CompactSession } from './compaction/compact-session';
import { SWEEPER_DB } from './worker-db';

/** Rows looked at per transaction. */
const BATCH = 200;

/**
 * Makes every compaction trigger end. BullMQ alone can lose one: a job that
 * stalled more than `maxStalledCount` times fails with its marker still
 * pending (and its deduplication key swallows later triggers), and a Redis
 * that loses its data loses every queued job. On a timer, the reconciler
 * takes dispatched triggers whose marker is still open, skips those a live
 * job holds, re-enqueues the others under a fresh id, and after
 * RECONCILE_MAX_ATTEMPTS re-enqueues closes the marker as compaction.failed.
 * Several workers share the rows through SKIP LOCKED.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(Reconciler.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SWEEPER_DB) private readonly sweeperDb: Database,
    private readonly dispatcher: JobDispatcher,
    private readonly compactSession: CompactSession,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.tick(), this.config.reconciler.intervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    // Without Redis nothing can be told live or re-enqueued; the outbox keeps everything meanwhile.
    if (this.running || !this.dispatcher.connected) return;
    this.running = this.runOnce()
      .catch((error: Error) => this.logger.warn(`reconciliation failed: ${error.message}`))
      .finally(() => (this.running = undefined));
  }

  /** One pass over every due row; returns how many markers were re-enqueued or given up. */
  async runOnce(): Promise<number> {
    let acted = 0;
    for (;;) {
      const { claimed, changed } = await this.sweeperDb.systemTx(async (tx) => {
        const rows = await claimUnsettledCompactions(tx, this.config.reconciler.afterMs, BATCH);
        const outcomes = [];
        for (const row of rows) outcomes.push({ ...row, outcome: await this.reconcile(row) });
        await recordReconciliation(tx, outcomes);
        return { claimed: rows.length, changed: outcomes.filter((o) => o.outcome !== 'live' && !o.closed).length };
      });
      acted += changed;
      if (claimed < BATCH) return acted;
    }
  }

  private async reconcile(row: UnsettledCompaction): Promise<'settled' | 'requeued' | 'live'> {
    if (row.closed) return 'settled';
    if (await this.dispatcher.hasLiveJob(row)) return 'live';
    const marker = row.payload as unknown as CompactJobData;
    if (row.reconcileAttempts >= this.config.reconciler.maxAttempts) {
      const reason = `reconciler: no job closed marker ${marker.markerSeq} after ${row.reconcileAttempts} re-enqueues`;
      this.logger.warn(`session ${marker.sessionId}: ${reason}; closing it as failed`);
      await this.compactSession.giveUp(marker, new Error(reason));
      return 'settled';
    }
    const attempt = row.reconcileAttempts + 1;
    this.logger.warn(`session ${marker.sessionId}: marker ${marker.markerSeq} pending with no live job; re-enqueued (attempt ${attempt})`);
    await this.dispatcher.redispatch(row, attempt);
    return 'requeued';
  }
}
