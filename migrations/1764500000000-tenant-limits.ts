import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-tenant limits and storage usage.
 *
 * - `tenants.limits` / `tenants.quotas`: the admin API's overrides of the
 *   configured defaults (absent key: the default applies).
 * - `tenant_usage`: stored event bytes (`octet_length(data::text)`, so an
 *   insert and the later delete of a row count the same) and tool-output
 *   bytes (`byte_size` of the tenant's distinct contents). Kept by triggers,
 *   so every writer counts (API, worker, garbage collector, cascades) in the
 *   writing transaction, and nothing else may write it: the runtime role
 *   only reads its tenant's rows. The counters are spread over 64 rows per
 *   tenant (by session, by content), so concurrent appends to different
 *   sessions rarely wait for the same row lock; usage is their sum.
 * - The trigger functions run as the owner (SECURITY DEFINER) whatever role
 *   writes, hence a policy for the owner on the forced-RLS table.
 * - `app.admin`: a transaction of the admin API that sets it may read every
 *   tenant's row and usage (the tenant list); tenant work never sets it.
 */
export class TenantLimits1764500000000 implements MigrationInterface {
  name = 'TenantLimits1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tenants
        ADD COLUMN limits jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(limits) = 'object'),
        ADD COLUMN quotas jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(quotas) = 'object')`);
    await q.query(`GRANT UPDATE (limits, quotas) ON tenants TO session_store_app`);

    await q.query(`
      CREATE TABLE tenant_usage (
        tenant_id         uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
        shard             smallint NOT NULL,
        event_bytes       bigint NOT NULL DEFAULT 0,
        tool_output_bytes bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, shard)
      )`);
    await q.query(`ALTER TABLE tenant_usage ENABLE ROW LEVEL SECURITY`);
    await q.query(`ALTER TABLE tenant_usage FORCE ROW LEVEL SECURITY`);
    await q.query(`CREATE POLICY tenant_isolation ON tenant_usage FOR SELECT TO session_store_app USING (tenant_id = current_tenant())`);
    await q.query(`GRANT SELECT ON tenant_usage TO session_store_app`);
    await q.query(`DO $$ BEGIN EXECUTE format('CREATE POLICY usage_counters ON tenant_usage TO %I USING (true) WITH CHECK (true)', current_user); END $$`);
    for (const table of ['tenants', 'tenant_usage']) {
      await q.query(`CREATE POLICY admin_listing ON ${table} FOR SELECT TO session_store_app USING (current_setting('app.admin', true) = 'on')`);
    }

    await q.query(`
      INSERT INTO tenant_usage (tenant_id, shard, event_bytes)
      SELECT tenant_id, hashtext(session_id) & 63, sum(octet_length(data::text)) FROM session_events GROUP BY 1, 2`);
    await q.query(`
      INSERT INTO tenant_usage AS u (tenant_id, shard, tool_output_bytes)
      SELECT tenant_id, content_id & 63, sum(byte_size) FROM tool_output_contents GROUP BY 1, 2
      ON CONFLICT (tenant_id, shard) DO UPDATE SET tool_output_bytes = excluded.tool_output_bytes`);

    // A decrement is an UPDATE, never an upsert: when the tenant itself is being deleted, its counter rows may be gone already.
    await q.query(`
      CREATE FUNCTION count_event_bytes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO tenant_usage AS u (tenant_id, shard, event_bytes)
          SELECT tenant_id, hashtext(session_id) & 63, sum(octet_length(data::text)) FROM new_rows GROUP BY 1, 2
          ON CONFLICT (tenant_id, shard) DO UPDATE SET event_bytes = u.event_bytes + excluded.event_bytes;
        ELSE
          UPDATE tenant_usage u SET event_bytes = u.event_bytes - d.bytes
            FROM (SELECT tenant_id, hashtext(session_id) & 63 AS shard, sum(octet_length(data::text)) AS bytes FROM old_rows GROUP BY 1, 2) d
           WHERE u.tenant_id = d.tenant_id AND u.shard = d.shard;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER count_event_bytes_inserted AFTER INSERT ON session_events
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_event_bytes()`);
    await q.query(`
      CREATE TRIGGER count_event_bytes_deleted AFTER DELETE ON session_events
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_event_bytes()`);

    // Contents change size once (an upload's staging row gets its byte_size when it completes); most updates only touch last_used_at.
    await q.query(`
      CREATE FUNCTION count_tool_output_bytes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO tenant_usage AS u (tenant_id, shard, tool_output_bytes)
          SELECT tenant_id, content_id & 63, sum(byte_size) FROM new_rows GROUP BY 1, 2 HAVING sum(byte_size) <> 0
          ON CONFLICT (tenant_id, shard) DO UPDATE SET tool_output_bytes = u.tool_output_bytes + excluded.tool_output_bytes;
        ELSIF TG_OP = 'UPDATE' THEN
          INSERT INTO tenant_usage AS u (tenant_id, shard, tool_output_bytes)
          SELECT tenant_id, content_id & 63, sum(n.byte_size - o.byte_size) FROM new_rows n JOIN old_rows o USING (tenant_id, content_id)
           GROUP BY 1, 2 HAVING sum(n.byte_size - o.byte_size) <> 0
          ON CONFLICT (tenant_id, shard) DO UPDATE SET tool_output_bytes = u.tool_output_bytes + excluded.tool_output_bytes;
        ELSE
          UPDATE tenant_usage u SET tool_output_bytes = u.tool_output_bytes - d.bytes
            FROM (SELECT tenant_id, content_id & 63 AS shard, sum(byte_size) AS bytes FROM old_rows GROUP BY 1, 2) d
           WHERE u.tenant_id = d.tenant_id AND u.shard = d.shard;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER count_tool_output_bytes_inserted AFTER INSERT ON tool_output_contents
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_tool_output_bytes()`);
    await q.query(`
      CREATE TRIGGER count_tool_output_bytes_updated AFTER UPDATE ON tool_output_contents
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_tool_output_bytes()`);
    await q.query(`
      CREATE TRIGGER count_tool_output_bytes_deleted AFTER DELETE ON tool_output_contents
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_tool_output_bytes()`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const trigger of ['count_tool_output_bytes_inserted', 'count_tool_output_bytes_updated', 'count_tool_output_bytes_deleted']) {
      await q.query(`DROP TRIGGER ${trigger} ON tool_output_contents`);
    }
    await q.query(`DROP TRIGGER count_event_bytes_inserted ON session_events`);
    await q.query(`DROP TRIGGER count_event_bytes_deleted ON session_events`);
    await q.query(`DROP FUNCTION count_tool_output_bytes()`);
    await q.query(`DROP FUNCTION count_event_bytes()`);
    await q.query(`DROP POLICY admin_listing ON tenants`);
    await q.query(`DROP TABLE tenant_usage`);
    await q.query(`REVOKE UPDATE (limits, quotas) ON tenants FROM session_store_app`);
    await q.query(`ALTER TABLE tenants DROP COLUMN limits, DROP COLUMN quotas`);
  }
}
