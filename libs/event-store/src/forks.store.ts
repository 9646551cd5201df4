import { Tx } from '@app/database';
import { adoptSegments, forkLineage, LineageSegment } from '@app/domain';
import { pivotAt } from './log-reads.store';
import { SESSION_COLUMNS, SessionRow, toSession } from './session-row';

/** The source of a fork, locked: what the fork copies from its row. */
export interface ForkSource {
  model: string;
  system: string | null;
  systemTokens: number;
  config: Record<string, unknown>;
  metadata: Record<string, unknown>;
  headSeq: number;
  pivotSeq: number;
  coveredThroughSeq: number;
  lineage: LineageSegment[] | null;
}

/**
 * Locks the source FOR SHARE: its delete waits until the fork is committed
 * (and then hands its rows over to it), a concurrent fork does not wait.
 */
export async function lockForkSource(tx: Tx, sessionId: string): Promise<ForkSource | undefined> {
  const [row] = await tx.query(
    `SELECT model, system, system_tokens, config, metadata, head_seq, pivot_seq, covered_through_seq, lineage
       FROM sessions WHERE tenant_id = current_tenant() AND session_id = $1 FOR SHARE`,
    [sessionId],
  );
  if (!row) return undefined;
  return {
    model: row.model,
    system: row.system,
    systemTokens: row.system_tokens,
    config: row.config,
    metadata: row.metadata,
    headSeq: row.head_seq,
    pivotSeq: row.pivot_seq,
    coveredThroughSeq: row.covered_through_seq,
    lineage: row.lineage,
  };
}

export interface NewFork {
  forkId: string;
  sourceId: string;
  atSeq: number;
  metadata: Record<string, unknown>;
}

/**
 * Writes the fork's session row, which reads the source's log up to atSeq
 * through its lineage (no event is copied), with the pivot in force at
 * atSeq, and copies the source's tool-call ledger as it was at atSeq (small
 * rows; the duplicate-call rule needs them). Undefined when the id is taken.
 */
export async function insertFork(tx: Tx, source: ForkSource, fork: NewFork): Promise<SessionRow | undefined> {
  const { forkId, sourceId, atSeq } = fork;
  const pivot = atSeq >= source.pivotSeq ? { seq: source.pivotSeq, coveredThroughSeq: source.coveredThroughSeq } : await pivotAt(tx, sourceId, atSeq);
  const [row] = await tx.query(
    `INSERT INTO sessions (tenant_id, session_id, model, system, system_tokens, config, metadata, head_seq,
                           pivot_seq, covered_through_seq, lineage, forked_from, forked_at_seq)
     VALUES (current_tenant(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $7)
     ON CONFLICT DO NOTHING RETURNING ${SESSION_COLUMNS}`,
    [
      forkId,
      source.model,
      source.system,
      source.systemTokens,
      source.config,
      fork.metadata,
      atSeq,
      pivot?.seq ?? 0,
      pivot ? ('coveredThroughSeq' in pivot ? pivot.coveredThroughSeq : pivot.data.coveredThroughSeq) : 0,
      JSON.stringify(forkLineage(sourceId, source.lineage, atSeq)),
      sourceId,
    ],
  );
  if (!row) return undefined;
  await tx.query(
    `INSERT INTO session_tool_calls (tenant_id, session_id, call_id, name, issued_seq, answered_seq)
     SELECT tenant_id, $2, call_id, name, issued_seq, CASE WHEN answered_seq <= $3 THEN answered_seq END
       FROM session_tool_calls WHERE tenant_id = current_tenant() AND session_id = $1 AND issued_seq <= $3`,
    [sourceId, forkId, atSeq],
  );
  return toSession(row);
}

/**
 * Copy on delete, before `sessionId` (locked) is deleted: every session
 * whose lineage reads its rows gets a copy of exactly those rows and reads
 * them from itself from then on (locked first, in id order, so a read sees
 * the old lineage or the new one, never a gap); each attached tool-output
 * ref of the session that another session's log still shows (the same
 * origin at the same seq, found through the lineage index) moves to one of
 * them, so the outputs survive the delete. A session that is no fork and
 * that no fork reads from pays one statement.
 */
export async function handOverToForks(tx: Tx, sessionId: string): Promise<void> {
  const lockReaders = (): Promise<Array<{ session_id: string; lineage: LineageSegment[] | null }>> =>
    tx.query(
      `SELECT session_id, lineage FROM sessions
        WHERE tenant_id = current_tenant() AND (session_id = $1 OR lineage @> jsonb_build_array(jsonb_build_object('source', $1::text)))
        ORDER BY session_id FOR UPDATE`,
      [sessionId],
    );
  // A fork of a reader, committed while this waited for that reader's lock, reads these rows
  // too but was not in the statement's snapshot: ask again, each time in a fresh snapshot,
  // until no new reader turns up (a fork made later waits for the locks held here).
  let rows = await lockReaders();
  for (let grew = true; grew; ) {
    const again = await lockReaders();
    grew = again.length !== rows.length;
    rows = again;
  }
  const dependents = rows.filter((d): d is { session_id: string; lineage: LineageSegment[] } => d.session_id !== sessionId);
  // Only a fork's refs can be shown by others without it being their source (it inherited them from a deleted one).
  if (dependents.length === 0 && !rows.some((d) => d.lineage !== null)) return;
  if (dependents.length > 0) {
    const adopted = dependents.map((d) => ({ sessionId: d.session_id, ...adoptSegments(d.lineage, sessionId, d.session_id) }));
    const copies = adopted.flatMap((d) => d.copy.map((range) => ({ sessionId: d.sessionId, ...range })));
    await tx.query(
      `INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash, created_at)
       SELECT e.tenant_id, c.dependent, e.seq, e.event_id, e.type, e.data, e.tokens, e.payload_hash, e.created_at
         FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS c(dependent, after_seq, through_seq)
         JOIN session_events e ON e.tenant_id = current_tenant() AND e.session_id = $1 AND e.seq > c.after_seq AND e.seq <= c.through_seq`,
      [sessionId, copies.map((c) => c.sessionId), copies.map((c) => c.afterSeq), copies.map((c) => c.throughSeq)],
    );
    await tx.query(
      `UPDATE sessions s SET lineage = u.lineage::jsonb FROM unnest($1::text[], $2::text[]) AS u(session_id, lineage)
        WHERE s.tenant_id = current_tenant() AND s.session_id = u.session_id`,
      [adopted.map((d) => d.sessionId), adopted.map((d) => JSON.stringify(d.lineage))],
    );
  }
  // The origin of each ref's event is the segment of this session's log that holds its seq.
  await tx.query(
    `WITH owned AS (
       SELECT r.ref_id, r.attached_seq, g.origin
         FROM tool_output_refs r
         JOIN sessions x ON x.tenant_id = r.tenant_id AND x.session_id = r.session_id
         CROSS JOIN LATERAL session_segments(x.lineage, x.session_id) g
        WHERE r.tenant_id = current_tenant() AND r.session_id = $1 AND r.attached_seq > g.after_seq AND r.attached_seq <= g.through_seq)
     UPDATE tool_output_refs r SET session_id = heir.session_id
       FROM owned o CROSS JOIN LATERAL (
         SELECT s.session_id FROM sessions s
           CROSS JOIN LATERAL jsonb_to_recordset(s.lineage) AS l(origin text, "afterSeq" bigint, "throughSeq" bigint)
          WHERE s.tenant_id = current_tenant() AND s.session_id <> $1
            AND s.lineage @> jsonb_build_array(jsonb_build_object('origin', o.origin))
            AND l.origin = o.origin AND o.attached_seq > l."afterSeq" AND o.attached_seq <= l."throughSeq"
          ORDER BY s.session_id LIMIT 1) heir
      WHERE r.tenant_id = current_tenant() AND r.ref_id = o.ref_id`,
    [sessionId],
  );
}
