import { Client, userMessage } from '../support/client';
import { PostgresCluster, startPostgresCluster } from '../support/postgres-cluster';
import { startService, TestService, waitFor } from '../support/service';

/**
 * Context and event reads on a read replica: a private primary and
 * a real streaming standby of it (pg_basebackup -R), the API with
 * APP_READ_DATABASE_URL on the standby. Pausing WAL replay on the standby
 * makes it lag on demand: a read without `minSeq` is then served stale by the
 * replica, one with the `minSeq` of the last append comes from the primary.
 */
describe('faults: a read replica with read-your-writes', () => {
  let primary: PostgresCluster;
  let standby: PostgresCluster;
  let service: TestService;
  let client: Client;
  let key: string;
  let sessionId: string;

  const context = (query = '') => client.request('GET', `/v1/sessions/${sessionId}/context${query}`, { key });
  const events = (query = '') => client.request('GET', `/v1/sessions/${sessionId}/events${query}`, { key });
  const texts = (body: { messages: unknown[] }) => JSON.stringify(body.messages);

  beforeAll(async () => {
    primary = await startPostgresCluster();
    standby = await startPostgresCluster({ hot_standby: 'on' }, primary);
    const replicaUrl = new URL(standby.url('session_store'));
    replicaUrl.username = 'session_store_app';
    service = await startService({
      worker: false,
      database: { url: primary.url('session_store'), drop: async () => undefined },
      env: { APP_READ_DATABASE_URL: replicaUrl.toString() },
    });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('replica'));
    sessionId = (await client.createSession(key)).id;
    expect((await client.append(key, sessionId, { events: [userMessage('replicated before the pause')] })).status).toBe(201);
    // The standby has replayed the session when a plain read (served there) shows the append.
    await waitFor(async () => (await context()).body.headSeq === 2, 'the standby to replay the first append', 20_000);
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await standby?.destroy();
    await primary?.destroy();
  });

  it('serves a read without minSeq from the replica, stale while it lags; minSeq reads the primary', async () => {
    await standby.sql('SELECT pg_wal_replay_pause()');
    const appended = await client.append(key, sessionId, { events: [userMessage('written while the replica is paused')] });
    expect(appended.status).toBe(201);
    const head = appended.body.headSeq as number;

    const stale = await context();
    expect(stale.status).toBe(200);
    expect(stale.body.headSeq).toBe(head - 1);
    expect(texts(stale.body)).not.toContain('written while the replica is paused');

    const fresh = await context(`?minSeq=${head}`);
    expect(fresh.body.headSeq).toBe(head);
    expect(texts(fresh.body)).toContain('written while the replica is paused');

    expect((await events()).body.headSeq).toBe(head - 1);
    const freshEvents = await events(`?minSeq=${head}`);
    expect(freshEvents.body.headSeq).toBe(head);
    expect(freshEvents.body.events.at(-1).data.message.parts[0].text).toBe('written while the replica is paused');

    // atSeq beyond what the replica holds is read where it exists.
    expect((await context(`?atSeq=${head}`)).body.headSeq).toBe(head);
  });

  it('reads a session the replica does not hold yet from the primary', async () => {
    const created = await client.createSession(key);
    const res = await client.request('GET', `/v1/sessions/${created.id}/context`, { key });
    expect(res.status).toBe(200);
    expect(res.body.headSeq).toBe(1);
    // An unknown session is still a 404 (asked of both).
    expect((await client.request('GET', '/v1/sessions/nope/events', { key })).status).toBe(404);
  });

  it('catches up once replay resumes', async () => {
    await standby.sql('SELECT pg_wal_replay_resume()');
    await waitFor(async () => (await events()).body.headSeq === 3, 'the standby to catch up', 20_000);
    expect(texts((await context()).body)).toContain('written while the replica is paused');
  });

  it('answers from the primary while the replica is down', async () => {
    await standby.stopFast();
    const res = await context();
    expect(res.status).toBe(200);
    expect(texts(res.body)).toContain('written while the replica is paused');
    expect((await events()).status).toBe(200);
  });

  it('refuses a minSeq that is not a non-negative integer', async () => {
    for (const bad of ['-1', 'x', '1.5']) {
      const res = await context(`?minSeq=${bad}`);
      expect({ bad, status: res.status, code: res.body.code }).toEqual({ bad, status: 400, code: 'validation_failed' });
    }
  });
});
