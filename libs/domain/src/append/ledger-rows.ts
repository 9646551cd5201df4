import { DecidedWrite } from './session-log-writer';

type Ledger = DecidedWrite['ledger'];

/**
 * A decision's ledger as rows: each call the batch issues, answered at once
 * when the batch answers it too (a whole turn is one insert, not an insert
 * and an update), and the answers to calls issued before the batch.
 */
export function ledgerRows({ issued, answered }: Ledger): {
  calls: Array<{ callId: string; name: string; seq: number; answeredSeq: number | null }>;
  answers: Array<{ callId: string; seq: number }>;
} {
  const answeredSeq = new Map(answered.map((a) => [a.callId, a.seq]));
  const issuedIds = new Set(issued.map((c) => c.callId));
  return {
    calls: issued.map((c) => ({ ...c, answeredSeq: answeredSeq.get(c.callId) ?? null })),
    answers: answered.filter((a) => !issuedIds.has(a.callId)),
  };
}

/**
 * The calls a process saw issued and not answered, by id with their names,
 * after a decided write: its issued calls open, its answered ones not; the
 * oldest go first beyond `limit`.
 */
export function openCallsAfter(open: ReadonlyMap<string, string> | undefined, { issued, answered }: Ledger, limit: number): ReadonlyMap<string, string> {
  const next = new Map(open);
  for (const call of issued) next.set(call.callId, call.name);
  for (const answer of answered) next.delete(answer.callId);
  for (const callId of next.keys()) if (next.size > limit) next.delete(callId);
  return next;
}
