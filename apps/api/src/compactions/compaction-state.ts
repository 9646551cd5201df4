import { CompactionFacts, compactionFactsOf, CompactionState, deriveCompactionState, SessionView } from '@app/domain';
import { WindowRead } from '@app/event-store';

/**
 * The compaction state the session, its context, the compactions endpoint
 * and the append trigger report: from the log and the view's figures (the
 * loop guard re-arms as the view grows), plus the worker's running claim on
 * the session row while its lease holds.
 */
export function compactionState(read: WindowRead, composed: SessionView, facts: CompactionFacts = compactionFactsOf(read)): CompactionState {
  const options = {
    loopGuardRatio: composed.config.compaction.loopGuardRatio,
    view: { tokens: composed.view.tokens.estimated, usable: composed.overflow.usable },
  };
  const { pendingMarkerSeq } = deriveCompactionState(facts, { ...options, running: false });
  const running = pendingMarkerSeq !== null && read.session.runningMarkerSeq === pendingMarkerSeq;
  return deriveCompactionState(facts, { ...options, running });
}
