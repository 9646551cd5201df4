import { Job, JobsOptions, Queue } from 'bullmq';
import { OutboxMessage } from '@app/event-store';
import { JOB_QUEUE, JobName, QueueName, SessionJobData } from './queue-names';
import type { RedisClient } from './redis-connection';
import { TenantBacklog } from './tenant-backlog';

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

/** How a message is enqueued beyond what its outbox row says. */
export interface DispatchOptions {
  /** Run no sooner than this: the fold window of a scheduled prune, so a burst of steps shares one run. */
  delayMs?: number;
}

/**
 * A message's own options: its session's deduplication key when it has one
 * (at most one run queued per key, one more kept while it runs: BullMQ's
 * keepLastIfActive; a run works whatever is pending when it starts), and
 * its tenant's fair-share priority.
 */
function jobOptions(message: OutboxMessage, priority: number, options: DispatchOptions): JobsOptions {
  return {
    jobId: message.jobId,
    priority,
    ...(options.delayMs ? { delay: options.delayMs } : {}),
    ...(message.deduplicationId ? { deduplication: { id: message.deduplicationId, keepLastIfActive: true } } : {}),
  };
}

/** States in which a job will still run (or is running). */
const LIVE_STATES = new Set(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children']);

function queueOf(message: OutboxMessage): QueueName {
  const queueName = JOB_QUEUE[message.jobName as JobName];
  if (!queueName) throw new Error(`no queue for job ${message.jobName}`);
  return queueName;
}

const tenantOf = (message: OutboxMessage) => (message.payload as unknown as SessionJobData).tenantId;

/**
 * The one place jobs are enqueued (the API's after-commit dispatch, the
 * sweeper's batches, the reconciler's re-enqueues), so every job gets its
 * deterministic id, its deduplication and its tenant's fair-share priority
 * (TenantBacklog). Adding an existing job id is a no-op in BullMQ.
 */
export class JobDispatcher {
  private readonly queues = new Map<QueueName, Queue>();
  private readonly backlog: TenantBacklog;

  constructor(
    private readonly connection: RedisClient,
    private readonly prefix: string,
  ) {
    this.backlog = new TenantBacklog(connection, prefix);
  }

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
  async dispatch(message: OutboxMessage, options: DispatchOptions = {}): Promise<string> {
    const [jobId] = await this.enqueue(queueOf(message), [message], options);
    return jobId;
  }

  /** Enqueues many messages with one addBulk per queue (the sweeper's batches). */
  async dispatchBulk(messages: readonly OutboxMessage[]): Promise<void> {
    const byQueue = new Map<QueueName, OutboxMessage[]>();
    for (const message of messages) byQueue.set(queueOf(message), [...(byQueue.get(queueOf(message)) ?? []), message]);
    await Promise.all([...byQueue].map(([name, batch]) => this.enqueue(name, batch, {})));
  }

  /**
   * Priorities from the tenants' backlogs, the jobs, then the backlogs again
   * with the jobs that were really added (not folded into another by
   * deduplication). Returns the id doing each message's work.
   */
  private async enqueue(name: QueueName, messages: readonly OutboxMessage[], options: DispatchOptions): Promise<string[]> {
    if (!this.connected) throw new Error('Redis is not connected');
    const priorities = await this.backlog.priorities(name, messages.map(tenantOf));
    const jobs = await this.queue(name).addBulk(
      messages.map((m, i) => ({ name: m.jobName, data: m.payload, opts: jobOptions(m, priorities[i], options) })),
    );
    const ids = jobs.map((job, i) => job.id ?? messages[i].jobId);
    const added = messages.filter((m, i) => ids[i] === m.jobId).map((m) => ({ tenantId: tenantOf(m), jobId: m.jobId }));
    // Bookkeeping only: a job missing from its backlog costs a little fairness, never the job.
    await this.backlog.added(name, added).catch(() => undefined);
    return ids;
  }

  /** A worker's job ran to the end of an attempt: it no longer counts in its tenant's backlog. Never throws. */
  async ended(name: QueueName, job: Pick<Job<Partial<SessionJobData>>, 'id' | 'data'>): Promise<void> {
    if (!job.id || !job.data?.tenantId) return;
    await this.backlog.removed(name, [{ tenantId: job.data.tenantId, jobId: job.id }]).catch(() => undefined);
  }

  /**
   * Whether BullMQ still holds a job that will do the message's work: its
   * own job, or the session's job it was folded into, waiting or running.
   */
  async hasLiveJob(message: OutboxMessage): Promise<boolean> {
    const queue = this.queue(queueOf(message));
    const holder = message.deduplicationId ? await queue.getDeduplicationJobId(message.deduplicationId) : null;
    for (const id of new Set([message.jobId, ...(holder ? [holder] : [])])) {
      if (LIVE_STATES.has(await queue.getJobState(id))) return true;
    }
    return false;
  }

  /**
   * Enqueues the message again under a fresh id (`<jobId>-r<attempt>`): its
   * first job failed for good or vanished with Redis's data. A deduplication
   * key left behind by a failed job would swallow the new one, so it goes
   * first, and so does the old id from its tenant's backlog.
   */
  async redispatch(message: OutboxMessage, attempt: number): Promise<void> {
    const name = queueOf(message);
    if (message.deduplicationId) await this.queue(name).removeDeduplicationKey(message.deduplicationId);
    await this.backlog.removed(name, [{ tenantId: tenantOf(message), jobId: message.jobId }]);
    await this.dispatch({ ...message, jobId: `${message.jobId}-r${attempt}` });
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
