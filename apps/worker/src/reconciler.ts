import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { claimUnsettledTriggers, deleteFinishedOutbox, recordReconciliation, UnsettledTrigger } from '@app/event-store';
import { CompactJobData, JobDispatcher, JobName, SessionJobData } from '@app/queue';
import { CompactSession } from './compaction/compact-session';
import { SWEEPER_DB } from './worker-db';

/** Rows looked at per transaction. */
const BATCH = 200;
/** Finished outbox rows deleted per transaction, and how often a worker looks for them. */
const RETENTION_BATCH = 5000;
const RETENTION_EVERY_MS = 10 * 60_000;

/**
 * Makes every compaction and prune trigger end. BullMQ alone can lose one:
 * a job that stalled more than `maxStalledCount` times fails with its work
 * undone (and its deduplication key swallows later triggers), and a Redis
 * that loses its data loses every queued job. On a timer, the reconciler
 * takes dispatched triggers whose work is still open (a compaction marker
 * not closed in the log, a prune trigger no run has settled), skips those a
 * live job holds, re-enqueues the others under a fresh id, and after
 * RECONCILE_MAX_ATTEMPTS re-enqueues gives up: a marker is closed as
 * compaction.failed; a prune trigger is only settled (pruning is an
 * optimisation of the view, nothing waits on it; the next step schedules
 * another). Several workers share the rows through SKIP LOCKED.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(Reconciler.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private retainedAt = 0;

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
      .then(() => this.deleteFinishedRows())
      .catch((error: Error) => this.logger.warn(`reconciliation failed: ${error.message}`))
      .finally(() => (this.running = undefined));
  }

  /** One pass over every due row; returns how many triggers were re-enqueued or given up. */
  async runOnce(): Promise<number> {
    let acted = 0;
    for (;;) {
      const { claimed, changed } = await this.sweeperDb.systemTx(async (tx) => {
        const rows = await claimUnsettledTriggers(tx, this.config.reconciler.afterMs, BATCH);
        const outcomes = [];
        for (const row of rows) outcomes.push({ ...row, outcome: await this.reconcile(row) });
        await recordReconciliation(tx, outcomes);
        return { claimed: rows.length, changed: outcomes.filter((o) => o.outcome !== 'live' && !o.closed).length };
      });
      acted += changed;
      if (claimed < BATCH) return acted;
    }
  }

  /** Keeps the outbox as large as its recent traffic (one row per trigger): finished rows go after OUTBOX_RETENTION_HOURS. */
  async deleteFinishedRows(now = Date.now()): Promise<number> {
    if (now - this.retainedAt < RETENTION_EVERY_MS) return 0;
    this.retainedAt = now;
    let deleted = 0;
    for (;;) {
      const batch = await this.sweeperDb.systemTx((tx) => deleteFinishedOutbox(tx, this.config.reconciler.outboxRetentionHours, RETENTION_BATCH));
      deleted += batch;
      if (batch < RETENTION_BATCH) return deleted;
    }
  }

  private async reconcile(row: UnsettledTrigger): Promise<'settled' | 'requeued' | 'live'> {
    if (row.closed) return 'settled';
    if (await this.dispatcher.hasLiveJob(row)) return 'live';
    const { sessionId } = row.payload as unknown as SessionJobData;
    if (row.reconcileAttempts >= this.config.reconciler.maxAttempts) {
      await this.giveUp(row);
      return 'settled';
    }
    const attempt = row.reconcileAttempts + 1;
    this.logger.warn(`session ${sessionId}: ${row.jobName} trigger ${row.jobId} open with no live job; re-enqueued (attempt ${attempt})`);
    await this.dispatcher.redispatch(row, attempt);
    return 'requeued';
  }

  private async giveUp(row: UnsettledTrigger): Promise<void> {
    if (row.jobName !== JobName.Compact) {
      this.logger.warn(`session ${(row.payload as unknown as SessionJobData).sessionId}: no job settled ${row.jobName} trigger ${row.jobId} after ${row.reconcileAttempts} re-enqueues; dropped`);
      return;
    }
    const marker = row.payload as unknown as CompactJobData;
    const reason = `reconciler: no job closed marker ${marker.markerSeq} after ${row.reconcileAttempts} re-enqueues`;
    this.logger.warn(`session ${marker.sessionId}: ${reason}; closing it as failed`);
    await this.compactSession.giveUp(marker, new Error(reason));
  }
}
