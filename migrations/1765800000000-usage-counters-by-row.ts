import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The usage triggers read their transition tables (new_rows, old_rows) into
 * per-tenant sums first, then upsert each tenant's counter row with plain
 * values. Same counts, same shard per transaction and tenant order as
 * 1765400000000. Why: on Citus the triggers run on the workers' shards, and
 * a statement that names both a transition table and a distributed table is
 * planned as a distributed query that cannot see the transition table
 * ("could not find named tuplestore"); an upsert of values into the
 * co-located tenant_usage shard runs on the same worker.
 */
export class UsageCountersByRow1765800000000 implements MigrationInterface {
  name = 'UsageCountersByRow1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION count_event_bytes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      DECLARE r record;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          FOR r IN SELECT tenant_id, sum(octet_length(data::text)) AS bytes FROM new_rows GROUP BY 1 ORDER BY 1 LOOP
            INSERT INTO tenant_usage AS u (tenant_id, shard, event_bytes) VALUES (r.tenant_id, usage_shard(), r.bytes)
            ON CONFLICT (tenant_id, shard) DO UPDATE SET event_bytes = u.event_bytes + excluded.event_bytes;
          END LOOP;
        ELSE
          FOR r IN SELECT tenant_id, -sum(octet_length(data::text)) AS bytes FROM old_rows GROUP BY 1 ORDER BY 1 LOOP
            CONTINUE WHEN NOT EXISTS (SELECT 1 FROM tenants t WHERE t.tenant_id = r.tenant_id);
            INSERT INTO tenant_usage AS u (tenant_id, shard, event_bytes) VALUES (r.tenant_id, usage_shard(), r.bytes)
            ON CONFLICT (tenant_id, shard) DO UPDATE SET event_bytes = u.event_bytes + excluded.event_bytes;
          END LOOP;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION count_tool_output_bytes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      DECLARE r record;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          FOR r IN SELECT tenant_id, sum(byte_size) AS bytes FROM new_rows GROUP BY 1 HAVING sum(byte_size) <> 0 ORDER BY 1 LOOP
            INSERT INTO tenant_usage AS u (tenant_id, shard, tool_output_bytes) VALUES (r.tenant_id, usage_shard(), r.bytes)
            ON CONFLICT (tenant_id, shard) DO UPDATE SET tool_output_bytes = u.tool_output_bytes + excluded.tool_output_bytes;
          END LOOP;
        ELSIF TG_OP = 'UPDATE' THEN
          FOR r IN SELECT tenant_id, sum(n.byte_size - o.byte_size) AS bytes FROM new_rows n JOIN old_rows o USING (tenant_id, content_id)
                    GROUP BY 1 HAVING sum(n.byte_size - o.byte_size) <> 0 ORDER BY 1 LOOP
            INSERT INTO tenant_usage AS u (tenant_id, shard, tool_output_bytes) VALUES (r.tenant_id, usage_shard(), r.bytes)
            ON CONFLICT (tenant_id, shard) DO UPDATE SET tool_output_bytes = u.tool_output_bytes + excluded.tool_output_bytes;
          END LOOP;
        ELSE
          FOR r IN SELECT tenant_id, -sum(byte_size) AS bytes FROM old_rows GROUP BY 1 HAVING sum(byte_size) <> 0 ORDER BY 1 LOOP
            CONTINUE WHEN NOT EXISTS (SELECT 1 FROM tenants t WHERE t.tenant_id = r.tenant_id);
            INSERT INTO tenant_usage AS u (tenant_id, shard, tool_output_bytes) VALUES (r.tenant_id, usage_shard(), r.bytes)
            ON CONFLICT (tenant_id, shard) DO UPDATE SET tool_output_bytes = u.tool_output_bytes + excluded.tool_output_bytes;
          END LOOP;
        END IF;
        RETURN NULL;
      END $$`);
  }

  async down(): Promise<void> {
    throw new Error('UsageCountersByRow1765800000000 is not reversible: the earlier functions are in migration 1765400000000');
  }
}
