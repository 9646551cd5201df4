import { Client, userMessage } from './support/client';
import { startService, TestService } from './support/service';

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
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).not.toContain('metrics-session-7f3a');
  });
});
