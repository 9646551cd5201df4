import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Session retention.
 *
 * - `tenants.retention_idle_seconds` / `retention_action`: the admin API's
 *   per-tenant setting (both NULL: off, the default); the worker's retention
 *   job archives or deletes sessions idle longer than the age.
 * - `sessions.archived_at`: an archived session keeps its events and tool
 *   outputs, readable as before; client appends are refused (409
 *   session_archived) until it is unarchived. Not indexed, like updated_at:
 *   the retention job walks a tenant's sessions by primary key, and an index
 *   here would make every append's UPDATE of the row non-HOT.
 */
export class SessionRetention1765000000000 implements MigrationInterface {
  name = 'SessionRetention1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tenants
        ADD COLUMN retention_idle_seconds integer CHECK (retention_idle_seconds > 0),
        ADD COLUMN retention_action text CHECK (retention_action IN ('archive', 'delete')),
        ADD CONSTRAINT tenants_retention_whole CHECK ((retention_idle_seconds IS NULL) = (retention_action IS NULL))`);
    await q.query(`GRANT UPDATE (retention_idle_seconds, retention_action) ON tenants TO session_store_app`);
    await q.query(`ALTER TABLE sessions ADD COLUMN archived_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP COLUMN archived_at`);
    await q.query(`REVOKE UPDATE (retention_idle_seconds, retention_action) ON tenants FROM session_store_app`);
    await q.query(`ALTER TABLE tenants DROP CONSTRAINT tenants_retention_whole, DROP COLUMN retention_action, DROP COLUMN retention_idle_seconds`);
  }
}
