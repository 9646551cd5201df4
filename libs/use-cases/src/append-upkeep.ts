import { Tx } from '@app/database';
import { AppendState, decideAppend, NewEvent, payloadHash } from '@app/domain';
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
  const decision = decideAppend(state, { mode: 'upkeep', events, hashes: events.map(payloadHash), quotas: false });
  if (decision.kind !== 'write' || !decision.rows) throw new Error(`session ${state.sessionId}: upkeep's events must be new and carry no tool results`);
  return logWriter.write(tx, state.sessionId, { ...decision, rows: decision.rows });
}
