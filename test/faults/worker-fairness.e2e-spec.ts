import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
// Not the lib's index: it loads the Nest module, which jest cannot require.
import { sessionJobId } from '../../libs/queue/src/job-ids';
import { JobName, QueueName } from '../../libs/queue/src/queue-names';
import { Agent, agentSession, turnEvents } from '../support/agent-script';
import { Client } from '../support/client';
import { LlmStub, startLlmStub } from '../support/llm-stub';
import { startService, TestService, waitFor } from '../support/service';

/** Tenant A's backlog: manual compactions of this many sessions, queued before any worker runs. */
const BACKLOG = 120;
const WORKER_SLOTS = 2;
/** Each compaction waits this long on the summarizer, so A's backlog takes seconds to drain. */
const SUMMARIZER = 'stub-slow-100';

/** Runs `work` over `items`, `width` at a time. */
async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

/**
 * Worker fairness: one tenant with a deep backlog of
 * compactions does not delay another tenant's single job by more than a
 * few jobs. Measured from BullMQ's own timestamps: how many of A's jobs
 * finished between B's job being enqueued and B's job finishing.
 */
describe('faults: worker fairness between tenants', () => {
  let stub: LlmStub;
  let service: TestService;
  let client: Client;
  let redis: Redis;
  let queue: Queue;

  beforeAll(async () => {
    stub = await startLlmStub();
    service = await startService({
      worker: false,
      env: { OPENAI_BASE_URL: `${stub.url}/v1`, OPENAI_API_KEY: 'sk-test', WORKER_CONCURRENCY: String(WORKER_SLOTS) },
    });
    client = new Client(service.baseUrl);
    redis = new Redis(service.redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue(QueueName.Compaction, { connection: redis, prefix: service.prefix });
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await service?.stop();
    await stub?.close();
  });

  /** A session with six turns to summarize; automatic compaction off, so only the manual request queues a job. */
  async function session(key: string, id: string): Promise<Agent> {
    const agent = await agentSession(client, key, id, { compaction: { summarizer: 'openai', model: SUMMARIZER, auto: false } });
    await agent.append([1, 2, 3, 4, 5, 6].flatMap((turn) => turnEvents(id, turn, 20)));
    return agent;
  }

  async function compact(agent: Agent): Promise<number> {
    const res = await client.request('POST', `${agent.path}/compactions`, { key: agent.key, body: {} });
    expect(res.status).toBe(202);
    return res.body.markerSeq;
  }

  it("tenant B's single compaction runs after a few of tenant A's hundred queued ones, not after all of them", async () => {
    const a = await client.createTenant('noisy');
    const b = await client.createTenant('quiet');
    const ids = Array.from({ length: BACKLOG }, (_, i) => `a-${i}`);
    await inParallel(ids, 8, async (id) => void (await compact(await session(a.key, id))));
    const victim = await session(b.key, 'b-1');

    await service.startWorker();
    const completedOf = async (tenantId: string) => (await queue.getJobs(['completed'])).filter((job: Job) => job.data.tenantId === tenantId);
    await waitFor(async () => (await completedOf(a.tenantId)).length >= 5, "A's first jobs completed", 20_000);

    const markerSeq = await compact(victim);
    expect((await victim.settled(markerSeq, 20_000)).status).toBe('completed');
    const mine = (await queue.getJob(sessionJobId(JobName.Compact, b.tenantId, 'b-1', markerSeq)))!;
    expect(await mine.getState()).toBe('completed');

    // A's backlog still drains completely; then every timestamp is known.
    await waitFor(async () => (await completedOf(a.tenantId)).length === BACKLOG, "A's backlog drained", 30_000);
    const finished = (await completedOf(a.tenantId)).map((job) => job.finishedOn!);
    const during = finished.filter((t) => t > mine.timestamp && t <= mine.finishedOn!).length;
    // The jobs already running when B's was enqueued, and one more slot's worth: not A's backlog.
    expect(during).toBeLessThanOrEqual(WORKER_SLOTS + 2);
    // Most of A's backlog was still queued: B's job did not merely come last.
    expect(finished.filter((t) => t > mine.finishedOn!).length).toBeGreaterThan(BACKLOG / 2);
  });
});
