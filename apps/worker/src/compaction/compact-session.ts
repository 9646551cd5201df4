import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, Tx } from '@app/database';
import { compactionFactsOf, costsOfCommitted, decideCompletion, NewEvent, NO_LOOKUP, nothingToCompactEvent, readModelOf } from '@app/domain';
import { clearCompactionRunning, logWriter, markCompactionRunning, pivotMarkerSeq, readWindow, rewindsAfter } from '@app/event-store';
import { CompactJobData } from '@app/queue';
import { AppendCommitted, appendUpkeep, RewriteMetrics } from '@app/use-cases';
import { WindowSummarizer } from '@app/summarizer';
import { WorkerMetrics } from '../worker-metrics';

/** What a run did; the job's return value, which `POST .../compactions {wait}` reads. */
export type CompactOutcome =
  | { outcome: 'completed'; markerSeq: number; coveredThroughSeq: number; strategy: string; tokensBefore: number; tokensAfter: number }
  /** The result was not committed: the marker was already closed (a double run) or a newer pivot landed. */
  | { outcome: 'discarded'; markerSeq: number; reason: 'duplicate' | 'stale' | 'rewound' }
  | { outcome: 'nothing_to_compact'; markerSeq: number; reason: string }
  /** No marker was pending (already done by another run, or the session is gone). */
  | { outcome: 'idle'; markerSeq: null };

/** Event ids that close a marker; one of them stored means the marker is done. */
const closingIds = (markerSeq: number) => [`cmp-${markerSeq}-completed`, `cmp-${markerSeq}-skipped`, `cmp-${markerSeq}-gave-up`];

/**
 * The compaction use case: load the window, claim the session's pending
 * marker, plan the cut, summarize with the fallback chain (no transaction or
 * lock held meanwhile, so appends go on), then commit under the session lock,
 * at most once per marker. Events appended while it ran stay after the pivot.
 */
@Injectable()
export class CompactSession {
  private readonly logger = new Logger(CompactSession.name);

  constructor(
    private readonly db: Database,
    private readonly windows: WindowSummarizer,
    private readonly metrics: WorkerMetrics,
    private readonly rewrites: RewriteMetrics,
    private readonly appendCommitted: AppendCommitted,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Runs the session's pending marker, whichever it is: per-session
   * deduplication may have folded a newer marker's job into this one.
   * On the job's last attempt a failure gives the marker up (state `failed`).
   */
  async run(job: CompactJobData, options: { signal?: AbortSignal; finalAttempt: boolean }): Promise<CompactOutcome> {
    try {
      return await this.compact(job, options.signal);
    } catch (error) {
      if (options.finalAttempt && !options.signal?.aborted) {
        await this.giveUp(job, error).catch((e: Error) => this.logger.warn(`could not record the given-up marker: ${e.message}`));
      }
      throw error;
    }
  }

  private async compact(job: CompactJobData, signal?: AbortSignal, replans = 0): Promise<CompactOutcome> {
    const { tenantId, sessionId } = job;
    const claimed = await this.db.tenantTx(tenantId, async (tx) => {
      const read = await readWindow(tx, sessionId);
      if (!read) return null;
      const facts = compactionFactsOf(read);
      const composed = readModelOf(read, 'abort', facts);
      const { compaction } = composed.config;
      const state = composed.compaction;
      if (state.pendingMarkerSeq === null) return null;
      const callMs = Math.min(compaction.timeoutMs, this.config.summarizer.timeoutMs);
      // The lease only drives the state shown to clients; it outlasts the worst case of the chain.
      await markCompactionRunning(tx, sessionId, state.pendingMarkerSeq, this.config.worker.lockDurationMs + compaction.maxAttempts * 2 * callMs);
      return { read, composed, marker: { ...facts.latestMarker!, seq: state.pendingMarkerSeq } };
    });
    if (!claimed) return { outcome: 'idle', markerSeq: null };
    const { read, composed, marker } = claimed;
    const { compaction } = composed.config;

    const chained = await this.windows.summarize({ tenantId, sessionId, events: read.events, pivot: read.pivot?.data ?? null, session: read.session, composed, marker, signal });
    if (chained.kind === 'nothing') {
      const committed = await this.commit(tenantId, sessionId, marker.seq, () => [nothingToCompactEvent(chained)]);
      return committed ? { outcome: 'nothing_to_compact', markerSeq: marker.seq, reason: chained.reason } : { outcome: 'discarded', markerSeq: marker.seq, reason: 'duplicate' };
    }
    const failures = chained.failures;
    // The range the pivot takes out of the window, for the history.
    const completion = { ...chained.completion, coveredFromSeq: (read.pivot?.data.coveredThroughSeq ?? 0) + 1 };
    let stale = false;
    let committedEvents: NewEvent[] = [];
    let rewound = false;
    const committed = await this.commit(tenantId, sessionId, marker.seq, async (latestCompletedMarkerSeq, tx) => {
      // A rewind appended since the window was read may have taken out turns this summary holds: plan again on the view it left.
      if ((await rewindsAfter(tx, sessionId, read.session.headSeq)).some((toSeq) => toSeq < completion.coveredThroughSeq)) {
        rewound = true;
        return [];
      }
      const events = decideCompletion({ latestCompletedMarkerSeq }, completion, compaction);
      stale = events.length === 0;
      committedEvents = events.length === 0 ? [] : [...failures, ...events];
      return committedEvents;
    });
    if (!committed && rewound && replans < 2) return this.compact(job, signal, replans + 1);
    if (!committed) return { outcome: 'discarded', markerSeq: marker.seq, reason: rewound ? 'rewound' : stale ? 'stale' : 'duplicate' };
    if (completion.retention) this.metrics.observeRetention(completion.strategy, completion.retention);
    // Its cache cost from the steps in the window it compacted (a step appended while it ran is not counted: the figure is a lower bound then).
    const head = read.events.at(-1)?.seq ?? 0;
    for (const cost of costsOfCommitted(read.events, committedEvents.map((event, i) => ({ seq: head + i + 1, event })))) this.rewrites.observe(cost);
    this.logger.log(
      `session ${sessionId}: marker ${marker.seq} compacted through seq ${completion.coveredThroughSeq} (${completion.strategy}, ` +
        `${completion.tokensBefore} → ${completion.tokensAfter} tokens, ${failures.length} failed tr${failures.length === 1 ? 'y' : 'ies'})`,
    );
    return {
      outcome: 'completed',
      markerSeq: marker.seq,
      coveredThroughSeq: completion.coveredThroughSeq,
      strategy: completion.strategy,
      tokensBefore: completion.tokensBefore,
      tokensAfter: completion.tokensAfter,
    };
  }

  /**
   * Appends what `decide` returns under the session lock unless the marker
   * is already closed; the closing event ids are unique per session, so a
   * racing run that got past this check still fails on the index. Returns
   * whether anything was written.
   */
  private async commit(
    tenantId: string,
    sessionId: string,
    markerSeq: number,
    decide: (latestCompletedMarkerSeq: number | null, tx: Tx) => NewEvent[] | Promise<NewEvent[]>,
  ): Promise<boolean> {
    const written = await this.db.tenantTx(tenantId, async (tx) => {
      const locked = await logWriter.lock(tx, sessionId, { ...NO_LOOKUP, eventIds: closingIds(markerSeq) });
      if (!locked) return null;
      await clearCompactionRunning(tx, sessionId, markerSeq);
      // The marker is closed already: this job's rule, before the append's (its events are not the closing ids it looked up).
      if (locked.state.stored.length > 0) return null;
      const events = await decide(await pivotMarkerSeq(tx, sessionId), tx);
      if (events.length === 0) return null;
      return { appended: events.length, headSeq: await appendUpkeep(tx, locked.state, events) };
    });
    if (written === null) return false;
    await this.appendCommitted.after({ tenantId, sessionId, ...written, outbox: [], pruneAfterSeq: null });
    return true;
  }

  /** The job's (or the reconciler's) attempts are spent: close the pending marker as failed, so the state says so and the next overflow opens a new one. */
  async giveUp({ tenantId, sessionId }: CompactJobData, error: unknown): Promise<void> {
    const pending = await this.db.tenantTx(tenantId, async (tx) => {
      const read = await readWindow(tx, sessionId);
      if (!read) return null;
      return readModelOf(read).compaction.pendingMarkerSeq;
    });
    if (pending === null) return;
    const message = error instanceof Error ? error.message : String(error);
    await this.commit(tenantId, sessionId, pending, () => [
      {
        id: `cmp-${pending}-gave-up`,
        type: 'compaction.failed',
        data: { markerSeq: pending, attempt: 0, error: `job_failed: ${message.slice(0, 1000)}`, fallback: 'none' },
      },
    ]);
  }
}
