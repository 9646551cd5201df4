import { Tx } from '@app/database';
import { AppendState, decideWrite, NewEvent, payloadHash } from '@app/domain';
import { logWriter } from '@app/event-store';

/**
 * Appends the results of the service's upkeep of a log (a compaction's, a
 * prune's or archive's) through the decider (mode `upkeep`) and the store
 * port, under the lock the caller took with logWriter.lock. Returns the new
 * head. Their ids are new (taken from the head or a marker, and a stored one
 * fails on the unique index) and they carry no tool parts, so the decision
 * is a write whose rows are built.
 */
export async function appendUpkeep(tx: Tx, state: AppendState, events: readonly NewEvent[]): Promise<number> {
  return logWriter.write(tx, state.sessionId, decideWrite(state, { mode: 'upkeep', events, hashes: events.map(payloadHash), quotas: false }));
}
