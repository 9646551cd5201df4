import { Counter, Registry } from 'prom-client';
import { Database } from '@app/database';
import { OutboxRow } from '@app/event-store';
import { OutboxRelay, scheduledPruneMessage, SessionHead } from '@app/queue';

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
  /** The head of a step whose prune trigger row was written: enqueued now with the fold delay, by the sweeper if that fails. */
  pruneAfterSeq: number | null;
}

/** What a writer hands AppendCommitted besides the session. */
export type AppendWrites = Omit<CommittedAppend, 'tenantId' | 'sessionId'>;

/** How the process tells live streams of a committed head; never throws. */
export type PublishHead = (head: SessionHead) => void;

/**
 * The one after-commit hook of every writer of events, in the API and the
 * worker: metrics, live streams, jobs. Only the publishing of a head is the
 * process's own (the API wakes its own streams at once as well).
 */
export class AppendCommitted {
  private readonly appendedEvents: Counter;

  constructor(
    private readonly db: Database,
    private readonly relay: OutboxRelay,
    private readonly pruneDelayMs: number,
    registry: Registry,
    private readonly publishHead: PublishHead,
  ) {
    this.appendedEvents = new Counter({
      name: 'session_store_appended_events_total',
      help: "Events written by this process's writers: appends, the service's own events, imports, compaction and prune results (replays not counted)",
      registers: [registry],
    });
  }

  /** Returns each outbox row's enqueued job id (null where Redis refused: the sweeper's then). Never fails the write. */
  async after({ tenantId, sessionId, appended, headSeq, outbox, pruneAfterSeq }: CommittedAppend): Promise<Array<string | null>> {
    if (appended > 0) this.appendedEvents.inc(appended);
    if (headSeq !== null) this.publishHead({ tenantId, sessionId, headSeq });
    const jobIds = await this.relay.dispatchNow(this.db, outbox);
    // Not a debounce that restarts the delay on every step: an agent stepping faster than the delay would never be pruned.
    if (pruneAfterSeq !== null) await this.relay.dispatchWritten(this.db, tenantId, scheduledPruneMessage(tenantId, sessionId, pruneAfterSeq), { delayMs: this.pruneDelayMs });
    return jobIds;
  }
}
