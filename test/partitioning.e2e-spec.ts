import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { runMigrations } from '../libs/database/src/migrate';
import { MIGRATIONS } from '../migrations';
import { LOG_PARTITIONS, PartitionedLog1765200000000 } from '../migrations/1765200000000-partitioned-log';
import { Client, userMessage } from './support/client';
import { connectAs } from './support/database';
import { ADMIN_DATABASE_URL, ADMIN_TOKEN, databaseUrl } from './support/env';
import { startService, TestService } from './support/service';

const PARTITIONED = ['session_events', 'tool_output_contents', 'tool_output_chunks', 'tool_output_refs'];

/**
 * Every row of a table (its `columns`: those it had before the migration), as
 * text, in key order: equal before and after means nothing was lost, added or changed.
 */
async function tableDigest(db: PgClient, table: string, key: string, columns: string[]): Promise<{ rows: number; md5: string }> {
  const { rows } = await db.query(
    `SELECT count(*)::int AS rows, md5(coalesce(string_agg(ROW(${columns.join(', ')})::text, '|' ORDER BY ${key}), '')) AS md5 FROM ${table} t`,
  );
  return rows[0];
}

async function columnsOf(db: PgClient, table: string): Promise<string[]> {
  const { rows } = await db.query(`SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`, [table]);
  return rows.map((r) => r.column_name);
}

/** The names a query by the application might rely on: indexes and constraints of the parent, policies, triggers, grants. */
async function catalogNames(db: PgClient, table: string, columns: string[]): Promise<Record<string, string[]>> {
  const q = async (sql: string) => (await db.query(sql, sql.includes('$2') ? [table, columns] : [table])).rows.map((r) => r.n).sort();
  return {
    indexes: await q(`SELECT indexrelid::regclass::text AS n FROM pg_index WHERE indrelid = $1::regclass`),
    constraints: await q(`SELECT conname || ' ' || pg_get_constraintdef(oid) AS n FROM pg_constraint WHERE conrelid = $1::regclass AND conparentid = 0`),
    referencedBy: await q(`SELECT conname AS n FROM pg_constraint WHERE confrelid = $1::regclass AND conparentid = 0`),
    policies: await q(`SELECT policyname || ' ' || cmd || ' ' || roles::text || ' ' || coalesce(qual, '') AS n FROM pg_policies WHERE tablename = $1`),
    triggers: await q(`SELECT tgname AS n FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal`),
    grants: await q(
      `SELECT grantee || ' ' || privilege_type || ' ' || coalesce(column_name, '*') AS n
         FROM (SELECT grantee, privilege_type, NULL AS column_name FROM information_schema.role_table_grants WHERE table_name = $1
               UNION SELECT grantee, privilege_type, column_name FROM information_schema.column_privileges WHERE table_name = $1) g
        WHERE grantee LIKE 'session_store_%' AND (column_name IS NULL OR column_name = ANY($2))`,
    ),
  };
}

/**
 * Migration 1765200000000 on a database that already holds data:
 * the schema before it is populated, the service then starts and applies it,
 * and every row, name, policy and grant is as before, now in partitions.
 */
describe('partitioned log: the migration on a populated database', () => {
  const name = `sst_test_${Math.floor(Date.now() / 1000)}_${randomBytes(6).toString('hex')}`;
  const url = databaseUrl(name);
  let admin: PgClient;
  let owner: PgClient;
  let service: TestService;
  const tenants = [randomUUID(), randomUUID()];
  const before: Record<string, { rows: number; md5: string }> = {};
  const columns: Record<string, string[]> = {};
  const namesBefore: Record<string, Record<string, string[]>> = {};
  let usageBefore: unknown[];
  const keys = { session_events: 'tenant_id, session_id, seq', tool_output_contents: 'tenant_id, content_id', tool_output_chunks: 'tenant_id, content_id, byte_offset', tool_output_refs: 'tenant_id, ref_id' } as Record<string, string>;

  beforeAll(async () => {
    admin = new PgClient({ connectionString: ADMIN_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const upTo = MIGRATIONS.indexOf(PartitionedLog1765200000000);
    expect(upTo).toBeGreaterThan(0);
    await runMigrations(url, { migrations: MIGRATIONS.slice(0, upTo) });
    owner = await connectAs(url);

    // Two tenants, three sessions each, 200 events per session, and tool outputs with chunks and refs.
    for (const tenant of tenants) {
      await owner.query(`INSERT INTO tenants (tenant_id, name) VALUES ($1, 'populated')`, [tenant]);
      for (let s = 0; s < 3; s++) {
        const sessionId = `s${s}`;
        await owner.query(`INSERT INTO sessions (tenant_id, session_id, model, head_seq) VALUES ($1, $2, 'gpt-4o', 200)`, [tenant, sessionId]);
        const data = Array.from({ length: 200 }, (_, i) =>
          i === 0
            ? { model: 'gpt-4o', config: {}, metadata: {} }
            : { message: { id: `e${i + 1}`, role: i % 2 ? 'user' : 'assistant', parts: [{ type: 'text', text: `${tenant} ${sessionId} turn ${i} ${'x'.repeat(i * 7)}` }] } },
        );
        await owner.query(
          `INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash)
           SELECT $1, $2, ord, 'e' || ord, CASE WHEN ord = 1 THEN 'session.created' ELSE 'message.added' END, d, 10, '\\x00'
             FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS t(d, ord)`,
          [tenant, sessionId, JSON.stringify(data)],
        );
        const bytes = Buffer.from(`output of ${tenant} ${sessionId}\n`.repeat(50));
        const [{ content_id }] = (
          await owner.query(
            `INSERT INTO tool_output_contents (tenant_id, sha256, byte_size, line_count, chunk_count) VALUES ($1, $2, $3, 50, 1) RETURNING content_id`,
            [tenant, createHash('sha256').update(bytes).digest(), bytes.length],
          )
        ).rows;
        await owner.query(
          `INSERT INTO tool_output_chunks (tenant_id, content_id, byte_offset, byte_length, first_line, line_count, data) VALUES ($1, $2, 0, $3, 1, 50, $4)`,
          [tenant, content_id, bytes.length, bytes],
        );
        await owner.query(`INSERT INTO tool_output_refs (tenant_id, ref_id, session_id, content_id, attached_seq) VALUES ($1, $2, $3, $4, 5)`, [
          tenant,
          `ref-${sessionId}`,
          sessionId,
          content_id,
        ]);
      }
    }
    for (const table of PARTITIONED) {
      columns[table] = await columnsOf(owner, table);
      before[table] = await tableDigest(owner, table, keys[table], columns[table]);
      namesBefore[table] = await catalogNames(owner, table, columns[table]);
    }
    usageBefore = (await owner.query(`SELECT tenant_id, sum(event_bytes)::text AS e, sum(tool_output_bytes)::text AS t FROM tenant_usage GROUP BY 1 ORDER BY 1`)).rows;
    expect(before.session_events.rows).toBe(2 * 3 * 200);

    // The service migrates at start: this applies the partitioning to the populated database.
    service = await startService({ worker: false, database: { url, drop: async () => undefined } });
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await owner?.end();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  it('turns each table into hash partitions by tenant, with the same rows', async () => {
    for (const table of PARTITIONED) {
      const { rows } = await owner.query(
        `SELECT c.relkind, pg_get_partkeydef(c.oid) AS key, (SELECT count(*)::int FROM pg_inherits WHERE inhparent = c.oid) AS partitions
           FROM pg_class c WHERE c.oid = $1::regclass`,
        [table],
      );
      expect({ table, ...rows[0] }).toEqual({ table, relkind: 'p', key: 'HASH (tenant_id)', partitions: LOG_PARTITIONS });
      expect({ table, ...(await tableDigest(owner, table, keys[table], columns[table])) }).toEqual({ table, ...before[table] });
    }
  });

  it('keeps every index, constraint, foreign key, policy, trigger and grant under its name', async () => {
    // The service applies the later migrations too; these indexes they drop on purpose, these constraints they add.
    const droppedLater = new Set(['tool_output_contents_by_use']);
    const addedLater: Record<string, string[]> = {
      tool_output_refs: ['tool_output_refs_inline_attached CHECK (((content_id IS NOT NULL) OR (attached_seq IS NOT NULL)))'],
    };
    for (const table of PARTITIONED) {
      const expected = {
        ...namesBefore[table],
        indexes: namesBefore[table].indexes.filter((name) => !droppedLater.has(name)),
        constraints: [...namesBefore[table].constraints, ...(addedLater[table] ?? [])].sort(),
      };
      expect({ table, ...(await catalogNames(owner, table, columns[table])) }).toEqual({ table, ...expected });
    }
  });

  it('keeps the usage counters, and the triggers keep counting', async () => {
    const usage = async () => (await owner.query(`SELECT tenant_id, sum(event_bytes)::text AS e, sum(tool_output_bytes)::text AS t FROM tenant_usage GROUP BY 1 ORDER BY 1`)).rows;
    expect(await usage()).toEqual(usageBefore);
  });

  it('continues the identity of tool-output contents after the copied rows', async () => {
    const { rows } = await owner.query(`SELECT max(content_id)::int AS max FROM tool_output_contents`);
    const [{ content_id }] = (await owner.query(`INSERT INTO tool_output_contents (tenant_id) VALUES ($1) RETURNING content_id`, [tenants[0]])).rows;
    expect(Number(content_id)).toBeGreaterThan(rows[0].max);
    await owner.query(`DELETE FROM tool_output_contents WHERE content_id = $1`, [content_id]);
  });

  it('row-level security is unchanged: the runtime role sees its tenant only, and nothing with no tenant set', async () => {
    const app = await connectAs(url, 'session_store_app');
    try {
      for (const table of PARTITIONED) {
        expect({ table, n: (await app.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n }).toEqual({ table, n: 0 });
        await app.query('BEGIN');
        await app.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenants[0]]);
        const { rows } = await app.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE tenant_id <> $1)::int AS other FROM ${table}`, [tenants[0]]);
        await app.query('COMMIT');
        expect({ table, ...rows[0] }).toEqual({ table, n: before[table].rows / 2, other: 0 });
      }
      await expect(app.query(`DELETE FROM session_events`)).rejects.toThrow(/permission denied/);
    } finally {
      await app.end();
    }
  });

  it('the service reads the migrated sessions and appends to them', async () => {
    const client = new Client(service.baseUrl);
    const issued = await client.request('POST', `/v1/admin/tenants/${tenants[0]}/api-keys`, { body: {}, key: ADMIN_TOKEN });
    expect(issued.status).toBe(201);
    const key = issued.body.key as string;
    expect((await client.allEvents(key, 's1')).map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const appended = await client.append(key, 's1', { events: [userMessage('after the migration')] });
    expect(appended.status).toBe(201);
    const context = await client.request('GET', '/v1/sessions/s1/context', { key });
    expect(context.status).toBe(200);
    expect(JSON.stringify(context.body.messages)).toContain('after the migration');
    expect(context.body.headSeq).toBe(201);
    // An event id the populated log holds, sent with another body, is found through the partition's unique index.
    const reused = await client.append(key, 's1', { events: [userMessage('another body', 'e7')] });
    expect({ status: reused.status, code: reused.body.code }).toEqual({ status: 422, code: 'event_id_reused' });
    const ref = await client.request('GET', '/v1/tool-outputs/ref-s1?offset=2&limit=1', { key });
    expect(ref.status).toBe(200);
    expect(ref.body.lines).toContain(`output of ${tenants[0]} s1`);
  });
});
