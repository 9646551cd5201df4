import { Tx } from '@app/database';
import {
  COMPACTION_TRIGGER_TYPES,
  compactionFactsOf,
  CompactionReason,
  composeSessionView,
  decideTrigger,
  deriveCompactionState,
  maintenanceWanted,
  markerEvent,
  NewEvent,
  SessionView,
} from '@app/domain';
import { insertEvents, insertOutbox, OutboxMessage, OutboxRow, payloadHash, readWindow, WindowRead } from '@app/event-store';
import { CompactJobData, JobName, sessionJobId } from '@app/queue';
import { scheduledPruneMessage } from '../prune/prune-scheduler';

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

/** Appends a marker at head+1 and its outbox row in the caller's transaction (the session row is locked). */
export async function appendMarker(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  headSeq: number,
  reason: CompactionReason,
  instructions?: string | null,
): Promise<{ markerSeq: number; headSeq: number; outbox: OutboxRow[] }> {
  const marker = markerEvent(headSeq + 1, reason, instructions);
  const newHead = await insertEvents(tx, sessionId, headSeq, [{ event: marker, payloadHash: payloadHash(marker), tokens: 0 }]);
  return { markerSeq: headSeq + 1, headSeq: newHead, outbox: await insertOutbox(tx, [compactMessage(tenantId, sessionId, headSeq + 1)]) };
}

export interface TriggerResult {
  headSeq: number;
  outbox: OutboxRow[];
  /** The marker pending after the batch, if any (the batch's, a new automatic one, or the one it joined). */
  pendingMarkerSeq: number | null;
}

/**
 * The append's background-work triggers, in its transaction after its
 * events are inserted: only for batches holding a trigger type, so other
 * appends pay nothing. It reads the window once, composes the view and lets
 * the domain decide; an automatic marker and its outbox row commit with the
 * batch. A step of a session whose prune or archive can act also gets its
 * prune trigger row here, so it commits with the step too; that row is not
 * in the result: PruneScheduler.afterStep enqueues it after commit, with the
 * fold delay (the sweeper, if that fails).
 */
export async function triggerAfterAppend(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  firstSeq: number,
  events: readonly NewEvent[],
): Promise<TriggerResult | null> {
  if (!events.some((event) => COMPACTION_TRIGGER_TYPES.has(event.type))) return null;
  const read = (await readWindow(tx, sessionId))!;
  const composed = composeSessionView(read.session, read);
  const result = await compactionTrigger(tx, tenantId, sessionId, firstSeq, events, read, composed);
  if (events.some((event) => event.type === 'step.finished') && maintenanceWanted(composed.config)) {
    await insertOutbox(tx, [scheduledPruneMessage(tenantId, sessionId, result.headSeq)]);
  }
  return result;
}

async function compactionTrigger(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  firstSeq: number,
  events: readonly NewEvent[],
  read: WindowRead,
  composed: SessionView,
): Promise<TriggerResult> {
  const facts = compactionFactsOf(read);
  const state = deriveCompactionState(facts, { running: false, loopGuardRatio: composed.config.compaction.loopGuardRatio });
  const batch = events.map((event, i) => ({ ...event, seq: firstSeq + i }));
  const decision = decideTrigger({ batch, evaluation: composed.overflow, state });
  const headSeq = read.session.headSeq;
  switch (decision.action) {
    case 'request': {
      const appended = await appendMarker(tx, tenantId, sessionId, headSeq, decision.reason);
      return { headSeq: appended.headSeq, outbox: appended.outbox, pendingMarkerSeq: appended.markerSeq };
    }
    case 'enqueue':
    case 'join':
      // Joining enqueues the pending marker's job again: a no-op while BullMQ has it, a rescue if Redis lost it.
      return { headSeq, outbox: await insertOutbox(tx, [compactMessage(tenantId, sessionId, decision.markerSeq)]), pendingMarkerSeq: decision.markerSeq };
    case 'none':
      return { headSeq, outbox: [], pendingMarkerSeq: state.pendingMarkerSeq };
  }
}
