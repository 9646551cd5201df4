import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The reconciler (worker) settles every compaction trigger: a `compact`
 * outbox row stays unsettled until its marker is closed in the log, and is
 * re-enqueued meanwhile whenever BullMQ holds no live job for it (a job
 * failed after stalling, Redis data lost). The sweeper role runs it: it may
 * read compaction events of every tenant (ids and types only, no content).
 */
export class JobReconciler1764300000000 implements MigrationInterface {
  name = 'JobReconciler1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE outbox
        ADD COLUMN settled_at timestamptz,
        ADD COLUMN reconcile_attempts integer NOT NULL DEFAULT 0,
        ADD COLUMN reconciled_at timestamptz`);
    // Triggers older than this migration were handled by the old path; only new ones are tracked.
    await q.query(`UPDATE outbox SET settled_at = now() WHERE job_name = 'compact'`);
    await q.query(`CREATE INDEX outbox_unsettled_compactions ON outbox (created_at) WHERE job_name = 'compact' AND settled_at IS NULL`);
    await q.query(`GRANT UPDATE (settled_at, reconcile_attempts, reconciled_at) ON outbox TO session_store_sweeper`);
    await q.query(`GRANT SELECT (tenant_id, session_id, seq, event_id, type) ON session_events TO session_store_sweeper`);
    await q.query(`
      CREATE POLICY sweeper_reconcile ON session_events FOR SELECT TO session_store_sweeper
      USING (type IN ('compaction.requested', 'compaction.completed', 'compaction.failed'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP POLICY sweeper_reconcile ON session_events`);
    await q.query(`REVOKE SELECT (tenant_id, session_id, seq, event_id, type) ON session_events FROM session_store_sweeper`);
    await q.query(`DROP INDEX outbox_unsettled_compactions`);
    await q.query(`ALTER TABLE outbox DROP COLUMN settled_at, DROP COLUMN reconcile_attempts, DROP COLUMN reconciled_at`);
  }
}
