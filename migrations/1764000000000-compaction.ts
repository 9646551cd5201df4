import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Compaction bookkeeping. The session row says which marker a worker is
 * running and until when (a lease, so a crashed worker's claim lapses by
 * itself and the state falls back to `pending`); everything else about a
 * compaction is in the log. A partial index serves the compaction history
 * without scanning the session's other events. No new table: the existing
 * row-level security and grants on sessions and session_events apply.
 */
export class Compaction1764000000000 implements MigrationInterface {
  name = 'Compaction1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE sessions
        ADD COLUMN compaction_running_marker_seq bigint,
        ADD COLUMN compaction_running_until timestamptz`);
    await q.query(`
      CREATE INDEX session_events_compactions ON session_events (tenant_id, session_id, seq)
      WHERE type IN ('compaction.requested', 'compaction.completed', 'compaction.failed')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX session_events_compactions`);
    await q.query(`ALTER TABLE sessions DROP COLUMN compaction_running_marker_seq, DROP COLUMN compaction_running_until`);
  }
}
