import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Jobs that always finish, for prune/archive too: prune triggers
 * become outbox rows the reconciler settles like compaction triggers, and
 * every row carries its BullMQ deduplication key (a scheduled prune folds
 * into the session's waiting one; a manual one does not), so a re-enqueue
 * can tell the job it was folded into. Fair shares between tenants need no
 * schema: they are kept in Redis beside the jobs (libs/queue tenant-backlog).
 */
export class JobFairness1764600000000 implements MigrationInterface {
  name = 'JobFairness1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ADD COLUMN deduplication_id text`);
    // Open compaction triggers keep the key the dispatcher derived for them until now (libs/queue sessionJobId).
    await q.query(`
      UPDATE outbox SET deduplication_id =
        'compact-' || left(encode(sha256(convert_to(tenant_id::text || '/' || (payload->>'sessionId'), 'UTF8')), 'hex'), 32) || '-session'
       WHERE job_name = 'compact' AND settled_at IS NULL`);
    await q.query(`DROP INDEX outbox_unsettled_compactions`);
    await q.query(`CREATE INDEX outbox_unsettled ON outbox (created_at) WHERE settled_at IS NULL AND job_name IN ('compact', 'prune')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX outbox_unsettled`);
    await q.query(`CREATE INDEX outbox_unsettled_compactions ON outbox (created_at) WHERE job_name = 'compact' AND settled_at IS NULL`);
    await q.query(`ALTER TABLE outbox DROP COLUMN deduplication_id`);
  }
}
