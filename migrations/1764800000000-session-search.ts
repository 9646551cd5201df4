import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Session search and tenant lifecycle.
 *
 * - `sessions_by_metadata`: GIN on (tenant_id, metadata jsonb_path_ops) for
 *   `metadata @> $filter`; btree_gin lets the tenant key lead, so a search
 *   reads only its tenant's entries. Under row-level security PostgreSQL
 *   uses an index only for leakproof operators, and jsonb's @> (the function
 *   jsonb_contains) is not marked so, though it cannot fail or leak on valid
 *   jsonb: it is marked LEAKPROOF here, which takes a superuser. Migrated by
 *   another role, the search still works, reading every session of the
 *   tenant; a warning says so (docs/decisions.md).
 *   Last activity is the existing
 *   `updated_at`, which every append already sets; it is deliberately not
 *   indexed (see docs/decisions.md): an indexed column would make each
 *   append's UPDATE of the session non-HOT, rewriting every index of the row,
 *   this GIN included.
 * - `tenants.suspended_at`: a suspended tenant's keys are refused (403).
 * - The runtime role may delete its own tenant row (RLS: tenant_isolation);
 *   every tenant table goes with it through ON DELETE CASCADE.
 * - `admin_listing` on sessions: the admin tenant list counts sessions.
 */
export class SessionSearch1764800000000 implements MigrationInterface {
  name = 'SessionSearch1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS btree_gin`);
    await q.query(`CREATE INDEX sessions_by_metadata ON sessions USING gin (tenant_id, metadata jsonb_path_ops)`);
    await q.query(`
      DO $$ BEGIN
        IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
          ALTER FUNCTION jsonb_contains(jsonb, jsonb) LEAKPROOF;
        ELSE
          RAISE WARNING 'not a superuser: jsonb_contains stays non-leakproof, so metadata search cannot use sessions_by_metadata under RLS';
        END IF;
      END $$`);
    await q.query(`ALTER TABLE tenants ADD COLUMN suspended_at timestamptz`);
    await q.query(`GRANT UPDATE (suspended_at) ON tenants TO session_store_app`);
    await q.query(`GRANT DELETE ON tenants TO session_store_app`);
    await q.query(`CREATE POLICY admin_listing ON sessions FOR SELECT TO session_store_app USING (current_setting('app.admin', true) = 'on')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP POLICY admin_listing ON sessions`);
    await q.query(`REVOKE DELETE ON tenants FROM session_store_app`);
    await q.query(`REVOKE UPDATE (suspended_at) ON tenants FROM session_store_app`);
    await q.query(`ALTER TABLE tenants DROP COLUMN suspended_at`);
    await q.query(`DO $$ BEGIN IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN ALTER FUNCTION jsonb_contains(jsonb, jsonb) NOT LEAKPROOF; END IF; END $$`);
    await q.query(`DROP INDEX sessions_by_metadata`);
  }
}
