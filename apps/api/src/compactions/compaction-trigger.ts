import { Tx } from '@app/database';
import { boundAfterGrowth, coldCacheMargin, COMPACTION_TRIGGER_TYPES, compactionFactsOf, CompactionState, decideTrigger, evaluateOverflow, growsViewOnly, growthThreshold, growthThresholdAfterCheck, maintenanceWanted, markerEvent, mayOverflow, NewEvent, OverflowEvaluation, payloadHash, readModelOf, sessionSettings, SessionView, StoredEvent, viewTokenBound } from '@app/domain';
import { insertOutbox, logWriter, OutboxMessage, OutboxRow, readGrowthSince, readWindow } from '@app/event-store';
import { CompactJobData, JobName, scheduledPruneMessage, sessionJobId } from '@app/queue';
import { boundWentCold, ViewBound, ViewBounds } from './view-bounds';

/** The outbox message of a marker's job: ids only, a job id derived from the marker, folded per session. */
export function compactMessage(tenantId: string, sessionId: string, markerSeq: number): OutboxMessage {
  const payload: CompactJobData = { tenantId, sessionId, markerSeq };
  return {
    jobName: JobName.Compact,
    jobId: sessionJobId(JobName.Compact, tenantId, sessionId, markerSeq),
    payload: { ...payload },
    deduplicationId: sessionJobId(JobName.Compact, tenantId, sessionId, 'session'),
  };
}

export interface TriggerResult {
  headSeq: number;
  outbox: OutboxRow[];
  /** The marker pending after the batch, if any (the batch's, a new automatic one, or the one it joined). */
  pendingMarkerSeq: number | null;
  /** Whether the batch's prune trigger row was written (AppendCommitted enqueues it after commit). */
  pruneScheduled?: boolean;
}

/** A batch just inserted: its first seq, its events, and their stored token estimates summed. */
export interface AppendedBatch {
  firstSeq: number;
  events: readonly NewEvent[];
  tokens: number;
}

/**
 * The append's background-work triggers, in its transaction after its
 * events are inserted: only for batches holding a trigger type, so other
 * appends pay nothing. A batch that only grows the view (messages, a pin)
 * stops early when this process's bound of the view shows it below the
 * threshold (staysBelow). Otherwise it reads the window once, composes the
 * view and lets the domain decide, and keeps the new bound; an automatic
 * marker and its outbox row commit with the batch. A step of a session
 * whose prune or archive can act also gets its prune trigger row here, so it
 * commits with the step too; that row is not in the result:
 * AppendCommitted enqueues it after commit, with the fold delay
 * (the sweeper, if that fails).
 */
export async function triggerAfterAppend(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  appended: AppendedBatch,
  bounds: ViewBounds,
  /** The decision's: the batch ends a step (AfterWrite.pruneScheduling). */
  pruneScheduling: boolean,
): Promise<TriggerResult | null> {
  const { firstSeq, events } = appended;
  if (!events.some((event) => COMPACTION_TRIGGER_TYPES.has(event.type))) return null;
  if (growsViewOnly(events) && (await staysBelow(tx, tenantId, sessionId, appended, bounds))) return null;
  const read = (await readWindow(tx, sessionId))!;
  const facts = compactionFactsOf(read);
  const composed = readModelOf(read, 'abort', facts);
  const state = composed.compaction;
  const result = await compactionTrigger(tx, tenantId, sessionId, firstSeq, events, timedOverflow(composed, read.events, firstSeq), state, read.session.headSeq);
  const { compaction, cache } = composed.config;
  bounds.set(tenantId, sessionId, {
    seq: result.headSeq,
    tokens: viewTokenBound(composed.view.tokens),
    threshold: growthThresholdAfterCheck({
      threshold: growthThreshold(composed.limits, compaction),
      facts,
      // A marker this batch opened is pending too.
      state: { ...state, pendingMarkerSeq: result.pendingMarkerSeq },
      loopGuardRatio: compaction.loopGuardRatio,
      usable: composed.overflow.usable,
      expectedGrowth: compaction.anticipateGrowth ? composed.view.tokens.expectedGrowth : 0,
    }),
    createdAt: read.session.createdAt,
    at: Date.now(),
    coldAfterMs: cache.timing === 'cache-aware' ? cache.lifetimeSeconds * 1000 : null,
  });
  const pruneScheduled = pruneScheduling && maintenanceWanted(composed.config);
  if (pruneScheduled) await insertOutbox(tx, [scheduledPruneMessage(tenantId, sessionId, result.headSeq)]);
  return { ...result, pruneScheduled };
}

/**
 * The trigger's evaluation for a batch starting at `firstSeq`: the view's
 * own, or, when the batch comes after the cache's lifetime of silence, with
 * the cold-cache margin (coldCacheMargin; the times are the log's).
 */
function timedOverflow(composed: SessionView, events: readonly StoredEvent[], firstSeq: number): OverflowEvaluation {
  const previous = events.find((event) => event.seq === firstSeq - 1);
  const first = events.find((event) => event.seq === firstSeq);
  const coldMargin = first ? coldCacheMargin(composed.config.cache, previous?.createdAt ?? null, first.createdAt) : 0;
  if (coldMargin === 0 || composed.overflow.reason !== 'below_threshold') return composed.overflow;
  const { view, limits, config } = composed;
  return evaluateOverflow({
    tokens: { total: view.tokens.estimated, expectedGrowth: view.tokens.expectedGrowth },
    limits,
    config: config.compaction,
    messageCount: view.messages.length,
    coldMargin,
  });
}

/**
 * Whether a batch that only grows the view certainly left it below the
 * threshold, judged on this process's bound of the view: plus the batch's
 * own stored tokens when nothing else was appended since the bound (no
 * query; the session row is locked), else plus what was stored since (one
 * small query, which also reads the session's current settings). Keeps the
 * new bound when so; without a bound, the caller reads the window.
 */
async function staysBelow(tx: Tx, tenantId: string, sessionId: string, appended: AppendedBatch, bounds: ViewBounds): Promise<boolean> {
  const known = bounds.get(tenantId, sessionId);
  if (!known || boundWentCold(known, Date.now())) return false;
  let next: ViewBound;
  if (known.seq === appended.firstSeq - 1) {
    next = grownBound(known, appended);
  } else {
    const grown = await readGrowthSince(tx, sessionId, known.seq);
    if (!grown || grown.session.createdAt.getTime() !== known.createdAt.getTime()) return false;
    const { config, limits } = sessionSettings(grown.session);
    const threshold = growthThreshold(limits, config.compaction);
    next = {
      seq: grown.session.headSeq,
      tokens: boundAfterGrowth(known.tokens, grown.since),
      // The known threshold may be lower: less the expected growth, or held by a pending marker (higher: Infinity).
      threshold: threshold === null || known.threshold === null ? null : Math.min(threshold, known.threshold),
      createdAt: known.createdAt,
      at: Date.now(),
      coldAfterMs: known.coldAfterMs,
    };
  }
  if (mayOverflow(next.tokens, next.threshold)) return false;
  bounds.set(tenantId, sessionId, next);
  return true;
}

/** `known` after `appended`, a batch that directly follows it: its own stored tokens added (no query). */
function grownBound(known: ViewBound, appended: AppendedBatch): ViewBound {
  const seq = appended.firstSeq + appended.events.length - 1;
  return { ...known, seq, tokens: boundAfterGrowth(known.tokens, { tokens: appended.tokens, lastUsage: null }), at: Date.now() };
}

/**
 * For an append decided before its transaction (EventsService, one round
 * trip): this process's bound of the view and the bound `events` (view
 * growth only, with `tokens`) leave when appended right after it, if they
 * certainly stay below the threshold, so the trigger has nothing to do.
 * Undefined when the ordinary path must decide.
 */
export function boundsWithoutTrigger(
  bounds: ViewBounds,
  tenantId: string,
  sessionId: string,
  events: readonly NewEvent[],
  tokens: number,
): { known: ViewBound; next: ViewBound } | undefined {
  const known = bounds.get(tenantId, sessionId);
  if (!known || boundWentCold(known, Date.now()) || !events.some((event) => COMPACTION_TRIGGER_TYPES.has(event.type)) || !growsViewOnly(events)) {
    return undefined;
  }
  const next = grownBound(known, { firstSeq: known.seq + 1, events, tokens });
  return mayOverflow(next.tokens, next.threshold) ? undefined : { known, next };
}

async function compactionTrigger(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  firstSeq: number,
  events: readonly NewEvent[],
  evaluation: OverflowEvaluation,
  state: CompactionState,
  headSeq: number,
): Promise<TriggerResult> {
  const batch = events.map((event, i) => ({ ...event, seq: firstSeq + i }));
  const decision = decideTrigger({ batch, evaluation, state });
  switch (decision.action) {
    case 'request': {
      // A step of the batch's own append, after its rows: written through the same port, under the same lock.
      const markerSeq = headSeq + 1;
      const marker = markerEvent(markerSeq, decision.reason);
      const row = { event: marker, payloadHash: payloadHash(marker), tokens: 0 }; // a marker adds nothing to the view
      const newHead = await logWriter.write(tx, sessionId, { firstSeq: markerSeq, rows: [row], ledger: { issued: [], answered: [] } });
      return { headSeq: newHead, outbox: await insertOutbox(tx, [compactMessage(tenantId, sessionId, markerSeq)]), pendingMarkerSeq: markerSeq };
    }
    case 'enqueue':
    case 'join':
      // Joining enqueues the pending marker's job again: a no-op while BullMQ has it, a rescue if Redis lost it.
      return { headSeq, outbox: await insertOutbox(tx, [compactMessage(tenantId, sessionId, decision.markerSeq)]), pendingMarkerSeq: decision.markerSeq };
    case 'none':
      return { headSeq, outbox: [], pendingMarkerSeq: state.pendingMarkerSeq };
  }
}
