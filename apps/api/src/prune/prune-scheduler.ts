import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { DomainError } from '@app/domain';
import { findSession, insertOutbox, OutboxMessage } from '@app/event-store';
import { JobDispatcher, JobName, OutboxRelay, PruneJobData, sessionJobId } from '@app/queue';

const pruneMessage = (tenantId: string, sessionId: string, headSeq: number, discriminator: string | number): OutboxMessage => {
  const payload: PruneJobData = { tenantId, sessionId, headSeq };
  return { jobName: JobName.Prune, jobId: sessionJobId(JobName.Prune, tenantId, sessionId, discriminator), payload: { ...payload } };
};

/**
 * The trigger of the run scheduled by a step: while one waits for the
 * session, later steps fold into it (it reads the log when it runs, so it
 * covers them); while one runs, exactly one follow-up is kept.
 */
export function scheduledPruneMessage(tenantId: string, sessionId: string, headSeq: number): OutboxMessage {
  return { ...pruneMessage(tenantId, sessionId, headSeq, headSeq), deduplicationId: sessionJobId(JobName.Prune, tenantId, sessionId, 'session') };
}

/**
 * A session's prune/archive job, like a compaction, is an outbox row (so
 * the reconciler brings it back when BullMQ loses it) enqueued through the
 * dispatcher: after each step.finished (written in the append's transaction
 * by triggerAfterAppend, enqueued here with the fold delay) and on demand.
 */
@Injectable()
export class PruneScheduler {
  constructor(
    private readonly db: Database,
    private readonly dispatcher: JobDispatcher,
    private readonly relay: OutboxRelay,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * After the append committed: its trigger enqueued `jobDelayMs` from now,
   * folded into the session's waiting run if there is one. Not a debounce
   * that restarts the delay on every step: an agent stepping faster than
   * the delay would never be pruned. Never fails the append: with Redis
   * unreachable the sweeper enqueues the row once it is back.
   */
  async afterStep(tenantId: string, sessionId: string, headSeq: number): Promise<void> {
    await this.relay.dispatchWritten(this.db, tenantId, scheduledPruneMessage(tenantId, sessionId, headSeq), { delayMs: this.config.prune.jobDelayMs });
  }

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
