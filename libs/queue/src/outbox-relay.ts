import { Database } from '@app/database';
import { claimUndispatchedOutbox, markOutboxDispatched, markOutboxDispatchedByJobId, OutboxMessage, OutboxRow, recordOutboxError } from '@app/event-store';
import { DispatchOptions, JobDispatcher } from './job-dispatcher';

/**
 * Moves committed outbox rows into BullMQ. The API calls `dispatchNow` right
 * after commit; the worker's sweeper calls `sweep` on a timer for whatever
 * that missed (Redis down, a crash between commit and enqueue). Both are
 * safe to repeat: job ids are deterministic.
 */
export class OutboxRelay {
  constructor(private readonly dispatcher: JobDispatcher) {}

  /**
   * Best effort; never throws. Returns, per row, the id of the job doing its
   * work (see JobDispatcher.dispatch), or null when the row was left to the sweeper.
   */
  async dispatchNow(db: Database, rows: readonly OutboxRow[]): Promise<Array<string | null>> {
    const done: OutboxRow[] = [];
    const jobIds: Array<string | null> = [];
    for (const row of rows) {
      try {
        jobIds.push(await this.dispatcher.dispatch(row));
        done.push(row);
      } catch {
        // Left undispatched: the sweeper retries it.
        jobIds.push(null);
      }
    }
    if (done.length > 0) {
      await db.tenantTx(done[0].tenantId, (tx) => markOutboxDispatched(tx, done)).catch(() => undefined);
    }
    return jobIds;
  }

  /**
   * `dispatchNow` for a row written by another step of the request, which
   * kept only its message (the append's prune trigger), with the caller's
   * options. Best effort; never throws: the sweeper has the row.
   */
  async dispatchWritten(db: Database, tenantId: string, message: OutboxMessage, options: DispatchOptions): Promise<void> {
    try {
      await this.dispatcher.dispatch(message, options);
    } catch {
      return;
    }
    await db.tenantTx(tenantId, (tx) => markOutboxDispatchedByJobId(tx, message.jobId)).catch(() => undefined);
  }

  /**
   * Drains the undispatched rows with the sweeper role's pool, in batches of
   * `batchSize` (each claimed with SKIP LOCKED in its own short transaction
   * and enqueued with one addBulk), until a batch comes back short. Returns
   * how many rows were enqueued.
   */
  async sweep(sweeperDb: Database, graceMs: number, batchSize = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const { claimed, enqueued } = await sweeperDb.systemTx(async (tx) => {
        const rows = await claimUndispatchedOutbox(tx, graceMs, batchSize);
        try {
          await this.dispatcher.dispatchBulk(rows);
        } catch (error) {
          // The whole batch stays undispatched (its attempts counted); the next sweep retries it.
          await recordOutboxError(tx, rows, error instanceof Error ? error.message : String(error));
          return { claimed: rows.length, enqueued: 0 };
        }
        await markOutboxDispatched(tx, rows);
        return { claimed: rows.length, enqueued: rows.length };
      });
      total += enqueued;
      if (claimed < batchSize || enqueued === 0) return total;
    }
  }
}
