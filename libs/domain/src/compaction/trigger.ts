/**
 * What the append path decides after a batch (DESIGN.md section 6): the
 * session's compaction facts read from its window, and whether the batch
 * opens a marker, joins the pending one, or leaves things alone.
 */
import type { CompactionReason, NewEvent, StoredEvent } from '../events';
import { CompactionFacts, CompactionState, evolveCompactionFacts, INITIAL_COMPACTION_FACTS } from './decide';
import { compactionReasonFor, expectedGrowthWithin, loopGuardHold, OverflowEvaluation, VIEW_GROWTH_TYPES } from './overflow-policy';

/** Event types after which the append path looks at compaction at all; other batches skip it. */
export const COMPACTION_TRIGGER_TYPES: ReadonlySet<string> = new Set(['step.finished', 'context.overflowed', 'compaction.requested', ...VIEW_GROWTH_TYPES]);

/** Whether the batch's only triggers are appends that grow the view (a bound of the view can then spare the window read). */
export function growsViewOnly(events: ReadonlyArray<{ type: string }>): boolean {
  return events.every((event) => VIEW_GROWTH_TYPES.has(event.type) || !COMPACTION_TRIGGER_TYPES.has(event.type));
}

/**
 * The facts of a window read (the pivot and the events after its
 * coveredThroughSeq). Every compaction event since the pivot's marker is in
 * the window, except the marker itself when the cut fell on it; the pivot
 * carries what the facts need of it.
 */
export function compactionFactsOf(window: {
  pivot: StoredEvent<'compaction.completed'> | null;
  events: readonly StoredEvent[];
}): CompactionFacts {
  const { pivot, events } = window;
  let facts = INITIAL_COMPACTION_FACTS;
  if (pivot) {
    const { markerSeq } = pivot.data;
    if (!events.some((event) => event.seq === markerSeq)) {
      const reason = (pivot.data.reason as CompactionReason | undefined) ?? 'manual';
      facts = { ...facts, latestMarker: { seq: markerSeq, auto: pivot.data.auto === true, reason } };
    }
    if (!events.some((event) => event.seq === pivot.seq)) facts = evolveCompactionFacts(facts, pivot);
  }
  for (const event of events) facts = evolveCompactionFacts(facts, event);
  return facts;
}

type AutoReason = Exclude<CompactionReason, 'manual'>;

/** Forced reasons first: the client hit the wall, then a reply cut at its length limit, then the threshold, then a cold cache. */
const REASON_PRIORITY: readonly AutoReason[] = ['overflow', 'finish_length', 'threshold', 'cache_cold'];

export type TriggerDecision =
  /** Append `compaction.requested {auto: true, reason}` and enqueue its job. */
  | { action: 'request'; reason: AutoReason }
  /** A marker is open: the batch's own (a client request) or an earlier one; make sure its job is enqueued. */
  | { action: 'enqueue'; markerSeq: number }
  /** A marker is already pending: join it (one marker, OpenCode); its job may be enqueued again. */
  | { action: 'join'; markerSeq: number }
  /** `pending`: over the threshold by growth alone while a marker is pending; its job is enqueued again by steps, not by every message. */
  | { action: 'none'; why: 'no_trigger' | 'suppressed' | 'pending' };

/**
 * After a batch that holds a trigger type. A client's compaction.requested
 * in the batch is the pending marker and only needs its job; otherwise the
 * strongest reason any of the batch's events gives (overflow, finish_length,
 * threshold over the view after the batch, after a step or an append that
 * grows the view) opens a marker, unless one is pending (join) or the loop
 * guard suspended automatic compaction.
 */
export function decideTrigger(input: {
  /** The batch with the seqs it was stored at. */
  batch: ReadonlyArray<{ seq: number; type: string; data: unknown }>;
  evaluation: OverflowEvaluation;
  /** The compaction state after the batch. */
  state: CompactionState;
}): TriggerDecision {
  const { batch, evaluation, state } = input;
  const clientMarker = batch.some((event) => event.type === 'compaction.requested' && event.seq === state.pendingMarkerSeq);
  if (clientMarker) return { action: 'enqueue', markerSeq: state.pendingMarkerSeq! };
  const reasons = new Set(batch.map((event) => compactionReasonFor(event, evaluation)));
  const reason = REASON_PRIORITY.find((candidate) => reasons.has(candidate));
  if (!reason) return { action: 'none', why: 'no_trigger' };
  if (state.pendingMarkerSeq !== null) {
    return growsViewOnly(batch) ? { action: 'none', why: 'pending' } : { action: 'join', markerSeq: state.pendingMarkerSeq };
  }
  if (state.suppressedReason !== null) return { action: 'none', why: 'suppressed' };
  return { action: 'request', reason };
}

/**
 * The figure growth alone must bring the view to before it can open a
 * marker, as of a check that found `state`: none while a marker is pending
 * (growth joins it, and it closes only by the worker's event), at least the
 * loop guard's re-arm figure while the guard holds, else the trigger's
 * growthThreshold. What the append path compares its bound of the view with
 * until something else is appended.
 */
export function growthThresholdAfterCheck(input: {
  threshold: number | null;
  facts: CompactionFacts;
  state: CompactionState;
  loopGuardRatio: number;
  usable: number | null;
  /** The view's expected growth at the check (ViewTokens.expectedGrowth): the trigger counts it too. */
  expectedGrowth?: number;
}): number | null {
  const { threshold, facts, state } = input;
  if (threshold === null) return null;
  if (state.pendingMarkerSeq !== null) return Number.POSITIVE_INFINITY;
  if (state.suppressedReason === null) return input.usable === null ? threshold : threshold - expectedGrowthWithin(input.expectedGrowth ?? 0, input.usable);
  const hold = loopGuardHold(facts.latestCompletion, facts.firstTokensAfter, input.loopGuardRatio, input.usable);
  return Math.max(threshold, hold?.resumesAt ?? Number.POSITIVE_INFINITY);
}

/** The marker the service appends; its id derives from its seq (the head + 1 under the session lock). */
export function markerEvent(
  seq: number,
  reason: CompactionReason,
  instructions?: string | null,
): NewEvent<'compaction.requested'> {
  return {
    id: `cmp-${seq}-requested`,
    type: 'compaction.requested',
    data: { auto: reason !== 'manual', reason, ...(instructions ? { instructions } : {}) },
  };
}
