import { Client as PgClient } from 'pg';
import { Tx } from '@app/database';
import { findToolCalls, recordToolCalls } from '@app/event-store';
import { connectAs, createTestDatabase } from './support/database';

/**
 * The append path's statements against a long session, as the app role
 * (RLS on) in a tenant transaction, with the statistics the planner has
 * while a session grows: taken when the table was nearly empty. Each
 * statement must read the rows it names and no others, whatever the
 * session's length: EXPLAIN ANALYZE shows no scan of the table returning or
 * discarding more rows than the statement names. Another tenant's session
 * holds calls too, so a scan of the whole table would show as rows discarded
 * by its row-level security.
 */
describe('query plans of the append path on a long session', () => {
  const TENANT = '00000000-0000-4000-8000-00000000a11c';
  const OTHER_TENANT = '00000000-0000-4000-8000-00000000b22d';
  const SESSION = 'long';
  const CALLS = 3_000;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let owner: PgClient;
  let app: PgClient;

  beforeAll(async () => {
    db = await createTestDatabase();
    owner = await connectAs(db.url);
    // No autoanalyze during the spec: the statistics stay those of the near-empty table.
    await owner.query('ALTER TABLE session_tool_calls SET (autovacuum_enabled = false)');
    await owner.query(`INSERT INTO tenants (tenant_id, name) VALUES ($1, 'plans'), ($2, 'other')`, [TENANT, OTHER_TENANT]);
    await owner.query(`INSERT INTO sessions (tenant_id, session_id, model) VALUES ($1, $2, 'gpt-4.1'), ($1, 'other', 'gpt-4.1'), ($3, 'other', 'gpt-4.1')`, [
      TENANT,
      SESSION,
      OTHER_TENANT,
    ]);
    const calls = (tenantId: string, sessionId: string, count: number) =>
      owner.query(
        `INSERT INTO session_tool_calls (tenant_id, session_id, call_id, name, issued_seq)
         SELECT $1, $2, 'call_' || i, 'bash', i + 1 FROM generate_series(1, $3::int) i`,
        [tenantId, sessionId, count],
      );
    await calls(TENANT, 'other', 2);
    await owner.query('ANALYZE session_tool_calls');
    await calls(OTHER_TENANT, 'other', 100);
    await calls(TENANT, SESSION, CALLS);
    app = await connectAs(db.url, 'session_store_app');
  });

  afterAll(async () => {
    await app?.end();
    await owner?.end();
    await db?.drop();
  });

  beforeEach(() => app.query(`BEGIN; SELECT set_config('app.tenant_id', '${TENANT}', true)`));
  afterEach(() => app.query('ROLLBACK'));

  /** Rows read and then thrown away, over every node of a plan: by a filter, a join filter or a recheck. */
  function discarded(node: Record<string, any>): number {
    const own = ['Rows Removed by Filter', 'Rows Removed by Join Filter', 'Rows Removed by Index Recheck'].reduce((sum, k) => sum + (node[k] ?? 0) * (node['Actual Loops'] ?? 1), 0);
    return own + (node.Plans ?? []).reduce((sum: number, child: Record<string, any>) => sum + discarded(child), 0);
  }

  /** The most rows any one scan of session_tool_calls in the plan returned, over all its loops. */
  function mostRowsScanned(node: Record<string, any>): number {
    const own = /Scan$/.test(node['Node Type']) && node['Relation Name'] === 'session_tool_calls' ? node['Actual Rows'] * (node['Actual Loops'] ?? 1) : 0;
    return Math.max(own, ...(node.Plans ?? []).map(mostRowsScanned));
  }

  /**
   * A transaction that runs each statement under EXPLAIN (ANALYZE): the
   * statement really runs, its plan is kept, and the caller gets as many
   * (empty) rows as the statement produced.
   */
  function explaining(plans: Array<Record<string, any>>): Tx {
    return {
      query: async (sql: string, params?: unknown[]) => {
        const { rows } = await app.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
        const plan = rows[0]['QUERY PLAN'][0].Plan;
        plans.push(plan);
        return Array.from({ length: plan['Actual Rows'] }, () => ({}));
      },
    } as Tx;
  }

  const tx: Tx = { query: async (sql: string, params?: unknown[]) => (await app.query(sql, params)).rows } as Tx;

  it('finds known tool calls by one probe per id, not by reading every call of the session', async () => {
    const plans: Array<Record<string, any>> = [];
    await findToolCalls(explaining(plans), SESSION, ['call_7', 'call_2999', 'call_none']);
    expect(plans).toHaveLength(1);
    expect(discarded(plans[0])).toBe(0);
    // At most one row per id named (EXPLAIN rounds each loop's rows, so a miss can count as one).
    expect(mostRowsScanned(plans[0])).toBeLessThanOrEqual(3);
    // And what it finds.
    const found = await findToolCalls(tx, SESSION, ['call_7', 'call_2999', 'call_none']);
    expect(found.sort((a, b) => a.callId.localeCompare(b.callId))).toEqual([
      { callId: 'call_2999', name: 'bash', answered: false, issuedSeq: 3000, answeredSeq: null },
      { callId: 'call_7', name: 'bash', answered: false, issuedSeq: 8, answeredSeq: null },
    ]);
  });

  it('records answers to earlier calls by one probe per id, not by joining every call of the session', async () => {
    const plans: Array<Record<string, any>> = [];
    await recordToolCalls(explaining(plans), SESSION, {
      issued: [],
      answered: [
        { callId: 'call_7', seq: 5_000 },
        { callId: 'call_2999', seq: 5_001 },
      ],
    });
    expect(plans).toHaveLength(1);
    expect(discarded(plans[0])).toBe(0);
    expect(mostRowsScanned(plans[0])).toBeLessThanOrEqual(2);
    const { rows } = await app.query(`SELECT call_id, answered_seq FROM session_tool_calls WHERE session_id = $1 AND answered_seq IS NOT NULL ORDER BY call_id`, [SESSION]);
    expect(rows).toEqual([
      { call_id: 'call_2999', answered_seq: '5001' },
      { call_id: 'call_7', answered_seq: '5000' },
    ]);
  });

  it('refuses to record an answer whose call is not there, rather than dropping it', async () => {
    await expect(recordToolCalls(tx, SESSION, { issued: [], answered: [{ callId: 'call_none', seq: 5_002 }] })).rejects.toThrow('0 of 1 answered tool calls recorded');
  });
});
