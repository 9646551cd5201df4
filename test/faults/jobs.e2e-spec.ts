import { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { Agent, agentSession } from '../support/agent-script';
import { Client } from '../support/client';
import { LlmStub, startLlmStub } from '../support/llm-stub';
import { startRedis, stopRedis } from '../support/redis-server';
import { freePort, startService, TestService, waitFor } from '../support/service';

/**
 * Jobs that always finish: a compaction whose worker dies twice, and
 * markers whose jobs vanish with Redis's data, end without any new append.
 * Short locks, stalled checks and reconciler bounds keep the file quick.
 */
describe('faults: compaction jobs always finish', () => {
  let stub: LlmStub;
  let redis: ChildProcess;
  let redisPort: number;
  let service: TestService;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    stub = await startLlmStub();
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    service = await startService({
      redisUrl: `redis://127.0.0.1:${redisPort}`,
      env: {
        OPENAI_BASE_URL: `${stub.url}/v1`,
        OPENAI_API_KEY: 'sk-test',
        WORKER_LOCK_DURATION_MS: '2000',
        WORKER_STALLED_INTERVAL_MS: '1000',
        SUMMARIZER_TIMEOUT_MS: '1800',
        RECONCILE_INTERVAL_MS: '500',
        RECONCILE_AFTER_MS: '2000',
        // The worker announces itself at info level.
        LOG_LEVEL: 'log',
      },
    });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant());
  });
  afterAll(async () => {
    await service?.stop();
    await stub?.close();
    if (redis) await stopRedis(redis);
  });

  const closing = async (agent: Agent, markerSeq: number) =>
    (await agent.events()).filter((e) => ['compaction.completed', 'compaction.failed'].includes(e.type) && e.data.markerSeq === markerSeq);

  it('a worker SIGKILLed twice during the same job: the marker ends with exactly one completion', async () => {
    const agent = await agentSession(client, key, 'killed-twice', { compaction: { summarizer: 'openai', model: 'stub-slow-1500' } });
    const from = stub.requests.length;
    const { markerSeq } = await agent.untilMarker();
    for (const call of [1, 2]) {
      await waitFor(async () => stub.requests.length >= from + call, `summarizer call ${call}`, 20_000);
      await service.workers.splice(0, 1)[0].kill();
      await service.startWorker();
    }
    const entry = await agent.settled(markerSeq, 40_000);
    const closed = await closing(agent, markerSeq);
    if (entry.status === 'completed') {
      expect(closed.filter((e) => e.type === 'compaction.completed')).toHaveLength(1);
    } else {
      expect(closed.filter((e) => e.id === `cmp-${markerSeq}-gave-up`)).toHaveLength(1);
    }
    const headSeq = (await agent.state()).headSeq;
    // Nothing more is written for it afterwards.
    await new Promise((r) => setTimeout(r, 3000));
    expect((await agent.state()).headSeq).toBe(headSeq);
  });

  it('Redis FLUSHALL, then a Redis restart without persistence, with markers pending: they complete within 30 s with no new append', async () => {
    for (const [round, lose] of [
      ['flush', async () => {
        const r = new Redis(redisPort, '127.0.0.1');
        await r.flushall();
        r.disconnect();
      }],
      ['restart', async () => {
        await stopRedis(redis);
        redis = await startRedis(redisPort);
      }],
    ] as const) {
      // No worker: the jobs wait in Redis, the markers stay pending.
      await Promise.all(service.workers.splice(0).map((w) => w.stop()));
      const agents = await Promise.all([1, 2, 3].map((n) => agentSession(client, key, `${round}-${n}`, { compaction: { summarizer: 'openai', model: 'stub-ok' } })));
      const markers = await Promise.all(agents.map((a) => a.untilMarker().then((m) => m.markerSeq)));
      const heads = await Promise.all(agents.map(async (a) => (await a.state()).headSeq));
      await lose();
      const lostAt = Date.now();
      await service.startWorker();
      await Promise.all(agents.map((a, i) => a.settled(markers[i], 30_000 - (Date.now() - lostAt))));
      for (const [i, agent] of agents.entries()) {
        const closed = await closing(agent, markers[i]);
        expect(closed.map((e) => e.type)).toEqual(['compaction.completed']);
        // The only events after the marker's head are the compaction's own.
        const after = (await agent.events()).filter((e) => e.seq > heads[i]);
        expect(after.every((e) => e.type.startsWith('compaction.'))).toBe(true);
      }
    }
  });
});
