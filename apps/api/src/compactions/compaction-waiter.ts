import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Job, QueueEvents } from 'bullmq';
import { APP_CONFIG, AppConfig } from '@app/config';
import { createRedis, JobDispatcher, QueueName, RedisClient } from '@app/queue';
import { Draining } from '../http/draining';

/** What a compaction job returns (the worker's CompactOutcome), as far as waiting needs it. */
interface JobResult {
  markerSeq: number | null;
}

const TIMED_OUT = Symbol('timed out');

/** `promise`, or TIMED_OUT after `ms` or once `stop` settles, whichever is first. */
function within<T>(promise: Promise<T>, ms: number, stop: Promise<void>): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms))));
  return Promise.race([promise, timeout, stop.then((): typeof TIMED_OUT => TIMED_OUT)]).finally(() => clearTimeout(timer));
}

/**
 * `POST .../compactions {wait}`: waits on BullMQ's completion events
 * (Job.waitUntilFinished over one QueueEvents stream per API process), not by
 * polling. Per-session deduplication may hand a marker to the job already
 * queued or running for the session: that job is awaited first, and if it
 * finished an older marker, the marker's own job, which BullMQ creates as
 * the other one finishes. A wait ends early when the process begins to
 * drain: the request is answered (202 with the marker's state) before the
 * server closes.
 */
@Injectable()
export class CompactionWaiter implements OnApplicationShutdown {
  private events?: QueueEvents;
  private connection?: RedisClient;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly dispatcher: JobDispatcher,
    private readonly draining: Draining,
  ) {}

  /**
   * Returns once a job finished work covering `markerSeq`, or failed for
   * good, or `timeoutMs` passed, or Redis could not be reached, or the
   * process began to drain: the caller
   * reports the marker's state from the log in every case.
   */
  async waitForMarker(markerSeq: number, jobIds: readonly string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const left = () => Math.max(1, deadline - Date.now());
    const stop = this.draining.began;
    if (this.draining.active) return;
    try {
      const events = this.queueEvents();
      if ((await within(events.waitUntilReady(), left(), stop)) === TIMED_OUT) return;
      const queue = this.dispatcher.queue(QueueName.Compaction);
      for (const jobId of new Set(jobIds)) {
        const job = await within(Job.fromId<unknown, JobResult>(queue, jobId), left(), stop);
        if (job === TIMED_OUT) return;
        if (!job) continue;
        // The wait's own TTL removes its listeners; `within` also bounds the readiness checks inside it.
        const result = await within(job.waitUntilFinished(events, left()), left(), stop);
        if (result === TIMED_OUT || result.markerSeq === null || result.markerSeq >= markerSeq) return;
      }
    } catch {
      // The job failed for good (its marker is closed in the log), the wait timed out, or Redis is down.
    }
  }

  private queueEvents(): QueueEvents {
    if (!this.events) {
      // Its own blocking connection, made on first use: API processes that never wait hold none.
      this.connection = createRedis(this.config.redis, 'worker', 'compaction-waiter');
      this.events = new QueueEvents(QueueName.Compaction, { connection: this.connection, prefix: this.config.redis.prefix });
      this.events.on('error', () => undefined);
    }
    return this.events;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.events?.close();
    this.connection?.disconnect();
  }
}
