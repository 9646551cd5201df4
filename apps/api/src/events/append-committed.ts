import { Injectable } from '@nestjs/common';
import { Database } from '@app/database';
import { OutboxRow } from '@app/event-store';
import { OutboxRelay } from '@app/queue';
import { Metrics } from '../metrics/metrics';
import { PruneScheduler } from '../prune/prune-scheduler';
import { SessionHeads } from './events-stream.heads';

/** What an append committed: null fields when it wrote nothing of that kind (a replay writes nothing). */
export interface CommittedAppend {
  tenantId: string;
  sessionId: string;
  /** Events written. */
  appended: number;
  /** The head after the commit, when events were written: the live streams are woken for it. */
  headSeq: number | null;
  /** Outbox rows written with the events (compaction jobs): enqueued now, by the sweeper if that fails. */
  outbox: readonly OutboxRow[];
  /** The head of a step whose prune trigger row was written (PruneScheduler.afterStep enqueues it with the fold delay). */
  pruneAfterSeq: number | null;
}

/** What a writer hands AppendCommitted besides the session. */
export type AppendWrites = Omit<CommittedAppend, 'tenantId' | 'sessionId'>;

/** The one after-commit hook of every writer of events in the API: metrics, live streams, jobs. */
@Injectable()
export class AppendCommitted {
  constructor(
    private readonly db: Database,
    private readonly relay: OutboxRelay,
    private readonly pruneScheduler: PruneScheduler,
    private readonly metrics: Metrics,
    private readonly heads: SessionHeads,
  ) {}

  /** Returns each outbox row's enqueued job id (null where Redis refused: the sweeper's then). */
  async after({ tenantId, sessionId, appended, headSeq, outbox, pruneAfterSeq }: CommittedAppend): Promise<Array<string | null>> {
    if (appended > 0) this.metrics.appendedEvents.inc(appended);
    if (headSeq !== null) this.heads.publish({ tenantId, sessionId, headSeq });
    const jobIds = await this.relay.dispatchNow(this.db, outbox);
    if (pruneAfterSeq !== null) await this.pruneScheduler.afterStep(tenantId, sessionId, pruneAfterSeq);
    return jobIds;
  }
}
