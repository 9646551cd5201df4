import { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Client as PgClient } from 'pg';
import { Agent, agentSession } from '../support/agent-script';
import { Client, userMessage } from '../support/client';
import { connectAs } from '../support/database';
import { LlmStub, startLlmStub } from '../support/llm-stub';
import { startRedis, stopRedis } from '../support/redis-server';
import { freePort, startService, TestService, waitFor } from '../support/service';

/** A long tool output in turn 1, then two more user turns: OpenCode's prune has 50k tokens to clear. */
const prunable = (callId: string) => [
  userMessage('Turn 1: read the build log'),
  { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name: 'bash', input: { command: 'cat build.log' } }] } } },
  { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name: 'bash', output: 'x'.repeat(200_000) }] } } },
  ...['Turn 2', 'Turn 3'].flatMap((text) => [userMessage(text), { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text: 'Done.' }] } } }]),
];
const step = { type: 'step.finished', data: { usage: { input_tokens: 1_000, output_tokens: 100 }, finishReason: 'stop' } };

/**
 * Jobs that always finish: a compaction whose worker dies twice, and
 * compaction and prune jobs that vanish with Redis's data, end without any
 * new append. Short locks, stalled checks and reconciler bounds keep the
 * file quick.
 */
describe('faults: compaction and prune jobs always finish', () => {
  let stub: LlmStub;
  let redis: ChildProcess;
  let redisPort: number;
  let service: TestService;
  let client: Client;
  let key: string;
  let owner: PgClient;

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
    owner = await connectAs(service.dbUrl);
  });
  afterAll(async () => {
    await owner?.end();
    await service?.stop();
    await stub?.close();
    if (redis) await stopRedis(redis);
  });

  /** Redis loses every job: FLUSHALL, then a restart of a server without persistence. */
  const losses = [
    ['flush', async () => {
      const r = new Redis(redisPort, '127.0.0.1');
      await r.flushall();
      r.disconnect();
    }],
    ['restart', async () => {
      await stopRedis(redis);
      redis = await startRedis(redisPort);
    }],
  ] as const;

  const closing = async (agent: Agent, markerSeq: number) =>
    (await agent.events()).filter((e) => ['compaction.completed', 'compaction.failed'].includes(e.type) && e.data.markerSeq === markerSeq);

  it('a worker SIGKILLed twice during the same job: the marker ends with exactly one completion', async () => {
    const agent = await agentSession(client, key, 'killed-twice', { compaction: { summarizer: 'openai', model: 'stub-slow-1500' } });
    const from = stub.requests.length;
    const { markerSeq } = await agent.untilMarker();
    for (const call of [1, 2]) {
      await stub.received((_, i) => i >= from + call - 1, `summarizer call ${call}`, 20_000);
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
    for (const [round, lose] of losses) {
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

  it('a fork taken at a pending marker, its job lost with Redis: the reconciler re-enqueues it and the fork compacts', async () => {
    await Promise.all(service.workers.splice(0).map((w) => w.stop()));
    const source = await agentSession(client, key, 'fork-source', { compaction: { summarizer: 'openai', model: 'stub-ok' } });
    const { markerSeq } = await source.untilMarker();
    // The fork's marker is an event it inherited: it lives in the source's rows.
    const forked = await client.request('POST', '/v1/sessions/fork-source/forks', { key, body: { atSeq: markerSeq, id: 'fork-lost-job' } });
    expect(forked.status).toBe(201);
    await losses[0][1]();
    await service.startWorker();
    const fork = new Agent(client, key, 'fork-lost-job');
    expect((await fork.settled(markerSeq, 30_000)).status).toBe('completed');
    expect((await closing(fork, markerSeq)).map((e) => e.type)).toEqual(['compaction.completed']);
  });

  it('Redis FLUSHALL, then a restart, with prune jobs queued (one scheduled by a step, one asked for now): they run within 30 s with no new append', async () => {
    for (const [round, lose] of losses) {
      await Promise.all(service.workers.splice(0).map((w) => w.stop()));
      const sessions = [`${round}-step`, `${round}-now`];
      for (const id of sessions) {
        await client.createSession(key, { id, model: 'gpt-4.1', config: { preset: 'opencode', toolOutput: { enabled: false } } });
        expect((await client.append(key, id, { events: prunable(`${id}-call`) })).status).toBe(201);
      }
      expect((await client.append(key, sessions[0], { events: [step] })).status).toBe(201);
      expect((await client.request('POST', `/v1/sessions/${sessions[1]}/prune`, { key, body: {} })).status).toBe(202);
      const heads = await Promise.all(sessions.map(async (id) => (await client.request('GET', `/v1/sessions/${id}`, { key })).body.headSeq));
      await lose();
      const lostAt = Date.now();
      await service.startWorker();
      const pruned = async (id: string) => (await client.allEvents(key, id)).filter((e) => e.type === 'tool_outputs.pruned');
      await waitFor(async () => (await Promise.all(sessions.map(pruned))).every((p) => p.length === 1), `${round}: both prunes committed`, 30_000 - (Date.now() - lostAt));
      for (const [i, id] of sessions.entries()) {
        // The prune's own event is the only one after the head.
        expect((await client.allEvents(key, id)).filter((e) => e.seq > heads[i]).map((e) => e.type)).toEqual(['tool_outputs.pruned']);
      }
      // Each trigger is settled by the run that covered it: the reconciler stops looking.
      await waitFor(
        async () => (await owner.query(`SELECT 1 FROM outbox WHERE job_name = 'prune' AND settled_at IS NULL`)).rowCount === 0,
        `${round}: prune triggers settled`,
        5_000,
      );
    }
  });

  it('Redis FLUSHALL under a running worker: the tool-output GC schedule comes back without a restart', async () => {
    if (service.workers.length === 0) await service.startWorker();
    const connection = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: null });
    const queue = new Queue('session-maintenance', { connection, prefix: service.prefix });
    try {
      await waitFor(async () => (await queue.getJobScheduler('tool-output-gc')) !== undefined, 'the GC schedule');
      await connection.flushall();
      expect(await queue.getJobScheduler('tool-output-gc')).toBeUndefined();
      await waitFor(async () => (await queue.getJobScheduler('tool-output-gc')) !== undefined, 'the GC schedule re-created', 10_000);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});
