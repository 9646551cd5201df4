import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The reconciler tells a compaction trigger whose session is gone by the
 * session row, no longer by the marker event: a fork's marker may be an
 * event it inherited, stored under its source's id. The sweeper
 * role reads the keys of sessions, nothing else of them.
 */
export class ReconcilerForks1765300000000 implements MigrationInterface {
  name = 'ReconcilerForks1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`GRANT SELECT (tenant_id, session_id) ON sessions TO session_store_sweeper`);
    await q.query(`CREATE POLICY sweeper_reconcile ON sessions FOR SELECT TO session_store_sweeper USING (true)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP POLICY sweeper_reconcile ON sessions`);
    await q.query(`REVOKE SELECT (tenant_id, session_id) ON sessions FROM session_store_sweeper`);
  }
}
