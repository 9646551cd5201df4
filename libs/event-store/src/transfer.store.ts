import { randomInt } from 'node:crypto';
import { Tx } from '@app/database';
import { EventType } from '@app/domain';

export interface ImportedEventRow {
  seq: number;
  id: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: string;
  tokens: number;
  payloadHash: Buffer;
}

/**
 * Writes imported events at their own seqs with their original times
 * (insertEvents stamps the insert's time). The session row's head and pivot
 * are set once, by finishImportedSession.
 */
export async function insertImportedEvents(tx: Tx, sessionId: string, rows: readonly ImportedEventRow[]): Promise<void> {
  await tx.query(
    `INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash, created_at)
     SELECT tn.tenant_id, $1, t.seq, t.id, t.type, t.data, t.tokens, t.hash, t.created_at
       FROM tenants tn, ROWS FROM (unnest($2::bigint[]), unnest($3::text[]), unnest($4::text[]), jsonb_array_elements($5::jsonb),
                       unnest($6::int[]), unnest($7::bytea[]), unnest($8::timestamptz[]))
            AS t(seq, id, type, data, tokens, hash, created_at)
      WHERE tn.tenant_id = current_tenant()`,
    [
      sessionId,
      rows.map((r) => r.seq),
      rows.map((r) => r.id),
      rows.map((r) => r.type),
      JSON.stringify(rows.map((r) => r.data)),
      rows.map((r) => r.tokens),
      rows.map((r) => r.payloadHash),
      rows.map((r) => r.createdAt),
    ],
  );
}

/** The imported session's head, pivot and creation time, after its events. */
export async function finishImportedSession(
  tx: Tx,
  sessionId: string,
  facts: { headSeq: number; pivot: { seq: number; coveredThroughSeq: number } | null; createdAt: string },
): Promise<void> {
  await tx.query(
    `UPDATE sessions SET head_seq = $2, pivot_seq = $3, covered_through_seq = $4, created_at = $5::timestamptz, updated_at = statement_timestamp()
      WHERE tenant_id = current_tenant() AND session_id = $1`,
    [sessionId, facts.headSeq, facts.pivot?.seq ?? 0, facts.pivot?.coveredThroughSeq ?? 0, facts.createdAt],
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

