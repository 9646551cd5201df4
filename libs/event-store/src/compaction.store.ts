import { Tx } from '@app/database';
import { GrowthSince, StoredEvent, Usage, usageTotal } from '@app/domain';

/**
 * Claims the running slot of a session for `markerSeq` until the lease ends.
 * Only the state display reads it: commits are fenced by the log itself.
 */
export async function markCompactionRunning(tx: Tx, sessionId: string, markerSeq: number, leaseMs: number): Promise<void> {
  await tx.query(
    `UPDATE sessions SET compaction_running_marker_seq = $2, compaction_running_until = now() + make_interval(secs => $3::double precision / 1000)
      WHERE session_id = $1`,
    [sessionId, markerSeq, leaseMs],
  );
}

/** Releases the running slot if it is still `markerSeq`'s (a newer run keeps its own). */
export async function clearCompactionRunning(tx: Tx, sessionId: string, markerSeq: number): Promise<void> {
  await tx.query(
    `UPDATE sessions SET compaction_running_marker_seq = NULL, compaction_running_until = NULL
      WHERE session_id = $1 AND compaction_running_marker_seq = $2`,
    [sessionId, markerSeq],
  );
}

/** The marker seq of the session's current pivot (its latest compaction.completed), or null. */
export async function pivotMarkerSeq(tx: Tx, sessionId: string): Promise<number | null> {
  const [row] = await tx.query(
    `SELECT (e.data->>'markerSeq')::bigint AS marker_seq
       FROM sessions s JOIN session_events e
         ON e.tenant_id = s.tenant_id AND e.session_id = s.session_id AND e.seq = s.pivot_seq
      WHERE s.session_id = $1`,
    [sessionId],
  );
  return row?.marker_seq ?? null;
}

const toStored = (row: Record<string, any>) =>
  ({ seq: row.seq, id: row.event_id, type: row.type, data: row.data, createdAt: row.created_at, tokens: row.tokens }) as StoredEvent;

/** A page of the session's compaction markers after `afterSeq`, oldest first (partial index). */
export async function readCompactionMarkers(tx: Tx, sessionId: string, afterSeq: number, limit: number): Promise<StoredEvent<'compaction.requested'>[]> {
  const rows = await tx.query(
    `SELECT seq, event_id, type, data, tokens, created_at FROM session_events
      WHERE tenant_id = current_tenant() AND session_id = $1 AND seq > $2 AND type = 'compaction.requested'
      ORDER BY seq LIMIT $3`,
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
    `SELECT seq, event_id, type, data, tokens, created_at FROM session_events
      WHERE tenant_id = current_tenant() AND session_id = $1 AND seq > $2
        AND type IN ('compaction.completed', 'compaction.failed') AND (data->>'markerSeq')::bigint = ANY($3::bigint[])
      ORDER BY seq`,
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
 * Primary-key range scans over that range only (no event data read but the
 * step's usage), so the cost follows what was appended since, not the
 * window. The range is read once in seq order: summed directly, the planner
 * may take the (session, event_id) index and filter every event of the
 * session (see lockSessionForAppend).
 */
export async function readGrowthSince(tx: Tx, sessionId: string, afterSeq: number): Promise<GrowthRead | undefined> {
  const [row] = await tx.query(
    `WITH since AS MATERIALIZED (
       SELECT seq, tokens FROM session_events
        WHERE tenant_id = current_tenant() AND session_id = $1 AND seq > $2 ORDER BY seq)
     SELECT s.model, s.config, t.config AS tenant_config, s.head_seq, s.created_at,
            (SELECT coalesce(sum(tokens), 0) FROM since) AS since_tokens,
            u.usage,
            (SELECT coalesce(sum(tokens), 0) FROM since WHERE seq > u.seq) AS after_usage
       FROM sessions s JOIN tenants t ON t.tenant_id = s.tenant_id
       LEFT JOIN LATERAL (
         SELECT e.seq, e.data->'usage' AS usage FROM session_events e
          WHERE e.tenant_id = current_tenant() AND e.session_id = s.session_id AND e.seq > $2 AND e.type = 'step.finished'
          ORDER BY e.seq DESC LIMIT 1) u ON true
      WHERE s.session_id = $1`,
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
