import { JobsOptions, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { OutboxMessage } from '@app/event-store';
import { sessionJobId } from './job-ids';
import { JOB_QUEUE, JobName, QueueName } from './queue-names';

/** Retention keeps completed ids around long enough for jobId de-duplication to matter. */
const DEFAULT_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const;

/**
 * Compaction runs at most once at a time per session, with at most one run
 * queued behind it (BullMQ's keepLastIfActive deduplication, keyed by the
 * session); a run works whatever marker is pending when it starts.
 */
function jobOptions(message: OutboxMessage): JobsOptions {
  if (message.jobName !== JobName.Compact) return {};
  const { tenantId, sessionId } = message.payload as { tenantId: string; sessionId: string };
  return { deduplication: { id: sessionJobId(JobName.Compact, tenantId, sessionId, 'session'), keepLastIfActive: true } };
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
    const queueName = JOB_QUEUE[message.jobName as JobName];
    if (!queueName) throw new Error(`no queue for job ${message.jobName}`);
    if (!this.connected) throw new Error('Redis is not connected');
    const job = await this.queue(queueName).add(message.jobName, message.payload, { jobId: message.jobId, ...jobOptions(message) });
    return job.id ?? message.jobId;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
