import { Client as PgClient } from 'pg';
import { Client } from '../support/client';
import { connectAs } from '../support/database';
import { startService, TestService } from '../support/service';

/**
 * A flood of bad API keys from one address: after AUTH_FAILURE_LIMIT
 * failures it gets 429 with Retry-After, and from then on costs the
 * database nothing (no api_keys look-up, no row written). Look-ups and
 * writes are counted from PostgreSQL's cumulative statistics, which an idle
 * backend flushes within 10 s (PGSTAT_IDLE_INTERVAL): hence the waits.
 */
describe('faults: bad-key floods', () => {
  const LIMIT = 10;
  let service: TestService;
  let client: Client;
  let owner: PgClient;
  let tenantId: string;

  beforeAll(async () => {
    service = await startService({ worker: false, env: { AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW_S: '60' } });
    client = new Client(service.baseUrl);
    ({ tenantId } = await client.createTenant());
    owner = await connectAs(service.dbUrl);
  });
  afterAll(async () => {
    await owner?.end();
    await service?.stop();
  });

  const settle = () => new Promise((r) => setTimeout(r, 11_000));
  const counters = async () => {
    await owner.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await owner.query(
      `SELECT (SELECT coalesce(idx_scan, 0) + seq_scan FROM pg_stat_user_tables WHERE relname = 'api_keys') AS key_lookups,
              (SELECT tup_inserted + tup_updated + tup_deleted FROM pg_stat_database WHERE datname = current_database()) AS writes`,
    );
    return { keyLookups: Number(rows[0].key_lookups), writes: Number(rows[0].writes) };
  };

  it('answers 429 with Retry-After after the limit, without touching the database', async () => {
    // A well-formed key of a real tenant with a wrong secret: each one would cost a look-up.
    const badKey = `sst_${tenantId.replace(/-/g, '')}_${'A'.repeat(43)}`;
    const before = await counters();
    const first = [];
    for (let i = 0; i < LIMIT; i++) first.push((await client.request('GET', '/v1/sessions', { key: badKey })).status);
    expect(first.slice(0, LIMIT - 1).every((s) => s === 401)).toBe(true);
    expect(first[LIMIT - 1]).toBe(429);
    await settle();
    const limited = await counters();
    expect(limited.keyLookups - before.keyLookups).toBeGreaterThanOrEqual(LIMIT);

    const flood = await Promise.all(Array.from({ length: 200 }, () => client.request('GET', '/v1/sessions', { key: badKey })));
    expect(flood.every((r) => r.status === 429)).toBe(true);
    expect(flood[0].body).toMatchObject({ status: 429, code: 'too_many_auth_failures' });
    expect(Number(flood[0].headers.get('retry-after'))).toBeGreaterThan(0);
    await settle();
    const after = await counters();
    expect(after.keyLookups).toBe(limited.keyLookups);
    expect(after.writes).toBe(limited.writes);
  });
});
