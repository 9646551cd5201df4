import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The tool-output cache.
 *
 * - `tool_output_contents`: one row per distinct output per tenant (unique
 *   sha256), with its size and line count. An upload streams into a row whose
 *   sha256 is still NULL and sets it at the end (or drops the row for an
 *   existing one), inside the upload's transaction.
 * - `tool_output_chunks`: the bytes, in chunks of at most 64 KiB ending on a
 *   line boundary where possible, keyed by byte offset, with the line their
 *   first byte belongs to; the first_line index makes a line-range read fetch
 *   only the chunks covering it. `bytea` is TOASTed, lz4 where the server has it.
 * - `tool_output_refs`: the ids a session hands out (`out_…`), pointing at a
 *   content; `attached_seq` is the first event that used the ref (NULL: an
 *   upload not yet referenced). Deleting the session deletes its refs
 *   (cascade); contents no longer referenced are deleted by the same
 *   transaction, and the garbage collector catches the rest.
 *
 * The runtime role sees its tenant's rows only (RLS forced). The garbage
 * collector's role `session_store_gc` works across tenants on these three
 * tables and nothing else.
 */
export class ToolOutputs1763900000000 implements MigrationInterface {
  name = 'ToolOutputs1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'session_store_gc') THEN
          CREATE ROLE session_store_gc LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
        END IF;
      END $$`);
    await q.query(`GRANT USAGE ON SCHEMA public TO session_store_gc`);
    await q.query(`
      CREATE TABLE tool_output_contents (
        tenant_id    uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
        content_id   bigint GENERATED ALWAYS AS IDENTITY,
        sha256       bytea CHECK (octet_length(sha256) = 32),
        byte_size    bigint NOT NULL DEFAULT 0,
        line_count   bigint NOT NULL DEFAULT 0,
        chunk_count  integer NOT NULL DEFAULT 0,
        created_at   timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, content_id),
        UNIQUE (tenant_id, sha256)
      )`);
    await q.query(`CREATE INDEX tool_output_contents_by_use ON tool_output_contents (last_used_at)`);
    await q.query(`
      CREATE TABLE tool_output_chunks (
        tenant_id   uuid NOT NULL,
        content_id  bigint NOT NULL,
        byte_offset bigint NOT NULL,
        byte_length integer NOT NULL,
        first_line  bigint NOT NULL,
        line_count  integer NOT NULL,
        data        bytea NOT NULL,
        PRIMARY KEY (tenant_id, content_id, byte_offset),
        FOREIGN KEY (tenant_id, content_id) REFERENCES tool_output_contents ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX tool_output_chunks_by_line ON tool_output_chunks (tenant_id, content_id, first_line)`);
    // lz4 compresses several times faster than the default pglz; servers built without it keep pglz.
    await q.query(`
      DO $$ BEGIN
        ALTER TABLE tool_output_chunks ALTER COLUMN data SET COMPRESSION lz4;
      EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN NULL;
      END $$`);
    await q.query(`
      CREATE TABLE tool_output_refs (
        tenant_id    uuid NOT NULL,
        ref_id       text NOT NULL,
        session_id   text NOT NULL,
        content_id   bigint NOT NULL,
        attached_seq bigint,
        created_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, ref_id),
        FOREIGN KEY (tenant_id, session_id) REFERENCES sessions ON DELETE CASCADE,
        FOREIGN KEY (tenant_id, content_id) REFERENCES tool_output_contents
      )`);
    await q.query(`CREATE INDEX tool_output_refs_by_session ON tool_output_refs (tenant_id, session_id)`);
    await q.query(`CREATE INDEX tool_output_refs_by_content ON tool_output_refs (tenant_id, content_id)`);
    await q.query(`CREATE INDEX tool_output_refs_unattached ON tool_output_refs (created_at) WHERE attached_seq IS NULL`);

    for (const table of ['tool_output_contents', 'tool_output_chunks', 'tool_output_refs']) {
      await q.query(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
      await q.query(`ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`);
      await q.query(`
        CREATE POLICY tenant_isolation ON ${table} TO session_store_app
        USING (tenant_id = current_tenant()) WITH CHECK (tenant_id = current_tenant())`);
      await q.query(`CREATE POLICY garbage_collection ON ${table} TO session_store_gc USING (true)`);
    }
    await q.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON tool_output_contents TO session_store_app`);
    await q.query(`GRANT SELECT, INSERT ON tool_output_chunks TO session_store_app`);
    await q.query(`GRANT SELECT, INSERT, UPDATE (attached_seq), DELETE ON tool_output_refs TO session_store_app`);
    await q.query(`GRANT SELECT, DELETE ON tool_output_contents, tool_output_refs TO session_store_gc`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE tool_output_refs`);
    await q.query(`DROP TABLE tool_output_chunks`);
    await q.query(`DROP TABLE tool_output_contents`);
  }
}
