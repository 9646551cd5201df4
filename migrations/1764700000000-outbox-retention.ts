import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbox rows are only needed until their job is enqueued and, for compaction
 * and prune triggers, settled. The reconciler (sweeper role) deletes older
 * finished rows, so the table stays as large as its recent traffic.
 */
export class OutboxRetention1764700000000 implements MigrationInterface {
  name = 'OutboxRetention1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX outbox_created ON outbox (created_at)`);
    await q.query(`GRANT DELETE ON outbox TO session_store_sweeper`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`REVOKE DELETE ON outbox FROM session_store_sweeper`);
    await q.query(`DROP INDEX outbox_created`);
  }
}
