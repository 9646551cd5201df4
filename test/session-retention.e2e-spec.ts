import { Client as PgClient } from 'pg';
import { Client, expectProblem, userMessage } from './support/client';
import { connectAs } from './support/database';
import { ADMIN_TOKEN } from './support/env';
import { freePort, startReady, startService, TestService, waitFor } from './support/service';
import { openedStream } from './support/sse';

const DAY = 24 * 3600;

const toolCall = (callId: string) => ({
  type: 'message.added',
  data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name: 'bash', input: { cmd: 'run' } }] } },
});
/** An output whose view cuts its long last line, so the tool-output tables hold it (a content to collect), not its event. */
const storedOutput = (text: string) => `${text}\n${'x'.repeat(3000)}`;
const toolResult = (callId: string, output: string) => ({
  type: 'message.added',
  data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, output }] } },
});

/**
 * Session retention: per tenant, sessions idle longer than the
 * admin's age are archived or deleted by the worker's job, on two workers at
 * once; the clock is controlled by backdating sessions' last activity
 * through the owner connection, and the job runs every 300 ms.
 */
describe('session retention', () => {
  let service: TestService;
  let client: Client;
  let owner: PgClient;
  const workerPorts: number[] = [];

  beforeAll(async () => {
    service = await startService({
      worker: false,
      env: { RETENTION_INTERVAL_MS: '300', TOOL_OUTPUT_GC_INTERVAL_MS: '300', TOOL_OUTPUT_RETENTION_SECONDS: '1' },
    });
    // Two workers whose metrics ports the spec knows share the maintenance queue.
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      service.workers.push(await startReady('worker', { ...service.env, WORKER_PORT: String(port) }, `http://127.0.0.1:${port}/healthz`));
      workerPorts.push(port);
    }
    client = new Client(service.baseUrl);
    owner = await connectAs(service.dbUrl);
  });
  afterAll(async () => {
    await owner?.end();
    await service?.stop();
  });

  const admin = (method: string, path: string, body?: unknown) => client.request(method, `/v1/admin/tenants${path}`, { key: ADMIN_TOKEN, body });
  const getSession = (key: string, id: string) => client.request('GET', `/v1/sessions/${id}`, { key });
  const listIds = async (key: string, query: string) =>
    (await client.request('GET', `/v1/sessions?${query}`, { key })).body.sessions.map((s: { id: string }) => s.id).sort();
  /** The clock: the sessions' last activity moves `days` into the past. */
  const backdate = (tenantId: string, ids: string[], days: number) =>
    owner.query(`UPDATE sessions SET updated_at = now() - make_interval(days => $3) WHERE tenant_id = $1 AND session_id = ANY($2)`, [tenantId, ids, days]);
  const contentExists = async (contentId: string) =>
    (await owner.query('SELECT 1 FROM tool_output_contents WHERE content_id = $1', [contentId])).rowCount === 1;
  /** The retention counter summed over both workers. */
  const retired = async (action: string) => {
    let total = 0;
    for (const port of workerPorts) {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      total += Number(new RegExp(`^session_store_retention_sessions_total\\{action="${action}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    }
    return total;
  };

  describe('the admin setting', () => {
    let tenantId: string;
    beforeAll(async () => {
      ({ tenantId } = await client.createTenant('setting'));
    });

    it('is off by default', async () => {
      expect((await admin('GET', `/${tenantId}`)).body.retention).toBeNull();
    });

    it.each([
      ['an age under an hour', { idleSeconds: 60, action: 'archive' }],
      ['a fractional age', { idleSeconds: 86_400.5, action: 'archive' }],
      ['an unknown action', { idleSeconds: DAY, action: 'shred' }],
      ['no action', { idleSeconds: DAY }],
      ['no age', { action: 'delete' }],
      ['a string', 'daily'],
      ['an unknown field', { idleSeconds: DAY, action: 'delete', keepForks: true }],
    ])('refuses %s with a 400 problem and changes nothing', async (_what, retention) => {
      expectProblem(await admin('PATCH', `/${tenantId}`, { retention }), 400, 'validation_failed');
      expect((await admin('GET', `/${tenantId}`)).body.retention).toBeNull();
    });

    it('is set whole, shown by GET and the tenant list, and turned off by null', async () => {
      const set = await admin('PATCH', `/${tenantId}`, { retention: { idleSeconds: 30 * DAY, action: 'archive' } });
      expect(set.status).toBe(200);
      expect(set.body.retention).toEqual({ idleSeconds: 30 * DAY, action: 'archive' });
      expect((await admin('GET', `/${tenantId}`)).body.retention).toEqual({ idleSeconds: 30 * DAY, action: 'archive' });
      const listed = (await admin('GET', '?limit=1000')).body.tenants.find((t: { tenantId: string }) => t.tenantId === tenantId);
      expect(listed.retention).toEqual({ idleSeconds: 30 * DAY, action: 'archive' });
      // Other fields of the PATCH leave it alone.
      expect((await admin('PATCH', `/${tenantId}`, { suspended: false })).body.retention).toEqual({ idleSeconds: 30 * DAY, action: 'archive' });
      const off = await admin('PATCH', `/${tenantId}`, { retention: null });
      expect([off.status, off.body.retention]).toEqual([200, null]);
    });
  });

  describe('the job', () => {
    const tenants: Record<'archive' | 'delete' | 'keep', { tenantId: string; key: string }> = {} as never;
    const sharedLine = `shared output ${Date.now()}`;
    const shared = storedOutput(sharedLine);
    let heldContent: string;
    let ownContent: string;
    let sharedContent: string;
    let locker: PgClient;

    beforeAll(async () => {
      for (const name of ['archive', 'delete', 'keep'] as const) tenants[name] = await client.createTenant(`retention-${name}`);
      const { archive, delete: del, keep } = tenants;
      for (const id of ['idle', 'active']) await client.createSession(archive.key, { id });
      for (const id of ['idle', 'idle-archived', 'held', 'active']) await client.createSession(del.key, { id });
      await client.createSession(keep.key, { id: 'idle' });
      for (const [id, output] of [['idle', storedOutput(`own output ${Date.now()}`)], ['held', storedOutput(`held output ${Date.now()}`)]]) {
        expect((await client.append(del.key, id, { events: [toolCall('c1'), toolResult('c1', output), toolCall('c2'), toolResult('c2', shared)] })).status).toBe(201);
      }
      expect((await client.append(del.key, 'active', { events: [toolCall('c1'), toolResult('c1', shared)] })).status).toBe(201);
      const contentOf = async (sessionId: string, callId: string) => {
        const events = await client.allEvents(del.key, sessionId);
        const part = events.flatMap((e) => e.data.message?.parts ?? []).find((p: { type: string; callId: string }) => p.type === 'tool_result' && p.callId === callId);
        const { rows } = await owner.query('SELECT content_id::text FROM tool_output_refs WHERE ref_id = $1', [part.outputRef.id]);
        return rows[0].content_id as string;
      };
      [ownContent, heldContent, sharedContent] = [await contentOf('idle', 'c1'), await contentOf('held', 'c1'), await contentOf('active', 'c1')];
      expect(await contentOf('idle', 'c2')).toBe(sharedContent);
      expect((await client.request('PATCH', '/v1/sessions/idle-archived', { key: del.key, body: { archived: true } })).status).toBe(200);

      // Another transaction holds one content while the job deletes its session: the delete must skip it.
      locker = await connectAs(service.dbUrl);
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM tool_output_contents WHERE content_id = $1 FOR UPDATE', [heldContent]);

      // A live stream ends when the job archives or deletes its session (an archived one has none to open).
      const archiving = await openedStream(service.baseUrl, archive.key, 'idle');
      const deleting = { idle: await openedStream(service.baseUrl, del.key, 'idle'), held: await openedStream(service.baseUrl, del.key, 'held') };
      await backdate(archive.tenantId, ['idle'], 2);
      await backdate(del.tenantId, ['idle', 'idle-archived', 'held'], 2);
      await backdate(keep.tenantId, ['idle'], 400);
      for (const name of ['archive', 'delete'] as const) {
        const set = await admin('PATCH', `/${tenants[name].tenantId}`, { retention: { idleSeconds: DAY, action: name } });
        expect(set.status).toBe(200);
      }
      expect(await archiving.endReason('the idle session archived')).toBe('session_archived');
      expect((await getSession(archive.key, 'idle')).body.archivedAt).not.toBeNull();
      for (const [id, stream] of Object.entries(deleting)) {
        expect(await stream.endReason(`session ${id} deleted`)).toBe('session_deleted');
        expect((await getSession(del.key, id)).status).toBe(404);
      }
      await waitFor(async () => (await getSession(del.key, 'idle-archived')).status === 404, 'session idle-archived deleted');
    });
    afterAll(async () => {
      await locker?.end();
    });

    it('archives the idle session of an archive tenant and leaves the active one; the archived log stays readable', async () => {
      const { key } = tenants.archive;
      const idle = (await getSession(key, 'idle')).body;
      expect(Date.parse(idle.archivedAt)).not.toBeNaN();
      expect((await getSession(key, 'active')).body.archivedAt).toBeNull();
      const events = await client.allEvents(key, 'idle');
      expect(events.map((e) => e.type)).toEqual(['session.created']);
      expect((await client.request('GET', '/v1/sessions/idle/context', { key })).status).toBe(200);
    });

    it('refuses appends, config changes and compaction requests to the archived session with 409 session_archived, changing nothing', async () => {
      const { key } = tenants.archive;
      const before = (await getSession(key, 'idle')).body;
      expectProblem(await client.append(key, 'idle', { events: [userMessage('hello again')] }), 409, 'session_archived');
      expectProblem(await client.request('POST', '/v1/sessions/idle/pins', { key, body: { text: 'remember this' } }), 409, 'session_archived');
      expectProblem(await client.request('PATCH', '/v1/sessions/idle', { key, body: { config: { compaction: { thresholdRatio: 0.7 } } } }), 409, 'session_archived');
      expectProblem(await client.request('POST', '/v1/sessions/idle/compactions', { key, body: {} }), 409, 'session_archived');
      const after = (await getSession(key, 'idle')).body;
      expect([after.headSeq, after.updatedAt, after.archivedAt, after.config]).toEqual([before.headSeq, before.updatedAt, before.archivedAt, before.config]);
    });

    it('lists sessions with archivedAt and filters them with archived=true|false', async () => {
      const { key } = tenants.archive;
      expect(await listIds(key, 'archived=true')).toEqual(['idle']);
      expect(await listIds(key, 'archived=false')).toEqual(['active']);
      expect(await listIds(key, '')).toEqual(['active', 'idle']);
      const listed = (await client.request('GET', '/v1/sessions', { key })).body.sessions;
      expect(listed.find((s: { id: string }) => s.id === 'idle').archivedAt).toBe((await getSession(key, 'idle')).body.archivedAt);
      expectProblem(await client.request('GET', '/v1/sessions?archived=yes', { key }), 400, 'validation_failed');
    });

    it('deletes the idle sessions of a delete tenant, archived ones included, with their tool outputs; the active one and its shared output stay', async () => {
      const { key, tenantId } = tenants.delete;
      expect(await listIds(key, '')).toEqual(['active']);
      expect(await contentExists(ownContent)).toBe(false);
      expect(await contentExists(sharedContent)).toBe(true);
      const { rows } = await owner.query(`SELECT count(*)::int AS n FROM tool_output_refs WHERE tenant_id = $1 AND session_id <> 'active'`, [tenantId]);
      expect(rows[0].n).toBe(0);
      const events = await client.allEvents(key, 'active');
      const ref = events.flatMap((e) => e.data.message?.parts ?? []).find((p: { type: string }) => p.type === 'tool_result').outputRef.id;
      expect((await client.request('GET', `/v1/tool-outputs/${ref}?limit=1`, { key })).body.lines).toContain(sharedLine);
    });

    it('leaves a tenant without a setting untouched', async () => {
      const idle = (await getSession(tenants.keep.key, 'idle')).body;
      expect([idle.archivedAt, idle.headSeq]).toEqual([null, 1]);
    });

    it("counts each archived and deleted session once on the workers' /metrics", async () => {
      // A worker counts a batch right after its commit, which the API may show first; polled, as only /metrics shows the count.
      await waitFor(async () => (await retired('archive')) >= 1 && (await retired('delete')) >= 3, 'the retention counters');
      expect(await retired('archive')).toBe(1);
      expect(await retired('delete')).toBe(3);
    });

    it('leaves the content another transaction held to the tool-output collector, which takes it once released', async () => {
      // The session is gone, the content stays: no ref points at it any more.
      expect(await contentExists(heldContent)).toBe(true);
      const { rows } = await owner.query('SELECT count(*)::int AS n FROM tool_output_refs WHERE content_id = $1', [heldContent]);
      expect(rows[0].n).toBe(0);
      await locker.query('COMMIT');
      // Polled: the collector's log line counts contents, it does not name them.
      await waitFor(async () => !(await contentExists(heldContent)), 'the collector to delete the orphan content');
      expect(await contentExists(sharedContent)).toBe(true);
    });

    it('unarchives on PATCH {archived: false}, which counts as activity: appends work again and later runs leave the session alone', async () => {
      const { key, tenantId } = tenants.archive;
      const res = await client.request('PATCH', '/v1/sessions/idle', { key, body: { archived: false } });
      expect([res.status, res.body.archivedAt]).toEqual([200, null]);
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.now() - 60_000);
      expect((await client.append(key, 'idle', { events: [userMessage('back to work')] })).status).toBe(201);
      // A session idle for days, archived by a run that reads 'idle' in the same statement (one batch).
      await client.createSession(key, { id: 'sentinel' });
      const sentinel = await openedStream(service.baseUrl, key, 'sentinel');
      await backdate(tenantId, ['sentinel'], 3);
      expect(await sentinel.endReason('the sentinel archived')).toBe('session_archived');
      expect((await getSession(key, 'sentinel')).body.archivedAt).not.toBeNull();
      expect((await getSession(key, 'idle')).body.archivedAt).toBeNull();
      await waitFor(async () => (await retired('archive')) >= 2, 'the sentinel counted');
      expect(await retired('archive')).toBe(2);
    });

    it('an unknown session is a 404 on PATCH {archived}, and an empty PATCH is a 400', async () => {
      const { key } = tenants.archive;
      expectProblem(await client.request('PATCH', '/v1/sessions/nope', { key, body: { archived: false } }), 404, 'session_not_found');
      expectProblem(await client.request('PATCH', '/v1/sessions/active', { key, body: {} }), 400, 'validation_failed');
      // Another tenant's session is a 404 too, whatever the body.
      for (const body of [{ archived: true }, {}]) {
        expectProblem(await client.request('PATCH', '/v1/sessions/active', { key: tenants.keep.key, body }), 404, 'session_not_found');
      }
    });
  });
});
