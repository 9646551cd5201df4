import { Client, expectProblem, userMessage } from './support/client';
import { ADMIN_TOKEN } from './support/env';
import { freePort, ProcessHandle, startReady, startService, TestService } from './support/service';
import { openStream, SseStream } from './support/sse';

/**
 * A live event stream ends when its access does: a key revoked, a tenant
 * suspended or deleted, a session deleted or archived through replica A
 * ends the stream open on replica B with a final `end` event saying why,
 * and nothing appended after the change reaches it. Two API processes share
 * the database and Redis; the heartbeat (which re-reads the session) and
 * the key cache's TTL are a minute long, so only the invalidation message
 * can end a stream while a case waits.
 */
describe('live event stream: access ends, the stream ends', () => {
  let service: TestService;
  let replicaB: ProcessHandle;
  /** Where changes are made. */
  let a: Client;
  /** Where streams are open. */
  let b: Client;
  const streams: SseStream[] = [];

  beforeAll(async () => {
    service = await startService({ worker: false, env: { SSE_HEARTBEAT_MS: '60000', API_KEY_CACHE_TTL_MS: '60000' } });
    a = new Client(service.baseUrl);
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    replicaB = await startReady('api', { ...service.env, PORT: String(port) }, `${baseUrl}/healthz`);
    b = new Client(baseUrl);
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await replicaB?.stop();
    await service?.stop();
  });

  /** A stream open on replica B that has received the session's log so far. */
  async function streamOnB(key: string, sessionId: string, headSeq: number): Promise<SseStream> {
    const { response, stream } = await openStream(b.baseUrl, key, sessionId);
    expect(response.status).toBe(200);
    streams.push(stream!);
    await stream!.untilSeq(headSeq);
    return stream!;
  }

  /** Waits for the server to end the stream (the spec's time limit bounds it) and checks it ended with `end` and the reason, nothing after it. */
  async function expectEnded(stream: SseStream, reason: string, lastSeq: number): Promise<void> {
    await stream.ended;
    const last = stream.messages.filter((m) => m.comment === undefined).at(-1);
    expect(last).toEqual({ event: 'end', data: JSON.stringify({ reason }) });
    expect(stream.events.map((e) => e.seq)).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
  }

  async function tenantWithSession(name: string) {
    const tenant = await a.createTenant(name);
    const session = await a.createSession(tenant.key, { id: `${name}-session` });
    const appended = await a.append(tenant.key, session.id, { events: [userMessage('before the change')] });
    expect(appended.status).toBe(201);
    return { ...tenant, sessionId: session.id as string, headSeq: appended.body.headSeq as number };
  }

  const admin = (method: string, path: string, body?: unknown) => a.request(method, `/v1/admin/tenants${path}`, { key: ADMIN_TOKEN, body });

  it('a revoked key: its stream ends with key_revoked; a stream of another key of the tenant goes on', async () => {
    const tenant = await tenantWithSession('revoked');
    const issued = await admin('POST', `/${tenant.tenantId}/api-keys`, { name: 'second' });
    expect(issued.status).toBe(201);
    const other = issued.body.key as string;
    const revokedStream = await streamOnB(tenant.key, tenant.sessionId, tenant.headSeq);
    const otherStream = await streamOnB(other, tenant.sessionId, tenant.headSeq);

    expect((await admin('DELETE', `/${tenant.tenantId}/api-keys/${tenant.keyId}`)).status).toBe(204);
    const after = await a.append(other, tenant.sessionId, { events: [userMessage('after the revocation')] });
    expect(after.status).toBe(201);

    await expectEnded(revokedStream, 'key_revoked', tenant.headSeq);
    await otherStream.untilSeq(after.body.headSeq);
    expect(otherStream.messages.some((m) => m.event === 'end')).toBe(false);
  });

  it("a suspended tenant: its streams end with tenant_suspended; another tenant's stream goes on", async () => {
    const tenant = await tenantWithSession('suspended');
    const bystander = await tenantWithSession('bystander');
    const stream = await streamOnB(tenant.key, tenant.sessionId, tenant.headSeq);
    const bystanderStream = await streamOnB(bystander.key, bystander.sessionId, bystander.headSeq);

    expect((await admin('PATCH', `/${tenant.tenantId}`, { suspended: true })).status).toBe(200);
    await expectEnded(stream, 'tenant_suspended', tenant.headSeq);

    const after = await a.append(bystander.key, bystander.sessionId, { events: [userMessage('after the suspension')] });
    await bystanderStream.untilSeq(after.body.headSeq);
    expect(bystanderStream.messages.some((m) => m.event === 'end')).toBe(false);

    // Reinstated, the key streams again.
    expect((await admin('PATCH', `/${tenant.tenantId}`, { suspended: false })).status).toBe(200);
    const again = await streamOnB(tenant.key, tenant.sessionId, tenant.headSeq);
    again.close();
  });

  it('a deleted tenant: its streams end with tenant_deleted', async () => {
    const tenant = await tenantWithSession('deleted-tenant');
    const stream = await streamOnB(tenant.key, tenant.sessionId, tenant.headSeq);
    expect((await admin('DELETE', `/${tenant.tenantId}`)).status).toBe(204);
    await expectEnded(stream, 'tenant_deleted', tenant.headSeq);
  });

  it('a deleted session: its streams end with session_deleted', async () => {
    const tenant = await tenantWithSession('deleted-session');
    const stream = await streamOnB(tenant.key, tenant.sessionId, tenant.headSeq);
    expect((await a.request('DELETE', `/v1/sessions/${tenant.sessionId}`, { key: tenant.key })).status).toBe(204);
    await expectEnded(stream, 'session_deleted', tenant.headSeq);
  });

  it('an archived session: its streams end with session_archived, and a new one is refused with 409 until it is unarchived', async () => {
    const tenant = await tenantWithSession('archived');
    const stream = await streamOnB(tenant.key, tenant.sessionId, tenant.headSeq);
    expect((await a.request('PATCH', `/v1/sessions/${tenant.sessionId}`, { key: tenant.key, body: { archived: true } })).status).toBe(200);
    await expectEnded(stream, 'session_archived', tenant.headSeq);

    const refused = await b.request('GET', `/v1/sessions/${tenant.sessionId}/events/stream`, { key: tenant.key });
    expectProblem(refused, 409, 'session_archived');
    expect((await a.request('PATCH', `/v1/sessions/${tenant.sessionId}`, { key: tenant.key, body: { archived: false } })).status).toBe(200);
    const again = await streamOnB(tenant.key, tenant.sessionId, tenant.headSeq);
    again.close();
  });
});
