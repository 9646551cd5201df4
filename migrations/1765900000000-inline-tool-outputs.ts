import { MigrationInterface, QueryRunner } from 'typeorm';
import { setCompression as setEventDataCompression } from './1765500000000-event-data-lz4';

/**
 * Small outputs inline (docs/decisions.md, "Small outputs inline"): an
 * output shown whole in its event's view is kept in the event only, and its
 * ref is a `tool_output_refs` row without a content, naming the event by
 * (session_id, attached_seq). Such a row lives and moves as every attached
 * ref does (session delete, hand-over to forks, import renames); the
 * collector only ever expires unattached refs, so it never takes one.
 *
 * - `content_id` may be NULL, and then `attached_seq` may not (a CHECK): an
 *   inline ref always names its event.
 * - `tool_output_refs_by_content` only indexes refs with a content (what the
 *   collector and session deletes look up), so an inline ref costs no entry
 *   there.
 * - Event data is compressed with pglz again (1765500000000 chose lz4): the
 *   events now hold the small outputs the chunks held, and on them pglz, as
 *   for chunks, is the smaller: an event with a 4 KB log output compresses
 *   under the 2 KB TOAST threshold and stays in its row (2.07 KB per event
 *   against 2.43 KB with lz4, which moves it out to TOAST), for the CPU the
 *   same outputs' chunks cost in pglz before. Only new values are affected.
 */
export class InlineToolOutputs1765900000000 implements MigrationInterface {
  name = 'InlineToolOutputs1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tool_output_refs ALTER COLUMN content_id DROP NOT NULL`);
    await q.query(`ALTER TABLE tool_output_refs ADD CONSTRAINT tool_output_refs_inline_attached CHECK (content_id IS NOT NULL OR attached_seq IS NOT NULL)`);
    await q.query(`DROP INDEX tool_output_refs_by_content`);
    await q.query(`CREATE INDEX tool_output_refs_by_content ON tool_output_refs (tenant_id, content_id) WHERE content_id IS NOT NULL`);
    await q.query(setEventDataCompression('pglz'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(setEventDataCompression('lz4'));
    await q.query(`DROP INDEX tool_output_refs_by_content`);
    await q.query(`CREATE INDEX tool_output_refs_by_content ON tool_output_refs (tenant_id, content_id)`);
    // Inline refs have no content to point at: their outputs stay in their events, which name them.
    await q.query(`DELETE FROM tool_output_refs WHERE content_id IS NULL`);
    await q.query(`ALTER TABLE tool_output_refs DROP CONSTRAINT tool_output_refs_inline_attached`);
    await q.query(`ALTER TABLE tool_output_refs ALTER COLUMN content_id SET NOT NULL`);
  }
}
