import { Client, expectProblem, userMessage } from './support/client';
import { freePort, ProcessHandle, startReady, startService, TestService } from './support/service';

describe('GET /metrics', () => {
  let service: TestService;
  let client: Client;

  beforeAll(async () => {
    service = await startService({ worker: false });
    client = new Client(service.baseUrl);
  });
  afterAll(() => service?.stop());

  it('exposes request latency by route template, appended events and queue depths, without ids', async () => {
    const { key } = await client.createTenant('metrics');
    const session = await client.createSession(key, { id: 'metrics-session-7f3a' });
    expect((await client.append(key, session.id, { events: [userMessage('one'), userMessage('two')] })).status).toBe(201);

    const res = await client.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text: string = res.text;
    expect(text).toMatch(/http_request_duration_seconds_count\{method="POST",route="\/v1\/sessions\/:sessionId\/events",status="201"\} 1/);
    expect(text).toMatch(/^session_store_appended_events_total 2$/m);
    expect(text).toMatch(/session_store_queue_jobs\{queue="session-maintenance",state="waiting"\} \d+/);
    expect(text).toMatch(/session_store_queue_jobs\{queue="session-search",state="waiting"\} \d+/);
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).not.toContain('metrics-session-7f3a');
  });

  it("counts an import's events as appended, like any writer's", async () => {
    const appended = async () => Number(/^session_store_appended_events_total (\d+)$/m.exec((await client.request('GET', '/metrics')).text)?.[1]);
    const { key } = await client.createTenant('metrics-import');
    const session = await client.createSession(key, { id: 'metrics-import' });
    expect((await client.append(key, session.id, { events: [userMessage('one')] })).status).toBe(201);
    const exported = await client.request('GET', `/v1/sessions/${session.id}/export`, { key });
    const before = await appended();
    const imported = await client.request('POST', '/v1/sessions/import?id=metrics-import-copy', { key, rawBody: exported.text, headers: { 'content-type': 'application/x-ndjson' } });
    expect({ status: imported.status, events: imported.body.events }).toEqual({ status: 201, events: 2 });
    expect(await appended()).toBe(before + 2);
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
  let service: TestService;
  let client: Client;
  let worker: ProcessHandle;
  let workerUrl: string;

  beforeAll(async () => {
    service = await startService({ worker: false, env: { METRICS_TOKEN } });
    client = new Client(service.baseUrl);
    const port = await freePort();
    workerUrl = `http://127.0.0.1:${port}`;
    worker = await startReady('worker', { ...service.env, WORKER_PORT: String(port) }, `${workerUrl}/healthz`);
  });
  afterAll(async () => {
    await worker?.stop();
    await service?.stop();
  });

  it('the API answers 401 without the token or with a wrong one, the metrics with it', async () => {
    expectProblem(await client.request('GET', '/metrics'), 401, 'invalid_metrics_token');
    expectProblem(await client.request('GET', '/metrics', { key: 'wrong-metrics-token-0123456789' }), 401, 'invalid_metrics_token');
    const res = await client.request('GET', '/metrics', { key: METRICS_TOKEN });
    expect(res.status).toBe(200);
    expect(res.text).toContain('process_cpu_user_seconds_total');
    expect((await client.request('GET', '/healthz')).status).toBe(200);
  });

  it("the worker's listener does the same, its probes stay open", async () => {
    const open = await fetch(`${workerUrl}/metrics`);
    expect(open.status).toBe(401);
    expect(open.headers.get('content-type')).toBe('application/problem+json');
    expect(await open.json()).toMatchObject({ status: 401, code: 'invalid_metrics_token' });
    const authed = await fetch(`${workerUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(authed.status).toBe(200);
    expect(await authed.text()).toContain('process_cpu_user_seconds_total');
    expect((await fetch(`${workerUrl}/readyz`)).status).toBe(200);
  });
});
