import { randomBytes, randomUUID } from 'node:crypto';
import { Client as Pg } from 'pg';
import { Agent, agentSession } from '../support/agent-script';
import { Client, expectProblem, userMessage } from '../support/client';
import { CitusCluster, startCitusCluster } from '../support/citus';
import { ADMIN_TOKEN, REDIS_URL } from '../support/env';
import { exited, freePort, ProcessHandle, startProcess, waitFor } from '../support/service';

const FORMATS = ['neutral', 'openai', 'openai-responses', 'anthropic', 'ai-sdk'] as const;
const DB = 'session_store';

/**
 * The service unchanged on a Citus coordinator with two workers
 * (DATABASE_DISTRIBUTION=citus): two API and two worker processes, the
 * per-tenant tables distributed by tenant. Each tenant's rows live on the
 * worker that holds its shard; the specs use tenants on both workers.
 */
describe('Citus: the service on a coordinator and two workers', () => {
  let cluster: CitusCluster;
  let env: Record<string, string>;
  const processes: ProcessHandle[] = [];
  let a: Client;
  let b: Client;
  /** Tenants whose shards are on different workers. */
  let tenants: Array<{ tenantId: string; key: string; keyId: string; worker: number }>;

  const startApi = async (): Promise<Client> => {
    const port = await freePort();
    const api = startProcess('api', { ...env, PORT: String(port) });
    processes.push(api);
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${baseUrl}/healthz`)).ok, 'API /healthz', 60_000, api);
    return new Client(baseUrl);
  };
  const startWorker = async (): Promise<void> => {
    const port = await freePort();
    const worker = startProcess('worker', { ...env, WORKER_PORT: String(port) });
    processes.push(worker);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 'worker start', 60_000, worker);
  };
  /** The worker port holding a tenant's shard. */
  const workerOf = async (tenantId: string): Promise<number> => {
    const [row] = await cluster.sql(DB, `SELECT nodeport FROM citus_shards WHERE table_name = 'tenants'::regclass AND shardid = get_shard_id_for_distribution_column('tenants', $1::uuid)`, [tenantId]);
    return row.nodeport;
  };

  beforeAll(async () => {
    cluster = await startCitusCluster();
    const url = await cluster.createDatabase(DB);
    env = {
      NODE_ENV: 'test',
      DATABASE_URL: url,
      DATABASE_DISTRIBUTION: 'citus',
      CITUS_SHARD_COUNT: '8',
      REDIS_URL,
      QUEUE_PREFIX: `sst-citus-${randomBytes(4).toString('hex')}`,
      ADMIN_TOKEN,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      OUTBOX_SWEEP_INTERVAL_MS: '200',
      OUTBOX_GRACE_MS: '500',
      WORKER_CONCURRENCY: '2',
      RECONCILE_INTERVAL_MS: '300',
      RECONCILE_AFTER_MS: '500',
    };
    // The first API migrates and distributes; the others start against the distributed schema.
    a = await startApi();
    b = await startApi();
    await startWorker();
    await startWorker();
    // Tenants until both workers hold at least two.
    tenants = [];
    const perWorker = new Map<number, number>();
    while (cluster.workerPorts().some((port) => (perWorker.get(port) ?? 0) < 2)) {
      const tenant = await a.createTenant(`citus-${tenants.length}`);
      const worker = await workerOf(tenant.tenantId);
      perWorker.set(worker, (perWorker.get(worker) ?? 0) + 1);
      tenants.push({ ...tenant, worker });
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await cluster?.stop();
  });

  /** One tenant on each worker. */
  const spread = () => cluster.workerPorts().map((port) => tenants.find((t) => t.worker === port)!);

  it('distributes every per-tenant table by tenant_id, co-located, with shards on both workers', async () => {
    const tables = await cluster.sql(
      DB,
      `SELECT logicalrelid::text AS table, partmethod, colocationid FROM pg_dist_partition
        WHERE logicalrelid::text NOT LIKE '%\\_p_' ORDER BY 1`,
    );
    expect(tables.map((t) => t.table).sort()).toEqual(
      ['api_keys', 'idempotency_keys', 'outbox', 'search_documents', 'search_progress', 'session_events', 'session_tool_calls', 'sessions', 'tenant_usage', 'tenants', 'tool_output_chunks', 'tool_output_contents', 'tool_output_refs'].sort(),
    );
    expect(new Set(tables.map((t) => `${t.partmethod}/${t.colocationid}`)).size).toBe(1);
    expect(tables[0].partmethod).toBe('h');
    const nodes = await cluster.sql(DB, `SELECT DISTINCT nodeport FROM citus_shards WHERE table_name = 'session_events_p0'::regclass`);
    expect(nodes.map((n) => n.nodeport).sort()).toEqual([...cluster.workerPorts()].sort());
  });

  it('refuses to start on a database of the coordinator without the citus extension, before migrating it', async () => {
    const api = startProcess('api', { ...env, DATABASE_URL: env.DATABASE_URL.replace(/\/session_store$/, '/no_citus'), PORT: String(await freePort()) });
    await exited(api.child);
    expect(api.child.exitCode).not.toBe(0);
    expect(api.output()).toContain('DATABASE_DISTRIBUTION=citus, but this database has no citus extension');
    expect(await cluster.sql('no_citus', `SELECT to_regclass('schema_migrations') AS migrations`)).toEqual([{ migrations: null }]);
  });

  it('an append is one transaction on one worker: the statements of a tenant are routed, not fanned out', async () => {
    const tenant = spread()[0];
    await a.createSession(tenant.key, { id: 'routed' });
    const plan = await cluster.sql(DB, `EXPLAIN SELECT 1 FROM sessions WHERE tenant_id = $1 AND session_id = 'routed' FOR UPDATE`, [tenant.tenantId]);
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Task Count: 1\b/);
    // A transaction that committed in two phases leaves a row in pg_dist_transaction per worker it wrote on,
    // its gid citus_<group>_<pid>_<transaction>_<connection>: every append's transaction names one worker.
    const prepared = async () => (await cluster.sql(DB, 'SELECT groupid, gid FROM pg_dist_transaction')) as Array<{ groupid: number; gid: string }>;
    const before = new Set((await prepared()).map((r) => r.gid));
    for (let i = 0; i < 5; i++) {
      const res = await a.append(tenant.key, 'routed', { expectedSeq: 1 + i, events: [userMessage(`one worker ${i}`)] });
      expect(res.status).toBe(201);
    }
    const workersOf = new Map<string, Set<number>>();
    for (const { groupid, gid } of (await prepared()).filter((r) => !before.has(r.gid))) {
      const transaction = gid.split('_').slice(0, 4).join('_');
      workersOf.set(transaction, (workersOf.get(transaction) ?? new Set()).add(groupid));
    }
    expect([...workersOf.values()].filter((groups) => groups.size > 1)).toEqual([]);
  });

  it('appends with expectedSeq from both APIs: every acknowledged event once, seqs gap-free, on both workers', async () => {
    for (const tenant of spread()) {
      const sessionId = `race-${tenant.worker}`;
      await a.createSession(tenant.key, { id: sessionId });
      const acknowledged: string[] = [];
      let conflicts = 0;
      const writer = async (client: Client, writerId: number) => {
        for (let i = 0; i < 8; ) {
          const head = (await client.request('GET', `/v1/sessions/${sessionId}`, { key: tenant.key })).body.headSeq;
          const id = `w${writerId}-${i}`;
          const res = await client.append(tenant.key, sessionId, { expectedSeq: head, events: [userMessage(`writer ${writerId} #${i}`, id)] });
          if (res.status === 201) {
            acknowledged.push(id);
            i++;
          } else {
            expectProblem(res, 409, 'version_conflict');
            conflicts++;
          }
        }
      };
      await Promise.all([0, 1, 2, 3].map((w) => writer(w % 2 === 0 ? a : b, w)));
      const events = await a.allEvents(tenant.key, sessionId);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const messageIds = events.filter((e) => e.type === 'message.added').map((e) => e.id);
      expect(messageIds.sort()).toEqual(acknowledged.sort());
      expect(acknowledged).toHaveLength(32);
      expect(conflicts).toBeGreaterThanOrEqual(0);
    }
  });

  it('idempotent retries: an event id seen before and an Idempotency-Key replay return the original result', async () => {
    const tenant = spread()[1];
    await a.createSession(tenant.key, { id: 'retry' });
    const body = { events: [userMessage('once', 'evt-once')] };
    const first = await a.append(tenant.key, 'retry', body);
    const again = await b.append(tenant.key, 'retry', body);
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.events).toEqual(first.body.events);
    const key = randomUUID();
    const withKey = await a.append(tenant.key, 'retry', { events: [userMessage('keyed')] }, { 'idempotency-key': key });
    const replay = await b.append(tenant.key, 'retry', { events: [userMessage('keyed')] }, { 'idempotency-key': key });
    expect(replay.status).toBe(withKey.status);
    expect(replay.text).toBe(withKey.text);
    const events = await a.allEvents(tenant.key, 'retry');
    expect(events.filter((e) => e.type === 'message.added')).toHaveLength(2);
  });

  it('context reads in every format, compaction from two workers (one pivot per marker), prune', async () => {
    for (const tenant of spread()) {
      const agents = await Promise.all([0, 1].map((i) => agentSession(i === 0 ? a : b, tenant.key, `agent-${tenant.worker}-${i}`)));
      const markers = await Promise.all(agents.map((agent) => agent.untilMarker(1)));
      for (const [i, agent] of agents.entries()) {
        expect((await agent.settled(markers[i].markerSeq)).status).toBe('completed');
        // Manual compactions through both APIs at once: still one completed per marker.
        const both = await Promise.all([a, b].map((client) => client.request('POST', `${agent.path}/compactions`, { key: tenant.key, body: { wait: true } })));
        expect(both.map((r) => r.status)).toEqual([200, 200]);
        const completed = (await agent.events()).filter((e) => e.type === 'compaction.completed');
        expect(new Set(completed.map((e) => e.data.markerSeq)).size).toBe(completed.length);
        for (const format of FORMATS) {
          const context = await agent.context(format);
          expect(context.messages.length).toBeGreaterThan(0);
        }
        await agent.expectValidForProviders();
      }
      // OpenCode's prune: a long output three user turns back is cleared once, whichever API and worker run it.
      const id = `prune-${tenant.worker}`;
      await a.createSession(tenant.key, { id, model: 'gpt-4.1', config: { preset: 'opencode', toolOutput: { enabled: false } } });
      const answer = { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text: 'Done.' }] } } };
      const appended = await a.append(tenant.key, id, {
        events: [
          userMessage('Turn 1: read the build log'),
          { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'log', name: 'bash', input: { command: 'cat build.log' } }] } } },
          { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'log', name: 'bash', output: 'x'.repeat(200_000) }] } } },
          answer,
          userMessage('Turn 2'),
          answer,
          userMessage('Turn 3'),
          answer,
        ],
      });
      expect(appended.status).toBe(201);
      const runs = await Promise.all([a, b].map((client) => client.request('POST', `/v1/sessions/${id}/prune`, { key: tenant.key, body: { wait: true } })));
      expect(runs.map((r) => r.status)).toEqual([200, 200]);
      expect(runs.map((r) => r.body.prune.status)).toContain('pruned');
      expect((await a.allEvents(tenant.key, id)).filter((e) => e.type === 'tool_outputs.pruned')).toHaveLength(1);
      const context = await a.request('GET', `/v1/sessions/${id}/context?format=anthropic`, { key: tenant.key });
      expect(context.text).toContain('[Old tool result content cleared');
    }
  });

  it('forks, export and import: the fork shows the source at atSeq; an export imported into a tenant on the other worker reads back equal', async () => {
    const [source, target] = spread();
    const agent = await agentSession(a, source.key, 'fork-source');
    await agent.turn(1);
    await agent.turn(2);
    const atSeq = (await agent.state()).headSeq;
    await agent.turn(3);
    const forked = await b.request('POST', `${agent.path}/forks`, { key: source.key, body: { atSeq, id: 'fork-1' } });
    expect(forked.status).toBe(201);
    const fork = new Agent(b, source.key, 'fork-1');
    for (const format of FORMATS) {
      const { headSeq: _h, atSeq: _a, sessionId: _s, ...view } = await fork.context(format);
      const res = await a.request('GET', `${agent.path}/context?format=${format}&atSeq=${atSeq}`, { key: source.key });
      const { headSeq: _h2, atSeq: _a2, sessionId: _s2, ...sourceView } = res.body;
      expect({ format, view }).toEqual({ format, view: sourceView });
    }

    const exported = await a.request('GET', `${agent.path}/export`, { key: source.key });
    expect(exported.status).toBe(200);
    const imported = await b.request('POST', '/v1/sessions/import', { key: target.key, rawBody: exported.text, headers: { 'content-type': 'application/x-ndjson' } });
    expect(imported.status).toBe(201);
    const copy = new Agent(a, target.key, 'fork-source');
    expect(await copy.events()).toEqual(await agent.events());
    for (const format of FORMATS) {
      const { sessionId: _s, ...original } = await agent.context(format);
      const { sessionId: _s2, ...copied } = await copy.context(format);
      expect({ format, copied }).toEqual({ format, copied: original });
    }
  });

  it('search by metadata returns the tenant’s matching sessions only, whatever worker holds them', async () => {
    for (const tenant of spread()) {
      await a.createSession(tenant.key, { id: `tagged-${tenant.worker}`, metadata: { project: 'apollo', worker: tenant.worker } });
      await a.createSession(tenant.key, { id: `other-${tenant.worker}`, metadata: { project: 'gemini' } });
    }
    for (const tenant of spread()) {
      const res = await b.request('GET', `/v1/sessions?metadata=${encodeURIComponent(JSON.stringify({ project: 'apollo' }))}`, { key: tenant.key });
      expect(res.status).toBe(200);
      expect(res.body.sessions.map((s: any) => s.id)).toEqual([`tagged-${tenant.worker}`]);
    }
  });

  it('tenant isolation: another tenant’s session is a 404 and never listed; on a worker, the runtime role sees only the tenant it names', async () => {
    const [one, two] = spread();
    await a.createSession(one.key, { id: 'private' });
    await a.append(one.key, 'private', { events: [userMessage('secret of one')] });
    expectProblem(await b.request('GET', '/v1/sessions/private', { key: two.key }), 404, 'session_not_found');
    expectProblem(await b.request('GET', '/v1/sessions/private/context', { key: two.key }), 404, 'session_not_found');
    expectProblem(await b.append(two.key, 'private', { events: [userMessage('intrusion')] }), 404, 'session_not_found');
    const listed = await b.request('GET', '/v1/sessions?limit=200', { key: two.key });
    expect(listed.body.sessions.map((s: any) => s.id)).not.toContain('private');

    // On the worker that holds tenant one's shards, as the runtime role, each shard of the log read directly:
    // with no tenant set, or tenant two, row-level security shows none of tenant one's rows.
    const shards = await cluster.sql(DB, `SELECT shard_name FROM citus_shards WHERE table_name = 'session_events'::regclass AND nodeport = $1`, [one.worker]);
    const shardRows = async (tenantId: string | null) => {
      const client = new Pg({ connectionString: `postgres://session_store_app@127.0.0.1:${one.worker}/${DB}` });
      await client.connect();
      try {
        await client.query('BEGIN');
        if (tenantId) await client.query(`SET LOCAL app.tenant_id = '${tenantId}'`);
        let rows = 0;
        for (const { shard_name } of shards) rows += (await client.query(`SELECT count(*)::int AS n FROM ${shard_name} WHERE session_id = 'private'`)).rows[0].n;
        await client.query('ROLLBACK');
        return rows;
      } finally {
        await client.end();
      }
    };
    expect(await shardRows(one.tenantId)).toBeGreaterThan(0);
    expect(await shardRows(null)).toBe(0);
    expect(await shardRows(two.tenantId)).toBe(0);
  });

  it('tenant delete removes every row of the tenant on its worker, and leaves the other tenants', async () => {
    const victim = await a.createTenant('citus-victim');
    await a.createSession(victim.key, { id: 'doomed' });
    const agent = new Agent(a, victim.key, 'doomed');
    await agent.append([userMessage('soon gone')]);
    const survivor = spread()[0];
    const before = await cluster.sql(DB, 'SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [survivor.tenantId]);
    const res = await b.request('DELETE', `/v1/admin/tenants/${victim.tenantId}`, { key: ADMIN_TOKEN });
    expect(res.status).toBe(204);
    const left = await cluster.sql(
      DB,
      `SELECT (SELECT count(*) FROM tenants WHERE tenant_id = $1)::int + (SELECT count(*) FROM sessions WHERE tenant_id = $1)::int
            + (SELECT count(*) FROM session_events WHERE tenant_id = $1)::int + (SELECT count(*) FROM api_keys WHERE tenant_id = $1)::int
            + (SELECT count(*) FROM tenant_usage WHERE tenant_id = $1)::int + (SELECT count(*) FROM outbox WHERE tenant_id = $1)::int AS n`,
      [victim.tenantId],
    );
    expect(left).toEqual([{ n: 0 }]);
    expectProblem(await a.request('GET', '/v1/sessions/doomed', { key: victim.key }), 401, 'invalid_api_key');
    expect(await cluster.sql(DB, 'SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [survivor.tenantId])).toEqual(before);
  });

  it('the outbox sweepers and reconcilers of both workers work the distributed outbox: a missed trigger is relayed, compaction triggers settle', async () => {
    // A trigger the API never enqueued (as after a crash between commit and enqueue), for an existing session's marker.
    const [missed] = await cluster.sql(
      DB,
      `INSERT INTO outbox (tenant_id, job_name, job_id, payload, deduplication_id, created_at)
       SELECT tenant_id, job_name, job_id || '-missed', payload, deduplication_id, now() - interval '1 minute'
         FROM outbox WHERE job_name = 'compact' LIMIT 1
       RETURNING tenant_id, outbox_id`,
    );
    const state = async () => {
      const [{ relayed }] = await cluster.sql(DB, 'SELECT dispatched_at IS NOT NULL AS relayed FROM outbox WHERE tenant_id = $1 AND outbox_id = $2', [missed.tenant_id, missed.outbox_id]);
      const [left] = await cluster.sql(
        DB,
        `SELECT count(*) FILTER (WHERE dispatched_at IS NULL)::int AS undispatched,
                count(*) FILTER (WHERE job_name = 'compact' AND settled_at IS NULL)::int AS unsettled
           FROM outbox`,
      );
      return { relayed, ...left };
    };
    const done = { relayed: true, undispatched: 0, unsettled: 0 };
    // Waits for it, then asserts on what is there (the rows left, on a failure).
    await waitFor(async () => JSON.stringify(await state()) === JSON.stringify(done), 'the outbox drained and settled', 30_000).catch(() => undefined);
    expect(await state()).toEqual(done);
    expect(processes.map((p) => p.output()).join('\n')).not.toMatch(/outbox sweep failed|reconciliation failed/);
  });
});
