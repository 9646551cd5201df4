import { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Client as PgClient } from 'pg';
import { sessionJobId } from '../libs/queue/src/job-ids';
import { agentSession } from './support/agent-script';
import { Client } from './support/client';
import { connectAs } from './support/database';
import { jobResult } from './support/jobs';
import { LlmStub, startLlmStub } from './support/llm-stub';
import { startRedis, stopRedis } from './support/redis-server';
import { freePort, startService, TestService } from './support/service';

/**
 * Compaction when things break (reliability notes T3.1, T3.2, T3.3): a
 * worker killed mid-job, two runs of one marker at once, Redis down while
 * appends cross the threshold. Each marker is committed exactly once.
 * Short BullMQ locks so a dead worker's job is retried within seconds.
 */
describe('compaction recovery', () => {
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

  const completions = async (sessionId: string) =>
    (await client.allEvents(key, sessionId)).filter((e) => e.type === 'compaction.completed');

  it('a worker killed mid-job: the job is retried on another worker and commits exactly once', async () => {
    const agent = await agentSession(client, key, 'killed-worker', { compaction: { summarizer: 'openai', model: 'stub-slow-1200' } });
    const from = stub.requests.length;
    const { markerSeq } = await agent.untilMarker();
    await stub.received((_, i) => i >= from, 'the summarizer call', 10_000);
    const [first] = service.workers.splice(0, 1);
    await first.kill();
    await service.startWorker();

    const entry = await agent.settled(markerSeq, 30_000);
    expect(entry).toMatchObject({ status: 'completed', model: 'stub-slow-1200' });
    // The killed run's call and the retry's; on a loaded machine the retry's call may pass SUMMARIZER_TIMEOUT_MS
    // and the chain calls again. What must hold is a retry and one commit.
    expect(stub.requests.length - from).toBeGreaterThanOrEqual(2);
    const done = await completions(agent.sessionId);
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ id: `cmp-${markerSeq}-completed`, data: { markerSeq } });
  });

  it('two runs of the same marker at once: one commits, the other is discarded', async () => {
    const agent = await agentSession(client, key, 'double-run', { compaction: { summarizer: 'openai', model: 'stub-slow-1000' } });
    const from = stub.requests.length;
    const { markerSeq } = await agent.untilMarker();
    const connection = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: null });
    const queue = new Queue('session-compaction', { connection, prefix: service.prefix });
    try {
      const tenantId = (await owner.query('SELECT tenant_id FROM sessions WHERE session_id = $1', [agent.sessionId])).rows[0].tenant_id;
      // Two more runs beside the marker's own job, bypassing the per-session deduplication as a lapsed lock would.
      const data = { tenantId, sessionId: agent.sessionId, markerSeq };
      await Promise.all(['dup-a', 'dup-b'].map((jobId) => queue.add('compact', data, { jobId })));
      const jobIds = [sessionJobId('compact', tenantId, agent.sessionId, markerSeq), 'dup-a', 'dup-b'];
      const results = await Promise.all(jobIds.map((id) => jobResult(queue, id, `the run of job ${id}`, 20_000)));
      const outcomes: string[] = results.map((result) => result?.outcome);
      // All three summarized (they overlapped); one committed.
      expect(stub.requests.length - from).toBe(3);
      expect(outcomes.sort()).toEqual(['completed', 'discarded', 'discarded']);
    } finally {
      await queue.close();
      connection.disconnect();
    }
    await agent.settled(markerSeq);
    const done = await completions(agent.sessionId);
    expect(done.map((e) => e.data.markerSeq)).toEqual([markerSeq]);
  });

  it('twenty markers in a burst: never more than one job running and one waiting for the session; the latest marker wins', async () => {
    const agent = await agentSession(client, key, 'burst', { compaction: { summarizer: 'openai', model: 'stub-slow-800', auto: false } });
    for (let turn = 1; turn <= 3; turn++) await agent.turn(turn);
    const from = stub.requests.length;
    const connection = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: null });
    const queue = new Queue('session-compaction', { connection, prefix: service.prefix });
    const peaks = { active: 0, queued: 0 };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const counts = await queue.getJobCounts('active', 'waiting', 'delayed', 'prioritized');
        peaks.active = Math.max(peaks.active, counts.active);
        peaks.queued = Math.max(peaks.queued, counts.waiting + counts.delayed + counts.prioritized);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      let last = 0;
      for (let i = 0; i < 20; i++) last = (await agent.append([{ type: 'compaction.requested', data: {} }])).headSeq;
      const entry = await agent.settled(last, 20_000);
      expect(entry.status).toBe('completed');
    } finally {
      sampling = false;
      await sampler;
      await queue.close();
      connection.disconnect();
    }
    expect(peaks.active).toBeLessThanOrEqual(1);
    expect(peaks.queued).toBeLessThanOrEqual(1);
    // The running job's marker, then the latest one: the nineteen in between were superseded without a run of their own.
    expect(stub.requests.length - from).toBeLessThanOrEqual(3);
    const history = (await agent.compactions()).compactions;
    expect(history.filter((c: any) => c.status === 'completed').length).toBeLessThanOrEqual(3);
    expect(history.filter((c: any) => c.status === 'superseded').length).toBeGreaterThanOrEqual(17);
  });

  it('Redis down while appends cross the threshold: appends succeed; the sweeper enqueues once Redis is back; the compaction completes', async () => {
    const agent = await agentSession(client, key, 'redis-down');
    await stopRedis(redis);
    let markerSeq: number;
    try {
      ({ markerSeq } = await agent.untilMarker());
      const outbox = await owner.query(`SELECT job_id, dispatched_at FROM outbox WHERE job_name = 'compact' AND payload->>'sessionId' = $1`, [agent.sessionId]);
      // One job; a later batch that joins the pending marker writes its row again (compaction-trigger.ts), same job id.
      expect(outbox.rows.length).toBeGreaterThanOrEqual(1);
      for (const row of outbox.rows) {
        expect(row).toEqual({ job_id: expect.stringMatching(new RegExp(`^compact-[0-9a-f]{32}-${markerSeq}$`)), dispatched_at: null });
      }
      expect(new Set(outbox.rows.map((row) => row.job_id)).size).toBe(1);
      expect((await agent.state()).compaction).toMatchObject({ state: 'pending', pendingMarkerSeq: markerSeq });
    } finally {
      redis = await startRedis(redisPort);
    }
    const entry = await agent.settled(markerSeq, 30_000);
    expect(entry.status).toBe('completed');
    const outbox = await owner.query(`SELECT dispatched_at FROM outbox WHERE job_name = 'compact' AND payload->>'sessionId' = $1`, [agent.sessionId]);
    // The job went out (a joining batch's second row of the same job may still wait for the sweeper: BullMQ dedups it by id).
    expect(outbox.rows.some((row) => row.dispatched_at !== null)).toBe(true);
    expect(await completions(agent.sessionId)).toHaveLength(1);
    await agent.expectValidForProviders();
  });
});
