import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Session forks: copy-on-write, the fork's row holds its lineage.
 *
 * - `sessions.lineage`: NULL for a session that is no fork; for a fork, the
 *   flattened segments of the log it inherits, oldest first, as
 *   `[{source, origin, afterSeq, throughSeq}]`: seqs afterSeq+1..throughSeq
 *   are read from the rows of `source` and were first appended to `origin`
 *   (they differ once a deleted source's rows were copied to the fork).
 *   The fork's own rows follow the last segment.
 * - `forked_from`, `forked_at_seq`: what the fork was taken from, kept after
 *   that session is deleted (no foreign key).
 * - `sessions_by_lineage`: GIN on (tenant_id, lineage) for forks only, so a
 *   delete finds the sessions reading its rows, and a session that is no
 *   fork pays no index entry.
 * - `session_segments(lineage, session_id)`: the segments plus the session's
 *   own (unbounded) one; an inlinable SQL function, so a session with no
 *   lineage reads through one segment, its own.
 * - The runtime role may move a ref to another session (a deleted source's
 *   outputs that a fork still shows).
 */
export class SessionForks1764900000000 implements MigrationInterface {
  name = 'SessionForks1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN lineage jsonb, ADD COLUMN forked_from text, ADD COLUMN forked_at_seq bigint`);
    await q.query(`CREATE INDEX sessions_by_lineage ON sessions USING gin (tenant_id, lineage jsonb_path_ops) WHERE lineage IS NOT NULL`);
    await q.query(`
      CREATE FUNCTION session_segments(lineage jsonb, own text)
        RETURNS TABLE (source text, origin text, after_seq bigint, through_seq bigint)
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT g.source, g.origin, g."afterSeq", g."throughSeq"
            FROM jsonb_to_recordset(coalesce(lineage, '[]')) AS g(source text, origin text, "afterSeq" bigint, "throughSeq" bigint)
          UNION ALL
          SELECT own, own, coalesce((lineage->-1->>'throughSeq')::bigint, 0), 9223372036854775807
        $$`);
    await q.query(`GRANT EXECUTE ON FUNCTION session_segments(jsonb, text) TO session_store_app`);
    await q.query(`GRANT UPDATE (session_id) ON tool_output_refs TO session_store_app`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`REVOKE UPDATE (session_id) ON tool_output_refs FROM session_store_app`);
    await q.query(`DROP FUNCTION session_segments(jsonb, text)`);
    await q.query(`DROP INDEX sessions_by_lineage`);
    await q.query(`ALTER TABLE sessions DROP COLUMN lineage, DROP COLUMN forked_from, DROP COLUMN forked_at_seq`);
  }
}
