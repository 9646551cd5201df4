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
     SELECT tn.tenant_id, t.name, t.id, t.payload, t.dedup FROM tenants tn, unnest($1::text[], $2::text[], $3::jsonb[], $4::text[]) AS t(name, id, payload, dedup)
      WHERE tn.tenant_id = current_tenant()
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

type RowKey = Pick<OutboxRow, 'tenantId' | 'outboxId'>;

/**
 * Runs `work` once per tenant among `rows`, in tenant order, with that
 * tenant's outbox ids. Statements that write or lock rows of several
 * tenants are issued per tenant: each then names its tenant, which Citus
 * needs to route a statement that locks rows (FOR UPDATE) or joins a list
 * of keys to one worker; on one server it is the same work in a few
 * statements instead of one.
 */
async function perTenant<T>(rows: readonly RowKey[], work: (tenantId: string, outboxIds: number[]) => Promise<T[]>): Promise<T[]> {
  const byTenant = new Map<string, number[]>();
  for (const r of rows) byTenant.set(r.tenantId, [...(byTenant.get(r.tenantId) ?? []), r.outboxId]);
  const out: T[] = [];
  for (const tenantId of [...byTenant.keys()].sort()) out.push(...(await work(tenantId, byTenant.get(tenantId)!)));
  return out;
}

const keyOf = (r: Record<string, any>): RowKey => ({ tenantId: r.tenant_id, outboxId: Number(r.outbox_id) });

export async function markOutboxDispatched(tx: Tx, rows: readonly RowKey[]): Promise<void> {
  await perTenant(rows, (tenantId, ids) =>
    tx.query(`UPDATE outbox SET dispatched_at = now() WHERE tenant_id = $1 AND outbox_id = ANY($2::bigint[])`, [tenantId, ids]),
  );
}

/**
 * The same, for a row written by another step of the request that kept
 * only its job id (the prune trigger of an append); it is still
 * undispatched, so the partial index on undispatched rows finds it.
 */
export async function markOutboxDispatchedByJobId(tx: Tx, jobId: string): Promise<void> {
  await tx.query(`UPDATE outbox SET dispatched_at = now() WHERE tenant_id = current_tenant() AND dispatched_at IS NULL AND job_id = $1`, [jobId]);
}

/**
 * The sweeper's claim: undispatched rows older than the grace period. The
 * candidates are read across tenants without a lock, then claimed tenant by
 * tenant with SKIP LOCKED, so sweepers on several workers share the work
 * (one that finds its candidates locked claims nothing this round) and a
 * row dispatched meanwhile is not claimed again. Ordering does not matter
 * (each row is independent), so no global cursor is kept.
 */
export async function claimUndispatchedOutbox(tx: Tx, graceMs: number, limit: number): Promise<OutboxRow[]> {
  const candidates = await tx.query(
    `SELECT tenant_id, outbox_id FROM outbox
      WHERE dispatched_at IS NULL AND created_at < now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY created_at LIMIT $2`,
    [graceMs, limit],
  );
  const rows = await perTenant(candidates.map(keyOf), (tenantId, ids) =>
    tx.query(
      `UPDATE outbox SET attempts = attempts + 1
        WHERE tenant_id = $1 AND outbox_id IN (
          SELECT outbox_id FROM outbox WHERE tenant_id = $1 AND outbox_id = ANY($2::bigint[]) AND dispatched_at IS NULL FOR UPDATE SKIP LOCKED)
        RETURNING ${ROW_COLUMNS}`,
      [tenantId, ids],
    ),
  );
  return rows.map(toOutboxRow);
}

export async function recordOutboxError(tx: Tx, rows: readonly RowKey[], error: string): Promise<void> {
  await perTenant(rows, (tenantId, ids) =>
    tx.query(`UPDATE outbox SET last_error = $3 WHERE tenant_id = $1 AND outbox_id = ANY($2::bigint[])`, [tenantId, ids, error.slice(0, 2000)]),
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
  const due = `o.job_name IN ('compact', 'prune') AND o.settled_at IS NULL AND o.dispatched_at IS NOT NULL
        AND o.created_at < now() - make_interval(secs => $1::double precision / 1000)
        AND (o.reconciled_at IS NULL OR o.reconciled_at < now() - make_interval(secs => $1::double precision / 1000))`;
  // As the sweeper's claim: candidates across tenants, then each tenant's locked with SKIP LOCKED.
  const candidates = await tx.query(`SELECT o.tenant_id, o.outbox_id FROM outbox o WHERE ${due} ORDER BY o.created_at LIMIT $2`, [afterMs, limit]);
  const rows = await perTenant(candidates.map(keyOf), (tenantId, ids) =>
    tx.query(
      `SELECT o.tenant_id, o.outbox_id, o.job_name, o.job_id, o.payload, o.deduplication_id, o.reconcile_attempts,
            o.job_name = 'compact' AND (
              EXISTS (SELECT 1 FROM session_events e
                       WHERE e.tenant_id = $2 AND e.session_id = o.payload->>'sessionId'
                         AND ((e.seq > m.seq AND e.type IN ('compaction.requested', 'compaction.completed'))
                              OR e.event_id IN ('cmp-' || m.seq || '-completed', 'cmp-' || m.seq || '-skipped', 'cmp-' || m.seq || '-gave-up')))
              OR NOT EXISTS (SELECT 1 FROM sessions s WHERE s.tenant_id = $2 AND s.session_id = o.payload->>'sessionId')) AS closed
       FROM outbox o CROSS JOIN LATERAL (SELECT (o.payload->>'markerSeq')::bigint AS seq) m
      WHERE o.tenant_id = $2 AND o.outbox_id = ANY($3::bigint[]) AND ${due}
      FOR UPDATE OF o SKIP LOCKED`,
      [afterMs, tenantId, ids],
    ),
  );
  return rows.map((r: Record<string, any>) => ({ ...toOutboxRow(r), reconcileAttempts: r.reconcile_attempts, closed: r.closed }));
}

/** Records what the reconciler did with each row: settled (its work is done or given up), re-enqueued (one attempt more), or only looked at (a live job has it). */
export async function recordReconciliation(
  tx: Tx,
  rows: ReadonlyArray<RowKey & { outcome: 'settled' | 'requeued' | 'live' }>,
): Promise<void> {
  // One statement per outcome: Citus allows now() in an UPDATE's SET but not inside a CASE.
  const changes = {
    settled: 'settled_at = now()',
    requeued: 'settled_at = NULL, reconcile_attempts = reconcile_attempts + 1',
    live: 'settled_at = NULL',
  };
  for (const [outcome, change] of Object.entries(changes)) {
    await perTenant(
      rows.filter((r) => r.outcome === outcome),
      (tenantId, ids) => tx.query(`UPDATE outbox SET reconciled_at = now(), ${change} WHERE tenant_id = $1 AND outbox_id = ANY($2::bigint[])`, [tenantId, ids]),
    );
  }
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
      WHERE tenant_id = current_tenant() AND job_name = 'prune' AND settled_at IS NULL AND payload->>'sessionId' = $1
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
  const finished = `created_at < now() - make_interval(hours => $1) AND dispatched_at IS NOT NULL
          AND (settled_at IS NOT NULL OR job_name NOT IN ('compact', 'prune'))`;
  const candidates = await tx.query(`SELECT tenant_id, outbox_id FROM outbox WHERE ${finished} LIMIT $2`, [olderThanHours, limit]);
  const rows = await perTenant(candidates.map(keyOf), (tenantId, ids) =>
    tx.query(
      `DELETE FROM outbox WHERE tenant_id = $2 AND outbox_id IN (
         SELECT outbox_id FROM outbox WHERE tenant_id = $2 AND outbox_id = ANY($3::bigint[]) AND ${finished} FOR UPDATE SKIP LOCKED)
       RETURNING 1`,
      [olderThanHours, tenantId, ids],
    ),
  );
  return rows.length;
}
