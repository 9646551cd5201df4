import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { OutboxMessage } from '@app/event-store';
import { JOB_QUEUE, JobName, QueueName } from './queue-names';

/** Retention keeps completed ids around long enough for jobId de-duplication to matter. */
const DEFAULT_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const;

/** Enqueues outbox messages into their queue; adding an existing job id is a no-op in BullMQ. */
export class JobDispatcher {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
  ) {}

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }

  async dispatch(message: OutboxMessage): Promise<void> {
    const queueName = JOB_QUEUE[message.jobName as JobName];
    if (!queueName) throw new Error(`no queue for job ${message.jobName}`);
    await this.queue(queueName).add(message.jobName, message.payload, { jobId: message.jobId });
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
