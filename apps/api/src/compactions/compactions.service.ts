import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import {
  CompactionCompletedData,
  CompactionFailedData,
  CompactionRequestedData,
  CompactionState,
  cacheReport,
  markerEvent,
  sessionArchived,
  composeSessionView,
  readModelOf,
  RewriteCacheCost,
  renderNeutral,
  StoredEvent,
} from '@app/domain';
import {
  insertOutbox,
  lockSessionForAppend,
  readCompactionMarkers,
  readCacheTrace,
  readCompactionOutcomes,
  readWindow,
  WindowRead,
} from '@app/event-store';
import { WindowSummarizer } from '@app/summarizer';
import { AppendCommitted, AppendWrites } from '@app/use-cases';
import { tokenFigures } from '../context/context.service';
import { requestFingerprint, runIdempotent } from '../http/idempotency';
import { sessionNotFound } from '../sessions/session-state';
import { EventsService } from '../events/events.service';
import { TenantLimitsService } from '../limits/tenant-limits';
import { compactMessage } from './compaction-trigger';
import { CompactionWaiter } from './compaction-waiter';
import { RequestCompactionDto } from './compactions.dto';

const DEFAULT_WAIT_MS = 30_000;

type Outcome = StoredEvent<'compaction.completed'> | StoredEvent<'compaction.failed'>;

export type CompactionStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'superseded';

/** What the history adds on request (`?include=record`). */
export interface HistoryOptions {
  record: boolean;
}

/** One compaction as the history shows it: the marker, what became of it, and every failed try on the way. */
function historyEntry(
  marker: StoredEvent<'compaction.requested'>,
  outcomes: readonly Outcome[],
  state: CompactionState,
  options: HistoryOptions,
  costs?: ReadonlyMap<number, RewriteCacheCost>,
) {
  const data: CompactionRequestedData = marker.data;
  const mine = outcomes.filter((event) => event.data.markerSeq === marker.seq);
  const completed = mine.find((event): event is StoredEvent<'compaction.completed'> => event.type === 'compaction.completed');
  const failures = mine.filter((event): event is StoredEvent<'compaction.failed'> => event.type === 'compaction.failed');
  const closing = failures.find((event) => event.data.fallback === 'skipped' || event.data.fallback === 'none');
  const status: CompactionStatus = completed
    ? 'completed'
    : closing
      ? closing.data.fallback === 'skipped'
        ? 'skipped'
        : 'failed'
      : state.pendingMarkerSeq === marker.seq
        ? (state.state as 'pending' | 'running')
        : 'superseded';
  return {
    markerSeq: marker.seq,
    requestedAt: marker.createdAt.toISOString(),
    auto: data.auto,
    reason: data.reason,
    ...(data.instructions ? { instructions: data.instructions } : {}),
    status,
    ...(completed ? completionFields(completed, options) : {}),
    failures: failures.map((event) => failureFields(event.seq, event.data, event.createdAt)),
    ...(completed && costs?.has(completed.seq) ? { cache: costs.get(completed.seq) } : {}),
  };
}

function completionFields(event: StoredEvent<'compaction.completed'>, options: HistoryOptions) {
  const d: CompactionCompletedData = event.data;
  return {
    completedSeq: event.seq,
    completedAt: event.createdAt.toISOString(),
    range: { fromSeq: typeof d.coveredFromSeq === 'number' ? d.coveredFromSeq : null, throughSeq: d.coveredThroughSeq },
    ...outcomeFields(d),
    // The record is the largest field of the event: only on request.
    ...(options.record ? { record: d.record ?? null } : {}),
  };
}

/** What a compaction produced, as the history and a dry run both report it; retention is null for compactions made before it was measured. */
const outcomeFields = (d: CompactionCompletedData) => ({
  summary: d.summary,
  retain: d.retain ?? null,
  strategy: d.strategy,
  model: d.model,
  tokensBefore: d.tokensBefore,
  tokensAfter: d.tokensAfter,
  tokensSaved: Math.max(0, d.tokensBefore - d.tokensAfter),
  messagesCompacted: d.messagesCompacted,
  durationMs: d.durationMs,
  retention: d.retention ?? null,
});

const failureFields = (seq: number | null, d: CompactionFailedData, at?: Date) => ({
  ...(seq !== null ? { seq } : {}),
  attempt: d.attempt,
  error: d.error,
  fallback: d.fallback,
  ...(at ? { at: at.toISOString() } : {}),
});

/**
 * Manual compaction and the compaction history. A request opens a marker
 * (or joins the pending one) and its outbox row in one transaction, like
 * the automatic trigger; the worker does the rest.
 */
@Injectable()
export class CompactionsService {
  constructor(
    private readonly db: Database,
    private readonly events: EventsService,
    private readonly committed: AppendCommitted,
    private readonly tenantLimits: TenantLimitsService,
    private readonly waiter: CompactionWaiter,
    private readonly windows: WindowSummarizer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * 202 with the marker and its state, or with `wait`, 200 once committed.
   * Idempotency-Key covers the marker: a replay reports the same marker
   * (waiting for it again when asked) instead of opening another.
   */
  async request(tenantId: string, sessionId: string, dto: RequestCompactionDto, idempotencyKey?: string) {
    if (dto.dryRun) return { status: 200, body: await this.dryRun(tenantId, sessionId, dto.instructions ?? null) };
    const { quotas } = await this.tenantLimits.policyOf(tenantId);
    let committed: AppendWrites | undefined;
    const fingerprint = () => requestFingerprint('POST', `/v1/sessions/${sessionId}/compactions`, dto);
    const accepted = await this.db.tenantTx(tenantId, (tx) =>
      runIdempotent(tx, idempotencyKey, fingerprint, this.config.idempotency.ttlHours, async () => {
        const locked = await lockSessionForAppend(tx, sessionId, { eventIds: [] });
        if (!locked) throw sessionNotFound(sessionId);
        if (locked.archived) throw sessionArchived(sessionId);
        const read = (await readWindow(tx, sessionId))!;
        const state = readModelOf(read).compaction;
        // Joining keeps one marker (OpenCode); instructions are the marker's own, so they open a new one.
        if (state.pendingMarkerSeq !== null && !dto.instructions) {
          // Enqueued again too: a job lost with Redis's data comes back, an existing one is not duplicated.
          committed = { appended: 0, headSeq: null, outbox: await insertOutbox(tx, [compactMessage(tenantId, sessionId, state.pendingMarkerSeq)]), pruneAfterSeq: null };
          return { status: 202, body: { markerSeq: state.pendingMarkerSeq, joined: true } };
        }
        // Through the append path: its trigger enqueues the new marker's job, which is then the pending one.
        const appended = await this.events.appendOwn(tx, tenantId, sessionId, (after) => [markerEvent(after.headSeq + 1, 'manual', dto.instructions)], { quotas });
        committed = appended;
        return { status: 202, body: { markerSeq: appended.result.body.events[0].seq, joined: false } };
      }),
    );
    const { markerSeq, joined } = accepted.body as { markerSeq: number; joined: boolean };
    const [dispatchedJobId] = committed ? await this.committed.after({ tenantId, sessionId, ...committed }) : [];
    if (dto.wait) {
      const ownJobId = compactMessage(tenantId, sessionId, markerSeq).jobId;
      await this.waiter.waitForMarker(markerSeq, [dispatchedJobId ?? ownJobId, ownJobId], dto.timeoutMs ?? DEFAULT_WAIT_MS);
    }
    const body = { ...(await this.describe(tenantId, sessionId, markerSeq)), joined };
    const done = body.status !== 'pending' && body.status !== 'running';
    return { status: dto.wait && done ? 200 : 202, body };
  }

  /** One marker's entry with the session's compaction state, and the figures a manual compaction reports. */
  private async describe(tenantId: string, sessionId: string, markerSeq: number) {
    return this.db.tenantTx(tenantId, async (tx) => {
      const read = await readWindow(tx, sessionId);
      if (!read) throw sessionNotFound(sessionId);
      const state = readModelOf(read).compaction;
      const [marker] = await readCompactionMarkers(tx, sessionId, markerSeq - 1, 1);
      const entry = historyEntry(marker, await readCompactionOutcomes(tx, sessionId, [markerSeq]), state, { record: false });
      return { ...entry, state };
    });
  }

  /**
   * The history, oldest first, paged by marker seq, with what each rewrite
   * cost in prompt cache: the trace (readCacheTrace) is a scan of the log's
   * small rows, this read's largest cost on a long session.
   */
  async list(tenantId: string, sessionId: string, afterSeq = 0, limit = 50, options: HistoryOptions = { record: false }) {
    return this.db.tenantTx(tenantId, async (tx) => {
      const read = await readWindow(tx, sessionId);
      if (!read) throw sessionNotFound(sessionId);
      const state = readModelOf(read).compaction;
      const markers = await readCompactionMarkers(tx, sessionId, afterSeq, limit + 1);
      const page = markers.slice(0, limit);
      const outcomes = await readCompactionOutcomes(
        tx,
        sessionId,
        page.map((marker) => marker.seq),
      );
      const { rewrites, ...ratios } = cacheReport(await readCacheTrace(tx, sessionId));
      const costs = new Map(rewrites.map((cost) => [cost.seq, cost]));
      // The prunes and archives of the page's range: after afterSeq, before the next page's first marker.
      const before = markers.length > limit ? markers[limit].seq : Infinity;
      return {
        compactions: page.map((marker) => historyEntry(marker, outcomes, state, options, costs)),
        state,
        nextAfterSeq: markers.length > limit ? page[page.length - 1].seq : null,
        cache: { ...ratios, rewrites: rewrites.filter((cost) => cost.kind !== 'compaction' && cost.seq > afterSeq && cost.seq < before) },
      };
    });
  }

  /**
   * The summary and the context a compaction would produce now, computed in
   * this process with the session's summarizer and nothing written.
   */
  private async dryRun(tenantId: string, sessionId: string, instructions: string | null) {
    const read: WindowRead | undefined = await this.db.tenantTx(tenantId, (tx) => readWindow(tx, sessionId));
    if (!read) throw sessionNotFound(sessionId);
    const composed = composeSessionView(read.session, read);
    // The marker this request would append.
    const markerSeq = read.session.headSeq + 1;
    const summary = await this.windows.summarize({
      tenantId,
      sessionId,
      events: read.events,
      pivot: read.pivot?.data ?? null,
      session: read.session,
      composed,
      marker: { seq: markerSeq, auto: false, reason: 'manual', instructions },
    });
    if (summary.kind === 'nothing') return { dryRun: true, status: 'nothing_to_compact', reason: summary.reason };
    const { completion, failures } = summary;
    const pivot = { seq: markerSeq + 1, id: `cmp-${markerSeq}-completed`, type: 'compaction.completed', data: completion, createdAt: new Date(), tokens: 0 } as const;
    const after = composeSessionView(read.session, { pivot, events: read.events });
    const rendered = renderNeutral(after.view);
    return {
      dryRun: true,
      status: 'completed',
      coveredThroughSeq: completion.coveredThroughSeq,
      ...outcomeFields(completion),
      failures: failures.map((event) => failureFields(null, event.data)),
      context: { format: 'neutral', messages: rendered, tokens: tokenFigures(after) },
    };
  }
}
