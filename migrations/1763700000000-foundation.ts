import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenants, API keys, sessions, the event log, the tool-call ledger,
 * idempotency keys and the outbox. Every key starts with tenant_id; every
 * tenant table has RLS enabled and forced, with policies that fail closed
 * when app.tenant_id is unset ('' after a transaction-local value ends).
 * The runtime role may only INSERT into session_events: the log is
 * append-only by grant; deleting a session cascades through foreign keys,
 * which run as the owner.
 */
export class Foundation1763700000000 implements MigrationInterface {
  name = 'Foundation1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'session_store_app') THEN
          CREATE ROLE session_store_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'session_store_sweeper') THEN
          CREATE ROLE session_store_sweeper LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
        END IF;
      END $$`);
    await q.query(`GRANT USAGE ON SCHEMA public TO session_store_app, session_store_sweeper`);
    await q.query(`
      CREATE FUNCTION current_tenant() RETURNS uuid LANGUAGE sql STABLE AS
      $$ SELECT NULLIF(current_setting('app.tenant_id', true), '')::uuid $$`);

    await q.query(`
      CREATE TABLE tenants (
        tenant_id  uuid PRIMARY KEY,
        name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        config     jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        tenant_id    uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
        key_id       uuid NOT NULL,
        prefix       text NOT NULL,
        key_hash     bytea NOT NULL,
        name         text,
        created_at   timestamptz NOT NULL DEFAULT now(),
        revoked_at   timestamptz,
        last_used_at timestamptz,
        PRIMARY KEY (tenant_id, key_id),
        UNIQUE (tenant_id, key_hash)
      )`);
    await q.query(`
      CREATE TABLE sessions (
        tenant_id           uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
        session_id          text NOT NULL,
        model               text NOT NULL,
        system              text,
        config              jsonb NOT NULL DEFAULT '{}',
        metadata            jsonb NOT NULL DEFAULT '{}',
        head_seq            bigint NOT NULL DEFAULT 0,
        created_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (tenant_id, session_id)
      )`);
    await q.query(`CREATE INDEX sessions_by_age ON sessions (tenant_id, created_at DESC, session_id DESC)`);
    await q.query(`
      CREATE TABLE session_events (
        tenant_id    uuid NOT NULL,
        session_id   text NOT NULL,
        seq          bigint NOT NULL CHECK (seq > 0),
        event_id     text NOT NULL,
        type         text NOT NULL,
        data         jsonb NOT NULL,
        tokens       integer NOT NULL DEFAULT 0,
        payload_hash bytea NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (tenant_id, session_id, seq),
        UNIQUE (tenant_id, session_id, event_id),
        FOREIGN KEY (tenant_id, session_id) REFERENCES sessions ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE TABLE session_tool_calls (
        tenant_id    uuid NOT NULL,
        session_id   text NOT NULL,
        call_id      text NOT NULL,
        name         text NOT NULL,
        issued_seq   bigint NOT NULL,
        answered_seq bigint,
        PRIMARY KEY (tenant_id, session_id, call_id),
        FOREIGN KEY (tenant_id, session_id) REFERENCES sessions ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE TABLE idempotency_keys (
        tenant_id       uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
        key             text NOT NULL,
        request_hash    bytea NOT NULL,
        response_status integer NOT NULL,
        response_body   json NOT NULL, -- not jsonb: a replay must be byte-identical, and jsonb reorders keys
        created_at      timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, key)
      )`);
    await q.query(`
      CREATE TABLE outbox (
        tenant_id     uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
        outbox_id     bigint GENERATED ALWAYS AS IDENTITY,
        job_name      text NOT NULL,
        job_id        text NOT NULL CHECK (position(':' in job_id) = 0),
        payload       jsonb NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        dispatched_at timestamptz,
        attempts      integer NOT NULL DEFAULT 0,
        last_error    text,
        PRIMARY KEY (tenant_id, outbox_id)
      )`);
    await q.query(`CREATE INDEX outbox_undispatched ON outbox (created_at) WHERE dispatched_at IS NULL`);

    const tenantTables = ['tenants', 'api_keys', 'sessions', 'session_events', 'session_tool_calls', 'idempotency_keys', 'outbox'];
    for (const table of tenantTables) {
      await q.query(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
      await q.query(`ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`);
      await q.query(`
        CREATE POLICY tenant_isolation ON ${table} TO session_store_app
        USING (tenant_id = current_tenant()) WITH CHECK (tenant_id = current_tenant())`);
    }
    // The sweeper relays undispatched rows of every tenant; it sees nothing else.
    await q.query(`CREATE POLICY sweeper_relay ON outbox TO session_store_sweeper USING (true) WITH CHECK (true)`);

    await q.query(`GRANT SELECT, INSERT ON tenants TO session_store_app`);
    await q.query(`GRANT SELECT, INSERT, UPDATE ON api_keys TO session_store_app`);
    await q.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON sessions TO session_store_app`);
    await q.query(`GRANT SELECT, INSERT ON session_events TO session_store_app`);
    await q.query(`GRANT SELECT, INSERT, UPDATE ON session_tool_calls TO session_store_app`);
    await q.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO session_store_app`);
    await q.query(`GRANT SELECT, INSERT, UPDATE ON outbox TO session_store_app`);
    await q.query(`GRANT SELECT, UPDATE (dispatched_at, attempts, last_error) ON outbox TO session_store_sweeper`);
    await q.query(`GRANT EXECUTE ON FUNCTION current_tenant() TO session_store_app, session_store_sweeper`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['outbox', 'idempotency_keys', 'session_tool_calls', 'session_events', 'sessions', 'api_keys', 'tenants']) {
      await q.query(`DROP TABLE ${table}`);
    }
    await q.query(`DROP FUNCTION current_tenant()`);
  }
}
