import { Tx } from '@app/database';

export interface StoredResponse {
  status: number;
  body: unknown;
}

/**
 * Claims `key` for this transaction. A concurrent request with the same key
 * blocks on the primary key until this transaction ends, then sees its
 * stored response (or the key free again if it rolled back). Expired keys
 * are dropped first, so a reuse after the TTL runs anew.
 */
export async function claimIdempotencyKey(
  tx: Tx,
  key: string,
  requestHash: Buffer,
  ttlHours: number,
): Promise<{ claimed: true } | { claimed: false; requestHash: Buffer; response: StoredResponse }> {
  await tx.query(
    `DELETE FROM idempotency_keys WHERE tenant_id = current_tenant() AND key = $1 AND created_at < now() - make_interval(hours => $2)`,
    [key, ttlHours],
  );
  const inserted = await tx.query(
    `INSERT INTO idempotency_keys (tenant_id, key, request_hash, response_status, response_body)
     VALUES (current_tenant(), $1, $2, 0, 'null') ON CONFLICT DO NOTHING RETURNING 1`,
    [key, requestHash],
  );
  if (inserted.length === 1) return { claimed: true };
  const [row] = await tx.query(
    `SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE tenant_id = current_tenant() AND key = $1`,
    [key],
  );
  return { claimed: false, requestHash: row.request_hash, response: { status: row.response_status, body: row.response_body } };
}

export async function storeIdempotentResponse(tx: Tx, key: string, response: StoredResponse): Promise<void> {
  await tx.query(
    `UPDATE idempotency_keys SET response_status = $2, response_body = $3 WHERE tenant_id = current_tenant() AND key = $1`,
    [key, response.status, JSON.stringify(response.body)],
  );
}
