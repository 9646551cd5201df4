import { Injectable } from '@nestjs/common';
import { Database } from '@app/database';
import { DomainError } from '@app/domain';
import { findSession, insertOutbox } from '@app/event-store';
import { JobDispatcher, OutboxRelay, pruneMessage } from '@app/queue';

/**
 * A session's prune/archive job, like a compaction, is an outbox row (so
 * the reconciler brings it back when BullMQ loses it) enqueued through the
 * dispatcher: after each step.finished (written in the append's transaction
 * by triggerAfterAppend, enqueued by AppendCommitted with the fold delay)
 * and on demand, here.
 */
@Injectable()
export class PruneScheduler {
  constructor(
    private readonly db: Database,
    private readonly dispatcher: JobDispatcher,
    private readonly relay: OutboxRelay,
  ) {}

  /**
   * A run now (`POST .../prune` without wait), beside any scheduled one
   * (which then finds nothing new). Null for an unknown session; 503 while
   * Redis is unreachable, before anything is written (the client can ask
   * for `wait` instead).
   */
  async now(tenantId: string, sessionId: string): Promise<{ headSeq: number; jobId: string } | null> {
    const written = await this.db.tenantTx(tenantId, async (tx) => {
      const session = await findSession(tx, sessionId);
      if (!session) return null;
      if (!this.dispatcher.connected) {
        throw new DomainError('unavailable', 'redis_unavailable', 'The job queue cannot be reached; send {"wait": true} to run the job in this request');
      }
      const [row] = await insertOutbox(tx, [pruneMessage(tenantId, sessionId, session.headSeq, `now-${session.headSeq}`)]);
      return { headSeq: session.headSeq, row };
    });
    if (!written) return null;
    // Null when Redis went away in between: the row is committed and the sweeper enqueues it under the same id.
    const [jobId] = await this.relay.dispatchNow(this.db, [written.row]);
    return { headSeq: written.headSeq, jobId: jobId ?? written.row.jobId };
  }
}
