import { Database } from '@app/database';
import { claimUndispatchedOutbox, markOutboxDispatched, OutboxRow, recordOutboxError } from '@app/event-store';
import { JobDispatcher } from './job-dispatcher';

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

  /** One sweep with the sweeper role's pool; returns how many rows were enqueued. */
  async sweep(sweeperDb: Database, graceMs: number, batchSize = 100): Promise<number> {
    return sweeperDb.systemTx(async (tx) => {
      const rows = await claimUndispatchedOutbox(tx, graceMs, batchSize);
      const done: OutboxRow[] = [];
      for (const row of rows) {
        try {
          await this.dispatcher.dispatch(row);
          done.push(row);
        } catch (error) {
          await recordOutboxError(tx, row, error instanceof Error ? error.message : String(error));
        }
      }
      await markOutboxDispatched(tx, done);
      return done.length;
    });
  }
}
