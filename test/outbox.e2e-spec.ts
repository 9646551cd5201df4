import { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Client as PgClient } from 'pg';
import { connectAs } from './support/database';
import { jobResult } from './support/jobs';
import { Client } from './support/client';
import { startRedis, stopRedis } from './support/redis-server';
import { freePort, startService, TestService, waitFor } from './support/service';

describe('outbox → BullMQ → worker', () => {
  let service: TestService;
  let client: Client;
  let redis: ChildProcess;
  let redisPort: number;
  let owner: PgClient;

  beforeAll(async () => {
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    service = await startService({ redisUrl: `redis://127.0.0.1:${redisPort}` });
    client = new Client(service.baseUrl);
    owner = await connectAs(service.dbUrl);
  });
  afterAll(async () => {
    await owner?.end();
    await service?.stop();
    if (redis) await stopRedis(redis);
  });

  /** Resolves when the compact job completed; rejects if it failed. */
  async function jobCompleted(jobId: string, what: string): Promise<void> {
    const connection = new Redis(redisPort, '127.0.0.1', { maxRetriesPerRequest: null });
    const queue = new Queue('session-compaction', { connection, prefix: service.prefix });
    try {
      await jobResult(queue, jobId, what);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  }

  /** A session with a turn, and a manual compaction asked for: a `compact` job through the outbox. */
  async function requestCompaction(key: string, id: string) {
    await client.createSession(key, { id });
    const say = (role: string, text: string) => ({ type: 'message.added', data: { message: { role, parts: [{ type: 'text', text }] } } });
    expect((await client.append(key, id, { events: [say('user', 'Rename foo to bar'), say('assistant', 'Renamed.')] })).status).toBe(201);
    return client.request('POST', `/v1/sessions/${id}/compactions`, { key, body: {} });
  }

  const outboxRows = async () => (await owner.query('SELECT job_id, dispatched_at, attempts FROM outbox ORDER BY outbox_id')).rows;

  it('dispatches right after commit and the worker completes the job', async () => {
    const { key } = await client.createTenant();
    await requestCompaction(key, 'first');
    const [row] = await outboxRows();
    expect(row.dispatched_at).not.toBeNull();
    await jobCompleted(row.job_id, 'the compact job to complete');
  });

  it('keeps the trigger while Redis is down; the sweeper enqueues it when Redis returns', async () => {
    const { key } = await client.createTenant();
    await stopRedis(redis);
    const requested = await requestCompaction(key, 'while-down');
    expect(requested.status).toBe(202);
    const pending = (await outboxRows()).filter((r) => r.dispatched_at === null);
    expect(pending).toHaveLength(1);

    redis = await startRedis(redisPort);
    // Polled: the sweeper's dispatch is a row update, which nothing announces.
    await waitFor(async () => (await outboxRows()).every((r) => r.dispatched_at !== null), 'sweeper dispatch', 30_000);
    await jobCompleted(pending[0].job_id, 'the job to complete after Redis returned');
  });

  it('deletes finished rows once older than OUTBOX_RETENTION_HOURS, and keeps recent ones', async () => {
    const { key } = await client.createTenant();
    await requestCompaction(key, 'retained-old');
    await requestCompaction(key, 'retained-new');
    const ids = async () => (await owner.query(`SELECT payload->>'sessionId' AS id FROM outbox WHERE payload->>'sessionId' LIKE 'retained-%' ORDER BY 1`)).rows.map((r) => r.id);
    // Polled, like the deletion below: both are row changes in the outbox table, which nothing announces.
    await waitFor(async () => (await owner.query(`SELECT 1 FROM outbox WHERE payload->>'sessionId' LIKE 'retained-%' AND dispatched_at IS NULL`)).rowCount === 0, 'both enqueued');
    await owner.query(`UPDATE outbox SET created_at = now() - interval '25 hours' WHERE payload->>'sessionId' = 'retained-old'`);
    // A worker looks for finished rows at its first reconciliation, then every ten minutes.
    await service.startWorker();
    await waitFor(async () => (await ids()).length === 1, 'the old row deleted');
    expect(await ids()).toEqual(['retained-new']);
  });
});
