import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Uploads that hold nothing while they wait on the network.
 *
 * An upload no longer streams inside one transaction: its staging content
 * (a `tool_output_contents` row whose sha256 is still NULL) is committed
 * first, its chunks follow in short transactions of their own, and a last
 * transaction sets the sha256 and inserts the ref. While it runs, the request
 * touches `last_used_at`; the garbage collector deletes staging rows left
 * untouched longer than UPLOAD_STAGING_TTL_S (client gone, process killed),
 * their chunks with them (cascade). This index keeps that look-up off the
 * finished contents.
 *
 * No grant or policy changes: the runtime role already inserts, updates and
 * deletes its tenant's contents (RLS), and `session_store_gc` already deletes
 * contents of every tenant. Readers reach contents through refs only, and no
 * ref points at a staging row, so an incomplete output is never visible.
 */
export class UploadStaging1764400000000 implements MigrationInterface {
  name = 'UploadStaging1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX tool_output_contents_staging ON tool_output_contents (last_used_at) WHERE sha256 IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX tool_output_contents_staging`);
  }
}
