import { Tx } from '@app/database';
import { DecidedWrite, ledgerRows } from '@app/domain';

// The tool-call ledger's rows (session_tool_calls), behind the domain's rule that a call id is issued once and answered once.

export interface KnownToolCallRow {
  callId: string;
  name: string;
  answered: boolean;
  /** The seqs of the messages that issued and answered the call. */
  issuedSeq: number;
  answeredSeq: number | null;
}

export async function findToolCalls(tx: Tx, sessionId: string, callIds: string[]): Promise<KnownToolCallRow[]> {
  // One index probe per id, as ownEvents does: with `call_id = ANY($2)` the planner, whenever its estimate for
  // the session was low (stale statistics, a young tenant), probed (tenant_id, session_id) only and filtered
  // every call of the session: an append with tool results cost O(the session's calls), 0.9 ms at 2,400.
  const rows = await tx.query(
    `SELECT c.call_id, c.name, c.issued_seq, c.answered_seq
       FROM unnest($2::text[]) AS wanted(id)
       CROSS JOIN LATERAL (
         SELECT call_id, name, issued_seq, answered_seq FROM session_tool_calls
          WHERE tenant_id = current_tenant() AND session_id = $1 AND call_id = wanted.id
          LIMIT 1) c`,
    [sessionId, callIds],
  );
  return rows.map((r) => ({
    callId: r.call_id,
    name: r.name,
    answered: r.answered_seq !== null,
    issuedSeq: Number(r.issued_seq),
    answeredSeq: r.answered_seq === null ? null : Number(r.answered_seq),
  }));
}

/** Records a decision's issued calls and answers; the primary key backs the duplicate-id rule. */
export async function recordToolCalls(tx: Tx, sessionId: string, ledger: DecidedWrite['ledger']): Promise<void> {
  // A call answered in the batch that issued it (a whole turn in one append) is inserted answered: one statement, not two.
  const { calls: issued, answers: answeredBefore } = ledgerRows(ledger);
  if (issued.length > 0) {
    await tx.query(
      `INSERT INTO session_tool_calls (tenant_id, session_id, call_id, name, issued_seq, answered_seq)
       SELECT tn.tenant_id, $1, t.call_id, t.name, t.seq, t.answered
         FROM tenants tn, unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS t(call_id, name, seq, answered)
        WHERE tn.tenant_id = current_tenant()`,
      [sessionId, issued.map((c) => c.callId), issued.map((c) => c.name), issued.map((c) => c.seq), issued.map((c) => c.answeredSeq)],
    );
  }
  if (answeredBefore.length > 0) {
    // Each row found by one index probe, then updated by its tuple id. Joined on the key, the planner (on the
    // same low estimate as above) scanned every call of the session: 4.2 ms for one answer at 2,400 calls.
    // The session lock, held by the caller, keeps these rows from changing between the probe and the update;
    // were one to change anyway, it would be skipped, and the count below refuses the batch.
    const updated = await tx.query(
      `UPDATE session_tool_calls c SET answered_seq = w.seq
         FROM (SELECT k.tbl, k.row, t.seq
                 FROM unnest($2::text[], $3::bigint[]) AS t(call_id, seq)
                 CROSS JOIN LATERAL (
                   SELECT tableoid AS tbl, ctid AS row FROM session_tool_calls
                    WHERE tenant_id = current_tenant() AND session_id = $1 AND call_id = t.call_id
                    LIMIT 1) k) w
        -- A tuple id names a row only within its table: the table too, should this one ever be partitioned.
        WHERE c.tenant_id = current_tenant() AND c.tableoid = w.tbl AND c.ctid = w.row
       RETURNING 1`,
      [sessionId, answeredBefore.map((a) => a.callId), answeredBefore.map((a) => a.seq)],
    );
    if (updated.length !== answeredBefore.length) throw new Error(`session ${sessionId}: ${updated.length} of ${answeredBefore.length} answered tool calls recorded`);
  }
}

/**
 * A rewind to `toSeq`, under the session lock (the caller's append): calls
 * issued up to toSeq whose answer the rewind takes out of the view are
 * unanswered again, so the agent can run them and append a new result. Calls
 * issued after toSeq stay in the ledger: their ids remain used (a new call
 * takes a new id, as providers mint them), and a late result for one is
 * accepted and dropped by the view with its call. A fork taken before the
 * rewind copies the ledger as it is then; a call whose result the fork shows
 * but the rewind unanswered may be answered twice there, which the view
 * repairs (the later result dropped).
 */
export async function unanswerToolCallsAfter(tx: Tx, sessionId: string, toSeq: number): Promise<number> {
  const rows = await tx.query(
    `UPDATE session_tool_calls SET answered_seq = NULL
      WHERE tenant_id = current_tenant() AND session_id = $1 AND issued_seq <= $2 AND answered_seq > $2
     RETURNING 1`,
    [sessionId, toSeq],
  );
  return rows.length;
}
