import { MigrationInterface, QueryRunner } from 'typeorm';
import { LOG_PARTITIONS } from './1765200000000-partitioned-log';

/**
 * Full-text search over the log (docs/lifecycle.md#search).
 *
 * - `search_documents`: one row per part of an event that carries text,
 *   its terms as a tsvector the application builds (language-neutral words,
 *   bigrams of unspaced scripts: libs/domain/src/search), and the indexed
 *   text for snippets. Hash-partitioned by tenant like the log; a session's
 *   rows go with it (ON DELETE CASCADE), so session deletion, retention and
 *   tenant deletion remove its text. The runtime role may only insert and
 *   read them.
 * - GIN on (tenant_id, session_id, terms) through btree_gin: a search reads
 *   its tenant's (or its session's) entries only. Under row-level security
 *   an index serves only leakproof operators: tsvector @@ tsquery
 *   (ts_match_vq) cannot fail or leak on valid values and is marked so, as
 *   jsonb_contains was (SessionSearch1764800000000); migrated by another
 *   role, search still answers, without the index (a warning says so).
 * - `search_progress`: per session, the seq through which its log is
 *   indexed; a table of its own, so that indexing never writes the sessions
 *   row every append updates.
 */
export class LogSearch1765700000000 implements MigrationInterface {
  name = 'LogSearch1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE search_documents (
        tenant_id  uuid NOT NULL,
        session_id text NOT NULL,
        seq        bigint NOT NULL,
        part       integer NOT NULL,
        role       text,
        event_type text NOT NULL,
        part_type  text NOT NULL,
        tool_name  text,
        created_at timestamptz NOT NULL,
        body       text NOT NULL,
        terms      tsvector NOT NULL,
        PRIMARY KEY (tenant_id, session_id, seq, part),
        FOREIGN KEY (tenant_id, session_id) REFERENCES sessions ON DELETE CASCADE
      ) PARTITION BY HASH (tenant_id)`);
    for (let i = 0; i < LOG_PARTITIONS; i++) {
      await q.query(`CREATE TABLE search_documents_p${i} PARTITION OF search_documents FOR VALUES WITH (MODULUS ${LOG_PARTITIONS}, REMAINDER ${i})`);
      // Reached only through the parent; a direct query by the runtime roles finds no grant and no policy.
      await q.query(`ALTER TABLE search_documents_p${i} ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY`);
    }
    await q.query(`CREATE INDEX search_documents_terms ON search_documents USING gin (tenant_id, session_id, terms)`);
    await q.query(`
      CREATE TABLE search_progress (
        tenant_id   uuid NOT NULL,
        session_id  text NOT NULL,
        indexed_seq bigint NOT NULL,
        indexed_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, session_id),
        FOREIGN KEY (tenant_id, session_id) REFERENCES sessions ON DELETE CASCADE
      )`);
    for (const table of ['search_documents', 'search_progress']) {
      await q.query(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY`);
      await q.query(`
        CREATE POLICY tenant_isolation ON ${table} TO session_store_app
        USING (tenant_id = current_tenant()) WITH CHECK (tenant_id = current_tenant())`);
    }
    // The worker's sweep finds sessions whose log is ahead of their index, across tenants (as the admin listing does).
    await q.query(`CREATE POLICY admin_listing ON search_progress FOR SELECT TO session_store_app USING (current_setting('app.admin', true) = 'on')`);
    await q.query(`GRANT SELECT, INSERT ON search_documents TO session_store_app`);
    await q.query(`GRANT SELECT, INSERT, UPDATE ON search_progress TO session_store_app`);
    await q.query(`
      DO $$ BEGIN
        IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
          ALTER FUNCTION ts_match_vq(tsvector, tsquery) LEAKPROOF;
        ELSE
          RAISE WARNING 'not a superuser: ts_match_vq stays non-leakproof, so log search cannot use search_documents_terms under RLS';
        END IF;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DO $$ BEGIN IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN ALTER FUNCTION ts_match_vq(tsvector, tsquery) NOT LEAKPROOF; END IF; END $$`);
    await q.query(`DROP TABLE search_progress`);
    await q.query(`DROP TABLE search_documents`);
  }
}
