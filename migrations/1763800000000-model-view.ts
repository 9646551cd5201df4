import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What lets a context read start at the pivot: the session row remembers the
 * latest compaction.completed (its seq and covered-through seq), so the read
 * is one primary-key range scan `seq > covered_through_seq`, and the system
 * prompt's token estimate computed once. A partial index finds the pivot in
 * force at any seq for `atSeq` reads.
 */
export class ModelView1763800000000 implements MigrationInterface {
  name = 'ModelView1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE sessions
        ADD COLUMN pivot_seq bigint NOT NULL DEFAULT 0,
        ADD COLUMN covered_through_seq bigint NOT NULL DEFAULT 0,
        ADD COLUMN system_tokens integer NOT NULL DEFAULT 0`);
    await q.query(`
      CREATE INDEX session_events_pivots ON session_events (tenant_id, session_id, seq)
      WHERE type = 'compaction.completed'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX session_events_pivots`);
    await q.query(`ALTER TABLE sessions DROP COLUMN pivot_seq, DROP COLUMN covered_through_seq, DROP COLUMN system_tokens`);
  }
}
