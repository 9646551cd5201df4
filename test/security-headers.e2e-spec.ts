import { Client, expectProblem, userMessage } from './support/client';
import { startService, TestService } from './support/service';

/** nosniff on every answer; no-store on every /v1/ answer, whatever its status. */
describe('security headers', () => {
  let service: TestService;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    service = await startService({ worker: false });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('headers'));
  });
  afterAll(() => service?.stop());

  const expectHeaders = (res: { headers: Headers }, cacheControl: string | null) => {
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe(cacheControl);
  };

  it('marks session content, problems included, as not to be sniffed or stored', async () => {
    const session = await client.createSession(key);
    const appended = await client.append(key, session.id, { events: [userMessage('secret plans')] });
    expect(appended.status).toBe(201);
    expectHeaders(appended, 'no-store');

    const read = await client.request('GET', `/v1/sessions/${session.id}/events`, { key });
    expect(read.status).toBe(200);
    expectHeaders(read, 'no-store');

    const missing = await client.request('GET', '/v1/sessions/no-such-session', { key });
    expectProblem(missing, 404, 'session_not_found');
    expectHeaders(missing, 'no-store');

    const unauthenticated = await client.request('GET', '/v1/sessions', { key: 'nope' });
    expectProblem(unauthenticated, 401, 'invalid_api_key');
    expectHeaders(unauthenticated, 'no-store');
  });

  it('sends nosniff outside /v1/ too', async () => {
    const health = await client.request('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
    const noRoute = await client.request('GET', '/nothing-here');
    expectProblem(noRoute, 404, 'route_not_found');
    expect(noRoute.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
