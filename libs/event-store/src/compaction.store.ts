import { Tx } from '@app/database';
import { GrowthSince, StoredEvent, Usage, usageTotal } from '@app/domain';
import { sessionLog, toStored } from './log-reads.store';

/**
 * Claims the running slot of a session for `markerSeq` until the lease ends.
 * Only the state display reads it: commits are fenced by the log itself.
 */
export async function markCompactionRunning(tx: Tx, sessionId: string, markerSeq: number, leaseMs: number): Promise<void> {
  await tx.query(
    `UPDATE sessions SET compaction_running_marker_seq = $2, compaction_running_until = now() + make_interval(secs => $3::double precision / 1000)
      WHERE tenant_id = current_tenant() AND session_id = $1`,
    [sessionId, markerSeq, leaseMs],
  );
}

/** Releases the running slot if it is still `markerSeq`'s (a newer run keeps its own). */
export async function clearCompactionRunning(tx: Tx, sessionId: string, markerSeq: number): Promise<void> {
  await tx.query(
    `UPDATE sessions SET compaction_running_marker_seq = NULL, compaction_running_until = NULL
      WHERE tenant_id = current_tenant() AND session_id = $1 AND compaction_running_marker_seq = $2`,
    [sessionId, markerSeq],
  );
}

/** The marker seq of the session's current pivot (its latest compaction.completed, inherited or not), or null. */
export async function pivotMarkerSeq(tx: Tx, sessionId: string): Promise<number | null> {
  const [row] = await tx.query(
    `SELECT (e.data->>'markerSeq')::bigint AS marker_seq FROM ${sessionLog('seq = s.pivot_seq')}`,
    [sessionId],
  );
  return row?.marker_seq ?? null;
}

/** A page of the session's compaction markers after `afterSeq`, oldest first (partial index). */
export async function readCompactionMarkers(tx: Tx, sessionId: string, afterSeq: number, limit: number): Promise<StoredEvent<'compaction.requested'>[]> {
  const rows = await tx.query(
    `SELECT e.* FROM ${sessionLog("seq > $2 AND type = 'compaction.requested'", 'ASC', 'LIMIT $3')} ORDER BY e.seq LIMIT $3`,
    [sessionId, afterSeq, limit],
  );
  return rows.map(toStored) as StoredEvent<'compaction.requested'>[];
}

/** The completions and failures recorded for these markers, oldest first (they all come after their marker). */
export async function readCompactionOutcomes(
  tx: Tx,
  sessionId: string,
  markerSeqs: readonly number[],
): Promise<StoredEvent<'compaction.completed' | 'compaction.failed'>[]> {
  if (markerSeqs.length === 0) return [];
  const rows = await tx.query(
    `SELECT e.* FROM ${sessionLog("seq > $2 AND type IN ('compaction.completed', 'compaction.failed') AND (data->>'markerSeq')::bigint = ANY($3::bigint[])")}
      ORDER BY e.seq`,
    [sessionId, Math.min(...markerSeqs), markerSeqs],
  );
  return rows.map(toStored) as StoredEvent<'compaction.completed' | 'compaction.failed'>[];
}

/** What the append trigger's cheap check needs: the session's settings and identity, and what was appended since a seq. */
export interface GrowthRead {
  session: { model: string; config: Record<string, unknown>; tenantConfig: Record<string, unknown>; headSeq: number; createdAt: Date };
  since: GrowthSince;
}

/**
 * The stored token figures of the session's events after `afterSeq`: their
 * sum, and the newest step among them with its usage and the sum after it.
 * Primary-key range scans over that range only (one per segment of a
 * fork's log; no event data read but the steps' usage), so the cost follows
 * what was appended since, not the window. The range is read once in seq order: summed directly, the planner
 * may take the (session, event_id) index and filter every event of the
 * session (see lockSessionForAppend).
 */
export async function readGrowthSince(tx: Tx, sessionId: string, afterSeq: number): Promise<GrowthRead | undefined> {
  const [row] = await tx.query(
    `WITH since AS MATERIALIZED (
       SELECT e.seq, e.tokens, e.type = 'step.finished' AS step, CASE WHEN e.type = 'step.finished' THEN e.data->'usage' END AS usage FROM ${sessionLog('seq > $2')})
     SELECT s.model, s.config, t.config AS tenant_config, s.head_seq, s.created_at,
            (SELECT coalesce(sum(tokens), 0) FROM since) AS since_tokens,
            u.usage,
            (SELECT coalesce(sum(tokens), 0) FROM since WHERE seq > u.seq) AS after_usage
       FROM sessions s JOIN tenants t ON t.tenant_id = s.tenant_id
       LEFT JOIN LATERAL (
         SELECT e.seq, e.usage FROM since e WHERE e.step ORDER BY e.seq DESC LIMIT 1) u ON true
      WHERE s.tenant_id = current_tenant() AND s.session_id = $1`,
    [sessionId, afterSeq],
  );
  if (!row) return undefined;
  return {
    session: { model: row.model, config: row.config, tenantConfig: row.tenant_config, headSeq: row.head_seq, createdAt: row.created_at },
    since: {
      tokens: Number(row.since_tokens),
      lastUsage: row.usage ? { total: usageTotal(row.usage as Usage), tokensAfter: Number(row.after_usage) } : null,
    },
  };
}
