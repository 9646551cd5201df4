import { JobsOptions, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { OutboxMessage } from '@app/event-store';
import { sessionJobId } from './job-ids';
import { JOB_QUEUE, JobName, QueueName } from './queue-names';

/**
 * Five attempts 2, 4, 8, 16 s apart ride out a PostgreSQL restart of about
 * 30 s; beyond that the reconciler (worker) re-enqueues under a fresh id.
 * Retention keeps completed ids around long enough for jobId de-duplication to matter.
 */
const DEFAULT_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const;

/**
 * Compaction runs at most once at a time per session, with at most one run
 * queued behind it (BullMQ's keepLastIfActive deduplication, keyed by the
 * session); a run works whatever marker is pending when it starts.
 */
function jobOptions(message: OutboxMessage): JobsOptions {
  const deduplicationId = deduplicationIdOf(message);
  return deduplicationId ? { deduplication: { id: deduplicationId, keepLastIfActive: true } } : {};
}

function deduplicationIdOf(message: OutboxMessage): string | null {
  if (message.jobName !== JobName.Compact) return null;
  const { tenantId, sessionId } = message.payload as { tenantId: string; sessionId: string };
  return sessionJobId(JobName.Compact, tenantId, sessionId, 'session');
}

/** States in which a job will still run (or is running). */
const LIVE_STATES = new Set(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children']);

function queueOf(message: OutboxMessage): QueueName {
  const queueName = JOB_QUEUE[message.jobName as JobName];
  if (!queueName) throw new Error(`no queue for job ${message.jobName}`);
  return queueName;
}

/** Enqueues outbox messages into their queue; adding an existing job id is a no-op in BullMQ. */
export class JobDispatcher {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
  ) {}

  /**
   * BullMQ's add waits, without a bound, for a connection that has never
   * been ready; callers on a request path check this first instead.
   */
  get connected(): boolean {
    return this.connection.status === 'ready';
  }

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }

  /**
   * Returns the id of the job that will do the work: the message's own, or,
   * when per-session deduplication folded it into a job already queued or
   * running, that job's.
   */
  async dispatch(message: OutboxMessage): Promise<string> {
    const queueName = queueOf(message);
    if (!this.connected) throw new Error('Redis is not connected');
    const job = await this.queue(queueName).add(message.jobName, message.payload, { jobId: message.jobId, ...jobOptions(message) });
    return job.id ?? message.jobId;
  }

  /** Enqueues many messages with one round trip per queue (the sweeper's batches); all or nothing per queue. */
  async dispatchBulk(messages: readonly OutboxMessage[]): Promise<void> {
    if (!this.connected) throw new Error('Redis is not connected');
    const byQueue = new Map<QueueName, OutboxMessage[]>();
    for (const message of messages) byQueue.set(queueOf(message), [...(byQueue.get(queueOf(message)) ?? []), message]);
    await Promise.all(
      [...byQueue].map(([name, batch]) =>
        this.queue(name).addBulk(batch.map((m) => ({ name: m.jobName, data: m.payload, opts: { jobId: m.jobId, ...jobOptions(m) } }))),
      ),
    );
  }

  /**
   * Whether BullMQ still holds a job that will do the message's work: its
   * own job, or the session's job it was folded into, waiting or running.
   */
  async hasLiveJob(message: OutboxMessage): Promise<boolean> {
    const queue = this.queue(queueOf(message));
    const deduplicationId = deduplicationIdOf(message);
    const holder = deduplicationId ? await queue.getDeduplicationJobId(deduplicationId) : null;
    for (const id of new Set([message.jobId, ...(holder ? [holder] : [])])) {
      if (LIVE_STATES.has(await queue.getJobState(id))) return true;
    }
    return false;
  }

  /**
   * Enqueues the message again under a fresh id (`<jobId>-r<attempt>`): its
   * first job failed for good or vanished with Redis's data. A deduplication
   * key left behind by a failed job would swallow the new one, so it goes first.
   */
  async redispatch(message: OutboxMessage, attempt: number): Promise<void> {
    const deduplicationId = deduplicationIdOf(message);
    if (deduplicationId) await this.queue(queueOf(message)).removeDeduplicationKey(deduplicationId);
    await this.dispatch({ ...message, jobId: `${message.jobId}-r${attempt}` });
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
