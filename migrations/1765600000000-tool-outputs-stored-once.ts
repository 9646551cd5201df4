import { MigrationInterface, QueryRunner } from 'typeorm';

/** Sets the compression of tool_output_chunks.data on the parent and on each partition (15 does not carry it to existing ones). */
const setChunkCompression = (method: 'lz4' | 'pglz') => `
  DO $$
  DECLARE part regclass;
  BEGIN
    ALTER TABLE tool_output_chunks ALTER COLUMN data SET COMPRESSION ${method};
    FOR part IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'tool_output_chunks'::regclass LOOP
      EXECUTE format('ALTER TABLE %s ALTER COLUMN data SET COMPRESSION ${method}', part);
    END LOOP;
  EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN NULL;
  END $$`;

/**
 * Storage of tool outputs: each output once.
 *
 * - No column changes for that: a tool result's event now keeps its view
 *   as `outputFrom` (the whole stored output, or its own text plus byte
 *   ranges of it) instead of a second copy of the text; readers restore it
 *   (libs/domain/src/tool-output/stored-output.ts). Rows written before
 *   keep their copy and read as before, so nothing is rewritten here.
 * - `tool_output_contents_by_use` goes: only the collector's scan for
 *   orphaned contents used it, and that scan reads every old content either
 *   way (almost all are still referenced), while every append paid an index
 *   entry per new content, and every reuse of one a non-HOT update (the
 *   reuse sets the indexed `last_used_at`). Abandoned uploads keep their
 *   partial index (`tool_output_contents_staging`).
 * - Chunks are compressed with pglz instead of lz4, measured on the
 *   agent workload's log outputs (docs/decisions.md, "Tool outputs stored once"): 0.334 of the bytes against
 *   0.377 (0.362 against 0.404 for 4 KB outputs), for about 8 µs more
 *   PostgreSQL CPU per KB written; reads decompress at nearly lz4's speed.
 *   Only new chunks are affected; stored ones keep lz4 until rewritten.
 *   (Event data keeps lz4: its rows no longer hold outputs, and are rarely
 *   large enough to be compressed at all.)
 */
export class ToolOutputsStoredOnce1765600000000 implements MigrationInterface {
  name = 'ToolOutputsStoredOnce1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX tool_output_contents_by_use`);
    await q.query(setChunkCompression('pglz'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(setChunkCompression('lz4'));
    await q.query(`CREATE INDEX tool_output_contents_by_use ON tool_output_contents (last_used_at)`);
  }
}
