import { ADMIN_TOKEN } from './support/env';
import { Client } from './support/client';
import { startService, TestService } from './support/service';

/** Tenant defaults (admin) and per-session config changes, resolved preset ← tenant ← session. */
describe('configuration changes', () => {
  let service: TestService;
  let client: Client;
  let tenantId: string;
  let key: string;

  beforeAll(async () => {
    service = await startService({ worker: false });
    client = new Client(service.baseUrl);
    ({ tenantId, key } = await client.createTenant('config'));
  });
  afterAll(() => service?.stop());

  const patchTenant = (config: unknown, token = ADMIN_TOKEN) =>
    client.request('PATCH', `/v1/admin/tenants/${tenantId}`, { key: token, body: { config } });

  it('tenant defaults apply to its sessions; a bad default is refused and changes nothing', async () => {
    const before = await client.createSession(key);
    expect((await client.request('GET', `/v1/sessions/${before.id}`, { key })).body.preset).toBe('spec-000');

    const changed = await patchTenant({ preset: 'opencode' });
    expect(changed.status).toBe(200);
    expect(changed.body.config).toEqual({ preset: 'opencode' });
    const after = await client.createSession(key);
    expect((await client.request('GET', `/v1/sessions/${after.id}`, { key })).body.preset).toBe('opencode');

    const bad = await patchTenant({ compaction: { thresholdRatio: 7 } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_config');
    expect((await patchTenant({ compaction: { auto: true } })).body.config).toEqual({ preset: 'opencode', compaction: { auto: true } });

    expect((await patchTenant({ preset: 'codex' }, key)).status).toBe(401);
    expect((await client.request('PATCH', `/v1/admin/tenants/00000000-0000-4000-8000-000000000000`, { key: ADMIN_TOKEN, body: { config: {} } })).status).toBe(404);
    await patchTenant({ preset: 'spec-000' });
  });

  it('a session config patch is logged as session.config_changed and changes the figures', async () => {
    const session = await client.createSession(key);
    const before = (await client.request('GET', `/v1/sessions/${session.id}`, { key })).body;
    const res = await client.request('PATCH', `/v1/sessions/${session.id}`, { key, body: { config: { compaction: { thresholdRatio: 0.5 } } } });
    expect(res.status).toBe(200);
    expect(res.body.config).toEqual({ compaction: { thresholdRatio: 0.5 } });
    expect(res.body.tokens.threshold).toBe(Math.floor(before.tokens.usable * 0.5));
    const events = await client.allEvents(key, session.id);
    expect(events.map((e) => e.type)).toEqual(['session.created', 'session.config_changed']);
    expect(events[1].data).toEqual({ patch: { compaction: { thresholdRatio: 0.5 } } });
  });

  it('refuses a patch that does not validate, or that leaves an unknown model without limits, writing nothing', async () => {
    const session = await client.createSession(key, { model: 'in-house-llm', config: { limits: { context: 32000, output: 4000 } } });
    for (const [config, status, code] of [
      [{ compaction: { strategy: 'magic' } }, 400, 'invalid_config'],
      [{ nonsense: true }, 400, 'invalid_config'],
      [{ limits: { context: null } }, 422, 'unknown_model'],
    ] as const) {
      const res = await client.request('PATCH', `/v1/sessions/${session.id}`, { key, body: { config } });
      expect([res.status, res.body.code]).toEqual([status, code]);
    }
    expect((await client.allEvents(key, session.id)).map((e) => e.type)).toEqual(['session.created']);
    expect((await client.request('GET', `/v1/sessions/${session.id}`, { key })).body.config).toEqual({ limits: { context: 32000, output: 4000 } });
  });
});
