import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import { Agent, agentSession } from '../support/agent-script';
import { Client, userMessage } from '../support/client';
import { createTestDatabase } from '../support/database';
import { ADMIN_TOKEN } from '../support/env';
import { LlmStub, startLlmStub } from '../support/llm-stub';
import { RedisCluster, startRedisCluster } from '../support/redis-cluster';
import { freePort, ProcessHandle, startProcess, waitFor } from '../support/service';

/**
 * Replicas on a Redis Cluster: three masters, two API and two
 * worker processes, one database. Appends and compactions go through both
 * APIs; a key revoked or a limit set through one applies on the other at
 * once (pub/sub, not the cache TTL, which is set to a minute here); a
 * tenant's request rate holds across both; a worker killed while it holds
 * jobs leaves them to the other.
 */
describe('faults: two API and two worker replicas on a Redis Cluster', () => {
  /** What docs/scaling.md promises for an invalidation to reach another replica (pub/sub latency; the TTL is 60 s here). */
  const INVALIDATION_BOUND_MS = 1000;
  const SLOW_SUMMARY_MS = 1500;
  let redis: RedisCluster;
  let stub: LlmStub;
  let db: { url: string; drop: () => Promise<void> };
  let env: Record<string, string>;
  let prefix: string;
  const apis: ProcessHandle[] = [];
  const workers: ProcessHandle[] = [];
  let a: Client;
  let b: Client;
  let tenant: { tenantId: string; key: string; keyId: string };

  const startApi = async (): Promise<Client> => {
    const port = await freePort();
    const api = startProcess('api', { ...env, PORT: String(port) });
    apis.push(api);
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${baseUrl}/healthz`)).ok, 'API /healthz', 30_000, api);
    return new Client(baseUrl);
  };
  const startWorker = async (): Promise<ProcessHandle> => {
    const port = await freePort();
    const worker = startProcess('worker', { ...env, WORKER_PORT: String(port) });
    workers.push(worker);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 'worker start', 30_000, worker);
    return worker;
  };

  const connectCluster = async (): Promise<Cluster> => {
    const cluster = new Cluster(redis.ports.map((port) => ({ host: '127.0.0.1', port })));
    await new Promise((resolve) => cluster.once('ready', resolve));
    return cluster;
  };

  beforeAll(async () => {
    [redis, stub, db] = await Promise.all([startRedisCluster(), startLlmStub(), createTestDatabase()]);
    prefix = `sst-scale-${randomBytes(4).toString('hex')}`;
    env = {
      NODE_ENV: 'test',
      DATABASE_URL: db.url,
      REDIS_URL: `redis://127.0.0.1:${redis.ports[0]}`,
      REDIS_CLUSTER_NODES: redis.nodes,
      QUEUE_PREFIX: prefix,
      ADMIN_TOKEN,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      OUTBOX_SWEEP_INTERVAL_MS: '200',
      OUTBOX_GRACE_MS: '500',
      // Only the invalidation messages can make a revocation reach the other replica in time.
      API_KEY_CACHE_TTL_MS: '60000',
      OPENAI_BASE_URL: `${stub.url}/v1`,
      OPENAI_API_KEY: 'sk-test',
      WORKER_CONCURRENCY: '2',
      // A killed worker's job is taken over once its lock lapses: seconds, not the default 90.
      SUMMARIZER_TIMEOUT_MS: '3000',
      WORKER_LOCK_DURATION_MS: '4000',
      WORKER_STALLED_INTERVAL_MS: '500',
    };
    // The first API migrates the database; the others start against it.
    a = await startApi();
    [b] = await Promise.all([startApi(), startWorker(), startWorker()]);
    tenant = await a.createTenant('scale-out');
  }, 90_000);

  afterAll(async () => {
    await Promise.all([...apis, ...workers].map((p) => p.stop()));
    await Promise.all([db?.drop(), stub?.close(), redis?.stop()]);
  });

  it('concurrent appends with expectedSeq through both APIs: every acknowledged event once, seqs gap-free', async () => {
    const sessions = ['shared-1', 'shared-2', 'shared-3'];
    for (const id of sessions) await a.createSession(tenant.key, { id });
    const perSession = 60;
    const acked = new Map(sessions.map((id) => [id, new Set<string>()]));
    const writer = async (sessionId: string, w: number) => {
      const api = w % 2 === 0 ? a : b;
      let head = 1;
      for (let n = 0; acked.get(sessionId)!.size < perSession; ) {
        const id = `${sessionId}-w${w}-${n}`;
        const res = await api.append(tenant.key, sessionId, { expectedSeq: head, events: [userMessage(`writer ${w} #${n}`, id)] });
        if (res.status === 201) {
          acked.get(sessionId)!.add(id);
          head = res.body.headSeq;
          n++;
        } else {
          expect([res.status, res.body.code]).toEqual([409, 'version_conflict']);
          head = res.body.headSeq;
          await new Promise((r) => setTimeout(r, Math.random() * 5));
        }
      }
    };
    const started = performance.now();
    await Promise.all(sessions.flatMap((id) => [0, 1, 2, 3].map((w) => writer(id, w))));
    const seconds = (performance.now() - started) / 1000;
    const total = [...acked.values()].reduce((sum, s) => sum + s.size, 0);
    console.log(`scale-out: ${total} acknowledged appends through 2 APIs in ${seconds.toFixed(1)} s (${(total / seconds).toFixed(0)}/s, with conflicts)`);
    for (const id of sessions) {
      const events = await b.allEvents(tenant.key, id);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const ids = events.filter((e) => e.type === 'message.added').map((e) => e.id);
      expect(ids.length).toBe(new Set(ids).size);
      expect(new Set(ids)).toEqual(acked.get(id));
    }
  });

  /** A compaction log check: one compaction.completed per marker, no event id twice, seqs gap-free. */
  const expectOnePivotPerMarker = async (agent: Agent) => {
    const events = await agent.events();
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    const markers = events.filter((e) => e.type === 'compaction.requested').map((e) => e.seq);
    const pivots = events.filter((e) => e.type === 'compaction.completed').map((e) => e.data.markerSeq);
    expect(markers.length).toBeGreaterThan(0);
    expect(pivots).toEqual(markers);
    return events;
  };

  it('compactions requested through both APIs at once: exactly one pivot per marker, nothing lost or duplicated', async () => {
    const agents = await Promise.all(['cmp-1', 'cmp-2', 'cmp-3', 'cmp-4'].map((id) => agentSession(a, tenant.key, id, { compaction: { auto: false } })));
    for (let round = 1; round <= 2; round++) {
      await Promise.all(agents.map(async (agent) => {
        for (let turn = 1; turn <= 2; turn++) await agent.turn(round * 10 + turn);
        const asked = await Promise.all([a, b, a, b].map((api) => api.request('POST', `${agent.path}/compactions`, { key: tenant.key, body: { wait: true } })));
        expect(asked.map((r) => r.status)).toEqual([200, 200, 200, 200]);
        // Requests that met a pending marker joined it: one marker for all four, or a second after the first completed.
        expect(new Set(asked.map((r) => r.body.markerSeq)).size).toBeLessThanOrEqual(2);
        expect(asked.every((r) => r.body.status === 'completed')).toBe(true);
      }));
    }
    for (const agent of agents) await expectOnePivotPerMarker(agent);
  });

  it('a worker killed while it holds compaction jobs: the other worker finishes them, one pivot per marker', async () => {
    const agents = await Promise.all(
      ['kill-1', 'kill-2', 'kill-3', 'kill-4'].map((id) => agentSession(a, tenant.key, id, { compaction: { auto: false, summarizer: 'openai', model: `stub-slow-${SLOW_SUMMARY_MS}` } })),
    );
    for (const agent of agents) await agent.turn(1);
    const before = stub.requests.length;
    const markers = await Promise.all(
      agents.map(async (agent, i) => (await (i % 2 ? b : a).request('POST', `${agent.path}/compactions`, { key: tenant.key, body: {} })).body.markerSeq as number),
    );
    // Four summaries in flight at once with two slots per worker: each worker holds two of the jobs.
    await stub.received((_, i) => i >= before + 3, 'four summarizer calls in flight', 15_000);
    await workers[0].kill();
    const entries = await Promise.all(agents.map((agent, i) => agent.settled(markers[i], 30_000)));
    expect(entries.map((e) => e.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    // The killed worker's two calls were made again by the survivor.
    expect(stub.requests.length - before).toBeGreaterThanOrEqual(6);
    for (const agent of agents) await expectOnePivotPerMarker(agent);
  });

  it('a key revoked through API A is refused by API B within the documented bound; a suspension likewise', async () => {
    const issued = await a.request('POST', `/v1/admin/tenants/${tenant.tenantId}/api-keys`, { key: ADMIN_TOKEN, body: { name: 'short-lived' } });
    expect(issued.status).toBe(201);
    const key = issued.body.key as string;
    // B verifies the key and caches it for API_KEY_CACHE_TTL_MS (a minute).
    expect((await b.request('GET', '/v1/sessions', { key })).status).toBe(200);
    expect((await a.request('DELETE', `/v1/admin/tenants/${tenant.tenantId}/api-keys/${issued.body.keyId}`, { key: ADMIN_TOKEN })).status).toBe(204);
    const revokedAt = performance.now();
    await waitFor(async () => (await b.request('GET', '/v1/sessions', { key })).status === 401, 'B refuses the revoked key', INVALIDATION_BOUND_MS);
    console.log(`scale-out: revocation reached API B within ${(performance.now() - revokedAt).toFixed(0)} ms`);

    const other = await a.createTenant('suspended');
    expect((await b.request('GET', '/v1/sessions', { key: other.key })).status).toBe(200);
    expect((await a.request('PATCH', `/v1/admin/tenants/${other.tenantId}`, { key: ADMIN_TOKEN, body: { suspended: true } })).status).toBe(200);
    await waitFor(async () => (await b.request('GET', '/v1/sessions', { key: other.key })).status === 403, 'B refuses the suspended tenant', INVALIDATION_BOUND_MS);
  });

  it("a tenant's request rate set through API A holds across both APIs", async () => {
    const RATE = 10;
    const SECONDS = 4;
    const limited = await a.createTenant('limited');
    // Both APIs cache the tenant's policy (the default rate) first; the change must reach B's cache too.
    for (const api of [a, b]) expect((await api.request('GET', '/v1/sessions', { key: limited.key })).status).toBe(200);
    const patched = await a.request('PATCH', `/v1/admin/tenants/${limited.tenantId}`, { key: ADMIN_TOKEN, body: { limits: { requestsPerSecond: RATE } } });
    expect(patched.status).toBe(200);
    await waitFor(
      async () => (await b.request('GET', '/v1/sessions', { key: limited.key })).headers.get('ratelimit-policy')?.startsWith(`"requests";q=${RATE};w=1`) === true,
      'B applies the new rate',
      INVALIDATION_BOUND_MS,
    );
    // Eight clients, four per API, asking back to back for SECONDS: admitted requests are counted in one Redis bucket.
    const statuses: Record<number, number> = {};
    const refusedBy = new Set<string>();
    const deadline = performance.now() + SECONDS * 1000;
    // A bucket lives one second and is not touched while the tenant is refused from memory: look while the load runs.
    const bucketKeys = connectCluster().then(async (cluster) => {
      let keys: string[] = [];
      try {
        await waitFor(async () => {
          keys = (await Promise.all(cluster.nodes('master').map((node) => node.keys(`${prefix}:tenant-requests*`)))).flat();
          return keys.includes(`${prefix}:tenant-requests:{${limited.tenantId}}`);
        }, 'the tenant bucket', SECONDS * 1000);
        return keys;
      } finally {
        cluster.disconnect();
      }
    });
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const api = i % 2 ? b : a;
        while (performance.now() < deadline) {
          const res = await api.request('GET', '/v1/sessions', { key: limited.key });
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status === 429) {
            expect(res.body.code).toBe('tenant_rate_limited');
            refusedBy.add(api.baseUrl);
          }
        }
      }),
    );
    console.log(`scale-out: rate ${RATE}/s over ${SECONDS} s through two APIs: ${JSON.stringify(statuses)}`);
    // The tenant's one-second bucket, seen while the load ran, in the tenant's own hash slot.
    expect(await bucketKeys).toContain(`${prefix}:tenant-requests:{${limited.tenantId}}`);
    expect(Object.keys(statuses).sort()).toEqual(['200', '429']);
    expect(refusedBy.size).toBe(2);
    // At most RATE per one-second window, over the windows the run touched (SECONDS + the last request's pacing);
    // a per-replica count would admit about twice as many.
    expect(statuses[200]).toBeLessThanOrEqual(RATE * (SECONDS + 2));
  });

  // After the tests above, which filled both queues and the auth-failure counters.
  it('keeps every queue key in the prefix’s hash slot; other keys carry their own tag', async () => {
    const cluster = await connectCluster();
    try {
      const masters = cluster.nodes('master');
      const byNode = await Promise.all(masters.map((node) => node.keys(`*${prefix}*`)));
      const queueKeys = byNode.flat().filter((k) => k.startsWith(`{${prefix}}:`));
      for (const queue of ['session-compaction', 'session-maintenance']) expect(queueKeys.some((k) => k.startsWith(`{${prefix}}:${queue}:`))).toBe(true);
      const slotOf = async (key: string) => Number(await masters[0].call('CLUSTER', 'KEYSLOT', key));
      expect(new Set(await Promise.all(queueKeys.map(slotOf))).size).toBe(1);
      // Everything else under the prefix carries a tag of its own (a tenant, a client address).
      for (const key of byNode.flat().filter((k) => k.startsWith(`${prefix}:`))) expect(key).toMatch(/:\{[^}]+\}$/);
    } finally {
      cluster.disconnect();
    }
  });
});
