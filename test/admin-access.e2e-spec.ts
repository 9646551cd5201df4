import { Client, expectProblem } from './support/client';
import { ADMIN_TOKEN, REDIS_URL } from './support/env';
import { exited, freePort, ProcessHandle, startProcess, startService, TestService } from './support/service';

/** The admin API is guarded like tenant keys: failed tokens from one address are limited. */
describe('admin access', () => {
  let service: TestService;
  let client: Client;
  // A build that accepted the short token would keep serving: ended in afterAll either way.
  let production: ProcessHandle | undefined;

  beforeAll(async () => {
    service = await startService({ worker: false });
    client = new Client(service.baseUrl);
  });
  afterAll(async () => {
    await production?.kill();
    await service?.stop();
  });

  it('answers 429 with Retry-After after AUTH_FAILURE_LIMIT wrong admin tokens from one address, even to the right token', async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 25; i++) {
      last = await client.request('GET', '/v1/admin/tenants', { key: `wrong-admin-token-${i}-0123456789` });
      statuses.push(last.status);
    }
    // The default limit (20): the failure that reaches it is itself refused.
    expect(statuses.slice(0, 19)).toEqual(Array(19).fill(401));
    expect(statuses.slice(19)).toEqual(Array(6).fill(429));
    expectProblem(last!, 429, 'too_many_auth_failures');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);

    const right = await client.request('GET', '/v1/admin/tenants', { key: ADMIN_TOKEN });
    expectProblem(right, 429, 'too_many_auth_failures');
  });

  it('refuses to start in production with an ADMIN_TOKEN shorter than 32 characters, naming it on one line', async () => {
    const api = startProcess('api', {
      ...service.env,
      NODE_ENV: 'production',
      ADMIN_TOKEN: 'a'.repeat(31),
      PORT: String(await freePort()),
      REDIS_URL,
    });
    production = api;
    await exited(api.child);
    expect(api.child.exitCode).toBe(1);
    const lines = api.output().split('\n').filter((line) => line.includes('ADMIN_TOKEN'));
    expect(lines).toEqual(['  ADMIN_TOKEN must be at least 32 characters in production']);
  });
});
