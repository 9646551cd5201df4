import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { within } from './awaiting';

/**
 * A BullMQ job's end, awaited through QueueEvents (at once if it already
 * ended): its return value, or its failure as an error. The job must exist.
 */
export async function jobResult(queue: Queue, jobId: string, what: string, timeoutMs = 30_000): Promise<any> {
  // QueueEvents blocks on its connection: its own, not the queue's.
  const shared = queue.opts.connection;
  const connection = shared instanceof Redis ? shared.duplicate() : shared;
  const events = new QueueEvents(queue.name, { connection, prefix: queue.opts.prefix });
  try {
    const job = await queue.getJob(jobId);
    if (!job) throw new Error(`${what}: no job ${jobId} in ${queue.name}`);
    return await within(job.waitUntilFinished(events), what, timeoutMs);
  } finally {
    await events.close();
    if (connection instanceof Redis) connection.disconnect();
  }
}
