import { Tx } from '@app/database';

export interface OutboxMessage {
  jobName: string;
  /** Deterministic BullMQ job id: a retried dispatch cannot create a second job. */
  jobId: string;
  payload: Record<string, unknown>;
}

export interface OutboxRow extends OutboxMessage {
  tenantId: string;
  outboxId: number;
}

/** Written in the caller's transaction, so the trigger commits with the events. */
export async function insertOutbox(tx: Tx, messages: readonly OutboxMessage[]): Promise<OutboxRow[]> {
  if (messages.length === 0) return [];
  const rows = await tx.query(
    `INSERT INTO outbox (tenant_id, job_name, job_id, payload)
     SELECT current_tenant(), name, id, payload FROM unnest($1::text[], $2::text[], $3::jsonb[]) AS t(name, id, payload)
     RETURNING tenant_id, outbox_id, job_name, job_id, payload`,
    [messages.map((m) => m.jobName), messages.map((m) => m.jobId), messages.map((m) => JSON.stringify(m.payload))],
  );
  return rows.map(toOutboxRow);
}

function toOutboxRow(r: Record<string, any>): OutboxRow {
  return { tenantId: r.tenant_id, outboxId: r.outbox_id, jobName: r.job_name, jobId: r.job_id, payload: r.payload };
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
      RETURNING tenant_id, outbox_id, job_name, job_id, payload`,
    [graceMs, limit],
  );
  return rows.map(toOutboxRow);
}

export async function recordOutboxError(tx: Tx, row: Pick<OutboxRow, 'tenantId' | 'outboxId'>, error: string): Promise<void> {
  await tx.query('UPDATE outbox SET last_error = $3 WHERE tenant_id = $1 AND outbox_id = $2', [row.tenantId, row.outboxId, error.slice(0, 2000)]);
}
