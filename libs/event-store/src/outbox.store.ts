import { Tx } from '@app/database';

export interface OutboxMessage {
  jobName: string;
  /** Deterministic BullMQ job id: a retried dispatch cannot create a second job. */
  jobId: string;
  payload: Record<string, unknown>;
  /** The session's BullMQ deduplication key, when its jobs fold into one another (compaction, scheduled prune). */
  deduplicationId?: string | null;
}

export interface OutboxRow extends OutboxMessage {
  tenantId: string;
  outboxId: number;
}

const ROW_COLUMNS = 'tenant_id, outbox_id, job_name, job_id, payload, deduplication_id';

function toOutboxRow(r: Record<string, any>): OutboxRow {
  return { tenantId: r.tenant_id, outboxId: r.outbox_id, jobName: r.job_name, jobId: r.job_id, payload: r.payload, deduplicationId: r.deduplication_id };
}

/** Written in the caller's transaction, so the trigger commits with the events. */
export async function insertOutbox(tx: Tx, messages: readonly OutboxMessage[]): Promise<OutboxRow[]> {
  if (messages.length === 0) return [];
  const rows = await tx.query(
    `INSERT INTO outbox (tenant_id, job_name, job_id, payload, deduplication_id)
     SELECT current_tenant(), name, id, payload, dedup FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::text[]) AS t(name, id, payload, dedup)
     RETURNING ${ROW_COLUMNS}`,
    [
      messages.map((m) => m.jobName),
      messages.map((m) => m.jobId),
      messages.map((m) => JSON.stringify(m.payload)),
      messages.map((m) => m.deduplicationId ?? null),
    ],
  );
  return rows.map(toOutboxRow);
}

export async function markOutboxDispatched(tx: Tx, rows: readonly Pick<OutboxRow, 'tenantId' | 'outboxId'>[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `UPDATE outbox SET dispatched_at = now() FROM unnest($1::uuid[], $2::bigint[]) AS t(tenant_id, outbox_id)
      WHERE outbox.tenant_id = t.tenant_id AND outbox.outbox_id = t.outbox_id`,
    [rows.map((r) => r.tenantId), rows.map((r) => r.outboxId)],
  );
}

/**
 * The same, for a row written by another step of the request that kept
 * only its job id (the prune trigger of an append); it is still
 * undispatched, so the partial index on undispatched rows finds it.
 */
export async function markOutboxDispatchedByJobId(tx: Tx, jobId: string): Promise<void> {
  await tx.query(`UPDATE outbox SET dispatched_at = now() WHERE dispatched_at IS NULL AND job_id = $1`, [jobId]);
}

/**
 * The sweeper's claim: undispatched rows older than the grace period, locked
 * with SKIP LOCKED so sweepers on several workers share the work. Ordering
 * does not matter (each row is independent), so no global cursor is kept.
 */
export async function claimUndispatchedOutbox(tx: Tx, graceMs: number, limit: number): Promise<OutboxRow[]> {
  const rows = await tx.query(
    `UPDATE outbox SET attempts = attempts + 1
      WHERE (tenant_id, outbox_id) IN (
        SELECT tenant_id, outbox_id FROM outbox
         WHERE dispatched_at IS NULL AND created_at < now() - make_interval(secs => $1::double precision / 1000)
         ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING ${ROW_COLUMNS}`,
    [graceMs, limit],
  );
  return rows.map(toOutboxRow);
}

export async function recordOutboxError(tx: Tx, rows: readonly Pick<OutboxRow, 'tenantId' | 'outboxId'>[], error: string): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `UPDATE outbox SET last_error = $3 FROM unnest($1::uuid[], $2::bigint[]) AS t(tenant_id, outbox_id)
      WHERE outbox.tenant_id = t.tenant_id AND outbox.outbox_id = t.outbox_id`,
    [rows.map((r) => r.tenantId), rows.map((r) => r.outboxId), error.slice(0, 2000)],
  );
}

/** A dispatched trigger the reconciler is looking at; for a compaction, whether its marker is closed in the log. */
export interface UnsettledTrigger extends OutboxRow {
  reconcileAttempts: number;
  closed: boolean;
}

/**
 * The reconciler's claim: dispatched `compact` and `prune` rows not yet
 * settled, older than `afterMs` and not looked at for as long, locked with
 * SKIP LOCKED so reconcilers on several workers share them. A compaction
 * marker is closed when one of its closing events exists
 * (cmp-N-completed/-skipped/-gave-up), when a later marker or pivot
 * supersedes it (that row's reconciliation covers the session), or when its
 * session is gone. A prune row leaves no event: the job settles it
 * (settlePruneTriggers), so it is never closed here.
 */
export async function claimUnsettledTriggers(tx: Tx, afterMs: number, limit: number): Promise<UnsettledTrigger[]> {
  const rows = await tx.query(
    `SELECT o.tenant_id, o.outbox_id, o.job_name, o.job_id, o.payload, o.deduplication_id, o.reconcile_attempts,
            o.job_name = 'compact' AND (
              EXISTS (SELECT 1 FROM session_events e
                       WHERE e.tenant_id = o.tenant_id AND e.session_id = o.payload->>'sessionId'
                         AND ((e.seq > m.seq AND e.type IN ('compaction.requested', 'compaction.completed'))
                              OR e.event_id IN ('cmp-' || m.seq || '-completed', 'cmp-' || m.seq || '-skipped', 'cmp-' || m.seq || '-gave-up')))
              OR NOT EXISTS (SELECT 1 FROM sessions s WHERE s.tenant_id = o.tenant_id AND s.session_id = o.payload->>'sessionId')) AS closed
       FROM outbox o CROSS JOIN LATERAL (SELECT (o.payload->>'markerSeq')::bigint AS seq) m
      WHERE o.job_name IN ('compact', 'prune') AND o.settled_at IS NULL AND o.dispatched_at IS NOT NULL
        AND o.created_at < now() - make_interval(secs => $1::double precision / 1000)
        AND (o.reconciled_at IS NULL OR o.reconciled_at < now() - make_interval(secs => $1::double precision / 1000))
      ORDER BY o.created_at LIMIT $2 FOR UPDATE OF o SKIP LOCKED`,
    [afterMs, limit],
  );
  return rows.map((r: Record<string, any>) => ({ ...toOutboxRow(r), reconcileAttempts: r.reconcile_attempts, closed: r.closed }));
}

/** Records what the reconciler did with each row: settled (its work is done or given up), re-enqueued (one attempt more), or only looked at (a live job has it). */
export async function recordReconciliation(
  tx: Tx,
  rows: ReadonlyArray<Pick<OutboxRow, 'tenantId' | 'outboxId'> & { outcome: 'settled' | 'requeued' | 'live' }>,
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `UPDATE outbox SET reconciled_at = now(),
            settled_at = CASE WHEN t.outcome = 'settled' THEN now() END,
            reconcile_attempts = reconcile_attempts + CASE WHEN t.outcome = 'requeued' THEN 1 ELSE 0 END
       FROM unnest($1::uuid[], $2::bigint[], $3::text[]) AS t(tenant_id, outbox_id, outcome)
      WHERE outbox.tenant_id = t.tenant_id AND outbox.outbox_id = t.outbox_id`,
    [rows.map((r) => r.tenantId), rows.map((r) => r.outboxId), rows.map((r) => r.outcome)],
  );
}

/**
 * A prune job (which leaves no event when it finds nothing to do) ran
 * through `throughSeq`, or found its session gone (null): every unsettled
 * prune trigger of the session it covered is settled, in the tenant's
 * transaction. `job_name` is a literal so the partial index applies.
 */
export async function settlePruneTriggers(tx: Tx, sessionId: string, throughSeq: number | null): Promise<void> {
  await tx.query(
    `UPDATE outbox SET settled_at = now()
      WHERE job_name = 'prune' AND settled_at IS NULL AND payload->>'sessionId' = $1
        AND ($2::bigint IS NULL OR (payload->>'headSeq')::bigint <= $2)`,
    [sessionId, throughSeq],
  );
}

/**
 * Deletes up to `limit` finished rows older than `olderThanHours`: enqueued,
 * and settled where the row is a trigger the reconciler follows. Returns
 * how many went; several workers may run it at once (SKIP LOCKED).
 */
export async function deleteFinishedOutbox(tx: Tx, olderThanHours: number, limit: number): Promise<number> {
  const rows = await tx.query(
    `DELETE FROM outbox WHERE (tenant_id, outbox_id) IN (
       SELECT tenant_id, outbox_id FROM outbox
        WHERE created_at < now() - make_interval(hours => $1) AND dispatched_at IS NOT NULL
          AND (settled_at IS NOT NULL OR job_name NOT IN ('compact', 'prune'))
        LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING 1`,
    [olderThanHours, limit],
  );
  return rows.length;
}
