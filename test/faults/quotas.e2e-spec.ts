import { request as httpRequest } from 'node:http';
import { ADMIN_TOKEN } from '../support/env';
import { Client, expectProblem, userMessage } from '../support/client';
import { connectAs } from '../support/database';
import { startService, TestService } from '../support/service';

/**
 * A request declaring a Content-Length of about a terabyte that sends `sent` bytes and then waits for
 * the answer (or the connection's end); node:http, since fetch will not send fewer bytes than declared.
 */
function lyingRequest(baseUrl: string, path: string, key: string, contentType: string, sent: number) {
  return new Promise<{ status?: number; code?: string; error?: string }>((resolve) => {
    const req = httpRequest(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType, 'content-length': '999999999999' },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode, code: JSON.parse(Buffer.concat(parts).toString()).code });
      });
    });
    req.on('error', (error) => resolve({ error: error.message }));
    req.write(Buffer.alloc(sent, 'x'));
  });
}

const toolUse = (callId: string, output: string, id: string) => [
  { id: `${id}-call`, type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name: 'bash', input: { cmd: 'run' } }] } } },
  { id: `${id}-result`, type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, output }] } } },
];

/**
 * Per-tenant limits and quotas set through the admin API: a
 * request rate and a byte rate answered with 429 and the RateLimit
 * headers, a cap on the tenant's pooled connections, storage quotas
 * answered with 413 `quota_exceeded` and nothing written, and the usage
 * the admin API reports.
 */
describe('faults: per-tenant limits and quotas', () => {
  let service: TestService;
  let client: Client;

  beforeAll(async () => {
    service = await startService({ worker: false, env: { TENANT_CONNECTION_WAIT_MS: '1000' } });
    client = new Client(service.baseUrl);
  });
  afterAll(async () => {
    await service?.stop();
  });

  const admin = (method: string, path: string, body?: unknown) => client.request(method, `/v1/admin/tenants${path}`, { key: ADMIN_TOKEN, body });
  const usageOf = async (tenantId: string) => (await admin('GET', `/${tenantId}`)).body.usage;

  it('a request rate set for one tenant answers its excess with 429, Retry-After and RateLimit headers, and can be dropped again', async () => {
    const { tenantId, key } = await client.createTenant('slow');
    const other = await client.createTenant('other');
    const set = await admin('PATCH', `/${tenantId}`, { limits: { requestsPerSecond: 3 } });
    expect(set.status).toBe(200);
    expect(set.body.limits.requestsPerSecond).toBe(3);
    expect(set.body.overrides).toEqual({ limits: { requestsPerSecond: 3 }, quotas: {} });

    const burst = await Promise.all(Array.from({ length: 10 }, () => client.request('GET', '/v1/sessions', { key })));
    const limited = burst.filter((r) => r.status === 429);
    expect(burst.filter((r) => r.status === 200).length).toBeLessThanOrEqual(3);
    expect(limited.length).toBeGreaterThanOrEqual(7);
    expectProblem(limited[0], 429, 'tenant_rate_limited');
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited[0].headers.get('ratelimit-policy')).toMatch(/^"requests";q=3;w=1(, |$)/);
    expect(limited[0].headers.get('ratelimit')).toMatch(/^"requests";r=0;t=1$/);
    // Another tenant keeps the default.
    const others = await Promise.all(Array.from({ length: 10 }, () => client.request('GET', '/v1/sessions', { key: other.key })));
    expect(others.map((r) => r.status)).toEqual(Array(10).fill(200));

    const dropped = await admin('PATCH', `/${tenantId}`, { limits: { requestsPerSecond: null } });
    expect(dropped.body.overrides.limits).toEqual({});
    await new Promise((r) => setTimeout(r, 1100));
    const after = await Promise.all(Array.from({ length: 10 }, () => client.request('GET', '/v1/sessions', { key })));
    expect(after.map((r) => r.status)).toEqual(Array(10).fill(200));
  });

  it('a byte rate lets one large body overdraw it, then refuses the tenant’s bodies until the overdraft is paid back', async () => {
    const { tenantId, key } = await client.createTenant('bytes');
    await client.createSession(key, { id: 's' });
    await admin('PATCH', `/${tenantId}`, { limits: { bytesPerSecond: 1000 } });

    // A 2,619-byte body against a bucket of 1,000 bytes: admitted, with 1,619 bytes (2 s) of overdraft.
    expect((await client.append(key, 's', { events: [userMessage('x'.repeat(2500), 'big')] })).status).toBe(201);
    const refused = await client.append(key, 's', { events: [userMessage('small', 'small')] });
    expectProblem(refused, 429, 'tenant_byte_rate_limited');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    expect(refused.headers.get('ratelimit-policy')).toContain('"bytes";q=1000;w=1');
    expect(refused.headers.get('ratelimit')).toMatch(/"bytes";r=0;t=[12]$/);
    // Requests without a body are not charged.
    expect((await client.request('GET', '/v1/sessions/s', { key })).status).toBe(200);

    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 100));
    expect((await client.append(key, 's', { events: [userMessage('small', 'small')] })).status).toBe(201);
    expect((await client.allEvents(key, 's')).map((e) => e.id).slice(1)).toEqual(['big', 'small']);
  });

  it('a lying Content-Length is never charged: the tenant’s next append and upload go through, and a refusal costs at most one second', async () => {
    const { key } = await client.createTenant('liar');
    await client.createSession(key, { id: 's' });
    // And a small byte rate, where what a refused request had read is charged, at most one second's worth.
    const small = await client.createTenant('small-liar');
    await client.createSession(small.key, { id: 's' });
    await admin('PATCH', `/${small.tenantId}`, { limits: { bytesPerSecond: 1000 } });
    // Each answer waits for the server to drop the rest of the body, so both run at once.
    const [upload, refused] = await Promise.all([
      lyingRequest(service.baseUrl, '/v1/sessions/s/tool-outputs', key, 'text/plain', 100),
      lyingRequest(service.baseUrl, '/v1/sessions/s/tool-outputs', small.key, 'text/plain', 5000),
    ]);
    expect([upload.status, upload.code]).toEqual([413, 'tool_output_too_large']);
    expect([refused.status, refused.code]).toEqual([413, 'tool_output_too_large']);

    // The default byte rate: a declared terabyte once cost about four hours of 429s.
    const append = await lyingRequest(service.baseUrl, '/v1/sessions/s/events', key, 'text/plain', 100);
    expect(append.status).toBeGreaterThanOrEqual(400);
    expect(append.status).not.toBe(429);
    expect((await client.append(key, 's', { events: [userMessage('after the lie', 'after')] })).status).toBe(201);
    const stored = await client.request('POST', '/v1/sessions/s/tool-outputs', { key, rawBody: 'line one\nline two\n', headers: { 'content-type': 'text/plain' } });
    expect(stored.status).toBe(201);

    const next = await client.append(small.key, 's', { events: [userMessage('after the lie', 'after')] });
    if (next.status !== 201) {
      expectProblem(next, 429, 'tenant_byte_rate_limited');
      expect(Number(next.headers.get('retry-after'))).toBeLessThanOrEqual(2);
    }
  });

  it('a tenant’s transactions hold at most its connections; beyond, a request waits, then gets 429, while other tenants go on', async () => {
    const { tenantId, key } = await client.createTenant('capped');
    const other = await client.createTenant('uncapped');
    await client.createSession(key, { id: 'locked' });
    await admin('PATCH', `/${tenantId}`, { limits: { maxConnections: 1 } });
    const owner = await connectAs(service.dbUrl);
    try {
      // The append takes the tenant's one connection and waits, inside its transaction, for this row lock.
      await owner.query('BEGIN');
      await owner.query(`SELECT 1 FROM sessions WHERE tenant_id = $1 AND session_id = 'locked' FOR UPDATE`, [tenantId]);
      const stuck = client.append(key, 'locked', { events: [userMessage('waits for the lock', 'stuck')] });
      for (let waiting = 0; waiting === 0; await new Promise((r) => setTimeout(r, 20))) {
        ({ rows: [{ waiting }] } = await owner.query(`SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`));
      }

      const t0 = Date.now();
      const refused = await client.request('GET', '/v1/sessions', { key });
      expectProblem(refused, 429, 'tenant_concurrency_limited');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect((await client.request('GET', '/v1/sessions', { key: other.key })).status).toBe(200);

      await owner.query('ROLLBACK');
      expect((await stuck).status).toBe(201);
      expect((await client.request('GET', '/v1/sessions', { key })).status).toBe(200);
    } finally {
      await owner.end();
    }
  });

  it('storage quotas refuse a write that would exceed them with 413 quota_exceeded, writing nothing; usage shows in the admin API', async () => {
    const { tenantId, key } = await client.createTenant('quota');
    await client.createSession(key, { id: 'q' });
    expect((await client.append(key, 'q', { events: [userMessage('hello', 'm1')] })).status).toBe(201);
    const start = await usageOf(tenantId);
    expect(start.eventBytes).toBeGreaterThan(0);
    expect(start.toolOutputBytes).toBe(0);

    // Room for a small event, not for a 2 KB one.
    const set = await admin('PATCH', `/${tenantId}`, { quotas: { eventBytes: start.eventBytes + 1000 } });
    expect(set.body.quotas).toEqual({ eventBytes: start.eventBytes + 1000, toolOutputBytes: 0 });
    expect((await client.append(key, 'q', { events: [userMessage('fits', 'm2')] })).status).toBe(201);
    const fitted = await usageOf(tenantId);
    expect(fitted.eventBytes).toBeGreaterThan(start.eventBytes);
    const over = await client.append(key, 'q', { events: [userMessage('y'.repeat(2000), 'm3')] });
    expectProblem(over, 413, 'quota_exceeded');
    expect(over.body).toMatchObject({ quota: 'eventBytes', limit: start.eventBytes + 1000 });
    expect(await usageOf(tenantId)).toEqual(fitted);

    // Tool outputs count apart: one sent in the append that its view cuts (here its one long line) is stored in the cache, not in the event.
    await admin('PATCH', `/${tenantId}`, { quotas: { eventBytes: null, toolOutputBytes: 4000 } });
    const tooBig = await client.append(key, 'q', { events: toolUse('c1', 'z'.repeat(5000), 't1') });
    expectProblem(tooBig, 413, 'quota_exceeded');
    expect(tooBig.body).toMatchObject({ quota: 'toolOutputBytes', limit: 4000, usage: 5000 });
    expect(await usageOf(tenantId)).toEqual(fitted);
    expect((await client.allEvents(key, 'q')).map((e) => e.id)).toEqual([expect.any(String), 'm1', 'm2']);
    expect((await client.append(key, 'q', { events: toolUse('c2', 'w'.repeat(3000), 't2') })).status).toBe(201);
    const withOutput = await usageOf(tenantId);
    expect(withOutput.toolOutputBytes).toBe(3000);

    // The list shows the same figures; deleting the session frees its bytes.
    const listed = await admin('GET', '?limit=1000');
    expect(listed.status).toBe(200);
    expect(listed.body.tenants.find((t: { tenantId: string }) => t.tenantId === tenantId).usage).toEqual(withOutput);
    expect((await client.request('DELETE', '/v1/sessions/q', { key })).status).toBe(204);
    expect(await usageOf(tenantId)).toEqual({ eventBytes: 0, toolOutputBytes: 0 });
  });

  it('lists tenants page by page and refuses bad overrides, changing nothing', async () => {
    const { tenantId } = await client.createTenant('paged');
    const first = await admin('GET', '?limit=1');
    expect(first.body.tenants).toHaveLength(1);
    expect(first.body.nextCursor).toBe(first.body.tenants[0].tenantId);
    const second = await admin('GET', `?limit=1&cursor=${first.body.nextCursor}`);
    expect(second.body.tenants[0].tenantId > first.body.tenants[0].tenantId).toBe(true);

    const before = (await admin('GET', `/${tenantId}`)).body;
    expect(before).toMatchObject({ tenantId, name: 'paged', usage: { eventBytes: 0, toolOutputBytes: 0 }, overrides: { limits: {}, quotas: {} } });
    for (const body of [{}, { limits: { requestsPerSecond: -1 } }, { limits: { bogus: 1 } }, { quotas: { eventBytes: 1.5 } }, { limits: 5 }]) {
      expectProblem(await admin('PATCH', `/${tenantId}`, body), 400, 'validation_failed');
    }
    expect((await admin('GET', `/${tenantId}`)).body).toEqual(before);
    expect((await admin('GET', '/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await client.request('GET', `/v1/admin/tenants/${tenantId}`, { key: 'not-the-admin-token' })).status).toBe(401);
  });
});
