import { DomainError } from './errors';

export interface ExistingEventMatch {
  id: string;
  seq: number;
  /** Whether the stored payload equals the retried one. */
  sameBody: boolean;
}

export type RetryOutcome = { kind: 'new' } | { kind: 'replay'; events: Array<{ id: string; seq: number }> };

/**
 * EventStoreDB's idempotency rule for client event ids: a batch whose every
 * id is already stored with the same body is a replay (original seqs, no
 * writes); an id reused with another body is a 422; a batch mixing stored
 * and new ids cannot be one write, so it is a conflict.
 */
export function classifyAppendRetry(eventIds: readonly string[], existing: readonly ExistingEventMatch[]): RetryOutcome {
  if (existing.length === 0) return { kind: 'new' };
  const reused = existing.find((e) => !e.sameBody);
  if (reused) {
    throw new DomainError('unprocessable', 'event_id_reused', `Event id ${reused.id} is already stored with a different body`, {
      eventId: reused.id,
      seq: reused.seq,
    });
  }
  if (existing.length < eventIds.length) {
    throw new DomainError('conflict', 'partial_duplicate', 'Some event ids of this batch are stored already and some are not', {
      storedIds: existing.map((e) => e.id),
    });
  }
  const seqById = new Map(existing.map((e) => [e.id, e.seq]));
  return { kind: 'replay', events: eventIds.map((id) => ({ id, seq: seqById.get(id)! })) };
}

export function versionConflict(expectedSeq: number, headSeq: number): DomainError {
  return new DomainError('conflict', 'version_conflict', `expectedSeq ${expectedSeq} does not match the head ${headSeq}`, {
    expectedSeq,
    headSeq,
  });
}
