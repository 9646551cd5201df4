import { Client as PgClient } from 'pg';
import { listSessions } from '@app/event-store';
import { Client, expectProblem, HttpResult, userMessage } from './support/client';
import { connectAs } from './support/database';
import { ADMIN_TOKEN } from './support/env';
import { startService, TestService } from './support/service';

/**
 * Session lifecycle: search by metadata containment (indexed),
 * title and time ranges, by last activity with cursor paging; an admin
 * deleting a tenant with all its data, and suspending its keys.
 */
describe('lifecycle: session search and tenant administration', () => {
  let service: TestService;
  let client: Client;
  let owner: PgClient;

  beforeAll(async () => {
    service = await startService({ worker: false });
    client = new Client(service.baseUrl);
    owner = await connectAs(service.dbUrl);
  });
  afterAll(async () => {
    await owner?.end();
    await service?.stop();
  });

  const admin = (method: string, path: string, body?: unknown) => client.request(method, `/v1/admin/tenants${path}`, { key: ADMIN_TOKEN, body });
  const pause = () => new Promise((r) => setTimeout(r, 5));

  /** Every page of a search, followed by its cursor with the same filters, one session per page. */
  async function searchAll(key: string, query: Record<string, string>): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const params: URLSearchParams = new URLSearchParams({ ...query, limit: '1', ...(cursor ? { cursor } : {}) });
      const res: HttpResult = await client.request('GET', `/v1/sessions?${params}`, { key });
      expect(res.status).toBe(200);
      ids.push(...res.body.sessions.map((s: { id: string }) => s.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    return ids;
  }

  describe('search', () => {
    let key: string;
    const marks: Record<string, string> = {};

    beforeAll(async () => {
      ({ key } = await client.createTenant('search'));
      const other = await client.createTenant('other');
      // Another tenant's matching session never shows.
      await client.createSession(other.key, { id: 'foreign', metadata: { project: 'atlas', title: 'Refactor the parser' } });
      const sessions: Array<[string, Record<string, unknown>]> = [
        ['s1', { project: 'atlas', team: { name: 'core' }, title: 'Refactor the parser' }],
        ['s2', { project: 'atlas', tags: ['bug', 'urgent'], title: 'Fix 100% CPU_loop' }],
        ['s3', { project: 'zephyr', title: 'refactor docs' }],
        ['s4', {}],
      ];
      for (const [id, metadata] of sessions) {
        await pause();
        marks[`before-${id}`] = new Date().toISOString();
        await pause();
        await client.createSession(key, { id, metadata });
      }
      await pause();
      marks.created = new Date().toISOString();
      await pause();
      // s1 becomes the most recently active session.
      expect((await client.append(key, 's1', { events: [userMessage('again', 'u1')] })).status).toBe(201);
    });

    it('lists by last activity, newest first, and pages with a cursor', async () => {
      expect(await searchAll(key, {})).toEqual(['s1', 's4', 's3', 's2']);
      const first = await client.request('GET', '/v1/sessions?limit=2', { key });
      expect(first.body.sessions.map((s: { id: string }) => s.id)).toEqual(['s1', 's4']);
      expect(Date.parse(first.body.sessions[0].updatedAt)).toBeGreaterThan(Date.parse(marks.created));
    });

    it('filters by metadata containment: keys, nested objects and array elements', async () => {
      const search = (metadata: unknown) => searchAll(key, { metadata: JSON.stringify(metadata) });
      expect(await search({ project: 'atlas' })).toEqual(['s1', 's2']);
      expect(await search({ team: { name: 'core' } })).toEqual(['s1']);
      expect(await search({ tags: ['urgent'] })).toEqual(['s2']);
      expect(await search({ project: 'atlas', tags: ['bug'] })).toEqual(['s2']);
      expect(await search({ project: 'nowhere' })).toEqual([]);
      expect(await search({})).toEqual(['s1', 's4', 's3', 's2']);
    });

    it('filters by a case-insensitive title substring, LIKE wildcards taken literally', async () => {
      expect(await searchAll(key, { title: 'REFACTOR' })).toEqual(['s1', 's3']);
      expect(await searchAll(key, { title: '100%' })).toEqual(['s2']);
      expect(await searchAll(key, { title: 'CPU_l' })).toEqual(['s2']);
      expect(await searchAll(key, { title: '%' })).toEqual(['s2']);
      expect(await searchAll(key, { title: 'r_f' })).toEqual([]);
    });

    it('filters by created and last-activity ranges, combined with the other filters', async () => {
      expect(await searchAll(key, { createdAfter: marks['before-s2'], createdBefore: marks['before-s4'] })).toEqual(['s3', 's2']);
      expect(await searchAll(key, { activeAfter: marks.created })).toEqual(['s1']);
      expect(await searchAll(key, { activeBefore: marks.created })).toEqual(['s4', 's3', 's2']);
      expect(await searchAll(key, { createdBefore: marks['before-s3'], metadata: '{"project":"atlas"}', title: 'refactor' })).toEqual(['s1']);
    });

    it('refuses a bad filter with a 400 problem', async () => {
      for (const query of [
        'metadata=%7Bnot-json',
        'metadata=%5B1%5D',
        'metadata=%22text%22',
        'createdAfter=yesterday',
        'activeBefore=2026-02-30T00:00:00Z',
        'createdBefore=2026-01-01T00:00:00%2B99',
        'createdAfter=2026-01-01T00:00:00',
        'activeAfter=2026-01-01',
        'title=',
        'unknown=1',
      ]) {
        const res = await client.request('GET', `/v1/sessions?${query}`, { key });
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectProblem(res, 400, 'validation_failed');
      }
      expectProblem(await client.request('GET', `/v1/sessions?title=${encodeURIComponent('a\u0000')}`, { key }), 400, 'invalid_search');
    });

    it('bounds a metadata filter like a body: depth, size and key count answer 400 invalid_filter naming the limit', async () => {
      // 5,000 levels, brackets unescaped so the URL stays under Node's header limit; once a 500 from a stack overflow.
      const bomb = `{"a":${'['.repeat(4999)}${']'.repeat(4999)}}`;
      const refusals = {
        maxBytes: bomb,
        maxDepth: JSON.stringify({ a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } }),
        maxKeys: JSON.stringify({ tags: Array.from({ length: 64 }, (_, i) => `t${i}`) }),
      };
      for (const [limit, filter] of Object.entries(refusals)) {
        const res = await client.request('GET', `/v1/sessions?metadata=${limit === 'maxBytes' ? filter : encodeURIComponent(filter)}`, { key });
        expectProblem(res, 400, 'invalid_filter');
        expect({ limit, details: res.body.limit }).toEqual({ limit, details: limit });
        expect(res.body.detail).toMatch(/^metadata /);
      }
      expectProblem(await client.request('GET', `/v1/sessions?metadata=${encodeURIComponent(JSON.stringify({ p: 'x'.repeat(9000) }))}`, { key }), 400, 'invalid_filter');
      // Within the limits, a filter still matches.
      expect(await searchAll(key, { metadata: JSON.stringify({ project: 'atlas', team: { name: 'core' } }) })).toEqual(['s1']);
      expect(await searchAll(key, { metadata: JSON.stringify({ a: { b: { c: { d: { e: { f: { g: { h: 1 } } } } } } } }) })).toEqual([]);
    });

    it('a metadata search reads the (tenant_id, metadata) GIN index, as the app role in a tenant transaction', async () => {
      const { tenantId } = await client.createTenant('many');
      await owner.query(
        `INSERT INTO sessions (tenant_id, session_id, model, metadata)
         SELECT $1, 'bulk-' || i, 'gpt-4.1', jsonb_build_object('project', 'p' || (i % 500), 'n', i) FROM generate_series(1, 5000) i`,
        [tenantId],
      );
      await owner.query('ANALYZE sessions');
      const app = await connectAs(service.dbUrl, 'session_store_app');
      try {
        await app.query(`BEGIN; SELECT set_config('app.tenant_id', '${tenantId}', true)`);
        // The store's own query, explained instead of run, then run.
        const search = { metadata: { project: 'p7' } };
        let plan = '';
        const explain = async (sql: string, params?: unknown[]) => {
          plan = JSON.stringify((await app.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows);
          return [];
        };
        await listSessions({ query: explain }, 51, search);
        expect(plan).toContain('"Index Name":"sessions_by_metadata"');
        const found = await listSessions({ query: async (sql, params) => (await app.query(sql, params)).rows }, 51, search);
        expect(found.map((s) => s.metadata.project)).toEqual(Array(10).fill('p7'));
      } finally {
        await app.query('ROLLBACK');
        await app.end();
      }
    });
  });

  describe('admin', () => {
    /** Row counts of one tenant in every table with a tenant_id column, read as the owner (RLS bypassed). */
    async function rowsOf(tenantId: string): Promise<Record<string, number>> {
      const { rows: tables } = await owner.query(
        `SELECT table_name FROM information_schema.columns
          WHERE table_schema = 'public' AND column_name = 'tenant_id' AND table_name IN (SELECT tablename FROM pg_tables WHERE schemaname = 'public')
          ORDER BY table_name`,
      );
      const counts: Record<string, number> = {};
      for (const { table_name: table } of tables) {
        const { rows } = await owner.query(`SELECT count(*)::int AS n FROM "${table}" WHERE tenant_id = $1`, [tenantId]);
        counts[table] = rows[0].n;
      }
      return counts;
    }

    /** A tenant with something in every kind of table: sessions, events, a tool output, an idempotency key, the outbox. */
    async function populated(name: string) {
      const tenant = await client.createTenant(name);
      await client.createSession(tenant.key, { id: 'work', metadata: { project: name } });
      const created = await client.request('POST', '/v1/sessions', { key: tenant.key, body: { model: 'gpt-4.1', id: 'again' }, headers: { 'Idempotency-Key': `k-${name}` } });
      expect(created.status).toBe(201);
      expect((await client.append(tenant.key, 'work', { events: [userMessage('hello', 'u1'), userMessage('world', 'u2')] })).status).toBe(201);
      // A manual compaction: its job goes through the outbox.
      expect((await client.request('POST', '/v1/sessions/work/compactions', { key: tenant.key, body: {} })).status).toBe(202);
      const upload = await client.request('POST', '/v1/sessions/work/tool-outputs', {
        key: tenant.key,
        rawBody: Array.from({ length: 2000 }, (_, i) => `line ${i} ${name}`).join('\n'),
        headers: { 'content-type': 'text/plain' },
      });
      expect(upload.status).toBe(201);
      return tenant;
    }

    it('deletes a tenant with all its data, leaving zero rows in every tenant table and other tenants untouched', async () => {
      const doomed = await populated('doomed');
      const kept = await populated('kept');
      const before = await rowsOf(doomed.tenantId);
      for (const table of ['tenants', 'api_keys', 'sessions', 'session_events', 'tool_output_contents', 'tool_output_chunks', 'tool_output_refs', 'idempotency_keys', 'outbox', 'tenant_usage']) {
        expect({ table, present: before[table] > 0 }).toEqual({ table, present: true });
      }
      const keptBefore = await rowsOf(kept.tenantId);

      const listed = await admin('GET', '?limit=1000');
      const { usage, counts } = listed.body.tenants.find((t: { tenantId: string }) => t.tenantId === doomed.tenantId);
      expect(counts).toEqual({ sessions: 2, events: 5 }); // two created, two messages, the compaction's marker
      expect(usage.eventBytes).toBeGreaterThan(0);
      expect(usage.toolOutputBytes).toBeGreaterThan(0);

      const deleted = await admin('DELETE', `/${doomed.tenantId}`);
      expect(deleted.status).toBe(204);
      const after = await rowsOf(doomed.tenantId);
      expect(Object.values(after).every((n) => n === 0)).toBe(true);
      expect(Object.keys(after)).toEqual(Object.keys(before));
      expect(await rowsOf(kept.tenantId)).toEqual(keptBefore);

      expectProblem(await client.request('GET', '/v1/sessions', { key: doomed.key }), 401, 'invalid_api_key');
      expect((await client.request('GET', '/v1/sessions/work', { key: kept.key })).status).toBe(200);
      expectProblem(await admin('DELETE', `/${doomed.tenantId}`), 404, 'tenant_not_found');
      expectProblem(await admin('DELETE', '/not-a-uuid'), 404, 'tenant_not_found');
    });

    it('a suspended tenant’s keys, cached ones included, get 403 tenant_suspended until it is reinstated', async () => {
      const { tenantId, key } = await client.createTenant('paused');
      const other = await client.createTenant('running');
      await client.createSession(key, { id: 's' });
      // The key is now in the API's cache.
      expect((await client.request('GET', '/v1/sessions/s', { key })).status).toBe(200);

      const suspended = await admin('PATCH', `/${tenantId}`, { suspended: true });
      expect(suspended.status).toBe(200);
      expect(suspended.body.suspended).toBe(true);
      expect(Date.parse(suspended.body.suspendedAt)).not.toBeNaN();
      for (const [method, path] of [['GET', '/v1/sessions/s'], ['GET', '/v1/sessions'], ['POST', '/v1/sessions/s/events']]) {
        const res = await client.request(method, path, { key, body: method === 'POST' ? { events: [userMessage('x', 'x')] } : undefined });
        expectProblem(res, 403, 'tenant_suspended');
        expect(typeof res.body.requestId).toBe('string');
      }
      expect((await client.request('GET', '/v1/sessions', { key: other.key })).status).toBe(200);
      expect((await admin('GET', `/${tenantId}`)).body.suspended).toBe(true);
      // A key issued while suspended is refused too; a wrong key is still a 401.
      const issued = await admin('POST', `/${tenantId}/api-keys`, {});
      expectProblem(await client.request('GET', '/v1/sessions', { key: issued.body.key }), 403, 'tenant_suspended');
      expectProblem(await client.request('GET', '/v1/sessions', { key: `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}` }), 401, 'invalid_api_key');

      const reinstated = await admin('PATCH', `/${tenantId}`, { suspended: false });
      expect([reinstated.body.suspended, reinstated.body.suspendedAt]).toEqual([false, null]);
      expect((await client.request('GET', '/v1/sessions/s', { key })).status).toBe(200);
      expectProblem(await admin('PATCH', `/${tenantId}`, { suspended: 'yes' }), 400, 'validation_failed');
    });
  });
});
