import { randomInt } from 'node:crypto';
import { Tx } from '@app/database';
import { EventRow } from '@app/domain';
import { eventColumns } from './append.store';

/**
 * Writes imported events at head+1.. (`firstSeq`) with their original times
 * (insertEvents stamps the insert's time) and moves the head to the last,
 * from the head it follows (a row moved meanwhile throws). The pivot is set
 * once, by finishImportedSession.
 */
export async function insertImportedEvents(tx: Tx, sessionId: string, firstSeq: number, rows: readonly EventRow[], createdAt: readonly string[]): Promise<number> {
  const headSeq = firstSeq + rows.length - 1;
  // Two statements sent together, not a CTE: Citus routes each to the tenant's worker, and broadcasts a CTE's rows.
  const [, [moved]] = await Promise.all([
    tx.query(
      `INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash, created_at)
       SELECT tn.tenant_id, $1, $2 + t.ord - 1, t.id, t.type, t.data, t.tokens, t.hash, t.created_at
         FROM tenants tn, ROWS FROM (unnest($3::text[]), unnest($4::text[]), jsonb_array_elements($5::jsonb), unnest($6::int[]), unnest($7::bytea[]), unnest($8::timestamptz[]))
              WITH ORDINALITY AS t(id, type, data, tokens, hash, created_at, ord)
        WHERE tn.tenant_id = current_tenant()`,
      [
        sessionId,
        firstSeq,
        ...eventColumns(rows),
        createdAt,
      ],
    ),
    tx.query('UPDATE sessions SET head_seq = $3 WHERE tenant_id = current_tenant() AND session_id = $1 AND head_seq = $2 - 1 RETURNING head_seq', [sessionId, firstSeq, headSeq]),
  ]);
  if (!moved) throw new Error(`session ${sessionId}: imported events not written at its head`);
  return headSeq;
}

/** The imported session's pivot and creation time, after its events (which moved its head). */
export async function finishImportedSession(
  tx: Tx,
  sessionId: string,
  facts: { pivot: { seq: number; coveredThroughSeq: number } | null; createdAt: string },
): Promise<void> {
  await tx.query(
    `UPDATE sessions SET pivot_seq = $2, covered_through_seq = $3, created_at = $4::timestamptz, updated_at = statement_timestamp()
      WHERE tenant_id = current_tenant() AND session_id = $1`,
    [sessionId, facts.pivot?.seq ?? 0, facts.pivot?.coveredThroughSeq ?? 0, facts.createdAt],
  );
}

/**
 * An import's transaction streams for as long as its body: it counts its
 * bytes under a usage-counter row of its own (64-127, migration
 * 1765400000000), so the tenant's appends never wait for it.
 */
export async function countUsageApart(tx: Tx): Promise<void> {
  // SET LOCAL, not set_config(): Citus sends it on to the workers, where the usage triggers run. 64 texts in all.
  await tx.query(`SET LOCAL app.usage_shard = '${64 + randomInt(64)}'`);
}

