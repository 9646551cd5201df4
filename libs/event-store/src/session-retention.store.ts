import { Tx } from '@app/database';
import type { SessionActivity, SessionRetentionPolicy } from '@app/domain';

/** The policy stored in a tenants row (both columns NULL: off). */
export function retentionOf(row: Record<string, any>): SessionRetentionPolicy | null {
  return row.retention_action === null ? null : { idleSeconds: row.retention_idle_seconds, action: row.retention_action };
}

/** Sets or (null) turns off the retention of the tenant set for the transaction. */
export async function updateTenantRetention(tx: Tx, policy: SessionRetentionPolicy | null): Promise<void> {
  await tx.query('UPDATE tenants SET retention_idle_seconds = $1, retention_action = $2 WHERE tenant_id = current_tenant()', [
    policy?.idleSeconds ?? null,
    policy?.action ?? null,
  ]);
}

/**
 * Tenants with a retention policy, keyset-paged by id: the worker's view
 * across tenants, which the `admin_listing` policy opens to this
 * transaction only.
 */
export async function tenantsWithRetention(
  tx: Tx,
  limit: number,
  afterTenantId = '00000000-0000-0000-0000-000000000000',
): Promise<Array<{ tenantId: string; policy: SessionRetentionPolicy }>> {
  await tx.query(`SET LOCAL app.admin = 'on'`);
  const rows = await tx.query(
    `SELECT tenant_id, retention_idle_seconds, retention_action FROM tenants
      WHERE retention_action IS NOT NULL AND tenant_id > $1 ORDER BY tenant_id LIMIT $2`,
    [afterTenantId, limit],
  );
  return rows.map((row) => ({ tenantId: row.tenant_id, policy: retentionOf(row)! }));
}

/**
 * Locks up to `limit` sessions of the tenant last active before `cutoff`
 * (archived ones only with `includeArchived`), in primary-key order after
 * `afterSessionId`, so a run walks the tenant once. Rows another
 * transaction holds (an append, another worker's batch) are skipped: an
 * append makes the session active anyway, and another worker is already
 * retiring the rest.
 */
export async function lockIdleSessions(
  tx: Tx,
  q: { cutoff: Date; includeArchived: boolean; afterSessionId: string; limit: number },
): Promise<SessionActivity[]> {
  const rows = await tx.query(
    `SELECT session_id, updated_at, archived_at FROM sessions
      WHERE tenant_id = current_tenant() AND session_id > $1 AND updated_at < $2 AND ($3 OR archived_at IS NULL)
      ORDER BY session_id LIMIT $4 FOR UPDATE SKIP LOCKED`,
    [q.afterSessionId, q.cutoff, q.includeArchived, q.limit],
  );
  return rows.map((row) => ({ sessionId: row.session_id, lastActivityAt: row.updated_at, archivedAt: row.archived_at }));
}

/** Archives these sessions at `at`; one already archived keeps its time. Returns how many were archived now. */
export async function archiveSessions(tx: Tx, sessionIds: readonly string[], at: Date): Promise<number> {
  if (sessionIds.length === 0) return 0;
  const rows = await tx.query(
    'UPDATE sessions SET archived_at = $2 WHERE tenant_id = current_tenant() AND session_id = ANY($1::text[]) AND archived_at IS NULL RETURNING 1',
    [sessionIds, at],
  );
  return rows.length;
}

/**
 * Archives or unarchives one session by request. Unarchiving counts as
 * activity (updated_at moves), or the next retention run would archive the
 * session again at once. Returns false when the session does not exist.
 */
export async function setSessionArchived(tx: Tx, sessionId: string, archived: boolean): Promise<boolean> {
  // No coalesce() or CASE around the time: Citus refuses a non-immutable function inside them in a write.
  if (archived) {
    const rows = await tx.query(
      'UPDATE sessions SET archived_at = least(archived_at, statement_timestamp()) WHERE tenant_id = current_tenant() AND session_id = $1 RETURNING 1',
      [sessionId],
    );
    return rows.length === 1;
  }
  await tx.query(
    'UPDATE sessions SET archived_at = NULL, updated_at = statement_timestamp() WHERE tenant_id = current_tenant() AND session_id = $1 AND archived_at IS NOT NULL',
    [sessionId],
  );
  return (await tx.query('SELECT 1 FROM sessions WHERE tenant_id = current_tenant() AND session_id = $1', [sessionId])).length === 1;
}
