import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The usage counters' shard becomes the writing transaction's (txid & 63)
 * instead of the session's (events) or the content's (tool outputs). An
 * append wrote two counter rows, its contents' shard then its session's, in
 * separate statements: two appends of one tenant could take the same two
 * rows in opposite orders and deadlock (seen with 32 agents of a tenant
 * sharing outputs). Now every transaction touches one counter row per
 * tenant, and a transaction spanning tenants (the collector) takes them in
 * tenant order. Sums per tenant are unchanged; a shard may go negative when
 * bytes counted under one transaction are freed under another, which no
 * reader looks at (they read the sum).
 *
 * Decrements are upserts now (the transaction's shard row may not exist),
 * skipped for a tenant whose row is gone: its counters went with it.
 *
 * A transaction that runs long (an import streams for minutes) names its
 * own shard, 64-127, in `app.usage_shard`: it holds that counter row until
 * it commits, so it must not hold one the tenant's appends use.
 */
export class UsageShardPerTransaction1765400000000 implements MigrationInterface {
  name = 'UsageShardPerTransaction1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION usage_shard() RETURNS int LANGUAGE sql VOLATILE AS
      $$ SELECT coalesce(nullif(current_setting('app.usage_shard', true), '')::int, (txid_current() & 63)::int) $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION count_event_bytes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO tenant_usage AS u (tenant_id, shard, event_bytes)
          SELECT tenant_id, usage_shard(), sum(octet_length(data::text)) FROM new_rows GROUP BY 1 ORDER BY 1
          ON CONFLICT (tenant_id, shard) DO UPDATE SET event_bytes = u.event_bytes + excluded.event_bytes;
        ELSE
          INSERT INTO tenant_usage AS u (tenant_id, shard, event_bytes)
          SELECT d.tenant_id, usage_shard(), -sum(octet_length(d.data::text)) FROM old_rows d
           WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.tenant_id = d.tenant_id) GROUP BY 1 ORDER BY 1
          ON CONFLICT (tenant_id, shard) DO UPDATE SET event_bytes = u.event_bytes + excluded.event_bytes;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION count_tool_output_bytes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO tenant_usage AS u (tenant_id, shard, tool_output_bytes)
          SELECT tenant_id, usage_shard(), sum(byte_size) FROM new_rows GROUP BY 1 HAVING sum(byte_size) <> 0 ORDER BY 1
          ON CONFLICT (tenant_id, shard) DO UPDATE SET tool_output_bytes = u.tool_output_bytes + excluded.tool_output_bytes;
        ELSIF TG_OP = 'UPDATE' THEN
          INSERT INTO tenant_usage AS u (tenant_id, shard, tool_output_bytes)
          SELECT tenant_id, usage_shard(), sum(n.byte_size - o.byte_size) FROM new_rows n JOIN old_rows o USING (tenant_id, content_id)
           GROUP BY 1 HAVING sum(n.byte_size - o.byte_size) <> 0 ORDER BY 1
          ON CONFLICT (tenant_id, shard) DO UPDATE SET tool_output_bytes = u.tool_output_bytes + excluded.tool_output_bytes;
        ELSE
          INSERT INTO tenant_usage AS u (tenant_id, shard, tool_output_bytes)
          SELECT d.tenant_id, usage_shard(), -sum(d.byte_size) FROM old_rows d
           WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.tenant_id = d.tenant_id) GROUP BY 1 HAVING sum(d.byte_size) <> 0 ORDER BY 1
          ON CONFLICT (tenant_id, shard) DO UPDATE SET tool_output_bytes = u.tool_output_bytes + excluded.tool_output_bytes;
        END IF;
        RETURN NULL;
      END $$`);
  }

  async down(): Promise<void> {
    throw new Error('UsageShardPerTransaction1765400000000 is not reversible: the earlier functions are in migration 1764500000000');
  }
}
