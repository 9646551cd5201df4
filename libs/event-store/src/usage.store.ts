import { Tx } from '@app/database';

/** What a tenant stores, in bytes: event JSON and distinct tool outputs. */
export interface TenantUsage {
  eventBytes: number;
  toolOutputBytes: number;
}

/**
 * The current tenant's usage, this transaction's own writes included. The
 * counters are kept by triggers (migration 1764500000000) in the writing
 * transaction, so a check after the writes sees them; concurrent writers'
 * uncommitted bytes are not seen.
 */
export async function readUsage(tx: Tx): Promise<TenantUsage> {
  const [row] = await tx.query(
    `SELECT coalesce(sum(event_bytes), 0)::bigint AS event_bytes, coalesce(sum(tool_output_bytes), 0)::bigint AS tool_output_bytes
       FROM tenant_usage WHERE tenant_id = current_tenant()`,
  );
  return { eventBytes: row.event_bytes, toolOutputBytes: row.tool_output_bytes };
}
