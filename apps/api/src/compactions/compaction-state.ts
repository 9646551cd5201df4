import { compactionFactsOf, CompactionState, deriveCompactionState, SessionView } from '@app/domain';
import { WindowRead } from '@app/event-store';

/**
 * The compaction state the session, its context and the compactions
 * endpoint report: from the log, plus the worker's running claim on the
 * session row while its lease holds.
 */
export function compactionState(read: WindowRead, composed: SessionView): CompactionState {
  const facts = compactionFactsOf(read);
  const loopGuardRatio = composed.config.compaction.loopGuardRatio;
  const { pendingMarkerSeq } = deriveCompactionState(facts, { running: false, loopGuardRatio });
  const running = pendingMarkerSeq !== null && read.session.runningMarkerSeq === pendingMarkerSeq;
  return deriveCompactionState(facts, { running, loopGuardRatio });
}
